"""One CDP session: a tab's, a frame's, a worker's, or the browser's own.

A :class:`Session` owns what belongs to its session and nothing else: the commands it sent
and not answered yet, the subscriptions and waiters for its events, the domains enabled on
it, and its :class:`SessionState`. When Chrome detaches the session (its tab closed, its
frame went away, someone detached it), everything it owns ends at once: pending commands and
waiters fail with :class:`~ego.errors.TabClosedError`, subscriptions end, listeners are
dropped and the ``on_detach`` callbacks run. Nothing of it is left in the connection, which
only routes messages to the session they name.

A session and its connection talk through two small public interfaces: the session holds a
:class:`Link` (the event loop, command ids, the write to the channel, the default timeout),
and the connection calls the session's ``receive_answer``, ``receive_event``,
``chrome_detached``, ``connection_closed`` and ``resources``. Neither reaches into the other.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import Any, Final

import orjson

from ..errors import (
    BrowserClosedError,
    CommandTimeoutError,
    CommandTooLargeError,
    EgoError,
    ProtocolError,
    TabClosedError,
    TargetCrashedError,
)
from ._codec import encode_lenient
from ._commands import MAX_COMMAND_BYTES, Commands, Link, allowed
from ._events import JSON, EventHandler, Subscription, Waiter, count_entries, resolve_waiters

__all__ = [
    "MAX_COMMAND_BYTES",
    "Link",
    "Listener",
    "Session",
    "SessionState",
    "allowed",
]

logger = logging.getLogger("ego.transport")

_DEFAULT: Final = object()

# Commands a crashed tab's session still takes, answered by the browser without the renderer:
# a reload or navigation brings the tab back. So does the whole Fetch domain, which lives in
# the browser: a replay must serve the requests of that reload.
_AFTER_CRASH: Final = frozenset({"Page.reload", "Page.navigate", "Fetch."})

#: A listener's callback: ``callback(method, params)``, run inline as the event arrives.
ListenerCallback = Callable[[str, JSON], None]

#: What a refused command raises: ``error(what was not sent)``.
Refusal = Callable[[str], Exception]


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


class _Standing:
    """A session's state with what it refuses: the one field that says both, so that they
    never disagree. Every state but ``ATTACHED`` refuses commands (but those it lets pass)
    with its error."""

    __slots__ = ("error", "passing", "state")

    def __init__(
        self,
        state: SessionState,
        error: Refusal | None = None,
        passing: frozenset[str] = frozenset(),
    ) -> None:
        self.state = state
        self.error = error
        self.passing = passing

    def check(self, method: str) -> None:
        """Raise what a command ``method`` meets in this state (nothing when it goes out)."""
        if self.error is not None and not allowed(method, self.passing):
            raise self.error(f"{method} was not sent")


_ATTACHED: Final = _Standing(SessionState.ATTACHED)


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

    @property
    def methods(self) -> frozenset[str]:
        """The events the listener hears."""
        return self._methods

    def __call__(self, method: str, params: JSON) -> None:
        self._callback(method, params)

    def close(self) -> None:
        """Stop calling the callback. Idempotent."""
        self._session.stop_listening(self)


class Session:
    """A flattened CDP session on a :class:`~ego.protocol.transport.Connection`.

    The connection makes one for every session Chrome reports attached
    (``Target.attachedToTarget``), and :meth:`Connection.session` finds it by id;
    :attr:`Connection.root` is the browser's own, which never detaches. Commands go out with
    :meth:`send`; events come to :meth:`subscribe` handlers (each in its own task), to
    :meth:`listen` callbacks (inline) and to :meth:`expect` waiters.

    Attributes:
        id: Chrome's session id (None for the browser's own session).
        target_id: the target the session is attached to, when Chrome said.
        target_type: ``"page"``, ``"iframe"``, ``"worker"``, ... when Chrome said.
    """

    def __init__(
        self,
        link: Link,
        session_id: str | None,
        *,
        target_id: str = "",
        target_type: str = "",
    ) -> None:
        self._link = link
        self.id = session_id
        self.target_id = target_id
        self.target_type = target_type
        self._standing = _ATTACHED
        self._commands = Commands(link.loop)
        self._subscriptions: dict[str, list[Subscription]] = {}
        self._listeners: dict[str, list[Listener]] = {}
        self._waiters: dict[str, list[Waiter]] = {}
        self._enabled: dict[str, asyncio.Future[None]] = {}
        self._detach_callbacks: list[Callable[[], None]] = []

    def __repr__(self) -> str:
        state = self._standing.state.value
        return f"<Session {str(self.id)[:8]} {self.target_type or 'browser'} {state}>"

    @property
    def state(self) -> SessionState:
        """The session's :class:`SessionState`."""
        return self._standing.state

    @property
    def detached(self) -> bool:
        """True once Chrome detached the session (or the connection closed)."""
        return self._standing.state is SessionState.DETACHED

    @property
    def crashed(self) -> bool:
        """True while the renderer behind the session is crashed and not reloaded since."""
        return self._standing.state is SessionState.CRASHED

    @property
    def suspended(self) -> bool:
        """True while :meth:`suspend` holds the session."""
        return self._standing.state is SessionState.SUSPENDED

    # -- commands -------------------------------------------------------------------------

    async def send(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout: float | object | None = _DEFAULT,
    ) -> JSON:
        """Send one command on this session and return its ``result``.

        Args:
            method: the CDP method, e.g. ``"Runtime.evaluate"``.
            params: the command's parameters.
            timeout: seconds to wait for the answer; the connection's default if omitted;
                ``None`` waits without a bound (only for commands that end by themselves).

        Raises:
            ProtocolError: Chrome answered with an error.
            CommandTimeoutError: no answer within ``timeout``; the connection stays usable.
            TabClosedError: the session is detached (nothing was sent), detached before the
                answer, or Chrome said it has no such session.
            TargetCrashedError: the renderer crashed (before: nothing was sent, unless the
                method still goes through; or while waiting).
            whatever :meth:`suspend` was given: the session is suspended (nothing was sent),
                or was suspended while waiting.
            CommandTooLargeError: the command is larger than :data:`MAX_COMMAND_BYTES`;
                nothing was sent and the connection stays usable.
            BrowserClosedError: the connection is closed or closed while waiting.
            TypeError, ValueError: ``params`` cannot be serialised as JSON; nothing was sent.

        Cancelling the caller abandons the command: Chrome still runs it, and its answer is
        dropped when it arrives.
        """
        slow_motion = self._link.slow_motion
        if slow_motion is not None:
            await slow_motion.before(method)
        message_id, future = self._post(method, params, timeout)
        try:
            return await future
        finally:
            # Covers cancellation by the caller: the id must not linger.
            self._commands.entries.pop(message_id, None)

    def post(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout: float | object | None = _DEFAULT,
    ) -> asyncio.Future[JSON]:
        """Write one command now and return the future of its ``result``: what :meth:`send`
        does, for a caller that must have the command out before it writes the next one.
        Cancel the future to abandon the command.

        Raises:
            as :meth:`send` for a command refused before it is written; the future fails as
            :meth:`send` does after.
        """
        message_id, future = self._post(method, params, timeout)
        entries = self._commands.entries
        future.add_done_callback(lambda _: entries.pop(message_id, None))
        return future

    def send_unawaited(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        """Send a command whose answer nobody waits for (a release, a detach): the session
        holds it until it is answered, times out or the session ends. Raises nothing: a
        session that refuses it, or an answer that is an error, is of no concern to anyone.
        """
        try:
            _, future = self._post(method, params, _DEFAULT)
        except (EgoError, TypeError, ValueError) as exc:
            logger.debug("%s not sent: %s", method, exc)
            return
        future.add_done_callback(_read_quietly)

    def _post(
        self, method: str, params: Mapping[str, Any] | None, timeout: float | object | None
    ) -> tuple[int, asyncio.Future[JSON]]:
        """Write the command and keep its future among the session's commands."""
        standing = self._standing
        if standing is not _ATTACHED:
            standing.check(method)
        link = self._link
        message_id = next(link.ids)
        message: JSON = {"id": message_id, "method": method}
        if params:
            message["params"] = params
        if self.id is not None:
            message["sessionId"] = self.id
        # An error from here to the write leaves nothing pending behind.
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
        future: asyncio.Future[JSON] = link.loop.create_future()
        self._commands.add(
            message_id,
            future,
            method,
            link.default_timeout if timeout is _DEFAULT else timeout,  # type: ignore[arg-type]
        )
        # When the channel is already closing, its close fails the future with the reason.
        link.write(data)
        return message_id, future

    def check(self, method: str) -> None:
        """Raise what a command ``method`` would meet now (nothing when it would be sent)."""
        self._standing.check(method)

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
        return self._add(Subscription(self._unsubscribe, (method,), handler))

    def subscribe_all(
        self, methods: Sequence[str], handler: Callable[[str, JSON], Awaitable[None] | None]
    ) -> Subscription:
        """Call ``handler(method, params)`` for every event of any of ``methods``, in the order
        Chrome sent them across methods."""
        return self._add(Subscription(self._unsubscribe, tuple(methods), handler, with_method=True))

    def subscribe_each(self, handlers: Mapping[str, Callable[[JSON], None]]) -> Subscription:
        """:meth:`subscribe_all` with a handler of its own for each method."""

        def handle(method: str, params: JSON) -> None:
            handlers[method](params)

        return self.subscribe_all(list(handlers), handle)

    def _add(self, subscription: Subscription) -> Subscription:
        if self.detached:
            subscription.end()  # nothing will come: its task ends at once
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
        if not self.detached:
            for method in listener.methods:
                self._listeners.setdefault(method, []).append(listener)
        return listener

    def stop_listening(self, listener: Listener) -> None:
        """Remove ``listener`` (what :meth:`Listener.close` does). Idempotent."""
        for method in listener.methods:
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
        first (BrowserClosedError when the connection closes), or as the session's state says
        when it crashes or is suspended; cancel it to give up."""
        future: asyncio.Future[JSON] = self._link.loop.create_future()
        standing = self._standing
        if standing.state is SessionState.DETACHED:
            assert standing.error is not None
            future.set_exception(standing.error(f"stopped waiting for {method}"))
        else:
            waiter = Waiter(method, predicate, future)
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
        if self.detached:
            callback()
        else:
            self._detach_callbacks.append(callback)

    # -- state ----------------------------------------------------------------------------

    def suspend(self, error: Refusal, *, allow: Collection[str] = ()) -> None:
        """Fail what is pending on the session now, and refuse later commands, until
        :meth:`resume`.

        Each pending command and waiter fails with ``error(what was cut)``, and each later
        command raises ``error(what was not sent)`` without being sent. Commands (and awaited
        events) that ``allow`` names pass: method names, and domain prefixes ending in a dot
        (``"Fetch."``). A crash or a detach meanwhile ends the suspension with its own error.
        """
        if self.state in (SessionState.DETACHED, SessionState.CRASHED):
            return
        self._standing = _Standing(SessionState.SUSPENDED, error, frozenset(allow))
        self._fail(error, self._standing.passing)

    def resume(self) -> None:
        """End :meth:`suspend`; idempotent."""
        if self.suspended:
            self._standing = _ATTACHED

    # -- what the connection calls --------------------------------------------------------

    def receive_answer(self, message_id: int, message: JSON) -> bool:
        """Settle the command ``message_id`` with Chrome's answer ``message``; False when it is
        not one of this session's commands waiting (it timed out, was cancelled, or is
        another session's)."""
        entry = self._commands.entries.pop(message_id, None)
        if entry is None:
            return False
        future = entry.future
        if not future.done():
            error = message.get("error")
            if error is None:
                future.set_result(message.get("result", {}))
            else:
                future.set_exception(self._refused(entry.method, error))
        return True

    def receive_event(self, method: str, params: JSON) -> None:
        """Hand an event of this session to its listeners, subscriptions and waiters, and
        follow what it says of the renderer (a crash, a reload after one)."""
        listeners = self._listeners.get(method)
        if listeners:
            for listener in list(listeners):
                try:
                    listener(method, params)
                except Exception:
                    logger.exception("event listener for %s failed", method)
        subscriptions = self._subscriptions.get(method)
        if subscriptions:
            for subscription in subscriptions:
                subscription.push(method, params)
        waiters = self._waiters.get(method)
        if waiters:
            resolve_waiters(waiters, params)
        if method == "Inspector.targetCrashed":
            self._crash()
        elif method == "Inspector.targetReloadedAfterCrash" and self.crashed:
            self._standing = _ATTACHED

    def chrome_detached(self) -> None:
        """Chrome detached the session: end everything it owns."""
        if self.detached:
            return
        self._standing = _Standing(SessionState.DETACHED, self._closed_error)
        self._fail(self._closed_error, frozenset())
        self._end()
        callbacks, self._detach_callbacks = self._detach_callbacks, []
        for callback in callbacks:
            try:
                callback()
            except Exception:
                logger.exception("detach callback failed")

    def connection_closed(self, reason: str) -> None:
        """The connection closed: every command and waiter fails with BrowserClosedError,
        and so does every later call; the rest ends (no detach callback runs: nothing
        detached)."""
        if self.detached:
            return

        def closed(what: str) -> Exception:
            return BrowserClosedError(reason)

        self._standing = _Standing(SessionState.DETACHED, closed)
        self._detach_callbacks.clear()
        self._fail(closed, frozenset())
        self._end()

    def resources(self) -> dict[str, int]:
        """What the session holds now: subscriptions, listeners, waiters, commands pending."""
        return {
            "subscriptions": count_entries(self._subscriptions),
            "listeners": count_entries(self._listeners),
            "waiters": count_entries(self._waiters),
            "pending": len(self._commands.entries),
        }

    def _refused(self, method: str, error: JSON) -> EgoError:
        """What a command ``method`` that Chrome answered with ``error`` raises."""
        code = error.get("code")
        text = error.get("message", "unknown error")
        if self.id is not None and text.startswith("Session with given id not found"):
            # A session Chrome dropped before this process heard of it: the tab is gone.
            return TabClosedError(
                f"{method} failed: the tab's session {self.id[:8]} is gone (the tab closed or "
                "was detached); open a new tab and retry"
            )
        data = error.get("data")
        detail = f" ({data})" if data else ""
        return ProtocolError(f"{method} failed: {text}{detail}", method=method, code=code)

    def _crash(self) -> None:
        if self.detached:
            return
        crashed = (
            f"the renderer of the tab (session {str(self.id)[:8]}) crashed or was killed; "
            "reload the tab (tab.reload()) or close it"
        )

        def error(what: str) -> Exception:
            return TargetCrashedError(f"{what}: {crashed}")

        self._standing = _Standing(SessionState.CRASHED, error, _AFTER_CRASH)
        self._fail(error, frozenset())

    def _closed_error(self, what: str) -> Exception:
        target = self.target_id or str(self.id)
        return TabClosedError(
            f"{what}: the tab {target} closed or detached; open a new tab and retry"
        )

    def _end(self) -> None:
        """Drop subscriptions, listeners and enables (the session detached, or the
        connection closed)."""
        subscriptions = {id(s): s for group in self._subscriptions.values() for s in group}
        self._subscriptions.clear()
        for subscription in subscriptions.values():
            subscription.end()  # ends after the events already queued
        self._listeners.clear()
        for future in self._enabled.values():
            if not future.done():
                future.cancel()
        self._enabled.clear()
        self._commands.stop()

    def _fail(self, error: Refusal, allow: frozenset[str]) -> None:
        """Fail every command and waiter of the session with ``error(what was cut)``, but
        those whose method ``allow`` names."""
        self._commands.fail(error, allow)
        for method, waiters in list(self._waiters.items()):
            if allowed(method, allow):
                continue
            for waiter in waiters:
                if not waiter.future.done():
                    waiter.future.set_exception(error(f"stopped waiting for {method}"))
            del self._waiters[method]


def _read_quietly(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()  # read: nobody waits for this answer
