"""Learnings that know whether they still work: the run record, health and ``suspect``.

The fast tests drive the store, the outcomes and the writer directly; the browser tests run a
workspace tool whose outcome the page decides (ok, SKILL_BROKEN, NEEDS_LOGIN, a plain error)
and read its health back from ``learn_context``, ``ego health`` and the command line.
"""

from __future__ import annotations

import contextlib
import json
import logging
import socket
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

import ego
from ego.batch import run_batch
from ego.casetests import run_learning_tests
from ego.demo import DemoServer
from ego.errors import (
    BrowserClosedError,
    BrowserToolError,
    CommandTimeoutError,
    ConfirmationRequiredError,
    ContextDestroyedError,
    JavaScriptError,
    NavigationError,
    NeedsLoginError,
    NoTabError,
    ReturnsMismatchError,
    SiteMismatchError,
    SiteUnreachableError,
    SkillBrokenError,
    TabClosedError,
    TargetCrashedError,
)
from ego.learning.catalog.registry import Learnings
from ego.learning.health.origin import current_front_end, front_end, unrecorded
from ego.learning.health.outcomes import OK, classify
from ego.learning.health.recorder import RunRecorder, flush
from ego.learning.health.store import KEEP_RUNS, Run, connect, read_records, write_runs
from ego.learning.health.view import health_for, health_table
from ego.pool import BrowserPool
from ego.replay import Har, build_entry
from ego.site import Site
from tests.helpers.browsers import websocket_url
from tests.helpers.commands import ego_async, ego_env, free_port
from tests.helpers.health import MOODY, close_tabs, isolated_store, mood_pages
from tests.helpers.learnings import make_site, tool
from tests.helpers.page_server import PageServer, QuietHandler
from tests.helpers.skills import write_skill

KEY = ("shop", "search", "0123456789abcdef")


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """The run record of this test alone."""
    yield from isolated_store(monkeypatch, tmp_path / "state")


def run(outcome: str, at: float, message: str = "", key: tuple[str, str, str] = KEY) -> Run:
    return Run(*key, outcome, message, at, 0.01, "python")


def health_after(path: Path, runs: list[Run], key: tuple[str, str, str] = KEY) -> Any:
    conn = connect(path, create=True)
    assert conn is not None
    try:
        write_runs(conn, runs)
    finally:
        conn.close()
    return health_for(key[2], read_records(path, [key]).get(key))


# -- fast: outcomes, the store, suspect ------------------------------------------------------


def test_a_failure_is_classified_by_its_exception_type() -> None:
    def kind(exc: BaseException) -> str:
        return classify(exc)[0]

    signal = {"site_id": "s", "tool": "t", "detail": "d"}
    assert kind(SkillBrokenError("SKILL_BROKEN from s/t: gone", **signal)) == "SKILL_BROKEN"
    assert kind(NeedsLoginError("NEEDS_LOGIN", **signal)) == "NEEDS_LOGIN"
    assert kind(ConfirmationRequiredError("s/t")) == "CONFIRMATION_REQUIRED"
    assert kind(SiteMismatchError("another site", host="a:1", domains=["b"])) == "SITE_MISMATCH"
    assert kind(NoTabError("no tab")) == "NO_TAB"
    assert kind(ReturnsMismatchError("does not match")) == "RETURNS_MISMATCH"
    assert kind(CommandTimeoutError("no answer")) == "TIMEOUT"
    assert kind(ContextDestroyedError("navigated")) == "CONTEXT_DESTROYED"
    assert kind(BrowserClosedError("gone")) == "BROWSER_GONE"
    assert kind(TargetCrashedError("crashed")) == "BROWSER_GONE"
    # What the site, the network or the tab did is recorded as such.
    refused = "net::ERR_CONNECTION_REFUSED"
    gone = SiteUnreachableError(f"no server: {refused}", url="http://a:1/", reason=refused)
    assert kind(gone) == "SITE_UNREACHABLE"
    assert kind(NavigationError("navigation to http://a:1/ failed: net::ERR_ABORTED")) == (
        "NAVIGATION"
    )
    assert kind(TabClosedError("the tab closed")) == "TAB_CLOSED"
    assert kind(RuntimeError("odd")) == "ERROR"
    # A JavaScript error keeps the page's own message, not ego's wrapping of it.
    thrown = BrowserToolError(
        "s/t threw TypeError: x is undefined (t.js:3)",
        site_id="s",
        tool="t",
        file="t.js",
        name="TypeError",
        js_message="x is undefined",
    )
    assert classify(thrown) == ("JS_ERROR", "TypeError: x is undefined")
    assert classify(JavaScriptError("boom", name="Error", js_message="boom"))[0] == "JS_ERROR"
    assert classify(RuntimeError("a\nlong " + "x" * 500))[1].endswith("...")


