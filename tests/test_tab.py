"""Tabs against a real headless Chromium: navigate and wait, evaluate, typed JS errors.

Every page comes from the local test server on 127.0.0.1. Nothing here sleeps to synchronise:
a call that must be "in the middle of running" announces it with a console message the test
waits for (:func:`evaluate_pending`).
"""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest

import ego
from tests.helpers.browsers import HANG, NEVER, evaluate_pending
from tests.helpers.commands import free_port
from tests.helpers.page_server import PageServer

# --- navigate -------------------------------------------------------------------------------


async def test_navigate_and_evaluate(tab: ego.Tab, server: PageServer) -> None:
    url = server.route("/basic", "<title>Basic</title><p id=x>hello</p>")
    await tab.navigate(url)
    assert tab.url == url
    assert await tab.evaluate("document.title") == "Basic"
    assert await tab.evaluate("document.getElementById('x').textContent") == "hello"


async def test_navigate_waits_for_load_by_default(tab: ego.Tab, server: PageServer) -> None:
    server.route(
        "/load/pic.svg", "<svg xmlns='http://www.w3.org/2000/svg'/>", content_type="image/svg+xml"
    )
    url = server.route(
        "/load/page",
        "<script>addEventListener('load', () => { window.loadFired = true })</script>"
        "<img src='/load/pic.svg'>",
    )
    await tab.navigate(url)
    assert await tab.evaluate("[document.readyState, window.loadFired]") == ["complete", True]


async def test_hanging_subresource_reaches_domcontentloaded_but_not_load(
    tab: ego.Tab, server: PageServer
) -> None:
    server.hanging.add("/hang/forever-a.png")
    server.hanging.add("/hang/forever-b.png")
    first = server.route("/hang/a", "<title>a</title><img src='/hang/forever-a.png'>")
    second = server.route("/hang/b", "<title>b</title><img src='/hang/forever-b.png'>")

    await tab.navigate(first, wait_until="domcontentloaded", timeout=HANG)
    assert await tab.evaluate("[document.title, document.readyState]") == ["a", "interactive"]

    with pytest.raises(ego.CommandTimeoutError, match="'load'"):
        await tab.navigate(second, wait_until="load", timeout=1.0)
    # The page itself arrived; only its image hangs. The tab still answers.
    assert await tab.evaluate("[document.title, document.readyState]") == ["b", "interactive"]


async def test_navigation_to_refused_port_raises_navigation_error(tab: ego.Tab) -> None:
    url = f"http://127.0.0.1:{free_port()}/nothing-here"
    with pytest.raises(ego.NavigationError, match="ERR_CONNECTION_REFUSED"):
        await asyncio.wait_for(tab.navigate(url), HANG)


async def test_reload_on_a_fragment_url_runs_the_page_again(
    tab: ego.Tab, server: PageServer
) -> None:
    # Navigating to the same URL with a #fragment is a same-document navigation: a reload
    # must not be one, or the page's state would survive it.
    url = server.route("/reload/page", "<script>window.counter = 0</script>") + "#frag"
    await tab.navigate(url)
    assert await tab.evaluate("window.counter = 5") == 5

    await asyncio.wait_for(tab.reload(), HANG)
    assert await tab.evaluate("[window.counter, document.readyState, location.hash]") == [
        0,
        "complete",
        "#frag",
    ]

    await asyncio.wait_for(tab.reload(wait_until="commit"), HANG)
    with pytest.raises(ValueError, match="wait_until"):
        await tab.reload(wait_until="idle")  # type: ignore[arg-type]


async def test_navigate_rejects_unknown_wait_until(tab: ego.Tab) -> None:
    with pytest.raises(ValueError, match="wait_until"):
        await tab.navigate("about:blank", wait_until="idle")  # type: ignore[arg-type]


