"""Event delivery for :class:`~ego.protocol.transport.Connection`: subscriptions that feed a
handler from their own queue and task, and one-shot waiters.

The connection's read loop only puts events here; nothing in this module runs a handler in
that loop.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final

__all__ = ["ANY_SESSION", "JSON", "AnySession", "EventHandler", "Subscription", "Waiter"]

logger = logging.getLogger("ego.transport")

JSON = dict[str, Any]
EventHandler = Callable[[JSON], Awaitable[None] | None]


class AnySession:
    """The type of :data:`ANY_SESSION`."""

    def __repr__(self) -> str:
        return "ANY_SESSION"


#: Pass as ``session_id`` to hear an event from the browser and from every tab.
ANY_SESSION: Final = AnySession()


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
        session_id: str | AnySession | None,
        handler: Callable[..., Awaitable[None] | None],
        *,
        with_method: bool = False,
    ) -> None:
        self._unsubscribe = unsubscribe
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
        self._unsubscribe(self)
        self._task.cancel()


class Waiter:
    """A one-shot wait for the next ``method`` event from ``session_id`` that satisfies
    ``predicate``; the connection resolves or fails ``future``."""

    __slots__ = ("future", "method", "predicate", "session_id")

    def __init__(
        self,
        method: str,
        session_id: str | AnySession | None,
        predicate: Callable[[JSON], bool] | None,
        future: asyncio.Future[JSON],
    ) -> None:
        self.method = method
        self.session_id = session_id
        self.predicate = predicate
        self.future = future