def test_the_store_keeps_totals_and_only_the_latest_runs(tmp_path: Path) -> None:
    path = tmp_path / "health.sqlite3"
    runs = [run(OK, float(at)) for at in range(1, 121)]
    runs += [run("NEEDS_LOGIN", 200.0 + at) for at in range(KEEP_RUNS + 10)]
    health = health_after(path, runs)
    assert (health.runs, health.ok, health.failures, health.needs_login) == (
        120,
        120,
        0,
        KEEP_RUNS + 10,
    )
    assert health.last_ok == "1970-01-01T00:02:00Z"
    # The totals hold every run; the runs table the latest KEEP_RUNS of each class only.
    conn = connect(path, create=False)
    assert conn is not None
    with conn:
        kept = dict(conn.execute("SELECT counted, COUNT(*) FROM runs GROUP BY counted").fetchall())
        oldest = conn.execute("SELECT MIN(at) FROM runs WHERE counted = 1").fetchone()[0]
    conn.close()
    assert kept == {0: KEEP_RUNS, 1: KEEP_RUNS}
    assert oldest == 121.0 - KEEP_RUNS
    # A second batch adds up with the first.
    again = health_after(path, [run("SKILL_BROKEN", 500.0, "gone")])
    assert (again.runs, again.ok, again.failures) == (121, 120, 1)
    assert again.failure_kinds == {"SKILL_BROKEN": 1}
    assert again.last_failure is not None
    assert (again.last_failure.kind, again.last_failure.message) == ("SKILL_BROKEN", "gone")


def test_a_run_with_text_utf8_cannot_carry_loses_no_run_of_its_batch(tmp_path: Path) -> None:
    # A tool name or message cut mid-emoji holds a lone surrogate, which SQLite's UTF-8
    # refuses: the run is kept with its escape, and the rest of the batch with it.
    path = tmp_path / "health.sqlite3"
    odd = ("site", "tool\ud83d", "v1")
    health_after(path, [run(OK, 1.0), run("SKILL_BROKEN", 2.0, "cut \ud83d", key=odd)])
    assert health_for(KEY[2], read_records(path, [KEY]).get(KEY)).ok == 1
    stored = ("site", "tool\\ud83d", "v1")
    broken = health_for("v1", read_records(path, [stored]).get(stored))
    assert broken.failures == 1
    assert broken.last_failure is not None
    assert broken.last_failure.message == "cut \\ud83d"


def test_three_skill_broken_in_a_row_make_a_version_suspect_and_one_ok_clears_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "health.sqlite3"
    five_ok = [run(OK, float(at)) for at in range(1, 6)]
    two = health_after(path, [*five_ok, *(run("SKILL_BROKEN", 10.0 + at) for at in range(2))])
    assert not two.suspect
    three = health_after(path, [run("SKILL_BROKEN", 20.0, "no #title on the page")])
    assert three.suspect
    assert three.reason == "the last 3 runs failed (SKILL_BROKEN)"
    assert (three.runs, three.ok, three.failures) == (8, 5, 3)
    assert three.line().startswith("SUSPECT: the last 3 runs failed (SKILL_BROKEN)")
    cleared = health_after(path, [run(OK, 30.0)])
    assert not cleared.suspect
    assert cleared.reason == ""
    # Runs flushed out of order (another process's older batch) are placed by their time.
    late = health_after(path, [run("TIMEOUT", 25.0), run("JS_ERROR", 26.0)])
    assert not late.suspect


