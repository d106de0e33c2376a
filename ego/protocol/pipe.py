"""CDP over the pipe a Chrome started with ``--remote-debugging-pipe`` reads and writes.

Chrome reads commands from its file descriptor 3 and writes answers and events to its file
descriptor 4, each message a JSON text followed by one NUL byte. The other ends of those two
pipes belong to the process that started Chrome and to no one else: unlike a debugging port,
which any local process or user can find (``/json/version`` hands out the websocket URL) and
drive, the logged-in session included, a pipe cannot be attached to from outside.

:class:`PipeWire` carries the messages with the interface of
:class:`~ego.protocol.wire.Wire` (a :class:`~ego.protocol.transport.Channel`), so one
:class:`~ego.protocol.transport.Connection` class serves both, with its sessions, timeouts,
events, size limit, codec and crash handling. As with the websocket:

- reads never block the event loop: both ends are non-blocking and driven by asyncio's pipe
  transports, and a message is handed over inside ``data_received`` (no reader task between
  the pipe and the caller);
- no size limit coming in: a message is whatever lies between two NUL bytes;
- a lone command (nothing waiting, nothing written since Chrome last answered: one call after
  another) is written at once, inside the call; the messages that follow it in the same
  event-loop iteration are joined into one write at the next loop turn, or as soon as
  :data:`WRITE_EAGER` bytes wait (a burst: Chrome starts on the first commands while the rest
  are made), so that Chrome reads many commands per wake-up; writes are at most
  :data:`WRITE_CHUNK` bytes, and a larger message goes a slice at a time; while the pipe is
  full (the write transport asks to pause) messages wait here, in order, and go out as Chrome
  reads;
- when Chrome exits, is killed or closes its ends, both transports see it at once (end of file
  on the read end, a broken pipe on the write end) and the close handler is called, which
  fails every pending call of the connection with :class:`~ego.errors.BrowserClosedError`.

Closing our end of the command pipe tells Chrome that its client is gone, and Chrome quits:
a pipe connection lives exactly as long as the browser.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections import deque
from typing import IO, Final

from ._channel import ChannelBase

__all__ = ["PIPE_SIZE", "WRITE_CHUNK", "WRITE_LIMIT", "PipeWire", "grow_pipe"]

logger = logging.getLogger("ego.transport")

#: The kernel buffer asked for each pipe, in bytes (Linux; elsewhere the system's default).
#: Linux's default of 64 KiB makes a 50 MB result cross in about 800 reads and wake-ups;
#: 1 MiB is the most an unprivileged process may ask for (``/proc/sys/fs/pipe-max-size``).
PIPE_SIZE: Final = 1024 * 1024

#: The write transport's buffer size (bytes) above which it asks to pause writing.
WRITE_LIMIT: Final = 256 * 1024

#: The most handed to the write transport in one write (bytes): messages are joined up to this
#: size, and a larger message is written a slice at a time, so that the transport's buffer
#: holds at most about :data:`WRITE_LIMIT` + :data:`WRITE_CHUNK` bytes.
WRITE_CHUNK: Final = 256 * 1024

#: Queued bytes at which the queue is handed over at once rather than at the next loop turn:
#: in a burst (a thousand calls gathered), Chrome starts on the first commands while the rest
#: are made, and each write still carries dozens of them.
WRITE_EAGER: Final = 16 * 1024

_NUL: Final = b"\0"


def grow_pipe(fd: int) -> None:
    """Ask for a :data:`PIPE_SIZE` kernel buffer on the pipe ``fd`` where the system allows it.

    Best effort: on systems without ``F_SETPIPE_SZ`` or under a lower limit, the pipe keeps
    its size, which costs only wake-ups.
    """
    if sys.platform != "linux":
        return
    import fcntl

    with contextlib.suppress(OSError, AttributeError):
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_SIZE)


class PipeWire(ChannelBase):
    """The two pipes to one Chrome, as a channel for a Connection. Create it with :meth:`open`.

    Messages are passed to ``on_message`` synchronously, in order, as they complete; a handler
    must not block. ``on_close`` is called once with a reason when the pipes are gone, whoever
    closed them. Everything runs on the event loop that opened the wire; it is not
    thread-safe, like the rest of a Connection.
    """

    def __init__(self) -> None:
        super().__init__()
        self._reader: asyncio.ReadTransport | None = None
        self._writer: asyncio.WriteTransport | None = None
        self._partial: list[bytes] = []  # the pieces of a message whose NUL has not come yet
        # Messages and their NULs not yet handed to the write transport (the head may be what
        # is left of a large message); they leave at the next flush, or as Chrome reads.
        self._queue: deque[bytes | memoryview] = deque()
        self._queued = 0  # bytes in _queue
        self._flush_scheduled = False
        # A lone message went straight to the transport since the last answer or flush:
        # the next ones of this loop turn are queued and joined.
        self._wrote = False
        self._paused = False
        self._closing = False

    @classmethod
    async def open(cls, read_fd: int, write_fd: int) -> PipeWire:
        """Take over our ends of Chrome's pipes and start reading.

        Args:
            read_fd: the read end of the pipe Chrome writes to (its descriptor 4).
            write_fd: the write end of the pipe Chrome reads from (its descriptor 3).

        Both descriptors belong to the wire from here on, also when this raises (they are
        closed then). They are made non-blocking; they should be close-on-exec (as
        :func:`os.pipe` makes them) so that no other child process inherits them.

        Raises:
            OSError: a descriptor is not a pipe end that can be read or written.
        """
        loop = asyncio.get_running_loop()
        wire = cls()
        reader_file: IO[bytes] = open(read_fd, "rb", buffering=0)  # noqa: SIM115 (the transport closes it)
        try:
            writer_file: IO[bytes] = open(write_fd, "wb", buffering=0)  # noqa: SIM115
        except BaseException:
            reader_file.close()
            os.close(write_fd)
            raise
        try:
            await loop.connect_read_pipe(lambda: _ReadEnd(wire), reader_file)
            await loop.connect_write_pipe(lambda: _WriteEnd(wire), writer_file)
        except BaseException:
            wire.abort()
            reader_file.close()
            writer_file.close()
            raise
        return wire

    def send(self, message: bytes) -> bool:
        """Write one message at once when it is alone, else queue it to be joined with the
        others of this loop iteration (see the module docstring).

        ``message`` must not hold a NUL byte (JSON text never does: a NUL in a string is
        written ``\\u0000``). Returns False when the pipe is no longer open (nothing was
        queued).
        """
        writer = self._writer
        if self._closing or writer is None:
            return False
        queue = self._queue
        if not (queue or self._wrote or self._paused) and len(message) < WRITE_CHUNK:
            # Nothing waits and nothing went out since the last answer came: a lone command
            # (one call after another) leaves at once, without a loop turn in between. (A
            # transport closing under us drops it, and its connection_lost, on its way, fails
            # the call with the rest.)
            self._wrote = True
            writer.write(message + _NUL)
            return True
        queue.append(message)
        queue.append(_NUL)
        self._queued += len(message) + 1
        if self._paused:
            return True
        if self._queued >= WRITE_EAGER:
            # A burst: what is queued leaves now, so that Chrome works on it while the rest
            # of the burst is made.
            self._write_queued()
        elif not self._flush_scheduled:
            self._flush_scheduled = True
            self._loop.call_soon(self._flush)
        return True

    def fail(self, code: int, reason: str) -> None:
        """Drop the pipes because of a protocol problem on our side of the reading.

        ``code`` is a websocket close code, meaningful to the websocket only: a pipe has no
        closing handshake to carry it, so it is only logged with ``reason``.
        """
        logger.debug("closing the pipe to the browser: %s (%d)", reason, code)
        self.abort()

    async def close(self) -> None:
        """Close both pipes and wait until they are closed; Chrome then quits by itself.

        Messages still queued are dropped: a pipe has no closing handshake to wait for, and a
        Chrome that stopped reading must not hold the close up. Idempotent.
        """
        self.abort()
        await asyncio.shield(self._closed)

    def abort(self) -> None:
        """Drop both pipes at once, discarding what is queued."""
        self._closing = True
        self._queue.clear()
        self._queued = 0
        # A write transport that is closing already has its connection_lost scheduled; abort
        # would schedule a second one.
        if self._writer is not None and not self._writer.is_closing():
            self._writer.abort()
        if self._reader is not None:
            self._reader.close()

    # -- reading ---------------------------------------------------------------------------

    def _received(self, data: bytes) -> None:
        # Chrome answered: the next lone command may go out at once again.
        self._wrote = False
        # One scan: without a NUL, split returns [data] itself (no copy) and the chunk is a
        # piece of a longer message.
        pieces = data.split(_NUL)
        if len(pieces) == 1:
            self._partial.append(data)
            return
        tail = pieces.pop()
        if self._partial:
            self._partial.append(pieces[0])
            pieces[0] = b"".join(self._partial)
            self._partial = []
        handler = self._on_message
        for message in pieces:
            if self._closing:
                return  # dropped (fail or abort from a handler): what follows is not read
            if message:
                if handler is None:
                    self._hand_over(message)  # kept until a connection attaches
                else:
                    handler(message)
        if tail:
            self._partial.append(tail)

    # -- writing ---------------------------------------------------------------------------

    def _flush(self) -> None:
        """The loop turn after a send: hand over what is queued."""
        self._flush_scheduled = False
        self._wrote = False
        self._write_queued()

    def _write_queued(self) -> None:
        """Hand what is queued to the write transport, until it asks to pause."""
        writer = self._writer
        if writer is None or writer.is_closing():
            return
        queue = self._queue
        while queue and not self._paused:
            head = queue[0]
            if len(head) > WRITE_CHUNK:
                view = head if isinstance(head, memoryview) else memoryview(head)
                queue[0] = view[WRITE_CHUNK:]
                writer.write(view[:WRITE_CHUNK])  # may call pause_writing at once
                continue
            batch = [queue.popleft()]
            size = len(head)
            while queue and size + len(queue[0]) <= WRITE_CHUNK:
                size += len(queue[0])
                batch.append(queue.popleft())
            writer.write(batch[0] if len(batch) == 1 else b"".join(batch))
        # Empty unless the transport asked to pause (then counted again, rarely).
        self._queued = sum(map(len, queue)) if queue else 0

    def _pause(self) -> None:
        self._paused = True

    def _resume(self) -> None:
        self._paused = False
        self._flush()

    # -- closing ---------------------------------------------------------------------------

    def _lost(self, why: str | None) -> None:
        """One of the pipes is gone: drop the other and report the close once."""
        if self._closed.done():
            return
        # A pipe is gone only with its peer (Chrome exited or closed it) or by our own close.
        ours = self._closing
        self.abort()
        self._partial = []
        if ours:
            self._report_closed("the connection to the browser closed")
        else:
            detail = f": {why}" if why else ""
            self._report_closed(
                "the connection to the browser closed (Chrome closed its debugging pipe: it "
                f"quit, crashed or was killed{detail})"
            )


class _ReadEnd(asyncio.Protocol):
    """The read transport's protocol: hands every chunk to the wire."""

    def __init__(self, wire: PipeWire) -> None:
        self._wire = wire
        # Every chunk goes straight to the wire, without a call of this protocol's own.
        self.data_received = wire._received  # type: ignore[method-assign]

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.ReadTransport)
        self._wire._reader = transport

    def data_received(self, data: bytes) -> None:  # replaced by the wire's own in __init__
        self._wire._received(data)

    def eof_received(self) -> bool | None:
        return None  # the transport closes, and connection_lost reports it

    def connection_lost(self, exc: Exception | None) -> None:
        self._wire._lost(None if exc is None else str(exc))


class _WriteEnd(asyncio.Protocol):
    """The write transport's protocol: flow control and the loss of the pipe."""

    def __init__(self, wire: PipeWire) -> None:
        self._wire = wire

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.WriteTransport)
        transport.set_write_buffer_limits(high=WRITE_LIMIT)
        self._wire._writer = transport

    def pause_writing(self) -> None:
        self._wire._pause()

    def resume_writing(self) -> None:
        self._wire._resume()

    def connection_lost(self, exc: Exception | None) -> None:
        self._wire._lost(None if exc is None else str(exc))
