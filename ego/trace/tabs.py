"""One traced tab: what it hears of its page and each step done in it, handed to a sink.

A :class:`TabTrace` observes the tab's actions (:meth:`ego.Tab.observe_actions`), listens to
its session for requests (:mod:`.network`), console messages (its own
:class:`~ego.page.console.ConsoleLog`) and the documents its main frame commits, and reads
the tab's dialogs and downloads. Each step (an action ended, a tool run ended in the tab)
is captured (:mod:`.capture`), then everything heard up to then is handed to the sink,
then the step itself: the sink writes them to a file, or keeps them until a step fails
(:mod:`.failures`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import EgoError
from ..page.console import ConsoleLog
from ..page.frame import Frame
from .capture import CAPTURE_SECONDS, screenshot, snapshot_around
from .network import TabNetwork
from .options import TraceOptions
from .records import (
    action_step,
    console_record,
    dialog_record,
    download_record,
    request_record,
    tool_step,
)
from .secrets import TraceSecrets

if TYPE_CHECKING:
    from ..learning.health.watch import ToolRun
    from ..page.action_log import Action, Observation
    from ..page.tab import Tab
    from ..protocol.session import Listener
    from ..protocol.transport import Subscription

__all__ = ["Sink", "TabTrace", "tab_of"]

logger = logging.getLogger("ego.trace")


class Sink(Protocol):
    """Where a traced tab's records go."""

    def record(self, trace: TabTrace, record: dict[str, Any]) -> None:
        """Something the tab heard (a request, a console line, ...)."""

    async def step(self, trace: TabTrace, step: dict[str, Any], failed: bool) -> None:
        """A step done in the tab, captured; ``failed`` when it raised."""


def tab_of(page: Any) -> Any:
    """The tab a page (a tab, or one of its frames) belongs to."""
    return page.tab if isinstance(page, Frame) else page


