"""What a tab records of its page, and the verbs that read it: requests, console messages,
dialogs and downloads; who observes its actions, and its trace.

:class:`TabRecords` is a base of :class:`ego.Tab`: it holds the tab's network and console
logs, its dialog tracker and its share of the browser's downloads, and offers what reads them.
The tab attaches them to its session (they listen through it, so they end with it).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .action_log import ActionObserver, Observation, StartObserver, observe
from .console import ConsoleLog, ConsoleMessage
from .dialogs import Dialog, DialogExpectation, DialogPolicy, DialogTracker
from .downloads import Download, DownloadExpectation, Downloads
from .network import NetworkLog, Request

if TYPE_CHECKING:
    from ..protocol.session import Session
    from .frames import FrameTree

__all__ = [
    "ActionRecorderFactory",
    "HarRecorderFactory",
    "TabRecords",
    "TracerFactory",
    "set_action_recorder",
    "set_har_recorder",
    "set_tracer",
]

#: Makes what :meth:`TabRecords.record_har` returns: ``factory(tab, path, strip_secrets=,
#: bounds=)``.
HarRecorderFactory = Callable[..., Any]
#: The replay layer's recorder, registered by the layer above both (``ego.api``): the page
#: layer sits below the replay layer and may not import it.
_har_recorder: HarRecorderFactory | None = None


def set_har_recorder(factory: HarRecorderFactory) -> None:
    """Register what :meth:`TabRecords.record_har` returns (``ego.api`` registers
    :class:`ego.replay.Recorder`)."""
    global _har_recorder
    _har_recorder = factory


#: Makes what :meth:`TabRecords.trace` returns: ``factory(tab, path, **options)``.
TracerFactory = Callable[..., Any]
#: The trace layer's tracer, registered by ``ego.api`` as the HAR recorder is.
_tracer: TracerFactory | None = None


def set_tracer(factory: TracerFactory) -> None:
    """Register what :meth:`TabRecords.trace` returns (``ego.api`` registers
    :func:`ego.trace.trace`)."""
    global _tracer
    _tracer = factory


#: Makes what :meth:`TabRecords.record_actions` returns: ``factory(tab, path, har=)``.
ActionRecorderFactory = Callable[..., Any]
#: The recorder of page actions, registered by ``ego.api`` as the HAR recorder is.
_action_recorder: ActionRecorderFactory | None = None


def set_action_recorder(factory: ActionRecorderFactory) -> None:
    """Register what :meth:`TabRecords.record_actions` returns (``ego.api`` registers
    :class:`ego.actions.ActionRecording`)."""
    global _action_recorder
    _action_recorder = factory


class TabRecords:
    """Requests, console messages, dialogs and downloads of one tab (see :class:`ego.Tab`)."""

    default_timeout: float
    _network: NetworkLog
    _console: ConsoleLog
    _dialogs: DialogTracker
    _downloads: Downloads | None
    _frames: FrameTree
    _action_observers: list[Observation]
    target_id: str

    async def attach(self) -> Session:
        raise NotImplementedError

    def record_har(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        strip_secrets: bool = True,
        bounds: Any = None,
    ) -> Any:
        """Record everything this tab loads while the block runs, into a HAR 1.2 file::

            async with tab.record_har("session.har") as recording:
                await tab.navigate("https://shop.example/search?q=lamp")
                await tab.click("[data-testid=add-to-cart]")
            print(len(recording.har.entries))     # session.har is written

        The page's own ``fetch`` and XHR calls are in it: ``ego suggest`` drafts tools from
        such a recording. It is an :class:`ego.replay.Recorder` (``wait_idle``, ``har``).

        Args:
            path: where the HAR is written when the block ends (None: keep it in memory).
            strip_secrets: drop cookies and credentials and redact secret values (see
                :mod:`ego.replay.secrets`); keep the default unless the HAR stays here.
            bounds: the most the recording keeps, an :class:`ego.replay.HarBounds`
                (50,000 entries and 256 MiB by default); what goes over them is left out,
                and said in the HAR (``log._omitted``) and in ``recording.omitted``.

        Raises:
            RuntimeError: no recorder is registered (``ego.api`` was never imported: use
                ``ego.launch`` or ``ego.connect``).
        """
        if _har_recorder is None:
            raise RuntimeError(
                "no HAR recorder is registered: get the tab from ego.launch() or ego.connect()"
            )
        return _har_recorder(self, path, strip_secrets=strip_secrets, bounds=bounds)

    def observe_actions(
        self, observer: ActionObserver, *, started: StartObserver | None = None
    ) -> Observation:
        """Call ``observer`` with each action of this tab from now on: every page verb (on
        the tab or any of its frames: click, dblclick, type, press, drag_to, scroll, select,
        wait_for, snapshot, ...), every call of its mouse and keyboard (``mouse.click``,
        ``keyboard.type``, ...) and every navigation (navigate, reload, back, forward), once
        it ended, as an
        :class:`~ego.page.action_log.Action`: the verb, its target as written and the element
        it named (role, name, ref), the other arguments, how long it took, its result or
        error. An observer may be a coroutine function: the action's caller waits for it.
        ::

            seen = []
            with tab.observe_actions(seen.append):
                await tab.click("#save")
            print(seen[0].verb, seen[0].element)   # click button "Save" [ref=e4]

        Args:
            observer: called with each action once it ended.
            started: also called with each action before its verb runs (awaited when it is a
                coroutine function).

        Returns:
            an :class:`~ego.page.action_log.Observation`: ``stop()`` it, or use it as a
            ``with`` block, to stop observing.
        """
        return observe(self._action_observers, observer, started)

    def record_actions(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        har: bool | str | os.PathLike[str] = False,
        source: str = "verbs",
    ) -> Any:
        """Record the page actions of this tab while the block runs, as a flow a tool can be
        drafted from (``ego suggest SITE --actions FILE``)::

            async with tab.record_actions("search.actions.json", har=True):
                await tab.navigate("https://shop.example/search")
                await tab.type("#q", "lamp")
                await tab.click("text=Search")
                await tab.snapshot(selector="#results")     # what the tool returns

        Each navigate, click, type, select, check, uncheck and press, with its target as
        written, a durable selector for the element it named, the value typed (a password
        redacted) and the URL before; the last snapshot is the result. An
        :class:`ego.actions.ActionRecording` (its ``flow``).

        Args:
            path: where the flow is written when the block ends (private), or None.
            har: also record what the tab loads (True: beside ``path``; or a path).
            source: ``"verbs"`` (this process's page verbs) or ``"page"`` (the actions heard
                in the page: a person's in a headed window, another process's).

        Raises:
            RuntimeError: no recorder is registered (use ``ego.launch`` or ``ego.connect``).
            ValueError: ``har=True`` without a ``path``, or another ``source``.
        """
        if _action_recorder is None:
            raise RuntimeError(
                "no action recorder is registered: get the tab from ego.launch() or ego.connect()"
            )
        return _action_recorder(self, path, har=har, source=source)

    def trace(self, path: str | os.PathLike[str], **options: Any) -> Any:
        """Trace this tab into the file ``path`` while the block runs (see docs/tracing.md)::

            async with tab.trace("run.trace.jsonl"):
                await tab.navigate("https://shop.example/")
                await tab.click("text=Add to cart")
            # ego show-trace run.trace.jsonl --open

        Each action (with a screenshot after it and the snapshot around its target), each
        tool run, the requests with their bodies, console messages, dialogs and downloads,
        written as they come, secrets redacted, within ``options``' bounds
        (:class:`ego.trace.TraceOptions`).

        Raises:
            RuntimeError: no tracer is registered (``ego.api`` was never imported: use
                ``ego.launch`` or ``ego.connect``).
        """
        if _tracer is None:
            raise RuntimeError(
                "no tracer is registered: get the tab from ego.launch() or ego.connect()"
            )
        return _tracer(self, path, **options)

    @property
    def network_log(self) -> NetworkLog:
        """The tab's network log (what :meth:`network` reads)."""
        return self._network

    async def network(self) -> list[Request]:
        """The requests the page made since it loaded, in the order they started.

        Each has method, URL, resource type, status (None while pending or failed), MIME
        type and, for a failed one, Chrome's error text. A navigation starts a new list. The
        list keeps the latest :data:`ego.page.network.MAX_REQUESTS` (1,000) requests of a
        page; older ones are dropped and counted, so a tab reused for many calls stays small.
        Requests of same-process frames are in it; a cross-site frame's are not.

        Raises:
            TabClosedError: the tab is closed.
        """
        await self.attach()
        return await self._network.requests()

    async def response_body(
        self, request: str | Request, *, timeout: float | None = None
    ) -> bytes | str:
        """The response body of a request from :meth:`network` (or its ``request_id``).

        Text comes back as ``str``, binary bodies (images, fonts, ...) as ``bytes``. A
        request still loading is waited for. Chrome keeps bodies of the current document
        only, within its buffer: read them before navigating away.

        Raises:
            ProtocolError: Chrome no longer has the body (the page navigated since, or it
                was evicted), the id is unknown, or the request failed or was a redirect.
            CommandTimeoutError: the request was still loading after ``timeout``.
        """
        await self.attach()
        request_id = request if isinstance(request, str) else request.request_id
        return await self._network.response_body(
            request_id, timeout=self.default_timeout if timeout is None else timeout
        )

    async def console(self, *, clear: bool = False) -> list[ConsoleMessage]:
        """The page's console messages and uncaught exceptions since ego attached to the tab.

        Kept across navigations in a buffer of the newest 1,000
        (:data:`ego.page.console.MAX_MESSAGES`); :attr:`console_dropped` counts the older
        ones dropped. Each has level, text, source URL, 1-based line and column, and for an
        exception ``exception=True`` and its stack.

        Args:
            clear: empty the buffer (and the dropped count) after reading it.

        Raises:
            TabClosedError: the tab is closed (and never attached).
        """
        await self.attach()
        return await self._console.messages(clear=clear)

    @property
    def console_dropped(self) -> int:
        """Console messages dropped because the buffer was full (since attach or the last
        ``console(clear=True)``)."""
        return self._console.dropped

    @property
    def dialog_policy(self) -> DialogPolicy:
        """How this tab's page dialogs are answered (see :data:`ego.page.dialogs.DialogPolicy`);
        the browser's ``dialogs=`` unless set here."""
        return self._dialogs.policy

    @dialog_policy.setter
    def dialog_policy(self, policy: DialogPolicy) -> None:
        self._dialogs.policy = policy

    @property
    def dialogs(self) -> list[Dialog]:
        """The page dialogs seen since attach, oldest first (at most the last 50), each with
        its type, message, URL, default prompt, answer, who answered and when."""
        return self._dialogs.history

    def take_dialog_note(self) -> str | None:
        """What ego did about a dialog loop of this tab's page since last asked: which page
        opened dialogs one after another and how many of them ego answered in the caller's
        place (see :mod:`ego.page.dialogs`); None when nothing. Said once."""
        return self._dialogs.take_flood_note()

    @property
    def dialog(self) -> Dialog | None:
        """The dialog that blocks the page now, if any (only the ``"manual"`` policy leaves
        one open)."""
        return self._dialogs.current

    async def handle_dialog(self, accept: bool, prompt_text: str | None = None) -> Dialog:
        """Answer the dialog that blocks the page; the tab works again at once.

        Args:
            accept: True clicks OK (leaves the page, for ``beforeunload``); False cancels.
            prompt_text: the text a ``prompt`` is accepted with.

        Returns:
            the dialog, with its answer recorded.

        Raises:
            ProtocolError: no dialog is open (the message says how the last one ended).
            TabClosedError: the tab is closed.
        """
        return await self._dialogs.handle(accept, prompt_text)

    def expect_dialog(
        self,
        *,
        accept: bool | None = None,
        prompt_text: str | None = None,
        timeout: float | None = None,
    ) -> DialogExpectation:
        """Wait for the next dialog, and answer it as given: ``dialog = await
        tab.expect_dialog()`` (the one open now, or the next), or ``async with
        tab.expect_dialog(accept=True) as expected:`` around the call that opens it (see
        :class:`~ego.page.dialogs.DialogExpectation`).

        Args:
            accept: True accepts, False dismisses; None leaves it to the policy.
            prompt_text: the text to accept a prompt with.
            timeout: seconds to wait for the dialog; the tab's default if omitted.

        Raises:
            CommandTimeoutError: no dialog opened within ``timeout`` (raised by the await, or
                on leaving the block).
            TabClosedError: the tab closed first.
        """
        seconds = self.default_timeout if timeout is None else timeout
        return self._dialogs.expect(accept, prompt_text, seconds)

    def expect_download(self, *, timeout: float | None = None) -> DownloadExpectation:
        """Wait for a download started by this tab (any of its frames), saved and complete.

        ``async with tab.expect_download() as download:`` around the call that starts it
        (``download`` is a :class:`~ego.page.downloads.Download` whose ``path``,
        ``suggested_filename``, ``url`` and ``size`` are filled in when the block ends), or
        ``download = await tab.expect_download()`` for the next one. Files land in the
        browser's downloads folder (``downloads=`` on launch or connect) under a safe name
        that never replaces another file.

        Args:
            timeout: seconds for the download to start and finish; the tab's default if
                omitted.

        Raises:
            CommandTimeoutError: no download started, or it did not finish, in time.
            DownloadFailedError: the download was cancelled or failed.
        """
        if self._downloads is None:
            raise RuntimeError("this tab has no downloads folder: open it through a Browser")
        seconds = self.default_timeout if timeout is None else timeout
        return self._downloads.expect(self._owns_download, seconds)

    async def keep_downloads(self) -> None:
        """Make sure a download this tab starts next lands in the browser's downloads folder
        (see :meth:`ego.page.downloads.Downloads.renew`)."""
        if self._downloads is not None:
            await self._downloads.renew()

    def downloads(self) -> list[Download]:
        """The downloads this tab's pages (any of its frames) started, oldest first."""
        if self._downloads is None:
            return []
        return [download for download in self._downloads.list() if self._owns_download(download)]

    def _owns_download(self, download: Download) -> bool:
        return (
            download.frame_id == self.target_id or self._frames.get(download.frame_id) is not None
        )
