"""The websocket itself: bytes on a TCP (or TLS) connection, text messages in and out.

:class:`Wire` drives the ``websockets`` library's sans-I/O client protocol from a plain
asyncio protocol instead of using the library's own connection class, for two reasons that
measure on CDP traffic: a message is handed over inside ``data_received`` (no reader task
between the socket and the caller), and all frames queued during one event-loop iteration go
out in a single ``write`` (Chrome then reads many commands per wake-up). Against the
library's asyncio client under the same Connection (``bench/bench_wire.py``, websockets 17.4)
that is about a quarter less client CPU per call, one at a time and 1,000 in flight, and
1.1 times the throughput of sequential calls. The websocket rules (handshake, masking,
fragmentation, ping/pong, the closing handshake) stay the library's; what its asyncio client
adds on top is done here too:

- **keepalive**: a ping every :data:`PING_INTERVAL` seconds; a connection that shows no sign
  of life for :data:`PING_TIMEOUT` seconds after a ping is closed (code 1011), and every call
  on it fails with a reason that says so. The pings also keep proxies and load balancers that
  drop idle connections from dropping this one;
- **write backpressure**: the socket's write buffer holds at most about
  :data:`WRITE_LIMIT` + :data:`WRITE_CHUNK` bytes. While the transport asks to pause, messages
  wait here, unframed and in order (the bytes their senders hold anyway, no copy), and go out
  as the peer reads; a message larger than :data:`WRITE_CHUNK` is written a slice at a time.
  A sender's wait is the wait for its answer, so :meth:`Wire.send` stays synchronous and a
  send while the buffer is small costs one flag check;
- **invalid UTF-8** in a text message closes the connection with code 1007 (lone surrogates
  written as UTF-8 bytes excepted: the JSON decoder takes them, see ``_codec``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import ssl
from collections import deque
from collections.abc import Mapping
from typing import Final

from websockets.client import ClientProtocol
from websockets.exceptions import InvalidStatus, InvalidURI
from websockets.frames import Frame, Opcode
from websockets.http11 import Response
from websockets.protocol import State
from websockets.uri import parse_uri

from ..errors import ConnectionFailedError
from ._channel import ChannelBase

__all__ = ["PING_INTERVAL", "PING_TIMEOUT", "WRITE_CHUNK", "WRITE_LIMIT", "Wire", "redact"]

logger = logging.getLogger("ego.transport")

#: Seconds to wait for the peer to finish the closing handshake before dropping the socket.
CLOSE_TIMEOUT: Final = 2.0

#: Seconds between keepalive pings (the ``websockets`` client's default). Under the idle
#: timeout of common proxies and load balancers (nginx's ``proxy_read_timeout`` and AWS load
#: balancers: 60 s), so a connection idle between calls is not dropped by them.
PING_INTERVAL: Final = 20.0

#: Seconds a ping may go without an answer before the connection is closed as dead. Bytes
#: arriving from the peer, or the peer reading what we wrote, count as an answer: a pong
#: queued behind a long message is not taken for silence.
PING_TIMEOUT: Final = 20.0

#: The socket's write buffer size (bytes) above which the transport asks to pause writing.
WRITE_LIMIT: Final = 256 * 1024

#: The largest slice of a frame handed to the socket in one write (bytes).
WRITE_CHUNK: Final = 256 * 1024


class Wire(ChannelBase, asyncio.Protocol):
    """One client websocket. Create it with :meth:`open`.

    Messages are passed to ``on_message`` synchronously, in order, as they complete; a
    handler must not block. ``on_close`` is called once with a reason when the connection is
    gone, whoever closed it. Frames may be as large as the peer likes (no size limit).
    """

    def __init__(
        self,
        protocol: ClientProtocol,
        *,
        ping_interval: float | None = PING_INTERVAL,
        ping_timeout: float | None = PING_TIMEOUT,
    ) -> None:
        super().__init__()
        self._ws = protocol
        self._transport: asyncio.Transport | None = None
        self._handshake: asyncio.Future[None] = self._loop.create_future()
        self._fragments: list[bytes] = []
        self._fragments_text = True  # whether the fragmented message being read is text
        self._flush_scheduled = False
        self._close_timer: asyncio.TimerHandle | None = None
        # Why we failed the connection ourselves, for the close reason; None until then.
        self._failure: str | None = None
        # Backpressure: the transport asked to pause; framed bytes not yet handed to it
        # (slices of a big frame, control frames queued behind them); messages not yet framed.
        self._paused = False
        self._out: deque[bytes | memoryview] = deque()
        self._backlog: deque[bytes] = deque()
        self._eof_pending = False
        # Keepalive: one timer, either for the next ping or for the answer to the last one.
        self._ping_interval = ping_interval
        self._ping_timeout = ping_timeout
        self._ping_timer: asyncio.TimerHandle | None = None
        self._ping_payload: bytes | None = None
        self._ping_sent_at = 0.0
        self._alive = False  # a sign of life from the peer since the last ping
        #: Seconds between the last keepalive ping and its pong (0 until one is answered).
        self.latency = 0.0

    @classmethod
    async def open(
        cls,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        open_timeout: float = 10.0,
        ping_interval: float | None = PING_INTERVAL,
        ping_timeout: float | None = PING_TIMEOUT,
    ) -> Wire:
        """Connect and complete the websocket handshake.

        Args:
            url: a ``ws://`` or ``wss://`` URL.
            headers: extra HTTP headers for the handshake.
            open_timeout: seconds allowed for the TCP connect and the handshake.
            ping_interval: seconds between keepalive pings; None sends none.
            ping_timeout: seconds a ping may stay unanswered (with no other sign of life
                from the peer) before the connection is closed; None waits forever.

        Raises:
            ConnectionFailedError: not a websocket URL, unreachable, the handshake was refused
                (the message holds the HTTP status; 401/403 point at the token), or it took
                longer than ``open_timeout``.
        """
        try:
            uri = parse_uri(url)
        except InvalidURI:
            raise ConnectionFailedError(
                f"{redact(url)} is not a websocket URL: pass ws://host:port/... or http://host:port"
            ) from None
        loop = asyncio.get_running_loop()
        # No size limit: CDP results can be tens of megabytes, and the library's default of
        # 1 MiB would close the connection with code 1009 on the first big one.
        wire = cls(
            ClientProtocol(uri, max_size=None),
            ping_interval=ping_interval,
            ping_timeout=ping_timeout,
        )
        context = ssl.create_default_context() if uri.secure else None
        try:
            async with asyncio.timeout(open_timeout):
                await loop.create_connection(
                    lambda: wire,
                    uri.host,
                    uri.port,
                    ssl=context,
                    server_hostname=uri.host if context else None,
                )
                request = wire._ws.connect()
                for name, value in (headers or {}).items():
                    request.headers[name] = value
                wire._ws.send_request(request)
                wire._flush()
                await wire._handshake
        except InvalidStatus as exc:
            wire.abort()
            status = exc.response.status_code
            hint = (
                "check the token or credentials in the URL or headers"
                if status in (401, 403)
                else "check the endpoint URL"
            )
            raise ConnectionFailedError(
                f"{redact(url)} refused the websocket with HTTP {status}: {hint}"
            ) from None
        except Exception as exc:  # refused, reset, DNS, TLS, a malformed handshake, timeout
            wire.abort()
            kind = "timed out" if isinstance(exc, TimeoutError) else f"{type(exc).__name__}: {exc}"
            raise ConnectionFailedError(
                f"could not open a websocket to {redact(url)} ({kind}): is the browser running "
                "and reachable?"
            ) from None
        except BaseException:  # cancelled: leave no socket behind
            wire.abort()
            raise
        wire._schedule_ping()
        return wire

    def send(self, message: bytes) -> bool:
        """Queue a text message; it is written with everything else queued this iteration.

        While the socket's write buffer is full the message waits, unframed and in order,
        until the peer reads. Returns False when the connection is no longer open (nothing
        was queued).
        """
        if self._ws.state is not State.OPEN:
            return False
        if self._paused:
            self._backlog.append(message)
            return True
        self._ws.send_text(message)
        if not self._flush_scheduled:
            self._flush_scheduled = True
            self._loop.call_soon(self._flush)
        return True

    def fail(self, code: int, reason: str) -> None:
        """Close with ``code`` because of a protocol problem on our side of the reading."""
        self._backlog.clear()
        if self._ws.state is State.OPEN:
            self._ws.fail(code, reason)
            self._flush()
        self._expect_close()

    async def close(self) -> None:
        """Run the closing handshake (bounded by CLOSE_TIMEOUT) and wait until closed."""
        self._backlog.clear()
        if self._ws.state is State.OPEN:
            self._ws.send_close(1000)
            self._flush()
            self._expect_close()
        elif self._transport is None:
            return
        await asyncio.shield(self._closed)

    def abort(self) -> None:
        """Drop the TCP connection at once."""
        if self._transport is not None:
            self._transport.abort()

    # -- asyncio.Protocol ------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        transport.set_write_buffer_limits(high=WRITE_LIMIT)

    def data_received(self, data: bytes) -> None:
        self._alive = True
        self._ws.receive_data(data)
        self._handle_events()
        self._flush()  # pongs and close replies the library queued

    def eof_received(self) -> bool | None:
        self._ws.receive_eof()
        self._handle_events()
        self._flush()
        return None

    def pause_writing(self) -> None:
        self._paused = True

    def resume_writing(self) -> None:
        self._paused = False
        self._alive = True  # the peer is reading
        self._pump()

    def connection_lost(self, exc: Exception | None) -> None:
        for timer in (self._close_timer, self._ping_timer):
            if timer is not None:
                timer.cancel()
        self._out.clear()
        self._backlog.clear()
        if self._ws.state is not State.CLOSED:
            self._ws.receive_eof()
        received = self._ws.close_rcvd
        if self._failure is not None:
            reason = f" ({self._failure})"
        elif received is not None and received.code not in (1000, 1001):
            reason = f" (code {received.code}: {received.reason or 'no reason'})"
        elif received is None and exc is not None:
            reason = f" ({exc})"
        else:
            reason = ""
        if not self._handshake.done():
            self._handshake.set_exception(ConnectionError("connection closed during handshake"))
        self._report_closed("the connection to the browser closed" + reason)

    # -- reading ---------------------------------------------------------------------------

    def _handle_events(self) -> None:
        for event in self._ws.events_received():
            if self._failure is not None:
                break  # we failed the connection: what follows is not read (RFC 6455 7.1.7)
            if isinstance(event, Response):
                if self._handshake.done():
                    continue
                if self._ws.handshake_exc is not None:
                    self._handshake.set_exception(self._ws.handshake_exc)
                else:
                    self._handshake.set_result(None)
            elif isinstance(event, Frame):
                self._handle_frame(event)
        if self._ws.close_expected():
            self._expect_close()

    def _handle_frame(self, frame: Frame) -> None:
        opcode = frame.opcode
        if opcode is Opcode.TEXT or opcode is Opcode.BINARY:
            if frame.fin:
                self._deliver(bytes(frame.data), opcode is Opcode.TEXT)
            else:
                self._fragments = [bytes(frame.data)]
                self._fragments_text = opcode is Opcode.TEXT
        elif opcode is Opcode.CONT:
            self._fragments.append(bytes(frame.data))
            if frame.fin:
                message, self._fragments = b"".join(self._fragments), []
                self._deliver(message, self._fragments_text)
        elif opcode is Opcode.PONG:
            self._on_pong(bytes(frame.data))

    def _deliver(self, message: bytes, text: bool) -> None:
        # isascii() is a fast scan and holds for nearly every CDP message (Chrome escapes
        # what JSON strings hold beyond ASCII); the full check runs only for the others.
        # Lone surrogates written as UTF-8 bytes are let through, as the JSON decoder
        # accepts them (see ego.protocol._codec).
        if text and not message.isascii():
            try:
                message.decode("utf-8", "surrogatepass")
            except UnicodeDecodeError as exc:
                self._fail(
                    1007,
                    f"{exc.reason} at position {exc.start}",
                    "the browser sent a text message that is not valid UTF-8; closed with "
                    "code 1007",
                )
                return
        self._hand_over(message)

    def _fail(self, code: int, reason: str, why: str) -> None:
        """Fail the connection for ``why`` (shown in the close reason) with ``code``."""
        if self._failure is None:
            self._failure = why
        self.fail(code, reason)

    # -- keepalive -------------------------------------------------------------------------

    def _schedule_ping(self, delay: float | None = None) -> None:
        if self._ping_interval is None or self._ws.state is not State.OPEN:
            return
        wait = self._ping_interval if delay is None else delay
        self._ping_timer = self._loop.call_later(wait, self._ping)

    def _ping(self) -> None:
        self._ping_timer = None
        if self._ws.state is not State.OPEN:
            return
        self._ping_payload = os.urandom(4)
        self._ping_sent_at = self._loop.time()
        self._alive = False
        self._ws.send_ping(self._ping_payload)
        self._flush()
        if self._ping_timeout is not None:
            self._ping_timer = self._loop.call_later(self._ping_timeout, self._ping_overdue)

    def _on_pong(self, payload: bytes) -> None:
        if self._ping_payload is None or payload != self._ping_payload:
            return  # unsolicited, or the answer to an earlier ping
        self._ping_payload = None
        self.latency = self._loop.time() - self._ping_sent_at
        if self._ping_timer is not None:
            self._ping_timer.cancel()
        assert self._ping_interval is not None
        self._schedule_ping(max(0.0, self._ping_interval - self.latency))

    def _ping_overdue(self) -> None:
        self._ping_timer = None
        if self._alive:
            # The peer is busy sending or reading a long message: the pong is behind it.
            self._alive = False
            assert self._ping_timeout is not None
            self._ping_timer = self._loop.call_later(self._ping_timeout, self._ping_overdue)
            return
        self._fail(
            1011,
            "keepalive ping timeout",
            f"no answer to a keepalive ping within {self._ping_timeout:g} s: the browser, or "
            "a proxy between it and ego, stopped responding",
        )
        # A peer that does not answer will not finish the closing handshake either.
        self.abort()

    # -- writing ---------------------------------------------------------------------------

    def _flush(self) -> None:
        self._flush_scheduled = False
        chunks = self._ws.data_to_send()
        if not chunks or self._transport is None or self._transport.is_closing():
            return
        payload = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        if payload:
            if self._paused or self._out or len(payload) > WRITE_CHUNK:
                self._out.append(payload)
                self._pump()
            else:
                self._transport.write(payload)  # the common case: small, nothing waiting
        if chunks[-1] == b"":
            # The library asks for the TCP connection to be closed (after the closing
            # handshake, or after failing the connection), once what is queued is written.
            self._eof_pending = True
            self._pump()
            self._expect_close()

    def _pump(self) -> None:
        """Write what waits, a slice at a time, until the transport asks to pause."""
        transport = self._transport
        if transport is None or transport.is_closing():
            return
        out = self._out
        while not self._paused:
            if out:
                head = out[0]
                if len(head) > WRITE_CHUNK:
                    view = head if isinstance(head, memoryview) else memoryview(head)
                    out[0] = view[WRITE_CHUNK:]
                    head = view[:WRITE_CHUNK]
                else:
                    out.popleft()
                transport.write(head)  # may call pause_writing at once
                if transport.is_closing():  # the write failed: connection_lost follows
                    return
            elif self._backlog and self._ws.state is State.OPEN:
                # Frame waiting messages up to a slice's worth, to write them together.
                size = 0
                while self._backlog and size < WRITE_CHUNK:
                    message = self._backlog.popleft()
                    self._ws.send_text(message)
                    size += len(message)
                out.extend(self._ws.data_to_send())
            else:
                if self._eof_pending:
                    self._eof_pending = False
                    if transport.can_write_eof():
                        transport.write_eof()
                return

    def _expect_close(self) -> None:
        # The peer should now close the TCP connection; if it does not, drop it ourselves.
        if self._close_timer is None and self._transport is not None:
            self._close_timer = self._loop.call_later(CLOSE_TIMEOUT, self.abort)


def redact(url: str) -> str:
    """``url`` with the value of every ``token``, ``apikey`` or ``key`` query parameter shown
    as ``***``, so that error messages and logs never print a secret.

    Everything else (other parameters, their order and encoding, a ``#fragment``) is kept
    as given.
    """
    head, sep, rest = url.partition("?")
    if not sep:
        return url
    query, hash_sign, fragment = rest.partition("#")
    parts = []
    for part in query.split("&"):
        key, eq, _ = part.partition("=")
        parts.append(f"{key}=***" if eq and key.lower() in _SECRET_KEYS else part)
    return head + "?" + "&".join(parts) + hash_sign + fragment


#: Query parameters whose values are credentials (browserless ``token``, vendors' API keys).
_SECRET_KEYS: Final = frozenset({"token", "apikey", "key"})
