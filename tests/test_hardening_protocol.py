"""What Chrome says or refuses can never take the connection down (issue 12).

Against the real headless Chromium: strings holding unpaired UTF-16 surrogates in every place
a message can carry them, both ways; a command too large for Chrome's DevTools socket; a tab
whose renderer crashes mid-call. Each ends with proof that the connection, and other tabs,
still work. Every test on a browser runs twice: over the pipe of a browser ego launched, and
over a websocket to one.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

import ego
from ego.protocol._codec import decode_lenient, encode_lenient
from ego.protocol.transport import MAX_COMMAND_BYTES
from tests.helpers.browsers import HANG, evaluate_pending
from tests.helpers.page_server import PageServer
from tests.helpers.pool import Fleet, hold, product
from tests.helpers.protocol import fails_at_once

#: The high half of 😀 alone: what cutting text with emoji at a length leaves.
HIGH = "\ud83d"


async def still_works(browser: ego.Browser, *tabs: ego.Tab) -> None:
    """The connection is up and every tab given (plus a fresh one) still evaluates."""
    assert not browser.closed
    other = await browser.new_tab()
    try:
        for each in (*tabs, other):
            assert await each.evaluate("6 * 7", timeout=HANG) == 42
    finally:
        await other.close()


def assert_nothing_pending(browser: ego.Browser) -> None:
    assert browser.connection.resources()["pending"] == 0


# --- lone surrogates from Chrome --------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("'a\\ud800b'", "a\ud800b"),
        ("'😀'.slice(0, 1)", HIGH),
        ("'x' + '😀'.slice(1)", "x\ude00"),  # the low half alone
        ("'\\udbff\\udfff\\udbff'", "\U0010ffff\udbff"),  # a valid pair, then a lone half
        ("({['k\\ud800']: 1, ok: 'v\\udc00'})", {"k\ud800": 1, "ok": "v\udc00"}),
        (
            "[[[['deep \\ud800']]], {a: [{b: '\\udfff'}]}]",
            [[[["deep \ud800"]]], {"a": [{"b": "\udfff"}]}],
        ),
        ("Promise.resolve('async \\ud800')", "async \ud800"),
    ],
)
async def test_a_result_with_a_lone_surrogate_arrives_intact(
    either_browser: ego.Browser, either_tab: ego.Tab, expression: str, expected: Any
) -> None:
    assert await either_tab.evaluate(expression, timeout=HANG) == expected
    await still_works(either_browser, either_tab)


async def test_a_lone_surrogate_nested_hundreds_deep_arrives_intact(
    either_browser: ego.Browser, either_tab: ego.Tab
) -> None:
    value = await either_tab.evaluate(
        "(() => { let v = 'end \\ud800'; for (let i = 0; i < 250; i++) v = [v, {k: 'x\\udc00'}];"
        " return v })()",
        timeout=HANG,
    )
    depth = 0
    while isinstance(value, list):
        assert value[1] == {"k": "x\udc00"}
        value, depth = value[0], depth + 1
    assert (depth, value) == (250, "end \ud800")
    await still_works(either_browser, either_tab)


@pytest.mark.parametrize(
    "throw",
    [
        "throw new Error('bad \\ud800 thing')",
        "throw 'bad \\ud800 thing'",
        "Promise.reject(new TypeError('bad \\ud800 thing'))",
    ],
)
async def test_a_thrown_error_with_a_lone_surrogate_is_a_javascript_error(
    either_browser: ego.Browser, either_tab: ego.Tab, throw: str
) -> None:
    with pytest.raises(ego.JavaScriptError) as caught:
        await either_tab.evaluate(throw, timeout=HANG)
    assert "bad \ud800 thing" in caught.value.js_message + str(caught.value.value)
    await still_works(either_browser, either_tab)


async def test_an_event_with_a_lone_surrogate_reaches_its_subscriber(
    either_browser: ego.Browser, either_tab: ego.Tab
) -> None:
    await either_tab.send("Runtime.enable")
    heard = (await either_tab.attach()).expect(
        "Runtime.consoleAPICalled",
        lambda params: params["args"][0].get("value", "").startswith("said"),
    )
    await either_tab.evaluate(
        "console.log('said \\ud800', {['k\\udc00']: 'v\\ud800'})", timeout=HANG
    )
    params = await asyncio.wait_for(heard, HANG)
    assert params["args"][0]["value"] == "said \ud800"
    preview = params["args"][1]["preview"]["properties"]
    assert [(each["name"], each["value"]) for each in preview] == [("k\udc00", "v\ud800")]
    await still_works(either_browser, either_tab)


# --- lone surrogates to Chrome ----------------------------------------------------------------


async def test_a_lone_surrogate_can_be_sent_and_comes_back_unchanged(
    either_browser: ego.Browser, either_tab: ego.Tab
) -> None:
    # The expression itself holds the lone code point (not a JS escape).
    assert await either_tab.evaluate("'a\ud800b'.charCodeAt(1)", timeout=HANG) == 0xD800
    cut = await either_tab.evaluate("'😀'.slice(0, 1)", timeout=HANG)
    assert cut == HIGH
    assert await either_tab.evaluate(f"['{cut}', '{cut}'.length]", timeout=HANG) == [HIGH, 1]
    # In an object key of the params too.
    scope = await either_tab.send("Runtime.evaluate", {"expression": "globalThis"})
    result = await either_tab.send(
        "Runtime.callFunctionOn",
        {
            "functionDeclaration": "function (o) { return Object.keys(o)[0].charCodeAt(0) }",
            "objectId": scope["result"]["objectId"],
            "arguments": [{"value": {"\udc00": 1}}],
            "returnByValue": True,
        },
    )
    assert result["result"]["value"] == 0xDC00
    await still_works(either_browser, either_tab)


@pytest.mark.parametrize(
    ("params", "error"),
    [
        ({"expression": "1", "bad": object()}, TypeError),
        ({"expression": "1", "huge": 2**70}, TypeError),
        ({"expression": "'\ud800'", "bad": object()}, TypeError),
        ({"expression": "'\ud800'", "nan": math.nan}, ValueError),
    ],
)
async def test_params_json_cannot_hold_raise_and_leave_nothing_pending(
    either_browser: ego.Browser, either_tab: ego.Tab, params: dict[str, Any], error: type[Exception]
) -> None:
    fails_at_once(either_tab.send("Runtime.evaluate", params), error)
    assert_nothing_pending(either_browser)
    await still_works(either_browser, either_tab)


def test_the_lenient_codec_keeps_lone_surrogates_and_refuses_what_is_not_json() -> None:
    # Chrome's escape, and raw surrogate bytes (UTF-8 that encodes a surrogate).
    assert decode_lenient(b'{"v":"a\\ud800b"}') == {"v": "a\ud800b"}
    assert decode_lenient(b'{"v":"a\xed\xa0\x80b"}') == {"v": "a\ud800b"}
    with pytest.raises(ValueError, match="Expecting value"):
        decode_lenient(b"not json")
    with pytest.raises(ValueError, match="nests too deeply"):
        decode_lenient(b"[" * 100_000)
    with pytest.raises(ValueError, match="can't decode"):
        decode_lenient(b'{"v":"\xff"}')
    refused = TypeError("Type is not JSON serializable: object")
    with pytest.raises(TypeError) as caught:
        encode_lenient({"v": object()}, refused)
    assert caught.value is refused
    try:
        orjson.dumps({"k\udc00": "v\ud800"})
    except TypeError as exc:
        encoded = encode_lenient({"k\udc00": "v\ud800"}, exc)
    assert encoded == b'{"k\\udc00":"v\\ud800"}'


# --- commands larger than Chrome takes --------------------------------------------------------


async def test_a_command_over_the_limit_is_refused_before_sending(
    either_browser: ego.Browser, either_tab: ego.Tab
) -> None:
    # The smallest evaluate over the limit: the JSON around the expression is ~150 bytes.
    expression = "'" + "a" * (MAX_COMMAND_BYTES - 10) + "'.length"
    exc = fails_at_once(either_tab.evaluate(expression), ego.CommandTooLargeError)
    assert isinstance(exc, ego.CommandTooLargeError)
    assert exc.limit == MAX_COMMAND_BYTES
    assert MAX_COMMAND_BYTES < exc.size < MAX_COMMAND_BYTES + 1000
    assert f"{exc.size:,} bytes" in str(exc)
    assert f"{MAX_COMMAND_BYTES:,}" in str(exc)
    assert isinstance(exc, ValueError)  # as before, a bad argument to send
    # Browser-level commands are checked the same way.
    fails_at_once(
        either_browser.connection.send("Target.createTarget", {"url": "a" * MAX_COMMAND_BYTES}),
        ego.CommandTooLargeError,
    )
    del expression
    assert_nothing_pending(either_browser)
    await still_works(either_browser, either_tab)


async def test_a_large_command_under_the_limit_is_sent(either_tab: ego.Tab) -> None:
    size = 8 * 1024 * 1024
    assert await either_tab.evaluate("'" + "a" * size + "'.length", timeout=HANG) == size


# --- a crashed renderer -----------------------------------------------------------------------


def crash(tab: ego.Tab) -> None:
    """Crash the tab's renderer: Page.crash never answers, so nobody waits for it."""
    command = asyncio.ensure_future(tab.send("Page.crash", timeout=HANG))
    # It fails with the crash itself (or Chrome's own "Target crashed", whichever is first).
    command.add_done_callback(lambda done: done.cancelled() or done.exception())


