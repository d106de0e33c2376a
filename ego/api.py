"""The front door: ``ego.launch`` and ``ego.connect``, and the :class:`Browser` they give.

:class:`Browser` is the protocol-level :class:`ego.page.browser.Browser` with the learnings facade
on it (``browser.site``); it lives here, above the site layer, so that the browser layer
never names the site layer. ``Browser.launch()``, ``Browser.connect()``, ``ego.launch()`` and
``ego.connect()`` all give one.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Generator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, cast

from .errors import StorageStateError
from .learning.catalog.registry import Learnings
from .page import browser as _browser
from .page import contexts as _contexts
from .page.dialogs import DialogPolicy, dialog_actions
from .page.downloads import Downloads
from .page.policy import OPEN, NavigationPolicy
from .page.records import set_action_recorder, set_har_recorder, set_tracer
from .page.storage_state import StorageState, read_storage_state
from .protocol.chrome import ChromeProcess, LaunchOptions
from .protocol.slow_motion import SlowMotion
from .protocol.transport import Connection
from .site import Site

__all__ = [
    "Browser",
    "BrowserContext",
    "BrowserStarter",
    "SharedBrowser",
    "connect",
    "launch",
    "outside_learnings",
]


class _Traced:
    """What a browser and a browser context offer of traces."""

    def trace(self, path: str | os.PathLike[str], **options: Any) -> Any:
        """Trace every tab of this browser (its contexts' too) or context, and their frames,
        those opened later too, into the file ``path`` while the block runs; see
        :meth:`ego.Tab.trace` and docs/tracing.md::

            async with browser.trace("session.trace.jsonl"):
                ...

        Args:
            path: the trace file (replaced if it exists; made ``0600``).
            options: ``subject=`` (what the viewer's title names), and what each step keeps
                and the file's bound (:class:`ego.trace.TraceOptions`: ``max_bytes``,
                ``max_body``, ``screenshot_scale``, ``screenshot_quality``,
                ``snapshot_lines``, ``page_events``).

        Returns:
            an :class:`ego.trace.Trace` (``async with`` it, or ``await`` it and ``stop()`` it).

        Raises:
            ValueError: an option out of its range (raised at once).
            TraceFileError: the file cannot be made (raised when the trace starts).
        """
        from .trace import trace_pages

        return trace_pages(self, path, **options)


class BrowserContext(_Traced, _contexts.BrowserContext):
    """A browser context with its learnings: ``context.site`` runs their tools in the
    context's tabs only (a tab it finds or opens for a site is one of the context's).

    Everything :class:`ego.page.contexts.BrowserContext` offers, plus :attr:`site`. Made by
    :meth:`Browser.new_context` and :meth:`Browser.isolated_context`.

    Attributes:
        site: the learnings facade on this context: the browser's learnings and start URLs.
    """

    def __init__(
        self,
        browser: Any,
        context_id: str | None,
        *,
        timeout: float,
        dialogs: DialogPolicy,
        downloads: Downloads | None,
        policy: NavigationPolicy,
    ) -> None:
        super().__init__(
            browser,
            context_id,
            timeout=timeout,
            dialogs=dialogs,
            downloads=downloads,
            policy=policy,
        )
        owner = cast("Browser", browser)
        self.site = Site(self, owner.site.learnings)
        for site_id, url in owner.site.start_urls().items():
            self.site.set_start_url(site_id, url)

    async def storage_state(self, path: str | os.PathLike[str] | None = None) -> StorageState:
        """See :meth:`ego.page.contexts.BrowserContext.storage_state`; a ``path`` inside a
        learnings root is refused (a learning is shared; a login is not).

        Raises:
            StorageStateError: ``path`` lies in a learnings folder (nothing was read).
        """
        if path is not None:
            outside_learnings(path, self.site.learnings)
        return await super().storage_state(path)


def _har_recorder(tab: Any, path: Any, **options: Any) -> Any:
    """What ``tab.record_har`` returns: imported on use, so a call never loads the recorder."""
    from .replay.recorder import Recorder

    return Recorder(tab, path, **options)


set_har_recorder(_har_recorder)


def _tracer(tab: Any, path: Any, **options: Any) -> Any:
    """What ``tab.trace`` returns: imported on use, so a call never loads the trace layer."""
    from .trace import trace_tab

    return trace_tab(tab, path, **options)


set_tracer(_tracer)


def _action_recorder(tab: Any, path: Any, **options: Any) -> Any:
    """What ``tab.record_actions`` returns: imported on use, as the HAR recorder is."""
    from .actions import ActionRecording

    return ActionRecording(tab, path, **options)


set_action_recorder(_action_recorder)


class Browser(_Traced, _browser.Browser):
    """A connected browser with its learnings: ``browser.site`` runs their tools.

    Everything :class:`ego.page.browser.Browser` offers, plus :attr:`site`.

    Attributes:
        site: the learnings facade (:class:`ego.site.Site`), on the default learnings roots
            until :func:`launch` or :func:`connect` gives others.
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
        super().__init__(
            connection,
            endpoint=endpoint,
            process=process,
            default_timeout=default_timeout,
            dialogs=dialogs,
            downloads=downloads,
            policy=policy,
        )
        self.site = Site(self)

    _context_type = BrowserContext

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
        """A browser context of its own with ``site`` on it; see
        :meth:`ego.page.browser.Browser.new_context`, which raises what this raises."""
        context = await super().new_context(
            storage_state=storage_state,
            dialogs=dialogs,
            downloads=downloads,
            allowed_origins=allowed_origins,
            blocked_origins=blocked_origins,
            allow_file_urls=allow_file_urls,
            max_tabs=max_tabs,
            timeout=timeout,
        )
        return cast("BrowserContext", context)

    async def storage_state(self, path: str | os.PathLike[str] | None = None) -> StorageState:
        """See :meth:`ego.page.browser.Browser.storage_state`; a ``path`` inside a learnings
        root is refused.

        Raises:
            StorageStateError: ``path`` lies in a learnings folder (nothing was read).
        """
        if path is not None:
            outside_learnings(path, self.site.learnings)
        return await super().storage_state(path)


