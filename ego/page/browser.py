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
from urllib.parse import urlsplit

from ..errors import (
    BrowserClosedError,
    EgoError,
    ProtocolError,
    TabClosedError,
)
from ..places import expand, state_dir
from ..protocol.chrome import ChromeProcess, LaunchOptions
from ..protocol.endpoint import resolve_endpoint
from ..protocol.launcher import launch_chrome
from ..protocol.transport import Connection
from .dialogs import DialogPolicy, dialog_actions
from .downloads import Download, Downloads
from .guard import NavigationGuard
from .policy import OPEN, NavigationPolicy
from .tab import Tab, WaitUntil

__all__ = ["Browser", "BrowserContext"]

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
        self._downloads = Downloads(connection, self.downloads_folder)
        self.policy = policy
        self._guard = NavigationGuard(connection, policy) if policy.limits_origins else None
        self._tabs: dict[str, Tab] = {}
        # Tabs closed through ego that Chrome may still list for a moment: never brought back
        # as a new Tab. Bounded, so that a browser that opens tabs for days keeps few.
        self._closed_tabs: deque[str] = deque(maxlen=64)
        self._closing = False

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
        if self._guard is not None:
            # Refused by the browser: no origin limit could hold, so none is pretended.
            await self._guard.start()

    @property
    def preloads_pages(self) -> bool:
        """True once a page said this browser preloads pages (speculation rules), which its
        origin limits cannot hold: a browser ego attached to, not one it started (see
        :mod:`ego.page.guard`)."""
        return self._guard is not None and self._guard.preloading

    def downloads(self) -> list[Download]:
        """Every download pages of this browser made since ego connected, oldest first
        (the last :data:`ego.page.downloads.MAX_DOWNLOADS`), each with its ``path`` once
        saved."""
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
        self._closed_tabs.append(tab.target_id)

    def _tab(self, info: Mapping[str, Any]) -> Tab:
        tab = self._tabs.get(info["targetId"])
        if tab is None or tab.closed:
            tab = Tab(
                self.connection,
                info["targetId"],
                url=info.get("url", ""),
                title=info.get("title", ""),
                default_timeout=self.default_timeout,
                dialogs=self.dialogs,
                downloads=self._downloads,
                policy=self.policy,
                on_closed=self._forget,
            )
            self._tabs[tab.target_id] = tab
        else:
            tab._listed(info)
        return tab

    async def version(self) -> dict[str, Any]:
        """Chrome's ``Browser.getVersion``: product, protocol version, user agent."""
        return await self.connection.send("Browser.getVersion")

    async def tabs(self) -> list[Tab]:
        """Every open page tab, in Chrome's order, with fresh URLs and titles.

        Raises:
            BrowserClosedError: the connection is closed.
        """
        result = await self.connection.send("Target.getTargets")
        infos = [info for info in result["targetInfos"] if info.get("type") == "page"]
        alive = {info["targetId"] for info in infos}
        for target_id, tab in list(self._tabs.items()):
            if target_id not in alive:
                tab._mark_closed()
        # Chrome still lists a tab for a moment after Target.closeTarget answers; a tab closed
        # through ego is not listed (nor brought back as a new Tab) again.
        closed = set(self._closed_tabs)
        closed.update(target_id for target_id, tab in self._tabs.items() if tab.closed)
        return [self._tab(info) for info in infos if info["targetId"] not in closed]

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
    ) -> Tab:
        # Open at about:blank and navigate after: navigate() waits for the load, createTarget
        # would not. ``target`` adds Target.createTarget parameters (background, context).
        result = await self.connection.send(
            "Target.createTarget",
            {"url": "about:blank", **target},
            timeout=self.connection.default_timeout if command_timeout is None else command_timeout,
        )
        tab = self._tab({"targetId": result["targetId"], "url": "about:blank"})
        if url != "about:blank":
            try:
                await tab.navigate(url, wait_until=wait_until, timeout=timeout)
            except BaseException:
                await asyncio.shield(tab.close())
                raise
        else:
            await tab.session()
        return tab

    @contextlib.asynccontextmanager
    async def isolated_context(
        self, *, timeout: float = 10.0, fallback: bool = False
    ) -> AsyncIterator[BrowserContext]:
        """A browser context of its own for the ``async with`` block: tabs opened in it share
        cookies, localStorage and HTTP cache with each other and with no other tab.

        ::

            async with browser.isolated_context() as context:
                tab = await context.new_tab("https://example.org/")

        However the block ends (normally, by an error, by cancellation), the context's tabs
        are closed and the context is disposed, each step bounded by ``timeout``; a failure
        while cleaning up never replaces the block's own outcome.

        Args:
            timeout: seconds each CDP command that creates, closes or disposes may take.
            fallback: where the browser refuses new contexts (some remote endpoints do), open
                the tabs in the default context instead of raising; they are still closed
                after the block. :attr:`BrowserContext.isolated` tells which happened.

        Raises:
            ProtocolError: the browser refused a new context and ``fallback`` is False.
            CommandTimeoutError: no context within ``timeout``.
            BrowserClosedError: the connection is closed.
        """
        context_id: str | None = None
        try:
            created = await self.connection.send(
                "Target.createBrowserContext", {"disposeOnDetach": True}, timeout=timeout
            )
            context_id = str(created["browserContextId"])
        except ProtocolError:
            if not fallback:
                raise
        if context_id is not None:
            try:
                await self._downloads.enable(context_id)
            except ProtocolError as exc:
                logger.debug("downloads of context %s stay Chrome's: %s", context_id, exc)
        context = BrowserContext(self, context_id, timeout=timeout)
        try:
            yield context
        finally:
            await context._dispose()

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
        for tab in await self.tabs():
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
            self._downloads.close()
            if self._guard is not None:
                self._guard.close()