# --- evaluate: values -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("1 + 1", 2),
        ("'caf\\u00e9 \\u2028 </script> \"q\" \\\\'", 'café \u2028 </script> "q" \\'),
        ("true", True),
        ("null", None),
        ("undefined", None),
        ("Infinity", math.inf),
        ("-Infinity", -math.inf),
        ("123456789012345678901234567890n", 123456789012345678901234567890),
        ("-42n", -42),
        ("[1, 'two', [3], {four: 4}]", [1, "two", [3], {"four": 4}]),
        (
            "({a: {b: {c: [null, false, 1.5]}}, 'key with space': 'v'})",
            {"a": {"b": {"c": [None, False, 1.5]}}, "key with space": "v"},
        ),
        ("Promise.resolve({resolved: [1, 2]})", {"resolved": [1, 2]}),
        ("(async () => { await 0; return 'async' })()", "async"),
    ],
)
async def test_evaluate_returns_python_values(tab: ego.Tab, expression: str, expected: Any) -> None:
    value = await tab.evaluate(expression)
    assert value == expected
    assert type(value) is type(expected)


async def test_evaluate_returns_nan_and_negative_zero(tab: ego.Tab) -> None:
    nan = await tab.evaluate("NaN")
    assert isinstance(nan, float)
    assert math.isnan(nan)
    negative_zero = await tab.evaluate("-0")
    assert negative_zero == 0
    assert math.copysign(1.0, negative_zero) == -1.0
    positive_zero = await tab.evaluate("0")
    assert math.copysign(1.0, positive_zero) == 1.0


# --- evaluate: errors -----------------------------------------------------------------------


async def test_js_exception_carries_message_name_stack_and_line(tab: ego.Tab) -> None:
    expression = "const a = 1;\nconst b = a + 1;\n  null.boom;\nb;"
    with pytest.raises(ego.JavaScriptError) as caught:
        await tab.evaluate(expression)
    error = caught.value
    assert error.name == "TypeError"
    assert "boom" in error.js_message
    assert error.stack.startswith("TypeError: ")
    assert ":3:" in error.stack
    assert error.line == 3
    assert error.column == 8
    assert "TypeError" in str(error)
    assert isinstance(error, ego.EgoError)


async def test_js_error_thrown_in_a_function_reports_the_throwing_line(tab: ego.Tab) -> None:
    expression = (
        "function check(x) {\n"
        "  if (x > 1) {\n"
        "    throw new RangeError('x is ' + x);\n"
        "  }\n"
        "}\n"
        "check(5);"
    )
    with pytest.raises(ego.JavaScriptError) as caught:
        await tab.evaluate(expression)
    assert caught.value.name == "RangeError"
    assert caught.value.js_message == "x is 5"
    assert caught.value.line == 3
    assert "check" in caught.value.stack


async def test_thrown_non_error_value(tab: ego.Tab) -> None:
    with pytest.raises(ego.JavaScriptError) as caught:
        await tab.evaluate("throw 'x'")
    assert caught.value.value == "x"
    assert caught.value.js_message == "x"
    assert caught.value.name == "Error"
    assert caught.value.stack == ""


async def test_rejected_promise_becomes_javascript_error(tab: ego.Tab) -> None:
    with pytest.raises(ego.JavaScriptError) as caught:
        await tab.evaluate("(async () => {\n  await 0;\n  throw new SyntaxError('nope');\n})()")
    assert caught.value.name == "SyntaxError"
    assert caught.value.js_message == "nope"
    assert caught.value.line == 3

    with pytest.raises(ego.JavaScriptError) as rejected:
        await tab.evaluate("Promise.reject(42)")
    assert rejected.value.value == 42
    assert rejected.value.js_message == "42"


async def test_syntax_error_in_expression(tab: ego.Tab) -> None:
    with pytest.raises(ego.JavaScriptError) as caught:
        await tab.evaluate("1 +* 2")
    assert caught.value.name == "SyntaxError"


# --- evaluate: interrupted calls ------------------------------------------------------------


async def test_navigation_during_evaluate_raises_context_destroyed(
    tab: ego.Tab, server: PageServer
) -> None:
    await tab.navigate(server.route("/ctx/first", "<title>first</title>"))
    pending = await evaluate_pending(tab)
    await tab.navigate(server.route("/ctx/second", "<title>second</title>"))
    with pytest.raises(ego.ContextDestroyedError):
        await asyncio.wait_for(pending, HANG)
    assert await tab.evaluate("document.title") == "second"


