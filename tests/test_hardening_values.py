"""Values crossing the page boundary cannot take a call, or ego, down (issue 12).

A tool's result can never pass for the cache's own signal; a BigInt too long for Python's
int comes back as its digits; whatever a tool or an evaluate returns or throws that Chrome
cannot send back by value is a JavaScriptError (a BrowserToolError for a tool), never a
ProtocolError; args are refused past the documented depth, and args that are not JSON are
InvalidArgsError.
"""

from __future__ import annotations

import sys
import uuid
from pathlib import Path
from typing import Any, cast

import pytest

import ego
from ego.calls import prepare
from ego.errors import BrowserToolError, InvalidArgsError, JavaScriptError, ProtocolError
from ego.learning.catalog.registry import Learnings
from ego.protocol.remote_values import python_value
from ego.runtime.cache import PORTABLE_SIGNAL_KEY, SIGNAL_KEY, RunStats, cache_key, run_cached
from ego.runtime.js import MAX_JSON_DEPTH, embed_json
from ego.site import Site
from tests.helpers.learnings import make_site, tool
from tests.helpers.page_server import PageServer

PAGE = "<!doctype html><title>Values</title><p>values page</p>\n"

#: What the cache's signal looked like before it carried a nonce, for each signal.
FORMER_SIGNALS = ["NEEDS_STORE", "NO_STORAGE", "NO_EVAL"]

#: Counts its runs in the page, then returns the object named by ``args.signal``.
FORGER = """async ({signal}) => {
  window.__runs = (window.__runs || 0) + 1;
  return {__ego_cache__: signal};
}
"""

ANY_ARGS = {"a": {}}


def new_id(prefix: str) -> str:
    """A site id no other test uses, so that localStorage keys never collide."""
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def nest(levels: int) -> Any:
    """``levels`` lists, one inside the other, around 1."""
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


@pytest.fixture
async def page(tab: ego.Tab, server: PageServer) -> ego.Tab:
    await tab.navigate(server.route("/hardening/values", PAGE))
    return tab


async def runs(tab: ego.Tab) -> int:
    count = await tab.evaluate("window.__runs || 0")
    await tab.evaluate("window.__runs = 0")
    return int(count)


# --- the cache signal cannot be forged -----------------------------------------------------------


async def test_a_result_shaped_like_a_former_signal_runs_once_and_comes_back(
    tmp_path: Path, browser: ego.Browser, page: ego.Tab
) -> None:
    site_id = new_id("forge")
    make_site(
        tmp_path,
        site_id,
        domains=["127.0.0.1"],
        browser_tools={"forge": tool(FORGER, args={"signal": {"type": "string"}})},
    )
    site = Site(browser, Learnings(roots=[tmp_path]))
    for signal in FORMER_SIGNALS:
        forged = {"__ego_cache__": signal}
        # First call (the Call misses and stores), then hot calls: once each, every time.
        for expected_mode in ("stored", "cached", "cached"):
            if expected_mode == "stored":
                await page.evaluate("localStorage.clear()")
                await page.reload()  # a new document: the page-side memo starts empty
            result = await site.run_browser_tool(site_id, "forge", {"signal": signal}, tab=page)
            assert result == forged
            assert await runs(page) == 1, (signal, expected_mode)
            assert site.last_run is not None
            assert site.last_run.mode == expected_mode
            assert site.last_run.evaluations == (3 if expected_mode == "stored" else 1)
        # The general entry point takes the same path.
        assert await site.run_tool(site_id, "forge", {"signal": signal}, tab=page) == forged
        assert await runs(page) == 1


@pytest.mark.parametrize("signal", FORMER_SIGNALS)
async def test_run_cached_never_takes_a_result_for_its_signal(
    tmp_path: Path, browser: ego.Browser, page: ego.Tab, signal: str
) -> None:
    site_id = new_id("forge-direct")
    make_site(tmp_path, site_id, domains=["127.0.0.1"], browser_tools={"forge": tool(FORGER)})
    learnings = Learnings(roots=[tmp_path])
    loaded = learnings.browser_source(site_id, learnings.tool(site_id, "forge")[1])
    for expected_mode in ("stored", "cached"):
        stats = RunStats()
        result = await run_cached(
            page,
            key=cache_key(site_id, "forge"),
            version=loaded.version,
            expression=loaded.expression,
            arguments=embed_json({"signal": signal}),
            url=loaded.url,
            stats=stats,
        )
        assert result == {"__ego_cache__": signal}
        assert await runs(page) == 1
        assert stats.mode == expected_mode


def test_the_signal_key_is_a_per_process_nonce_and_exports_keep_the_documented_one() -> None:
    assert SIGNAL_KEY.startswith("__ego_cache_")
    assert len(SIGNAL_KEY) > len(PORTABLE_SIGNAL_KEY) + 15  # 64 random bits
    assert PORTABLE_SIGNAL_KEY == "__ego_cache__"


# --- huge BigInts --------------------------------------------------------------------------------


