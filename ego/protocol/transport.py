"""One connection to the browser: commands, responses, events and sessions.

:class:`Connection` is the only place that talks to the browser, over a websocket
(:class:`~ego.protocol.wire.Wire`) or over the pipe of a Chrome ego started
(:class:`~ego.protocol.pipe.PipeWire`); the two carry messages behind one interface,
:class:`Channel`, so everything the connection does holds for both. Everything above it sends
commands with :meth:`Connection.send` and listens with :meth:`Connection.subscribe` or
:meth:`Connection.wait_for`.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Final

import orjson

from ..errors import (
    BrowserClosedError,
    CommandTimeoutError,
    CommandTooLargeError,
    EgoError,
    ProtocolError,
    TabClosedError,
)
from ._channel import Channel, Pending
from ._codec import decode_lenient, encode_lenient
from ._events import ANY_SESSION, JSON, AnySession, EventHandler, Subscription, Waiter
from .pipe import PipeWire
from .session import Session, SessionState, allowed
from .slow_motion import SlowMotion
from .wire import Wire

__all__ = [
    "ANY_SESSION",
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

#: The largest command (its JSON, in bytes) :meth:`Connection.send` sends; a larger one raises
#: CommandTooLargeError and nothing is sent. Chrome reads one DevTools message into a buffer of
#: 100 MiB, on the websocket and on the pipe alike. Measured on Chromium 156, headless, with
#: ``Runtime.evaluate`` of ``'aaa…a'.length``: over the websocket a message of 104,857,586
#: bytes (100 MiB - 14, the 14-byte header of a masked client frame) was answered, and one of
#: 104,857,587 bytes reset the connection (every tab then loses it); over the pipe a message
#: of 104,857,599 bytes (100 MiB with its NUL) was answered, and one of 104,857,600 bytes made
#: Chrome stop reading the pipe without closing it, so that every later call would only time
#: out. 99 MiB is under both, with a margin for other builds.
MAX_COMMAND_BYTES: Final = 99 * 1024 * 1024


class Connection:
    """A CDP client over one channel (a websocket or Chrome's debugging pipe), shared by the
    browser and all its tabs.

    Commands carry increasing ids and are matched to their responses, so any number can be in
    flight at once. Tabs are flattened sessions: a command with ``session_id`` goes to that tab
    over the same channel.

    Every command has a timeout (``default_timeout`` unless given per call). A command that
    times out fails alone; its late answer is dropped and the connection stays usable. When
    the channel closes, for whatever reason, every pending command and waiter fails at once
    with :class:`~ego.errors.BrowserClosedError`, and so does every later call. When Chrome
    reports that a session detached, the commands pending on that session fail with
    :class:`~ego.errors.TabClosedError`, and so does every later command sent to it. When it
    reports that a tab's renderer crashed (``Inspector.targetCrashed``), the commands and
    waiters on that session fail at once with :class:`~ego.errors.TargetCrashedError`, and so
    does every later command to it except ``Page.reload``, ``Page.navigate`` and the Fetch
    domain, until Chrome reports the tab reloaded (``Inspector.targetReloadedAfterCrash``).
    A session can also be suspended on purpose (:meth:`suspend_session`, while a page dialog
    blocks the tab): its commands fail at once with the error given, except those allowed.

    Strings may hold unpaired UTF-16 surrogates, both ways: one in a message from Chrome
    (``'😀'.slice(0, 1)`` in a page) reaches Python as the same lone code point in the ``str``
    (``'\\ud83d'``, as :func:`json.loads` gives it), and such a ``str`` is sent to Chrome as the
    same lone code unit. Only a message that is not JSON at all (or a text frame that is not
    UTF-8, which the wire closes with 1007) closes the connection.

    A command larger than :data:`MAX_COMMAND_BYTES` is refused before it is sent.

    Use :meth:`open` to create one over a websocket, :meth:`open_pipe` over the pipe of a
    Chrome started with ``--remote-debugging-pipe``; ``Connection(channel)`` takes any other
    :class:`Channel`. All of it runs on the event loop that created the connection; calls from
    any number of tasks may be in flight at once.
    """

    def __init__(self, wire: Channel, *, default_timeout: float = 30.0) -> None:
        self._wire = wire
        self.default_timeout = default_timeout
        self._ids = itertools.count(1)
        self._pending: dict[int, Pending] = {}
        # One timer for all commands, due at the earliest deadline pending. A timer per
        # command (armed, then cancelled on nearly every answer) cost a fifth of the CPU
        # of a busy connection in heap upkeep.
        self._sweep: asyncio.TimerHandle | None = None
        self._sweep_at = math.inf
        self._loop = asyncio.get_running_loop()
        #: The browser's own session (events without a session id).
        self.root = Session(self, None)
        # Every session Chrome reported attached and not yet detached; a detached one is
        # dropped, so that a process that opens tabs for days keeps none of the old ones.
        self._sessions: dict[str, Session] = {}
        # Subscriptions and waiters that hear an event of every session (ANY_SESSION).
        self._any_subscriptions: dict[str, list[Subscription]] = {}
        self._any_waiters: dict[str, list[Waiter]] = {}
        self._closed_error: BrowserClosedError | None = None
        self._close_callbacks: list[Callable[[], None]] = []
        #: A pause before each input and navigation sent (``ego.launch(slow_mo=)``), or None.
        self.slow_motion: SlowMotion | None = None
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
        return self._closed_error is not None

    def session(self, session_id: str | None) -> Session:
        """The :class:`~ego.protocol.session.Session` for ``session_id`` (None: :attr:`root`).

        The connection makes one for every session Chrome reports attached
        (``Target.attachedToTarget``); asking for one it has not seen makes it, for a session
        attached by a command whose event is still on its way.
        """
        if session_id is None:
            return self.root
        session = self._sessions.get(session_id)
        if session is None:
            session = Session(self, session_id)
            if self._closed_error is not None:
                session._end()
            else:
                self._sessions[session_id] = session
        return session

    @property
    def sessions(self) -> list[Session]:
        """The sessions attached now (not the browser's own)."""
        return list(self._sessions.values())

    def resources(self) -> dict[str, int]:
        """What the connection holds now, for a process that must not grow: the sessions
        attached, and the subscriptions, listeners and waiters of all of them (the browser's
        own and those of every session), and the commands pending."""
        sessions = [self.root, *self._sessions.values()]
        count = Session._count
        return {
            "sessions": len(self._sessions),
            "subscriptions": count(self._any_subscriptions)
            + sum(count(session._subscriptions) for session in sessions),
            "listeners": sum(count(session._listeners) for session in sessions),
            "waiters": count(self._any_waiters)
            + sum(count(session._waiters) for session in sessions),
            "pending": len(self._pending),
        }

    def on_close(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (synchronously, once) when the connection closes."""
        if self._closed_error is not None:
            callback()
        else:
            self._close_callbacks.append(callback)

    async def send(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        session_id: str | None = None,
        timeout: float | object | None = _DEFAULT,
    ) -> JSON:
        """Send one CDP command and return its ``result``.

        Args:
            method: the CDP method, e.g. ``"Runtime.evaluate"``.
            params: the command's parameters.
            session_id: the flattened session (tab) to address; ``None`` for the browser.
            timeout: seconds to wait for the answer; the connection's default if omitted;
                ``None`` waits without a bound (only for commands that end by themselves).

        Raises:
            ProtocolError: Chrome answered with an error.
            CommandTimeoutError: no answer within ``timeout``; the connection stays usable.
            TabClosedError: the session detached (the tab closed) before the answer, or was
                gone already (then nothing was sent, or Chrome said it has no such session).
            TargetCrashedError: the tab's renderer crashed before the answer, or had crashed
                and was not reloaded since (then nothing was sent).
            CommandTooLargeError: the command is larger than :data:`MAX_COMMAND_BYTES`;
                nothing was sent and the connection stays usable.
            DialogOpenError, or whatever the session's :meth:`Session.suspend` error builds:
                the session is suspended (nothing was sent), or was suspended while waiting.
            BrowserClosedError: the connection is closed or closed while waiting.
            TypeError, ValueError: ``params`` cannot be serialised as JSON; nothing was sent.

        Cancelling the caller abandons the command: Chrome still runs it, and its answer is
        dropped when it arrives.
        """
        if self.slow_motion is not None:
            await self.slow_motion.before(method)
        if session_id is not None:
            session = self._sessions.get(session_id)
            if session is not None and session._refusal is not None:
                session.check(method)
        if self._closed_error is not None:
            raise BrowserClosedError(str(self._closed_error))
        if timeout is _DEFAULT:
            timeout = self.default_timeout
        message_id = next(self._ids)
        message: JSON = {"id": message_id, "method": method}
        if params:
            message["params"] = params
        if session_id is not None:
            message["sessionId"] = session_id
        # An error from here to the send leaves nothing pending behind.
        try:
            data = orjson.dumps(message)
        except TypeError as exc:
            data = encode_lenient(message, exc)
        if len(data) > MAX_COMMAND_BYTES:
            raise CommandTooLargeError(
                f"{method} was not sent: it is {len(data):,} bytes, over the limit of "
                f"{MAX_COMMAND_BYTES:,} bytes per command (Chrome drops the connection on a "
                "message of 100 MiB); pass less data per call",
                size=len(data),
                limit=MAX_COMMAND_BYTES,
            )
        loop = self._loop
        future: asyncio.Future[JSON] = loop.create_future()
        deadline = None
        if timeout is not None:
            deadline = loop.time() + timeout  # type: ignore[operator]
            if deadline < self._sweep_at:
                self._arm_sweep(deadline)
        self._pending[message_id] = Pending(future, method, session_id, deadline)
        # When the wire is already closing, its close callback fails the future with the
        # reason, so a refused send needs no handling here.
        self._wire.send(data)
        try:
            return await future
        finally:
            # Covers cancellation by the caller: the id must not linger in _pending.
            self._pending.pop(message_id, None)

    def _arm_sweep(self, when: float) -> None:
        if self._sweep is not None:
            self._sweep.cancel()
        self._sweep_at = when
        self._sweep = self._loop.call_at(when, self._expire_due)

    def _expire_due(self) -> None:
        self._sweep = None
        self._sweep_at = math.inf
        # The loop may run a timer a hair before its time; a millisecond early is on time.
        now = self._loop.time() + 0.001
        earliest = math.inf
        for message_id, entry in list(self._pending.items()):
            deadline = entry.deadline
            if deadline is None:
                continue
            if deadline <= now:
                del self._pending[message_id]
                if not entry.future.done():
                    entry.future.set_exception(
                        CommandTimeoutError(
                            f"{entry.method} got no answer in time; the call was abandoned and "
                            "the connection is still usable (raise the timeout if the page is "
                            "slow)"
                        )
                    )
            elif deadline < earliest:
                earliest = deadline
        if earliest < math.inf:
            self._arm_sweep(earliest)

    # -- events, by session ---------------------------------------------------------------

    def subscribe(
        self,
        method: str,
        handler: EventHandler,
        *,
        session_id: str | AnySession | None = None,
    ) -> Subscription:
        """Call ``handler(params)`` for every ``method`` event from ``session_id``.

        ``session_id=None`` hears browser-level events only; :data:`ANY_SESSION` hears the
        event from every session. ``handler`` may be a function or a coroutine function.
        Handlers run in their own task in arrival order; see :class:`Subscription`. A
        subscription to one session is that session's (:meth:`Session.subscribe`): it ends
        when the session detaches.
        """
        if isinstance(session_id, AnySession):
            return self._subscribe_any(
                Subscription(self._unsubscribe_any, (method,), session_id, handler)
            )
        return self.session(session_id).subscribe(method, handler)

    def subscribe_all(
        self,
        methods: Sequence[str],
        handler: Callable[[str, JSON], Awaitable[None] | None],
        *,
        session_id: str | AnySession | None = None,
    ) -> Subscription:
        """Call ``handler(method, params)`` for every event of any of ``methods``.

        Unlike separate subscriptions, one subscription sees its events in the order Chrome
        sent them, across methods (a response after its request, say).
        """
        if isinstance(session_id, AnySession):
            return self._subscribe_any(
                Subscription(
                    self._unsubscribe_any, tuple(methods), session_id, handler, with_method=True
                )
            )
        return self.session(session_id).subscribe_all(methods, handler)

    def subscribe_each(
        self,
        handlers: Mapping[str, Callable[[JSON], None]],
        *,
        session_id: str | AnySession | None = None,
    ) -> Subscription:
        """:meth:`subscribe_all` with a handler of its own for each method: ``handlers[method]
        (params)``, in the order Chrome sent the events across all of them."""

        def handle(method: str, params: JSON) -> None:
            handlers[method](params)

        return self.subscribe_all(list(handlers), handle, session_id=session_id)

    def _subscribe_any(self, subscription: Subscription) -> Subscription:
        if self._closed_error is not None:
            subscription._push(None)
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
        session_id: str | AnySession | None = None,
        predicate: Callable[[JSON], bool] | None = None,
    ) -> asyncio.Future[JSON]:
        """Return a future for the next ``method`` event that satisfies ``predicate``.

        Register the future *before* sending the command that causes the event, so the event
        cannot slip by. ``predicate`` runs inside the read loop and must be quick. The future
        fails with BrowserClosedError if the connection closes first (and as
        :meth:`Session.expect` says when its session ends). Cancel it to give up.
        """
        if not isinstance(session_id, AnySession):
            return self.session(session_id).expect(method, predicate)
        future: asyncio.Future[JSON] = self._loop.create_future()
        if self._closed_error is not None:
            self._fail_closed(future)
            return future
        waiter = Waiter(method, session_id, predicate, future)
        waiters = self._any_waiters.setdefault(method, [])
        waiters.append(waiter)
        future.add_done_callback(lambda _: _discard(waiters, waiter))
        return future

    async def wait_for(
        self,
        method: str,
        *,
        session_id: str | AnySession | None = None,
        predicate: Callable[[JSON], bool] | None = None,
        timeout: float,
    ) -> JSON:
        """Wait for the next ``method`` event that satisfies ``predicate``.

        Raises:
            CommandTimeoutError: no such event within ``timeout`` seconds.
            BrowserClosedError: the connection closed first.
        """
        future = self.expect(method, session_id=session_id, predicate=predicate)
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
            # An answer: settled right here (the hot path of every call).
            entry = self._pending.pop(message_id, None)
            if entry is None or entry.future.done():
                return  # timed out or cancelled earlier
            error = message.get("error")
            if error is None:
                entry.future.set_result(message.get("result", {}))
            else:
                entry.future.set_exception(_protocol_error(entry.method, error, entry.session_id))
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
            session._dispatch(method, params)
        if self._any_subscriptions or self._any_waiters:
            self._dispatch_any(method, params, session_id)
        if method == "Target.detachedFromTarget":
            # After every listener and waiter: one waiting for this very event gets it.
            detached = self._sessions.pop(str(params.get("sessionId")), None)
            if detached is not None:
                detached._detach()

    def _attached(self, params: JSON) -> None:
        session_id = params.get("sessionId")
        if not session_id:
            return
        info = params.get("targetInfo") or {}
        session = self.session(str(session_id))
        session.target_id = session.target_id or str(info.get("targetId", ""))
        session.target_type = session.target_type or str(info.get("type", ""))

    def _dispatch_any(self, method: str, params: JSON, session_id: str | None) -> None:
        for subscription in self._any_subscriptions.get(method, ()):
            subscription._push((method, params))
        waiters = self._any_waiters.get(method)
        if waiters:
            for waiter in list(waiters):
                if waiter.future.done():
                    continue
                try:
                    matched = waiter.predicate is None or waiter.predicate(params)
                except Exception as exc:
                    waiter.future.set_exception(exc)
                    continue
                if matched:
                    waiter.future.set_result(params)

    def _fail_pending(
        self,
        session_id: str | None,
        error: Callable[[str], Exception],
        allow: frozenset[str] = frozenset(),
    ) -> None:
        """Fail every command pending on ``session_id`` with ``error(what was cut)``, but
        those whose method ``allow`` names (a session's state changed)."""
        for message_id, entry in list(self._pending.items()):
            if (
                entry.session_id == session_id
                and not entry.future.done()
                and not allowed(entry.method, allow)
            ):
                del self._pending[message_id]
                entry.future.set_exception(error(f"{entry.method} was cut short"))

    def _fail_closed(self, future: asyncio.Future[Any]) -> None:
        future.set_exception(BrowserClosedError(str(self._closed_error)))

    def _shutdown(self, reason: str) -> None:
        if self._closed_error is not None:
            return
        self._closed_error = BrowserClosedError(reason)
        if self._sweep is not None:
            self._sweep.cancel()
            self._sweep = None
        for entry in self._pending.values():
            if not entry.future.done():
                entry.future.set_exception(BrowserClosedError(reason))
        self._pending.clear()
        sessions = [self.root, *self._sessions.values()]
        self._sessions.clear()
        for session in sessions:
            session._connection_closed(lambda: BrowserClosedError(reason))
        subscriptions = {id(s): s for group in self._any_subscriptions.values() for s in group}
        self._any_subscriptions.clear()
        for subscription in subscriptions.values():
            subscription._push(None)
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


def _protocol_error(method: str, error: JSON, session_id: str | None) -> EgoError:
    code = error.get("code")
    text = error.get("message", "unknown error")
    if session_id is not None and text.startswith("Session with given id not found"):
        # A session Chrome dropped before this process heard of it: the tab is gone.
        return TabClosedError(
            f"{method} failed: the tab's session {session_id[:8]} is gone (the tab closed or "
            "was detached); open a new tab and retry"
        )
    data = error.get("data")
    detail = f" ({data})" if data else ""
    return ProtocolError(f"{method} failed: {text}{detail}", method=method, code=code)
