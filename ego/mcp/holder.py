"""What every ego MCP tool shares: the browser started on first use, its current tab, and
one way to turn an ego error into an MCP tool error (worded for an MCP caller).

The current tab is the one the page tools act on: the tab last navigated or chosen with
``select_tab``, else the first open tab, else a new one.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Final, TypeVar

from .. import api
from ..api import Browser, BrowserContext
from ..errors import EgoError
from ..learning.catalog.registry import Learnings
from ..learning.health.origin import front_end
from ..page.dialogs import DialogPolicy
from ..page.storage_state import StateSource
from ..page.tab import Tab
from ..places import state_dir
from .files import FileAccess, Transport
from .limits import ServerLimits
from .sdk import ToolAnnotations, ToolError
from .wording import mcp_message

__all__ = [
    "CHANGES_PAGE",
    "DESTRUCTIVE",
    "LOCAL_ONLY",
    "READ_ONLY",
    "BrowserHolder",
    "Pages",
    "call",
    "check",
]

#: Where a server's pages are: a whole browser (stdio), or a context of a shared one (one
#: per session of ``ego mcp --http``).
Pages = Browser | BrowserContext

T = TypeVar("T")

logger = logging.getLogger("ego.mcp")

_REPLACED: Final = (
    "Note: ego {what}: the tabs, the current tab and what they held (logins made in a "
    "throwaway profile, cached tools) were lost; list_tabs shows what is open now."
)

_PRELOADING: Final = (
    "Note: the browser this server attached to preloads pages (speculation rules), so a page "
    "can bring in a document of a refused origin without a request the origin limits see; "
    "the operator can turn off 'Preload pages' in its settings, or let ego mcp start its own "
    "Chrome."
)

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=True)
CHANGES_PAGE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=True)
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=True)
LOCAL_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)


class BrowserHolder:
    """Starts the browser on first use and keeps one current tab for the page tools.

    Page dialogs are left open by default (``dialogs="manual"``): an agent sees them as
    DialogOpenError and answers them with ``handle_dialog``, as it would by hand (a page that
    opens one after another has the rest answered for it: see :mod:`ego.page.dialogs`). The
    browser is held to ``limits`` (origins, schemes, the downloads folder inside the output
    folder); when it had to be started again (Chrome closed or crashed, or the attached one
    went away), when the current tab's dialogs were answered for the agent, or when an
    attached browser turns out to preload pages, :meth:`take_notice` says so once.

    Args:
        endpoint, profile, headless: which Chrome (attach to ``endpoint``, else launch).
        learnings, dialogs, limits: what the server serves, and how.
        storage_state: the saved login each browser (or session context) starts with.
        output_dir: the folder files go to; by default ``limits.output_dir``, else a folder
            of the server's own (removed at the end unless it holds files).
        transport: how the server speaks to its client, which decides whether the client's
            roots are folders of this machine (:class:`~.files.FileAccess`).

    Raises:
        ValueError: ``limits`` could not hold (:meth:`~.limits.ServerLimits.check`).
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
        storage_state: StateSource | None = None,
        output_dir: Path | None = None,
        transport: Transport = "stdio",
    ) -> None:
        self.endpoint = endpoint
        self.profile = profile
        self.headless = headless
        self.learnings = learnings
        self.dialogs: DialogPolicy = dialogs
        self.limits = limits if limits is not None else ServerLimits()
        self.limits.check()  # a malformed origin pattern fails here, not later
        own = output_dir is None and self.limits.output_dir is None
        output = (
            output_dir or self.limits.output_dir or state_dir() / "mcp" / f"server-{os.getpid()}"
        )
        self.files = FileAccess(
            output,
            transport=transport,
            file_roots=self.limits.file_roots,
            client_roots_are_server_paths=self.limits.client_roots_are_server_paths,
            unrestricted=self.limits.unrestricted_files,
            own=own,
        )
        self.start_urls: dict[str, str] = dict(self.limits.start_urls)
        #: The saved login each browser (or session context) starts with.
        self.storage_state = storage_state
        #: What the next result tells the agent about a browser that changed under it.
        self.notice: str | None = None
        self._browser: Browser | None = None
        # Where the page tools act: the browser, or a context of its own for a saved login.
        self._pages: Pages | None = None
        self._tab: Tab | None = None
        self._lock = asyncio.Lock()
        self._told_preloading = False
        #: Awaited first when the server closes, while the browser still runs (a trace
        #: still running is written).
        self.closing: list[Callable[[], Awaitable[None]]] = []

    async def browser(self) -> Pages:
        """Where the page tools act: the browser, started (again) when there is none."""
        async with self._lock:
            if self._pages is None or self._pages.closed or self._browser_gone():
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
                    "downloads": self.files.downloads_dir(),
                    "allowed_origins": limits.allowed_origins,
                    "blocked_origins": limits.blocked_origins,
                    "allow_file_urls": limits.allow_file_urls,
                    "allow_script_urls": not limits.read_only,
                }
                # A browser that outlives the server (attached, or on a persistent profile)
                # gets a saved login in a context of its own, which ends with the server:
                # nothing of the login stays in that browser's profile.
                own_context = self.storage_state is not None and bool(self.endpoint or self.profile)
                if self._browser is not None:
                    await self._browser.close()
                if self.endpoint:
                    self._browser = await api.connect(self.endpoint, **keywords)
                else:
                    self._browser = await api.launch(
                        profile=self.profile,
                        headless=self.headless,
                        storage_state=None if own_context else self.storage_state,
                        max_js_heap_mb=limits.max_js_heap_mb,
                        **keywords,
                    )
                self._pages = self._browser
                if own_context:
                    self._pages = await self._browser.new_context(
                        storage_state=self.storage_state,
                        dialogs=self.dialogs,
                        downloads=self.files.downloads_dir(),
                    )
                for site_id, url in self.start_urls.items():
                    self._pages.site.set_start_url(site_id, url)
                self._tab = None
            return self._pages

    def _browser_gone(self) -> bool:
        return self._browser is None or self._browser.closed

    async def keep_bounds(self) -> None:
        """Hold what the pages did since the last call to the server's bounds (before each
        call); a whole browser of its own has none but Chrome's."""

    def set_start_url(self, site_id: str, url: str) -> None:
        """Open ``site_id``'s tools at ``url`` from now on (this browser and any later one)."""
        self.start_urls[site_id] = url
        if self._pages is not None:
            self._pages.site.set_start_url(site_id, url)

    def take_notice(self) -> str | None:
        """What the next result tells the agent first (each thing once), or None."""
        notes = [self.notice] if self.notice else []
        self.notice = None
        if self._tab is not None:
            looping = self._tab.take_dialog_note()
            if looping is not None:
                notes.append(f"Note: {looping}.")
        browser = self._browser
        if browser is not None and browser.preloads_pages and not self._told_preloading:
            self._told_preloading = True
            notes.append(_PRELOADING)
        return " ".join(notes) or None

    async def tab(self) -> Tab:
        """The current tab: the last one used, else the first open one, else a new one."""
        browser = await self.browser()
        if self._tab is None or self._tab.closed:
            tabs = await browser.tabs()
            self._tab = tabs[0] if tabs else await browser.new_tab()
        return self._tab

    def current(self) -> Tab | None:
        """The current tab, with no browser started and no tab chosen for it (None when no
        tab is current, or it closed)."""
        tab = self._tab
        return tab if tab is not None and not tab.closed else None

    def current_url(self) -> str | None:
        """The current tab's URL, with no browser started and no tab chosen for it (None when
        no tab is current yet)."""
        tab = self._tab
        return tab.url if tab is not None and not tab.closed else None

    async def tab_by_id(self, tab_id: str) -> Tab:
        """The open tab whose id (from ``list_tabs``) is ``tab_id``: one of this server's
        (this session's) own, never another's.

        Raises:
            ToolError: no open tab of its own has that id (``UnknownTabError``).
        """
        browser = await self.browser()
        return await call(lambda: browser.tab(tab_id))

    def use(self, tab: Tab) -> None:
        """Make ``tab`` the current tab."""
        self._tab = tab

    def forget(self, tab: Tab) -> None:
        """``tab`` is closing: the next page tool picks the current tab afresh."""
        if self._tab is tab:
            self._tab = None

    async def finish(self) -> None:
        """Await :attr:`closing`'s steps, once (one that fails is logged)."""
        steps, self.closing = self.closing, []
        for step in steps:
            try:
                await step()
            except Exception:
                logger.warning("ego mcp: a step of closing failed", exc_info=True)

    async def close(self) -> None:
        """Close the browser (disconnect from an attached one) and remove what the server
        made for itself; where files were kept is said once, on the ``ego.mcp`` logger."""
        await self.finish()
        if self._pages is not None and self._pages is not self._browser:
            await self._pages.close()  # the saved login's context, its tabs with it
        self._pages = None
        if self._browser is not None:
            await self._browser.close()
            self._browser = None
        kept = self.files.close()
        if kept is not None:
            logger.warning("%s", kept)


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
