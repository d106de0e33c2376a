"""``pool.map``: one call per input over the whole pool, lazily read, bounded, ordered or not.

Inputs are read one at a time, at most ``concurrency`` calls run at once, a map runs at most
a window of ``4 * concurrency`` inputs ahead of the results its consumer took (in input order
for an ordered map: the oldest one not yet given holds the rest back), every per-item error
is captured in its :class:`PoolResult`, and leaving early cancels the calls still running.
Results come one by one (``async for``) or in the groups that finished together
(:meth:`PoolMap.groups`).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    AsyncIterator,
    Callable,
    Generator,
    Iterable,
    Iterator,
)
from types import TracebackType
from typing import Any

from ..calls import ToolCall
from ..errors import PoolExhaustedError
from .retry import Runner
from .types import PoolResult

__all__ = ["PoolMap"]

_END = object()
_WAIT = object()


class PoolMap:
    """What :meth:`BrowserPool.map` returns: ``async for`` it, ``await`` it for a list, or
    ``async for group in ...groups()`` for the results in groups.

    Iterate it once. ``await pool.map(...)`` always gives the results in input order.
    ``aclose()`` (or ``async with``) stops it early and cancels the calls still running,
    also from another task than the one iterating (its iteration then ends).
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
        self._iterator: AsyncIterator[Any] | None = None
        # The workers running calls now; aclose() cancels them even if the iterator cannot
        # be closed.
        self._tasks: set[asyncio.Task[None]] = set()
        self._stopped = False

    def __aiter__(self) -> AsyncIterator[PoolResult]:
        iterator = self._items()
        self._iterate(iterator)
        return iterator

    def groups(self) -> AsyncIterator[list[PoolResult]]:
        """Iterate the results in groups instead of one by one.

        Each group is a non-empty list of the results that were ready together (in input
        order for an ordered map), so a consumer that writes results somewhere can write a
        group at once, before anything else runs. Everything else is as for ``async for``;
        iterate either once.

        Raises:
            RuntimeError: the map was iterated already.
        """
        iterator = self._groups()
        self._iterate(iterator)
        return iterator

    def _iterate(self, iterator: AsyncIterator[Any]) -> None:
        if self._iterator is not None:
            raise RuntimeError("a pool.map() result can be iterated once")
        self._iterator = iterator

    def __await__(self) -> Generator[Any, None, list[PoolResult]]:
        return self._collect().__await__()

    async def _collect(self) -> list[PoolResult]:
        # Every result is kept until the end anyway, so nothing is gained by holding the
        # calls to the window behind the oldest unfinished one, and a slow tab would stall
        # the others: the calls run as they finish, and the list is put in order once.
        self._ordered = False
        results: list[PoolResult] = []
        async for group in self.groups():
            results += group
        results.sort(key=_index)
        return results

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
        tasks = list(self._tasks)
        self._tasks.clear()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _items(self) -> AsyncGenerator[PoolResult, None]:
        groups = self._groups()
        try:
            async for group in groups:
                for result in group:
                    yield result
        finally:
            await groups.aclose()

    async def _groups(self) -> AsyncGenerator[list[PoolResult], None]:
        self._runner.scheduler.check_started()
        # Calls run in worker tasks, at most ``concurrency`` of them, each taking the next
        # input as soon as its call ended: a call costs no task of its own, and the next one
        # is sent in the same event-loop turn the last answer arrived in. Workers hand their
        # results over in a deque and wake this generator once for all the results of a
        # turn. Nothing shared is a lock: a cancelled waiter (on a future) holds nothing, so
        # an early exit cannot deadlock.
        state = _State(self, _Source(self._inputs))
        ordered = self._ordered
        finished = state.finished
        buffer: dict[int, PoolResult] = {}
        try:
            state.spawn()
            while True:
                if self._stopped:
                    return  # aclose() from another task while this one waited
                if ordered:
                    while finished:
                        result = finished.popleft()
                        buffer[result.index] = result
                    group = []
                    position = state.yielded
                    while position in buffer:
                        group.append(buffer.pop(position))
                        position += 1
                else:
                    group = list(finished)
                    finished.clear()
                if group:
                    state.yielded += len(group)
                    state.kick()  # the window moved on
                    yield group
                    continue  # more may have arrived while the consumer had these
                if state.fatal is not None:
                    # An error reading the inputs, or a pool that cannot go on, comes after
                    # the results that finished before it.
                    raise state.fatal
                if not self._tasks:
                    break
                await state.wait()
        finally:
            await self._stop_tasks()


def _bound(on_send: Callable[[int], None], index: int) -> Callable[[], None]:
    return lambda: on_send(index)


def _index(result: PoolResult) -> int:
    return result.index


