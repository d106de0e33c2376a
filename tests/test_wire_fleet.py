"""ego's websocket under a fleet's conditions: keepalive, write backpressure, invalid UTF-8.

A fleet puts proxies and load balancers between ego and Chrome. :class:`Proxy`, a TCP proxy
written here, plays them: it can drop connections idle for a while, read slowly (a congested
link, a busy browser), or stop forwarding (a peer that died without closing). The browser
behind it is the session's real Chromium, or :class:`tests.fake_cdp.FakeCDP` where Chrome
cannot misbehave on demand (a text frame that is not UTF-8, a black-holed connection).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import urlsplit

import orjson
import pytest
from websockets.asyncio.server import ServerConnection

import ego
from ego.protocol.transport import Connection
from ego.protocol.wire import WRITE_CHUNK, WRITE_LIMIT, Wire
from tests.helpers.browsers import HANG, websocket_url
from tests.helpers.fake_cdp import BROWSER_PATH, FakeCDP
from tests.helpers.protocol import attach

#: Seconds of silence after which the dropping proxy cuts a connection.
IDLE_DROP = 1.0


class Link:
    """One client connection through the proxy, with the upstream connection it feeds."""

    def __init__(self) -> None:
        self.dropped = asyncio.Event()
        self.last_activity = asyncio.get_running_loop().time()
        self.writers: list[asyncio.StreamWriter] = []

    def cut(self) -> None:
        for writer in self.writers:
            writer.transport.abort()
        self.dropped.set()


class Proxy:
    """A TCP proxy on 127.0.0.1 in front of ``host:port``.

    Args:
        idle_drop: cut a connection after this many seconds with no byte either way.
        slow_read: (bytes, seconds): read from the client at most this many bytes, then
            wait this long, before reading again (a slow reader upstream).
    """

    def __init__(
        self,
        host: str,
        port: int,
        *,
        idle_drop: float | None = None,
        slow_read: tuple[int, float] | None = None,
    ) -> None:
        self.target = (host, port)
        self.idle_drop = idle_drop
        self.slow_read = slow_read
        self.links: list[Link] = []
        self.linked = asyncio.Event()
        self.frozen = False
        self._tasks: set[asyncio.Task[None]] = set()
        self._server: asyncio.Server | None = None
        self.port = 0

    def url(self, ws_url: str) -> str:
        """``ws_url`` with its host and port replaced by the proxy's."""
        parts = urlsplit(ws_url)
        return parts._replace(netloc=f"127.0.0.1:{self.port}").geturl()

    def freeze(self) -> None:
        """Stop forwarding anything, either way, without closing (a peer gone silent)."""
        self.frozen = True

    async def __aenter__(self) -> Proxy:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._server is not None
        self._server.close()
        for link in self.links:
            for writer in link.writers:
                writer.transport.abort()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream_reader, upstream_writer = await asyncio.open_connection(*self.target)
        link = Link()
        link.writers = [writer, upstream_writer]
        self.links.append(link)
        self.linked.set()
        self._spawn(self._pipe(link, reader, upstream_writer, self.slow_read))
        self._spawn(self._pipe(link, upstream_reader, writer, None))
        if self.idle_drop is not None:
            self._spawn(self._watch(link, self.idle_drop))

    async def _pipe(
        self,
        link: Link,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        slow: tuple[int, float] | None,
    ) -> None:
        loop = asyncio.get_running_loop()
        size = slow[0] if slow else 1 << 20
        with contextlib.suppress(ConnectionError):
            while not link.dropped.is_set():
                data = await reader.read(size)
                if not data:
                    break
                while self.frozen:  # swallow everything from now on
                    data = await reader.read(size)
                    if not data:
                        return
                link.last_activity = loop.time()
                writer.write(data)
                await writer.drain()
                if slow:
                    await asyncio.sleep(slow[1])
        link.cut()

    async def _watch(self, link: Link, idle: float) -> None:
        loop = asyncio.get_running_loop()
        while not link.dropped.is_set():
            quiet = loop.time() - link.last_activity
            if quiet >= idle:
                link.cut()
                return
            await asyncio.sleep(idle - quiet)


