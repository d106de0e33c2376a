"""Everyday tasks on real component libraries from npm, in ego and in Playwright for Python.

Installs pinned versions of two web-component design systems (Shoelace, Ionic), a code
editor (CodeMirror 6), an API console (Swagger UI) and a worker-based PDF viewer (pdf.js)
with npm into ``bench/.npm/real-libraries`` (ignored by git; the test suite needs no npm),
serves a page for each from a thread on 127.0.0.1 (``_real_libs_site.py``) and runs 20
everyday tasks on them (``_real_libs_tasks.py``): open a menu and choose an item, toggle a
switch, check a checkbox in a shadow root, select a tab by its name, fill a field inside a
component and submit, confirm in a dialog, pick a radio, type into the code editor and read
it back, press a key combination in it, try an API operation and read its answer, render a
PDF and read its first line, page through pdf.js's viewer. Then 8 gestures
(``_real_libs_gesture_tasks.py`` on ``_real_libs_gesture_pages.py``): drag an item of a
SortableJS list below another and a card to another list (HTML5 drag and drop), reach row
750 of AG Grid Community's virtualized 1,000 and click it, double-click a grid cell and
rename it, replace the text of TinyMCE's iframe editor and make it bold by a chord and the
toolbar, pan a Leaflet map by dragging and zoom it with the wheel (``--gestures`` runs only
these).

Each task runs twice, with the code a newcomer writes from ego's README.md and docs
(``tab.click``, ``tab.type``, ``tab.check``, ``tab.press``, ``tab.wait_for``, CSS selectors
and refs from ``tab.snapshot(find=...)``) and with Playwright's own idiomatic code
(``get_by_role``, ``get_by_label``, ``fill``, ``check``), each on a fresh tab of its own
browser, both on the same Chromium binary, the two taking turns task by task. After each
run the page's state is read by an evaluate in the page (polled for a few seconds); a task
that reads something is also judged by what it read, and the API tasks by the request the
server received. The table gives ok or FAIL for each (with ``--runs N``, how many of the N
runs completed it: a task counts only when all did), the counts, and where both completed it
the median time of the task's code (from the page's load event to the end of its last
action) and Playwright's over ego's; below it, why each failed run failed. Per-action times
on a settled page are ``bench_actions.py``'s.

Run from the project root (npm and the npm registry the first time; Playwright from
``pip install -e '.[bench]'``, no browser download)::

    .venv/bin/python bench/real_libraries.py
    .venv/bin/python bench/real_libraries.py --runs 3 --only shoelace --json /tmp/real-libs.json
    .venv/bin/python bench/real_libraries.py --gestures --runs 3

Exits 0 when ego completed every task, 1 when it did not, 2 when the packages cannot be
installed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _common import ChromeTracker, chrome_args_for_playwright, environment
from _real_libs_gesture_tasks import GESTURE_TASKS
from _real_libs_site import Site, install
from _real_libs_tasks import TASKS, Task

import ego

ROOT = Path(__file__).resolve().parent.parent
#: A task's code and its check each end within this, whatever the code waits for.
TASK_BOUND = 45.0
#: How long the check waits for the page to show the task done.
SETTLE_MS = 5000

CHECK = """(async () => {
  const end = Date.now() + %d;
  for (;;) {
    let value;
    try { value = await (%s); } catch (error) { value = 'the check threw ' + error; }
    if (value === true || Date.now() > end) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
})()"""


@dataclass
class Outcome:
    """How one contender did on one task."""

    ok: bool = False
    reason: str = ""
    seconds: float | None = None
    read: Any = None


@dataclass
class Row:
    """A task and every run of it, by contender."""

    task: Task
    runs: dict[str, list[Outcome]] = field(default_factory=dict)

    def done(self, name: str) -> bool:
        """Whether every run of ``name`` completed the task."""
        return all(outcome.ok for outcome in self.runs[name])

    def seconds(self, name: str) -> float:
        """The median time of ``name``'s runs (all of them completed)."""
        return statistics.median(outcome.seconds or 0.0 for outcome in self.runs[name])

    def mark(self, name: str) -> str:
        outcomes = self.runs[name]
        passed = sum(outcome.ok for outcome in outcomes)
        if len(outcomes) == 1:
            return "ok" if passed else "FAIL"
        return "ok" if passed == len(outcomes) else f"{passed}/{len(outcomes)}"


def _squeeze(text: str) -> str:
    return "".join(str(text).split())


def _reason(exc: BaseException) -> str:
    message = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {message}"[:300]


def judge(task: Task, read: Any, state: Any, calls: list[tuple[str, str, str]]) -> str:
    """What is wrong with the page's state, the value read and the server's calls ("": the
    task was done)."""
    if state is not True:
        return f"the page's state: {state}"
    if task.read is not None and _squeeze(task.read) not in _squeeze(read or ""):
        return f"read {str(read)[:120]!r}, which lacks {task.read!r}"
    if task.api_call is not None:
        method, path, body = task.api_call
        for seen in calls:
            if seen[:2] == (method, path) and (not body or _same_json(seen[2], body)):
                return ""
        return f"the server got no {method} {path} {body} (it got {calls})"
    return ""


def _same_json(one: str, other: str) -> bool:
    try:
        return bool(json.loads(one) == json.loads(other))
    except ValueError:
        return False


async def attempt(
    task: Task,
    site: Site,
    load: Callable[[], Awaitable[Any]],
    code: Callable[[], Awaitable[Any]],
    evaluate: Callable[[str], Awaitable[Any]],
) -> Outcome:
    """Load the task's page, run one contender's code for it (timed), then judge the page."""
    try:
        await asyncio.wait_for(load(), TASK_BOUND)
    except Exception as exc:
        return Outcome(reason=f"the page did not load: {_reason(exc)}")
    calls = len(site.api_calls)
    started = time.perf_counter()
    try:
        read = await asyncio.wait_for(code(), TASK_BOUND)
    except Exception as exc:
        return Outcome(reason=_reason(exc))
    seconds = time.perf_counter() - started
    try:
        state = await asyncio.wait_for(evaluate(CHECK % (SETTLE_MS, task.check)), TASK_BOUND)
    except Exception as exc:
        state = f"the check could not run: {_reason(exc)}"
    reason = judge(task, read, state, site.api_calls[calls:])
    return Outcome(ok=not reason, reason=reason, seconds=seconds, read=read)


async def run_ego(browser: ego.Browser, site: Site, task: Task) -> Outcome:
    tab = await browser.new_tab()
    try:
        url = site.origin + task.page
        return await attempt(
            task, site, lambda: tab.navigate(url), lambda: task.ego(tab), tab.evaluate
        )
    finally:
        with contextlib.suppress(ego.EgoError):
            await tab.close()


async def run_playwright(context: Any, site: Site, task: Task) -> Outcome:
    page = await context.new_page()
    page.set_default_timeout(10_000)
    try:
        url = site.origin + task.page
        return await attempt(
            task, site, lambda: page.goto(url), lambda: task.playwright(page), page.evaluate
        )
    finally:
        await page.close()


async def make_pdfs(browser: ego.Browser, site: Site) -> None:
    """The viewer's one-page PDF (``real_pages_workers.py``'s) and the pager's two pages,
    printed by Chrome."""
    tab = await browser.new_tab()
    try:
        for page, pdf in (("/source", "/doc.pdf"), ("/two-pages", "/two-pages.pdf")):
            await tab.navigate(site.origin + page)
            site.pdfs[pdf] = await tab.pdf()
    finally:
        await tab.close()


async def run(options: argparse.Namespace, tracker: ChromeTracker) -> list[Row]:
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        raise SystemExit("playwright is missing: .venv/bin/pip install -e '.[bench]'") from None
    chosen = GESTURE_TASKS if options.gestures else [*TASKS, *GESTURE_TASKS]
    tasks = [task for task in chosen if not options.only or options.only in task.name]
    rows = [Row(task) for task in tasks]
    with Site(options.npm_dir) as site:
        async with contextlib.AsyncExitStack() as stack:
            browser = await stack.enter_async_context(ego.launch(executable=options.chrome))
            tracker.note_ego(browser)
            await make_pdfs(browser, site)
            pw = await stack.enter_async_context(async_playwright())
            pw_browser = await pw.chromium.launch(
                executable_path=options.chrome, headless=True, args=chrome_args_for_playwright()
            )
            stack.push_async_callback(pw_browser.close)
            tracker.note_playwright()
            context = await pw_browser.new_context()
            for index, row in enumerate(rows):
                row.runs = {"ego": [], "playwright": []}
                for turn in range(options.runs):
                    first = (index + turn) % 2 == 0
                    for name in ["ego", "playwright"] if first else ["playwright", "ego"]:
                        if name == "ego":
                            outcome = await run_ego(browser, site, row.task)
                        else:
                            outcome = await run_playwright(context, site, row.task)
                        row.runs[name].append(outcome)
                print(_line(row), flush=True)
    return rows


def _line(row: Row) -> str:
    times = ""
    if row.done("ego") and row.done("playwright"):
        ego_s, pw_s = row.seconds("ego"), row.seconds("playwright")
        times = f"{ego_s:8.3f} {pw_s:8.3f} {pw_s / ego_s:7.2f}"
    return f"{row.task.name:44} {row.mark('ego'):5} {row.mark('playwright'):5} {times}"


def report(rows: list[Row], runs: int) -> str:
    each = "" if runs == 1 else f" ({runs} runs each; a task counts when every run completed it)"
    lines = [
        f"{'task':44} {'ego':5} {'pw':5} {'ego s':>8} {'pw s':>8} {'pw/ego':>7}",
        *(_line(row) for row in rows),
        "",
    ]
    gestures = [row for row in rows if row.task in GESTURE_TASKS]
    for name in ("ego", "playwright"):
        done = sum(1 for row in rows if row.done(name))
        line = f"{name}: {done}/{len(rows)} tasks completed{each}"
        if gestures and len(gestures) < len(rows):
            line += f"; gestures {sum(1 for row in gestures if row.done(name))}/{len(gestures)}"
        lines.append(line)
    ratios = [
        row.seconds("playwright") / row.seconds("ego")
        for row in rows
        if row.done("ego") and row.done("playwright")
    ]
    if ratios:
        lines.append(
            f"where both completed ({len(ratios)} tasks), Playwright's time / ego's: median "
            f"{statistics.median(ratios):.2f} (from {min(ratios):.2f} to {max(ratios):.2f})"
        )
    failures = [
        f"- {row.task.name} [{name}, run {turn + 1}]: {outcome.reason}"
        for row in rows
        for name in ("ego", "playwright")
        for turn, outcome in enumerate(row.runs[name])
        if not outcome.ok
    ]
    if failures:
        lines += ["", "why each failure failed:", *failures]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--npm-dir", type=Path, default=ROOT / "bench" / ".npm" / "real-libraries")
    parser.add_argument("--chrome", default=None, help="the binary both use (ego's choice)")
    parser.add_argument("--runs", type=int, default=1, help="runs of each task per contender")
    parser.add_argument("--only", default="", help="run the tasks whose name holds this")
    parser.add_argument("--gestures", action="store_true", help="run only the gesture tasks")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    options = parser.parse_args()
    options.chrome = options.chrome or ego.find_chrome()
    versions = install(options.npm_dir)
    print("packages:", ", ".join(f"{name} {v}" for name, v in versions.items()))
    print(f"Chromium: {options.chrome}; ego {ego.__version__}", flush=True)
    tracker = ChromeTracker()
    try:
        rows = asyncio.run(run(options, tracker))
    finally:
        leftovers = tracker.leftovers()
        if leftovers:
            print("WARNING: Chromium processes left behind:", *leftovers, sep="\n  ")
    print()
    print(report(rows, options.runs))
    if options.json is not None:
        results = {
            "environment": environment(options.chrome),
            "packages": versions,
            "tasks": [
                {
                    "task": row.task.name,
                    **{
                        name: [
                            {"ok": run.ok, "reason": run.reason, "seconds": run.seconds}
                            for run in outcomes
                        ]
                        for name, outcomes in row.runs.items()
                    },
                }
                for row in rows
            ],
        }
        options.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0 if all(row.done("ego") for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
