"""What one session of ``ego mcp --http`` holds: a browser context of its own in the one Chrome
all sessions share, with its own tabs and current tab, dialogs, downloads, storage, output
folder (its files; the client's MCP roots are folders of the client's machine, not this
one's, unless the operator says otherwise: see :mod:`.files`).

A :class:`SessionHolder` is a :class:`~ego.mcp.holder.BrowserHolder` whose pages are a
context (made on first use, from the server's storage state when it has one) rather than a
whole browser: every tool of the session's own server acts on it, and nothing of it is
reachable from another session. Closing it closes the context (its tabs, cookies and storage
go with it); the shared Chrome stays for the other sessions.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Final

from ..api import BrowserContext, SharedBrowser
from ..errors import EgoError, TabClosedError
from ..learning.catalog.registry import Learnings
from ..page.dialogs import DialogPolicy
from ..page.storage_state import StateSource
from .holder import BrowserHolder
from .limits import ServerLimits

__all__ = ["SessionHolder"]

_REPLACED: Final = (
    "Note: ego started Chrome again (the one before closed or crashed): this session's "
    "tabs, current tab and logins were lost; list_tabs shows what is open now."
)


class SessionHolder(BrowserHolder):
    """One MCP session's browser context and current tab.

    Args:
        shared: the Chrome every session shares.
        output_dir: the session's own folder (its files and downloads), inside the server's.
        learnings, dialogs, limits, storage_state: as for :class:`BrowserHolder`; the
            context starts from ``storage_state`` when given.
    """

    def __init__(
        self,
        shared: SharedBrowser,
        output_dir: Path,
        *,
        learnings: Learnings,
        dialogs: DialogPolicy,
        limits: ServerLimits,
        storage_state: StateSource | None = None,
    ) -> None:
        super().__init__(
            endpoint=None,
            profile=None,
            headless=True,
            learnings=learnings,
            dialogs=dialogs,
            limits=limits,
            storage_state=storage_state,
            output_dir=output_dir,
            transport="http",
        )
        self._shared = shared
        self._context: BrowserContext | None = None
        self._closed = False
        #: The ids of the context's tabs, in the order they were first seen.
        self._seen: dict[str, None] = {}

    @property
    def context(self) -> BrowserContext | None:
        """The session's context, once a tool made it."""
        return self._context

    async def browser(self) -> BrowserContext:
        """The session's context, made on first use (and again, with a notice, when the
        shared Chrome had to be started again).

        Raises:
            TabClosedError: the session is closing.
        """
        async with self._lock:
            if self._closed:
                raise TabClosedError("this MCP session is closing: open a new one")
            if self._context is None or self._context.closed:
                if self._context is not None:
                    self.notice = _REPLACED
                self._context = await self._shared.new_context(
                    storage_state=self.storage_state,
                    dialogs=self.dialogs,
                    downloads=self.files.downloads_dir(),
                    max_tabs=self.limits.max_tabs,
                )
                self._seen = {}
                for site_id, url in self.start_urls.items():
                    self._context.site.set_start_url(site_id, url)
                self._tab = None
            return self._context

    async def keep_bounds(self) -> None:
        """Close the tabs past ``limits.max_tabs`` that pages opened themselves (a popup a
        click let through: a tool that opens a tab is refused at the bound instead), newest
        first and never the current tab, and say so in the next result."""
        context = self._context
        if context is None or context.closed:
            return
        try:
            tabs = await context.tabs()
        except EgoError:
            return  # the call that follows meets the same failure and says it
        ids = {tab.target_id: tab for tab in tabs}
        self._seen = {tab_id: None for tab_id in (*self._seen, *ids) if tab_id in ids}
        over = len(tabs) - self.limits.max_tabs
        if over <= 0:
            return
        current = self._tab.target_id if self._tab is not None else None
        newest = [ids[tab_id] for tab_id in reversed(self._seen) if tab_id != current][:over]
        for tab in newest:
            with contextlib.suppress(EgoError):
                await tab.close()
            self.forget(tab)
        said = (
            f"Note: a page opened more tabs than this session may have ({self.limits.max_tabs}, "
            f"ego mcp --max-tabs): the newest were closed ({', '.join(t.url for t in newest)}); "
            "close_tab frees room."
        )
        self.notice = f"{self.notice} {said}" if self.notice else said

    def set_start_url(self, site_id: str, url: str) -> None:
        """Open ``site_id``'s tools at ``url`` from now on, in this session."""
        self.start_urls[site_id] = url
        if self._context is not None:
            self._context.site.set_start_url(site_id, url)

    async def close(self) -> None:
        """Close the session's context (its tabs with it); the shared Chrome stays."""
        await self.finish()
        async with self._lock:
            self._closed = True
            context, self._context = self._context, None
            self._tab = None
        if context is not None:
            await context.close()
        self.files.close()  # the uploads' private copies; the folder is the server's to keep