class _State:
    """What a map's workers and its generator share (all in one event loop, no locks)."""

    def __init__(self, owner: PoolMap, source: _Source) -> None:
        self.owner = owner
        self.source = source
        self.limit = owner._runner.concurrency
        # An ordered map runs at most this far ahead of the oldest result not yet given (a
        # slow item holds back the rest); an unordered one as far ahead of the results not
        # yet taken, so that a slow consumer holds back the calls instead of piling up.
        self.window = 4 * self.limit
        self.issued = 0
        self.yielded = 0
        self.exhausted = False
        self.reading = False
        self.fatal: BaseException | None = None
        self.finished: deque[PoolResult] = deque()
        self._wake: asyncio.Future[None] | None = None
        self._turn: asyncio.Future[None] | None = None

    def spawn(self) -> None:
        """Start one more worker, unless there are ``concurrency`` or no input is left."""
        tasks = self.owner._tasks
        if len(tasks) < self.limit and not self.exhausted and self.fatal is None:
            task = asyncio.get_running_loop().create_task(self._work())
            tasks.add(task)
            task.add_done_callback(self._ended)

    def _ended(self, task: asyncio.Task[None]) -> None:
        self.owner._tasks.discard(task)
        self.notify()

    async def _work(self) -> None:
        owner = self.owner
        runner, prepare, on_send = owner._runner, owner._prepare, owner._on_send
        finished = self.finished
        clock = time.perf_counter
        try:
            while True:
                taken = self._take_now()
                if taken is _WAIT:
                    taken = await self._take()
                if taken is None:
                    return
                assert isinstance(taken, tuple)
                index, item = taken
                # The next worker starts once this one holds an input: as many run as
                # there are inputs to run, up to ``concurrency``.
                self.spawn()
                # One call, in this task (a task per call costs as much as the pool's
                # bookkeeping); every error of the call is captured in its result.
                started = clock()
                attempts = [0]
                args = item
                try:
                    call = prepare(item)
                    if isinstance(item, ToolCall):
                        args = call.args
                    value, count, browser = await runner.run(
                        call,
                        on_send=_bound(on_send, index) if on_send is not None else None,
                        attempts_out=attempts,
                    )
                except PoolExhaustedError:
                    raise
                except Exception as exc:
                    if runner.closing:
                        raise
                    if _cancelled():
                        # The map stopped this worker while a layer below turned the
                        # cancellation into an error: stop, or it would wait for inputs
                        # that never come and hold the map's exit.
                        raise asyncio.CancelledError from exc
                    ms = (clock() - started) * 1000
                    finished.append(PoolResult(index, args, False, None, exc, ms, attempts[0]))
                else:
                    ms = (clock() - started) * 1000
                    finished.append(PoolResult(index, args, True, value, None, ms, count, browser))
                self.notify()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            # PoolExhaustedError, a pool closed under the call, or the inputs failing:
            # the map raises it after the results that finished before it.
            if self.fatal is None:
                self.fatal = exc
            self.kick()
            if not isinstance(exc, Exception):
                raise  # KeyboardInterrupt, SystemExit: the event loop's to handle

    def _take_now(self) -> tuple[int, Any] | object | None:
        """The next input and its index when it can be had without waiting (a plain
        iterator, room in the window); None when none is left; else ``_WAIT``.

        Raises:
            Whatever the inputs' iterator raises.
        """
        if self.exhausted or self.fatal is not None:
            return None
        iterator = self.source.iterator
        if iterator is None or self.issued - self.yielded >= self.window:
            return _WAIT
        try:
            item = next(iterator)
        except StopIteration:
            self.exhausted = True
            self.kick()
            return None
        index = self.issued
        self.issued = index + 1
        return index, item

    async def _take(self) -> tuple[int, Any] | None:
        """The next input and its index, once the window has room; None when none is left.

        Raises:
            Whatever the inputs raise.
        """
        while True:
            taken = self._take_now()
            if taken is not _WAIT:
                assert taken is None or isinstance(taken, tuple)
                return taken
            if self.reading or self.issued - self.yielded >= self.window:
                await self._wait_turn()
                continue
            # An async iterator, one read at a time: an async generator refuses a second
            # __anext__ while one is pending.
            self.reading = True
            try:
                item = await self.source.next_async()
            finally:
                self.reading = False
                self.kick()
            if item is _END:
                self.exhausted = True
                return None
            index = self.issued
            self.issued += 1
            return index, item

    def notify(self) -> None:
        """Wake the generator (results, or a worker ended)."""
        wake = self._wake
        if wake is not None and not wake.done():
            wake.set_result(None)

    async def wait(self) -> None:
        """Wait (in the generator) for the next :meth:`notify`."""
        self._wake = asyncio.get_running_loop().create_future()
        try:
            await self._wake
        finally:
            self._wake = None

    def kick(self) -> None:
        """Let workers waiting for room or for the reader look again."""
        turn = self._turn
        if turn is not None:
            self._turn = None
            if not turn.done():
                turn.set_result(None)

    async def _wait_turn(self) -> None:
        turn = self._turn
        if turn is None:
            turn = self._turn = asyncio.get_running_loop().create_future()
        await turn


def _cancelled() -> bool:
    """Whether the running task has been asked to stop (``Task.cancel``)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


class _Source:
    """The inputs: a plain iterator read in place, or an async iterator read by one worker at
    a time."""

    def __init__(self, inputs: Iterable[Any] | AsyncIterable[Any]) -> None:
        self.iterator: Iterator[Any] | None = None
        self._async: AsyncIterator[Any] | None = None
        if isinstance(inputs, AsyncIterable):
            self._async = aiter(inputs)
        else:
            self.iterator = iter(inputs)

    async def next_async(self) -> Any:
        assert self._async is not None
        try:
            return await anext(self._async)
        except StopAsyncIteration:
            return _END