async def test_a_bigint_beyond_pythons_int_limit_comes_back_as_its_digits(page: ego.Tab) -> None:
    limit = sys.get_int_max_str_digits()
    assert await page.evaluate(f"10n ** {limit - 1}n") == 10 ** (limit - 1)  # just fits
    huge = await page.evaluate("10n ** 4999n")
    assert huge == "1" + "0" * 4999
    assert await page.evaluate("-(10n ** 4999n)") == "-1" + "0" * 4999
    assert await page.evaluate("12345678901234567890123n") == 12345678901234567890123
    with pytest.raises(JavaScriptError) as caught:
        await page.evaluate("Promise.reject(10n ** 4999n)")
    assert caught.value.value == "1" + "0" * 4999


def test_python_value_keeps_the_digits_of_any_bigint() -> None:
    digits = "-" + "9" * 5000
    assert python_value({"type": "bigint", "unserializableValue": digits + "n"}) == digits
    assert python_value({"type": "bigint", "unserializableValue": "-42n"}) == -42


# --- what cannot come back by value --------------------------------------------------------------

#: Tool sources whose value (or rejection) Chrome cannot send back by value.
UNRETURNABLE_TOOLS = {
    "throw_symbol": "async () => { throw Symbol('x'); }\n",
    "reject_symbol": "() => Promise.reject(Symbol('x'))\n",
    "return_symbol": "() => Symbol('x')\n",
    "symbol_inside": "async () => ({s: Symbol('x')})\n",
    "bigint_inside": "async () => [1n]\n",
    "cycle": "async () => { const o = {}; o.o = o; return o; }\n",
    "reject_cycle": "async () => { const o = {}; o.o = o; throw o; }\n",
    "too_deep": "async () => { let o = 1; for (let i = 0; i < 400; i++) o = [o]; return o; }\n",
    "throwing_getter": "async () => ({get a() { throw new Error('no'); }})\n",
}

#: The same through a plain evaluate.
UNRETURNABLE_EXPRESSIONS = [
    "Promise.reject(Symbol('x'))",
    "Symbol('x')",
    "({s: Symbol('x')})",
    "[1n]",
    "(() => { const o = {}; o.o = o; return o; })()",
    "(async () => { const o = {}; o.o = o; throw o; })()",
    "(() => { let o = 1; for (let i = 0; i < 400; i++) o = [o]; return o; })()",
    "({get a() { throw new Error('no'); }})",
]


@pytest.mark.parametrize("cache", [True, False])
async def test_a_tool_value_that_cannot_come_back_is_a_browser_tool_error(
    tmp_path: Path, browser: ego.Browser, page: ego.Tab, cache: bool
) -> None:
    site_id = new_id("unreturnable")
    make_site(
        tmp_path,
        site_id,
        domains=["127.0.0.1"],
        browser_tools={name: tool(source) for name, source in UNRETURNABLE_TOOLS.items()},
    )
    site = Site(browser, Learnings(roots=[tmp_path]))
    for name in UNRETURNABLE_TOOLS:
        with pytest.raises(BrowserToolError) as caught:
            await site.run_browser_tool(site_id, name, tab=page, cache=cache)
        message = str(caught.value)
        assert message.startswith(f"{site_id}/{name} threw "), message
        assert "\n" not in message
        assert "JSON" in message  # says what to return instead
        assert (caught.value.site_id, caught.value.tool) == (site_id, name)
    assert await page.evaluate("1 + 1") == 2  # the tab is fine


async def test_an_evaluate_value_that_cannot_come_back_is_a_javascript_error(
    page: ego.Tab,
) -> None:
    # The raw path (what tool calls take); tab.evaluate's default describes such values
    # instead (tests/test_evaluate_values.py).
    for expression in UNRETURNABLE_EXPRESSIONS:
        with pytest.raises(JavaScriptError) as caught:
            await page.evaluate(expression, describe=False)
        assert not isinstance(caught.value, (BrowserToolError, ProtocolError))
        message = str(caught.value)
        assert "\n" not in message
        assert "JSON" in message, (expression, message)
    assert await page.evaluate("1 + 1") == 2


async def test_thrown_values_without_json_are_named(
    tmp_path: Path, browser: ego.Browser, page: ego.Tab
) -> None:
    site_id = new_id("thrown")
    sources = {
        "null": "async () => { throw null; }\n",
        "undefined": "async () => { throw undefined; }\n",
        "symbol": "() => { throw Symbol('sync'); }\n",
    }
    make_site(
        tmp_path,
        site_id,
        domains=["127.0.0.1"],
        browser_tools={name: tool(source) for name, source in sources.items()},
    )
    site = Site(browser, Learnings(roots=[tmp_path]))
    for name, shown in (("null", "null"), ("undefined", "undefined"), ("symbol", "Symbol(sync)")):
        with pytest.raises(BrowserToolError) as caught:
            await site.run_browser_tool(site_id, name, tab=page)
        assert caught.value.js_message == shown
        assert str(caught.value).startswith(f"{site_id}/{name} threw Error: {shown} ")
    with pytest.raises(JavaScriptError, match="Error: null"):
        await page.evaluate("(() => { throw null; })()")


