"""Args embedded as JSON in the wrapper round-trip exactly through a browser tool."""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ego
from ego.learning.catalog.registry import Learnings
from ego.learning.catalog.tool_source import normalize_source
from ego.runtime.js import embed_json, wrap
from ego.site import Site
from tests.helpers.learnings import ECHO, make_site, tool
from tests.helpers.page_server import PageServer

#: A tool that checks, in the page, that it got what JSON.parse of the expected text gives.
SAME = """export default async function same({value, text}) {
  const canon = (v) => JSON.stringify(v, (k, x) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(Object.keys(x).sort().map((key) => [key, x[key]]))
      : x);
  return canon(value) === canon(JSON.parse(text));
}
"""

ANY = {"type": "object", "additionalProperties": True}


def _nest(depth: int) -> Any:
    value: Any = "bottom"
    for level in range(depth):
        value = {"d": value} if level % 2 else [value]
    return value


CASES: list[Any] = [
    {"q": 'say "hi"'},
    {"q": "it's"},
    {"q": "back\\slash \\n \\u2028 \\\\"},
    {"q": "</script><script>alert(1)</script>"},
    {"q": "<!-- -->  <\\/script>"},
    {"q": "line\u2028separator", "p": "para\u2029graph"},
    {"q": "\u2028\u2029", "\u2028key\u2029": "\u2029"},
    {"q": "emoji 😀 👩‍👩‍👧 🇫🇷 \U0001d54f"},
    {"q": "nul\x00 tab\t cr\r lf\n bell\x07 del\x7f"},
    {"q": "${`template`} ${1+1} `backtick`"},
    {"q": "// not a comment */ /* nor this"},
    {"q": "\ufeffbom and \ufffe nonchar and \U0010ffff"},
    {"deep": _nest(100)},
    {},
    {"empty_object": {}, "empty_array": [], "empty_string": ""},
    {"nested": [[], {}, [[]], [{}], {"a": []}]},
    {"ключ": "значение", "鍵": "値", "🔑": "🔒", "": "empty key", " ": "space key"},
    {"__proto__": {"polluted": True}, "constructor": "c", "toString": "t"},
    {"x": {"__proto__": [1, 2]}},
    {"hasOwnProperty": 1, "valueOf": 2},
    {"n": 0, "neg": -1, "big": 2**53, "small": -(2**53)},
    {"f": 0.1, "g": -2.5e-300, "h": 1.7976931348623157e308, "tiny": 5e-324},
    {"whole_float": 3.0, "neg_zero": -0.0},
    {"t": True, "f": False, "n": None, "list": [None, True, False]},
    {"numeric_keys": {"1": "one", "0": "zero", "10": "ten", "-1": "minus"}},
]


@pytest.fixture(scope="module")
async def echo(
    browser: ego.Browser, server: PageServer, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[tuple[Site, ego.Tab]]:
    root = tmp_path_factory.mktemp("roundtrip")
    make_site(
        root,
        "rt",
        domains=["127.0.0.1"],
        browser_tools={"echo": tool(ECHO, args=ANY), "same": tool(SAME, args=ANY)},
    )
    tab = await browser.new_tab(server.route("/learning-roundtrip", "<title>rt</title>"))
    yield Site(browser, Learnings(roots=[root])), tab
    if not browser.closed:
        await tab.close()


def same_json(a: Any, b: Any) -> bool:
    """Equal as JSON: ints and floats compare by value (JS has one number type)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b and not (isinstance(a, float) and math.isnan(a))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def test_same_json_is_strict() -> None:
    assert same_json({"a": [1, 2.0]}, {"a": [1.0, 2]})
    assert not same_json({"a": 1}, {"a": True})
    assert not same_json({"a": None}, {})
    assert not same_json(["1"], [1])
    assert not same_json({"a": {"b": 1}}, {"a": {"b": 2}})


@pytest.mark.parametrize("cache", [True, False])
@pytest.mark.parametrize("value", CASES, ids=range(len(CASES)))
async def test_explicit_values_round_trip(
    echo: tuple[Site, ego.Tab], value: Any, cache: bool
) -> None:
    site, tab = echo
    back = await site.run_browser_tool("rt", "echo", value, tab=tab, cache=cache)
    assert same_json(back, value), (back, value)
    # and in the page the tool sees exactly what JSON.parse makes of the value's JSON
    seen = await site.run_browser_tool(
        "rt", "same", {"value": value, "text": json.dumps(value)}, tab=tab, cache=cache
    )
    assert seen is True


def test_embedded_json_is_safe_to_splice() -> None:
    text = embed_json({"q": "</script>\u2028\u2029"})
    assert "</" not in text
    assert "\u2028" not in text
    assert "\u2029" not in text
    assert json.loads(text) == {"q": "</script>\u2028\u2029"}
    proto = embed_json({"__proto__": {"x": 1}})
    assert proto.startswith("JSON.parse(")
    assert json.loads(json.loads(proto[len("JSON.parse(") : -1])) == {"__proto__": {"x": 1}}
    for not_json in ({"x": float("nan")}, [float("-inf")], {"x": 2**70}, {"x": {1}}, {1: "x"}):
        with pytest.raises(TypeError, match="not a JSON value"):
            embed_json(not_json)


async def test_the_plain_wrap_itself(echo: tuple[Site, ego.Tab]) -> None:
    _, tab = echo
    value = {"q": '</script>\u2028 \\ " 😀', "__proto__": {"a": [1]}}
    code = wrap(normalize_source(ECHO), value, url="ego-learnings/rt/browser-tools/echo.js")
    assert same_json(await tab.evaluate(code), value)


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(value=st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=5))
async def test_arbitrary_json_round_trips(echo: tuple[Site, ego.Tab], value: Any) -> None:
    site, tab = echo
    back = await site.run_browser_tool("rt", "echo", value, tab=tab)
    assert same_json(back, value), (back, value)