def test_needs_login_and_refusals_never_count_against_the_tool(tmp_path: Path) -> None:
    path = tmp_path / "health.sqlite3"
    only_login = health_after(path, [run("NEEDS_LOGIN", float(at)) for at in range(1, 6)])
    assert (only_login.runs, only_login.failures, only_login.needs_login) == (0, 0, 5)
    assert not only_login.suspect
    assert only_login.last_failure is None
    # Calls that never reached the tool (another site's tab, no tab) are kept apart too.
    refused = health_after(path, [run("SITE_MISMATCH", 6.0), run("NO_TAB", 7.0)] * 2)
    assert (refused.runs, refused.not_run, refused.suspect) == (0, 4, False)
    # Failures around NEEDS_LOGIN and refusals still make three in a row.
    mixed = health_after(
        path,
        [
            run("SKILL_BROKEN", 10.0),
            run("NEEDS_LOGIN", 11.0),
            run("SKILL_BROKEN", 12.0),
            run("CONFIRMATION_REQUIRED", 13.0),
            run("SITE_MISMATCH", 13.5),
            run("JS_ERROR", 14.0, "TypeError: boom"),
        ],
    )
    assert mixed.suspect
    assert mixed.reason == "the last 3 runs failed (JS_ERROR, SKILL_BROKEN)"
    assert (mixed.runs, mixed.needs_login, mixed.confirmation_required) == (3, 6, 1)
    assert mixed.not_run == 5


def test_the_site_the_network_or_the_tab_failing_never_makes_a_tool_suspect(
    tmp_path: Path,
) -> None:
    path = tmp_path / "health.sqlite3"
    refused = "no server at http://shop.localhost:8765/: net::ERR_CONNECTION_REFUSED"
    around = [
        run("NAVIGATION", 2.0, "net::ERR_ABORTED"),
        run("TAB_CLOSED", 3.0, "the tab closed"),
        *(run("SITE_UNREACHABLE", 4.0 + at, refused) for at in range(3)),
    ]
    health = health_after(path, [run(OK, 1.0), *around])
    assert (health.runs, health.ok, health.failures, health.site_failures) == (1, 1, 0, 5)
    assert not health.suspect
    assert health.unreachable
    assert health.last_failure is None
    assert health.last_site_failure is not None
    assert health.last_site_failure.kind == "SITE_UNREACHABLE"
    assert health.last_site_failure.message == refused
    assert health.line().startswith("site unreachable at 1970-01-01T00:00:06Z; 1 run: 1 ok")
    assert "5 failed for the site, not counted" in health.line()
    # Two broken runs around them are still only two in a row.
    mixed = health_after(path, [run("SKILL_BROKEN", 0.5), run("SKILL_BROKEN", 7.0)])
    assert not mixed.suspect
    # Once the site answers again (any run that reached it), it is no longer unreachable.
    back = health_after(path, [run("NEEDS_LOGIN", 8.0)])
    assert not back.unreachable
    assert back.line().startswith("3 runs: 1 ok, 2 failed; 1 NEEDS_LOGIN; 5 failed for the site")


def test_the_front_end_is_a_context_each_front_end_sets() -> None:
    assert current_front_end() == "python"
    with front_end("batch"):
        with front_end("pool", unless_named=True):
            assert current_front_end() == "batch"
        with front_end("mcp"):
            assert current_front_end() == "mcp"
        with unrecorded():
            assert current_front_end() is None
            with front_end("cli"):
                assert current_front_end() is None
    with front_end("pool", unless_named=True):
        assert current_front_end() == "pool"
    assert current_front_end() == "python"


def test_a_new_store_waits_for_another_process_that_holds_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    from ego.learning.health import store

    path = tmp_path / "health.sqlite3"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE held (x)")
    # A write lock held elsewhere makes the switch to WAL fail at once, busy handler or not.
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("INSERT INTO held VALUES (1)")
    waits: list[float] = []

    def release(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) == 2:
            holder.execute("COMMIT")

    monkeypatch.setattr(store, "sleep", release)
    conn = connect(path, create=True)
    assert conn is not None
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert len(waits) == 2
    conn.close()
    holder.close()


