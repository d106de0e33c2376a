"""Event delivery for sessions and the connection: subscriptions that feed a handler from
their own queue and task, and one-shot waiters.

The connection's read loop only puts events here; nothing in this module runs a handler in
that loop.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

__all__ = [
    "JSON",
    "EventHandler",
    "Subscription",
    "Waiter",
    "count_entries",
    "resolve_waiters",
]

logger = logging.getLogger("ego.transport")

JSON = dict[str, Any]
EventHandler = Callable[[JSON], Awaitable[None] | None]


class Subscription:
    """A registered event handler; :meth:`close` unregisters it.

    Each subscription owns a queue and a task that feeds the handler, so a slow handler only
    delays itself: the read loop never waits for it, and neither do responses or other
    subscribers. A handler that raises is logged and keeps receiving later events.
    """

    def __init__(
        self,
        unsubscribe: Callable[[Subscription], None],
        methods: tuple[str, ...],
        handler: Callable[..., Awaitable[None] | None],
        *,
        with_method: bool = False,
    ) -> None:
        self._unsubscribe = unsubscribe
        self.methods = methods
        self.method = methods[0]
        self._handler = handler
        self._with_method = with_method
        self._queue: asyncio.Queue[tuple[str, JSON] | None] = asyncio.Queue()
        self._task = asyncio.get_running_loop().create_task(self._run())

    def push(self, method: str, params: JSON) -> None:
        """Queue an event for the handler (what the session or connection does as it
        arrives)."""
        self._queue.put_nowait((method, params))

    def end(self) -> None:
        """Let the handler see the events queued so far, then end the task (its session or
        connection ended)."""
        self._queue.put_nowait(None)

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
        self._unsubscribe(self)
        self._task.cancel()


class Waiter:
    """A one-shot wait for the next ``method`` event that satisfies ``predicate``; its session
    (or the connection) resolves or fails ``future``."""

    __slots__ = ("future", "method", "predicate")

    def __init__(
        self,
        method: str,
        predicate: Callable[[JSON], bool] | None,
        future: asyncio.Future[JSON],
    ) -> None:
        self.method = method
        self.predicate = predicate
        self.future = future


def resolve_waiters(waiters: list[Waiter], params: JSON) -> None:
    """Settle the ``waiters`` (of one event's method) that ``params`` satisfies; a waiter
    whose predicate raises fails with that error."""
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


def count_entries(registry: Mapping[str, list[Any]]) -> int:
    """How many distinct entries a registry by method holds."""
    return len({id(entry) for entries in registry.values() for entry in entries})
