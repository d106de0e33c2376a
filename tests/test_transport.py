"""The CDP transport: ids to futures, flattened sessions, event fan-out, timeouts, closing.

Behaviour is checked against the real headless Chromium. :mod:`tests.fake_cdp` only stands in
where Chrome cannot misbehave on demand (a frame that is not JSON, a socket cut mid-call).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import psutil
import pytest
from websockets.asyncio.server import ServerConnection

import ego
from ego.protocol.pipe import PipeWire
from ego.protocol.transport import Connection, Subscription
from tests.helpers.browsers import HANG, NEVER, evaluate_pending, websocket_url
from tests.helpers.fake_cdp import FakeCDP, drop, garble, silent
from tests.helpers.page_server import PageServer
from tests.helpers.protocol import attach, fails_at_once


def console_text(params: dict[str, Any]) -> str:
    return str(params["args"][0].get("value"))


class Heard:
    """An event handler that records console messages and lets a test wait for a count."""

    def __init__(self) -> None:
        self.values: list[str] = []
        self._changed = asyncio.Event()

    def __call__(self, params: dict[str, Any]) -> None:
        self.values.append(console_text(params))
        self._changed.set()

    async def until(self, count: int) -> list[str]:
        async def wait() -> None:
            while len(self.values) < count:
                self._changed.clear()
                await self._changed.wait()

        await asyncio.wait_for(wait(), HANG)
        return self.values


def evaluate_params(expression: str) -> dict[str, Any]:
    return {"expression": expression, "awaitPromise": True, "returnByValue": True}


# --- requests and responses -----------------------------------------------------------------


async def test_many_commands_in_flight_are_matched_to_their_ids(tab: ego.Tab) -> None:
    count = 150
    finished: list[int] = []

    async def call(index: int) -> Any:
        # Later commands settle sooner, so the answers come back out of order.
        delay = (count - index) * 2
        result = await tab.send(
            "Runtime.evaluate",
            evaluate_params(
                f"new Promise(r => setTimeout(() => r({{i: {index}, sq: {index * index}}}), "
                f"{delay}))"
            ),
        )
        finished.append(index)
        return result["result"]["value"]

    results = await asyncio.gather(*(call(index) for index in range(count)))
    assert results == [{"i": index, "sq": index * index} for index in range(count)]
    assert sorted(finished) == list(range(count))
    assert finished != list(range(count)), "answers arrived in order: the test proved nothing"


async def test_two_tabs_share_one_socket_without_mixing_results_or_events(
    browser: ego.Browser, server: PageServer
) -> None:
    first = await browser.new_tab(server.route("/flat/a", "<title>A</title>"))
    second = await browser.new_tab(server.route("/flat/b", "<title>B</title>"))
    subscriptions: list[Subscription] = []
    try:
        assert first.session is not None
        assert second.session is not None
        assert first.session is not second.session

        expected_page = {id(first): ["/flat/a", "A"], id(second): ["/flat/b", "B"]}
        calls = [(tab, index) for index in range(40) for tab in (first, second)]
        results = await asyncio.gather(
            *(tab.evaluate(f"[location.pathname, document.title, {index}]") for tab, index in calls)
        )
        assert results == [[*expected_page[id(tab)], index] for tab, index in calls]

        # Events carry their session: each subscriber hears only its own tab.
        await asyncio.gather(first.send("Runtime.enable"), second.send("Runtime.enable"))
        heard_first, heard_second = Heard(), Heard()
        subscriptions += [
            first.session.subscribe("Runtime.consoleAPICalled", heard_first),
            second.session.subscribe("Runtime.consoleAPICalled", heard_second),
        ]
        await first.evaluate("console.log('from-a')")
        await heard_first.until(1)
        await second.evaluate("console.log('from-b')")
        assert await heard_second.until(1) == ["from-b"]
        await first.evaluate("console.log('a-again')")
        assert await heard_first.until(2) == ["from-a", "a-again"]
        assert heard_second.values == ["from-b"]
    finally:
        for subscription in subscriptions:
            subscription.close()
        await first.close()
        await second.close()


# --- events ---------------------------------------------------------------------------------


async def test_events_fan_out_to_every_subscriber(browser: ego.Browser, tab: ego.Tab) -> None:
    await tab.send("Runtime.enable")
    plain, for_any_session, later_closed = Heard(), Heard(), Heard()
    heard_async: list[str] = []
    async_done = asyncio.Event()

    async def asynchronous(params: dict[str, Any]) -> None:
        await asyncio.sleep(0)
        heard_async.append(console_text(params))
        if len(heard_async) == 3:
            async_done.set()

    connection = browser.connection
    session = await tab.attach()
    subscriptions = [
        session.subscribe("Runtime.consoleAPICalled", plain),
        session.subscribe("Runtime.consoleAPICalled", asynchronous),
        connection.subscribe("Runtime.consoleAPICalled", for_any_session, every_session=True),
        session.subscribe("Runtime.consoleAPICalled", later_closed),
    ]
    try:
        await tab.evaluate("console.log('one'); console.log('two')")
        assert await plain.until(2) == ["one", "two"]
        assert await for_any_session.until(2) == ["one", "two"]
        assert await later_closed.until(2) == ["one", "two"]

        subscriptions[3].close()
        await tab.evaluate("console.log('three')")
        assert await plain.until(3) == ["one", "two", "three"]
        await asyncio.wait_for(async_done.wait(), HANG)
        assert heard_async == ["one", "two", "three"]
        assert (await for_any_session.until(3))[-1] == "three"
        assert later_closed.values == ["one", "two"]
    finally:
        for subscription in subscriptions:
            subscription.close()


async def test_slow_and_failing_subscribers_delay_neither_responses_nor_others(
    browser: ego.Browser, tab: ego.Tab, caplog: pytest.LogCaptureFixture
) -> None:
    await tab.send("Runtime.enable")
    gate = asyncio.Event()
    slow_entered = asyncio.Event()
    slow_heard: list[str] = []
    slow_done = asyncio.Event()

    async def slow(params: dict[str, Any]) -> None:
        slow_entered.set()
        await gate.wait()
        slow_heard.append(console_text(params))
        if len(slow_heard) == 2:
            slow_done.set()

    failing_heard = Heard()

    def failing(params: dict[str, Any]) -> None:
        failing_heard(params)
        raise RuntimeError("subscriber bug on purpose")

    fast = Heard()
    session = await tab.attach()
    method = "Runtime.consoleAPICalled"
    subscriptions = [
        session.subscribe(method, slow),
        session.subscribe(method, failing),
        session.subscribe(method, fast),
    ]
    caplog.set_level(logging.ERROR, logger="ego.transport")
    try:
        await tab.evaluate("console.log('e1')")
        await asyncio.wait_for(slow_entered.wait(), HANG)  # the slow handler is now stuck
        assert await fast.until(1) == ["e1"]

        # While it is stuck, responses still come back, and later events still reach others.
        assert await asyncio.wait_for(tab.evaluate("6 * 7"), HANG) == 42
        await tab.evaluate("console.log('e2')")
        assert await fast.until(2) == ["e1", "e2"]
        # The failing handler raised on e1 and still got e2.
        assert await failing_heard.until(2) == ["e1", "e2"]
        assert slow_heard == []

        gate.set()
        await asyncio.wait_for(slow_done.wait(), HANG)
        assert slow_heard == ["e1", "e2"]
        assert "subscriber bug on purpose" in caplog.text
    finally:
        for subscription in subscriptions:
            subscription.close()


# --- timeouts -------------------------------------------------------------------------------


async def test_default_timeout_bounds_every_command(
    ported_browser: ego.Browser, ported_tab: ego.Tab
) -> None:
    connection = await Connection.open(websocket_url(ported_browser), default_timeout=0.3)
    try:
        session = await attach(connection, ported_tab.target_id)
        with pytest.raises(ego.CommandTimeoutError) as caught:
            await session.send("Runtime.evaluate", evaluate_params(NEVER))
        assert isinstance(caught.value, TimeoutError)
        assert not connection.closed

        # A per-call timeout overrides the default: this answer takes longer than 0.3 s.
        result = await session.send(
            "Runtime.evaluate",
            evaluate_params("new Promise(r => setTimeout(() => r('slow but allowed'), 600))"),
            timeout=HANG,
        )
        assert result["result"]["value"] == "slow but allowed"
    finally:
        await connection.close()


async def test_timed_out_command_does_not_poison_the_connection(
    browser: ego.Browser, tab: ego.Tab
) -> None:
    # Per-call override, shorter than the connection's default of 30 s. The answer comes at
    # 300 ms, long after the 50 ms timeout.
    with pytest.raises(ego.CommandTimeoutError):
        await tab.send(
            "Runtime.evaluate",
            evaluate_params("new Promise(r => setTimeout(() => r('late'), 300))"),
            timeout=0.05,
        )
    # The late answer arrives while this call waits; it must be dropped, not handed over.
    result = await tab.send(
        "Runtime.evaluate",
        evaluate_params("new Promise(r => setTimeout(() => r('next'), 600))"),
        timeout=HANG,
    )
    assert result["result"]["value"] == "next"
    assert not browser.connection.closed
    assert (await browser.version())["product"].startswith(("Chrome/", "HeadlessChrome/"))


async def test_mixed_timeouts_each_expire_on_their_own_deadline(
    ported_browser: ego.Browser, ported_tab: ego.Tab
) -> None:
    # One timer serves every deadline: a long one armed first must not delay a short one
    # sent later, and the short one expiring must leave the long ones pending.
    connection = await Connection.open(websocket_url(ported_browser), default_timeout=HANG)
    try:
        session = await attach(connection, ported_tab.target_id)
        never = evaluate_params(NEVER)
        long_wait = asyncio.create_task(session.send("Runtime.evaluate", never))
        unbounded = asyncio.create_task(session.send("Runtime.evaluate", never, timeout=None))
        shorter = asyncio.create_task(session.send("Runtime.evaluate", never, timeout=0.4))
        short = asyncio.create_task(session.send("Runtime.evaluate", never, timeout=0.2))
        done, _ = await asyncio.wait(
            [short, shorter, long_wait, unbounded],
            timeout=HANG,
            return_when=asyncio.FIRST_COMPLETED,
        )
        assert done == {short}
        with pytest.raises(ego.CommandTimeoutError):
            short.result()
        with pytest.raises(ego.CommandTimeoutError):
            await shorter
        assert not long_wait.done()
        assert not unbounded.done()
        # The connection still answers while those two wait.
        assert (await connection.send("Browser.getVersion"))["product"]
    finally:
        await connection.close()
    for task in (long_wait, unbounded):
        with pytest.raises(ego.BrowserClosedError):
            await task


async def test_wait_for_times_out_without_closing(browser: ego.Browser, tab: ego.Tab) -> None:
    session = await tab.attach()
    with pytest.raises(ego.CommandTimeoutError, match=r"Page\.frameNavigated"):
        await session.wait_for("Page.frameNavigated", timeout=0.2)
    assert await tab.evaluate("1") == 1


# --- size -----------------------------------------------------------------------------------


async def test_fifty_megabyte_string_result_arrives_intact(either_tab: ego.Tab) -> None:
    tab = either_tab
    size = 50 * 1024 * 1024
    value = await tab.evaluate(
        "(() => {"
        "  const chunk = Array.from({length: 1024},"
        "    (_, i) => String.fromCharCode(97 + (i * 7) % 26)).join('');"
        "  return '<' + chunk.repeat(51200) + '>';"
        "})()",
        timeout=120,
    )
    assert isinstance(value, str)
    assert len(value) == size + 2
    assert value[0] == "<"
    assert value[-1] == ">"
    for position in (0, 1, 1023, 1024, 777_777, size // 2 + 5, size - 1):
        assert value[1 + position] == chr(97 + (position % 1024 * 7) % 26), position
    # The connection that carried it is still fine.
    assert await tab.evaluate("'after'") == "after"


# --- closing --------------------------------------------------------------------------------


async def test_closing_the_connection_fails_pending_calls_and_waiters(
    ported_browser: ego.Browser, ported_tab: ego.Tab
) -> None:
    connection = await Connection.open(websocket_url(ported_browser))
    session = await attach(connection, ported_tab.target_id)
    pending = [
        asyncio.create_task(session.send("Runtime.evaluate", evaluate_params(NEVER), timeout=None))
        for _ in range(5)
    ]
    expected = session.expect("Page.frameNavigated")
    waiting = asyncio.create_task(session.wait_for("Page.frameNavigated", timeout=3600))
    # Commands on a session run in order: this answer means the five are already in Chrome.
    one = await session.send("Runtime.evaluate", evaluate_params("1"))
    assert one["result"]["value"] == 1
    assert not any(task.done() for task in pending)

    await connection.close()

    for task in [*pending, waiting]:
        with pytest.raises(ego.BrowserClosedError):
            await asyncio.wait_for(task, HANG)
    with pytest.raises(ego.BrowserClosedError):
        await expected
    assert connection.closed
    fails_at_once(connection.send("Browser.getVersion", timeout=None), ego.BrowserClosedError)
    assert isinstance(connection.expect("Page.loadEventFired").exception(), ego.BrowserClosedError)
    await connection.close()  # idempotent
    # The shared connection to the same Chrome is untouched.
    assert await ported_tab.evaluate("2") == 2


async def test_chrome_dying_fails_every_pending_call_and_later_sends() -> None:
    launched = await ego.launch()
    try:
        tab = await launched.new_tab()
        connection = launched.connection
        assert isinstance(connection._wire, PipeWire)  # as every browser ego launches
        pending = [await evaluate_pending(tab) for _ in range(3)]
        raw = asyncio.create_task(
            tab.send("Runtime.evaluate", evaluate_params(NEVER), timeout=None)
        )
        expected = connection.expect("Target.targetCreated")
        waiting = asyncio.create_task(
            connection.wait_for("Page.frameNavigated", every_session=True, timeout=3600)
        )
        closed_callbacks: list[str] = []
        connection.on_close(lambda: closed_callbacks.append("closed"))
        assert await tab.evaluate("1") == 1  # everything above is now waiting inside Chrome

        assert launched.process is not None
        root = psutil.Process(launched.process.pid)
        tree = [root, *root.children(recursive=True)]
        for process in tree:
            process.kill()

        for task in [*pending, raw, waiting]:
            with pytest.raises(ego.BrowserClosedError, match="closed its debugging pipe"):
                await asyncio.wait_for(task, HANG)
        with pytest.raises(ego.BrowserClosedError):
            await expected
        assert closed_callbacks == ["closed"]
        assert launched.closed
        fails_at_once(connection.send("Browser.getVersion"), ego.BrowserClosedError)
        fails_at_once(tab.evaluate("1"), ego.BrowserClosedError)
    finally:
        await launched.close()


# --- faults a real browser cannot produce (fake endpoint) -----------------------------------


async def test_garbled_frame_fails_pending_calls_instead_of_hanging() -> None:
    async def garble_third(websocket: ServerConnection, message: dict[str, Any]) -> None:
        if message["id"] == 3:
            await garble(websocket, message)

    async with FakeCDP(on_command=garble_third) as fake:
        connection = await Connection.open(fake.ws_url)
        waiting = asyncio.create_task(connection.wait_for("Page.loadEventFired", timeout=3600))
        calls = [
            asyncio.create_task(connection.send("Browser.getVersion", timeout=None))
            for _ in range(3)
        ]
        for task in [*calls, waiting]:
            with pytest.raises(ego.BrowserClosedError, match="not JSON"):
                await asyncio.wait_for(task, HANG)
        assert connection.closed
        assert len(fake.commands) == 3
        fails_at_once(connection.send("Browser.getVersion"), ego.BrowserClosedError)


async def test_frame_that_is_json_but_not_a_message_fails_pending_calls() -> None:
    async def send_a_list(websocket: ServerConnection, message: dict[str, Any]) -> None:
        await websocket.send("[1, 2, 3]")

    async with FakeCDP(on_command=send_a_list) as fake:
        connection = await Connection.open(fake.ws_url)
        with pytest.raises(ego.BrowserClosedError):
            await asyncio.wait_for(connection.send("Browser.getVersion", timeout=None), HANG)
        assert connection.closed


async def test_socket_dropped_mid_call_fails_pending_calls_and_waiters() -> None:
    async def drop_second(websocket: ServerConnection, message: dict[str, Any]) -> None:
        if message["id"] == 2:
            await drop(websocket, message)

    async with FakeCDP(on_command=drop_second) as fake:
        connection = await Connection.open(fake.ws_url)
        expected = connection.expect("Page.loadEventFired", every_session=True)
        first = asyncio.create_task(connection.send("Runtime.evaluate", timeout=None))
        await asyncio.wait_for(fake.command_seen.wait(), HANG)
        second = asyncio.create_task(connection.send("Browser.getVersion", timeout=None))
        for task in (first, second):
            with pytest.raises(ego.BrowserClosedError):
                await asyncio.wait_for(task, HANG)
        with pytest.raises(ego.BrowserClosedError):
            await expected
        fails_at_once(connection.send("Browser.getVersion"), ego.BrowserClosedError)


async def test_abnormal_close_code_is_reported() -> None:
    async def close_oddly(websocket: ServerConnection, message: dict[str, Any]) -> None:
        await websocket.close(4001, "fleet says bye")

    async with FakeCDP(on_command=close_oddly) as fake:
        connection = await Connection.open(fake.ws_url)
        with pytest.raises(ego.BrowserClosedError, match="4001") as caught:
            await asyncio.wait_for(connection.send("Browser.getVersion", timeout=None), HANG)
        assert "fleet says bye" in str(caught.value)


async def test_absent_answer_is_bounded_by_the_default_timeout() -> None:
    async with FakeCDP(on_command=silent) as fake:
        connection = await Connection.open(fake.ws_url, default_timeout=0.2)
        try:
            with pytest.raises(ego.CommandTimeoutError, match=r"Browser\.getVersion"):
                await connection.send("Browser.getVersion")
            assert not connection.closed
        finally:
            await connection.close()
