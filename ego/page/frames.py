"""A tab's frames, kept current from Chrome's events.

Same-process iframes live in the tab's own session: ``Page.frameAttached``,
``Page.frameNavigated`` and ``Page.frameDetached`` tell their life, and
``Runtime.executionContextCreated`` gives each its default execution context. A cross-site
iframe runs in a process of its own and is a target of its own: ``Target.setAutoAttach``
(``flatten``, ``waitForDebuggerOnStart``, iframes only) sent on the tab's session makes Chrome
attach each one as a child session on the same connection, paused until ego has enabled what
it needs there and resumed it with ``Runtime.runIfWaitingForDebugger``; the child session
reports its own frames and contexts the same way, and attaches its own cross-site children.
A frame keeps its :class:`~ego.page.frame.Frame` object while it navigates or moves between
processes (Chrome reports a ``swap``); only a ``remove`` ends it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final

from .attach import IFRAMES, prepare_paused
from .frame import Frame, FrameHost

if TYPE_CHECKING:
    from ..protocol.transport import Connection, Subscription

__all__ = ["FrameTree"]

logger = logging.getLogger("ego.page.frames")

_EVENTS: Final = (
    "Page.frameAttached",
    "Page.frameNavigated",
    "Page.navigatedWithinDocument",
    "Page.frameDetached",
    "Runtime.executionContextCreated",
    "Runtime.executionContextDestroyed",
    "Runtime.executionContextsCleared",
    "Target.attachedToTarget",
    "Target.detachedFromTarget",
)

#: Commands a child session gets before it is resumed, besides the frame tree's own; the
#: browser may add some (an origin policy's request interception).
SessionSetup = Callable[[str], Awaitable[None]]


class FrameTree:
    """Every frame of one tab, by id, with the session and execution context of each.

    Args:
        host: the tab.
        connection: the browser's connection.
    """

    def __init__(self, host: FrameHost, connection: Connection) -> None:
        self._host = host
        self._connection = connection
        self._frames: dict[str, Frame] = {}
        self._subscriptions: dict[str, Subscription] = {}
        self._setups: set[asyncio.Task[None]] = set()
        self._change: asyncio.Future[None] | None = None
        self.session_setup: list[SessionSetup] = []

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

    def session_of(self, frame_id: str) -> str | None:
        """The session the frame lives in (the tab's, or its out-of-process one), if known."""
        frame = self._frames.get(frame_id)
        return frame._session_id if frame is not None else None

    def get(self, frame_id: str) -> Frame | None:
        """The frame with this id, if the tab has it."""
        return self._frames.get(frame_id)

    @property
    def main(self) -> Frame:
        """The main frame (known from the tab's target id even before Chrome reports it)."""
        return self._frame(self._host.target_id, None)

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

    def attach(self, session_id: str) -> None:
        """Listen to the tab's session (before Page and Runtime are enabled on it, so that no
        frame or context slips by)."""
        self._listen(session_id)

    async def start(self, session_id: str) -> None:
        """What the tab's session needs beyond its listeners: the frames that exist already,
        and the auto-attach of cross-site iframes."""
        await asyncio.gather(
            self._connection.send("Target.setAutoAttach", IFRAMES, session_id=session_id),
            self._seed(session_id),
        )

    def close(self) -> None:
        """Stop listening; every frame counts as removed."""
        for subscription in self._subscriptions.values():
            subscription.close()
        self._subscriptions.clear()
        for task in self._setups:
            task.cancel()
        for frame in self._frames.values():
            frame._detached = True
        self._frames.clear()
        self._touch()

    # -- events --------------------------------------------------------------------------

    def _listen(self, session_id: str) -> None:
        async def handle(method: str, params: dict[str, Any]) -> None:
            self._on_event(session_id, method, params)

        self._subscriptions[session_id] = self._connection.subscribe_all(
            _EVENTS, handle, session_id=session_id
        )

    def _frame(self, frame_id: str, parent_id: str | None) -> Frame:
        frame = self._frames.get(frame_id)
        parent = self._frames.get(parent_id) if parent_id else None
        if parent_id and parent is None:
            parent = self._frame(parent_id, None)
        if frame is None:
            frame = Frame(self._host, frame_id, parent)
            self._frames[frame_id] = frame
        elif parent is not None:
            frame.parent = parent
        return frame

    def _on_event(self, session_id: str, method: str, params: dict[str, Any]) -> None:
        if method == "Runtime.executionContextCreated":
            context = params.get("context", {})
            aux = context.get("auxData") or {}
            frame_id = aux.get("frameId")
            if aux.get("isDefault") and frame_id:
                frame = self._frame(str(frame_id), None)
                frame._session_id = session_id
                frame._context = (int(context["id"]), str(context.get("uniqueId", "")))
        elif method == "Runtime.executionContextDestroyed":
            gone = params.get("executionContextId")
            for frame in self._frames.values():
                if frame._session_id == session_id and frame._context and frame._context[0] == gone:
                    frame._context = None
        elif method == "Runtime.executionContextsCleared":
            for frame in self._frames.values():
                if frame._session_id == session_id:
                    frame._context = None
        elif method == "Page.frameAttached":
            frame = self._frame(str(params["frameId"]), params.get("parentFrameId"))
            frame._session_id = frame._session_id or session_id
        elif method == "Page.frameNavigated":
            info = params.get("frame", {})
            frame = self._frame(str(info["id"]), info.get("parentId"))
            # A new document: the frames of the old one went with it (Chrome reports no
            # detach for them); the new document's frames attach after this.
            for old in [other for other in self._frames.values() if other.parent is frame]:
                self._remove(old)
            frame._session_id = session_id
            frame.name = str(info.get("name") or "")
            frame._url = str(info.get("url", "")) + str(info.get("urlFragment", ""))
            frame.documents += 1
        elif method == "Page.navigatedWithinDocument":
            moved = self._frames.get(str(params.get("frameId")))
            if moved is not None:
                moved._url = str(params.get("url", moved._url))
        elif method == "Page.frameDetached":
            gone = self._frames.get(str(params.get("frameId")))
            if gone is not None and params.get("reason") != "swap":
                self._remove(gone)
            elif gone is not None and gone._session_id == session_id:
                # Moving to another process: its own session attaches (Chrome may report
                # that attach before this).
                gone._session_id = None
                gone._context = None
        elif method == "Target.attachedToTarget":
            self._on_child(params)
        elif method == "Target.detachedFromTarget":
            ended = str(params.get("sessionId", ""))
            subscription = self._subscriptions.pop(ended, None)
            if subscription is not None:
                subscription.close()
            for frame in self._frames.values():
                if frame._session_id == ended:
                    frame._session_id = None
                    frame._context = None
        self._touch()

    def _remove(self, frame: Frame) -> None:
        for other in list(self._frames.values()):
            ancestor: Frame | None = other
            while ancestor is not None and ancestor is not frame:
                ancestor = ancestor.parent
            if ancestor is frame:
                other._detached = True
                other._context = None
                self._frames.pop(other.id, None)

    def _on_child(self, params: dict[str, Any]) -> None:
        info = params.get("targetInfo", {})
        child = str(params.get("sessionId", ""))
        if info.get("type") != "iframe" or not child:
            return
        frame = self._frame(str(info["targetId"]), info.get("parentFrameId"))
        frame._session_id = child
        frame._context = None
        self._listen(child)
        task = asyncio.ensure_future(self._prepare(child))
        self._setups.add(task)
        task.add_done_callback(self._setups.discard)

    async def _prepare(self, session_id: str) -> None:
        """Enable what a child session needs, then let its frame run."""
        send = self._connection.send

        async def setup() -> None:
            await asyncio.gather(
                send("Page.enable", session_id=session_id),
                send("Runtime.enable", session_id=session_id),
                send("Target.setAutoAttach", IFRAMES, session_id=session_id),
                *(extra(session_id) for extra in self.session_setup),
            )
            await self._seed(session_id)

        await prepare_paused(self._connection, session_id, setup())

    async def _seed(self, session_id: str) -> None:
        """Record the frames a session holds already (a tab attached after it loaded)."""
        tree = await self._connection.send("Page.getFrameTree", session_id=session_id)
        stack = [tree.get("frameTree", {})]
        while stack:
            node = stack.pop()
            info = node.get("frame") or {}
            if "id" in info:
                frame = self._frame(str(info["id"]), info.get("parentId"))
                frame._session_id = frame._session_id or session_id
                if not frame._url:
                    frame._url = str(info.get("url", ""))
                    frame.name = str(info.get("name") or "")
            stack.extend(node.get("childFrames", []))
        self._touch()
