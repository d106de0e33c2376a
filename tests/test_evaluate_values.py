"""``tab.evaluate``: top-level ``await``, and values JSON cannot carry coming back described.

The rules are in docs/architecture.md ("Values from evaluate"); each has a test here on a real page,
alone and nested, and so do cycles. The raw path (``describe=False``), which tool calls take,
keeps its single by-value round trip.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

import ego
from ego.learning.catalog.tool_source import normalize_source
from ego.protocol.session import Session
from ego.runtime.cache import run_cached
from ego.runtime.js import embed_json
from tests.helpers.learnings import CdpSpy
from tests.helpers.page_server import PageServer

PAGE = """<title>values</title>
<main id="main" class="page wide">
  <h1 class="title big">Hello   <b>values</b></h1>
  <ul><li>one</li><li class="second">two</li><li data-testid="third">three</li></ul>
  <p>"""


@pytest.fixture
async def page(tab: ego.Tab, server: PageServer) -> ego.Tab:
    body = PAGE + ("long text " * 20) + "</p></main>"
    await tab.navigate(server.route("/values/page", body), timeout=15)
    return tab


# --- top-level await ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("await Promise.resolve(5)", 5),
        ("const r = await Promise.resolve({a: 1}); r.a + 1", 2),
        ("(await Promise.resolve({a: [1, 2]})).a", [1, 2]),
        ("let total = 0;\nfor await (const n of [1, 2, 3]) total += n;\ntotal", 6),
        ("await new Promise((r) => setTimeout(() => r('later'), 10))", "later"),
        ("await new Promise((r) => r(new Date(0)))", "1970-01-01T00:00:00.000Z"),
    ],
)
async def test_top_level_await_works(page: ego.Tab, expression: str, expected: Any) -> None:
    assert await page.evaluate(expression) == expected


async def test_top_level_await_on_the_raw_path_and_a_fetch(
    page: ego.Tab, server: PageServer
) -> None:
    server.route("/values/data.json", '{"n": 7}', content_type="application/json")
    code = "const response = await fetch('/values/data.json'); (await response.json()).n"
    assert await page.evaluate(code) == 7
    assert await page.evaluate(code, describe=False) == 7


async def test_await_errors_keep_their_meaning(page: ego.Tab) -> None:
    with pytest.raises(ego.JavaScriptError) as thrown:
        await page.evaluate("await Promise.reject(new RangeError('no way'))")
    assert (thrown.value.name, thrown.value.js_message) == ("RangeError", "no way")
    with pytest.raises(ego.JavaScriptError) as syntax:
        await page.evaluate("await 1 +* 2")  # a real syntax error stays one
    assert syntax.value.name == "SyntaxError"


async def test_code_without_await_costs_one_command(
    page: ego.Tab, monkeypatch: pytest.MonkeyPatch
) -> None:
    spy = CdpSpy().install(monkeypatch)
    assert await page.evaluate("1 + 1") == 2
    assert await page.evaluate("'s'.repeat(2)") == "ss"
    assert spy.methods == ["Runtime.evaluate", "Runtime.evaluate"]
    spy.methods.clear()
    assert await page.evaluate("({a: 1})", describe=False) == {"a": 1}
    assert spy.methods == ["Runtime.evaluate"]
    spy.methods.clear()
    assert await page.evaluate("await 1") == 1  # the SyntaxError, then REPL mode
    assert spy.methods.count("Runtime.evaluate") == 2


# --- described values --------------------------------------------------------------------------


async def test_a_date_is_its_iso_string(page: ego.Tab) -> None:
    assert await page.evaluate("new Date(Date.UTC(2024, 1, 29, 12, 30))") == (
        "2024-02-29T12:30:00.000Z"
    )
    assert await page.evaluate("new Date('nonsense')") == "Invalid Date"
    assert await page.evaluate("({when: new Date(0), list: [new Date(1000)]})") == {
        "when": "1970-01-01T00:00:00.000Z",
        "list": ["1970-01-01T00:00:01.000Z"],
    }
    assert await page.evaluate("new Date(0)", describe=False) == {}  # the raw path: as JSON


async def test_an_element_is_a_short_descriptor_with_a_working_selector(page: ego.Tab) -> None:
    main = await page.evaluate("document.getElementById('main')")
    assert main["tag"] == "main"
    assert main["id"] == "main"
    assert main["classes"] == ["page", "wide"]
    assert main["selector"] == "#main"
    assert main["text"].startswith("Hello values one two three long text")
    assert len(main["text"]) <= 80
    assert main["text"].endswith("…")
    title = await page.evaluate("document.querySelector('h1')")
    assert title == {
        "tag": "h1",
        "id": None,
        "classes": ["title", "big"],
        "text": "Hello values",
        "selector": "#main > h1",
    }
    items = await page.evaluate("document.querySelectorAll('li')")
    assert [item["text"] for item in items] == ["one", "two", "three"]
    assert items[2]["selector"] == 'li[data-testid="third"]'
    for item in items:  # each selector finds that element and only it
        found = await page.evaluate(
            f"Array.from(document.querySelectorAll({item['selector']!r}), (e) => e.textContent)"
        )
        assert found == [item["text"]]


async def test_other_nodes_and_nodes_inside_values(page: ego.Tab) -> None:
    text = await page.evaluate("document.querySelector('h1').firstChild")
    assert (text["tag"], text["text"], text["selector"]) == ("#text", "Hello", "#main > h1")
    document = await page.evaluate("document")
    assert (document["tag"], document["text"]) == ("#document", "values")
    nested = await page.evaluate(
        "({first: document.querySelector('li'), all: document.body.children})"
    )
    assert nested["first"]["text"] == "one"
    assert [child["tag"] for child in nested["all"]] == ["main"]


async def test_map_and_set_are_lists(page: ego.Tab) -> None:
    assert await page.evaluate("new Map([['a', 1], [2, {b: true}]])") == [
        ["a", 1],
        [2, {"b": True}],
    ]
    assert await page.evaluate("new Set([3, 'x', 3])") == [3, "x"]
    nested = await page.evaluate(
        "({m: new Map([[{k: 1}, new Set([new Date(0)])]]), s: new Set([new Map([[1, 2]])])})"
    )
    assert nested == {"m": [[{"k": 1}, ["1970-01-01T00:00:00.000Z"]]], "s": [[[1, 2]]]}
    assert await page.evaluate("new Map()") == []


async def test_cycles_are_marked_with_the_path_they_point_to(page: ego.Tab) -> None:
    value = await page.evaluate(
        "(() => { const o = {name: 'root', child: {list: []}};"
        " o.self = o; o.child.list.push(o.child, 1); return o; })()"
    )
    assert value == {
        "name": "root",
        "child": {"list": ["[Circular $.child]", 1]},
        "self": "[Circular $]",
    }
    in_a_map = await page.evaluate("(() => { const m = new Map(); m.set('me', m); return m; })()")
    assert in_a_map == [["me", "[Circular $]"]]
    # The same object twice but not inside itself is no cycle: it is described each time.
    shared = await page.evaluate("(() => { const x = {q: 1}; return {a: x, b: [x]}; })()")
    assert shared == {"a": {"q": 1}, "b": [{"q": 1}]}


async def test_numbers_and_bigints_json_cannot_carry_keep_their_value_nested(
    page: ego.Tab,
) -> None:
    value = await page.evaluate(
        "({nan: NaN, inf: [Infinity, -Infinity], zero: -0, big: 2n ** 70n,"
        " deep: {m: new Map([[1n, -0]])}})"
    )
    assert math.isnan(value["nan"])
    assert value["inf"] == [math.inf, -math.inf]
    assert math.copysign(1.0, value["zero"]) == -1.0
    assert value["big"] == 2**70
    assert type(value["big"]) is int
    [[key, zero]] = value["deep"]["m"]
    assert key == 1
    assert math.copysign(1.0, zero) == -1.0


async def test_other_values_are_named(page: ego.Tab) -> None:
    value = await page.evaluate(
        "({sym: Symbol('tag'), fn: function named() {}, arrow: () => 1,"
        " err: new TypeError('bad thing'), re: /a+b/gi, gone: undefined, kept: null,"
        " bytes: new Uint8Array([1, 2]), buffer: new ArrayBuffer(8), promise: Promise.resolve(1),"
        " weak: new WeakMap(), win: window, get broken() { throw new Error('no getter'); }})",
    )
    assert value == {
        "sym": "Symbol(tag)",
        "fn": "[Function named]",
        "arrow": "[Function arrow]",
        "err": "TypeError: bad thing",
        "re": "/a+b/gi",
        "kept": None,
        "bytes": [1, 2],
        "buffer": "[ArrayBuffer 8 bytes]",
        "promise": "[Promise]",
        "weak": "[WeakMap]",
        "win": f"[Window {page.url}]",
        "broken": "[Thrown: no getter]",
    }
    assert await page.evaluate("Symbol('top')") == "Symbol(top)"
    assert await page.evaluate("[undefined, , 1]") == [None, None, 1]


async def test_values_the_raw_path_refuses_come_back_described(page: ego.Tab) -> None:
    deep = await page.evaluate(
        "(() => { let o = 1; for (let i = 0; i < 400; i++) o = [o]; return o; })()"
    )
    depth = 0
    while isinstance(deep, list):
        deep, depth = deep[0], depth + 1
    assert deep == "[Nested too deep]"
    assert 250 <= depth < 297  # as deep as the raw path carries, a little less
    assert await page.evaluate("[1n]") == [1]
    with pytest.raises(ego.JavaScriptError, match="JSON"):
        await page.evaluate("[1n]", describe=False)


async def test_json_values_are_unchanged_and_the_page_keeps_nothing(page: ego.Tab) -> None:
    value = {"a": [1, 2.5, "x", None, True, {"b": {}}], "c": "é \u2028"}
    assert await page.evaluate(f"({embed_json(value)})") == value
    # Each described value is released once described: none stays referenced by the tab.
    await page.evaluate(
        "window.probe = new WeakRef(Array.from({length: 3}, () => ({})))", describe=False
    )
    await page.evaluate("window.probe.deref()")
    await page.send("HeapProfiler.collectGarbage")
    assert await page.evaluate("window.probe.deref() === undefined") is True


async def test_tool_calls_take_the_raw_path(
    page: ego.Tab, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    calls: list[dict[str, Any]] = []
    original = Session.send

    async def send(self: Session, method: str, params: Any = None, **kwargs: Any) -> Any:
        if method.startswith("Runtime."):
            calls.append({"method": method, **(params or {})})
        return await original(self, method, params, **kwargs)

    monkeypatch.setattr(Session, "send", send)
    expression = normalize_source("async (args) => ({when: args.n, page: document.title})")
    for _ in range(2):  # a store, then a hot call
        calls.clear()
        result = await run_cached(
            page, key="values:t", version="1", expression=expression, arguments='{"n": 3}'
        )
        assert result == {"when": 3, "page": "values"}
    assert [call["method"] for call in calls] == ["Runtime.evaluate"]
    assert calls[0]["returnByValue"] is True


@pytest.mark.parametrize(
    "code",
    [
        "window.runs = (window.runs || 0) + 1; JSON.parse('{bad'); await 0",
        "window.runs = (window.runs || 0) + 1;"
        " (async () => { await 0; throw new SyntaxError('at run time'); })()",
    ],
)
async def test_a_syntax_error_thrown_while_running_is_not_run_again(
    page: ego.Tab, code: str
) -> None:
    await page.evaluate("window.runs = 0")
    with pytest.raises(ego.JavaScriptError) as caught:
        await page.evaluate(code)
    assert caught.value.name == "SyntaxError"
    assert await page.evaluate("window.runs") == 1
