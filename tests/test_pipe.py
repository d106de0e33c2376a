"""The debugging pipe as a channel, against Chrome's side of it played in this process.

Chrome's own behaviour over the pipe (launch, no port, results, surrogates, crashes, a killed
Chrome) is checked on the real browser in test_chrome.py, test_transport.py and
test_hardening_protocol.py; here are what Chrome cannot be made to do on demand: a message cut
at any byte, a message that is not JSON, a reader that stops reading, messages that arrive
before anyone listens.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest

import ego
from ego.protocol.pipe import WRITE_CHUNK, WRITE_EAGER, WRITE_LIMIT, PipeWire
from ego.protocol.transport import Connection
from tests.helpers.browsers import HANG
from tests.helpers.protocol import fails_at_once


class ChromeSide:
    """Chrome's ends of the two pipes: it reads what ego writes, writes what ego reads."""

    def __init__(self, reads: int, writes: int) -> None:
        self.reads_fd = reads
        self._writes = open(writes, "wb", buffering=0)  # noqa: SIM115 (closed in close())
        self._reader: asyncio.StreamReader | None = None
        self._read_transport: asyncio.ReadTransport | None = None

    async def start_reading(self) -> None:
        """Start taking what ego writes (until then, nothing is read: the pipe fills)."""
        loop = asyncio.get_running_loop()
        self._reader = asyncio.StreamReader(limit=64 * 1024 * 1024)
        reader = self._reader
        pipe = open(self.reads_fd, "rb", buffering=0)  # noqa: SIM115 (the transport closes it)
        self._read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), pipe
        )

    async def message(self) -> Any:
        """The next message ego wrote, parsed."""
        assert self._reader is not None
        data = await asyncio.wait_for(self._reader.readuntil(b"\0"), HANG)
        return orjson.loads(data[:-1])

    async def at_end(self) -> bool:
        """True once ego closed its end (everything before was read)."""
        assert self._reader is not None
        return await asyncio.wait_for(self._reader.read(), HANG) == b""

    def write(self, data: bytes) -> None:
        """Write raw bytes to ego (blocking; the pipe's buffer takes these small amounts)."""
        self._writes.write(data)

    def answer(self, message: dict[str, Any], result: Any) -> None:
        self.write(orjson.dumps({"id": message["id"], "result": result}) + b"\0")

    def close(self) -> None:
        """Chrome exits: both of its ends close."""
        self._writes.close()
        if self._read_transport is not None:
            self._read_transport.close()
        else:
            os.close(self.reads_fd)


def count_writes(connection: Connection) -> list[int]:
    """The sizes of the writes the connection's pipe hands its write transport from now on."""
    wire = connection._wire
    assert isinstance(wire, PipeWire)
    writer = wire._writer
    assert writer is not None
    writes: list[int] = []
    write = writer.write

    def counting_write(data: bytes | bytearray | memoryview) -> None:
        writes.append(len(data))
        write(data)

    writer.write = counting_write  # type: ignore[method-assign]
    return writes


@pytest.fixture
async def pipes() -> AsyncIterator[tuple[PipeWire, ChromeSide]]:
    chrome_reads, ego_writes = os.pipe()
    ego_reads, chrome_writes = os.pipe()
    wire = await PipeWire.open(ego_reads, ego_writes)
    chrome = ChromeSide(chrome_reads, chrome_writes)
    yield wire, chrome
    wire.abort()
    chrome.close()


@pytest.fixture
async def connected(pipes: tuple[PipeWire, ChromeSide]) -> tuple[Connection, ChromeSide]:
    """A Connection over the wire, with Chrome's side reading what it sends."""
    wire, chrome = pipes
    await chrome.start_reading()
    return Connection(wire), chrome


async def sent(
    connection: Connection, chrome: ChromeSide, method: str
) -> asyncio.Task[dict[str, Any]]:
    """A call of ``method`` with no timeout, once Chrome's side has read it."""
    call = asyncio.create_task(connection.send(method, timeout=None))
    assert (await chrome.message())["method"] == method
    return call


