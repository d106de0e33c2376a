"""One CDP session: a tab's, a frame's, a worker's, or the browser's own.

A :class:`Session` owns what belongs to its session and nothing else: the subscriptions and
waiters for its events, the domains enabled on it, and its :class:`SessionState`. When Chrome
detaches the session (its tab closed, its frame went away, someone detached it), everything it
owns ends at once: pending commands and waiters fail with :class:`~ego.errors.TabClosedError`,
subscriptions end, listeners are dropped and the ``on_detach`` callbacks run. Nothing of it is
left in the connection, which only routes messages to the session they name.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import Any, Final, Protocol

from ..errors import CommandTimeoutError, TabClosedError, TargetCrashedError
from ._events import JSON, EventHandler, Subscription, Waiter

__all__ = ["Listener", "Router", "Session", "SessionState", "allowed"]

logger = logging.getLogger("ego.transport")

_DEFAULT: Final = object()

# Commands a crashed tab's session still takes, answered by the browser without the renderer:
# a reload or navigation brings the tab back. So does the whole Fetch domain, which lives in
# the browser: a replay must serve the requests of that reload.
_AFTER_CRASH: Final = frozenset({"Page.reload", "Page.navigate", "Fetch."})

#: A listener's callback: ``callback(method, params)``, run inline as the event arrives.
ListenerCallback = Callable[[str, JSON], None]


class Router(Protocol):
    """What a session needs of the connection that routes its messages
    (:class:`~ego.protocol.transport.Connection`)."""

    default_timeout: float
    _loop: asyncio.AbstractEventLoop

    @property
    def closed(self) -> bool: ...

    async def send(
        self,
        method: str,
        params: Mapping[str, Any] | None = ...,
        *,
        session_id: str | None = ...,
        timeout: float | object | None = ...,
    ) -> JSON: ...

    def _fail_pending(
        self,
        session_id: str | None,
        error: Callable[[str], Exception],
        allow: frozenset[str] = ...,
    ) -> None: ...

    def _fail_closed(self, future: asyncio.Future[Any]) -> None: ...


class SessionState(enum.Enum):
    """Where a session stands.

    ``ATTACHED``: it takes commands. ``SUSPENDED``: on purpose, for a while (a page dialog
    waits for its caller); commands fail at once but those allowed. ``CRASHED``: its
    renderer died; only a reload or navigation (and the Fetch domain) goes through until
    Chrome reports the tab reloaded. ``DETACHED``: for good; nothing goes through.
    """

    ATTACHED = "attached"
    SUSPENDED = "suspended"
    CRASHED = "crashed"
    DETACHED = "detached"


class Listener:
    """An inline event callback of a session; :meth:`close` removes it.

    Unlike a :class:`~ego.protocol._events.Subscription`, a listener runs in the read path,
    as the event is dispatched, before any response that arrived after the event resolves its
    caller. It is for bookkeeping that must be current when a call's answer is seen (which
    frames exist, which document a load reached): it must be quick, must not block and must
    not await. An exception it raises is logged.
    """

    __slots__ = ("_callback", "_methods", "_session")

    def __init__(self, session: Session, methods: frozenset[str], callback: ListenerCallback):
        self._session = session
        self._methods = methods
        self._callback = callback

    def close(self) -> None:
        """Stop calling the callback. Idempotent."""
        self._session._drop_listener(self)


class Session:
    """A flattened CDP session on a :class:`~ego.protocol.transport.Connection`.

    Get one with :meth:`Connection.session` (the connection makes one for every session Chrome
    reports attached) or :attr:`Connection.root` (the browser's own, which never detaches).
    Commands go out with :meth:`send`; events come to :meth:`subscribe` handlers (each in its
    own task), to :meth:`listen` callbacks (inline) and to :meth:`expect` waiters.

    Attributes:
        id: Chrome's session id (None for the browser's own session).
        target_id: the target the session is attached to, when Chrome said.
        target_type: ``"page"``, ``"iframe"``, ``"worker"``, ... when Chrome said.
    """

    def __init__(
        self,
        connection: Router,
        session_id: str | None,
        *,
        target_id: str = "",
        target_type: str = "",
    ) -> None:
        self._connection = connection
        self.id = session_id
        self.target_id = target_id
        self.target_type = target_type
        self._state = SessionState.ATTACHED
        # Set while the session refuses commands: what to raise, and what still passes.
        self._refusal: tuple[Callable[[str], Exception], frozenset[str]] | None = None
        self._subscriptions: dict[str, list[Subscription]] = {}
        self._listeners: dict[str, list[Listener]] = {}
        self._waiters: dict[str, list[Waiter]] = {}
        self._enabled: dict[str, asyncio.Future[None]] = {}
        self._detach_callbacks: list[Callable[[], None]] = []

    def __repr__(self) -> str:
        return f"<Session {str(self.id)[:8]} {self.target_type or 'browser'} {self._state.value}>"

    @property
    def connection(self) -> Router:
        """The connection the session lives on."""
        return self._connection

    @property
    def state(self) -> SessionState:
        """The session's :class:`SessionState`."""
        return self._state

    @property
    def detached(self) -> bool:
        """True once Chrome detached the session (or the connection closed)."""
        return self._state is SessionState.DETACHED

    @property
    def crashed(self) -> bool:
        """True while the renderer behind the session is crashed and not reloaded since."""
        return self._state is SessionState.CRASHED

    @property
    def suspended(self) -> bool:
        """True while :meth:`suspend` holds the session."""
        return self._state is SessionState.SUSPENDED

    # -- commands -------------------------------------------------------------------------

    async def send(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout: float | object | None = _DEFAULT,
    ) -> JSON:
        """Send one command on this session and return its result.

        Raises:
            TabClosedError: the session is detached (nothing was sent) or detached before
                the answer.
            TargetCrashedError: the renderer crashed (before: nothing was sent, unless the
                method still goes through; or while waiting).
            whatever :meth:`suspend` was given: the session is suspended.
            ProtocolError, CommandTimeoutError, CommandTooLargeError, BrowserClosedError:
                as :meth:`Connection.send`.
        """
        if self._refusal is not None:
            self.check(method)
        connection = self._connection
        return await connection.send(
            method,
            params,
            session_id=self.id,
            timeout=connection.default_timeout if timeout is _DEFAULT else timeout,
        )

    def check(self, method: str) -> None:
        """Raise what a command ``method`` would meet now (nothing when it would be sent)."""
        refusal = self._refusal
        if refusal is not None:
            error, passing = refusal
            if not allowed(method, passing):
                raise error(f"{method} was not sent")

    async def enable(self, *domains: str) -> None:
        """Send ``Domain.enable`` for each domain not enabled on this session yet; concurrent
        calls for one domain share its one command.

        Raises:
            as :meth:`send`; a domain whose enable failed is tried again on the next call.
        """
        await asyncio.gather(*(self._enable(domain) for domain in domains))

    async def _enable(self, domain: str) -> None:
        future = self._enabled.get(domain)
        if future is None:
            future = asyncio.ensure_future(self.send(f"{domain}.enable"))  # type: ignore[arg-type]
            self._enabled[domain] = future
        try:
            await asyncio.shield(future)
        except BaseException:
            if future.done() and (future.cancelled() or future.exception() is not None):
                self._enabled.pop(domain, None)
            raise

    def enabled(self, domain: str) -> bool:
        """True once ``Domain.enable`` succeeded on this session."""
        future = self._enabled.get(domain)
        return (
            future is not None
            and future.done()
            and not future.cancelled()
            and (future.exception() is None)
        )

    # -- events ---------------------------------------------------------------------------

    def subscribe(self, method: str, handler: EventHandler) -> Subscription:
        """Call ``handler(params)`` for every ``method`` event of this session, in a task of
        its own (see :class:`~ego.protocol._events.Subscription`). It ends when the session
        detaches, after the events received before that."""
        subscription = Subscription(self._unsubscribe, (method,), self.id, handler)
        return self._add(subscription)

    def subscribe_all(
        self, methods: Sequence[str], handler: Callable[[str, JSON], Awaitable[None] | None]
    ) -> Subscription:
        """Call ``handler(method, params)`` for every event of any of ``methods``, in the order
        Chrome sent them across methods."""
        subscription = Subscription(
            self._unsubscribe, tuple(methods), self.id, handler, with_method=True
        )
        return self._add(subscription)

    def subscribe_each(self, handlers: Mapping[str, Callable[[JSON], None]]) -> Subscription:
        """:meth:`subscribe_all` with a handler of its own for each method."""

        def handle(method: str, params: JSON) -> None:
            handlers[method](params)

        return self.subscribe_all(list(handlers), handle)

    def _add(self, subscription: Subscription) -> Subscription:
        if self._state is SessionState.DETACHED:
            subscription._push(None)  # nothing will come: its task ends at once
            return subscription
        for method in subscription.methods:
            self._subscriptions.setdefault(method, []).append(subscription)
        return subscription

    def _unsubscribe(self, subscription: Subscription) -> None:
        for method in subscription.methods:
            subscriptions = self._subscriptions.get(method)
            if subscriptions and subscription in subscriptions:
                subscriptions.remove(subscription)
                if not subscriptions:
                    del self._subscriptions[method]

    def listen(self, methods: Collection[str], callback: ListenerCallback) -> Listener:
        """Call ``callback(method, params)`` inline for every event of ``methods`` (see
        :class:`Listener`). Dropped when the session detaches."""
        listener = Listener(self, frozenset(methods), callback)
        if self._state is not SessionState.DETACHED:
            for method in listener._methods:
                self._listeners.setdefault(method, []).append(listener)
        return listener

    def _drop_listener(self, listener: Listener) -> None:
        for method in listener._methods:
            listeners = self._listeners.get(method)
            if listeners and listener in listeners:
                listeners.remove(listener)
                if not listeners:
                    del self._listeners[method]

    def expect(
        self, method: str, predicate: Callable[[JSON], bool] | None = None
    ) -> asyncio.Future[JSON]:
        """A future for the next ``method`` event of this session that satisfies
        ``predicate`` (which runs in the read path and must be quick). Register it before the
        command that causes the event. It fails with TabClosedError when the session detaches
        first, or as the session's state says when it crashes or is suspended; cancel it to
        give up."""
        future: asyncio.Future[JSON] = self._connection._loop.create_future()
        if self._connection.closed:
            self._connection._fail_closed(future)
        elif self._state is SessionState.DETACHED:
            future.set_exception(self._closed_error(f"stopped waiting for {method}"))
        else:
            waiter = Waiter(method, self.id, predicate, future)
            self._waiters.setdefault(method, []).append(waiter)
            # A waiter given up on (cancelled) leaves at once, not at the next such event,
            # which may never come: a tab that lives for days must not collect them.
            future.add_done_callback(lambda _: self._forget(waiter))
        return future

    def _forget(self, waiter: Waiter) -> None:
        waiters = self._waiters.get(waiter.method)
        if waiters is not None:
            with contextlib.suppress(ValueError):
                waiters.remove(waiter)
            if not waiters:
                del self._waiters[waiter.method]

    async def wait_for(
        self,
        method: str,
        predicate: Callable[[JSON], bool] | None = None,
        *,
        timeout: float,
    ) -> JSON:
        """Wait for the next ``method`` event of this session that satisfies ``predicate``.

        Raises:
            CommandTimeoutError: no such event within ``timeout`` seconds.
            TabClosedError, BrowserClosedError: the session or the connection ended first.
        """
        future = self.expect(method, predicate)
        try:
            return await asyncio.wait_for(future, timeout)
        except TimeoutError:
            raise CommandTimeoutError(f"no {method} event within {timeout:g} s") from None

    def on_detach(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (inline, once) when Chrome detaches the session; at once when
        that happened already. Not when the whole connection closes: every call then fails
        with BrowserClosedError instead."""
        if self._state is SessionState.DETACHED:
            callback()
        else:
            self._detach_callbacks.append(callback)

    # -- state ----------------------------------------------------------------------------

    def suspend(self, error: Callable[[str], Exception], *, allow: Collection[str] = ()) -> None:
        """Fail what is pending on the session now, and refuse later commands, until
        :meth:`resume`.

        Each pending command and waiter fails with ``error(what was cut)``, and each later
        command raises ``error(what was not sent)`` without being sent. Commands (and awaited
        events) that ``allow`` names pass: method names, and domain prefixes ending in a dot
        (``"Fetch."``). A crash or a detach meanwhile ends the suspension with its own error.
        """
        if self._state in (SessionState.DETACHED, SessionState.CRASHED):
            return
        passing = frozenset(allow)
        self._state = SessionState.SUSPENDED
        self._refusal = (error, passing)
        self._fail(error, passing)

    def resume(self) -> None:
        """End :meth:`suspend`; idempotent."""
        if self._state is SessionState.SUSPENDED:
            self._state = SessionState.ATTACHED
            self._refusal = None

    # -- what the connection calls --------------------------------------------------------

    @staticmethod
    def _count(registry: Mapping[str, list[Any]]) -> int:
        """How many distinct entries a registry by method holds."""
        return len({id(entry) for entries in registry.values() for entry in entries})

    def _dispatch(self, method: str, params: JSON) -> None:
        listeners = self._listeners.get(method)
        if listeners:
            for listener in list(listeners):
                try:
                    listener._callback(method, params)
                except Exception:
                    logger.exception("event listener for %s failed", method)
        subscriptions = self._subscriptions.get(method)
        if subscriptions:
            for subscription in subscriptions:
                subscription._push((method, params))
        waiters = self._waiters.get(method)
        if waiters:
            _resolve(waiters, params)
        if method == "Inspector.targetCrashed":
            self._crash()
        elif method == "Inspector.targetReloadedAfterCrash" and self.crashed:
            self._state = SessionState.ATTACHED
            self._refusal = None

    def _crash(self) -> None:
        if self._state is SessionState.DETACHED:
            return
        crashed = (
            f"the renderer of the tab (session {str(self.id)[:8]}) crashed or was killed; "
            "reload the tab (tab.reload()) or close it"
        )

        def error(what: str) -> Exception:
            return TargetCrashedError(f"{what}: {crashed}")

        self._state = SessionState.CRASHED
        self._refusal = (error, _AFTER_CRASH)
        self._fail(error, frozenset())

    def _closed_error(self, what: str) -> TabClosedError:
        target = self.target_id or str(self.id)
        return TabClosedError(
            f"{what}: the tab {target} closed or detached; open a new tab and retry"
        )

    def _detach(self) -> None:
        """Chrome detached the session: end everything it owns."""
        if self._state is SessionState.DETACHED:
            return
        self._state = SessionState.DETACHED
        self._refusal = (self._closed_error, frozenset())
        self._fail(self._closed_error, frozenset())
        self._end()

    def _end(self) -> None:
        """Drop subscriptions, listeners and waiters and run the detach callbacks (the
        session detached, or the connection closed)."""
        self._state = SessionState.DETACHED
        subscriptions = {id(s): s for group in self._subscriptions.values() for s in group}
        self._subscriptions.clear()
        for subscription in subscriptions.values():
            subscription._push(None)  # ends after the events already queued
        self._listeners.clear()
        for future in self._enabled.values():
            if not future.done():
                future.cancel()
        self._enabled.clear()
        callbacks, self._detach_callbacks = self._detach_callbacks, []
        for callback in callbacks:
            try:
                callback()
            except Exception:
                logger.exception("detach callback failed")

    def _fail(self, error: Callable[[str], Exception], allow: frozenset[str]) -> None:
        """Fail every command and waiter of the session with ``error(what was cut)``, but
        those whose method ``allow`` names."""
        self._connection._fail_pending(self.id, error, allow)
        for method, waiters in list(self._waiters.items()):
            if allowed(method, allow):
                continue
            for waiter in waiters:
                if not waiter.future.done():
                    waiter.future.set_exception(error(f"stopped waiting for {method}"))
            del self._waiters[method]

    def _connection_closed(self, error: Callable[[], Exception]) -> None:
        """The connection closed: fail the waiters with ``error()`` and end the rest."""
        waiters = [waiter for group in self._waiters.values() for waiter in group]
        self._waiters.clear()
        for waiter in waiters:
            if not waiter.future.done():
                waiter.future.set_exception(error())
        self._refusal = None
        self._detach_callbacks.clear()  # nothing detached: calls now fail as the browser's
        self._end()


def _resolve(waiters: list[Waiter], params: JSON) -> None:
    for waiter in list(waiters):
        if waiter.future.done():
            waiters.remove(waiter)
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


def allowed(method: str, allow: frozenset[str]) -> bool:
    """True when ``allow`` names ``method`` or its domain (``"Fetch."``)."""
    return bool(allow) and (method in allow or method[: method.find(".") + 1] in allow)
