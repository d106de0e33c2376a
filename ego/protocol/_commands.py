"""A session's commands: what they need of the connection (:class:`Link`), the largest one
Chrome takes, and those sent whose answers have not come yet, with the one timer that fails
those whose deadline passed.

A :class:`~ego.protocol.session.Session` owns a :class:`Commands`: its answers, its timeouts
and its end (a detach, a crash, a dialog, the connection's close) settle them there, and
nothing of them is kept anywhere else.
"""

from __future__ import annotations

import asyncio
import itertools
import math
from collections.abc import Callable
from typing import Any, Final

from ..errors import BrowserClosedError, CommandTimeoutError
from .slow_motion import SlowMotion

__all__ = ["MAX_COMMAND_BYTES", "Commands", "Link", "Pending", "allowed"]

#: The largest command (its JSON, in bytes) :meth:`Session.send` sends; a larger one raises
#: CommandTooLargeError and nothing is sent. Chrome reads one DevTools message into a buffer of
#: 100 MiB, on the websocket and on the pipe alike. Measured on Chromium 156, headless, with
#: ``Runtime.evaluate`` of ``'aaa…a'.length``: over the websocket a message of 104,857,586
#: bytes (100 MiB - 14, the 14-byte header of a masked client frame) was answered, and one of
#: 104,857,587 bytes reset the connection (every tab then loses it); over the pipe a message
#: of 104,857,599 bytes (100 MiB with its NUL) was answered, and one of 104,857,600 bytes made
#: Chrome stop reading the pipe without closing it, so that every later call would only time
#: out. 99 MiB is under both, with a margin for other builds.
MAX_COMMAND_BYTES: Final = 99 * 1024 * 1024


class Link:
    """What a session needs of the connection that carries it, and all it gets: the event
    loop, the command ids (one count per connection), the write to the channel, the default
    timeout, the pause before what a person sees happen (slow motion), and whether the
    connection is closed. The connection makes one and hands it to each of its sessions.

    Args:
        write: sends one encoded message; False when the channel no longer takes any.
        default_timeout: seconds a command may take unless its call says otherwise.
    """

    __slots__ = ("closed", "default_timeout", "ids", "loop", "slow_motion", "write")

    def __init__(self, write: Callable[[bytes], bool], default_timeout: float) -> None:
        self.loop = asyncio.get_running_loop()
        self.ids = itertools.count(1)
        self.write = write
        self.default_timeout = default_timeout
        #: Why the connection closed (its error), or None while it is open.
        self.closed: BrowserClosedError | None = None
        #: A pause before each input and navigation sent (``ego.launch(slow_mo=)``), or None.
        self.slow_motion: SlowMotion | None = None


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