async def test_messages_cut_at_any_byte_arrive_whole_and_in_order(
    pipes: tuple[PipeWire, ChromeSide],
) -> None:
    wire, _ = pipes
    got: list[bytes] = []
    wire.attach(got.append, lambda reason: None)
    big = b'{"big":"' + b"x" * (3 * 1024 * 1024) + b'"}'
    stream = b'{"a":1}\0{"b":2}\0' + big + b'\0{"c":"\\ud83d"}\0{"d":4}\0'
    # Cuts inside a message, right before and after a NUL, several messages in one piece:
    # each piece is handed over as one read of the pipe would be.
    cuts = [3, 8, 9, 17, 20, 1024 * 1024, len(stream) - 12, len(stream) - 1, len(stream)]
    start = 0
    for cut in cuts:
        wire._received(stream[start:cut])
        start = cut
    assert got == [b'{"a":1}', b'{"b":2}', big, b'{"c":"\\ud83d"}', b'{"d":4}']


async def test_messages_read_before_attach_are_delivered_on_attach(
    pipes: tuple[PipeWire, ChromeSide],
) -> None:
    wire, _ = pipes
    wire._received(b'{"method":"Early.event"}\0{"method":"Also.early"}\0')
    got: list[bytes] = []
    wire.attach(got.append, lambda reason: None)
    assert got == [b'{"method":"Early.event"}', b'{"method":"Also.early"}']


async def test_a_lone_command_is_written_before_the_loop_turns(
    connected: tuple[Connection, ChromeSide],
) -> None:
    connection, chrome = connected
    writes = count_writes(connection)
    # Stepped by hand, without the loop: the command is written by the time the call waits.
    call = connection.send("Browser.getVersion")
    call.send(None)
    assert len(writes) == 1
    assert (await chrome.message())["method"] == "Browser.getVersion"
    call.close()
    assert connection.resources()["pending"] == 0


async def test_commands_queued_in_one_loop_turn_are_joined(
    connected: tuple[Connection, ChromeSide],
) -> None:
    connection, chrome = connected
    writes = count_writes(connection)
    calls = [
        asyncio.create_task(connection.send("Runtime.evaluate", {"expression": str(n)}))
        for n in range(3)
    ]
    sent = [await chrome.message() for _ in range(3)]
    assert [each["params"]["expression"] for each in sent] == ["0", "1", "2"]
    # The first at once, the two made after it in the same turn in one write.
    assert len(writes) == 2
    for message in sent:
        chrome.answer(message, {"echo": message["params"]["expression"]})
    assert [await call for call in calls] == [{"echo": "0"}, {"echo": "1"}, {"echo": "2"}]
    # An answer came: the next lone command goes at once again, alone.
    again = asyncio.create_task(connection.send("Runtime.evaluate", {"expression": "3"}))
    message = await chrome.message()
    assert len(writes) == 3
    chrome.answer(message, {"echo": "3"})
    assert await again == {"echo": "3"}


async def test_a_burst_leaves_in_writes_of_many_commands_as_it_is_made(
    connected: tuple[Connection, ChromeSide],
) -> None:
    connection, chrome = connected
    writes = count_writes(connection)
    count = 200
    padding = "p" * 1000
    # All made in one loop turn: they leave in writes of about WRITE_EAGER bytes, the first
    # ones before the turn is over, not one write per command nor one at the end.
    calls = [
        asyncio.create_task(connection.send("Runtime.evaluate", {"n": n, "pad": padding}))
        for n in range(count)
    ]
    received = [await chrome.message() for _ in range(count)]
    assert [each["params"]["n"] for each in received] == list(range(count))
    assert 200_000 // WRITE_EAGER <= len(writes) <= 2 + 250_000 // WRITE_EAGER
    assert max(writes) < WRITE_EAGER + 1100
    for message in received:
        chrome.answer(message, {"n": message["params"]["n"]})
    assert [(await call)["n"] for call in calls] == list(range(count))


