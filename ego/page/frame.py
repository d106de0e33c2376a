"""One frame of a tab: the main frame, a same-process iframe, or an out-of-process one."""

from __future__ import annotations

import time
from collections.abc import Coroutine, Mapping
from typing import TYPE_CHECKING, Any, Final, Protocol

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
    from .action_log import Observation
    from .hands import InputState
    from .network import NetworkLog
    from .refs import RefRegistry


__all__ = ["Frame", "FrameHost"]

_DEFAULT: Final = object()


class FrameHost(Protocol):
    """What a frame needs of the tab that holds it (:class:`ego.Tab` is one)."""

    default_timeout: float
    target_id: str
    _action_observers: list[Observation]

    @property
    def connection(self) -> Connection: ...

    @property
    def session(self) -> Session | None: ...

    async def attach(self) -> Session: ...

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
    """A frame of a tab: the main frame (``tab.main_frame``, whose document is the tab's), or
    an iframe; ``tab.frames()`` lists them, ``tab.frame(name=..., url=...)`` finds one.

    A frame is the one implementation of the page verbs (``evaluate``, ``click``, ``type``,
    ``press``, ``hover``, ``select``, ``upload``, ``wait_for``, ``snapshot``,
    ``screenshot``, ...): the tab hands its own to its main frame. They run in the frame's own
    document: the main frame's in the tab's session (whatever its current document), a
    same-process iframe's through its execution context on the tab's session, a cross-site
    (out-of-process) iframe's through the session Chrome attached for it on the tab's
    connection. The object stays the same while the frame navigates, moves to another process
    or back; its attributes follow. Once an iframe is removed from the page, every pending
    and later call raises :class:`~ego.errors.FrameDetachedError`; once the tab closes, the
    main frame's raise :class:`~ego.errors.TabClosedError`, as the tab's do.

    Attributes:
        id: Chrome's frame id (for the main frame, the tab's target id).
        name: the frame's ``name`` attribute (``""`` when it has none).
        parent: the frame whose document holds this one's iframe; None for the main frame,
            and for a frame whose parent Chrome has not reported yet.
        documents: how many documents the frame has shown since ego saw it (it changes on
            every navigation and reload, not on a ``#fragment`` or ``pushState``).
        document_memo: what layers above keep for the frame's current document (the cache
            layer notes that the document holds its loader); every new document starts with
            an empty one.
    """

    def __init__(
        self, host: FrameHost, frame_id: str, parent: Frame | None, *, main: bool = False
    ) -> None:
        self._host = host
        # The tab's observers of actions (ego.page.action_log): one list for the whole tab.
        self._action_observers = host._action_observers
        self.id = frame_id
        self.parent = parent
        self._main = main
        self._outline_kind = "page" if main else "frame"
        self.name = ""
        self._url = ""
        self.documents = 0
        self.document_memo: dict[str, Any] = {}
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
            self.document_memo = {}

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
        """The frame was removed from its page (or its tab closed): every pending and later
        call fails."""
        self._detached = True
        self._context = None

    # -- what it is -------------------------------------------------------------------------

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
        """True once the frame was removed from its page (for the main frame: once its tab
        closed)."""
        return self._detached

    @property
    def is_main(self) -> bool:
        """True for the tab's main frame only (never for a frame whose parent is not known
        yet)."""
        return self._main

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
    def session(self) -> Session | None:
        """The :class:`~ego.protocol.session.Session` of the frame's document, when known (the
        main frame's: the tab's)."""
        return self._host.session if self._main else self._session

    @property
    def _frame_id(self) -> str:
        return self.id

    def _gone(self) -> Exception:
        if self._main:
            return TabClosedError(f"tab {self._host.target_id} is closed: open a new tab")
        return FrameDetachedError(
            f"the frame {self.name or self._url or self.id[:8]} was removed from its page: "
            "find it again with tab.frame() or tab.frames()"
        )

    # -- where its document is ------------------------------------------------------------

    async def _where(self, timeout: float | None = None) -> tuple[Session, int | None, str]:
        """The session, execution context id and unique context id of the frame's document,
        waiting (at most ``timeout``) while an iframe is between documents or processes. The
        main frame's document is the tab session's own: no context named (None, ``""``), so a
        call reaches whatever document the tab shows now.

        Raises:
            TabClosedError: the tab is closed.
            FrameDetachedError: the frame was removed.
            CommandTimeoutError: no document came within ``timeout``.
        """
        tab_session = self._host.session
        if tab_session is None or tab_session.detached:
            tab_session = await self._host.attach()
        if self._main:
            return tab_session, None, ""
        seconds = self._host.default_timeout if timeout is None else timeout
        deadline = time.monotonic() + seconds
        while True:
            if self._detached:
                raise self._gone()
            session = self._session
            if session is not None and self._context is not None and not session.detached:
                return session, self._context[0], self._context[1]
            left = deadline - time.monotonic()
            if left <= 0 or not await self._host.changed(left):
                raise CommandTimeoutError(
                    f"the frame {self.name or self._url or self.id[:8]} had no document to run "
                    f"in within {seconds:g} s (it is loading or stuck); pass a larger timeout"
                )

    async def _target(self) -> tuple[Session, int | None]:
        """The session of the frame's document and its execution context id (None: the
        session's own document, the main frame's)."""
        session, context_id, _ = await self._where()
        return session, context_id

    async def send(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout: float | object | None = _DEFAULT,
    ) -> dict[str, Any]:
        """Send a raw CDP command on the session that holds this frame's document and return
        its result.

        Args:
            method: the CDP method.
            params: its parameters.
            timeout: seconds; the tab's default if omitted (None: no bound).

        Raises:
            FrameDetachedError: the frame was removed.
            ContextDestroyedError: the frame moved to another process mid-call.
            ProtocolError, CommandTimeoutError, TabClosedError, TargetCrashedError,
            CommandTooLargeError, BrowserClosedError: as
                :meth:`ego.protocol.session.Session.send`.
        """
        session, _, _ = await self._where()
        seconds = self._host.default_timeout if timeout is _DEFAULT else timeout
        if self._main:
            return await session.send(method, params, timeout=seconds)
        try:
            return await session.send(method, params, timeout=seconds)
        except TabClosedError:
            raise (
                self._gone()
                if self._detached
                else ContextDestroyedError(
                    f"the frame {self.name or self._url} moved to another process mid-call; "
                    "call again"
                )
            ) from None

    async def top_send(
        self, method: str, params: Mapping[str, Any] | None = None, *, timeout: float | None = None
    ) -> dict[str, Any]:
        """Send a raw CDP command on the tab's own session (input, screenshots), within
        ``timeout`` seconds (the tab's default when None)."""
        session = self._host.session
        if session is None or session.detached:
            session = await self._host.attach()
        return await session.send(
            method, params, timeout=self._host.default_timeout if timeout is None else timeout
        )

    def evaluate(
        self,
        expression: str,
        *,
        await_promise: bool = True,
        timeout: float | None = None,
        user_gesture: bool = False,
        describe: bool = True,
    ) -> Coroutine[Any, Any, Any]:
        """Evaluate a JavaScript expression in the frame's document and return its value
        (await it).

        JSON values come back as Python ones: objects and arrays become dicts and lists,
        ``undefined`` becomes ``None``; NaN, ±Infinity and -0 become floats and a BigInt an
        int. What JSON cannot carry comes back described (``describe=True``, the default): a
        ``Date`` as its ISO string, a DOM node as ``{"tag", "id", "classes", "text",
        "selector"}``, a ``Map`` as a list of ``[key, value]`` pairs, a ``Set`` as a list, a
        cycle as ``"[Circular $.path]"``; docs/architecture.md ("Values from evaluate") has
        every rule. Top-level ``await`` works (``(await fetch(url)).status``).

        Args:
            expression: JavaScript source; its completion value is the result.
            await_promise: if the value is a promise, wait for it and return what it resolves to.
            timeout: seconds to wait; the tab's default if omitted.
            user_gesture: run as if the user had clicked (lets code open popups, play
                media). Off by default: it costs Chrome measurable work on every call.
            describe: False takes the raw path, one round trip that returns the value as JSON
                carries it (a Date becomes ``{}``, a cycle raises): what tool calls use. True
                costs one more round trip when the value is an object.

        Raises:
            JavaScriptError: the code threw or the promise rejected; carries the JS message,
                stack and line. With ``describe=False``, also a value (returned or thrown)
                that cannot come back by value: a Symbol, a BigInt inside an object, a cycle,
                nesting past ~300 levels.
            DialogOpenError: a page dialog blocks the tab (the ``"manual"`` dialog policy);
                answer it with ``tab.handle_dialog()``.
            ContextDestroyedError: the document navigated away or reloaded before the result.
            FrameDetachedError: an iframe was removed from its page (before or during the
                call).
            TabClosedError: the tab closed before the result.
            TargetCrashedError: the tab's renderer crashed (before or during the call);
                reload the tab or close it.
            CommandTimeoutError: no result within ``timeout``. When the page's thread was
                busy (a spinning script), the script was stopped and the message says so;
                otherwise a promise never settled and the page still answers.
            BrowserClosedError: the browser connection is closed.

        Cancelling the call abandons the result; a script still spinning in the page is then
        stopped in the background (``Runtime.terminateExecution``), as after a timeout.
        """
        seconds = self._host.default_timeout if timeout is None else timeout
        session = self._host.session
        if self._main and session is not None:
            # The tab's document, through the tab's session (a detached one refuses at once):
            # the hot path of every tool call, the evaluation's own coroutine.
            return evaluate(
                session,
                expression,
                await_promise=await_promise,
                timeout=seconds,
                user_gesture=user_gesture,
                describe=describe,
                tab=self._host.target_id,
            )
        return self._evaluate(expression, await_promise, seconds, user_gesture, describe)

    async def _evaluate(
        self,
        expression: str,
        await_promise: bool,
        seconds: float,
        user_gesture: bool,
        describe: bool,
    ) -> Any:
        """:meth:`evaluate` in a tab not attached yet, or in an iframe's document."""
        if self._main:
            await self._host.attach()  # then the tab's session is there
            return await self.evaluate(
                expression,
                await_promise=await_promise,
                timeout=seconds,
                user_gesture=user_gesture,
                describe=describe,
            )
        started = time.monotonic()
        session, _, unique = await self._where(seconds)
        try:
            return await evaluate(
                session,
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

    # -- where it sits --------------------------------------------------------------------

    async def viewport_offset(self) -> tuple[float, float]:
        """Where this frame's viewport sits in the tab's, in CSS pixels: the sum of each
        iframe element's content box in its parent's viewport ((0, 0) for the main frame).

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

    async def child_frame(self, frame_id: str, timeout: float) -> Frame:
        """The frame with ``frame_id`` (an iframe of this frame's document), waiting up to
        ``timeout`` for it to be known."""
        return await self._host.frame(frame_id=frame_id, timeout=timeout)

    async def child_frames(self) -> list[Frame]:
        """The frames whose parent is this one, in :meth:`ego.Tab.frames` order."""
        return [frame for frame in await self._host.frames() if frame.parent is self]
