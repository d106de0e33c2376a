"""``pool.map``: one call per input over the whole pool, lazily read, bounded, ordered or not.

Inputs are read one at a time, at most ``concurrency`` calls run at once, an ordered map
runs at most a window of ``4 * concurrency`` inputs ahead of the oldest result not yet
given, every per-item error is captured in its :class:`PoolResult`, and leaving early
cancels the calls still running.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    AsyncIterator,
    Callable,
    Generator,
    Iterable,
)
from types import TracebackType
from typing import Any

from ..calls import ToolCall
from ..errors import PoolExhaustedError
from .retry import Runner
from .types import PoolResult

__all__ = ["PoolMap"]

_END = object()


class PoolMap:
    """What :meth:`BrowserPool.map` returns: ``async for`` it, or ``await`` it for a list.

    Iterate it once. ``await pool.map(...)`` always gives the results in input order.
    ``aclose()`` (or ``async with``) stops it early and cancels the calls still running.
    """

    def __init__(
        self,
        runner: Runner,
        inputs: Iterable[Any] | AsyncIterable[Any],
        prepare: Callable[[Any], ToolCall],
        *,
        ordered: bool,
        on_send: Callable[[int], None] | None,
    ) -> None:
        self._runner = runner
        self._inputs = inputs
        self._prepare = prepare
        self._ordered = ordered
        self._on_send = on_send
        self._iterator: AsyncIterator[PoolResult] | None = None
        # The calls running now; aclose() cancels them even if the iterator cannot be closed.
        self._tasks: set[asyncio.Task[PoolResult]] = set()
        self._reading: asyncio.Task[Any] | None = None
        self._stopped = False

    def __aiter__(self) -> AsyncIterator[PoolResult]:
        if self._iterator is not None:
            raise RuntimeError("a pool.map() result can be iterated once")
        self._iterator = self._run()
        return self._iterator

    def __await__(self) -> Generator[Any, None, list[PoolResult]]:
        return self._collect().__await__()

    async def _collect(self) -> list[PoolResult]:
        self._ordered = True
        return [item async for item in self]

    async def __aenter__(self) -> PoolMap:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop: cancel the calls still running. Idempotent."""
        self._stopped = True
        close = getattr(self._iterator, "aclose", None)
        try:
            if close is not None:
                await close()
        except RuntimeError:
            # Another task is inside the iteration right now: the generator cannot be
            # closed from here, but its calls can be cancelled, which ends that iteration.
            pass
        finally:
            await self._stop_tasks()

    async def _stop_tasks(self) -> None:
        tasks: list[asyncio.Task[Any]] = list(self._tasks)
        self._tasks.clear()
        if self._reading is not None:
            tasks.append(self._reading)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _one(self, index: int, item: Any) -> PoolResult:
        started = time.perf_counter()
        attempts = [0]
        on_send = self._on_send
        args = item
        try:
            call = self._prepare(item)
            args = call.args if isinstance(item, ToolCall) else item
            value, count, browser = await self._runner.run(
                call,
                on_send=(lambda: on_send(index)) if on_send is not None else None,
                attempts_out=attempts,
            )
        except PoolExhaustedError:
            raise
        except Exception as exc:
            if self._runner.closing:
                raise
            return PoolResult(
                index,
                args,
                False,
                error=exc,
                ms=(time.perf_counter() - started) * 1000,
                attempts=attempts[0],
            )
        return PoolResult(
            index,
            args,
            True,
            result=value,
            ms=(time.perf_counter() - started) * 1000,
            attempts=count,
            browser=browser,
        )

    async def _run(self) -> AsyncIterator[PoolResult]:
        runner = self._runner
        runner.scheduler.check_started()
        # One task per call and one for reading the next input, all owned by this generator
        # and waited on together. There is no lock or condition shared between tasks: a
        # cancelled waiter that must re-acquire a shared asyncio lock is how an early exit
        # used to deadlock.
        loop = asyncio.get_running_loop()
        source = _as_async_iterator(self._inputs)
        ordered = self._ordered
        limit = runner.concurrency
        window = 4 * limit
        calls = self._tasks
        exhausted = False
        issued = next_out = 0
        buffer: dict[int, PoolResult] = {}
        try:
            while True:
                # Bounded reorder buffer: an ordered map does not run far ahead of a slow item.
                room = not ordered or issued - next_out < window
                reading = self._reading
                if reading is None and not exhausted and len(calls) < limit and room:
                    reading = self._reading = loop.create_task(_next_input(source))
                pending: set[asyncio.Task[Any]] = set(calls)
                if reading is not None:
                    pending.add(reading)
                if not pending:
                    break
                done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                if self._stopped:
                    return  # aclose() from another task while this one waited
                finished: list[PoolResult] = []
                fatal: BaseException | None = None
                for task in done - {reading}:
                    calls.discard(task)
                    if task.cancelled():
                        continue  # stopped by aclose() from another task
                    error = task.exception()
                    if error is not None:
                        fatal = fatal or error
                    else:
                        finished.append(task.result())
                if reading is not None and reading in done:
                    self._reading = None
                    # An error reading the inputs comes after the results that finished
                    # with it, as a failing call does. (Only aclose() cancels this task,
                    # and then the loop has returned above.)
                    error = reading.exception()
                    if error is not None:
                        fatal = fatal or error
                    elif reading.result() is _END:
                        exhausted = True
                    elif fatal is None:
                        calls.add(loop.create_task(self._one(issued, reading.result())))
                        issued += 1
                if not ordered:
                    for result in finished:
                        yield result
                else:
                    for result in finished:
                        buffer[result.index] = result
                    while next_out in buffer:
                        yield buffer.pop(next_out)
                        next_out += 1
                if fatal is not None:
                    raise fatal
        finally:
            await self._stop_tasks()
            # Nothing to swallow here: ``source`` is this module's own generator, and with its
            # read task ended above it is finished or waits at a ``yield``, so closing it
            # cannot fail (the caller's iterable is not closed through it).
            await source.aclose()


async def _next_input(source: AsyncGenerator[Any, None]) -> Any:
    try:
        return await source.__anext__()
    except StopAsyncIteration:
        # A sentinel, not the exception: StopAsyncIteration re-raised inside the map's own
        # async generator would turn into a RuntimeError (PEP 525).
        return _END


async def _as_async_iterator(
    inputs: Iterable[Any] | AsyncIterable[Any],
) -> AsyncGenerator[Any, None]:
    if isinstance(inputs, AsyncIterable):
        async for item in inputs:
            yield item
    else:
        for item in inputs:
            yield item