class BrowserContext:
    """Tabs isolated from every other tab of the browser: made by
    :meth:`Browser.isolated_context`, usable inside its ``async with`` block only.

    Attributes:
        browser: the browser the context belongs to.
        context_id: Chrome's ``browserContextId``; None when the browser refused a new
            context and the tabs open in its default one (``fallback``).
        timeout: seconds each CDP command that opens or closes a tab may take.
    """

    def __init__(self, browser: Browser, context_id: str | None, *, timeout: float) -> None:
        self.browser = browser
        self.context_id = context_id
        self.timeout = timeout
        self._tabs: list[Tab] = []
        self._disposed = False

    def __repr__(self) -> str:
        state = "disposed" if self._disposed else f"{len(self._tabs)} tab(s)"
        return f"<BrowserContext {self.context_id or '(default)'} {state}>"

    @property
    def isolated(self) -> bool:
        """True when the tabs have a context of their own (False after a ``fallback``)."""
        return self.context_id is not None

    @property
    def disposed(self) -> bool:
        """True once the ``async with`` block has ended."""
        return self._disposed

    @property
    def tabs(self) -> list[Tab]:
        """The tabs opened through :meth:`new_tab` that are still open."""
        return [tab for tab in self._tabs if not tab.closed]

    async def new_tab(
        self,
        url: str = "about:blank",
        *,
        wait_until: WaitUntil = "load",
        timeout: float | None = None,
    ) -> Tab:
        """Open a tab in this context and, unless ``url`` is about:blank, navigate it and wait.

        Args:
            url: where the tab goes first.
            wait_until: as :meth:`Tab.navigate`.
            timeout: seconds for the navigation; the browser's default if omitted.

        Raises:
            TabClosedError: the context was already disposed (its block ended).
            NavigationError, CommandTimeoutError: as :meth:`Tab.navigate`; the tab is closed
                again so that no half-loaded tab is left behind.
            BrowserClosedError: the connection is closed.
        """
        if self._disposed:
            raise TabClosedError(
                f"browser context {self.context_id or '(default)'} is disposed: open tabs "
                "inside its async with block"
            )
        target = {} if self.context_id is None else {"browserContextId": self.context_id}
        tab = await self.browser._open_tab(
            url, wait_until, timeout, target, command_timeout=self.timeout
        )
        self._tabs.append(tab)
        return tab

    async def _dispose(self) -> None:
        self._disposed = True
        # Cleanup must never replace the block's own outcome with a cleanup error; Chrome
        # disposes a context left behind once this client detaches anyway.
        for tab in self._tabs:
            with contextlib.suppress(EgoError, TimeoutError):
                await asyncio.wait_for(tab.close(), self.timeout)
        if self.context_id is not None and not self.browser.closed:
            with contextlib.suppress(EgoError, TimeoutError):
                await self.browser.connection.send(
                    "Target.disposeBrowserContext",
                    {"browserContextId": self.context_id},
                    timeout=self.timeout,
                )


def _url_matches(actual: str, wanted: str) -> bool:
    if wanted.endswith("*"):
        return actual.startswith(wanted[:-1])
    return actual == wanted or actual.rstrip("/") == wanted.rstrip("/")
