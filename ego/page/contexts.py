"""Browser contexts: tabs that share cookies, storage and cache with each other and with no
other tab of the browser, each context with its own downloads folder, dialog policy and origin
limits (:meth:`ego.Browser.new_context`).

A context is what one agent, one account or one pool worker gets inside a shared Chrome:
measured with one tab each, an agent more costs about 60 MB (PSS) as a context against about
160 MB as a whole Chrome of its own (bench/bench_contexts.py, bench/README.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, Protocol, Self
from urllib.parse import urlsplit

from ..errors import EgoError, ProtocolError, TabClosedError, TabLimitError, UnknownTabError
from ..places import expand
from .dialogs import DialogPolicy
from .downloads import Download, Downloads
from .policy import NavigationPolicy
from .storage_state import (
    StorageState,
    apply_state,
    collect_state,
    origin_of,
    read_storage_state,
    write_state,
)
from .tab import Tab, WaitUntil

if TYPE_CHECKING:
    from ..protocol.chrome import ChromeProcess
    from ..protocol.session import Listener
    from ..protocol.transport import Connection

__all__ = ["MAX_ORIGINS", "BrowserContext", "Contexts", "find_in", "scratch_tab", "unknown_tab"]

logger = logging.getLogger("ego.page.contexts")

#: How many origins a context remembers for its storage state (the latest shown).
MAX_ORIGINS: Final = 1000


class Browser(Protocol):
    """What a context needs of its browser (:class:`ego.page.browser.Browser`, a layer up)."""

    connection: Connection
    endpoint: str | None
    process: ChromeProcess | None
    default_timeout: float
    downloads_folder: Path
    _tabs: dict[str, Tab]
    _contexts: Contexts
    _context_type: type[BrowserContext]

    @property
    def closed(self) -> bool: ...

    def downloads(self) -> list[Download]: ...

    async def _tabs_of(self, context_id: str) -> list[Tab]: ...

    async def _open_tab(
        self,
        url: str,
        wait_until: WaitUntil,
        timeout: float | None,
        target: Mapping[str, Any],
        *,
        command_timeout: float | None = None,
        hidden: bool = False,
    ) -> Tab: ...

    def isolated_context(
        self,
        *,
        timeout: float = ...,
        fallback: bool = ...,
        dialogs: DialogPolicy | None = ...,
        policy: NavigationPolicy | None = ...,
    ) -> contextlib.AbstractAsyncContextManager[BrowserContext]: ...


class BrowserContext:
    """Tabs isolated from every other tab of the browser, from :meth:`ego.Browser.new_context`
    (open until :meth:`close`) or :meth:`ego.Browser.isolated_context` (for an ``async with``
    block).

    Its tabs share cookies, localStorage, IndexedDB and the HTTP cache with each other and
    with no other tab. :meth:`tabs`, :meth:`find_tab` and :meth:`tab` see its tabs only (a
    popup one of them opens included), and :meth:`ego.Browser.tabs` does not list them.
    Closing it closes its tabs and disposes it in Chrome.

    Attributes:
        browser: the browser the context belongs to.
        context_id: Chrome's ``browserContextId``; None when the browser refused a new
            context and the tabs open in its default one (``isolated_context(fallback=True)``).
        timeout: seconds each CDP command that opens, closes or disposes may take.
        dialogs: the dialog policy its tabs start with.
        downloads_folder: where its pages' downloads are saved.
        policy: where its pages may go: the browser's limits and the context's own.
        max_tabs: the most tabs :meth:`new_tab` lets it have open; None: no bound.
    """

    def __init__(
        self,
        browser: Browser,
        context_id: str | None,
        *,
        timeout: float,
        dialogs: DialogPolicy,
        downloads: Downloads | None,
        policy: NavigationPolicy,
    ) -> None:
        self.browser = browser
        self.context_id = context_id
        self.timeout = timeout
        self.dialogs: DialogPolicy = dialogs
        self.policy = policy
        self._downloads = downloads
        self.downloads_folder: Path = downloads.folder if downloads else browser.downloads_folder
        self._opened: list[Tab] = []
        self._closed = False
        self.max_tabs: int | None = None

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{len(self._opened)} tab(s) opened"
        return f"<BrowserContext {self.context_id or '(default)'} {state}>"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    @property
    def isolated(self) -> bool:
        """True when the tabs have a context of their own (False after a ``fallback``)."""
        return self.context_id is not None

    @property
    def closed(self) -> bool:
        """True once :meth:`close` ran, or the browser is gone."""
        return self._closed or self.browser.closed

    @property
    def disposed(self) -> bool:
        """True once :meth:`close` ran (an ``isolated_context`` block ended)."""
        return self._closed

    @property
    def connection(self) -> Connection:
        """The browser's CDP connection."""
        return self.browser.connection

    @property
    def process(self) -> ChromeProcess | None:
        """The browser's Chrome process, when ego started it."""
        return self.browser.process

    @property
    def endpoint(self) -> str | None:
        """The browser's websocket URL (see :attr:`ego.Browser.endpoint`)."""
        return self.browser.endpoint

    @property
    def default_timeout(self) -> float:
        """Seconds a CDP command of its tabs may take unless a call says otherwise."""
        return self.browser.default_timeout

    def _check_open(self) -> None:
        if self._closed:
            raise TabClosedError(
                f"browser context {self.context_id or '(default)'} is closed and disposed: "
                "make a new one (browser.new_context())"
            )

    async def tabs(self) -> list[Tab]:
        """Every open tab of this context, in Chrome's order, with fresh URLs and titles.

        Raises:
            TabClosedError: the context is closed.
            BrowserClosedError: the connection is closed.
        """
        self._check_open()
        if self.context_id is None:
            return [tab for tab in self._opened if not tab.closed]
        return await self.browser._tabs_of(self.context_id)

    async def new_tab(
        self,
        url: str = "about:blank",
        *,
        wait_until: WaitUntil = "load",
        timeout: float | None = None,
        background: bool = False,
    ) -> Tab:
        """Open a tab in this context and, unless ``url`` is about:blank, navigate it and wait.

        Args:
            url: where the tab goes first.
            wait_until: as :meth:`Tab.navigate`.
            timeout: seconds for the navigation; the browser's default if omitted.
            background: open it without bringing it to the front.

        Raises:
            TabClosedError: the context is closed.
            TabLimitError: it has :attr:`max_tabs` tabs open already (nothing was opened).
            NavigationError, CommandTimeoutError: as :meth:`Tab.navigate`; the tab is closed
                again so that no half-loaded tab is left behind.
            BrowserClosedError: the connection is closed.
        """
        self._check_open()
        if self.max_tabs is not None and len(await self.tabs()) >= self.max_tabs:
            raise TabLimitError(self.max_tabs)
        target: dict[str, Any] = {"background": background}
        if self.context_id is not None:
            target["browserContextId"] = self.context_id
        tab = await self.browser._open_tab(
            url, wait_until, timeout, target, command_timeout=self.timeout
        )
        self._opened = [*(each for each in self._opened if not each.closed), tab]
        return tab

    async def find_tab(
        self,
        *,
        url: str | None = None,
        origin: str | None = None,
        host: str | None = None,
        predicate: Callable[[Tab], bool] | None = None,
    ) -> Tab | None:
        """The first open tab of this context that matches every criterion given, or None
        (see :meth:`ego.Browser.find_tab`).

        Raises:
            TabClosedError: the context is closed.
        """
        return find_in(await self.tabs(), url=url, origin=origin, host=host, predicate=predicate)

    async def tab(self, tab_id: str) -> Tab:
        """The open tab of this context whose id is ``tab_id``.

        Raises:
            UnknownTabError: no open tab of this context has that id (it closed, or it is
                another context's: a context never reaches another's tabs).
            TabClosedError: the context is closed.
        """
        tabs = await self.tabs()
        for tab in tabs:
            if tab.target_id == tab_id:
                return tab
        raise unknown_tab(tab_id, tabs, "this browser context")

    def downloads(self) -> list[Download]:
        """Every download this context's pages made, oldest first, each with its ``path``
        once saved (into :attr:`downloads_folder`)."""
        if self._downloads is None:
            return self.browser.downloads()
        return self._downloads.list()

    async def storage_state(self, path: str | os.PathLike[str] | None = None) -> StorageState:
        """This context's cookies and every origin's localStorage (and IndexedDB names), to
        load into another context or browser later (``new_context(storage_state=...)``).

        Args:
            path: also write it there, readable by its owner only (``0600``).

        Raises:
            TabClosedError: the context is closed.
            StorageStateError: ``path`` lies in a learnings folder (ego's front door checks).
            OSError: ``path`` cannot be written.
            BrowserClosedError, ProtocolError, CommandTimeoutError: the browser failed.
        """
        self._check_open()
        return await self.browser._contexts.save(self.context_id, await self.tabs(), path)

    async def set_storage_state(
        self, state: str | os.PathLike[str] | Mapping[str, Any]
    ) -> list[str]:
        """Load a saved state's cookies and localStorage into this context (best before its
        first page: a page open now keeps what it read).

        Returns:
            The origins whose localStorage was not written, each with why (one the context's
            limits refuse, say); empty when everything was.

        Raises:
            StorageStateError: not a storage state (the message quotes none of it).
            TabClosedError: the context is closed.
            ProtocolError: Chrome refused the cookies.
        """
        self._check_open()
        return await self.browser._contexts.load(self.context_id, read_storage_state(state))

    def isolated_context(
        self, *, timeout: float = 10.0, fallback: bool = False
    ) -> contextlib.AbstractAsyncContextManager[BrowserContext]:
        """A sibling context for an ``async with`` block, with this one's dialog policy and
        limits (what a save's offline cases run in); see :meth:`ego.Browser.isolated_context`."""
        return self.browser.isolated_context(
            timeout=timeout, fallback=fallback, dialogs=self.dialogs, policy=self.policy
        )

    async def close(self) -> None:
        """Close every tab of the context and dispose it in Chrome (its cookies and storage
        are gone with it). Each step is bounded by :attr:`timeout`; a step that fails is
        logged, never raised. Idempotent."""
        if self._closed:
            return
        tabs: list[Tab] = []
        if not self.browser.closed:
            with contextlib.suppress(EgoError):
                tabs = await self.tabs()
        self._closed = True
        for tab in {id(tab): tab for tab in [*self._opened, *tabs]}.values():
            with contextlib.suppress(EgoError, TimeoutError):
                await asyncio.wait_for(tab.close(), self.timeout)
        await self.browser._contexts.dispose(self)
        if self._downloads is not None:
            self._downloads.close()