def test_a_store_that_cannot_be_written_is_reported_once_and_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the state folder should be")
    monkeypatch.setenv("EGO_STATE_DIR", str(blocker))
    recorder = RunRecorder(batch_seconds=0)
    try:
        with caplog.at_level(logging.WARNING, logger="ego.health"):
            recorder.add((KEY, "python", 0.0, 1.0, None, ""))
            assert recorder.flush()
            recorder.add((KEY, "python", 0.0, 1.0, "SKILL_BROKEN", "gone"))
            assert recorder.flush()
    finally:
        recorder.close()
    warnings = [r.getMessage() for r in caplog.records if r.name == "ego.health"]
    assert len(warnings) == 1, warnings
    assert "cannot be written" in warnings[0]
    assert recorder.written == 0


def test_runs_beyond_the_queue_bound_are_dropped_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("EGO_STATE_DIR", str(tmp_path / "state"))
    recorder = RunRecorder(batch_seconds=0, max_pending=5)
    # Queued before the writer starts, as a burst faster than it writes would be.
    for _ in range(7):
        recorder.pending.append((KEY, "python", 0.0, 1.0, None, ""))
    with caplog.at_level(logging.WARNING, logger="ego.health"):
        recorder.nudge()
        recorder.close(30)  # writes what is queued, then stops the writer
    warnings = [r.getMessage() for r in caplog.records if r.name == "ego.health"]
    assert len(warnings) == 1, warnings
    assert "more than 5 runs waited" in warnings[0]
    assert recorder.written == 5


def test_closing_waits_for_a_blocked_store_no_longer_than_its_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EGO_STATE_DIR", str(tmp_path))
    writing, release = threading.Event(), threading.Event()

    def stuck(conn: Any, runs: Any) -> None:
        writing.set()
        release.wait(30)

    monkeypatch.setattr("ego.learning.health.recorder.write_runs", stuck)
    recorder = RunRecorder(batch_seconds=0)
    recorder.add((KEY, "python", 0.0, 1.0, None, ""))
    assert writing.wait(30)
    recorder.close(timeout=0.05)
    # close() came back while the write is still stuck: exit is never held up by the store.
    assert recorder._thread is not None
    assert recorder._thread.is_alive()
    release.set()
    recorder._thread.join(30)
    assert not recorder._thread.is_alive()


SHORT_PROCESS = """
import sys
from time import perf_counter
from ego.learning.health.recorder import record_judged
for n in range(int(sys.argv[1])):
    record_judged(("shop", "search", "0123456789abcdef"), perf_counter(), perf_counter(), "OK", "",
                  front_end="cli")
"""


