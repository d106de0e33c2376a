"""A tab's frames, kept current from Chrome's events.

Same-process iframes live in the tab's own session: ``Page.frameAttached``,
``Page.frameNavigated`` and ``Page.frameDetached`` tell their life, and
``Runtime.executionContextCreated`` gives each its default execution context. A cross-site
iframe runs in a process of its own and is a target of its own: ``Target.setAutoAttach``
(``flatten``, ``waitForDebuggerOnStart``, iframes and workers: :data:`~ego.page.attach.CHILDREN`)
sent on the tab's session makes Chrome attach each one as a child session on the same
connection, paused until ego has enabled what it needs there and resumed it with
``Runtime.runIfWaitingForDebugger``; the child session reports its own frames and contexts the
same way, and attaches its own cross-site children. The workers those sessions attach are the
watchers' (:attr:`FrameTree.watchers`: the tab's workers), which the tree tells of each session.
A frame keeps its :class:`~ego.page.frame.Frame` object while it navigates or moves between
processes (Chrome reports a ``swap``); only a ``remove`` ends it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final

from ..errors import FrameNotFoundError
from .attach import CHILDREN, prepare_paused
from .frame import Frame, FrameHost
from .waits import url_matcher

if TYPE_CHECKING:
    from ..protocol.session import Listener, Session
    from ..protocol.transport import Connection

__all__ = ["FrameTree"]

logger = logging.getLogger("ego.page.frames")

#: Commands a child session gets before it is resumed, besides the frame tree's own; the
#: browser may add some (an origin policy's request interception).
SessionSetup = Callable[["Session"], Awaitable[None]]


class FrameTree:
    """Every frame of one tab, by id, with the session and execution context of each.

    The tree is the one writer of its frames' state: Chrome's events reach it inline (a
    :class:`~ego.protocol.session.Listener` on the tab's session and on each out-of-process
    frame's), so the frames are current when any answer that arrived after those events is
    seen, and it tells each frame what changed through the frame's own methods.

    Args:
        host: the tab.
        connection: the browser's connection.
    """

    def __init__(self, host: FrameHost, connection: Connection) -> None:
        self._host = host
        self._connection = connection
        #: The tab's main frame: it bears the tab's target id, and lives as long as the tab.
        self.main = Frame(host, host.target_id, None, main=True)
        self._frames: dict[str, Frame] = {self.main.id: self.main}
        self._listeners: dict[Session, Listener] = {}
        self._setups: set[asyncio.Task[None]] = set()
        self._change: asyncio.Future[None] | None = None
        self._closed = False
        self.session_setup: list[SessionSetup] = []
        #: Told of each session the tree listens to (the tab's, each cross-site frame's),
        #: before any auto-attach is asked on it: the other targets it attaches are theirs.
        self.watchers: list[Callable[[Session], None]] = []

    def frames(self) -> list[Frame]:
        """The frames in tree order: the main frame first, each frame before its children."""
        ordered: list[Frame] = []
        children: dict[str | None, list[Frame]] = {}
        for frame in self._frames.values():
            children.setdefault(frame.parent.id if frame.parent else None, []).append(frame)
        stack = list(reversed(children.get(None, [])))
        while stack:
            frame = stack.pop()
            ordered.append(frame)
            stack.extend(reversed(children.get(frame.id, [])))
        return ordered

    def session_of(self, frame_id: str) -> Session | None:
        """The session the frame lives in (the tab's, or its out-of-process one), if known."""
        frame = self._frames.get(frame_id)
        return frame.session if frame is not None else None

    def get(self, frame_id: str) -> Frame | None:
        """The frame with this id, if the tab has it."""
        return self._frames.get(frame_id)

    async def find(
        self,
        *,
        name: str | None,
        url: str | None,
        frame_id: str | None,
        timeout: float,
        tab: str,
    ) -> Frame:
        """The first frame (in :meth:`frames` order) with this ``name``, whose URL contains
        ``url`` (or matches it as a glob with ``*``) and with this ``frame_id``, waiting up
        to ``timeout`` seconds for one to appear (see :meth:`ego.Tab.frame`).

        Raises:
            ValueError: none of ``name``, ``url``, ``frame_id`` given.
            FrameNotFoundError: no such frame in time (the message lists the frames there are).
        """
        if name is None and url is None and frame_id is None:
            raise ValueError("tab.frame() needs name=, url=, frame_id= or selector=")
        matches = url_matcher(url) if url is not None else None
        deadline = time.monotonic() + timeout
        while True:
            for frame in self.frames():
                if (
                    (frame_id is None or frame.id == frame_id)
                    and (name is None or frame.name == name)
                    and (matches is None or matches(frame.url))
                ):
                    return frame
            left = deadline - time.monotonic()
            if left <= 0 or not await self.changed(left):
                break
        wanted = ", ".join(
            f"{key}={value!r}"
            for key, value in (("name", name), ("url", url), ("frame_id", frame_id))
            if value is not None
        )
        listed = "; ".join(f"{frame.name or '(no name)'} {frame.url}" for frame in self.frames())
        raise FrameNotFoundError(
            f"no frame with {wanted} in tab {tab[:8]} within {timeout:g} s; its "
            f"frames: {listed or 'none'}"
        )

    async def changed(self, timeout: float) -> bool:
        """Wait until any frame changes (attaches, navigates, gets a context, detaches);
        False when ``timeout`` passed first."""
        if self._change is None or self._change.done():
            self._change = asyncio.get_running_loop().create_future()
        try:
            await asyncio.wait_for(asyncio.shield(self._change), timeout)
        except TimeoutError:
            return False
        return True

    def _touch(self) -> None:
        change, self._change = self._change, None
        if change is not None and not change.done():
            change.set_result(None)

    def attach(self, session: Session) -> None:
        """Listen to the tab's session (before Page and Runtime are enabled on it, so that no
        frame or context slips by)."""
        self._listen(session)
        self.main._lives_in(session)

    async def start(self, session: Session) -> None:
        """What the tab's session needs beyond its listeners: the frames that exist already,
        and the auto-attach of cross-site iframes."""
        await asyncio.gather(
            session.send("Target.setAutoAttach", CHILDREN),
            self._seed(session),
        )

    def close(self) -> None:
        """Stop listening; every frame counts as removed (the tab closed)."""
        self._closed = True
        for listener in self._listeners.values():
            listener.close()
        self._listeners.clear()
        for task in self._setups:
            task.cancel()
        for frame in self._frames.values():
            frame._remove()
        self._frames.clear()
        self._touch()

    def close_session(self, session: Session) -> None:
        """Stop listening to ``session`` (its setup failed: the tab attaches afresh later)."""
        listener = self._listeners.pop(session, None)
        if listener is not None:
            listener.close()
        for frame in self._frames.values():
            frame._left_process(session)

    # -- events --------------------------------------------------------------------------

    def _listen(self, session: Session) -> None:
        def on_event(method: str, params: dict[str, Any]) -> None:
            _HANDLERS[method](self, session, params)
            self._touch()

        self._listeners[session] = session.listen(_HANDLERS, on_event)
        for watch in self.watchers:
            watch(session)

        def gone() -> None:
            # The session ended (its frame went away, or moved back into its parent's
            # process): its frames have no document to run in until another session has them.
            self._listeners.pop(session, None)
            for frame in self._frames.values():
                frame._left_process(session)
            self._touch()

        session.on_detach(gone)

    def _frame(self, frame_id: str, parent_id: str | None) -> Frame:
        """The frame ``frame_id``, made when new. A parent Chrome has not reported yet is made
        too, with no parent of its own until it is reported: a frame is never taken for the
        main frame for want of a parent."""
        frame = self._frames.get(frame_id)
        parent = self._frames.get(parent_id) if parent_id else None
        if parent_id and parent is None:
            parent = self._frame(parent_id, None)
        if frame is None:
            frame = Frame(self._host, frame_id, parent)
            self._frames[frame_id] = frame
        elif parent is not None:
            frame._moved_under(parent)
        return frame

    def _on_context_created(self, session: Session, params: dict[str, Any]) -> None:
        context = params.get("context", {})
        aux = context.get("auxData") or {}
        frame_id = aux.get("frameId")
        if aux.get("isDefault") and frame_id:
            frame = self._frame(str(frame_id), None)
            frame._context_created(session, int(context["id"]), str(context.get("uniqueId", "")))

    def _on_context_destroyed(self, session: Session, params: dict[str, Any]) -> None:
        gone = params.get("executionContextId")
        for frame in self._frames.values():
            frame._context_destroyed(session, int(gone) if gone is not None else None)

    def _on_contexts_cleared(self, session: Session, params: dict[str, Any]) -> None:
        for frame in self._frames.values():
            frame._context_destroyed(session, None)

    def _on_frame_attached(self, session: Session, params: dict[str, Any]) -> None:
        frame = self._frame(str(params["frameId"]), params.get("parentFrameId"))
        frame._settles(session)

    def _on_frame_navigated(self, session: Session, params: dict[str, Any]) -> None:
        info = params.get("frame", {})
        frame = self._frame(str(info["id"]), info.get("parentId"))
        # A new document: the frames of the old one went with it (Chrome reports no detach
        # for them); the new document's frames attach after this.
        for old in [other for other in self._frames.values() if other.parent is frame]:
            self._remove(old)
        frame._lives_in(session)
        frame._navigated(
            str(info.get("url", "")) + str(info.get("urlFragment", "")),
            str(info.get("name") or ""),
            str(info.get("loaderId", "")),
        )

    def _on_navigated_within(self, session: Session, params: dict[str, Any]) -> None:
        moved = self._frames.get(str(params.get("frameId")))
        if moved is not None:
            moved._moved_within(str(params.get("url", moved.url)))

    def _on_frame_detached(self, session: Session, params: dict[str, Any]) -> None:
        gone = self._frames.get(str(params.get("frameId")))
        if gone is None:
            return
        if params.get("reason") != "swap":
            self._remove(gone)
        else:
            # Moving to another process: its own session attaches (Chrome may report that
            # attach before this).
            gone._left_process(session)

    def _on_target_attached(self, session: Session, params: dict[str, Any]) -> None:
        info = params.get("targetInfo", {})
        child_id = str(params.get("sessionId", ""))
        if info.get("type") != "iframe" or not child_id or self._closed:
            return
        child = self._connection.session(child_id)
        frame = self._frame(str(info["targetId"]), info.get("parentFrameId"))
        frame._lives_in(child)
        self._listen(child)
        task = asyncio.ensure_future(self._prepare(child))
        self._setups.add(task)
        task.add_done_callback(self._setups.discard)

    def _remove(self, frame: Frame) -> None:
        for other in list(self._frames.values()):
            ancestor: Frame | None = other
            while ancestor is not None and ancestor is not frame:
                ancestor = ancestor.parent
            if ancestor is frame and other is not self.main:
                other._remove()
                self._frames.pop(other.id, None)

    async def _prepare(self, session: Session) -> None:
        """Enable what a child session needs, then let its frame run."""

        async def setup() -> None:
            await asyncio.gather(
                session.enable("Page", "Runtime"),
                session.send("Target.setAutoAttach", CHILDREN),
                *(extra(session) for extra in self.session_setup),
            )
            await self._seed(session)

        await prepare_paused(session, setup())

    async def _seed(self, session: Session) -> None:
        """Record the frames a session holds already (a tab attached after it loaded)."""
        tree = await session.send("Page.getFrameTree")
        stack = [tree.get("frameTree", {})]
        while stack:
            node = stack.pop()
            info = node.get("frame") or {}
            if "id" in info:
                frame = self._frame(str(info["id"]), info.get("parentId"))
                frame._settles(session)
                if not frame.url:
                    frame._seen(str(info.get("url", "")), str(info.get("name") or ""))
            stack.extend(node.get("childFrames", []))
        self._touch()


_Handler = Callable[[FrameTree, "Session", dict[str, Any]], None]

#: What each event of a frame's session does to the tree.
_HANDLERS: Final[dict[str, _Handler]] = {
    "Page.frameAttached": FrameTree._on_frame_attached,
    "Page.frameNavigated": FrameTree._on_frame_navigated,
    "Page.navigatedWithinDocument": FrameTree._on_navigated_within,
    "Page.frameDetached": FrameTree._on_frame_detached,
    "Runtime.executionContextCreated": FrameTree._on_context_created,
    "Runtime.executionContextDestroyed": FrameTree._on_context_destroyed,
    "Runtime.executionContextsCleared": FrameTree._on_contexts_cleared,
    "Target.attachedToTarget": FrameTree._on_target_attached,
}