def find_in(
    tabs: Iterable[Tab],
    *,
    url: str | None = None,
    origin: str | None = None,
    host: str | None = None,
    predicate: Callable[[Tab], bool] | None = None,
) -> Tab | None:
    """The first of ``tabs`` that matches every criterion given (see
    :meth:`ego.Browser.find_tab`), or None."""
    for tab in tabs:
        if url is not None and not _url_matches(tab.url, url):
            continue
        if origin is not None and tab.origin.lower() != origin.rstrip("/").lower():
            continue
        if host is not None and (urlsplit(tab.url).hostname or "") != host.lower():
            continue
        if predicate is not None and not predicate(tab):
            continue
        return tab
    return None


def unknown_tab(tab_id: str, tabs: Iterable[Tab], where: str) -> UnknownTabError:
    """The error for a tab id no tab of ``tabs`` (those of ``where``) has."""
    known = ", ".join(tab.target_id for tab in tabs) or "none"
    return UnknownTabError(
        f"no open tab of {where} has id {tab_id!r} (open: {known}): it closed, or it is "
        "another context's; list the tabs again (tabs())",
        tab_id=tab_id,
    )


def _url_matches(actual: str, wanted: str) -> bool:
    if wanted.endswith("*"):
        return actual.startswith(wanted[:-1])
    return actual == wanted or actual.rstrip("/") == wanted.rstrip("/")