@contextlib.asynccontextmanager
async def proxied(
    endpoint: str, *, ping_interval: float | None, ping_timeout: float | None = HANG, **proxy: Any
) -> AsyncIterator[tuple[Proxy, Connection]]:
    """A Connection to ``endpoint`` through a new :class:`Proxy` (its options ``proxy``)."""
    parts = urlsplit(endpoint)
    assert parts.hostname is not None
    assert parts.port is not None
    async with Proxy(parts.hostname, parts.port, **proxy) as through:
        wire = await Wire.open(
            through.url(endpoint), ping_interval=ping_interval, ping_timeout=ping_timeout
        )
        connection = Connection(wire, default_timeout=HANG)
        try:
            yield through, connection
        finally:
            await asyncio.wait_for(connection.close(), HANG)


def closed_event(connection: Connection) -> asyncio.Event:
    event = asyncio.Event()
    connection.on_close(event.set)
    return event


def record_write_buffer(connection: Connection) -> list[int]:
    """The transport's write buffer size after every write ego makes, from now on."""
    wire = connection._wire
    assert isinstance(wire, Wire)
    assert wire._transport is not None
    transport = wire._transport
    sizes: list[int] = []
    write: Callable[[Any], None] = transport.write

    def recording_write(data: Any) -> None:
        write(data)
        sizes.append(transport.get_write_buffer_size())

    transport.write = recording_write  # type: ignore[method-assign]
    return sizes


# --- keepalive ----------------------------------------------------------------------------------


async def test_pings_keep_an_idle_connection_open_through_a_proxy_that_drops_idle_ones(
    ported_browser: ego.Browser,
) -> None:
    endpoint = websocket_url(ported_browser)
    async with (
        proxied(endpoint, ping_interval=None, idle_drop=IDLE_DROP) as (quiet_proxy, quiet),
        proxied(endpoint, ping_interval=0.25, idle_drop=IDLE_DROP) as (ping_proxy, pinged),
    ):
        quiet_closed, pinged_closed = closed_event(quiet), closed_event(pinged)
        # Without pings the proxy does drop an idle connection: the control.
        await asyncio.wait_for(quiet_proxy.links[0].dropped.wait(), HANG)
        await asyncio.wait_for(quiet_closed.wait(), HANG)
        assert quiet.closed
        # With pings, three times the proxy's idle limit passes without a drop.
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(ping_proxy.links[0].dropped.wait(), 3 * IDLE_DROP)
        assert not pinged_closed.is_set()
        version = await pinged.send("Browser.getVersion")
        assert "Chrome" in version["product"]
        wire = pinged._wire
        assert isinstance(wire, Wire)
        assert wire.latency > 0


async def test_an_unanswered_ping_closes_the_connection_with_a_clear_reason() -> None:
    async with (
        FakeCDP() as fake,
        proxied(fake.ws_url, ping_interval=0.2, ping_timeout=0.5) as (proxy, connection),
    ):
        assert await connection.send("Browser.getVersion") == {}
        proxy.freeze()  # the browser (or the link to it) goes silent without closing
        with pytest.raises(ego.BrowserClosedError, match="no answer to a keepalive ping") as caught:
            await asyncio.wait_for(connection.send("Browser.getVersion"), HANG)
        assert "within 0.5 s" in str(caught.value)
        assert connection.closed
        with pytest.raises(ego.BrowserClosedError, match="keepalive"):
            await connection.send("Browser.getVersion")


# --- backpressure -------------------------------------------------------------------------------


