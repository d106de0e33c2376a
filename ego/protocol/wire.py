"""The websocket itself: bytes on a TCP (or TLS) connection, text messages in and out.

:class:`Wire` drives the ``websockets`` library's sans-I/O client protocol from a plain
asyncio protocol instead of using the library's own connection class, for two reasons that
measure on CDP traffic: a message is handed over inside ``data_received`` (no reader task
between the socket and the caller), and all frames queued during one event-loop iteration go
out in a single ``write`` (Chrome then reads many commands per wake-up). The websocket rules
(handshake, masking, fragmentation, ping/pong, the closing handshake) stay the library's.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import Callable, Mapping
from typing import Final

from websockets.client import ClientProtocol
from websockets.exceptions import InvalidStatus, InvalidURI
from websockets.frames import Frame, Opcode
from websockets.http11 import Response
from websockets.protocol import State
from websockets.uri import parse_uri

from ..errors import ConnectionFailedError

__all__ = ["Wire", "redact"]

logger = logging.getLogger("ego.transport")

#: Seconds to wait for the peer to finish the closing handshake before dropping the socket.
CLOSE_TIMEOUT: Final = 2.0

MessageHandler = Callable[[bytes], None]
CloseHandler = Callable[[str], None]


class Wire(asyncio.Protocol):
    """One client websocket. Create it with :meth:`open`.

    Messages are passed to ``on_message`` synchronously, in order, as they complete; a
    handler must not block. ``on_close`` is called once with a reason when the connection is
    gone, whoever closed it. Frames may be as large as the peer likes (no size limit).
    """

    def __init__(self, protocol: ClientProtocol) -> None:
        self._ws = protocol
        self._loop = asyncio.get_running_loop()
        self._transport: asyncio.Transport | None = None
        self._handshake: asyncio.Future[None] = self._loop.create_future()
        self._closed: asyncio.Future[None] = self._loop.create_future()
        self._fragments: list[bytes] = []
        self._flush_scheduled = False
        self._early: list[bytes] = []
        self._on_message: MessageHandler | None = None
        self._on_close: CloseHandler | None = None
        self._close_reason = ""
        self._close_timer: asyncio.TimerHandle | None = None

    @classmethod
    async def open(
        cls,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        open_timeout: float = 10.0,
    ) -> Wire:
        """Connect and complete the websocket handshake.

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
        wire = cls(ClientProtocol(uri, max_size=None))
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
        return wire

    def attach(self, on_message: MessageHandler, on_close: CloseHandler) -> None:
        """Start delivering messages (and any that arrived before) to the handlers."""
        self._on_message = on_message
        self._on_close = on_close
        early, self._early = self._early, []
        for message in early:
            on_message(message)
        if self._closed.done():
            on_close(self._close_reason)

    def send(self, message: bytes) -> bool:
        """Queue a text message; it is written with everything else queued this iteration.

        Returns False when the connection is no longer open (nothing was queued).
        """
        if self._ws.state is not State.OPEN:
            return False
        self._ws.send_text(message)
        if not self._flush_scheduled:
            self._flush_scheduled = True
            self._loop.call_soon(self._flush)
        return True

    def fail(self, code: int, reason: str) -> None:
        """Close with ``code`` because of a protocol problem on our side of the reading."""
        if self._ws.state is State.OPEN:
            self._ws.fail(code, reason)
            self._flush()
        self._expect_close()

    async def close(self) -> None:
        """Run the closing handshake (bounded by CLOSE_TIMEOUT) and wait until closed."""
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

    def data_received(self, data: bytes) -> None:
        self._ws.receive_data(data)
        self._handle_events()
        self._flush()  # pongs and close replies the library queued

    def eof_received(self) -> bool | None:
        self._ws.receive_eof()
        self._handle_events()
        self._flush()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        if self._close_timer is not None:
            self._close_timer.cancel()
        if self._ws.state is not State.CLOSED:
            self._ws.receive_eof()
        received = self._ws.close_rcvd
        if received is not None and received.code not in (1000, 1001):
            reason = f" (code {received.code}: {received.reason or 'no reason'})"
        elif received is None and exc is not None:
            reason = f" ({exc})"
        else:
            reason = ""
        self._close_reason = "the connection to the browser closed" + reason
        if not self._handshake.done():
            self._handshake.set_exception(ConnectionError("connection closed during handshake"))
        if not self._closed.done():
            self._closed.set_result(None)
            if self._on_close is not None:
                self._on_close(self._close_reason)

    # -- internals -------------------------------------------------------------------------

    def _handle_events(self) -> None:
        for event in self._ws.events_received():
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
        if frame.opcode in (Opcode.TEXT, Opcode.BINARY):
            if frame.fin:
                self._deliver(bytes(frame.data))
            else:
                self._fragments = [bytes(frame.data)]
        elif frame.opcode is Opcode.CONT:
            self._fragments.append(bytes(frame.data))
            if frame.fin:
                message, self._fragments = b"".join(self._fragments), []
                self._deliver(message)

    def _deliver(self, message: bytes) -> None:
        if self._on_message is None:
            self._early.append(message)
        else:
            self._on_message(message)

    def _flush(self) -> None:
        self._flush_scheduled = False
        chunks = self._ws.data_to_send()
        if not chunks or self._transport is None or self._transport.is_closing():
            return
        payload = b"".join(chunks)
        if payload:
            self._transport.write(payload)
        if chunks[-1] == b"":
            # The library asks for the TCP connection to be closed (after the closing
            # handshake, or after failing the connection).
            if self._transport.can_write_eof():
                self._transport.write_eof()
            self._expect_close()

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
