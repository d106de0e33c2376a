"""A tab's workers: each a session ego keeps, listed by ``tab.workers()`` and evaluated in.

Dedicated workers (of the page, of its frames, and the workers those start) and the service
workers Chrome relates to the page come through the auto-attach of the tab's sessions
(:data:`~ego.page.attach.CHILDREN`), which must name them anyway: an auto-attach that waits
for the debugger holds every dedicated worker of its documents until it is resumed (see
:mod:`ego.page.attach`). Each is let run as soon as it is known (a dedicated worker after
asking the same for the workers it starts), and ends when Chrome detaches its session (the
worker terminated, or its document went).

Chrome relates no shared worker to a page (its target has no parent, and no page's
auto-attach brings one), so a tab's shared workers are those of an origin one of its frames
shows, in the tab's browser context: a document there reaches it by its URL. ego attaches to
them when asked and detaches when the tab closes or no longer shows their origin.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any, Final, Literal
from urllib.parse import urlsplit

from ..errors import (
    ContextDestroyedError,
    EgoError,
    ProtocolError,
    TabClosedError,
    TargetCrashedError,
    WorkerEndedError,
)
from .attach import NESTED_WORKERS, prepare_paused
from .evaluation import evaluate

if TYPE_CHECKING:
    from ..protocol.session import Session
    from ..protocol.transport import Connection

__all__ = ["WORKER_TYPES", "TabWorkers", "Worker", "WorkerType", "origin_of"]

logger = logging.getLogger("ego.page.workers")

WorkerType = Literal["worker", "shared_worker", "service_worker"]

#: Chrome's target types of the workers a tab lists.
WORKER_TYPES: Final = frozenset({"worker", "shared_worker", "service_worker"})


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of ``url`` (of the URL inside a ``blob:`` one); ``""`` for
    an opaque one."""
    if url.startswith("blob:"):
        url = url[len("blob:") :]
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.netloc else ""


class Worker:
    """One worker of a tab: a dedicated worker, a service worker or a shared worker.

    Attributes:
        url: the worker's script URL (a ``blob:`` URL for one made from a Blob).
        type: ``"worker"`` (dedicated), ``"shared_worker"`` or ``"service_worker"``.
        target_id: Chrome's target id of the worker.
        session: the :class:`~ego.protocol.session.Session` ego keeps with it; it ends when
            the worker does.
    """

    def __init__(
        self,
        session: Session,
        info: Mapping[str, Any],
        *,
        tab: str,
        default_timeout: Callable[[], float],
    ) -> None:
        self.session = session
        self.url = str(info.get("url", ""))
        self.type: WorkerType = info.get("type", "worker")
        self.target_id = str(info.get("targetId", ""))
        self._tab = tab
        self._default_timeout = default_timeout

    def __repr__(self) -> str:
        state = " ended" if self.ended else ""
        return f"<Worker {self.type} {self.url!r}{state}>"

    @property
    def ended(self) -> bool:
        """True once the worker is gone (terminated, closed, or gone with its page): its calls
        raise :class:`~ego.errors.WorkerEndedError`."""
        return self.session.detached or self.session.crashed

    async def evaluate(
        self,
        expression: str,
        *,
        await_promise: bool = True,
        timeout: float | None = None,
        describe: bool = True,
    ) -> Any:
        """Evaluate a JavaScript expression in the worker's global scope and return its value,
        by the rules of :meth:`ego.Tab.evaluate` (docs/architecture.md, "Values from
        evaluate"); a worker has no DOM, so no value is a node.

        Args:
            expression: JavaScript source; its completion value is the result.
            await_promise: if the value is a promise, wait for it and return what it resolves to.
            timeout: seconds to wait; the tab's default if omitted.
            describe: False takes the raw path (one round trip, JSON values only).

        Raises:
            JavaScriptError: the code threw or the promise rejected.
            WorkerEndedError: the worker ended before or during the call.
            CommandTimeoutError: no result within ``timeout`` (a script spinning in the
                worker was stopped, as in a tab).
            BrowserClosedError: the browser connection is closed.
        """
        if self.ended:
            raise self._ended(f"evaluate in {self.type} {self.url}")
        seconds = self._default_timeout() if timeout is None else timeout
        try:
            return await evaluate(
                self.session,
                expression,
                await_promise=await_promise,
                timeout=seconds,
                user_gesture=False,
                describe=describe,
                tab=self._tab,
                where=f"the {self.type} {self.url}",
                in_order=False,
            )
        except (TabClosedError, ContextDestroyedError, TargetCrashedError):
            raise self._ended(f"evaluate in {self.type} {self.url}") from None

    def _ended(self, what: str) -> WorkerEndedError:
        return WorkerEndedError(
            f"{what} failed: the worker ended (terminated, closed, or gone with its page); "
            "list the tab's workers again (tab.workers())"
        )


