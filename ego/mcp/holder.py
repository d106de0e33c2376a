"""What every ego MCP tool shares: the browser started on first use, its current tab, and
one way to turn an ego error into an MCP tool error."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

from .. import api
from ..api import Browser
from ..errors import EgoError
from ..learning.registry import Learnings
from ..tab import Tab

__all__ = [
    "CHANGES_PAGE",
    "DESTRUCTIVE",
    "LOCAL_ONLY",
    "READ_ONLY",
    "BrowserHolder",
    "call",
]

T = TypeVar("T")

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=True)
CHANGES_PAGE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=True)
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=True)
LOCAL_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)


class BrowserHolder:
    """Starts the browser on first use and keeps one current tab for the page tools."""

    def __init__(
        self,
        *,
        endpoint: str | None,
        profile: str | None,
        headless: bool,
        learnings: Learnings,
    ) -> None:
        self.endpoint = endpoint
        self.profile = profile
        self.headless = headless
        self.learnings = learnings
        self._browser: Browser | None = None
        self._tab: Tab | None = None
        self._lock = asyncio.Lock()

    async def browser(self) -> Browser:
        async with self._lock:
            if self._browser is None or self._browser.closed:
                if self.endpoint:
                    self._browser = await api.connect(self.endpoint, learnings=self.learnings)
                else:
                    self._browser = await api.launch(
                        profile=self.profile, headless=self.headless, learnings=self.learnings
                    )
                self._tab = None
            return self._browser

    async def tab(self) -> Tab:
        """The current tab: the last one used, else the first open one, else a new one."""
        browser = await self.browser()
        if self._tab is None or self._tab.closed:
            tabs = await browser.tabs()
            self._tab = tabs[0] if tabs else await browser.new_tab()
        return self._tab

    def use(self, tab: Tab) -> None:
        self._tab = tab

    async def close(self) -> None:
        if self._browser is not None:
            await self._browser.close()
            self._browser = None


async def call(action: Callable[[], Awaitable[T]]) -> T:
    """Await ``action``; an ego error (or a failed write) becomes an MCP tool error.

    The message already says what happened and what to do (the recovery of the error
    contract for NEEDS_LOGIN and SKILL_BROKEN).
    """
    try:
        return await action()
    except (EgoError, OSError) as exc:
        raise ToolError(f"{type(exc).__name__}: {exc}") from None
