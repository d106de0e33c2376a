"""One connection to the browser: it carries the messages of every session and routes them.

:class:`Connection` is the only place that talks to the browser, over a websocket
(:class:`~ego.protocol.wire.Wire`) or over the pipe of a Chrome ego started
(:class:`~ego.protocol.pipe.PipeWire`); the two carry messages behind one interface,
:class:`Channel`, so everything the connection does holds for both. Every command goes out
through a :class:`~ego.protocol.session.Session` (:attr:`Connection.root` for the browser's
own; :meth:`Connection.send` is that one's), which keeps it until its answer comes; the
connection routes each answer and event to the session it names.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from typing import Any, Final

import orjson

from ..errors import BrowserClosedError, CommandTimeoutError
from ._channel import Channel
from ._codec import decode_lenient
from ._events import JSON, EventHandler, Subscription, Waiter, count_entries, resolve_waiters
from .gc_pause import gc_paused
from .pipe import PipeWire
from .session import MAX_COMMAND_BYTES, Link, Session, SessionState
from .slow_motion import SlowMotion
from .wire import Wire

__all__ = [
    "MAX_COMMAND_BYTES",
    "Channel",
    "Connection",
    "EventHandler",
    "Session",
    "SessionState",
    "Subscription",
]

logger = logging.getLogger("ego.transport")


_DEFAULT: Final = object()
#: Bytes from which a message is decoded with the garbage collector paused (``gc_pause``).
_LARGE: Final = 256 * 1024


class Connection:
    """A CDP client over one channel (a websocket or Chrome's debugging pipe), shared by the
    browser and all its tabs.

    Commands carry increasing ids and are matched to their responses, so any number can be in
    flight at once. Tabs are flattened sessions: each is a
    :class:`~ego.protocol.session.Session` on this one channel, which sends its commands and
    keeps them until their answers come. The connection makes a session for every session
    Chrome reports attached (``Target.attachedToTarget``), and no other: :meth:`session` gives
    a session id it does not know (one Chrome detached already) as a detached session that
    refuses every command at once.

    Every command has a timeout (``default_timeout`` unless given per call). A command that
    times out fails alone; its late answer is dropped and the connection stays usable. When
    the channel closes, for whatever reason, every pending command and waiter fails at once
    with :class:`~ego.errors.BrowserClosedError`, and so does every later call. When Chrome
    reports that a session detached, what the session holds ends (see
    :class:`~ego.protocol.session.Session`).

    Strings may hold unpaired UTF-16 surrogates, both ways: one in a message from Chrome
    (``'😀'.slice(0, 1)`` in a page) reaches Python as the same lone code point in the ``str``
    (``'\\ud83d'``, as :func:`json.loads` gives it), and such a ``str`` is sent to Chrome as the
    same lone code unit. Only a message that is not JSON at all (or a text frame that is not
    UTF-8, which the wire closes with 1007) closes the connection.

    Use :meth:`open` to create one over a websocket, :meth:`open_pipe` over the pipe of a
    Chrome started with ``--remote-debugging-pipe``; ``Connection(channel)`` takes any other
    :class:`Channel`. All of it runs on the event loop that created the connection; calls from
    any number of tasks may be in flight at once.
    """

    def __init__(self, wire: Channel, *, default_timeout: float = 30.0) -> None:
        self._wire = wire
        self._link = Link(wire.send, default_timeout)
        #: The browser's own session (commands and events without a session id).
        self.root = Session(self._link, None)
        # Every session Chrome reported attached and not yet detached; a detached one is
        # dropped, so that a process that opens tabs for days keeps none of the old ones.
        self._sessions: dict[str, Session] = {}
        # Subscriptions and waiters that hear an event of every session.
        self._any_subscriptions: dict[str, list[Subscription]] = {}
        self._any_waiters: dict[str, list[Waiter]] = {}
        self._close_callbacks: list[Callable[[], None]] = []
        wire.attach(self._on_message, self._on_wire_closed)

    @classmethod
    async def open(
        cls,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        open_timeout: float = 10.0,
        default_timeout: float = 30.0,
    ) -> Connection:
        """Open a websocket to a CDP endpoint.

        Args:
            url: a ``ws://`` or ``wss://`` DevTools URL.
            headers: extra HTTP headers for the handshake (tokens for a remote fleet).
            open_timeout: seconds allowed for the TCP connect and handshake.
            default_timeout: seconds each command may take unless the call says otherwise.

        Raises:
            ConnectionFailedError: the endpoint is unreachable, refused the handshake (the
                HTTP status is in the message, e.g. 401 for a wrong token), or timed out.
        """
        wire = await Wire.open(url, headers=headers, open_timeout=open_timeout)
        return cls(wire, default_timeout=default_timeout)

    @classmethod
    async def open_pipe(
        cls, read_fd: int, write_fd: int, *, default_timeout: float = 30.0
    ) -> Connection:
        """Talk to a Chrome started with ``--remote-debugging-pipe`` over our ends of its pipes.

        Nothing is sent; a Chrome that is still starting reads what waits in the pipe once it
        is ready. Closing the connection makes Chrome quit.

        Args:
            read_fd: the read end of the pipe Chrome writes to (its descriptor 4).
            write_fd: the write end of the pipe Chrome reads from (its descriptor 3).
            default_timeout: seconds each command may take unless the call says otherwise.

        Raises:
            OSError: a descriptor is not a usable pipe end (both are closed then).
        """
        return cls(await PipeWire.open(read_fd, write_fd), default_timeout=default_timeout)

    @property
    def closed(self) -> bool:
        """True once the channel has closed; every call now raises BrowserClosedError."""
        return self._link.closed is not None

    @property
    def default_timeout(self) -> float:
        """Seconds a command may take unless its call says otherwise."""
        return self._link.default_timeout

    @default_timeout.setter
    def default_timeout(self, seconds: float) -> None:
        self._link.default_timeout = seconds

    @property
    def slow_motion(self) -> SlowMotion | None:
        """The pause every session makes before each input and navigation it sends
        (``ego.launch(slow_mo=)``), or None."""
        return self._link.slow_motion

    @slow_motion.setter
    def slow_motion(self, slow_motion: SlowMotion | None) -> None:
        self._link.slow_motion = slow_motion

    def session(self, session_id: str | None) -> Session:
        """The :class:`~ego.protocol.session.Session` Chrome attached as ``session_id`` (None:
        :attr:`root`).

        Only ``Target.attachedToTarget`` makes a session, before any answer that arrived after
        it is seen. An id the connection does not know (Chrome detached it already, even in
        the same read as the answer that named it) gives a detached session: every command on
        it fails at once with TabClosedError (BrowserClosedError once the connection closed),
        and nothing subscribed on it ever hears anything.
        """
        if session_id is None:
            return self.root
        session = self._sessions.get(session_id)
        if session is None:
            session = Session(self._link, session_id)
            if self._link.closed is not None:
                session.connection_closed(str(self._link.closed))
            else:
                session.chrome_detached()
        return session

    @property
    def sessions(self) -> list[Session]:
        """The sessions attached now (not the browser's own)."""
        return list(self._sessions.values())

    def resources(self) -> dict[str, int]:
        """What the connection holds now, for a process that must not grow: the sessions
        attached, and the subscriptions, listeners, waiters and pending commands of all of
        them (the browser's own and those of every session), with those that hear every
        session."""
        held = {
            "sessions": len(self._sessions),
            "subscriptions": count_entries(self._any_subscriptions),
            "listeners": 0,
            "waiters": count_entries(self._any_waiters),
            "pending": 0,
        }
        for session in (self.root, *self._sessions.values()):
            for name, count in session.resources().items():
                held[name] += count
        return held

    def on_close(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (synchronously, once) when the connection closes."""
        if self._link.closed is not None:
            callback()
        else:
            self._close_callbacks.append(callback)

    def send(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout: float | object | None = _DEFAULT,
    ) -> Coroutine[Any, Any, JSON]:
        """Send one command to the browser (on :attr:`root`, the browser's own session) and
        return its ``result``; as :meth:`Session.send <ego.protocol.session.Session.send>`.
        A tab's commands go on its own session.

        Raises:
            as :meth:`Session.send <ego.protocol.session.Session.send>`.
        """
        if timeout is _DEFAULT:
            return self.root.send(method, params)
        return self.root.send(method, params, timeout=timeout)

    # -- events of the browser, or of every session ---------------------------------------

    def subscribe(
        self, method: str, handler: EventHandler, *, every_session: bool = False
    ) -> Subscription:
        """Call ``handler(params)`` for every ``method`` event of the browser's own session,
        or of every session with ``every_session``. ``handler`` may be a function or a
        coroutine function; handlers run in their own task in arrival order (see
        :class:`Subscription`). A tab's events: its session's :meth:`Session.subscribe`."""
        if every_session:
            return self._subscribe_any(Subscription(self._unsubscribe_any, (method,), handler))
        return self.root.subscribe(method, handler)

    def subscribe_all(
        self,
        methods: Sequence[str],
        handler: Callable[[str, JSON], Awaitable[None] | None],
        *,
        every_session: bool = False,
    ) -> Subscription:
        """Call ``handler(method, params)`` for every event of any of ``methods``.

        Unlike separate subscriptions, one subscription sees its events in the order Chrome
        sent them, across methods (a response after its request, say).
        """
        if every_session:
            return self._subscribe_any(
                Subscription(self._unsubscribe_any, tuple(methods), handler, with_method=True)
            )
        return self.root.subscribe_all(methods, handler)

    def subscribe_each(
        self, handlers: Mapping[str, Callable[[JSON], None]], *, every_session: bool = False
    ) -> Subscription:
        """:meth:`subscribe_all` with a handler of its own for each method: ``handlers[method]
        (params)``, in the order Chrome sent the events across all of them."""

        def handle(method: str, params: JSON) -> None:
            handlers[method](params)

        return self.subscribe_all(list(handlers), handle, every_session=every_session)

    def _subscribe_any(self, subscription: Subscription) -> Subscription:
        if self._link.closed is not None:
            subscription.end()
            return subscription
        for method in subscription.methods:
            self._any_subscriptions.setdefault(method, []).append(subscription)
        return subscription

    def _unsubscribe_any(self, subscription: Subscription) -> None:
        for method in subscription.methods:
            subscriptions = self._any_subscriptions.get(method)
            if subscriptions and subscription in subscriptions:
                subscriptions.remove(subscription)

    def expect(
        self,
        method: str,
        *,
        predicate: Callable[[JSON], bool] | None = None,
        every_session: bool = False,
    ) -> asyncio.Future[JSON]:
        """Return a future for the next ``method`` event of the browser's own session (of any
        session with ``every_session``) that satisfies ``predicate``.

        Register the future *before* sending the command that causes the event, so the event
        cannot slip by. ``predicate`` runs inside the read loop and must be quick. The future
        fails with BrowserClosedError if the connection closes first. Cancel it to give up.
        """
        if not every_session:
            return self.root.expect(method, predicate)
        future: asyncio.Future[JSON] = self._link.loop.create_future()
        if self._link.closed is not None:
            future.set_exception(BrowserClosedError(str(self._link.closed)))
            return future
        waiter = Waiter(method, predicate, future)
        waiters = self._any_waiters.setdefault(method, [])
        waiters.append(waiter)
        future.add_done_callback(lambda _: _discard(waiters, waiter))
        return future

    async def wait_for(
        self,
        method: str,
        *,
        predicate: Callable[[JSON], bool] | None = None,
        every_session: bool = False,
        timeout: float,
    ) -> JSON:
        """Wait for the next ``method`` event (as :meth:`expect`) that satisfies ``predicate``.

        Raises:
            CommandTimeoutError: no such event within ``timeout`` seconds.
            BrowserClosedError: the connection closed first.
        """
        future = self.expect(method, predicate=predicate, every_session=every_session)
        try:
            return await asyncio.wait_for(future, timeout)
        except TimeoutError:
            raise CommandTimeoutError(f"no {method} event within {timeout:g} s") from None

    async def close(self) -> None:
        """Close the channel and fail everything pending. Idempotent.

        Over a pipe, Chrome quits once its command pipe is closed.
        """
        await self._wire.close()

    # -- the read path --------------------------------------------------------------------

    def _on_message(self, raw: bytes) -> None:
        # Runs inside the channel's data_received: responses resolve their futures right
        # here. Anything slow belongs in a Subscription's own task, never in this path.
        try:
            if len(raw) < _LARGE:
                message = orjson.loads(raw)
            else:
                with gc_paused():  # hundreds of thousands of containers (gc_pause.py)
                    message = orjson.loads(raw)
        except orjson.JSONDecodeError:
            try:
                message = decode_lenient(raw)  # a lone surrogate, most likely
            except ValueError:
                self._drop("the browser sent a frame that is not JSON")
                return
        if not isinstance(message, dict):
            self._drop("the browser sent JSON that is not a CDP message")
            return
        try:
            message_id = message.get("id")
            if message_id is None:
                self._dispatch(message)
                return
            # An answer, settled right here by the session that sent the command (the hot
            # path of every call): Chrome names the session in every answer but one for a
            # session it no longer has, which is looked for among them all.
            session_id = message.get("sessionId")
            session = self.root if session_id is None else self._sessions.get(session_id)
            if session is not None and session.receive_answer(message_id, message):
                return
            if session_id is None:
                for other in self._sessions.values():
                    if other.receive_answer(message_id, message):
                        return
        except Exception as exc:  # a bug here must not leave callers hanging
            logger.exception("CDP dispatch failed")
            self._shutdown(f"the connection failed: {type(exc).__name__}: {exc}")
            self._wire.fail(1011, "internal error")

    def _drop(self, what: str) -> None:
        reason = f"{what}; the connection was dropped"
        logger.error(reason)
        self._shutdown(reason + "; launch or connect again")
        self._wire.fail(1002, "not a CDP message")

    def _on_wire_closed(self, reason: str) -> None:
        self._shutdown(reason + "; launch or connect again")

    def _dispatch(self, message: JSON) -> None:
        """Route an event to its session, and to those who hear every session."""
        method = message.get("method")
        if method is None:
            return
        params: JSON = message.get("params", {})
        session_id: str | None = message.get("sessionId")
        if method == "Target.attachedToTarget":
            # Known before anyone hears of it, so that a listener can take its session.
            self._attached(params)
        session = self.root if session_id is None else self._sessions.get(session_id)
        if session is not None:
            session.receive_event(method, params)
        if self._any_subscriptions or self._any_waiters:
            self._dispatch_any(method, params)
        if method == "Target.detachedFromTarget":
            # After every listener and waiter: one waiting for this very event gets it.
            detached = self._sessions.pop(str(params.get("sessionId")), None)
            if detached is not None:
                detached.chrome_detached()

    def _attached(self, params: JSON) -> None:
        """The one place a session is made: Chrome reported it attached."""
        session_id = params.get("sessionId")
        if not session_id or str(session_id) in self._sessions:
            return
        info = params.get("targetInfo") or {}
        self._sessions[str(session_id)] = Session(
            self._link,
            str(session_id),
            target_id=str(info.get("targetId", "")),
            target_type=str(info.get("type", "")),
        )

    def _dispatch_any(self, method: str, params: JSON) -> None:
        for subscription in self._any_subscriptions.get(method, ()):
            subscription.push(method, params)
        waiters = self._any_waiters.get(method)
        if waiters:
            resolve_waiters(waiters, params)

    def _shutdown(self, reason: str) -> None:
        if self._link.closed is not None:
            return
        self._link.closed = BrowserClosedError(reason)
        sessions = [self.root, *self._sessions.values()]
        self._sessions.clear()
        for session in sessions:
            session.connection_closed(reason)
        subscriptions = {id(s): s for group in self._any_subscriptions.values() for s in group}
        self._any_subscriptions.clear()
        for subscription in subscriptions.values():
            subscription.end()
        waiters = [waiter for group in self._any_waiters.values() for waiter in group]
        self._any_waiters.clear()
        for waiter in waiters:
            if not waiter.future.done():
                waiter.future.set_exception(BrowserClosedError(reason))
        callbacks, self._close_callbacks = self._close_callbacks, []
        for callback in callbacks:
            try:
                callback()
            except Exception:
                logger.exception("close callback failed")


def _discard(waiters: list[Waiter], waiter: Waiter) -> None:
    if waiter in waiters:
        waiters.remove(waiter)
