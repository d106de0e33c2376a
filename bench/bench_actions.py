"""Benchmark ego's click and type against Playwright's on a settled page, in one run.

Run from the project root (Playwright from ``pip install -e '.[bench]'``; it runs the same
Chromium binary as ego, through ``executable_path``, so no browser is downloaded)::

    .venv/bin/python bench/bench_actions.py [--rounds R] [--per-round N] [--json PATH]

Both act as a user does, with their checks before each action (visible, enabled, stable
over animation frames, on top at its point) and real input after them:

* click: ``tab.click("#go")`` against Playwright's ``page.click("#go")``;
* type: ``tab.type("#field", text)`` against Playwright's ``page.fill("#field", text)``
  (both replace the field's text; Playwright's ``fill`` is its fast way to enter text).

Each contender has its own Chrome and its own copy of the page, served from a thread of
this script on 127.0.0.1. The contenders run in interleaved rounds (the order alternates
every round) so that machine noise hits both alike; every action is checked to have
happened (the page counts clicks and reports the field's value). The target: ego at least
1.5 times faster per action, by median. Every Chrome started here is ended in a
``finally`` and the script checks that none is left when it exits.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from _common import (
    ChromeTracker,
    PageServer,
    chrome_args_for_playwright,
    environment,
    latency_stats,
    run_benchmark,
    verdict,
)

import ego

#: ego's median time per action at most this fraction of Playwright's.
TARGET_PW_OVER_EGO = 1.5

FORM = """<!doctype html><html><head><meta charset="utf-8"><title>actions</title></head><body>
<p>ego action bench</p>
<button id="go" onclick="window.clicks = (window.clicks || 0) + 1">Go</button>
<input id="field" value="old">
</body></html>"""

TEXT = "hello world"
Action = Callable[[], Awaitable[Any]]


async def timed(action: Action, count: int, into: list[int]) -> None:
    clock = time.perf_counter_ns
    for _ in range(count):
        start = clock()
        await action()
        into.append(clock() - start)


async def benchmark(args: argparse.Namespace, tracker: ChromeTracker) -> dict[str, Any]:
    chrome = ego.find_chrome()
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        raise SystemExit("playwright is missing: .venv/bin/pip install -e '.[bench]'") from None
    times: dict[str, dict[str, list[int]]] = {
        name: {"click": [], "type": []} for name in ("ego", "playwright")
    }
    with PageServer() as server:
        async with contextlib.AsyncExitStack() as stack:
            browser = await stack.enter_async_context(ego.launch())
            tracker.note_ego(browser)
            tab = await browser.new_tab()
            await tab.navigate(server.url)
            await tab.evaluate(f"document.open(); document.write({FORM!r}); document.close()")

            pw = await stack.enter_async_context(async_playwright())
            pw_browser = await pw.chromium.launch(
                executable_path=chrome, headless=True, args=chrome_args_for_playwright()
            )
            stack.push_async_callback(pw_browser.close)
            tracker.note_playwright()
            page = await pw_browser.new_page()
            await page.goto(server.url)
            await page.evaluate(f"document.open(); document.write({FORM!r}); document.close()")

            actions: dict[str, dict[str, Action]] = {
                "ego": {
                    "click": lambda: tab.click("#go"),
                    "type": lambda: tab.type("#field", TEXT),
                },
                "playwright": {
                    "click": lambda: page.click("#go"),
                    "type": lambda: page.fill("#field", TEXT),
                },
            }
            # Warm both up (scripts compiled, pages settled) outside the figures.
            for name in actions:
                for action in actions[name].values():
                    for _ in range(5):
                        await action()
            for round_ in range(args.rounds):
                order = ["ego", "playwright"] if round_ % 2 == 0 else ["playwright", "ego"]
                for kind in ("click", "type"):
                    for name in order:
                        await timed(actions[name][kind], args.per_round, times[name][kind])
            done = {
                "ego": await tab.evaluate("[window.clicks, field.value]"),
                "playwright": await page.evaluate("[window.clicks, field.value]"),
            }
    expected_clicks = 5 + args.rounds * args.per_round
    for name, (clicks, value) in done.items():
        if clicks != expected_clicks or value != TEXT:
            raise SystemExit(f"{name}: the actions did not all happen: {clicks} clicks, {value!r}")
    return {
        "environment": environment(chrome),
        "rounds": args.rounds,
        "per_round": args.per_round,
        "actions": {
            name: {kind: latency_stats(values) for kind, values in kinds.items()}
            for name, kinds in times.items()
        },
    }


def add_ratios_and_targets(results: dict[str, Any]) -> None:
    actions = results["actions"]
    results["ratios"] = {
        f"playwright_over_ego_{kind}": actions["playwright"][kind]["median_us"]
        / actions["ego"][kind]["median_us"]
        for kind in ("click", "type")
    }
    results["targets"] = {
        f"{kind}: playwright/ego median >= {TARGET_PW_OVER_EGO}": results["ratios"][
            f"playwright_over_ego_{kind}"
        ]
        >= TARGET_PW_OVER_EGO
        for kind in ("click", "type")
    }


def report(results: dict[str, Any]) -> str:
    lines = [
        f"actions on a settled page, {results['rounds']} interleaved rounds of "
        f"{results['per_round']} per contender and action",
        f"{'':12}{'median ms':>12}{'p99 ms':>10}{'min ms':>10}",
    ]
    for name, kinds in results["actions"].items():
        for kind, stats in kinds.items():
            lines.append(
                f"{name + ' ' + kind:12}{stats['median_us'] / 1000:12.2f}"
                f"{stats['p99_us'] / 1000:10.2f}{stats['min_us'] / 1000:10.2f}"
            )
    for kind in ("click", "type"):
        ratio = results["ratios"][f"playwright_over_ego_{kind}"]
        lines.append(
            f"{kind}: Playwright / ego median = {ratio:.2f} "
            f"(target >= {TARGET_PW_OVER_EGO}: {verdict(ratio >= TARGET_PW_OVER_EGO)})"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10, help="interleaved rounds")
    parser.add_argument("--per-round", type=int, default=20, help="actions per round each")
    parser.add_argument("--json", type=Path, default=None, help="also write results here")
    args = parser.parse_args()
    return run_benchmark(args, benchmark, add_ratios_and_targets, report)


if __name__ == "__main__":
    sys.exit(main())
