"""The page-side memo behind the hot Call, on real origins in real Chromium.

A hot call in a document that already ran the tool reads no localStorage and evals nothing;
a new version replaces the memo entry and never runs the old function; a navigation empties
the memo (and a navigation the tab did not count costs one NO_LOADER round trip); page
scripts that overwrite the loader's global, pollute prototypes or squat its name fail safe;
the memo serves calls where eval is blocked; the hot Call stays short.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import ego
from ego.runtime.cache import (
    LOADER_NOTE,
    SIGNAL_KEY,
    RunStats,
    cache_key,
    call_snippet,
    hot_snippet,
    run_cached,
    store_snippet,
)
from ego.runtime.js import embed_json
from tests.helpers.cache_sites import (
    CSP_HEADERS,
    PAGE,
    PURE,
    PURE_EXPECTED,
    SUM,
    SUM_ARGS,
    SUM_EXPECTED,
    last,
    new_id,
    site_with,
    stored_keys,
)
from tests.helpers.learnings import tool
from tests.helpers.page_server import PageServer

#: Counts what the Call does in the page: localStorage reads (``Storage.prototype.getItem``)
#: and evals (the global ``eval``, which the loader calls indirectly). Installed per document.
COUNT_READS_AND_EVALS = """(() => {
  const getItem = Storage.prototype.getItem, original = window.eval;
  window.__reads = 0; window.__evals = 0;
  Storage.prototype.getItem = function (key) { window.__reads++; return getItem.call(this, key); };
  window.eval = function (code) { window.__evals++; return original(code); };
})()"""

TAKE_COUNTS = (
    "(() => { const counts = [window.__reads, window.__evals];"
    " window.__reads = 0; window.__evals = 0; return counts; })()"
)

NO_LOADER = {SIGNAL_KEY: "NO_LOADER"}
NEEDS_STORE = {SIGNAL_KEY: "NEEDS_STORE"}


async def counts(tab: ego.Tab) -> list[int]:
    """``[localStorage reads, evals]`` since the last look."""
    return list(await tab.evaluate(TAKE_COUNTS))


async def stamp_of(tab: ego.Tab, key: str) -> str:
    return str(await tab.evaluate(f"localStorage.getItem({embed_json(key + ':ver')})"))


@pytest.fixture
async def page(tab: ego.Tab, server: PageServer) -> ego.Tab:
    await tab.navigate(server.route("/memo/page", PAGE))
    await tab.evaluate(COUNT_READS_AND_EVALS)
    return tab


class Unaware:
    """A tab whose document memo never changes: a navigation it did not see."""

    def __init__(self, tab: ego.Tab) -> None:
        self.tab = tab
        self.document_memo: dict[str, Any] = {}

    async def evaluate(
        self, expression: str, *, timeout: float | None = None, describe: bool = True
    ) -> Any:
        return await self.tab.evaluate(expression, timeout=timeout, describe=describe)


class EvalBlocked(Unaware):
    """A bridge that forbids eval (``allowUnsafeEvalBlockedByCSP: false``) on every evaluate."""

    async def evaluate(
        self, expression: str, *, timeout: float | None = None, describe: bool = True
    ) -> Any:
        result = await self.tab.send(
            "Runtime.evaluate",
            {
                "expression": expression,
                "returnByValue": True,
                "awaitPromise": True,
                "allowUnsafeEvalBlockedByCSP": False,
            },
        )
        assert "exceptionDetails" not in result, result
        return result["result"].get("value")


# --- the hot call --------------------------------------------------------------------------------


async def test_a_hot_call_reads_no_storage_and_evals_nothing(
    tmp_path: Path, browser: ego.Browser, page: ego.Tab
) -> None:
    site_id = new_id("memo-hot")
    site = site_with(tmp_path, browser, site_id, add=tool(SUM, args=SUM_ARGS))
    key = cache_key(site_id, "add")

    # The first run misses, stores, and its second Call reads both keys and evals once.
    assert await site.run_browser_tool(site_id, "add", {"a": 2, "b": 3}, tab=page) == SUM_EXPECTED
    assert (last(site).mode, last(site).evaluations) == ("stored", 3)
    assert await counts(page) == [1 + 2, 1]  # the miss read one key; the Call after the Store two

    for a in range(5):
        result = await site.run_browser_tool(site_id, "add", {"a": a, "b": 3}, tab=page)
        assert result == {**SUM_EXPECTED, "sum": a + 3}
        assert (last(site).mode, last(site).evaluations) == ("cached", 1)
        assert await counts(page) == [0, 0]
    # What went is the hot Call, short and free of the source.
    stamp = await stamp_of(page, key)
    assert last(site).bytes_sent == len(hot_snippet(key, stamp, embed_json({"a": 4, "b": 3})))
    assert await counts(page) == [1, 0]  # that stamp_of read; nothing else did


async def test_many_first_calls_at_once_in_a_new_document(
    tmp_path: Path, browser: ego.Browser, page: ego.Tab
) -> None:
    site_id = new_id("memo-burst")
    site = site_with(tmp_path, browser, site_id, pure=tool(PURE, args=SUM_ARGS))
    assert await site.run_browser_tool(site_id, "pure", {"a": 2, "b": 3}, tab=page) == (
        PURE_EXPECTED
    )
    await page.reload()
    results = await asyncio.gather(
        *(site.run_browser_tool(site_id, "pure", {"a": a, "b": 3}, tab=page) for a in range(50))
    )
    assert [r["product"] for r in results] == [a * 3 for a in range(50)]
    assert await site.run_browser_tool(site_id, "pure", {"a": 2, "b": 3}, tab=page) == (
        PURE_EXPECTED
    )
    assert (last(site).mode, last(site).evaluations) == ("cached", 1)


async def test_the_memoised_function_is_called_like_the_plain_wrap_calls_it(
    tmp_path: Path, browser: ego.Browser, page: ego.Tab
) -> None:
    # ``this`` and the arguments as the plain wrap gives them, not the memo's entry.
    source = "async function (...args) { return [this === globalThis, args.length, args[0]]; }\n"
    site_id = new_id("memo-this")
    site = site_with(tmp_path, browser, site_id, this=tool(source, args={"q": {"type": "integer"}}))
    expected = [True, 1, {"q": 1}]
    assert await site.run_browser_tool(site_id, "this", {"q": 1}, tab=page, cache=False) == expected
    for mode in ("stored", "cached", "cached"):
        assert await site.run_browser_tool(site_id, "this", {"q": 1}, tab=page) == expected
        assert last(site).mode == mode


async def test_a_hot_call_waits_two_loop_turns_as_a_raw_loop_does(
    tmp_path: Path, browser: ego.Browser, page: ego.Tab, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The fewest the event loop can take: one turn waits for Chrome's answer, whose read
    # callback settles the call; the next runs the caller on. A reader task, a write left for
    # a later turn, or an await of ego's own that yields would each add a turn to every call.
    site_id = new_id("memo-turns")
    site = site_with(tmp_path, browser, site_id, add=tool(PURE, args=SUM_ARGS))
    for _ in range(2):  # stored, then cached: the next calls are hot
        assert await site.run_browser_tool(site_id, "add", {"a": 2, "b": 3}, tab=page)
    selector = asyncio.get_running_loop()._selector  # type: ignore[attr-defined]
    select = selector.select
    turns = [0]

    def counted(timeout: float | None = None) -> Any:
        turns[0] += 1
        return select(timeout)

    monkeypatch.setattr(selector, "select", counted)
    per_call = []
    for a in range(20):
        before = turns[0]
        result = await site.run_browser_tool(site_id, "add", {"a": a, "b": 3}, tab=page)
        per_call.append(turns[0] - before)
        assert result == {**PURE_EXPECTED, "sum": a + 3, "product": a * 3}
        assert (last(site).mode, last(site).evaluations) == ("cached", 1)
    # An answer read in two pieces, or a timer due meanwhile, adds a turn to a call; nothing
    # takes one away, so the fewest is what the path itself costs.
    assert min(per_call) == 2, per_call


def test_the_hot_call_is_short() -> None:
    key, stamp, args = cache_key("some-site", "some_tool"), "0123456789abcdef", '{"n":1}'
    hot = hot_snippet(key, stamp, args)
    assert len(hot) - len(key) - len(stamp) - len(args) < 200
    assert "localStorage" not in hot
    assert "eval" not in hot
    # The full Call carries the loader, and still not the source.
    assert len(call_snippet(key, stamp, args)) < 700


# --- versions ------------------------------------------------------------------------------------


async def test_which_document_holds_the_loader_is_kept_in_that_documents_memo() -> None:
    class Page:
        """Answers every evaluate with 7; keeps a memo per document as a frame does."""

        def __init__(self) -> None:
            self.sent: list[str] = []
            self.document_memo: dict[str, Any] = {}

        async def evaluate(
            self, expression: str, *, timeout: float | None = None, describe: bool = True
        ) -> Any:
            self.sent.append(expression)
            return 7

    first, second = Page(), Page()
    for page in (first, first, second):
        result = await run_cached(
            page,  # type: ignore[arg-type]
            key="ego:s:t",
            version="v1",
            expression="async () => 7",
            arguments="",
        )
        assert result == 7
    full, hot = call_snippet("ego:s:t", "v1", ""), hot_snippet("ego:s:t", "v1", "")
    assert first.sent == [full, hot]  # the first call installed the loader there
    assert second.sent == [full]  # another page has its own
    assert LOADER_NOTE in first.document_memo
    assert LOADER_NOTE in second.document_memo
    first.document_memo = {}  # a navigation: a new document, without the loader
    await run_cached(first, key="ego:s:t", version="v1", expression="", arguments="")  # type: ignore[arg-type]
    assert first.sent[-1] == full


async def test_a_new_version_replaces_the_memo_entry(
    tmp_path: Path, browser: ego.Browser, page: ego.Tab
) -> None:
    site_id = new_id("memo-version")
    site = site_with(tmp_path, browser, site_id, what=tool("async () => ({version: 1})\n"))
    key = cache_key(site_id, "what")
    assert await site.run_browser_tool(site_id, "what", tab=page) == {"version": 1}
    assert await site.run_browser_tool(site_id, "what", tab=page) == {"version": 1}
    old_stamp = await stamp_of(page, key)
    await counts(page)

    file = tmp_path / site_id / "browser-tools" / "what.js"
    file.write_text("async () => ({version: 2, longer: true})\n", encoding="utf-8")
    assert await site.run_browser_tool(site_id, "what", tab=page) == {"version": 2, "longer": True}
    assert (last(site).mode, last(site).stored) == ("stored", True)
    assert await site.run_browser_tool(site_id, "what", tab=page) == {"version": 2, "longer": True}
    assert last(site).mode == "cached"
    await counts(page)
    new_stamp = await stamp_of(page, key)
    assert new_stamp != old_stamp

    # The old stamp finds neither its entry (replaced) nor its source: it runs nothing.
    assert await page.evaluate(hot_snippet(key, old_stamp, "{}")) == NEEDS_STORE
    assert await counts(page) == [1 + 2, 0]  # stamp_of, then the loader's miss read both keys
    assert await page.evaluate(hot_snippet(key, new_stamp, "{}")) == {"version": 2, "longer": True}
    assert await counts(page) == [0, 0]


async def test_the_memo_runs_the_function_of_its_stamp_whatever_storage_says(
    tmp_path: Path, browser: ego.Browser, page: ego.Tab
) -> None:
    # localStorage is read once per document: a source written there later (by hand, or by
    # another process's Store) is seen by the next document; a stamp still runs only its own.
    site_id = new_id("memo-stale")
    site = site_with(tmp_path, browser, site_id, mine=tool("async () => 'from the file'\n"))
    key = cache_key(site_id, "mine")
    assert await site.run_browser_tool(site_id, "mine", tab=page) == "from the file"
    stamp = await stamp_of(page, key)
    await page.evaluate(store_snippet(key, "newer-stamp", "async () => 'the newer source'"))

    assert await page.evaluate(hot_snippet(key, stamp, "{}")) == "from the file"
    assert await page.evaluate(hot_snippet(key, "newer-stamp", "{}")) == "the newer source"
    # Each answer replaced the entry; the first stamp now finds a newer source: refused.
    assert await page.evaluate(hot_snippet(key, stamp, "{}")) == NEEDS_STORE
    assert await site.run_browser_tool(site_id, "mine", tab=page) == "from the file"
    assert last(site).mode == "stored"


# --- navigation ----------------------------------------------------------------------------------


async def test_a_navigation_empties_the_memo(
    tmp_path: Path, browser: ego.Browser, page: ego.Tab, server: PageServer
) -> None:
    site_id = new_id("memo-nav")
    site = site_with(tmp_path, browser, site_id, add=tool(SUM, args=SUM_ARGS))
    key = cache_key(site_id, "add")
    assert await site.run_browser_tool(site_id, "add", {"a": 2, "b": 3}, tab=page) == SUM_EXPECTED
    stamp = await stamp_of(page, key)
    documents = page.documents

    for move in ("reload", "navigate"):
        if move == "reload":
            await page.reload()
        else:
            await page.navigate(server.route("/memo/other", PAGE))
        assert page.documents > documents
        documents = page.documents
        await page.evaluate(COUNT_READS_AND_EVALS)
        # The new document has no loader: the hot Call says so and runs nothing.
        assert await page.evaluate(hot_snippet(key, stamp, "{a: 2, b: 3}")) == NO_LOADER
        # The tab counted the navigation: one full Call, which reads and evals once...
        result = await site.run_browser_tool(site_id, "add", {"a": 2, "b": 3}, tab=page)
        assert result == SUM_EXPECTED
        assert (last(site).mode, last(site).evaluations) == ("cached", 1)
        assert await counts(page) == [2, 1]
        # ...then the hot Call again.
        assert await site.run_browser_tool(site_id, "add", {"a": 2, "b": 3}, tab=page) == (
            SUM_EXPECTED
        )
        assert (last(site).mode, last(site).evaluations) == ("cached", 1)
        assert await counts(page) == [0, 0]


async def test_a_navigation_the_tab_did_not_count_costs_one_round_trip(
    tmp_path: Path, browser: ego.Browser, page: ego.Tab
) -> None:
    site_id = new_id("memo-unaware")
    site = site_with(tmp_path, browser, site_id, pure=tool(PURE, args=SUM_ARGS))
    loaded = site.learnings.browser_source(site_id, site.learnings.tool(site_id, "pure")[1])
    unaware = Unaware(page)

    async def run() -> tuple[Any, RunStats]:
        stats = RunStats()
        result = await run_cached(
            unaware,  # type: ignore[arg-type]
            key=cache_key(site_id, "pure"),
            version=loaded.version,
            expression=loaded.expression,
            arguments=embed_json({"a": 2, "b": 3}),
            url=loaded.url,
            stats=stats,
        )
        return result, stats

    result, stats = await run()
    assert (result, stats.mode, stats.evaluations) == (PURE_EXPECTED, "stored", 3)
    result, stats = await run()
    assert (result, stats.mode, stats.evaluations) == (PURE_EXPECTED, "cached", 1)
    await page.reload()  # unaware.document_memo stays as it was
    result, stats = await run()  # hot Call: NO_LOADER; then the full Call
    assert (result, stats.mode, stats.evaluations, stats.fallback) == (
        PURE_EXPECTED,
        "cached",
        2,
        "",
    )
    result, stats = await run()
    assert (result, stats.mode, stats.evaluations) == (PURE_EXPECTED, "cached", 1)


# --- page scripts --------------------------------------------------------------------------------


async def test_page_scripts_cannot_swap_the_memo(
    tmp_path: Path, browser: ego.Browser, page: ego.Tab
) -> None:
    site_id = new_id("memo-tamper")
    site = site_with(
        tmp_path,
        browser,
        site_id,
        one=tool("async () => 'one'\n"),
        two=tool("async () => 'two'\n"),
    )
    key_one, key_two = cache_key(site_id, "one"), cache_key(site_id, "two")
    for name in ("one", "two"):
        assert await site.run_browser_tool(site_id, name, tab=page) == name
    stamp_one, stamp_two = await stamp_of(page, key_one), await stamp_of(page, key_two)
    evil = "() => () => 'evil'"
    name = embed_json(SIGNAL_KEY)
    # What a page script can try against the loader's global and the memo behind it.
    attempts = await page.evaluate(
        f"""(() => {{
          const tries = [];
          const attempt = (what, f) => {{ try {{ f(); tries.push(what + ': done'); }}
                                         catch (e) {{ tries.push(what + ': ' + e.name); }} }};
          attempt('assign', () => {{ window[{name}] = {evil}; }});
          attempt('strict assign', () => {{ 'use strict'; window[{name}] = {evil}; }});
          attempt('delete', () => {{ if (!delete window[{name}]) throw new TypeError(); }});
          attempt('define', () => Object.defineProperty(window, {name}, {{value: {evil}}}));
          attempt('prototype', () => {{
            Object.prototype[{embed_json(key_one)}] = {{v: {embed_json(stamp_one)}, f: {evil}()}};
          }});
          attempt('map', () => {{ Map.prototype.get = () => ({{v: {embed_json(stamp_one)}}}); }});
          return tries;
        }})()"""
    )
    assert attempts == [
        "assign: done",  # ignored, sloppy mode
        "strict assign: TypeError",
        "delete: TypeError",
        "define: TypeError",
        "prototype: done",
        "map: done",
    ]
    await counts(page)
    for name_, key, stamp in (("one", key_one, stamp_one), ("two", key_two, stamp_two)):
        assert await site.run_browser_tool(site_id, name_, tab=page) == name_
        assert (last(site).mode, last(site).evaluations) == ("cached", 1)
        assert await page.evaluate(hot_snippet(key, stamp, "")) == name_
    assert await counts(page) == [0, 0]
    # Another key's stamp finds neither an entry nor a source at that stamp: nothing runs.
    assert await page.evaluate(hot_snippet(key_one, stamp_two, "")) == NEEDS_STORE
    assert await page.evaluate(hot_snippet(key_two, stamp_one, "")) == NEEDS_STORE


SQUATS = ["window[N] = {}", "Object.defineProperty(window, N, {value: 42})", "let N = 42"]


@pytest.mark.parametrize("squat", SQUATS)
async def test_a_page_that_takes_the_loaders_name_first_fails_safe(
    tmp_path: Path, browser: ego.Browser, page: ego.Tab, squat: str
) -> None:
    if squat.startswith("let"):  # a global lexical binding: the hot Call's typeof sees it
        await page.evaluate(squat.replace("N", SIGNAL_KEY))
    else:
        await page.evaluate(f"(() => {{ const N = {embed_json(SIGNAL_KEY)}; {squat}; }})()")
    site_id = new_id("memo-squat")
    site = site_with(tmp_path, browser, site_id, pure=tool(PURE, args=SUM_ARGS))
    for expected in (("stored", 3), ("cached", 1), ("cached", 1)):
        result = await site.run_browser_tool(site_id, "pure", {"a": 2, "b": 3}, tab=page)
        assert result == PURE_EXPECTED
        stats = last(site)
        assert stats.fallback == ""
        if squat.startswith("window"):  # a writable property: the Call installs its loader
            assert (stats.mode, stats.evaluations) == expected
        else:  # every run is the hot Call's NO_LOADER, then a full Call
            assert stats.mode == expected[0]
            assert stats.evaluations == (3 if expected[0] == "stored" else 2)
    assert len(await stored_keys(page, site_id)) == 2


# --- eval blocked --------------------------------------------------------------------------------


async def test_the_memo_serves_calls_where_eval_is_blocked(
    tmp_path: Path, browser: ego.Browser, tab: ego.Tab, server: PageServer
) -> None:
    await tab.navigate(server.route("/memo/csp", PAGE, headers=CSP_HEADERS))
    site_id = new_id("memo-csp")
    site = site_with(tmp_path, browser, site_id, pure=tool(PURE, args=SUM_ARGS))
    loaded = site.learnings.browser_source(site_id, site.learnings.tool(site_id, "pure")[1])
    strict = EvalBlocked(tab)

    async def run() -> RunStats:
        stats = RunStats()
        result = await run_cached(
            strict,  # type: ignore[arg-type]
            key=cache_key(site_id, "pure"),
            version=loaded.version,
            expression=loaded.expression,
            arguments=embed_json({"a": 2, "b": 3}),
            url=loaded.url,
            stats=stats,
        )
        assert result == PURE_EXPECTED
        return stats

    # Nothing memoised yet: the loader's eval is refused, the plain wrap runs.
    stats = await run()
    assert (stats.mode, stats.fallback) == ("plain", "eval blocked")
    # Once ego's own call (eval allowed) memoised the function, even the strict bridge hits it.
    assert await site.run_browser_tool(site_id, "pure", {"a": 2, "b": 3}, tab=tab) == (
        PURE_EXPECTED
    )
    stats = await run()
    assert (stats.mode, stats.evaluations, stats.fallback) == ("cached", 1, "")
