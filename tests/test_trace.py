"""Traces: what a trace file holds of a session on the demo shop (its steps, screenshots,
snapshots, requests, console, dialogs), what it redacts, its bounds, and the traces kept of
failures only.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import stat
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

import ego
from ego.demo import DemoServer
from ego.errors import SkillBrokenError, TraceFileError
from ego.page.action_log import Action
from ego.trace import TraceOptions
from ego.trace.failures import FailureTraces
from ego.trace.index import kept
from ego.trace.reading import read_trace
from ego.trace.secrets import TraceSecrets
from ego.trace.tabs import TabTrace
from tests.helpers.health import isolated_store
from tests.helpers.page_server import PageServer
from tests.helpers.paths import ROOT
from tests.helpers.trace_demo import PASSWORD, DemoTrace, trace_demo_session


@pytest.fixture(scope="module")
def shop() -> Iterator[DemoServer]:
    server = DemoServer(port=0).start()
    yield server
    server.close()


@pytest.fixture(scope="module")
async def demo_trace(
    browser: ego.Browser, shop: DemoServer, tmp_path_factory: pytest.TempPathFactory
) -> DemoTrace:
    folder = tmp_path_factory.mktemp("trace")
    return await trace_demo_session(browser, shop, folder / "demo.trace.jsonl")


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def steps_of(path: Path) -> list[dict[str, Any]]:
    return [r for r in records(path) if r["type"] == "step"]


@pytest.mark.chrome
async def test_a_trace_is_a_private_file_of_json_lines_from_its_header_to_its_end(
    demo_trace: DemoTrace,
) -> None:
    assert stat.S_IMODE(os.stat(demo_trace.path).st_mode) == 0o600
    lines = records(demo_trace.path)
    assert lines[0]["type"] == "trace"
    assert lines[0]["subject"] == "the demo shop, broken"
    assert lines[0]["options"]["max_bytes"] == TraceOptions().max_bytes
    assert lines[-1]["type"] == "end"
    assert lines[-1]["steps"] == demo_trace.summary.steps == len(demo_trace.verbs)
    assert lines[-1]["failed"] == 1
    assert lines[-1]["bytes"] <= lines[-1]["max_bytes"]


@pytest.mark.chrome
async def test_the_steps_are_the_actions_and_tool_runs_in_the_order_they_ended(
    demo_trace: DemoTrace,
) -> None:
    steps = steps_of(demo_trace.path)
    assert [s["verb"] for s in steps] == demo_trace.verbs
    assert [s["step"] for s in steps] == list(range(1, len(steps) + 1))
    click = steps[1]
    assert click["target"] == '[data-testid="product-card"] a'
    assert click["element"]["role"] == "link"
    assert click["url_after"].endswith("/product/1")
    assert click["seconds"] > 0


@pytest.mark.chrome
async def test_an_action_has_the_screenshot_after_it_and_the_snapshot_around_its_target(
    demo_trace: DemoTrace,
) -> None:
    click = steps_of(demo_trace.path)[1]
    shot = click["screenshot"]
    assert base64.b64decode(shot["jpeg"])[:3] == b"\xff\xd8\xff"  # a JPEG
    assert shot["scale"] == TraceOptions().screenshot_scale
    snapshot = click["snapshot"]
    assert len(snapshot["lines"]) <= TraceOptions().snapshot_lines
    assert snapshot["url"].endswith("/product/1")  # the page after the click
    typed = steps_of(demo_trace.path)[3]
    target = typed["snapshot"]["lines"][typed["snapshot"]["target"]]
    assert f"[ref={typed['element']['ref']}]" in target
    assert 'textbox "Username"' in target


@pytest.mark.chrome
async def test_the_failing_tool_run_says_its_error_its_outcome_and_its_versions_health(
    demo_trace: DemoTrace,
) -> None:
    ok, failed = [s for s in steps_of(demo_trace.path) if s["kind"] == "tool"]
    assert ok["ok"]
    assert ok["outcome"] == "OK"
    assert ok["result"]["products"]
    assert not failed["ok"]
    assert failed["outcome"] == "SKILL_BROKEN"
    assert failed["error"]["type"] == "SkillBrokenError"
    assert failed["version"] == ok["version"]
    assert failed["args"] == {"query": "lamp"}
    assert base64.b64decode(failed["screenshot"]["jpeg"])[:2] == b"\xff\xd8"
    (health,) = records(demo_trace.path)[-1]["health"]
    assert (health["site"], health["tool"], health["version"]) == (
        "demo-shop",
        "search_products",
        failed["version"],
    )
    assert health["failures"] >= 1


@pytest.mark.chrome
async def test_requests_console_and_dialogs_are_in_the_trace(demo_trace: DemoTrace) -> None:
    lines = records(demo_trace.path)
    requests = [r for r in lines if r["type"] == "request"]
    moved = [r for r in requests if "/api/products?" in r["url"] and r["status"] == 404]
    assert moved, "the broken search's request is not in the trace"
    assert json.loads(moved[-1]["response_body"]["text"]) == {"error": "not found"}
    found = [r for r in requests if "/api/products?" in r["url"] and r["status"] == 200]
    assert found[0]["ms"] >= 0
    assert found[0]["resource"] == "fetch"
    script = next(r for r in requests if r["url"].endswith("/static/app.js"))
    assert script["response_body"]["note"] == "not kept (script)"
    console = [r for r in lines if r["type"] == "console"]
    assert any("recommendations widget failed" in r["text"] for r in console)
    (dialog,) = [r for r in lines if r["type"] == "dialog"]
    assert (dialog["dialog_type"], dialog["message"], dialog["answer"]) == (
        "alert",
        "Welcome back",
        "accepted",
    )


@pytest.mark.chrome
async def test_secrets_are_redacted_by_name_and_by_value(demo_trace: DemoTrace) -> None:
    raw = demo_trace.path.read_bytes()
    typed = steps_of(demo_trace.path)[4]
    assert typed["element"]["input_type"] == "password"
    assert typed["args"]["text"] == "REDACTED"
    assert PASSWORD.encode() not in raw
    assert demo_trace.session_tokens  # the login made a session ...
    for token in demo_trace.session_tokens:
        assert token.encode() not in raw  # ... whose cookie is nowhere in the trace
    login = next(r for r in records(demo_trace.path) if r["type"] == "request" and
                 r["method"] == "POST" and r["url"].endswith("/login"))  # fmt: skip
    assert "password=REDACTED" in login["request_body"]["text"]
    assert "Set-Cookie" in login["redacted"]["responseHeaders"]


@pytest.mark.chrome
async def test_the_demo_flows_trace_stays_under_the_size_the_docs_say(
    demo_trace: DemoTrace,
) -> None:
    docs = " ".join((ROOT / "docs" / "tracing.md").read_text().split())
    found = re.search(r"makes a trace under (\d+) KB with the default bounds", docs)
    assert found, "docs/tracing.md no longer says how large the demo flow's trace is"
    assert demo_trace.summary.steps == 9  # the flow the docs describe
    assert demo_trace.path.stat().st_size < int(found.group(1)) * 1000


@pytest.mark.chrome
async def test_the_failure_is_named_in_the_index_of_kept_traces(demo_trace: DemoTrace) -> None:
    failed = [s for s in steps_of(demo_trace.path) if s["kind"] == "tool"][-1]
    mine = [k for k in kept() if k.path == str(demo_trace.path.resolve())]
    assert [(k.site_id, k.tool, k.version, k.outcome) for k in mine] == [
        ("demo-shop", "search_products", failed["version"], "SKILL_BROKEN")
    ]
    assert mine[0].at == pytest.approx(failed["t"] + failed["seconds"])


@pytest.mark.chrome
async def test_a_trace_stays_within_its_bound_and_says_what_it_left_out(
    tab: ego.Tab, shop: DemoServer, tmp_path: Path
) -> None:
    path = tmp_path / "small.trace.jsonl"
    async with tab.trace(path, max_bytes=64 * 1024):
        for product in range(1, 8):
            await tab.navigate(shop.url_for(f"/product/{product}"))
    assert path.stat().st_size <= 64 * 1024
    end = records(path)[-1]
    assert end["omitted"]["screenshot"] >= 1
    steps = steps_of(path)
    # Every step is there or counted as left out; the first kept their screenshots, the
    # later ones say theirs was left out.
    assert len(steps) + end["omitted"].get("step", 0) == 7
    assert "jpeg" in steps[0]["screenshot"]
    assert {"omitted": "left out: the trace reached its size bound"} in [
        s["screenshot"] for s in steps
    ]
    assert read_trace(path).end == end


def test_a_document_the_page_commits_while_an_action_runs_is_a_step_of_its_own() -> None:
    # A navigation's own commit is its step; a second commit before its coroutine ended (the
    # page's load handler going on to another page, heard before the navigation returned)
    # is the page's doing, and gets a step of its own once it loads.
    class Sink:
        def record(self, trace: TabTrace, record: dict[str, Any]) -> None:
            pass

        async def step(self, trace: TabTrace, step: dict[str, Any], failed: bool) -> None:
            pass

    traced = TabTrace(
        cast("ego.Tab", SimpleNamespace(target_id="T")), TraceOptions(), TraceSecrets(), Sink()
    )
    navigate = Action(verb="navigate", page=None, target="/hop", args={}, started=0.0, url="")
    main_frame = {"frame": {"id": "T", "url": "http://127.0.0.1/"}}
    traced._started(navigate)
    traced._on_commit("Page.frameNavigated", main_frame)
    assert not traced._unasked  # the navigation's own document
    traced._on_commit("Page.frameNavigated", main_frame)
    assert traced._unasked  # the page went on by itself
    traced._on_commit("Page.frameNavigated", {"frame": {"id": "F", "parentId": "T"}})
    assert traced._unasked  # a child frame's commit changes nothing


def test_a_trace_cut_short_is_read_to_its_last_whole_line(tmp_path: Path) -> None:
    path = tmp_path / "cut.trace.jsonl"
    header = {"type": "trace", "format": 1, "subject": "cut", "t": 1.0}
    step = {"type": "step", "step": 1, "kind": "action", "verb": "click", "ok": True}
    path.write_text(json.dumps(header) + "\n" + json.dumps(step) + '\n{"type": "req')
    trace = read_trace(path)
    assert trace.torn
    assert trace.end is None
    assert trace.steps == [step]


def test_a_file_that_is_no_trace_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello\n")
    with pytest.raises(TraceFileError, match="is not a trace"):
        read_trace(path)
    with pytest.raises(TraceFileError, match="cannot read the trace"):
        read_trace(tmp_path / "missing.jsonl")


def test_options_out_of_range_are_refused_naming_the_option() -> None:
    with pytest.raises(ValueError, match="max_bytes=1000"):
        TraceOptions(max_bytes=1000)
    with pytest.raises(ValueError, match="screenshot_scale=2"):
        TraceOptions(screenshot_scale=2)
    with pytest.raises(ValueError, match="screenshot_quality=0"):
        TraceOptions(screenshot_quality=0)


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    yield from isolated_store(monkeypatch, tmp_path / "state")


@pytest.fixture
async def shop_context(browser: ego.Browser, shop: DemoServer) -> AsyncIterator[Any]:
    async with await browser.new_context() as context:
        context.site.set_start_url("demo-shop", shop.url)
        yield context


@pytest.mark.chrome
async def test_failure_traces_keep_the_failing_input_only(
    shop_context: Any, shop: DemoServer, tmp_path: Path, store: Path
) -> None:
    tab = await shop_context.new_tab(shop.url)
    labels = {"lamp": "input-0", "desk": "input-1", "mug": "input-2"}
    traces = FailureTraces(tmp_path / "failures", label=lambda run: labels[run.args["query"]])
    async with traces:
        for query in ("lamp", "desk"):
            await shop_context.site.run_browser_tool(
                "demo-shop", "search_products", {"query": query}, tab=tab
            )
        shop.api_changed = True
        try:
            with pytest.raises(SkillBrokenError):
                await shop_context.site.run_browser_tool(
                    "demo-shop", "search_products", {"query": "mug"}, tab=tab
                )
        finally:
            shop.api_changed = False
    (path,) = traces.kept
    assert traces.labelled == {"input-2": path}
    assert path.parent == tmp_path / "failures"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    trace = read_trace(path)
    (step,) = trace.steps
    assert (step["input"], step["outcome"], step["args"]) == ("input-2", "SKILL_BROKEN",
                                                              {"query": "mug"})  # fmt: skip
    urls = [r["url"] for r in trace.records if r["type"] == "request"]
    assert any("q=mug" in url for url in urls)
    assert not any("q=lamp" in url or "q=desk" in url for url in urls)  # passing inputs: none


@pytest.mark.chrome
async def test_a_download_is_in_the_trace(tab: ego.Tab, server: PageServer, tmp_path: Path) -> None:
    server.route(
        "/trace/report.csv",
        "a,b\n1,2\n",
        content_type="text/csv",
        headers={"Content-Disposition": 'attachment; filename="report.csv"'},
    )
    page = server.route("/trace/downloads", '<a id="dl" href="/trace/report.csv">Report</a>')
    path = tmp_path / "download.trace.jsonl"
    async with tab.trace(path, screenshot_scale=0):
        await tab.navigate(page)
        async with tab.expect_download():
            await tab.click("#dl")
    (download,) = [r for r in records(path) if r["type"] == "download"]
    assert (download["filename"], download["state"], download["size"]) == (
        "report.csv",
        "completed",
        8,
    )
    click = steps_of(path)[-1]
    assert click["screenshot"] is None  # screenshot_scale=0: none taken


@pytest.mark.chrome
async def test_a_click_on_a_link_is_captured_on_the_page_it_went_to(
    tab: ego.Tab, server: PageServer, tmp_path: Path
) -> None:
    """A click may end before the document it asked for commits (here: the next page does
    not come within the tab's timeout, so the click fails saying so, and only then is the
    next page answered): its step waits for that commit (bounded), so its URL and screenshot
    show where it went, whatever the timing."""
    server.route("/trace/link/next", "<title>next</title><p>arrived</p>")
    start = server.route("/trace/link", "<title>start</title><a href='/trace/link/next'>go</a>")
    await tab.navigate(start)
    tab.default_timeout = 3.0  # a fresh tab per test: only this one gives up sooner
    held = server.hold("/trace/link/next")

    def release(action: Action) -> None:
        # Told before the trace (observers are told in order): the click has ended, and the
        # next page is answered only now, after it.
        if action.verb == "click":
            held.set()

    path = tmp_path / "link.trace.jsonl"
    with tab.observe_actions(release):
        async with tab.trace(path):
            with pytest.raises(ego.CommandTimeoutError, match="began a navigation"):
                await tab.click("a")
    [click] = [s for s in read_trace(path).steps if s["verb"] == "click"]
    assert click["url_after"] == server.url("/trace/link/next")
    assert click["snapshot"]["url"] == server.url("/trace/link/next")


@pytest.mark.chrome
async def test_steps_are_written_in_the_order_they_happened_whichever_capture_ends_first(
    tab: ego.Tab, server: PageServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The page goes on to another by itself once it loaded: the navigation's step, then the
    # next page's load, though the navigation's capture is held until the load's ended.
    server.route("/trace/order/next", "<title>next</title><p>arrived</p>")
    hop = server.route(
        "/trace/order",
        "<script>addEventListener('load', () => location.href = '/trace/order/next')</script>",
    )
    page_captured = asyncio.Event()
    capture = TabTrace._capture

    async def held(self: TabTrace, step: dict[str, Any], page: Any, ref: str | None) -> None:
        if step.get("kind") == "action":
            await asyncio.wait_for(page_captured.wait(), 10)
        await capture(self, step, page, ref)
        if step.get("kind") == "page":
            page_captured.set()

    monkeypatch.setattr(TabTrace, "_capture", held)
    path = tmp_path / "order.trace.jsonl"
    async with tab.trace(path, screenshot_scale=0, page_events=True):
        await tab.navigate(hop)
        await asyncio.wait_for(page_captured.wait(), 10)
    steps = read_trace(path).steps
    assert [(s["kind"], s["verb"]) for s in steps] == [("action", "navigate"), ("page", "load")]
    assert steps[-1]["url"] == server.url("/trace/order/next")