def test_a_short_process_writes_its_runs_before_it_exits(tmp_path: Path) -> None:
    env = {**ego_env(tmp_path), "EGO_STATE_DIR": str(tmp_path / "state")}
    done = subprocess.run(
        [sys.executable, "-c", SHORT_PROCESS, "7"], env=env, capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    record = read_records(tmp_path / "state" / "health.sqlite3", [KEY], recent=10)[KEY]
    assert record.totals[OK].count == 7
    assert {r.front_end for r in record.recent} == {"cli"}


CONTENDER = """
import sys
from time import perf_counter
from ego.learning.health.recorder import RunRecorder
recorder = RunRecorder(batch_seconds=0)
print("ready", flush=True)
sys.stdin.readline()
for n in range(int(sys.argv[1])):
    recorder.add((("shop", "search", "0123456789abcdef"), "python", perf_counter(), perf_counter(),
                  None if n % 3 else "TIMEOUT", ""))
    if n % 10 == 9:
        assert recorder.flush(60)
recorder.close(60)
print(recorder.written, flush=True)
"""


def test_four_processes_writing_small_batches_at_once_lose_no_run(tmp_path: Path) -> None:
    env = {**ego_env(tmp_path), "EGO_STATE_DIR": str(tmp_path / "state")}
    each = 300
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", CONTENDER, str(each)],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    try:
        # All four are started and waiting before any writes: then they contend for the lock.
        assert [p.stdout.readline().strip() for p in processes if p.stdout] == ["ready"] * 4
        for process in processes:
            assert process.stdin is not None
            process.stdin.write("go\n")
            process.stdin.flush()
        outputs = [process.communicate(timeout=120) for process in processes]
    finally:
        for process in processes:
            process.kill()
    assert [out.strip() for out, _ in outputs] == [str(each)] * 4, outputs
    record = read_records(tmp_path / "state" / "health.sqlite3", [KEY])[KEY]
    assert record.totals[OK].count + record.totals["TIMEOUT"].count == 4 * each
    assert record.totals["TIMEOUT"].count == 4 * len(range(0, each, 3))


# -- in the browser --------------------------------------------------------------------------


def moody_site(
    browser: ego.Browser, server: PageServer, tmp_path: Path, prefix: str
) -> tuple[str, dict[str, str], Site]:
    """A workspace site with the moody tool: its id, its pages, and a facade over it."""
    site_id = f"{prefix}-{uuid.uuid4().hex[:8]}"
    workspace = tmp_path / "ws"
    make_site(
        workspace / "learnings",
        site_id,
        domains=[f"127.0.0.1:{server.port}"],
        browser_tools={"check": tool(MOODY, description="Check the page")},
    )
    learnings = Learnings(workspace=workspace, project=tmp_path / "no-project")
    return site_id, mood_pages(server, site_id), Site(browser, learnings)


async def run_in(site: Site, site_id: str, url: str, times: int = 1) -> list[Any]:
    """Run the tool in a fresh tab on ``url`` ``times`` times; each outcome (value or error)."""
    tab = await site.browser.new_tab(url)
    outcomes: list[Any] = []
    try:
        for _ in range(times):
            try:
                outcomes.append(await site.run_tool(site_id, "check", tab=tab))
            except ego.EgoError as exc:
                outcomes.append(exc)
    finally:
        await tab.close()
    return outcomes


async def test_learn_context_says_a_tool_is_suspect_and_an_ok_run_clears_it(
    browser: ego.Browser, server: PageServer, tmp_path: Path, store: Path
) -> None:
    site_id, pages, site = moody_site(browser, server, tmp_path, "moody")

    async def health() -> Any:
        context = await site.learn_context(pages["ok"], detail="full")
        [info] = context.tools
        assert info.health is not None
        return info.health

    fresh = await health()
    assert (fresh.runs, fresh.suspect, fresh.line()) == (0, False, "no runs yet")
    assert await run_in(site, site_id, pages["ok"], 5) == [{"title": "ok"}] * 5
    broken = await run_in(site, site_id, pages["broken"], 3)
    assert all(isinstance(outcome, SkillBrokenError) for outcome in broken)
    # A new process would see it too: the record is on disk, not in this one.
    suspect = await health()
    assert (suspect.runs, suspect.ok, suspect.failures) == (8, 5, 3)
    assert suspect.suspect
    assert suspect.reason == "the last 3 runs failed (SKILL_BROKEN)"
    assert suspect.last_failure is not None
    assert suspect.last_failure.kind == "SKILL_BROKEN"
    assert "no #title on the page" in suspect.last_failure.message
    # NEEDS_LOGIN is not a failure: it neither clears nor adds to the streak.
    login = await run_in(site, site_id, pages["login"], 3)
    assert all(isinstance(outcome, NeedsLoginError) for outcome in login)
    still = await health()
    assert (still.runs, still.failures, still.needs_login, still.suspect) == (8, 3, 3, True)
    thrown = await run_in(site, site_id, pages["error"])
    assert isinstance(thrown[0], BrowserToolError)
    after_error = await health()
    assert after_error.failure_kinds == {"SKILL_BROKEN": 3, "JS_ERROR": 1}
    assert after_error.last_failure is not None
    assert after_error.last_failure.message == "TypeError: the page is in a mood"
    assert await run_in(site, site_id, pages["ok"]) == [{"title": "ok"}]
    cleared = await health()
    assert (cleared.runs, cleared.ok, cleared.suspect) == (10, 6, False)
    assert cleared.last_ok is not None


async def test_a_new_version_starts_at_zero_and_restore_brings_its_record_back(
    browser: ego.Browser, server: PageServer, tmp_path: Path, store: Path
) -> None:
    site_id, pages, site = moody_site(browser, server, tmp_path, "versions")
    assert await run_in(site, site_id, pages["ok"], 2) == [{"title": "ok"}] * 2

    # The new version answers SKILL_BROKEN on every page.
    broken_source = "async () => { throw new Error('SKILL_BROKEN: the site changed'); }\n"
    saved = await site.save_browser_tool(site_id, "check", broken_source)
    assert saved.previous_version is not None
    context = await site.learn_context(pages["ok"], detail="full")
    assert context.tools[0].health is not None
    assert context.tools[0].health.runs == 0
    await run_in(site, site_id, pages["ok"], 3)
    context = await site.learn_context(pages["ok"], detail="full")
    health = context.tools[0].health
    assert health is not None
    assert health.suspect
    # The agent is told which earlier version last passed, by its history id.
    assert health.last_passed == saved.previous_version
    assert f"version {saved.previous_version} last passed" in health.line()

    table = health_table(site.learnings, site_id, "check")
    assert [(row.version, row.health.ok, row.health.failures) for row in table] == [
        ("current", 0, 3),
        (saved.previous_version, 2, 0),
    ]
    assert table[0].health.last_passed == saved.previous_version

    restored = site.restore_tool(site_id, "check", saved.previous_version)
    assert restored.replaced
    context = await site.learn_context(pages["ok"], detail="full")
    back = context.tools[0].health
    assert back is not None
    assert (back.runs, back.ok, back.suspect) == (2, 2, False)


async def test_runs_from_every_front_end_are_recorded_with_it(
    ported_browser: ego.Browser, server: PageServer, tmp_path: Path, store: Path
) -> None:
    site_id = f"fronts-{uuid.uuid4().hex[:8]}"
    root = tmp_path / "learnings"
    pages = mood_pages(server, site_id)
    site_dir = make_site(
        root,
        site_id,
        # moody.example: where its offline case's recording is.
        domains=[f"127.0.0.1:{server.port}", "moody.example"],
        start_url=pages["ok"],
        browser_tools={
            "check": tool(MOODY, description="Check the page"),
            "post": tool(MOODY, description="Post", sideEffect="irreversible"),
        },
    )
    learnings = Learnings(roots=[root])
    # The pool and the batch attach to it: the session's browser has a port for that.
    browser = ported_browser
    site = Site(browser, learnings)
    # python: a script calling the site.
    await run_in(site, site_id, pages["ok"])
    # pool and batch, on the session's browser.
    try:
        async with BrowserPool(endpoints=[websocket_url(browser)], learnings=learnings) as pool:
            assert await pool.run_tool(site_id, "check") == {"title": "ok"}
        inputs, output = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
        inputs.write_text("{}\n{}\n")
        summary = await run_batch(
            BrowserPool(endpoints=[websocket_url(browser)], learnings=learnings),
            site_id,
            "check",
            inputs,
            output,
        )
    finally:
        await close_tabs(browser, f"/{site_id}/")
    assert summary.ok == 2
    # test: an offline case, recorded with its judged outcome.
    (site_dir / "tests").mkdir()
    Har(entries=[build_entry("https://moody.example/", "<body data-mode=broken>")]).save(
        site_dir / "tests" / "page.har"
    )
    (site_dir / "tests" / "cases.json").write_text(
        json.dumps(
            {
                "cases": [
                    {
                        "name": "the changed page",
                        "har": "page.har",
                        "url": "https://moody.example/",
                        "tool": "check",
                        "expect_error": "SKILL_BROKEN",
                    }
                ]
            }
        )
    )
    report = await run_learning_tests(browser, learnings, [site_id])
    assert report.passed, report.format()
    # A refused irreversible call is recorded apart.
    with pytest.raises(ConfirmationRequiredError):
        await site.run_tool(site_id, "post")

    table = {row.tool: row for row in health_table(learnings, site_id, recent=20)}
    check = table["check"]
    fronts = sorted(run.front_end for run in check.recent)
    assert fronts == ["batch", "batch", "pool", "python", "test"]
    # The case expected SKILL_BROKEN and got it: the tool works as tested.
    assert (check.health.ok, check.health.failures) == (5, 0)
    post = table["post"].health
    assert (post.runs, post.confirmation_required) == (0, 1)


async def test_a_skill_run_is_recorded_as_the_skill_front_end(
    browser: ego.Browser, tmp_path: Path, store: Path
) -> None:
    shop = DemoServer(port=0).start()
    try:
        skills = tmp_path / "ws" / "skills"
        task = f"echo-{uuid.uuid4().hex[:6]}"
        write_skill(skills, task=task)
        site = Site(browser, Learnings(workspace=tmp_path / "ws"))
        site.set_start_url("shop.localhost", shop.url)
        tab = await browser.new_tab(shop.url)
        try:
            await site.run_skill(f"shop.localhost/{task}", {"q": "x"}, tab=tab)
        finally:
            await tab.close()
        context = await site.learn_context(shop.url, detail="full")
        [info] = [s for s in context.skills if s.tool_name == task]
        assert info.health is not None
        assert (info.health.runs, info.health.ok) == (1, 1)
    finally:
        shop.close()
    flush()
    record = read_records(
        store, [("skill", f"shop.localhost/{task}", info.health.version)], recent=5
    )
    [only] = record.values()
    assert [r.front_end for r in only.recent] == ["skill"]


async def test_a_store_that_cannot_be_written_never_fails_a_call(
    browser: ego.Browser,
    server: PageServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert flush()
    blocker = tmp_path / "state-is-a-file"
    blocker.write_text("")
    monkeypatch.setenv("EGO_STATE_DIR", str(blocker))
    site_id, pages, site = moody_site(browser, server, tmp_path, "nostore")
    assert await run_in(site, site_id, pages["ok"], 3) == [{"title": "ok"}] * 3
    assert flush()
    context = await site.learn_context(pages["ok"], detail="full")
    assert context.tools[0].health is not None
    assert context.tools[0].health.runs == 0


async def test_tools_sites_and_health_commands_show_health(
    browser: ego.Browser, server: PageServer, tmp_path: Path, store: Path
) -> None:
    site_id, pages, site = moody_site(browser, server, tmp_path, "shown")
    workspace = tmp_path / "ws"
    await run_in(site, site_id, pages["ok"], 2)
    await run_in(site, site_id, pages["broken"], 3)
    assert flush()
    env = ego_env(tmp_path / "profiles", workspace=workspace, EGO_STATE_DIR=str(store.parent))

    tools = await ego_async("tools", pages["ok"], "--no-json", env=env)
    assert tools.returncode == 0, tools
    assert "check() read, suspect: " in tools.stdout  # one word: the rest with --full
    tools = await ego_async("tools", pages["ok"], "--full", "--no-json", env=env)
    assert tools.returncode == 0, tools
    assert "health: SUSPECT: the last 3 runs failed (SKILL_BROKEN); 5 runs: 2 ok, 3 failed" in (
        tools.stdout
    )
    sites = await ego_async("sites", "--no-json", env=env)
    assert sites.returncode == 0, sites
    assert "  check: SUSPECT: the last 3 runs failed (SKILL_BROKEN)" in sites.stdout
    sites_json = await ego_async("sites", "--json", env=env)
    [summary] = [s for s in sites_json.json()["sites"] if s["site_id"] == site_id]
    assert summary["health"]["check"]["suspect"] is True

    table = await ego_async("health", site_id, "--no-json", env=env)
    assert table.returncode == 0, table
    [header, line] = table.stdout.strip().splitlines()
    assert header.split()[:4] == ["TOOL", "VERSION", "HASH", "RUNS"]
    assert line.split()[:7] == [f"{site_id}/check", "current", line.split()[2], "5", "2", "3", "0"]
    assert "SUSPECT" in line
    # Each SUSPECT a person reads names what to run about it.
    assert line.endswith(f"`ego heal {site_id} check` finds why"), line
    assert f"`ego heal {site_id} check` finds why" in sites.stdout
    assert f"`ego heal {site_id} check` finds why" in tools.stdout
    as_json = await ego_async("health", f"{site_id}/check", "--json", env=env)
    [row] = as_json.json()
    assert row["health"]["failure_kinds"] == {"SKILL_BROKEN": 3}
    assert [run["outcome"] for run in row["recent"]][:3] == ["SKILL_BROKEN"] * 3
    unknown = await ego_async("health", f"{site_id}/nope", env=env)
    assert unknown.returncode == 3
    assert "declares no tool 'nope'" in unknown.error_line()


#: A tool that asks its site's server, as the demo shop's tools do.
ASKS_THE_SERVER = """async () => {
  const response = await fetch('/health-api');
  return await response.json();
}
"""


class StoppingServer(ThreadingHTTPServer):
    """A site's server that stops as a process does: :meth:`stop` also ends every connection
    it accepted, so a kept-alive one cannot answer after it (``shutdown`` alone leaves them)."""

    daemon_threads = True
    PAGES: ClassVar[dict[str, tuple[str, bytes]]] = {
        "/health-page": ("text/html", b"<!doctype html><title>shop</title>"),
        "/health-api": ("application/json", b'{"items": 2}'),
    }

    def __init__(self) -> None:
        pages = self.PAGES

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                kind, body = pages.get(self.path, ("text/plain", b"not found"))
                self.send_response(200 if self.path in pages else 404)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        super().__init__(("127.0.0.1", 0), Handler)
        self.accepted: list[socket.socket] = []
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def get_request(self) -> tuple[socket.socket, Any]:
        connection, address = super().get_request()
        self.accepted.append(connection)
        return connection, address

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{path}"

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
        for connection in self.accepted:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)


async def test_a_site_whose_server_stopped_is_unreachable_never_suspect(
    browser: ego.Browser, tmp_path: Path, store: Path
) -> None:
    site_id = f"stopped-{uuid.uuid4().hex[:8]}"
    own = StoppingServer()  # the site's own server, stopped halfway
    port = own.server_address[1]
    start = own.url("/health-page")
    workspace = tmp_path / "ws"
    make_site(
        workspace / "learnings",
        site_id,
        domains=[f"127.0.0.1:{port}"],
        start_url=start,
        browser_tools={"cart": tool(ASKS_THE_SERVER, description="The cart")},
    )
    site = Site(browser, Learnings(workspace=workspace, project=tmp_path / "no-project"))
    try:
        assert await site.run_tool(site_id, "cart") == {"items": 2}
    finally:
        own.stop()
    # In the tab it opened: the tool's fetch finds no server (TypeError: Failed to fetch).
    with pytest.raises(SiteUnreachableError) as in_tab:
        await site.run_tool(site_id, "cart")
    assert in_tab.value.reason == "net::ERR_CONNECTION_REFUSED"
    assert in_tab.value.url == own.url("/health-api")
    assert f"{site_id}/cart could not reach the site: GET {own.url('/health-api')}" in str(
        in_tab.value
    )
    await close_tabs(browser, f"127.0.0.1:{port}")
    # Without a tab: the start URL does not load.
    for _ in range(2):
        with pytest.raises(SiteUnreachableError) as opening:
            await site.run_tool(site_id, "cart")
        assert opening.value.url == start
        assert "is unreachable: navigation to" in str(opening.value)
    assert [t for t in await browser.tabs() if f":{port}/" in t.url] == []

    context = await site.learn_context(start, detail="full")
    [info] = context.tools
    assert info.health is not None
    assert (info.health.runs, info.health.ok, info.health.site_failures) == (1, 1, 3)
    assert not info.health.suspect
    assert info.health.unreachable
    compact = (await site.learn_context(start)).text()
    assert "cart() read, site unreachable: The cart" in compact


async def test_an_image_that_finds_no_server_leaves_a_throwing_tool_its_own_error(
    browser: ego.Browser, tmp_path: Path
) -> None:
    """Only the tool's own fetch or XHR can say the site is down: an image (or a favicon) the
    page fails to load meanwhile does not turn the tool's exception into one."""
    own = StoppingServer()
    try:
        site_id = f"image-{uuid.uuid4().hex[:8]}"
        nowhere = f"http://127.0.0.1:{free_port()}/picture.png"
        loads_then_throws = f"""async () => {{
  const seen = new Promise((resolve) => {{
    const image = new Image();
    image.onerror = resolve;
    image.onload = resolve;
    image.src = {json.dumps(nowhere)};
  }});
  await seen;
  throw new Error('the tool broke on its own');
}}
"""
        workspace = tmp_path / "ws"
        make_site(
            workspace / "learnings",
            site_id,
            domains=[f"127.0.0.1:{own.server_address[1]}"],
            start_url=own.url("/health-page"),
            browser_tools={"broken": tool(loads_then_throws, description="Broken")},
        )
        site = Site(browser, Learnings(workspace=workspace, project=tmp_path / "no-project"))
        with pytest.raises(BrowserToolError) as raised:
            await site.run_tool(site_id, "broken")
        assert not isinstance(raised.value, SiteUnreachableError)
        assert "the tool broke on its own" in str(raised.value)
        await close_tabs(browser, f"127.0.0.1:{own.server_address[1]}")
    finally:
        own.stop()
