"""What every ego MCP tool shares: the browser started on first use, its current tab, and
one way to turn an ego error into an MCP tool error (worded for an MCP caller).

The current tab is the one the page tools act on: the tab last navigated or chosen with
``select_tab``, else the first open tab, else a new one.
"""

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
from ..page.dialogs import DialogPolicy
from ..page.tab import Tab
from .wording import mcp_message

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
    """Starts the browser on first use and keeps one current tab for the page tools.

    Page dialogs are left open by default (``dialogs="manual"``): an agent sees them as
    DialogOpenError and answers them with ``handle_dialog``, as it would by hand.
    """

    def __init__(
        self,
        *,
        endpoint: str | None,
        profile: str | None,
        headless: bool,
        learnings: Learnings,
        dialogs: DialogPolicy = "manual",
    ) -> None:
        self.endpoint = endpoint
        self.profile = profile
        self.headless = headless
        self.learnings = learnings
        self.dialogs: DialogPolicy = dialogs
        self._browser: Browser | None = None
        self._tab: Tab | None = None
        self._lock = asyncio.Lock()

    async def browser(self) -> Browser:
        async with self._lock:
            if self._browser is None or self._browser.closed:
                if self.endpoint:
                    self._browser = await api.connect(
                        self.endpoint, learnings=self.learnings, dialogs=self.dialogs
                    )
                else:
                    self._browser = await api.launch(
                        profile=self.profile,
                        headless=self.headless,
                        learnings=self.learnings,
                        dialogs=self.dialogs,
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

    async def tab_by_id(self, tab_id: str) -> Tab:
        """The open tab whose id (from ``list_tabs``) is ``tab_id``.

        Raises:
            ToolError: no open tab has that id.
        """
        browser = await self.browser()
        tabs = await call(browser.tabs)
        for tab in tabs:
            if tab.target_id == tab_id:
                return tab
        known = ", ".join(tab.target_id for tab in tabs) or "none"
        raise ToolError(f"no open tab has id {tab_id!r} (open: {known}); list_tabs lists them")

    def use(self, tab: Tab) -> None:
        """Make ``tab`` the current tab."""
        self._tab = tab

    def forget(self, tab: Tab) -> None:
        """``tab`` is closing: the next page tool picks the current tab afresh."""
        if self._tab is tab:
            self._tab = None

    async def close(self) -> None:
        if self._browser is not None:
            await self._browser.close()
            self._browser = None


async def call(action: Callable[[], Awaitable[T]], *, confirm_key: str = "confirm") -> T:
    """Await ``action``; an ego error (or a failed write) becomes an MCP tool error.

    The message says what happened and what to do (the recovery of the error contract for
    NEEDS_LOGIN and SKILL_BROKEN), with the fix named as an MCP caller types it.

    Args:
        action: the work.
        confirm_key: the argument that confirms an irreversible call on the calling tool.

    Raises:
        ToolError: ``action`` raised an ego error, an ``OSError`` or a ``ValueError``.
    """
    try:
        return await action()
    except (EgoError, OSError, ValueError) as exc:
        # ValueError: a verb refused its arguments (a bad format, two conditions at once);
        # the SDK would hide its text as a crash, yet it is the caller's to correct.
        raise ToolError(mcp_message(exc, confirm_key=confirm_key)) from None