def outside_learnings(path: str | os.PathLike[str], learnings: Learnings) -> None:
    """Refuse a storage state's path inside a learnings root: learnings are shared (packs,
    workspaces in version control); a login must never travel with them.

    Raises:
        StorageStateError: it is inside one.
    """
    target = Path(path).expanduser().resolve()
    for root in learnings.roots:
        if target.is_relative_to(Path(root).resolve()):
            raise StorageStateError(
                f"{path} is inside the learnings folder {root}: a saved login holds session "
                "secrets and never goes into a learning; save it elsewhere (ego's state "
                "folder, or a folder of your own)"
            )


class SharedBrowser:
    """One browser several users share, each in contexts of its own (``ego mcp --http``, a
    pool with ``contexts=True``): started on first use, and again when it closed or crashed.

    Args:
        start: starts the browser (``ego.launch(...)`` or ``ego.connect(...)``; called again
            to replace one that went away).
    """

    def __init__(self, start: Callable[[], Awaitable[Browser]]) -> None:
        self._start = start
        self._browser: Browser | None = None
        self._lock = asyncio.Lock()
        #: How many times a browser was started (1 after the first; more after a crash).
        self.generation = 0

    @property
    def current(self) -> Browser | None:
        """The browser now, if one is running."""
        browser = self._browser
        return browser if browser is not None and not browser.closed else None

    async def browser(self) -> Browser:
        """The running browser, started (again) when there is none.

        Raises:
            Whatever starting it raises (ChromeLaunchError, ConnectionFailedError, ...).
        """
        async with self._lock:
            if self._browser is None or self._browser.closed:
                if self._browser is not None:
                    await self._browser.close()
                self._browser = await self._start()
                self.generation += 1
            return self._browser

    async def new_context(self, **options: Any) -> BrowserContext:
        """A new context of the running browser (see :meth:`Browser.new_context`)."""
        return await (await self.browser()).new_context(**options)

    async def close(self) -> None:
        """Close the browser (a launched Chrome ends; an attached one is disconnected)."""
        async with self._lock:
            if self._browser is not None:
                await self._browser.close()
                self._browser = None


class BrowserStarter:
    """What :func:`launch` and :func:`connect` return: await it, or use it with ``async with``.

    ``browser = await ego.launch()`` leaves closing to you; ``async with ego.launch() as
    browser:`` closes the browser when the block ends, however it ends.
    """

    def __init__(
        self,
        factory: Callable[[], Awaitable[Browser]],
        learnings: Learnings | None,
        storage_state: StorageState | None = None,
        slow_motion: SlowMotion | None = None,
    ) -> None:
        self._factory = factory
        self._learnings = learnings
        self._storage_state = storage_state
        self._slow_motion = slow_motion
        self._browser: Browser | None = None

    def __await__(self) -> Generator[Any, None, Browser]:
        return self._start().__await__()

    async def _start(self) -> Browser:
        browser = await self._factory()
        if self._slow_motion is not None:
            browser.connection.slow_motion = self._slow_motion
        if self._learnings is not None:
            browser.site = Site(browser, self._learnings)
        if self._storage_state is not None:
            try:
                await browser.set_storage_state(self._storage_state)
            except BaseException:
                await browser.close()
                raise
        return browser

    async def __aenter__(self) -> Browser:
        self._browser = await self._start()
        return self._browser

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._browser is not None:
            await self._browser.close()