@contextlib.asynccontextmanager
async def scratch_tab(browser: Browser, context_id: str | None) -> AsyncIterator[Tab]:
    """A background tab of a context for the block, listed by no one, closed after it."""
    target: dict[str, Any] = {"background": True}
    if context_id is not None:
        target["browserContextId"] = context_id
    tab = await browser._open_tab("about:blank", "load", None, target, hidden=True)
    try:
        yield tab
    finally:
        with contextlib.suppress(EgoError, TimeoutError):
            await asyncio.wait_for(tab.close(), browser.default_timeout)


class Contexts:
    """A browser's contexts, and what they showed: the contexts made and still open, the
    context of each page and cross-site frame, the origins each one's documents showed (a
    storage state saves theirs), and the scratch tabs nobody lists.

    Args:
        browser: the browser whose contexts these are.
    """

    def __init__(self, browser: Browser) -> None:
        self.browser = browser
        #: The contexts made by new_context() and still open, by Chrome's id.
        self.open: dict[str, BrowserContext] = {}
        #: Scratch tabs (reading or writing a storage state): listed by no one.
        self.hidden: set[str] = set()
        # The context of each page and cross-site frame target seen.
        self._targets: dict[str, str] = {}
        # The http(s) origins each context's documents showed, oldest first (a dict as an
        # ordered set, at most MAX_ORIGINS each); None: the default context.
        self._origins: dict[str | None, dict[str, None]] = {}
        self._tracking: Listener | None = None

    def get(self, context_id: str | None) -> BrowserContext | None:
        """The open context with this Chrome id, if it is one made here."""
        return self.open.get(context_id or "")

    def own(self, context_id: Any) -> str | None:
        """``context_id`` when it names a context made here, else None (the default one)."""
        return str(context_id) if context_id in self.open else None

    def note(self, target_id: str, context_id: Any) -> None:
        """``target_id`` is a page or frame of ``context_id`` (ignored when empty)."""
        if context_id:
            self._targets[target_id] = str(context_id)

    def forget(self, target_id: str) -> None:
        """``target_id`` is gone."""
        self._targets.pop(target_id, None)
        self.hidden.discard(target_id)

    def of_frame(self, frame_id: str) -> BrowserContext | None:
        """The context (of those made here) whose page or frame has this id, if any."""
        context_id = self._targets.get(frame_id)
        if context_id is None:
            for tab in self.browser._tabs.values():
                if tab.known_frame(frame_id) is not None:
                    context_id = self._targets.get(tab.target_id)
                    break
        return self.get(context_id)

    async def make(
        self,
        *,
        timeout: float,
        dialogs: DialogPolicy,
        policy: NavigationPolicy,
        downloads: str | os.PathLike[str] | None = None,
        fallback: bool = False,
    ) -> BrowserContext:
        """A new context in Chrome (``disposeOnDetach``: Chrome disposes it when this client
        goes), registered here, its downloads saved into a folder of its own.

        Raises:
            ProtocolError: the browser refused a new context and ``fallback`` is False.
            CommandTimeoutError, BrowserClosedError: as any command.
        """
        browser = self.browser
        await self.track()
        context_id: str | None = None
        try:
            created = await browser.connection.send(
                "Target.createBrowserContext", {"disposeOnDetach": True}, timeout=timeout
            )
            context_id = str(created["browserContextId"])
        except ProtocolError:
            if not fallback:
                raise
        if context_id is None:
            return browser._context_type(
                browser, None, timeout=timeout, dialogs=dialogs, downloads=None, policy=policy
            )
        folder = (
            expand(downloads)
            if downloads
            else browser.downloads_folder / f"context-{context_id[:12].lower()}"
        )
        saver = Downloads(
            browser.connection,
            folder,
            context_id=context_id,
            owns=lambda frame: self.of_frame(frame) is context,
        )
        context = browser._context_type(
            browser, context_id, timeout=timeout, dialogs=dialogs, downloads=saver, policy=policy
        )
        self.open[context_id] = context
        try:
            await saver.enable()
        except ProtocolError as exc:
            logger.debug("downloads of context %s stay Chrome's: %s", context_id, exc)
        return context

    async def dispose(self, context: BrowserContext) -> None:
        """Dispose a closed context in Chrome (bounded; a failure is logged, never raised:
        Chrome disposes a context left behind once this client detaches anyway)."""
        if context.context_id is None:
            return
        if not self.browser.closed:
            try:
                await self.browser.connection.send(
                    "Target.disposeBrowserContext",
                    {"browserContextId": context.context_id},
                    timeout=context.timeout,
                )
            except (EgoError, TimeoutError) as exc:
                logger.debug("disposing context %s: %s", context.context_id, exc)
        self.open.pop(context.context_id, None)
        self._origins.pop(context.context_id, None)

    async def save(
        self, context_id: str | None, pages: list[Tab], path: str | os.PathLike[str] | None
    ) -> StorageState:
        """The storage state of a context (None: the default one), written to ``path`` too.

        Raises:
            OSError: ``path`` cannot be written.
            BrowserClosedError, ProtocolError, CommandTimeoutError: the browser failed.
        """
        browser = self.browser
        await self.track()
        # What Chrome lists now (tabs ego never attached, cross-site frames) counts too.
        targets = await browser.connection.send("Target.getTargets")
        shown = [
            str(info.get("url", ""))
            for info in targets["targetInfos"]
            if info.get("type") in ("page", "iframe")
            and info["targetId"] not in self.hidden
            and self.own(info.get("browserContextId")) == context_id
        ]
        state = await collect_state(
            browser.connection,
            context_id=context_id,
            pages=pages,
            origins=[*self._origins.get(context_id, ()), *shown],
            scratch=lambda: scratch_tab(browser, context_id),
            timeout=browser.default_timeout,
        )
        if path is not None:
            await asyncio.to_thread(write_state, path, state)
        return state

    async def load(self, context_id: str | None, state: StorageState) -> list[str]:
        """Put ``state`` into a context (None: the default one); the origins not written,
        each with why.

        Raises:
            ProtocolError: Chrome refused the cookies.
        """
        browser = self.browser
        await self.track()
        skipped = await apply_state(
            browser.connection,
            state,
            context_id=context_id,
            scratch=lambda: scratch_tab(browser, context_id),
            timeout=browser.default_timeout,
        )
        # Saving again keeps what was loaded, even for an origin no page showed since.
        self._saw(context_id, [str(entry["origin"]) for entry in state["origins"]])
        return skipped

    def _saw(self, context_id: str | None, origins: list[str]) -> None:
        """Note ``origins`` for the context; the oldest are forgotten past
        :data:`MAX_ORIGINS` (a browser that roams for days keeps the latest)."""
        seen = self._origins.setdefault(context_id, {})
        for origin in origins:
            seen.pop(origin, None)
            seen[origin] = None
        while len(seen) > MAX_ORIGINS:
            del seen[next(iter(seen))]

    async def track(self) -> None:
        """Note, from now on, the origin of every document each context shows (once)."""
        browser = self.browser
        if self._tracking is not None or browser.closed:
            return
        root = browser.connection.root

        def seen(method: str, params: dict[str, Any]) -> None:
            if method == "Target.targetDestroyed":
                self._targets.pop(str(params.get("targetId", "")), None)
                return
            info = params.get("targetInfo", {})
            target_id = str(info.get("targetId", ""))
            if info.get("type") not in ("page", "iframe"):
                return
            self.note(target_id, info.get("browserContextId"))
            origin = origin_of(str(info.get("url", "")))
            if origin is not None and target_id not in self.hidden:
                self._saw(self.own(info.get("browserContextId")), [origin])

        self._tracking = root.listen(
            ("Target.targetCreated", "Target.targetInfoChanged", "Target.targetDestroyed"), seen
        )
        try:
            await root.send("Target.setDiscoverTargets", {"discover": True})
        except ProtocolError as exc:
            logger.debug("origins are not tracked: %s", exc)

    def close(self) -> None:
        """The browser closed: every context with it."""
        for context in list(self.open.values()):
            context._closed = True
            if context._downloads is not None:
                context._downloads.close()
        self.open.clear()
        if self._tracking is not None:
            self._tracking.close()