class TabTrace:
    """What one tab is traced by (see the module docstring).

    Args:
        tab: the tab.
        options: what a step keeps.
        secrets: the trace's secrets.
        sink: where the records go.
    """

    def __init__(self, tab: Tab, options: TraceOptions, secrets: TraceSecrets, sink: Sink) -> None:
        self.tab = tab
        self.id = tab.target_id
        self.options = options
        self.secrets = secrets
        self.sink = sink
        self.network = TabNetwork(tab, options.max_body)
        self.console = ConsoleLog()
        self._observation: Observation | None = None
        self._subscription: Subscription | None = None
        self._dialogs: set[int] = set()
        self._downloads: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._stopped = False
        # Actions of the tab running now that have not committed a document of their own:
        # the first main-frame commit while one runs is its own (a navigation's, a click's
        # on a link); any other is the page's doing (a script going on to another page).
        self._unclaimed: list[Action] = []
        self._unasked = False  # the main frame committed a document no action of ego's asked for
        self._listener: Listener | None = None
        # A main-frame navigation the page asked for (a link clicked, a form sent) and not
        # committed yet, with how many were asked for so far: an action that asked for one
        # is captured once it committed, so its screenshot and URL show where it went (a
        # click returns before the document it asked for commits).
        self._navigating: asyncio.Event | None = None
        self._asked = 0
        self._asked_before: dict[int, int] = {}
        # Each action running, and each page step not yet written, done once its step is
        # written or given up. A page loaded while an action runs is that action's doing
        # (a script going on from the page it loaded) and its step is written after the
        # action's, whichever capture ends first; an action's own step waits for nothing.
        self._running: dict[int, asyncio.Event] = {}

    async def start(self) -> None:
        """Start hearing the tab and observing its actions.

        Raises:
            TabClosedError: the tab is closed.
        """
        session = await self.tab.attach()
        self.network.attach(session)
        self.console.attach(session)
        self._subscription = session.subscribe_each(
            {"Page.frameNavigated": self._on_navigated, "Page.loadEventFired": self._on_load}
        )
        # Inline, as the event arrives: whether an action of ego's was running when the main
        # frame committed a document decides whether its load is a step of its own.
        self._listener = session.listen(
            ["Page.frameNavigated", "Page.frameRequestedNavigation", "Page.frameStoppedLoading"],
            self._on_commit,
        )
        session.on_detach(self._on_closed)
        self._observation = self.tab.observe_actions(self.on_action, started=self._started)
        self._record({"type": "tab", "event": "followed", "url": self.secrets.url(self.tab.url)})

    async def stop(self) -> None:
        """Take everything heard so far (requests still loading too) and stop. Idempotent."""
        if self._stopped:
            return
        self._stopped = True
        if self._observation is not None:
            self._observation.stop()
        for running in self._running.values():  # actions that will not be told as ended
            running.set()
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=CAPTURE_SECONDS * 2)
        if self._unasked and self.options.page_events and not self.tab.closed:
            # A page committed that has not loaded yet: its step shows it as it is now.
            self._unasked = False
            with contextlib.suppress(EgoError):
                await self._page_step(self._begun())
        await self.flush(everything=True)
        self.network.close()
        self.console.close()
        if self._subscription is not None:
            self._subscription.close()
        if self._listener is not None:
            self._listener.close()

    # -- steps -----------------------------------------------------------------------------

    def _started(self, action: Action) -> None:
        self._unclaimed.append(action)
        self._asked_before[id(action)] = self._asked
        self._running[id(action)] = asyncio.Event()

    async def on_action(self, action: Action) -> None:
        """An action of the tab (or one of its frames) ended: capture it, hand it over."""
        try:
            await self._action_step(action)
        finally:
            running = self._running.pop(id(action), None)
            if running is not None:
                running.set()

    async def _action_step(self, action: Action) -> None:
        asked_before = self._asked_before.pop(id(action), self._asked)
        navigating = self._navigating
        if navigating is not None and self._asked > asked_before and not action.reads:
            # Bounded: a navigation that ends in no document (a download, a 204) stops
            # loading, which also ends the wait.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(navigating.wait(), CAPTURE_SECONDS)
        self._unclaimed = [running for running in self._unclaimed if running is not action]
        if self._stopped:
            return
        step = action_step(action, self.secrets, self.options.max_body)
        if not action.reads:
            ref = action.element.ref if action.element is not None else None
            await self._capture(step, action.page, ref)
        await self._step(step, failed=not action.ok)

    async def on_run(self, run: ToolRun, label: str | None = None) -> None:
        """A tool run in the tab (or one of its frames) ended: capture it, hand it over
        (``label``: what the step is of, such as a batch's input)."""
        if self._stopped:
            return
        step = tool_step(run, self.secrets, self.options.max_body)
        if label is not None:
            step["input"] = label
        await self._capture(step, run.page, None)
        await self._step(step, failed=not run.ok)

    async def _capture(self, step: dict[str, Any], page: Any, ref: str | None) -> None:
        shot, outline = await asyncio.gather(
            screenshot(self.tab, self.options),
            snapshot_around(page, ref, self.options.snapshot_lines),
        )
        step["screenshot"] = shot
        step["snapshot"] = self.secrets.cut(outline)

    async def _step(self, step: dict[str, Any], *, failed: bool) -> None:
        await self.flush()
        step["tab"] = self.id
        await self.sink.step(self, step, failed)

    # -- what the tab heard ----------------------------------------------------------------

    def _record(self, record: dict[str, Any]) -> None:
        record.setdefault("t", time.time())
        record["tab"] = self.id
        self.sink.record(self, record)

    async def flush(self, *, everything: bool = False) -> None:
        """Hand over what the tab heard since the last flush: the requests that ended (all,
        with ``everything``), console messages, dialogs answered and downloads ended."""
        options = self.options
        for entry, note in await self.network.ended(everything=everything):
            self._record(request_record(entry, self.secrets, options.max_body, note))
        try:
            messages = await self.console.messages(clear=True)
        except EgoError:
            messages = []
        for message in messages:
            self._record(console_record(message, self.secrets))
        for dialog in self.tab.dialogs:
            if id(dialog) not in self._dialogs and (dialog.closed_at is not None or everything):
                self._dialogs.add(id(dialog))
                self._record(dialog_record(dialog, self.secrets))
        for download in self.tab.downloads():
            if download.guid not in self._downloads and (
                download.state != "in_progress" or everything
            ):
                self._downloads.add(download.guid)
                self._record(download_record(download, self.secrets))

    # -- the page's own navigations --------------------------------------------------------

    def _on_navigated(self, params: dict[str, Any]) -> None:
        frame = params.get("frame") or {}
        if frame.get("parentId"):
            return
        url = str(frame.get("url", "")) + str(frame.get("urlFragment", ""))
        self._record({"type": "page", "url": self.secrets.url(url)})

    def _on_commit(self, method: str, params: dict[str, Any]) -> None:
        if method == "Page.frameRequestedNavigation":
            if params.get("frameId") == self._main_frame_id() and (
                params.get("disposition", "currentTab") == "currentTab"
            ):
                self._asked += 1
                self._navigating = self._navigating or asyncio.Event()
            return
        if method == "Page.frameStoppedLoading":
            if params.get("frameId") == self._main_frame_id():
                self._settled()
            return
        if not (params.get("frame") or {}).get("parentId"):
            self._settled()
            # Claimed by the oldest running action that has none yet, else unasked.
            self._unasked = not self._unclaimed
            if self._unclaimed:
                del self._unclaimed[0]

    def _main_frame_id(self) -> str:
        return self.tab.main_frame.id

    def _settled(self) -> None:
        """The navigation asked for committed (or stopped without a document)."""
        if self._navigating is not None:
            self._navigating.set()
            self._navigating = None

    def _on_load(self, params: dict[str, Any]) -> None:
        # A load an action of ego's made is that action's step (its screenshot shows it).
        unasked, self._unasked = self._unasked, False
        if not self.options.page_events or self._stopped or not unasked:
            return
        begun = self._begun()
        task = asyncio.get_running_loop().create_task(self._page_step(begun))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        # A task cancelled before it ran never reached its own finally.
        task.add_done_callback(lambda _: begun[1].set())

    def _begun(self) -> _Begun:
        """For a page step: what is running now (its step is written after theirs), and the
        page step's own future, running from now on."""
        before = list(self._running.values())
        own = asyncio.Event()
        self._running[id(own)] = own
        return before, own

    async def _page_step(self, begun: _Begun) -> None:
        """A page loaded in the tab that no action of ego's loaded: a step of its own,
        written after the steps that were running when it loaded (``begun``)."""
        before, own = begun
        try:
            await self._write_page_step(before)
        finally:
            self._running.pop(id(own), None)
            own.set()

    async def _write_page_step(self, before: list[asyncio.Event]) -> None:
        step: dict[str, Any] = {
            "type": "step",
            "kind": "page",
            "verb": "load",
            "target": self.secrets.url(self.tab.url),
            "t": time.time(),
            "seconds": 0.0,
            "ok": True,
            "url": self.secrets.url(self.tab.url),
        }
        await self._capture(step, self.tab, None)
        if before:
            # Bounded: each is an action's step or a page step, and every capture is.
            await asyncio.gather(*(running.wait() for running in before))
        await self._step(step, failed=False)

    def _on_closed(self) -> None:
        if not self._stopped:
            self._record({"type": "tab", "event": "closed"})


#: A page step begun: the steps running when its page loaded, and its own.
_Begun = tuple[list[asyncio.Event], asyncio.Event]