def launch(
    *,
    profile: str | None = None,
    user_data_dir: str | os.PathLike[str] | None = None,
    headless: bool = True,
    executable: str | None = None,
    args: Sequence[str] = (),
    timeout: float = 30.0,
    default_timeout: float = 30.0,
    workspace: str | os.PathLike[str] | None = None,
    learnings: Learnings | None = None,
    dialogs: DialogPolicy = "auto",
    downloads: str | os.PathLike[str] | None = None,
    allowed_origins: Sequence[str] | None = None,
    blocked_origins: Sequence[str] | None = None,
    allow_file_urls: bool = True,
    allow_script_urls: bool = True,
    port: int | None = None,
    storage_state: str | os.PathLike[str] | Mapping[str, Any] | None = None,
    max_js_heap_mb: int | None = None,
    slow_mo: float = 0,
) -> BrowserStarter:
    """Start a local Chrome and connect to it.

    Args:
        profile: a persistent profile in the profiles folder (``$EGO_PROFILES_DIR``, else
            ``chrome_profiles/`` in ego's home, the same from any current directory: see
            docs/install.md); cookies and logins survive restarts. A throwaway temporary
            profile is used when neither this nor ``user_data_dir`` is given.
        user_data_dir: an explicit profile folder (``~`` expanded).
        headless: run without a window (the default); ``False`` opens a real window.
        executable: the Chrome binary; otherwise ``$EGO_CHROME``, then chromium,
            google-chrome or chrome on PATH.
        args: extra Chrome flags.
        timeout: seconds Chrome may take to start and accept the connection.
        default_timeout: seconds every CDP command may take unless a call says otherwise.
        workspace: the agent workspace whose ``learnings/`` ``browser.site`` searches first
            (default ``$EGO_WORKSPACE``; ``~`` expanded).
        learnings: a ready :class:`~ego.learning.Learnings` (wins over ``workspace``).
        dialogs: how page dialogs are answered: ``"auto"`` (the default: accept ``alert``,
            dismiss ``confirm``, ``prompt`` and ``beforeunload``), ``"accept"``,
            ``"dismiss"``, ``"manual"`` (left open: calls on the tab fail at once with
            DialogOpenError until ``tab.handle_dialog``), or a mapping per dialog type such
            as ``{"beforeunload": "accept"}``. Every dialog is recorded in ``tab.dialogs``.
        downloads: the folder files that pages download are saved in (made when missing;
            default ``downloads/`` in ego's state folder), never the user's Downloads; see
            ``tab.expect_download()`` and ``browser.downloads()``.
        allowed_origins: when given, pages (every frame) may load documents only from
            origins matching these patterns (``https://shop.example``, ``shop.example:8765``,
            ``*.shop.example``; see :mod:`ego.page.policy`); others fail with
            OriginBlockedError for ``navigate`` and Chrome's error page for the page's own
            navigations. Requests a page's scripts make are not limited.
        blocked_origins: origins refused the same way, even when allowed.
        allow_file_urls: False refuses ``file:``, ``chrome:``, ``devtools:`` and
            ``view-source:`` URLs (``ego mcp`` refuses them unless told otherwise).
        allow_script_urls: False refuses to navigate to ``javascript:`` and ``data:`` URLs,
            which run the caller's own script in the page (``ego mcp --read-only`` does).
        port: also open a debugging port on 127.0.0.1 so that other processes can attach
            (``ego.connect(browser.endpoint)``): ``0`` lets Chrome choose a free one, ``N``
            asks for N. By default there is none: ego talks to Chrome over a pipe that only
            this process holds, and ``browser.endpoint`` is None. Chrome asks nothing of a
            client on its port: any local process or user can then drive the browser,
            logged-in sessions included.
        storage_state: a saved login (a path, or the mapping ``storage_state()`` gave:
            cookies and each origin's localStorage) loaded before the first page.
        max_js_heap_mb: the most megabytes of JavaScript heap each page's renderer may take
            (``--js-flags=--max-old-space-size``): a page that wants more crashes its tab
            (``TargetCrashedError``; reload or close it) instead of taking the machine's
            memory. By default Chrome's own limit.
        slow_mo: milliseconds to pause before each input (every mouse and key event) and
            navigation ego sends, so that a person can follow a run in a window
            (``headless=False``), as Playwright's ``slowMo``; 0 (the default) never pauses.

    Raises:
        ValueError: ``dialogs`` is not a dialog policy, an origin pattern is malformed,
            ``port`` is not a port number, or ``max_js_heap_mb`` or ``slow_mo`` is not a
            positive number (raised here, before Chrome starts).
        StorageStateError: ``storage_state`` is not a storage state (raised here too).
        ChromeNotFoundError: no Chrome binary was found (the message says how to install one).
        ProfileInUseError: another running Chrome holds the profile.
        ChromeLaunchError: Chrome exited or did not answer in time, or the port asked for is
            taken.

    Chrome ends when the browser is closed, and also when this Python process ends in any
    way, SIGKILL included (a watchdog process sees to that). It does not preload pages
    (speculation rules): a preloaded document would reach the tab without a request the
    origin limits see.
    """

    options = LaunchOptions(
        profile,
        user_data_dir,
        headless,
        executable,
        tuple(args),
        timeout,
        default_timeout,
        port,
        max_js_heap_mb=max_js_heap_mb,
    )
    dialog_actions(dialogs)
    policy = NavigationPolicy.of(
        allowed_origins,
        blocked_origins,
        allow_local=allow_file_urls,
        allow_script_urls=allow_script_urls,
    )

    state = read_storage_state(storage_state) if storage_state is not None else None
    slow_motion = SlowMotion(slow_mo) if slow_mo else None

    async def factory() -> Browser:
        return await Browser.launch_with(
            options, dialogs=dialogs, downloads=downloads, policy=policy
        )

    return BrowserStarter(factory, _learnings(workspace, learnings), state, slow_motion)