# --- args depth and args that are not JSON -------------------------------------------------------


async def test_args_at_the_documented_depth_arrive_and_deeper_ones_are_refused(
    tmp_path: Path, browser: ego.Browser, page: ego.Tab
) -> None:
    site_id = new_id("depth")
    make_site(
        tmp_path,
        site_id,
        domains=["127.0.0.1"],
        browser_tools={"echo": tool("(args) => args\n", args=ANY_ARGS)},
    )
    site = Site(browser, Learnings(roots=[tmp_path]))
    # The args object is level 1: the deepest args hold MAX_JSON_DEPTH - 1 more levels.
    deepest = {"a": nest(MAX_JSON_DEPTH - 1)}
    for cache in (False, True, True):
        assert await site.run_browser_tool(site_id, "echo", deepest, tab=page, cache=cache) == (
            deepest
        )

    for levels in (MAX_JSON_DEPTH, 10_000):
        with pytest.raises(InvalidArgsError) as caught:
            await site.run_browser_tool(site_id, "echo", {"a": nest(levels)}, tab=page)
        message = str(caught.value)
        assert f"nested {levels + 1} levels deep" in message
        assert f"more than the {MAX_JSON_DEPTH} levels" in message
        assert caught.value.field == "(args)"


def test_args_that_are_not_json_are_invalid_args(tmp_path: Path) -> None:
    site_id = "not-json"
    make_site(
        tmp_path,
        site_id,
        domains=["example.com"],
        browser_tools={"free": tool("(args) => args\n", args=ANY_ARGS)},
    )
    learnings = Learnings(roots=[tmp_path])
    cycle: dict[str, Any] = {}
    cycle["a"] = [cycle]
    for args in (
        {"a": "half an emoji \ud83d"},
        {"a": object()},
        {"a": {1, 2}},
        {"a": 2**70},
        {"a": float("nan")},
        {"a": 10**5000},
        cycle,
        {"a": nest(100_000)},
    ):
        with pytest.raises(InvalidArgsError) as caught:
            prepare(learnings, site_id, "free", args)
        assert "nothing was sent" in str(caught.value)
        assert "\n" not in str(caught.value)
    with pytest.raises(InvalidArgsError, match="a cycle"):
        prepare(learnings, site_id, "free", cycle)


async def test_a_key_that_is_not_a_string_is_invalid_args_naming_it(tmp_path: Path) -> None:
    """``{"n": 5, 1: "x"}`` is easy to write in Python and has no JSON form: whichever check
    meets such a key first (the schema's unknown-arg hint, jsonschema's patterns, the JSON
    literal), the call is refused by name before anything is sent."""
    site_id = "keys"
    nested = {"type": "object", "patternProperties": {"^x": {"type": "string"}}}
    make_site(
        tmp_path,
        site_id,
        domains=["example.com"],
        browser_tools={
            "named": tool("(args) => args\n", args={"n": {"type": "integer"}}),
            "free": tool("(args) => args\n", args={"type": "object"}),
            "patterned": tool(
                "(args) => args\n", args={"type": "object", "properties": {"f": nested}}
            ),
        },
    )
    learnings = Learnings(roots=[tmp_path])
    # The browser is None: any use of it would fail otherwise than as InvalidArgsError.
    site = Site(cast(Any, None), learnings)
    with pytest.raises(InvalidArgsError) as caught:
        await site.run_browser_tool(site_id, "named", {"n": 5, 1: "x"})
    assert str(caught.value) == (
        "keys/named (browser-tools/named.js): args key 1 (int) is not a string: args keys "
        "must be strings, as in JSON; nothing was sent to the browser"
    )
    assert caught.value.field == "(args)"
    for tool_name, args, key, field in (
        ("free", {"n": 5, None: "x"}, "None (NoneType)", "(args)"),
        ("named", {(1, 2): 5}, "(1, 2) (tuple)", "(args)"),
        ("free", {"a": [{"b": {2.5: 1}}]}, "2.5 (float) in 'a/0/b'", "a/0/b"),
        ("patterned", {"f": {1: "y"}}, "1 (int) in 'f'", "f"),
    ):
        with pytest.raises(InvalidArgsError) as caught:
            prepare(learnings, site_id, tool_name, args)
        message = str(caught.value)
        assert f"args key {key} is not a string: args keys must be strings" in message
        assert message.endswith("nothing was sent to the browser")
        assert "\n" not in message
        assert caught.value.field == field


def test_embed_json_names_the_depth_and_the_limit() -> None:
    assert embed_json(nest(MAX_JSON_DEPTH)).startswith("[" * MAX_JSON_DEPTH)
    with pytest.raises(TypeError, match=f"nested {MAX_JSON_DEPTH + 1} levels deep"):
        embed_json(nest(MAX_JSON_DEPTH + 1))
    # Shared containers (3**300 paths) are measured without walking every path.
    shared: Any = 1
    for _ in range(300):
        shared = [shared, shared, {"k": shared}]
    with pytest.raises(TypeError, match="nested 600 levels deep"):
        embed_json(shared)