async def test_a_crash_fails_pending_calls_at_once_and_later_ones_until_reloaded(
    either_browser: ego.Browser, either_tab: ego.Tab, server: PageServer
) -> None:
    await either_tab.navigate(server.route("/crash/a", "<title>A</title><p>a</p>"), timeout=HANG)
    other = await either_browser.new_tab()
    try:
        # Its own timeout is far beyond HANG: ending within HANG, it did not wait for it.
        pending = await evaluate_pending(either_tab, timeout=120)
        loaded = (await either_tab.attach()).expect("Page.loadEventFired")
        crash(either_tab)
        with pytest.raises(ego.TargetCrashedError, match=r"crashed.*tab\.reload\(\)"):
            await asyncio.wait_for(pending, HANG)
        with pytest.raises(ego.TargetCrashedError):
            await asyncio.wait_for(loaded, HANG)
        assert either_tab.crashed
        assert not either_tab.closed

        # Later calls fail at once, whatever they are, until the tab is reloaded.
        fails_at_once(either_tab.evaluate("1"), ego.TargetCrashedError)
        fails_at_once(either_tab.send("Page.getFrameTree"), ego.TargetCrashedError)
        assert await other.evaluate("'other tab'", timeout=HANG) == "other tab"
        assert not either_browser.closed

        await either_tab.reload(timeout=HANG)
        assert not either_tab.crashed
        assert await either_tab.evaluate("document.title", timeout=HANG) == "A"
        assert await other.evaluate("1 + 1", timeout=HANG) == 2
    finally:
        await other.close()


