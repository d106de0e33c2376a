"""What every ego MCP tool shares: the browser started on first use, its current tab, and
one way to turn an ego error into an MCP tool error (worded for an MCP caller).

The current tab is the one the page tools act on: the tab last navigated or chosen with
``select_tab``, else the first open tab, else a new one.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar

from .. import api
from ..api import Browser
from ..errors import EgoError
from ..learning.health.origin import front_end
from ..learning.registry import Learnings
from ..page.dialogs import DialogPolicy
from ..page.tab import Tab
from ..places import state_dir
from .limits import FileAccess, ServerLimits
from .sdk import ToolAnnotations, ToolError
from .wording import mcp_message

__all__ = [
    "CHANGES_PAGE",
    "DESTRUCTIVE",
    "LOCAL_ONLY",
    "READ_ONLY",
    "BrowserHolder",
    "call",
    "check",
]

T = TypeVar("T")

_REPLACED: Final = (
    "Note: ego {what}: the tabs, the current tab and what they held (logins made in a "
    "throwaway profile, cached tools) were lost; list_tabs shows what is open now."
)

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=True)
CHANGES_PAGE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=True)
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=True)
LOCAL_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)


class BrowserHolder:
    """Starts the browser on first use and keeps one current tab for the page tools.

    Page dialogs are left open by default (``dialogs="manual"``): an agent sees them as
    DialogOpenError and answers them with ``handle_dialog``, as it would by hand. The browser
    is held to ``limits`` (origins, schemes, the downloads folder inside the output folder);
    when it had to be started again (Chrome closed or crashed, or the attached one went away),
    :attr:`notice` says so until a result carries it to the agent.
    """

    def __init__(
        self,
        *,
        endpoint: str | None,
        profile: str | None,
        headless: bool,
        learnings: Learnings,
        dialogs: DialogPolicy = "manual",
        limits: ServerLimits | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.profile = profile
        self.headless = headless
        self.learnings = learnings
        self.dialogs: DialogPolicy = dialogs
        self.limits = limits if limits is not None else ServerLimits()
        self.limits.policy  # noqa: B018  (a malformed origin pattern fails here, not later)
        output = self.limits.output_dir or state_dir() / "mcp" / f"server-{os.getpid()}"
        self.files = FileAccess(output, unrestricted=self.limits.unrestricted_files)
        self.start_urls: dict[str, str] = dict(self.limits.start_urls)
        #: What the next result tells the agent about a browser that changed under it.
        self.notice: str | None = None
        self._browser: Browser | None = None
        self._tab: Tab | None = None
        self._lock = asyncio.Lock()

    async def browser(self) -> Browser:
        async with self._lock:
            if self._browser is None or self._browser.closed:
                if self._browser is not None:
                    self.notice = _REPLACED.format(
                        what="reconnected to the browser"
                        if self.endpoint
                        else "started Chrome again (the one before closed or crashed)"
                    )
                limits = self.limits
                keywords: dict[str, Any] = {
                    "learnings": self.learnings,
                    "dialogs": self.dialogs,
                    "downloads": self.files.output_dir / "downloads",
                    "allowed_origins": limits.allowed_origins,
                    "blocked_origins": limits.blocked_origins,
                    "allow_file_urls": limits.allow_file_urls,
                }
                if self.endpoint:
                    self._browser = await api.connect(self.endpoint, **keywords)
                else:
                    self._browser = await api.launch(
                        profile=self.profile, headless=self.headless, **keywords
                    )
                for site_id, url in self.start_urls.items():
                    self._browser.site.set_start_url(site_id, url)
                self._tab = None
            return self._browser

    def set_start_url(self, site_id: str, url: str) -> None:
        """Open ``site_id``'s tools at ``url`` from now on (this browser and any later one)."""
        self.start_urls[site_id] = url
        if self._browser is not None:
            self._browser.site.set_start_url(site_id, url)

    def take_notice(self) -> str | None:
        """The notice for the next result, once."""
        notice, self.notice = self.notice, None
        return notice

    async def tab(self) -> Tab:
        """The current tab: the last one used, else the first open one, else a new one."""
        browser = await self.browser()
        if self._tab is None or self._tab.closed:
            tabs = await browser.tabs()
            self._tab = tabs[0] if tabs else await browser.new_tab()
        return self._tab

    def current_url(self) -> str | None:
        """The current tab's URL, with no browser started and no tab chosen for it (None when
        no tab is current yet)."""
        tab = self._tab
        return tab.url if tab is not None and not tab.closed else None

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


def check(action: Callable[[], T]) -> T:
    """Run ``action`` (a check that needs no waiting, such as a path's); an ego error becomes
    an MCP tool error, as in :func:`call`.

    Raises:
        ToolError: ``action`` raised an ego error.
    """
    try:
        return action()
    except EgoError as exc:
        raise ToolError(mcp_message(exc)) from None


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
        with front_end("mcp"):  # the tool runs it makes are MCP's in the tools' health
            return await action()
    except (EgoError, OSError, ValueError) as exc:
        # ValueError: a verb refused its arguments (a bad format, two conditions at once);
        # the SDK would hide its text as a crash, yet it is the caller's to correct.
        raise ToolError(mcp_message(exc, confirm_key=confirm_key)) from None
