"""One frame of a tab: the main frame, a same-process iframe, or an out-of-process one."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import (
    CommandTimeoutError,
    ContextDestroyedError,
    FrameDetachedError,
    ProtocolError,
    TabClosedError,
)
from .evaluation import evaluate
from .verbs import PageVerbs

if TYPE_CHECKING:
    from ..protocol.session import Session
    from ..protocol.transport import Connection
    from .hands import InputState
    from .network import NetworkLog
    from .refs import RefRegistry


__all__ = ["Frame", "FrameHost"]


class FrameHost(Protocol):
    """What a frame needs of the tab that holds it (:class:`ego.Tab` is one)."""

    default_timeout: float
    target_id: str

    @property
    def url(self) -> str: ...

    @property
    def connection(self) -> Connection: ...

    async def session(self) -> str: ...

    async def send(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout: float | object | None = ...,
    ) -> dict[str, Any]: ...

    async def frame(
        self,
        *,
        name: str | None = None,
        url: str | None = None,
        frame_id: str | None = None,
        timeout: float | None = None,
    ) -> Frame: ...

    async def changed(self, timeout: float) -> bool: ...

    async def frames(self) -> list[Frame]: ...

    @property
    def network_log(self) -> NetworkLog: ...

    @property
    def refs(self) -> RefRegistry: ...

    @property
    def input_state(self) -> InputState: ...

    def known_frame(self, frame_id: str) -> Frame | None: ...


class Frame(PageVerbs):
    """A frame of a tab: ``tab.frames()`` lists them, ``tab.frame(name=..., url=...)`` finds one.

    A frame offers the page verbs (``evaluate``, ``click``, ``type``, ``press``, ``hover``,
    ``select``, ``upload``, ``wait_for``, ``snapshot``, ``screenshot(selector=)``), run in its
    own document: a same-process iframe through its execution context on the tab's session, a
    cross-site (out-of-process) iframe through the session Chrome attached for it on the tab's
    connection. The object stays the same while the frame navigates, moves to another process
    or back; its attributes follow. Once the frame is removed from the page, every pending and
    later call raises :class:`~ego.errors.FrameDetachedError`.

    Attributes:
        id: Chrome's frame id (for the main frame, the tab's target id).
        name: the frame's ``name`` attribute (``""`` when it has none).
        url: the URL of the frame's document.
        documents: how many documents the frame has shown since ego saw it (it changes on
            every navigation; the cache layer keys its page-side memo on it).
    """

    _outline_kind = "frame"

    def __init__(self, host: FrameHost, frame_id: str, parent: Frame | None) -> None:
        self._host = host
        self.id = frame_id
        self.parent = parent
        self.name = ""
        self._url = ""
        self.documents = 0
        self._loader = ""
        self._session: Session | None = None
        self._context: tuple[int, str] | None = None
        self._detached = False

    def __repr__(self) -> str:
        state = " detached" if self._detached else ""
        name = f" {self.name!r}" if self.name else ""
        return f"<Frame {self.id[:8]}{name} {self._url!r}{state}>"

    # -- what the frame tree tells the frame (Chrome's events) ----------------------------
    # Each change of a frame's state is one of these, called by the tab's FrameTree (and the
    # tab itself, for what its own commands and the browser's target list say of its main
    # frame); nothing else writes the frame's fields.

    def _lives_in(self, session: Session) -> None:
        """The frame's document is reached through ``session`` (it attached, or moved there)."""
        if self._session is not session:
            self._session = session
            self._context = None

    def _settles(self, session: Session) -> None:
        """Like :meth:`_lives_in`, but only when the frame has no session yet (what Chrome
        lists of a frame tree may be older than what the frame already knows)."""
        if self._session is None:
            self._lives_in(session)

    def _context_created(self, session: Session, context_id: int, unique_id: str) -> None:
        """Its document's default execution context was created in ``session``."""
        self._session = session
        self._context = (context_id, unique_id)

    def _context_destroyed(self, session: Session, context_id: int | None) -> None:
        """A context of ``session`` was destroyed (``None``: all of them, cleared)."""
        context = self._context
        if self._session is session and context is not None and context_id in (None, context[0]):
            self._context = None

    def _left_process(self, session: Session | None = None) -> None:
        """The frame's document left ``session`` (any, when None): it is moving between
        processes, or its out-of-process session ended; a new one is on its way."""
        if session is None or self._session is session:
            self._session = None
            self._context = None

    def _navigated(self, url: str, name: str | None = None, loader: str = "") -> None:
        """A new document committed (counted once per ``loader``: the navigation that made it
        and Chrome's event may both tell)."""
        self._url = url
        if name is not None:
            self.name = name
        if not loader or loader != self._loader:
            self._loader = loader
            self.documents += 1

    def _committed(self, url: str, loader: str) -> None:
        """A navigation's answer says document ``loader`` committed at ``url``: news only when
        Chrome's event for it has not come yet (it then tells the URL after redirects)."""
        if loader != self._loader:
            self._navigated(url, None, loader)

    def _moved_within(self, url: str) -> None:
        """The document's URL changed without a new document (``#fragment``, ``pushState``)."""
        self._url = url

    def _seen(self, url: str, name: str | None = None) -> None:
        """What a listing says of the frame (a frame tree, the browser's targets)."""
        if url:
            self._url = url
        if name is not None and not self.name:
            self.name = name

    def _moved_under(self, parent: Frame) -> None:
        self.parent = parent

    def _remove(self) -> None:
        """The frame was removed from its page: every pending and later call fails."""
        self._detached = True
        self._context = None

    @property
    def url(self) -> str:
        """The URL of the frame's document."""
        return self._url

    @property
    def tab(self) -> FrameHost:
        """The tab that holds this frame."""
        return self._host

    @property
    def detached(self) -> bool:
        """True once the frame was removed from its page."""
        return self._detached

    @property
    def is_main(self) -> bool:
        """True for the tab's main frame."""
        return self.parent is None

    @property
    def default_timeout(self) -> float:
        """The tab's default timeout."""
        return self._host.default_timeout

    @property
    def connection(self) -> Connection:
        """The browser's CDP connection."""
        return self._host.connection

    @property
    def network_log(self) -> NetworkLog:
        """The tab's network log (a same-process frame's requests are in it)."""
        return self._host.network_log

    @property
    def refs(self) -> RefRegistry:
        """The refs the tab's snapshots gave out."""
        return self._host.refs

    def known_frame(self, frame_id: str) -> Frame | None:
        """The tab's frame with this id, if the tab has it now (no waiting)."""
        return self._host.known_frame(frame_id)

    @property
    def input_state(self) -> InputState:
        """The tab's mouse and keyboard state: a frame's input is the tab's."""
        return self._host.input_state

    @property
    def session_id(self) -> str | None:
        """The CDP session the frame's document is reached through, when known."""
        return self._session.id if self._session is not None else None

    @property
    def session(self) -> Session | None:
        """The :class:`~ego.protocol.session.Session` of the frame's document, when known."""
        return self._session

    def _gone(self) -> FrameDetachedError:
        return FrameDetachedError(
            f"the frame {self.name or self._url or self.id[:8]} was removed from its page: "
            "find it again with tab.frame() or tab.frames()"
        )

    async def _where(self, timeout: float | None = None) -> tuple[str, int, str]:
        """The session, execution context id and unique context id of the frame's document,
        waiting (at most ``timeout``) while the frame is between documents or processes.

        Raises:
            FrameDetachedError: the frame was removed.
            CommandTimeoutError: no document came within ``timeout``.
        """
        await self._host.session()
        seconds = self._host.default_timeout if timeout is None else timeout
        deadline = time.monotonic() + seconds
        while True:
            if self._detached:
                raise self._gone()
            session = self._session
            if session is not None and self._context is not None and not session.detached:
                return session.id or "", self._context[0], self._context[1]
            left = deadline - time.monotonic()
            if left <= 0 or not await self._host.changed(left):
                raise CommandTimeoutError(
                    f"the frame {self.name or self._url or self.id[:8]} had no document to run "
                    f"in within {seconds:g} s (it is loading or stuck); pass a larger timeout"
                )

    async def _target(self) -> tuple[str, int | None]:
        session_id, context_id, _ = await self._where()
        return session_id, context_id

    async def send(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Send a raw CDP command on the session that holds this frame's document.

        Raises:
            FrameDetachedError: the frame was removed.
            ProtocolError, CommandTimeoutError, BrowserClosedError: as
                :meth:`ego.protocol.transport.Connection.send`.
        """
        session_id, _, _ = await self._where()
        try:
            return await self._host.connection.send(
                method, params, session_id=session_id, timeout=self._host.default_timeout
            )
        except TabClosedError:
            raise (
                self._gone()
                if self._detached
                else ContextDestroyedError(
                    f"the frame {self.name or self._url} moved to another process mid-call; "
                    "call again"
                )
            ) from None

    async def evaluate(
        self,
        expression: str,
        *,
        await_promise: bool = True,
        timeout: float | None = None,
        user_gesture: bool = False,
        describe: bool = True,
    ) -> Any:
        """Evaluate a JavaScript expression in the frame's document; as :meth:`ego.Tab.evaluate`.

        Raises:
            FrameDetachedError: the frame was removed (before or during the call).
            ContextDestroyedError: the frame navigated before the result.
            JavaScriptError, CommandTimeoutError, TabClosedError, BrowserClosedError: as
                :meth:`ego.Tab.evaluate`.
        """
        seconds = self._host.default_timeout if timeout is None else timeout
        started = time.monotonic()
        session_id, _, unique = await self._where(seconds)
        try:
            return await evaluate(
                self._host.connection,
                session_id,
                expression,
                await_promise=await_promise,
                timeout=max(0.001, seconds - (time.monotonic() - started)),
                user_gesture=user_gesture,
                describe=describe,
                tab=self._host.target_id,
                context=unique,
                where=f"the frame {self.name or self._url}",
            )
        except (ContextDestroyedError, TabClosedError):
            # A removed frame takes its context (or its whole session) with it; Chrome may
            # tell the removal just after the failed answer, so the frame's state decides
            # once it settles (removed, or in a document again), never the loop's timing.
            if await self._settle(seconds - (time.monotonic() - started)):
                raise self._gone() from None
            raise

    async def _settle(self, timeout: float) -> bool:
        """After a call lost its document: wait (bounded) until the frame is removed or has a
        document to run in again; True when it was removed."""
        deadline = time.monotonic() + max(0.0, timeout)
        while not self._detached:
            session = self._session
            if session is not None and not session.detached and self._context is not None:
                return False
            left = deadline - time.monotonic()
            if left <= 0 or not await self._host.changed(left):
                return self._detached
        return True

    async def viewport_offset(self) -> tuple[float, float]:
        """Where this frame's viewport sits in the tab's, in CSS pixels: the sum of each
        iframe element's content box in its parent's viewport.

        Raises:
            FrameDetachedError: the frame (or an ancestor) was removed.
        """
        x = y = 0.0
        frame: Frame | None = self
        while frame is not None and frame.parent is not None:
            parent = frame.parent
            try:
                owner = await parent.send("DOM.getFrameOwner", {"frameId": frame.id})
                box = await parent.send(
                    "DOM.getBoxModel", {"backendNodeId": owner["backendNodeId"]}
                )
            except ProtocolError:
                if frame._detached:
                    raise frame._gone() from None
                raise
            content = box["model"]["content"]
            x += float(content[0])
            y += float(content[1])
            frame = parent
        return x, y

    async def top_send(
        self, method: str, params: Mapping[str, Any] | None = None, *, timeout: float | None = None
    ) -> dict[str, Any]:
        """Send a raw CDP command on the tab's own session (input, screenshots)."""
        if timeout is None:
            return await self._host.send(method, params)
        return await self._host.send(method, params, timeout=timeout)

    @property
    def _frame_id(self) -> str:
        return self.id

    async def child_frame(self, frame_id: str, timeout: float) -> Frame:
        """The frame with ``frame_id`` (an iframe of this frame's document)."""
        return await self._host.frame(frame_id=frame_id, timeout=timeout)

    async def child_frames(self) -> list[Frame]:
        """The frames whose parent is this one, in :meth:`ego.Tab.frames` order."""
        return [frame for frame in await self._host.frames() if frame.parent is self]