class TabWorkers:
    """The workers of one tab, kept current from Chrome's attach and detach events.

    Args:
        connection: the browser's connection.
        tab: the tab's target id.
        default_timeout: the tab's default timeout, read at each call.
    """

    def __init__(
        self, connection: Connection, tab: str, default_timeout: Callable[[], float]
    ) -> None:
        self._connection = connection
        self._tab = tab
        self._default_timeout = default_timeout
        self._attached: dict[Session, Worker] = {}
        self._shared: dict[str, Worker] = {}
        self._shared_lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False

    def watch(self, session: Session) -> None:
        """Hear the workers Chrome attaches under ``session`` (the tab's, a cross-site
        frame's, a dedicated worker's), before any auto-attach is asked on it."""

        def attached(method: str, params: dict[str, Any]) -> None:
            info = params.get("targetInfo") or {}
            child = params.get("sessionId")
            if child and info.get("type") in WORKER_TYPES:
                self._attach(self._connection.session(str(child)), info)

        session.listen(("Target.attachedToTarget",), attached)

    def _attach(self, session: Session, info: Mapping[str, Any]) -> None:
        # Let it run even for a tab that closed meanwhile: a worker held is a page that hangs.
        setup = None
        if info.get("type") == "worker":
            self.watch(session)
            setup = session.send("Target.setAutoAttach", NESTED_WORKERS)
        task = asyncio.ensure_future(prepare_paused(session, setup))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        if self._closed:
            return
        self._attached[session] = Worker(
            session, info, tab=self._tab, default_timeout=self._default_timeout
        )

        def ended() -> None:
            self._attached.pop(session, None)

        session.on_detach(ended)

    async def running(self, origins: Collection[str]) -> list[Worker]:
        """The workers running now: those Chrome attached, in the order it did, then the
        shared workers of ``origins`` (the origins the tab's frames show).

        Raises:
            BrowserClosedError: the connection is closed.
        """
        attached = [worker for worker in self._attached.values() if not worker.ended]
        return attached + await self._shared_workers(origins)

    async def _shared_workers(self, origins: Collection[str]) -> list[Worker]:
        async with self._shared_lock:
            # Ended ones first: Chrome keeps a shared worker's target while a session holds
            # it, so the list below shows only those that run.
            for target_id, worker in list(self._shared.items()):
                if worker.ended:
                    await self._detach(self._shared.pop(target_id))
            infos = (await self._connection.send("Target.getTargets"))["targetInfos"]
            context = next(
                (info.get("browserContextId") for info in infos if info["targetId"] == self._tab),
                None,
            )
            wanted = {
                str(info["targetId"]): info
                for info in infos
                if info.get("type") == "shared_worker"
                and info.get("browserContextId") == context
                and origin_of(str(info.get("url", ""))) in origins
                and origin_of(str(info.get("url", "")))  # an opaque origin relates nothing
            }
            for target_id in [known for known in self._shared if known not in wanted]:
                self._leave(self._shared.pop(target_id))
            for target_id, info in wanted.items():
                if target_id not in self._shared and not self._closed:
                    await self._attach_shared(target_id, info)
            return [worker for worker in self._shared.values() if not worker.ended]

    async def _attach_shared(self, target_id: str, info: Mapping[str, Any]) -> None:
        try:
            result = await self._connection.send(
                "Target.attachToTarget", {"targetId": target_id, "flatten": True}
            )
        except ProtocolError as exc:  # it ended since it was listed
            logger.debug("shared worker %s: %s", target_id, exc)
            return
        worker = Worker(
            # A worker that ended in the same read as this answer: its session is detached.
            self._connection.session(str(result["sessionId"])),
            info,
            tab=self._tab,
            default_timeout=self._default_timeout,
        )
        if self._closed:  # the tab closed during the attach
            self._leave(worker)
        else:
            self._shared[target_id] = worker

    async def _detach(self, worker: Worker) -> None:
        """Detach ego's session of a shared worker: Chrome keeps such a session across the
        worker's end (it reports a crash, never a detach), so only this ends it."""
        if worker.session.detached:
            return
        try:
            await self._connection.send("Target.detachFromTarget", {"sessionId": worker.session.id})
        except EgoError as exc:
            logger.debug("leaving shared worker %s: %s", worker.url, exc)

    def _leave(self, worker: Worker) -> None:
        """:meth:`_detach` in the background."""
        task = asyncio.ensure_future(self._detach(worker))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def close(self) -> None:
        """The tab closed: its workers count as ended, and ego leaves its shared workers."""
        self._closed = True
        self._attached.clear()
        for worker in self._shared.values():
            self._leave(worker)
        self._shared.clear()
