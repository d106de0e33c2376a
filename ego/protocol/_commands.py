"""The commands one session sent whose answers have not come yet, and the one timer that fails
those whose deadline passed.

A :class:`~ego.protocol.session.Session` owns a :class:`Commands`: its answers, its timeouts
and its end (a detach, a crash, a dialog, the connection's close) settle them there, and
nothing of them is kept anywhere else.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from typing import Any

from ..errors import CommandTimeoutError

__all__ = ["Commands", "Pending", "allowed"]


def allowed(method: str, allow: frozenset[str]) -> bool:
    """True when ``allow`` names ``method`` or its domain (``"Fetch."``)."""
    return bool(allow) and (method in allow or method[: method.find(".") + 1] in allow)


class Pending:
    """A command sent and not answered yet: what its answer, its timeout or its session's end
    needs to settle it."""

    __slots__ = ("deadline", "future", "method")

    def __init__(self, future: asyncio.Future[Any], method: str, deadline: float | None) -> None:
        self.future = future
        self.method = method
        self.deadline = deadline


class Commands:
    """One session's commands in flight, by message id.

    One timer serves all of them, due at the earliest deadline: a timer per command (armed,
    then cancelled on nearly every answer) cost a fifth of the CPU of a busy connection in
    heap upkeep.
    """

    __slots__ = ("_loop", "_sweep", "_sweep_at", "entries")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        #: The commands waiting for their answer, by message id.
        self.entries: dict[int, Pending] = {}
        self._sweep: asyncio.TimerHandle | None = None
        self._sweep_at = math.inf

    def add(
        self, message_id: int, future: asyncio.Future[Any], method: str, timeout: float | None
    ) -> None:
        """Keep ``future`` until the answer of ``message_id`` settles it, or ``timeout``
        seconds pass (None: no bound)."""
        deadline = None
        if timeout is not None:
            deadline = self._loop.time() + timeout
            if deadline < self._sweep_at:
                self._arm(deadline)
        self.entries[message_id] = Pending(future, method, deadline)

    def fail(self, error: Callable[[str], Exception], allow: frozenset[str] = frozenset()) -> None:
        """Fail every command with ``error(what was cut)``, but those whose method ``allow``
        names."""
        for message_id, entry in list(self.entries.items()):
            if not allowed(entry.method, allow):
                del self.entries[message_id]
                if not entry.future.done():
                    entry.future.set_exception(error(f"{entry.method} was cut short"))

    def stop(self) -> None:
        """No command will come any more (the session ended): drop the timer."""
        if self._sweep is not None:
            self._sweep.cancel()
            self._sweep = None
        self._sweep_at = math.inf

    def _arm(self, when: float) -> None:
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
        for message_id, entry in list(self.entries.items()):
            deadline = entry.deadline
            if deadline is None:
                continue
            if deadline <= now:
                del self.entries[message_id]
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
            self._arm(earliest)