async def test_a_crashed_tab_comes_back_by_navigating(
    either_browser: ego.Browser, either_tab: ego.Tab, server: PageServer
) -> None:
    await either_tab.evaluate("1", timeout=HANG)
    crashed = (await either_tab.attach()).expect("Inspector.targetCrashed")
    crash(either_tab)
    await asyncio.wait_for(crashed, HANG)
    with pytest.raises(ego.TargetCrashedError, match="reload"):
        await either_tab.evaluate("1")
    # The Fetch domain is the browser's: a replay can still serve the reload's requests.
    assert await either_tab.send("Fetch.enable", timeout=HANG) == {}
    assert await either_tab.send("Fetch.disable", timeout=HANG) == {}
    await either_tab.navigate(server.route("/crash/b", "<title>B</title>"), timeout=HANG)
    assert not either_tab.crashed
    assert await either_tab.evaluate("document.title", timeout=HANG) == "B"
    await still_works(either_browser, either_tab)


async def test_a_crashed_tab_can_still_be_closed(either_browser: ego.Browser) -> None:
    tab = await either_browser.new_tab()
    crashed = (await tab.attach()).expect("Inspector.targetCrashed")
    crash(tab)
    await asyncio.wait_for(crashed, HANG)
    await asyncio.wait_for(tab.close(), HANG)
    assert tab.closed
    assert tab.target_id not in {each.target_id for each in await either_browser.tabs()}
    await still_works(either_browser)


@pytest.fixture
def fleet() -> Iterator[Fleet]:
    made = Fleet()
    yield made
    made.release_all()


async def test_a_pool_retries_a_read_call_whose_tab_crashed_on_a_fresh_tab(
    fleet: Fleet,
) -> None:
    async with fleet.pool(1, per_browser=1) as pool:
        call = hold(pool, "h-crash")
        await fleet.arrived("h-crash")
        channel = fleet.where("h-crash")
        held = next(each for each in channel.evaluations if each.tool_args == {"id": "h-crash"})
        channel.emit("Inspector.targetCrashed", {}, held.session_id)
        # A read call is run again, in a fresh tab of the same browser (it did not die).
        await fleet.arrived("h-crash", times=2)
        fleet.release("h-crash")
        assert await asyncio.wait_for(call, HANG) == product("h-crash")
        runs = [each for each in channel.evaluations if each.tool_args == {"id": "h-crash"}]
        assert len({each.target.target_id for each in runs}) == 2
        assert pool.stats.retried == 1


async def test_a_write_call_whose_tab_crashed_is_not_retried(fleet: Fleet) -> None:
    async with fleet.pool(1, per_browser=1) as pool:
        call = hold(pool, "hw-crash", tool="hold_write")
        await fleet.arrived("hw-crash")
        channel = fleet.where("hw-crash")
        held = next(each for each in channel.evaluations if each.tool_args == {"id": "hw-crash"})
        channel.emit("Inspector.targetCrashed", {}, held.session_id)
        with pytest.raises(ego.NotRetriedError, match="its tab crashed mid-call"):
            await asyncio.wait_for(call, HANG)
        assert fleet.counts["hw-crash"] == 1
        # The next call gets a fresh tab, not the crashed one back.
        fleet.release("h-next")
        assert await asyncio.wait_for(hold(pool, "h-next"), HANG) == product("h-next")
        after = next(each for each in channel.evaluations if each.tool_args == {"id": "h-next"})
        assert after.target.target_id != held.target.target_id
