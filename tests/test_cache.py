"""The localStorage Call/Store layer under every browser tool, on real origins in real Chromium.

Call first, store only on NEEDS_STORE; a hot run costs the Call alone whatever the tool's
size; two keys per tool, overwritten in place; a changed file or a stale stamp re-stores; the
strict-CSP page; and every fallback (opaque origins, sandboxed documents, storage disabled,
quota, tampered values, eval blocked, the layer switched off) returning the same result.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest

import ego
from ego.protocol.remote_values import javascript_error, python_value
from ego.runtime.cache import SIGNAL_KEY, RunStats, cache_key, call_snippet, hot_snippet, run_cached
from ego.runtime.js import embed_json
from ego.site import Site
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

EVAL_IN_LATER_TASK = (
    "new Promise((resolve) => setTimeout(() => {"
    " try { eval('1'); resolve('eval ran'); } catch (e) { resolve(e.name); } }, 0))"
)


async def set_item(tab: ego.Tab, key: str, value: str) -> None:
    await tab.evaluate(f"localStorage.setItem({embed_json(key)}, {embed_json(value)})")


def cache_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [record for record in caplog.records if record.name == "ego.runtime.cache"]


def loud_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """Anything logged above DEBUG: what a caller could notice."""
    return [record for record in caplog.records if record.levelno > logging.DEBUG]


@pytest.fixture
async def page(tab: ego.Tab, server: PageServer) -> ego.Tab:
    await tab.navigate(server.route("/cache/page", PAGE))
    return tab


@pytest.fixture
async def csp_page(tab: ego.Tab, server: PageServer) -> ego.Tab:
    await tab.navigate(server.route("/cache/csp", PAGE, headers=CSP_HEADERS))
    return tab


# --- call first ---------------------------------------------------------------------------------


async def test_first_run_stores_then_hot_runs_send_only_the_call(
    tmp_path: Path, browser: ego.Browser, page: ego.Tab
) -> None:
    site_id = new_id("first")
    site = site_with(tmp_path, browser, site_id, add=tool(SUM, args=SUM_ARGS))

    first = await site.run_browser_tool(site_id, "add", {"a": 2, "b": 3}, tab=page)
    cold = last(site)
    assert first == SUM_EXPECTED
    assert (cold.mode, cold.stored, cold.evaluations, cold.fallback) == ("stored", True, 3, "")

    second = await site.run_browser_tool(site_id, "add", {"a": 2, "b": 3}, tab=page)
    hot = last(site)
    assert second == SUM_EXPECTED
    assert (hot.mode, hot.stored, hot.evaluations, hot.fallback) == ("cached", False, 1, "")
    # The hot run is exactly the Call; the cold one also carried the Store with the source.
    assert hot.bytes_sent < cold.bytes_sent
    assert cold.bytes_sent > 2 * hot.bytes_sent + len(SUM)

    # Other args reuse the stored source: still one evaluate, new result.
    assert await site.run_browser_tool(site_id, "add", {"a": 40, "b": 2}, tab=page) == {
        **SUM_EXPECTED,
        "sum": 42,
    }
    assert (last(site).mode, last(site).evaluations) == ("cached", 1)


async def test_hot_bytes_do_not_grow_with_the_tools_size(
    tmp_path: Path, browser: ego.Browser, page: ego.Tab
) -> None:
    body = "async (args) => {\n%s  return {n: args.n * 2, title: document.title};\n}\n"
    padding = "".join(f"  // padding line {i:05d} {'x' * 80}\n" for i in range(1100))
    small, large = body % "", body % padding
    assert len(large.encode()) > 100_000
    site_id = new_id("bytes")
    # Tool names of equal length: the two Calls differ only in the key's last part and the stamp.
    site = site_with(
        tmp_path,
        browser,
        site_id,
        small=tool(small, args={"n": {"type": "integer"}}),
        large=tool(large, args={"n": {"type": "integer"}}),
    )
    stats: dict[str, tuple[RunStats, RunStats]] = {}
    for name in ("small", "large"):
        runs = []
        for _ in range(2):
            assert await site.run_browser_tool(site_id, name, {"n": 21}, tab=page) == {
                "n": 42,
                "title": "Cache page",
            }
            runs.append(last(site))
        stats[name] = (runs[0], runs[1])

    (_, small_hot), (large_cold, large_hot) = stats["small"], stats["large"]
    assert (small_hot.mode, large_hot.mode) == ("cached", "cached")
    assert large_cold.bytes_sent > 100_000  # the source went once, on the cold run
    assert large_hot.bytes_sent == small_hot.bytes_sent
    assert large_hot.bytes_sent < 1024
    # The hot run is exactly the hot Call: key, stamp and args, nothing of the source.
    keys = await stored_keys(page, site_id)
    key = cache_key(site_id, "large")
    call = hot_snippet(key, keys[key + ":ver"], embed_json({"n": 21}))
    assert large_hot.bytes_sent == len(call.encode())


async def test_two_keys_per_tool_overwritten_in_place(
    tmp_path: Path, browser: ego.Browser, page: ego.Tab
) -> None:
    site_id = new_id("keys")
    site = site_with(
        tmp_path,
        browser,
        site_id,
        one=tool("async () => 'one v0'\n"),
        two=tool("async () => 'two'\n"),
    )
    key_one, key_two = cache_key(site_id, "one"), cache_key(site_id, "two")
    assert key_one == f"ego:{site_id}:one"
    assert await site.run_browser_tool(site_id, "two", tab=page) == "two"

    stamps = []
    for version in range(1, 5):
        # A different length each time, so the registry sees the file change.
        text = f"async () => 'one v{version}'{';' * version}\n"
        (tmp_path / site_id / "browser-tools" / "one.js").write_text(text, encoding="utf-8")
        assert await site.run_browser_tool(site_id, "one", tab=page) == f"one v{version}"
        assert last(site).mode == "stored"
        keys = await stored_keys(page, site_id)
        assert sorted(keys) == sorted([key_one, key_one + ":ver", key_two, key_two + ":ver"])
        assert f"one v{version}" in keys[key_one]
        stamps.append(keys[key_one + ":ver"])
    assert len(set(stamps)) == 4  # each version its own stamp, written over the last one


async def test_the_cached_tool_sees_the_pages_globals_like_the_plain_wrap(
    tmp_path: Path, browser: ego.Browser, tab: ego.Tab, server: PageServer
) -> None:
    # Globals named like the Call snippet's locals: the cached tool must see the page's.
    globals_page = PAGE + "<script>var s = 'page s', f = 'page f', K = 'page K';</script>\n"
    await tab.navigate(server.route("/cache/globals", globals_page))
    site_id = new_id("scope")
    source = "async () => [s, f, K, typeof V, typeof S, typeof t]\n"
    site = site_with(tmp_path, browser, site_id, names=tool(source))
    expected = ["page s", "page f", "page K", "undefined", "undefined", "undefined"]
    assert await site.run_browser_tool(site_id, "names", tab=tab, cache=False) == expected
    assert await site.run_browser_tool(site_id, "names", tab=tab) == expected
    assert last(site).mode == "stored"
    assert await site.run_browser_tool(site_id, "names", tab=tab) == expected
    assert last(site).mode == "cached"


#: Marks the page, then waits until the test calls window.__release() (no timer involved).
HELD = """async () => {
  document.body.insertAdjacentHTML('beforeend', '<i id="held-waiting"></i>');
  await new Promise((resolve) => { window.__release = resolve; });
  return 'held';
}
"""


async def test_each_task_reads_its_own_calls_stats_while_others_run(
    tmp_path: Path, browser: ego.Browser, page: ego.Tab
) -> None:
    site_id = new_id("stats")
    site = site_with(tmp_path, browser, site_id, held=tool(HELD), add=tool(PURE, args=SUM_ARGS))

    async def held() -> tuple[Any, RunStats | None]:
        result = await site.run_browser_tool(site_id, "held", tab=page, cache=False)
        return result, site.last_run

    async def add() -> tuple[Any, RunStats | None]:
        result = await site.run_browser_tool(site_id, "add", {"a": 2, "b": 3}, tab=page)
        return result, site.last_run

    # The held call starts first and ends last: the other call runs entirely inside it.
    first = asyncio.create_task(held())
    await page.wait_for(selector="#held-waiting", timeout=10)
    added, add_stats = await asyncio.create_task(add())
    await page.evaluate("window.__release()")
    result, held_stats = await asyncio.wait_for(first, 10)

    assert (result, added) == ("held", PURE_EXPECTED)
    assert held_stats is not None
    assert add_stats is not None
    assert (held_stats.mode, held_stats.fallback, held_stats.evaluations) == (
        "plain",
        "disabled",
        1,
    )
    assert (add_stats.mode, add_stats.evaluations) == ("stored", 3)
    # The task that started them made no run of its own: it sees the one that started last.
    assert site.last_run is add_stats


# --- versions ----------------------------------------------------------------------------------


async def test_changed_file_rolls_the_version_over(
    tmp_path: Path, browser: ego.Browser, page: ego.Tab
) -> None:
    site_id = new_id("roll")
    site = site_with(tmp_path, browser, site_id, what=tool("async () => ({version: 1})\n"))
    key = cache_key(site_id, "what")
    assert await site.run_browser_tool(site_id, "what", tab=page) == {"version": 1}
    assert await site.run_browser_tool(site_id, "what", tab=page) == {"version": 1}
    assert last(site).mode == "cached"
    old_stamp = (await stored_keys(page, site_id))[key + ":ver"]

    file = tmp_path / site_id / "browser-tools" / "what.js"
    file.write_text("async () => ({version: 2, changed: true})\n", encoding="utf-8")
    assert await site.run_browser_tool(site_id, "what", tab=page) == {
        "version": 2,
        "changed": True,
    }
    assert (last(site).mode, last(site).stored) == ("stored", True)
    new_stamp = (await stored_keys(page, site_id))[key + ":ver"]
    assert new_stamp != old_stamp

    assert await site.run_browser_tool(site_id, "what", tab=page) == {
        "version": 2,
        "changed": True,
    }
    assert last(site).mode == "cached"


async def test_a_stale_snippet_never_runs_a_newer_stored_source(
    tmp_path: Path, browser: ego.Browser, page: ego.Tab
) -> None:
    site_id = new_id("stale")
    site = site_with(tmp_path, browser, site_id, mine=tool("async (args) => 'from the file'\n"))
    key = cache_key(site_id, "mine")
    assert await site.run_browser_tool(site_id, "mine", tab=page) == "from the file"
    stamp = (await stored_keys(page, site_id))[key + ":ver"]

    # Only the stamp changed by hand: the Call must not trust the source under it. (A new
    # document: in this one the memo holds the function, tests/test_cache_memo.py.)
    await set_item(page, key + ":ver", "someone-else")
    await page.reload()
    assert await site.run_browser_tool(site_id, "mine", tab=page) == "from the file"
    assert (last(site).mode, last(site).stored, last(site).evaluations) == ("stored", True, 3)
    assert (await stored_keys(page, site_id))[key + ":ver"] == stamp

    # A newer source stored by another version of the tool: this run's snippet refuses it
    # (NEEDS_STORE), then stores its own.
    await set_item(page, key, "async () => 'the newer stored source'")
    await set_item(page, key + ":ver", "newer-stamp")
    await page.reload()
    call = call_snippet(key, stamp, "{}")
    assert await page.evaluate(call) == {SIGNAL_KEY: "NEEDS_STORE"}
    assert await site.run_browser_tool(site_id, "mine", tab=page) == "from the file"
    assert last(site).mode == "stored"
    keys = await stored_keys(page, site_id)
    assert keys[key + ":ver"] == stamp
    assert "from the file" in keys[key]


# --- strict CSP ----------------------------------------------------------------------------------


async def test_cache_stores_and_hits_under_a_strict_csp(
    tmp_path: Path, browser: ego.Browser, csp_page: ego.Tab, server: PageServer
) -> None:
    # The policy is in force: an eval in a later task is refused.
    assert await csp_page.evaluate(EVAL_IN_LATER_TASK) == "EvalError"
    site_id = new_id("csp")
    site = site_with(tmp_path, browser, site_id, add=tool(SUM, args=SUM_ARGS))

    cold = await site.run_browser_tool(site_id, "add", {"a": 2, "b": 3}, tab=csp_page)
    assert (last(site).mode, last(site).stored) == ("stored", True)
    hot = await site.run_browser_tool(site_id, "add", {"a": 2, "b": 3}, tab=csp_page)
    assert (last(site).mode, last(site).evaluations) == ("cached", 1)
    assert cold == hot == SUM_EXPECTED
    assert set(await stored_keys(csp_page, site_id)) == {
        cache_key(site_id, "add"),
        cache_key(site_id, "add") + ":ver",
    }

    # The same page without the policy gives the same result.
    await csp_page.navigate(server.route("/cache/no-csp", PAGE))
    assert await csp_page.evaluate(EVAL_IN_LATER_TASK) == "eval ran"
    assert await site.run_browser_tool(site_id, "add", {"a": 2, "b": 3}, tab=csp_page) == cold


class StrictBridge:
    """An evaluate that forbids eval the way a stricter bridge may (the flag set to false)."""

    def __init__(self, tab: ego.Tab) -> None:
        self.tab = tab

    async def evaluate(
        self, expression: str, *, timeout: float | None = None, describe: bool = False
    ) -> Any:
        # Always the raw path, which is what run_cached asks for (describe=False).
        result = await self.tab.send(
            "Runtime.evaluate",
            {
                "expression": expression,
                "returnByValue": True,
                "awaitPromise": True,
                "allowUnsafeEvalBlockedByCSP": False,
            },
        )
        if "exceptionDetails" in result:
            raise javascript_error(result["exceptionDetails"])
        return python_value(result["result"])


async def test_eval_blocked_answers_no_eval_and_falls_back(
    tmp_path: Path,
    browser: ego.Browser,
    csp_page: ego.Tab,
    caplog: pytest.LogCaptureFixture,
) -> None:
    site_id = new_id("noeval")
    site = site_with(tmp_path, browser, site_id, pure=tool(PURE, args=SUM_ARGS))
    args = embed_json({"a": 2, "b": 3})
    assert await site.run_browser_tool(site_id, "pure", {"a": 2, "b": 3}, tab=csp_page) == (
        PURE_EXPECTED
    )
    key = cache_key(site_id, "pure")
    stamp = (await stored_keys(csp_page, site_id))[key + ":ver"]
    call = call_snippet(key, stamp, args)

    # The default flag lets the Call's synchronous eval through; false blocks it: NO_EVAL (in
    # a new document, whose memo does not hold the function yet).
    assert await csp_page.evaluate(call) == PURE_EXPECTED
    await csp_page.reload()
    raw = await csp_page.send(
        "Runtime.evaluate",
        {"expression": call, "returnByValue": True, "allowUnsafeEvalBlockedByCSP": False},
    )
    assert raw["result"]["value"] == {SIGNAL_KEY: "NO_EVAL"}

    # Through such a bridge the harness falls back to the plain wrap, same result.
    caplog.set_level(logging.DEBUG, logger="ego.runtime.cache")
    caplog.clear()
    loaded = site.learnings.browser_source(site_id, site.learnings.tool(site_id, "pure")[1])
    stats = RunStats()
    result = await run_cached(
        StrictBridge(csp_page),  # type: ignore[arg-type]
        key=key,
        version=loaded.version,
        expression=loaded.expression,
        arguments=args,
        url=loaded.url,
        stats=stats,
    )
    assert loaded.version == stamp
    assert result == PURE_EXPECTED
    assert (stats.mode, stats.fallback, stats.evaluations) == ("plain", "eval blocked", 2)
    assert [r.levelno for r in cache_records(caplog)] == [logging.DEBUG]
    assert loud_records(caplog) == []


# --- fallbacks -----------------------------------------------------------------------------------

DISABLE_STORAGE = (
    "Object.defineProperty(window, 'localStorage', "
    "{get() { throw new DOMException('denied', 'SecurityError'); }});"
)
FILL_QUOTA = (
    "Storage.prototype.setItem = function () {"
    " throw new DOMException('the quota has been exceeded', 'QuotaExceededError'); };"
)


async def _about_blank(tab: ego.Tab, server: PageServer) -> None:
    assert await tab.evaluate("location.href") == "about:blank"


async def _data_url(tab: ego.Tab, server: PageServer) -> None:
    await tab.navigate("data:text/html,<title>data</title><p>from a data URL</p>")
    assert await tab.evaluate("location.protocol") == "data:"


async def _sandboxed(tab: ego.Tab, server: PageServer) -> None:
    headers = {"Content-Security-Policy": "sandbox allow-scripts"}
    await tab.navigate(server.route("/cache/sandboxed", PAGE, headers=headers))
    assert await tab.evaluate("self.origin") == "null"  # opaque, like a sandboxed frame


async def _storage_disabled(tab: ego.Tab, server: PageServer) -> None:
    page = PAGE + f"<script>{DISABLE_STORAGE}</script>\n"
    await tab.navigate(server.route("/cache/storage-disabled", page))


async def _quota(tab: ego.Tab, server: PageServer) -> None:
    await tab.navigate(server.route("/cache/quota", PAGE))
    await tab.evaluate(FILL_QUOTA)


FALLBACKS = {
    "about:blank": (_about_blank, "no storage", 2),
    "data: URL": (_data_url, "no storage", 2),
    "sandboxed": (_sandboxed, "no storage", 2),
    "storage disabled": (_storage_disabled, "no storage", 2),
    "quota exceeded": (_quota, "store failed", 3),
}


async def run_directly(
    site: Site, site_id: str, tab: ego.Tab, *, use_cache: bool = True
) -> tuple[Any, RunStats]:
    """Run the ``pure`` tool through the cache layer itself, with no site check."""
    call = site.prepare(site_id, "pure", {"a": 2, "b": 3})
    assert call.source is not None
    stats = RunStats()
    result = await run_cached(
        tab,
        key=cache_key(site_id, "pure"),
        version=call.source.version,
        expression=call.source.expression,
        arguments=call.embedded,
        url=call.source.url,
        use_cache=use_cache,
        stats=stats,
    )
    return result, stats


@pytest.mark.parametrize("case", list(FALLBACKS))
async def test_unusable_storage_falls_back_to_the_plain_wrap(
    tmp_path: Path,
    browser: ego.Browser,
    tab: ego.Tab,
    server: PageServer,
    caplog: pytest.LogCaptureFixture,
    case: str,
) -> None:
    prepare, reason, evaluations = FALLBACKS[case]
    await prepare(tab, server)
    # Storage really is unusable here (reading or writing throws).
    assert await tab.evaluate(
        "(() => { try { localStorage.setItem('ego-probe', '1');"
        " localStorage.removeItem('ego-probe'); return 'usable'; }"
        " catch (e) { return e.name; } })()"
    ) in ("SecurityError", "QuotaExceededError")
    site_id = new_id("fallback")
    site = site_with(tmp_path, browser, site_id, pure=tool(PURE, args=SUM_ARGS))

    caplog.set_level(logging.DEBUG, logger="ego.runtime.cache")
    caplog.clear()
    opaque = case in ("about:blank", "data: URL")
    if opaque:
        # A page on no site at all: a site's tool is refused there before anything runs, so
        # the cache layer is driven directly, as a skill or an export would.
        with pytest.raises(ego.SiteMismatchError, match=r"about:blank|data:"):
            await site.run_browser_tool(site_id, "pure", {"a": 2, "b": 3}, tab=tab)
        assert cache_records(caplog) == []
        result, stats = await run_directly(site, site_id, tab)
    else:
        result = await site.run_browser_tool(site_id, "pure", {"a": 2, "b": 3}, tab=tab)
        stats = last(site)
    assert result == PURE_EXPECTED
    assert (stats.mode, stats.stored, stats.fallback) == ("plain", False, reason)
    assert stats.evaluations == evaluations
    records = cache_records(caplog)
    assert [r.levelno for r in records] == [logging.DEBUG]
    assert cache_key(site_id, "pure") in records[0].getMessage()
    assert reason in records[0].getMessage()
    assert loud_records(caplog) == []

    # The same as a run with the layer off.
    if opaque:
        assert (await run_directly(site, site_id, tab, use_cache=False))[0] == result
    else:
        assert (
            await site.run_browser_tool(site_id, "pure", {"a": 2, "b": 3}, tab=tab, cache=False)
            == result
        )
    if case == "quota exceeded":  # a failed Store leaves no half-written entry behind
        assert await stored_keys(tab, site_id) == {}


@pytest.mark.parametrize("tampered", ["{{ not javascript", "42", ""])
async def test_tampered_value_is_stored_again(
    tmp_path: Path,
    browser: ego.Browser,
    page: ego.Tab,
    caplog: pytest.LogCaptureFixture,
    tampered: str,
) -> None:
    site_id = new_id("tamper")
    site = site_with(tmp_path, browser, site_id, add=tool(SUM, args=SUM_ARGS))
    key = cache_key(site_id, "add")
    assert await site.run_browser_tool(site_id, "add", {"a": 2, "b": 3}, tab=page) == SUM_EXPECTED
    good = await stored_keys(page, site_id)

    await set_item(page, key, tampered)  # the stamp still matches
    await page.reload()  # a new document: this one's memo still holds the good function
    caplog.set_level(logging.DEBUG, logger="ego.runtime.cache")
    caplog.clear()
    assert await site.run_browser_tool(site_id, "add", {"a": 2, "b": 3}, tab=page) == SUM_EXPECTED
    assert (last(site).mode, last(site).stored, last(site).evaluations) == ("stored", True, 3)
    assert loud_records(caplog) == []
    assert await stored_keys(page, site_id) == good

    assert await site.run_browser_tool(site_id, "add", {"a": 2, "b": 3}, tab=page) == SUM_EXPECTED
    assert last(site).mode == "cached"


async def test_cache_switched_off_per_call(
    tmp_path: Path, browser: ego.Browser, page: ego.Tab, caplog: pytest.LogCaptureFixture
) -> None:
    site_id = new_id("off")
    site = site_with(tmp_path, browser, site_id, add=tool(SUM, args=SUM_ARGS))
    caplog.set_level(logging.DEBUG, logger="ego.runtime.cache")
    for _ in range(2):
        result = await site.run_browser_tool(
            site_id, "add", {"a": 2, "b": 3}, tab=page, cache=False
        )
        assert result == SUM_EXPECTED
        stats = last(site)
        assert (stats.mode, stats.stored, stats.evaluations, stats.fallback) == (
            "plain",
            False,
            1,
            "disabled",
        )
    assert await stored_keys(page, site_id) == {}
    assert cache_records(caplog) == []  # switching it off is not a fallback worth a log line

    # The same tool with the layer on stores, and the result is the same.
    assert await site.run_browser_tool(site_id, "add", {"a": 2, "b": 3}, tab=page) == SUM_EXPECTED
    assert last(site).mode == "stored"
    assert len(await stored_keys(page, site_id)) == 2