async def test_a_fifty_megabyte_command_does_not_buffer_while_a_slow_reader_drains(
    ported_browser: ego.Browser, ported_tab: ego.Tab
) -> None:
    size = 50 * 1000 * 1000
    endpoint = websocket_url(ported_browser)
    async with proxied(endpoint, ping_interval=None, slow_read=(256 * 1024, 0.002)) as (
        _,
        connection,
    ):
        session = await attach(connection, ported_tab.target_id)
        sizes = record_write_buffer(connection)
        result = await session.send(
            "Runtime.evaluate",
            {"expression": "'" + "a" * size + "'.length", "returnByValue": True},
            timeout=120,
        )
        assert result["result"]["value"] == size
        # The reader was slower than the writer (the buffer filled up to the limit) ...
        assert max(sizes) >= WRITE_LIMIT
        # ... and the buffer never held more than the limit plus one slice.
        assert max(sizes) <= WRITE_LIMIT + WRITE_CHUNK
        assert await session.send("Runtime.evaluate", {"expression": "6 * 7"})


async def test_commands_sent_while_the_socket_is_full_wait_and_keep_their_order() -> None:
    async with (
        FakeCDP() as fake,
        proxied(fake.ws_url, ping_interval=None, slow_read=(64 * 1024, 0.001)) as (_, connection),
    ):
        wire = connection._wire
        assert isinstance(wire, Wire)
        sizes = record_write_buffer(connection)
        padding = "x" * 100_000
        count = 300  # 30 MB in all, sent in waves of 10 while earlier ones are being written
        calls: list[asyncio.Task[Any]] = []
        waiting = 0  # the most commands seen waiting, unframed, for the socket
        for i in range(count):
            calls.append(
                asyncio.create_task(connection.send("Test.echo", {"i": i, "pad": padding}))
            )
            if i % 10 == 9:
                await asyncio.sleep(0)  # one loop iteration: the wave is framed and written
                waiting = max(waiting, len(wire._backlog))
        results = await asyncio.wait_for(asyncio.gather(*calls), 60)
        assert results == [{}] * count
        assert [command["params"]["i"] for command in fake.commands] == list(range(count))
        assert waiting > 0  # commands did wait for the reader
        assert WRITE_LIMIT <= max(sizes) <= WRITE_LIMIT + WRITE_CHUNK


# --- invalid UTF-8 ------------------------------------------------------------------------------


class Answer:
    """A FakeCDP command handler that answers with ``raw`` (bytes sent as a text frame) and
    remembers the server side of the connection."""

    def __init__(self, raw: bytes) -> None:
        self.raw = raw
        self.websocket: ServerConnection | None = None

    async def __call__(self, websocket: ServerConnection, message: dict[str, Any]) -> None:
        self.websocket = websocket
        head = orjson.dumps({"id": message["id"], "result": {"v": "?"}})
        await websocket.send(head.replace(b'"?"', b'"' + self.raw + b'"'), text=True)


async def test_invalid_utf8_in_a_text_message_closes_with_code_1007() -> None:
    answer = Answer(b"caf\xe9")  # Latin-1, not UTF-8
    async with FakeCDP(on_command=answer) as fake:
        connection = await Connection.open(fake.ws_url)
        with pytest.raises(ego.BrowserClosedError, match="not valid UTF-8") as caught:
            await asyncio.wait_for(connection.send("Browser.getVersion"), HANG)
        assert "1007" in str(caught.value)
        assert answer.websocket is not None
        await asyncio.wait_for(answer.websocket.wait_closed(), HANG)
        assert answer.websocket.close_code == 1007  # what the client sent
        await connection.close()


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("café ✓ 😀".encode(), "café ✓ 😀"),
        (b"a\xed\xa0\x80b", "a\ud800b"),  # a lone surrogate as UTF-8 bytes: tolerated
    ],
)
async def test_utf8_text_and_lone_surrogate_bytes_arrive_intact(raw: bytes, value: str) -> None:
    async with FakeCDP(on_command=Answer(raw)) as fake:
        connection = await Connection.open(fake.ws_url)
        try:
            assert await connection.send("Browser.getVersion", timeout=HANG) == {"v": value}
        finally:
            await connection.close()
    assert fake.requests[0].path == BROWSER_PATH