def connect(
    endpoint: str,
    *,
    headers: Mapping[str, str] | None = None,
    timeout: float = 10.0,
    default_timeout: float = 30.0,
    workspace: str | os.PathLike[str] | None = None,
    learnings: Learnings | None = None,
    dialogs: DialogPolicy = "auto",
    downloads: str | os.PathLike[str] | None = None,
    allowed_origins: Sequence[str] | None = None,
    blocked_origins: Sequence[str] | None = None,
    allow_file_urls: bool = True,
    allow_script_urls: bool = True,
    slow_mo: float = 0,
) -> BrowserStarter:
    """Attach to a Chrome that is already running, locally or on another host.

    Args:
        endpoint: ``http://host:port`` (its ``/json/version`` gives the websocket URL) or a
            ``ws://`` / ``wss://`` URL such as a browserless endpoint with ``?token=...``.
        headers: extra HTTP headers for the handshake (auth for a remote fleet).
        timeout: seconds to reach the endpoint.
        default_timeout: seconds every CDP command may take unless a call says otherwise.
        workspace, learnings, dialogs, downloads: as for :func:`launch` (downloads are saved
            into ``downloads`` on the machine ego runs on when Chrome runs there too).
        allowed_origins, blocked_origins, allow_file_urls, allow_script_urls: as for
            :func:`launch`; they hold for the pages of this connection's browser while it is
            connected. A page of a browser that preloads pages (speculation rules; one ego
            did not start, with "Preload pages" on) can bring in a refused origin's
            document: ``browser.preloads_pages`` says when a page reported it.
        slow_mo: as for :func:`launch`: milliseconds to pause before each input and
            navigation this connection sends.

    Raises:
        ValueError: ``dialogs`` is not a dialog policy, or ``slow_mo`` is negative (raised
            here, before connecting).
        ConnectionFailedError: the endpoint is unreachable, refused (401 for a wrong token),
            or is not a DevTools endpoint.

    Closing the browser only disconnects; the remote Chrome keeps running.
    """

    dialog_actions(dialogs)
    policy = NavigationPolicy.of(
        allowed_origins,
        blocked_origins,
        allow_local=allow_file_urls,
        allow_script_urls=allow_script_urls,
    )

    slow_motion = SlowMotion(slow_mo) if slow_mo else None

    async def factory() -> Browser:
        return await Browser.connect(
            endpoint,
            headers=headers,
            timeout=timeout,
            default_timeout=default_timeout,
            dialogs=dialogs,
            downloads=downloads,
            policy=policy,
        )

    return BrowserStarter(factory, _learnings(workspace, learnings), slow_motion=slow_motion)


def _learnings(
    workspace: str | os.PathLike[str] | None, learnings: Learnings | None
) -> Learnings | None:
    if learnings is not None:
        return learnings
    return Learnings(workspace=workspace) if workspace is not None else None