async def test_tab_closed_mid_evaluate_raises_tab_closed(browser: ego.Browser) -> None:
    tab = await browser.new_tab()
    pending = await evaluate_pending(tab)
    await tab.close()
    with pytest.raises(ego.TabClosedError):
        await asyncio.wait_for(pending, HANG)
    assert tab.closed
    # Later calls fail the same way, not with a raw protocol error.
    with pytest.raises(ego.TabClosedError):
        await tab.evaluate("1")
    with pytest.raises(ego.TabClosedError):
        await tab.navigate("about:blank")
    await tab.close()  # idempotent


async def test_tab_closed_from_outside_mid_evaluate_raises_tab_closed(
    browser: ego.Browser,
) -> None:
    tab = await browser.new_tab()
    pending = await evaluate_pending(tab)
    # Someone else (another client, the user) closes the tab; this Tab object is not told.
    await browser.connection.send("Target.closeTarget", {"targetId": tab.target_id})
    with pytest.raises(ego.TabClosedError):
        await asyncio.wait_for(pending, HANG)
    with pytest.raises(ego.TabClosedError):
        await tab.evaluate("1")


async def test_never_settling_promise_times_out_and_tab_stays_usable(tab: ego.Tab) -> None:
    with pytest.raises(ego.CommandTimeoutError, match="the page still answers"):
        await tab.evaluate(NEVER, timeout=0.5)
    assert await tab.evaluate("'still here'") == "still here"
    assert await tab.evaluate("Promise.resolve(7)") == 7


async def test_a_spinning_script_is_stopped_at_its_timeout_and_the_tab_answers_at_once(
    tab: ego.Tab, server: PageServer
) -> None:
    await tab.navigate(server.route("/tab/spin", "<title>Spin</title><p>spin</p>"))
    # Its own 1 s ends it (the message says so), well within the hang bound.
    with pytest.raises(ego.CommandTimeoutError, match="stopped it after 1 s"):
        await asyncio.wait_for(tab.evaluate("while (true) {}", timeout=1), HANG)
    # Stopped, not left spinning: a call behind a spinning script gets no answer within its
    # timeout (ego would stop the script then and fail the call), so an answer proves it.
    assert await tab.evaluate("1 + 1", timeout=HANG) == 2
    assert await tab.evaluate("document.title") == "Spin"  # the same page, not reloaded


async def test_a_cancelled_spinning_evaluate_is_stopped_too(tab: ego.Tab) -> None:
    spinning = asyncio.ensure_future(tab.evaluate("while (true) {}", timeout=60))
    await asyncio.sleep(0)  # sent: the page runs it before anything sent later
    spinning.cancel()
    with pytest.raises(asyncio.CancelledError):
        await spinning
    # Without the stop this would wait out its timeout and fail (the script, still spinning,
    # would be stopped only then, and the call fail as timed out).
    assert await tab.evaluate("'answers'", timeout=HANG) == "answers"


def spin(tab: ego.Tab) -> asyncio.Future[Any]:
    """Start a script that never yields, sent raw so that nothing stops it on ego's side; the
    page runs it before any command sent after."""
    return asyncio.ensure_future(
        tab.send("Runtime.evaluate", {"expression": "while (true) {}"}, timeout=60)
    )


async def test_navigate_and_reload_work_on_a_tab_whose_script_spins(
    tab: ego.Tab, server: PageServer
) -> None:
    calm = server.route("/tab/calm", "<title>Calm</title>")
    other = server.route("/tab/other", "<title>Other</title>")
    await tab.navigate(calm)
    # A spinning script keeps a navigation from committing: without the stop each would fail
    # at its timeout.
    for go, title in (
        (lambda: tab.reload(timeout=HANG), "Calm"),
        (lambda: tab.navigate(other, timeout=HANG), "Other"),
    ):
        spinning = spin(tab)
        await asyncio.sleep(0)
        await go()
        assert await tab.evaluate("document.title", timeout=HANG) == title
        with pytest.raises(ego.EgoError):
            await spinning  # stopped: Chrome answers it with an error
