"""A browser reached over CDP: its tabs, and the Chrome process when ego started it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from types import TracebackType
from typing import Any, Self

from ..errors import (
    BrowserClosedError,
    EgoError,
    ProtocolError,
)
from ..places import expand, state_dir
from ..protocol.chrome import ChromeProcess, LaunchOptions
from ..protocol.endpoint import resolve_endpoint
from ..protocol.launcher import launch_chrome
from ..protocol.transport import Connection
from .action_log import tab_made
from .contexts import BrowserContext, Contexts, find_in, unknown_tab
from .dialogs import DialogPolicy, dialog_actions
from .downloads import Download, Downloads
from .guard import NavigationGuard
from .policy import OPEN, NavigationPolicy
from .storage_state import StorageState, read_storage_state
from .tab import Tab, WaitUntil

__all__ = ["Browser", "BrowserContext", "TabHost"]

logger = logging.getLogger("ego.page.browser")


class Browser:
    """A connected browser: list, open, find and close tabs; close the browser.

    Create one with :func:`ego.launch` (ego starts Chrome and ends it on close) or
    :func:`ego.connect` (ego attaches to a Chrome that runs elsewhere and only disconnects on
    close). Use it as an async context manager, or call :meth:`close`.

    Attributes:
        endpoint: the browser's websocket URL, which another process can attach to with
            :func:`ego.connect`; None for a browser ego launched without a port, which only
            this process reaches (over a pipe).
        dialogs: the dialog policy each tab starts with (see :data:`ego.page.dialogs.DialogPolicy`);
            a tab's own is :attr:`ego.Tab.dialog_policy`.
        downloads_folder: where the files pages download are saved.
    """

    #: The class of the contexts :meth:`new_context` makes (``ego.Browser`` makes ones with
    #: a ``site``).
    _context_type: type[BrowserContext] = BrowserContext

    def __init__(
        self,
        connection: Connection,
        *,
        endpoint: str | None,
        process: ChromeProcess | None = None,
        default_timeout: float = 30.0,
        dialogs: DialogPolicy = "auto",
        downloads: str | os.PathLike[str] | None = None,
        policy: NavigationPolicy = OPEN,
    ) -> None:
        dialog_actions(dialogs)  # a wrong policy fails here, not at the first dialog
        self.connection = connection
        self.endpoint = endpoint
        self.process = process
        self.default_timeout = default_timeout
        self.dialogs: DialogPolicy = dialogs
        self.downloads_folder = expand(downloads) if downloads else state_dir() / "downloads"
        self._downloads = Downloads(
            connection,
            self.downloads_folder,
            owns=lambda frame: self._contexts.of_frame(frame) is None,
        )
        self.policy = policy
        self._guard: NavigationGuard | None = None
        self._tabs: dict[str, Tab] = {}
        # Tabs closed through ego that Chrome may still list for a moment: never brought back
        # as a new Tab. Bounded, so that a browser that opens tabs for days keeps few.
        self._closed_tabs: deque[str] = deque(maxlen=64)
        self._closing = False
        #: The contexts made here, and what each showed.
        self._contexts: Contexts = Contexts(self)

    @classmethod
    async def _prepared(cls, connection: Connection, **keywords: Any) -> Self:
        """A browser on ``connection`` made ready for its first tab; closed again (its
        Chrome ended, if ego started it) when that fails."""
        browser = cls(connection, **keywords)
        try:
            await browser._prepare()
        except BaseException:
            await browser.close()
            raise
        return browser

    async def _prepare(self) -> None:
        """What a new connection needs before its first tab: downloads saved into
        :attr:`downloads_folder` (a browser that refuses keeps its own download behaviour,
        said in the log)."""
        try:
            await self._downloads.enable()
        except ProtocolError as exc:
            logger.warning("downloads are not saved into %s: %s", self.downloads_folder, exc)
        if self.policy.limits_origins:
            # Refused by the browser: no origin limit could hold, so none is pretended.
            await self._start_guard()

    async def _start_guard(self) -> None:
        """Watch every page's document requests (once): a policy limits origins.

        Raises:
            ProtocolError: the browser refuses auto-attach.
        """
        if self._guard is None:
            guard = NavigationGuard(self.connection, self._policy_for)
            await guard.start()
            self._guard = guard

    def _policy_for(self, context_id: str | None) -> NavigationPolicy:
        context = self._contexts.get(context_id)
        return context.policy if context is not None else self.policy

    @property
    def preloads_pages(self) -> bool:
        """True once a page said this browser preloads pages (speculation rules), which its
        origin limits cannot hold: a browser ego attached to, not one it started (see
        :mod:`ego.page.guard`)."""
        return self._guard is not None and self._guard.preloading

    def downloads(self) -> list[Download]:
        """Every download pages of this browser made since ego connected, oldest first
        (the last :data:`ego.page.downloads.MAX_DOWNLOADS`), each with its ``path`` once
        saved; a context's pages' downloads are the context's."""
        return self._downloads.list()

    @classmethod
    async def launch(
        cls,
        *,
        profile: str | None = None,
        user_data_dir: str | os.PathLike[str] | None = None,
        headless: bool = True,
        executable: str | None = None,
        args: Sequence[str] = (),
        timeout: float = 30.0,
        default_timeout: float = 30.0,
        dialogs: DialogPolicy = "auto",
        downloads: str | os.PathLike[str] | None = None,
        policy: NavigationPolicy = OPEN,
        port: int | None = None,
    ) -> Self:
        """Start a local Chrome and connect to it. See :func:`ego.launch`."""
        return await cls.launch_with(
            LaunchOptions(
                profile,
                user_data_dir,
                headless,
                executable,
                tuple(args),
                timeout,
                default_timeout,
                port,
            ),
            dialogs=dialogs,
            downloads=downloads,
            policy=policy,
        )

    @classmethod
    async def launch_with(
        cls,
        options: LaunchOptions,
        *,
        dialogs: DialogPolicy = "auto",
        downloads: str | os.PathLike[str] | None = None,
        policy: NavigationPolicy = OPEN,
    ) -> Self:
        """Start a local Chrome as ``options`` say and connect to it.

        Raises:
            ChromeNotFoundError, ProfileInUseError, ChromeLaunchError: as :func:`ego.launch`.
            ValueError: ``dialogs`` is not a dialog policy (nothing was started).
        """
        dialog_actions(dialogs)
        process, connection = await launch_chrome(options)
        return await cls._prepared(
            connection,
            endpoint=process.ws_url,
            process=process,
            default_timeout=options.default_timeout,
            dialogs=dialogs,
            downloads=downloads,
            policy=policy,
        )

    @classmethod
    async def connect(
        cls,
        endpoint: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float = 10.0,
        default_timeout: float = 30.0,
        dialogs: DialogPolicy = "auto",
        downloads: str | os.PathLike[str] | None = None,
        policy: NavigationPolicy = OPEN,
    ) -> Self:
        """Attach to a running browser. See :func:`ego.connect`."""
        dialog_actions(dialogs)
        ws_url = await resolve_endpoint(endpoint, headers=headers, timeout=timeout)
        connection = await Connection.open(
            ws_url, headers=headers, open_timeout=timeout, default_timeout=default_timeout
        )
        return await cls._prepared(
            connection,
            endpoint=ws_url,
            default_timeout=default_timeout,
            dialogs=dialogs,
            downloads=downloads,
            policy=policy,
        )

    async def __aenter__(self) -> Browser:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    @property
    def closed(self) -> bool:
        """True once the connection is closed (by :meth:`close` or because Chrome went away)."""
        return self.connection.closed

    def _forget(self, tab: Tab) -> None:
        """A tab ended (its own session detached, or it was closed): the browser lets go of it.
        Another session on the same target (a recorder's, say) coming and going is not that."""
        if self._tabs.get(tab.target_id) is tab:
            del self._tabs[tab.target_id]
            self._contexts.forget(tab.target_id)
        self._closed_tabs.append(tab.target_id)

    def _tab(self, info: Mapping[str, Any]) -> Tab:
        tab = self._tabs.get(info["targetId"])
        if tab is None or tab.closed:
            context_id = info.get("browserContextId")
            context = self._contexts.get(context_id)
            tab = Tab(
                self.connection,
                info["targetId"],
                url=info.get("url", ""),
                title=info.get("title", ""),
                default_timeout=self.default_timeout,
                dialogs=context.dialogs if context is not None else self.dialogs,
                downloads=(context._downloads if context is not None else None) or self._downloads,
                policy=context.policy if context is not None else self.policy,
                on_closed=self._forget,
            )
            self._tabs[tab.target_id] = tab
            self._contexts.note(tab.target_id, context_id)
            tab_made(tab, self, context)
        else:
            tab._listed(info)
        return tab

    async def version(self) -> dict[str, Any]:
        """Chrome's ``Browser.getVersion``: product, protocol version, user agent."""
        return await self.connection.send("Browser.getVersion")

    async def _pages(self) -> list[dict[str, Any]]:
        """Chrome's page targets, open tabs of ego's noted closed, less those ego closed
        (Chrome still lists a tab for a moment after ``Target.closeTarget`` answers) and its
        scratch tabs."""
        result = await self.connection.send("Target.getTargets")
        infos = [info for info in result["targetInfos"] if info.get("type") == "page"]
        alive = {info["targetId"] for info in infos}
        for target_id, tab in list(self._tabs.items()):
            if target_id not in alive:
                tab._mark_closed()
        closed = set(self._closed_tabs) | self._contexts.hidden
        closed.update(target_id for target_id, tab in self._tabs.items() if tab.closed)
        return [info for info in infos if info["targetId"] not in closed]

    async def tabs(self) -> list[Tab]:
        """Every open page tab, in Chrome's order, with fresh URLs and titles; the tabs of
        the contexts made with :meth:`new_context` are theirs, not listed here.

        Raises:
            BrowserClosedError: the connection is closed.
        """
        return [
            self._tab(info)
            for info in await self._pages()
            if info.get("browserContextId") not in self._contexts.open
        ]

    async def _tabs_of(self, context_id: str) -> list[Tab]:
        """The open tabs of one context, in Chrome's order."""
        return [
            self._tab(info)
            for info in await self._pages()
            if info.get("browserContextId") == context_id
        ]

    async def tab(self, tab_id: str) -> Tab:
        """The open tab (of this browser, not of a context) whose id is ``tab_id``.

        Raises:
            UnknownTabError: no open tab has that id (it closed, or it is a context's).
            BrowserClosedError: the connection is closed.
        """
        tabs = await self.tabs()
        for tab in tabs:
            if tab.target_id == tab_id:
                return tab
        raise unknown_tab(tab_id, tabs, "this browser")

    async def new_tab(
        self,
        url: str = "about:blank",
        *,
        wait_until: WaitUntil = "load",
        timeout: float | None = None,
        background: bool = False,
    ) -> Tab:
        """Open a tab and, unless ``url`` is about:blank, navigate it and wait.

        Raises:
            NavigationError, CommandTimeoutError: as :meth:`Tab.navigate`; the tab is closed
                again so that no half-loaded tab is left behind.
            OriginLimitsError: the browser has origin limits, which could not be set up on
                the new tab; it was closed before it loaded anything.
            BrowserClosedError: the connection is closed.
        """
        return await self._open_tab(url, wait_until, timeout, {"background": background})

    async def _open_tab(
        self,
        url: str,
        wait_until: WaitUntil,
        timeout: float | None,
        target: Mapping[str, Any],
        *,
        command_timeout: float | None = None,
        hidden: bool = False,
    ) -> Tab:
        # Open at about:blank and navigate after: navigate() waits for the load, createTarget
        # would not. ``target`` adds Target.createTarget parameters (background, context).
        result = await self.connection.send(
            "Target.createTarget",
            {"url": "about:blank", **target},
            timeout=self.connection.default_timeout if command_timeout is None else command_timeout,
        )
        if hidden:
            self._contexts.hidden.add(result["targetId"])
        if (
            self._guard is not None
            and self._policy_for(target.get("browserContextId")).limits_origins
        ):
            # Nothing runs in the tab until the guard holds it, or closed it (fails closed).
            await self._guard.ready(result["targetId"])
        info = {"targetId": result["targetId"], "url": "about:blank"}
        if target.get("browserContextId"):
            info["browserContextId"] = target["browserContextId"]
        tab = self._tab(info)
        if url != "about:blank":
            try:
                await tab.navigate(url, wait_until=wait_until, timeout=timeout)
            except BaseException:
                await asyncio.shield(tab.close())
                raise
        else:
            await tab.attach()
        return tab

    async def new_context(
        self,
        *,
        storage_state: str | os.PathLike[str] | Mapping[str, Any] | None = None,
        dialogs: DialogPolicy | None = None,
        downloads: str | os.PathLike[str] | None = None,
        allowed_origins: Sequence[str] | None = None,
        blocked_origins: Sequence[str] | None = None,
        allow_file_urls: bool = True,
        max_tabs: int | None = None,
        timeout: float = 10.0,
    ) -> BrowserContext:
        """A browser context of its own, open until its :meth:`~BrowserContext.close` (or the
        end of an ``async with`` block on it): its tabs share cookies, localStorage and the
        HTTP cache with each other and with no other tab.

        ::

            context = await browser.new_context(storage_state="alice.json")
            tab = await context.new_tab("https://shop.example/account")
            ...
            await context.close()

        Args:
            storage_state: a saved state (a path, or the mapping
                :meth:`BrowserContext.storage_state` gave) loaded before the first page:
                its cookies, and each origin's localStorage.
            dialogs: the dialog policy of its tabs (default: the browser's).
            downloads: the folder its pages' downloads go to (default: a folder of its own
                inside the browser's, ``context-<id>``).
            allowed_origins, blocked_origins, allow_file_urls: limits of its own, held on top
                of the browser's (as for :func:`ego.launch`).
            max_tabs: the most tabs :meth:`BrowserContext.new_tab` lets it have open (None:
                no bound); one more raises ``TabLimitError``.
            timeout: seconds each CDP command that creates, closes or disposes may take.

        Raises:
            ValueError: ``dialogs`` is not a policy, or an origin pattern is malformed.
            StorageStateError: ``storage_state`` is not a storage state (nothing was made).
            ProtocolError: the browser refused a new context (some remote endpoints do), or
                its cookies, or origin limits (auto-attach); nothing is left behind.
            CommandTimeoutError: no context within ``timeout``.
            BrowserClosedError: the connection is closed.
        """
        if dialogs is not None:
            dialog_actions(dialogs)
        own = NavigationPolicy.of(allowed_origins, blocked_origins, allow_local=allow_file_urls)
        state = read_storage_state(storage_state) if storage_state is not None else None
        context = await self._contexts.make(
            timeout=timeout,
            dialogs=dialogs if dialogs is not None else self.dialogs,
            policy=self.policy.narrowed(own),
            downloads=downloads,
        )
        context.max_tabs = max_tabs
        try:
            if context.policy.limits_origins:
                await self._start_guard()
            if state is not None:
                await self._contexts.load(context.context_id, state)
        except BaseException:
            await context.close()
            raise
        return context

    @contextlib.asynccontextmanager
    async def isolated_context(
        self,
        *,
        timeout: float = 10.0,
        fallback: bool = False,
        dialogs: DialogPolicy | None = None,
        policy: NavigationPolicy | None = None,
    ) -> AsyncIterator[BrowserContext]:
        """A browser context of its own for the ``async with`` block: tabs opened in it share
        cookies, localStorage and HTTP cache with each other and with no other tab.

        ::

            async with browser.isolated_context() as context:
                tab = await context.new_tab("https://example.org/")

        However the block ends (normally, by an error, by cancellation), the context's tabs
        are closed and the context is disposed, each step bounded by ``timeout``; a failure
        while cleaning up never replaces the block's own outcome. :meth:`new_context` makes
        one that lives until it is closed.

        Args:
            timeout: seconds each CDP command that creates, closes or disposes may take.
            fallback: where the browser refuses new contexts (some remote endpoints do), open
                the tabs in the default context instead of raising; they are still closed
                after the block. :attr:`BrowserContext.isolated` tells which happened.
            dialogs, policy: the context's dialog policy and limits (default: the browser's).

        Raises:
            ProtocolError: the browser refused a new context and ``fallback`` is False.
            CommandTimeoutError: no context within ``timeout``.
            BrowserClosedError: the connection is closed.
        """
        context = await self._contexts.make(
            timeout=timeout,
            dialogs=dialogs if dialogs is not None else self.dialogs,
            policy=policy if policy is not None else self.policy,
            fallback=fallback,
        )
        try:
            yield context
        finally:
            await context.close()

    async def find_tab(
        self,
        *,
        url: str | None = None,
        origin: str | None = None,
        host: str | None = None,
        predicate: Callable[[Tab], bool] | None = None,
    ) -> Tab | None:
        """The first open tab that matches every criterion given, or None.

        Args:
            url: the exact URL, or a prefix when it ends with ``*``.
            origin: ``scheme://host[:port]``, compared case-insensitively.
            host: the host name, case-insensitively, port ignored.
            predicate: any other test on the :class:`Tab`.
        """
        return find_in(await self.tabs(), url=url, origin=origin, host=host, predicate=predicate)

    # -- saved logins ---------------------------------------------------------------------

    async def storage_state(self, path: str | os.PathLike[str] | None = None) -> StorageState:
        """The default context's cookies and every origin's localStorage (and IndexedDB
        names): what a login left, to load elsewhere (``ego.launch(storage_state=...)``,
        ``browser.new_context(storage_state=...)``). See
        :meth:`BrowserContext.storage_state`.

        Raises:
            OSError: ``path`` cannot be written.
            BrowserClosedError, ProtocolError, CommandTimeoutError: the browser failed.
        """
        return await self._contexts.save(None, await self.tabs(), path)

    async def set_storage_state(
        self, state: str | os.PathLike[str] | Mapping[str, Any]
    ) -> list[str]:
        """Load a saved state into the default context; see
        :meth:`BrowserContext.set_storage_state`.

        Raises:
            StorageStateError: not a storage state.
            ProtocolError: Chrome refused the cookies.
        """
        return await self._contexts.load(None, read_storage_state(state))

    async def close(self) -> None:
        """Disconnect; if ego started this Chrome, end it and its whole process tree.

        A launched Chrome is asked to quit first and given up to 10 s to do so, so that a
        persistent profile saves its cookies and localStorage; that wait also applies when
        Chrome is already quitting by itself (its window closed, or another client sent
        ``Browser.close``). Whatever is still running after that is killed. A temporary
        profile is removed. An attached browser is left running. Idempotent.
        """
        if self._closing:
            return
        self._closing = True
        try:
            if self.process is not None:
                if not self.connection.closed:
                    try:
                        await self.connection.send("Browser.close", timeout=5)
                    except (BrowserClosedError, ProtocolError, EgoError):
                        pass  # the socket drops as Chrome quits; that is the expected answer
                await self.process.wait_exit(10)
        finally:
            await self.connection.close()
            if self.process is not None:
                await self.process.terminate()
            for tab in list(self._tabs.values()):
                tab._mark_closed()
            self._tabs.clear()
            self._contexts.close()
            self._downloads.close()
            if self._guard is not None:
                self._guard.close()


#: Where tabs open: a whole browser (its default context) or one of its contexts. The site
#: facade, the learning saves and skills take either.
TabHost = Browser | BrowserContext