async def test_a_half_written_answer_blocks_nothing_and_its_call_times_out_alone(
    pipes: tuple[PipeWire, ChromeSide],
) -> None:
    wire, chrome = pipes
    await chrome.start_reading()
    connection = Connection(wire, default_timeout=0.2)
    slow = asyncio.create_task(connection.send("Browser.getVersion"))
    message = await chrome.message()
    chrome.write(b'{"id":%d,"result":{"pro' % message["id"])
    # The loop keeps running while the rest of the message has not come: the call's own
    # timer fires, and another call gets its answer.
    with pytest.raises(ego.CommandTimeoutError):
        await asyncio.wait_for(slow, HANG)
    chrome.write(b'duct":"late"}}\0')
    other = asyncio.create_task(connection.send("Target.getTargets"))
    chrome.answer(await chrome.message(), {"targetInfos": []})
    assert await other == {"targetInfos": []}
    assert not connection.closed


async def test_chrome_going_away_fails_every_pending_call_at_once(
    connected: tuple[Connection, ChromeSide],
) -> None:
    connection, chrome = connected
    calls = [await sent(connection, chrome, "Runtime.evaluate") for _ in range(3)]
    waiting = asyncio.create_task(connection.wait_for("Page.loadEventFired", timeout=3600))
    chrome.write(b'{"id":99,"res')  # a message cut short by the exit
    chrome.close()
    for task in [*calls, waiting]:
        with pytest.raises(ego.BrowserClosedError, match="closed its debugging pipe"):
            await asyncio.wait_for(task, HANG)
    assert connection.closed
    fails_at_once(connection.send("Browser.getVersion"), ego.BrowserClosedError)
    assert not connection._wire.send(b"{}")


async def test_a_message_that_is_not_json_drops_the_pipe_and_fails_pending_calls(
    connected: tuple[Connection, ChromeSide],
) -> None:
    connection, chrome = connected
    call = await sent(connection, chrome, "Browser.getVersion")
    chrome.write(b"not json at all\0")
    with pytest.raises(ego.BrowserClosedError, match="not JSON"):
        await asyncio.wait_for(call, HANG)
    assert connection.closed
    assert await chrome.at_end()  # ego closed its end: Chrome would quit


async def test_a_full_pipe_holds_messages_here_in_order_until_chrome_reads(
    pipes: tuple[PipeWire, ChromeSide],
) -> None:
    wire, chrome = pipes
    connection = Connection(wire)
    writer = wire._writer
    assert writer is not None
    paused = asyncio.Event()
    pause = wire._pause

    def noting_pause() -> None:
        pause()
        paused.set()

    wire._pause = noting_pause  # type: ignore[method-assign]
    padding = "x" * 200_000
    count = 40  # 8 MB: many times what the pipe and the write buffer hold
    calls = [
        asyncio.create_task(connection.send("Runtime.evaluate", {"n": n, "pad": padding}))
        for n in range(count)
    ]
    # Nobody reads: the write transport asks to pause, and the rest waits on the wire, whose
    # messages leave no more than a slice at a time.
    await asyncio.wait_for(paused.wait(), HANG)
    assert writer.get_write_buffer_size() <= WRITE_LIMIT + WRITE_CHUNK
    assert sum(len(each) for each in wire._queue) > 6_000_000
    await chrome.start_reading()
    received = [await chrome.message() for _ in range(count)]
    assert [each["params"]["n"] for each in received] == list(range(count))
    for message in received:
        chrome.answer(message, {"n": message["params"]["n"]})
    assert [(await call)["n"] for call in calls] == list(range(count))


async def test_a_large_message_is_handed_over_a_slice_at_a_time(
    connected: tuple[Connection, ChromeSide],
) -> None:
    connection, chrome = connected
    writes = count_writes(connection)
    size = 5 * 1024 * 1024
    call = asyncio.create_task(connection.send("Runtime.evaluate", {"pad": "y" * size}))
    message = await chrome.message()
    assert len(message["params"]["pad"]) == size
    chrome.answer(message, {"ok": True})
    assert await call == {"ok": True}
    assert max(writes) <= WRITE_CHUNK
    assert sum(writes) > size


async def test_closing_tells_chrome_and_fails_what_is_pending(
    connected: tuple[Connection, ChromeSide],
) -> None:
    connection, chrome = connected
    call = await sent(connection, chrome, "Runtime.evaluate")
    await connection.close()
    with pytest.raises(ego.BrowserClosedError):
        await asyncio.wait_for(call, HANG)
    assert await chrome.at_end()
    await connection.close()  # idempotent
    assert not connection._wire.send(b"{}")
