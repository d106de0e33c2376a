"""One websocket to the browser: commands, responses, events and sessions.

:class:`Connection` is the only place that touches the socket. Everything above it sends
commands with :meth:`Connection.send` and listens with :meth:`Connection.subscribe` or
:meth:`Connection.wait_for`.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import logging
import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Final, Protocol

import orjson

from ..errors import (
    BrowserClosedError,
    CommandTimeoutError,
    ProtocolError,
    TabClosedError,
)
from .wire import Wire

__all__ = ["ANY_SESSION", "Channel", "Connection", "EventHandler", "Subscription"]

logger = logging.getLogger("ego.transport")

JSON = dict[str, Any]
EventHandler = Callable[[JSON], Awaitable[None] | None]


class Channel(Protocol):
    """What a :class:`Connection` talks through: a :class:`~ego.protocol.wire.Wire`, or
    anything else that carries CDP messages the same way (an in-process fake in tests).

    Messages go out with :meth:`send` and come in, whole and in order, through the
    ``on_message`` handler given to :meth:`attach`; ``on_close`` is called once, with a
    reason, when the channel is gone, whoever closed it.
    """

    def attach(self, on_message: Callable[[bytes], None], on_close: Callable[[str], None]) -> None:
        """Start delivering messages (and any that arrived before) to the handlers."""

    def send(self, message: bytes) -> bool:
        """Send one message; False when the channel is no longer open (nothing was sent)."""

    def fail(self, code: int, reason: str) -> None:
        """Close because of a protocol problem on our side (``code`` is a websocket code)."""

    async def close(self) -> None:
        """Close in an orderly way and wait until closed."""

    def abort(self) -> None:
        """Drop the channel at once."""


class _AnySession:
    def __repr__(self) -> str:
        return "ANY_SESSION"


#: Pass as ``session_id`` to hear an event from the browser and from every tab.
ANY_SESSION: Final = _AnySession()

_DEFAULT: Final = object()


class Subscription:
    """A registered event handler; :meth:`close` unregisters it.

    Each subscription owns a queue and a task that feeds the handler, so a slow handler only
    delays itself: the read loop never waits for it, and neither do responses or other
    subscribers. A handler that raises is logged and keeps receiving later events.
    """

    def __init__(
        self,
        connection: Connection,
        methods: tuple[str, ...],
        session_id: str | _AnySession | None,
        handler: Callable[..., Awaitable[None] | None],
        *,
        with_method: bool = False,
    ) -> None:
        self._connection = connection
        self.methods = methods
        self.method = methods[0]
        self.session_id = session_id
        self._handler = handler
        self._with_method = with_method
        self._queue: asyncio.Queue[tuple[str, JSON] | None] = asyncio.Queue()
        self._task = asyncio.get_running_loop().create_task(self._run())

    def _matches(self, session_id: str | None) -> bool:
        return self.session_id is ANY_SESSION or self.session_id == session_id

    def _push(self, item: tuple[str, JSON] | None) -> None:
        self._queue.put_nowait(item)

    async def _run(self) -> None:
        while True:
            item = await self._queue.get()
            try:
                if item is None:
                    return
                method, params = item
                result = (
                    self._handler(method, params) if self._with_method else self._handler(params)
                )
                if inspect.isawaitable(result):
                    await result
            except Exception:
                logger.exception("event handler for %s failed", ", ".join(self.methods))
            finally:
                self._queue.task_done()

    async def drain(self) -> None:
        """Wait until the handler has seen every event received so far.

        Returns at once when the subscription is closed.
        """
        if not self._task.done():
            waiter = asyncio.ensure_future(self._queue.join())
            await asyncio.wait({waiter, self._task}, return_when=asyncio.FIRST_COMPLETED)
            waiter.cancel()

    def close(self) -> None:
        """Stop delivering events to the handler. Events already queued are dropped."""
        self._connection._unsubscribe(self)
        self._task.cancel()


class _Waiter:
    __slots__ = ("future", "method", "predicate", "session_id")

    def __init__(
        self,
        method: str,
        session_id: str | _AnySession | None,
        predicate: Callable[[JSON], bool] | None,
        future: asyncio.Future[JSON],
    ) -> None:
        self.method = method
        self.session_id = session_id
        self.predicate = predicate
        self.future = future


class _Pending:
    __slots__ = ("deadline", "future", "method", "session_id")

    def __init__(
        self,
        future: asyncio.Future[Any],
        method: str,
        session_id: str | None,
        deadline: float | None,
    ) -> None:
        self.future = future
        self.method = method
        self.session_id = session_id
        self.deadline = deadline


class Connection:
    """A CDP client over one websocket, shared by the browser and all its tabs.

    Commands carry increasing ids and are matched to their responses, so any number can be in
    flight at once. Tabs are flattened sessions: a command with ``session_id`` goes to that tab
    over the same socket.

    Every command has a timeout (``default_timeout`` unless given per call). A command that
    times out fails alone; its late answer is dropped and the connection stays usable. When
    the socket closes, for whatever reason, every pending command and waiter fails at once
    with :class:`~ego.errors.BrowserClosedError`, and so does every later call. When Chrome
    reports that a session detached, the commands pending on that session fail with
    :class:`~ego.errors.TabClosedError`, and so does every later command sent to it.

    Use :meth:`open` to create one over a websocket; ``Connection(channel)`` takes any other
    :class:`Channel`.
    """

    def __init__(self, wire: Channel, *, default_timeout: float = 30.0) -> None:
        self._wire = wire
        self.default_timeout = default_timeout
        self._ids = itertools.count(1)
        self._pending: dict[int, _Pending] = {}
        # One timer for all commands, due at the earliest deadline pending. A timer per
        # command (armed, then cancelled on nearly every answer) cost a fifth of the CPU
        # of a busy connection in heap upkeep.
        self._sweep: asyncio.TimerHandle | None = None
        self._sweep_at = math.inf
        self._subscriptions: dict[str, list[Subscription]] = {}
        self._waiters: dict[str, list[_Waiter]] = {}
        self._closed_error: BrowserClosedError | None = None
        self._detached: set[str] = set()
        self._close_callbacks: list[Callable[[], None]] = []
        self._loop = asyncio.get_running_loop()
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

    @property
    def closed(self) -> bool:
        """True once the socket has closed; every call now raises BrowserClosedError."""
        return self._closed_error is not None

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
            TabClosedError: the session detached (the tab closed) before the answer.
            BrowserClosedError: the connection is closed or closed while waiting.
            TypeError: ``params`` cannot be serialised as JSON; nothing was sent.

        Cancelling the caller abandons the command: Chrome still runs it, and its answer is
        dropped when it arrives.
        """
        if self._closed_error is not None:
            raise BrowserClosedError(str(self._closed_error))
        if session_id is not None and session_id in self._detached:
            raise TabClosedError(
                f"{method} was not sent: the tab of session {session_id} closed or detached; "
                "open a new tab and retry"
            )
        message_id = next(self._ids)
        message: JSON = {"id": message_id, "method": method}
        if params:
            message["params"] = params
        if session_id is not None:
            message["sessionId"] = session_id
        data = orjson.dumps(message)  # a TypeError here leaves nothing pending behind
        future: asyncio.Future[JSON] = self._loop.create_future()
        seconds = self.default_timeout if timeout is _DEFAULT else timeout
        deadline = None
        if seconds is not None:
            deadline = self._loop.time() + seconds  # type: ignore[operator]
            if deadline < self._sweep_at:
                self._arm_sweep(deadline)
        self._pending[message_id] = _Pending(future, method, session_id, deadline)
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

    def subscribe(
        self,
        method: str,
        handler: EventHandler,
        *,
        session_id: str | _AnySession | None = None,
    ) -> Subscription:
        """Call ``handler(params)`` for every ``method`` event from ``session_id``.

        ``session_id=None`` hears browser-level events only; :data:`ANY_SESSION` hears the
        event from every session. ``handler`` may be a function or a coroutine function.
        Handlers run in their own task in arrival order; see :class:`Subscription`.
        """
        subscription = Subscription(self, (method,), session_id, handler)
        self._subscriptions.setdefault(method, []).append(subscription)
        return subscription

    def subscribe_all(
        self,
        methods: Sequence[str],
        handler: Callable[[str, JSON], Awaitable[None] | None],
        *,
        session_id: str | _AnySession | None = None,
    ) -> Subscription:
        """Call ``handler(method, params)`` for every event of any of ``methods``.

        Unlike separate subscriptions, one subscription sees its events in the order Chrome
        sent them, across methods (a response after its request, say).
        """
        subscription = Subscription(self, tuple(methods), session_id, handler, with_method=True)
        for method in subscription.methods:
            self._subscriptions.setdefault(method, []).append(subscription)
        return subscription

    def _unsubscribe(self, subscription: Subscription) -> None:
        for method in subscription.methods:
            subscriptions = self._subscriptions.get(method)
            if subscriptions and subscription in subscriptions:
                subscriptions.remove(subscription)

    def expect(
        self,
        method: str,
        *,
        session_id: str | _AnySession | None = None,
        predicate: Callable[[JSON], bool] | None = None,
    ) -> asyncio.Future[JSON]:
        """Return a future for the next ``method`` event that satisfies ``predicate``.

        Register the future *before* sending the command that causes the event, so the event
        cannot slip by. ``predicate`` runs inside the read loop and must be quick. The future
        fails with BrowserClosedError if the connection closes first. Cancel it to give up.
        """
        future: asyncio.Future[JSON] = self._loop.create_future()
        if self._closed_error is not None:
            future.set_exception(BrowserClosedError(str(self._closed_error)))
            return future
        waiter = _Waiter(method, session_id, predicate, future)
        self._waiters.setdefault(method, []).append(waiter)
        return future

    async def wait_for(
        self,
        method: str,
        *,
        session_id: str | _AnySession | None = None,
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
        """Close the socket and fail everything pending. Idempotent."""
        await self._wire.close()

    def _on_message(self, raw: bytes) -> None:
        # Runs inside the socket's data_received: responses resolve their futures right
        # here. Anything slow belongs in a Subscription's own task, never in this path.
        try:
            message = orjson.loads(raw)
        except orjson.JSONDecodeError:
            self._drop("the browser sent a frame that is not JSON")
            return
        if not isinstance(message, dict):
            self._drop("the browser sent JSON that is not a CDP message")
            return
        try:
            self._dispatch(message)
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
        message_id = message.get("id")
        if message_id is not None:
            entry = self._pending.pop(message_id, None)
            if entry is None:
                return  # timed out or cancelled earlier
            if entry.future.done():
                return
            error = message.get("error")
            if error is None:
                entry.future.set_result(message.get("result", {}))
            else:
                entry.future.set_exception(_protocol_error(entry.method, error))
            return

        method = message.get("method")
        if method is None:
            return
        params: JSON = message.get("params", {})
        session_id: str | None = message.get("sessionId")
        if method == "Target.detachedFromTarget":
            self._fail_session(params.get("sessionId"), params.get("targetId"))
        for subscription in self._subscriptions.get(method, ()):
            if subscription._matches(session_id):
                subscription._push((method, params))
        waiters = self._waiters.get(method)
        if waiters:
            self._resolve_waiters(waiters, params, session_id)

    def _resolve_waiters(
        self, waiters: list[_Waiter], params: JSON, session_id: str | None
    ) -> None:
        for waiter in list(waiters):
            if waiter.future.done():
                waiters.remove(waiter)
                continue
            if waiter.session_id is not ANY_SESSION and waiter.session_id != session_id:
                continue
            try:
                matched = waiter.predicate is None or waiter.predicate(params)
            except Exception as exc:
                waiters.remove(waiter)
                waiter.future.set_exception(exc)
                continue
            if matched:
                waiters.remove(waiter)
                waiter.future.set_result(params)

    def _fail_session(self, session_id: str | None, target_id: str | None) -> None:
        if session_id is None:
            return
        self._detached.add(session_id)
        for message_id, entry in list(self._pending.items()):
            if entry.session_id == session_id and not entry.future.done():
                del self._pending[message_id]
                entry.future.set_exception(
                    TabClosedError(
                        f"{entry.method} was cut short: the tab {target_id or session_id} "
                        "closed or detached; open a new tab and retry"
                    )
                )
        for method, waiters in self._waiters.items():
            for waiter in list(waiters):
                if waiter.session_id == session_id and not waiter.future.done():
                    waiters.remove(waiter)
                    waiter.future.set_exception(
                        TabClosedError(
                            f"stopped waiting for {method}: the tab {target_id or session_id} "
                            "closed or detached"
                        )
                    )

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
        for waiters in self._waiters.values():
            for waiter in waiters:
                if not waiter.future.done():
                    waiter.future.set_exception(BrowserClosedError(reason))
        self._waiters.clear()
        for subscriptions in self._subscriptions.values():
            for subscription in subscriptions:
                subscription._push(None)
        self._subscriptions.clear()
        callbacks, self._close_callbacks = self._close_callbacks, []
        for callback in callbacks:
            try:
                callback()
            except Exception:
                logger.exception("close callback failed")


def _protocol_error(method: str, error: JSON) -> ProtocolError:
    code = error.get("code")
    text = error.get("message", "unknown error")
    data = error.get("data")
    detail = f" ({data})" if data else ""
    return ProtocolError(f"{method} failed: {text}{detail}", method=method, code=code)
