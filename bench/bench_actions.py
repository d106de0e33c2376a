"""Benchmark ego's actions against Playwright's same actions on a settled page, in one run.

Run from the project root (Playwright from ``pip install -e '.[bench]'``; it runs the same
Chromium binary as ego, through ``executable_path``, so no browser is downloaded)::

    .venv/bin/python bench/bench_actions.py [--rounds R] [--per-round N] [--only KIND]
        [--json PATH]

Both act as a user does, with their checks before each action (visible, enabled, stable
over animation frames, on top at its point) and real input after them. Each kind of action,
ego's call against Playwright's:

* click: ``tab.click("#go")`` / ``page.click("#go")``;
* type: ``tab.type("#field", text)`` / ``page.fill("#field", text)`` (both replace the
  field's text; ``fill`` is Playwright's fast way to enter text);
* dblclick: ``tab.dblclick("#go")`` / ``page.dblclick("#go")``;
* right click: ``tab.click("#go", button="right")`` / ``page.click(..., button="right")``;
* text click: ``tab.click("text=Go")`` / ``page.get_by_text("Go").click()``;
* label type: ``tab.type("label=Name", text)`` / ``page.get_by_label("Name").fill(text)``;
* drag html5: a card between two lists by HTML5 drag and drop, ``tab.drag_to`` /
  ``page.drag_and_drop``, both in ego's default 5 steps (each step a mouse move, which
  Chrome answers on the next frame: the same moves cost both the same frames);
* drag pointer: a surface panned by pointer moves, the same two with positions, 5 steps;
* wheel: ``tab.mouse.wheel(0, 120)`` / ``page.mouse.wheel(0, 120)`` over a box with a
  ``wheel`` listener (both return once the page's handlers ran);
* scroll into view: ``tab.scroll_into_view`` / ``locator.scroll_into_view_if_needed``,
  between two far elements;
* scroll: ``tab.scroll("#box", dy=120)`` / an evaluate of ``scrollBy`` and two frames
  (Playwright has no scroll verb);
* keyboard type: ``tab.keyboard.type(text)`` / ``page.keyboard.type(text)`` at the focus;
* press chord: ``tab.press("Control+A")`` / ``page.keyboard.press("Control+A")``;
* wait function: ``tab.wait_for(function=...)`` / ``page.wait_for_function(...)`` of a
  predicate already true.

Each contender has its own Chrome and its own copy of the page, served from a thread of
this script on 127.0.0.1. The contenders run in interleaved rounds (the order alternates
every round) so that machine noise hits both alike; every action is checked to have
happened (the page counts what it saw). The target: ego at least 1.5 times faster per
action, by median. Every Chrome started here is ended in a ``finally`` and the script checks
that none is left when it exits.
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
from ego.page.drag import DRAG_STEPS

#: ego's median time per action at most this fraction of Playwright's.
TARGET_PW_OVER_EGO = 1.5

FORM = """<!doctype html><html><head><meta charset="utf-8"><title>actions</title>
<style>.list { width: 200px; min-height: 60px; background: #eee; margin: 4px; }
#pan { width: 240px; height: 120px; background: #cde; touch-action: none; }
#box { width: 200px; height: 100px; overflow: auto; }</style></head><body>
<p>ego action bench</p>
<button id="go">Go</button>
<input id="field" value="old"> <label>Name <input id="name"></label>
<input id="keys">
<div class="list" id="left"><p draggable="true" id="card">Card</p></div>
<div class="list" id="right"></div>
<div id="pan"></div>
<div id="box"><div style="height: 100000px">scroll me</div></div>
<p id="top-mark">top</p><div style="height: 3000px"></div><p id="far-mark">far</p>
<script>
window.seen = {click: 0, dblclick: 0, contextmenu: 0, drop: 0, pan: 0, wheel: 0};
go.addEventListener('click', () => seen.click++);
go.addEventListener('dblclick', () => seen.dblclick++);
go.addEventListener('contextmenu', (e) => { e.preventDefault(); seen.contextmenu++; });
card.addEventListener('dragstart', (e) => e.dataTransfer.setData('text/plain', 'card'));
for (const list of [left, right]) {
  list.addEventListener('dragover', (e) => e.preventDefault());
  list.addEventListener('drop', (e) => { e.preventDefault(); list.append(card); seen.drop++; });
}
let from = null;
pan.addEventListener('pointerdown', (e) => {
  from = e.clientX;
  pan.setPointerCapture(e.pointerId);
});
pan.addEventListener('pointerup', (e) => {
  if (from !== null && e.clientX !== from) seen.pan++;
  from = null;
});
box.addEventListener('wheel', () => seen.wheel++);
</script></body></html>"""

TEXT = "hello world"
#: The steps of a drag, ego's default, given to both.
STEPS = DRAG_STEPS
Action = Callable[[], Awaitable[Any]]
KINDS = (
    "click", "type", "dblclick", "right click", "text click", "label type", "drag html5",
    "drag pointer", "wheel", "scroll into view", "scroll", "keyboard type", "press chord",
    "wait function",
)  # fmt: skip

_SCROLL_BY = (
    "async (box, dy) => { box.scrollBy(0, dy);"
    " await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))); }"
)


async def timed(action: Action, count: int, into: list[int]) -> None:
    clock = time.perf_counter_ns
    for _ in range(count):
        start = clock()
        await action()
        into.append(clock() - start)


def toggler(first: Action, second: Action) -> Action:
    """An action that does ``first`` and ``second`` by turns (a drag there and back)."""
    turn = [0]

    async def act() -> Any:
        turn[0] += 1
        return await (first() if turn[0] % 2 else second())

    return act


def ego_actions(tab: ego.Tab) -> dict[str, Action]:
    return {
        "click": lambda: tab.click("#go"),
        "type": lambda: tab.type("#field", TEXT),
        "dblclick": lambda: tab.dblclick("#go"),
        "right click": lambda: tab.click("#go", button="right"),
        "text click": lambda: tab.click('text="Go"'),
        "label type": lambda: tab.type("label=Name", TEXT),
        "drag html5": toggler(
            lambda: tab.drag_to("#card", "#right"), lambda: tab.drag_to("#card", "#left")
        ),
        "drag pointer": lambda: tab.drag_to(
            "#pan", "#pan", source_position={"x": 60, "y": 60}, target_position={"x": 160, "y": 60}
        ),
        "wheel": toggler(lambda: tab.mouse.wheel(0, 120), lambda: tab.mouse.wheel(0, -120)),
        "scroll into view": toggler(
            lambda: tab.scroll_into_view("#far-mark"), lambda: tab.scroll_into_view("#top-mark")
        ),
        "scroll": toggler(lambda: tab.scroll("#box", dy=120), lambda: tab.scroll("#box", dy=-120)),
        "keyboard type": lambda: tab.keyboard.type(TEXT),
        "press chord": lambda: tab.press("Control+A"),
        "wait function": lambda: tab.wait_for(function="() => document.readyState === 'complete'"),
    }


def playwright_actions(page: Any) -> dict[str, Action]:
    box = page.locator("#box")

    return {
        "click": lambda: page.click("#go"),
        "type": lambda: page.fill("#field", TEXT),
        "dblclick": lambda: page.dblclick("#go"),
        "right click": lambda: page.click("#go", button="right"),
        "text click": lambda: page.get_by_text("Go", exact=True).click(),
        "label type": lambda: page.get_by_label("Name").fill(TEXT),
        "drag html5": toggler(
            lambda: page.drag_and_drop("#card", "#right", steps=STEPS),
            lambda: page.drag_and_drop("#card", "#left", steps=STEPS),
        ),
        "drag pointer": lambda: page.drag_and_drop(
            "#pan",
            "#pan",
            source_position={"x": 60, "y": 60},
            target_position={"x": 160, "y": 60},
            steps=STEPS,
        ),
        "wheel": toggler(lambda: page.mouse.wheel(0, 120), lambda: page.mouse.wheel(0, -120)),
        "scroll into view": toggler(
            lambda: page.locator("#far-mark").scroll_into_view_if_needed(),
            lambda: page.locator("#top-mark").scroll_into_view_if_needed(),
        ),
        "scroll": toggler(
            lambda: box.evaluate(_SCROLL_BY, 120), lambda: box.evaluate(_SCROLL_BY, -120)
        ),
        "keyboard type": lambda: page.keyboard.type(TEXT),
        "press chord": lambda: page.keyboard.press("Control+A"),
        "wait function": lambda: page.wait_for_function("() => document.readyState === 'complete'"),
    }


#: Before each kind, what puts the page in the state its action needs (the focus, the mouse).
PREPARE = {
    "keyboard type": "#keys",
    "press chord": "#keys",
    "wheel": "#box",
}


async def prepare(name: str, kind: str, tab: ego.Tab, page: Any) -> None:
    target = PREPARE.get(kind)
    if target is None:
        return
    if name == "ego":
        await (tab.click(target) if kind != "wheel" else tab.hover(target))
    else:
        await (page.click(target) if kind != "wheel" else page.hover(target))


async def benchmark(args: argparse.Namespace, tracker: ChromeTracker) -> dict[str, Any]:
    chrome = ego.find_chrome()
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        raise SystemExit("playwright is missing: .venv/bin/pip install -e '.[bench]'") from None
    kinds = [kind for kind in KINDS if not args.only or args.only in kind]
    times: dict[str, dict[str, list[int]]] = {
        name: {kind: [] for kind in kinds} for name in ("ego", "playwright")
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

            actions = {"ego": ego_actions(tab), "playwright": playwright_actions(page)}
            # Warm both up (scripts compiled, pages settled) outside the figures.
            for name in actions:
                for kind in kinds:
                    await prepare(name, kind, tab, page)
                    for _ in range(4):
                        await actions[name][kind]()
            for round_ in range(args.rounds):
                order = ["ego", "playwright"] if round_ % 2 == 0 else ["playwright", "ego"]
                for kind in kinds:
                    for name in order:
                        await prepare(name, kind, tab, page)
                        await timed(actions[name][kind], args.per_round, times[name][kind])
            done = {
                "ego": await tab.evaluate(
                    "[seen, field.value, document.getElementById('name').value]"
                ),
                "playwright": await page.evaluate(
                    "[seen, field.value, document.getElementById('name').value]"
                ),
            }
    _check(done, kinds, 4 + args.rounds * args.per_round)
    return {
        "environment": environment(chrome),
        "rounds": args.rounds,
        "per_round": args.per_round,
        "actions": {
            name: {kind: latency_stats(values) for kind, values in by_kind.items()}
            for name, by_kind in times.items()
        },
    }


def _check(done: dict[str, Any], kinds: list[str], count: int) -> None:
    """Every action happened, as the page counted it."""
    counted = {
        "click": ("click", count + ("text click" in kinds) * count),
        "dblclick": ("dblclick", count),
        "right click": ("contextmenu", count),
        "drag html5": ("drop", count),
        "drag pointer": ("pan", count),
        "wheel": ("wheel", count),
    }
    for name, (seen, field, label) in done.items():
        for kind, (key, expected) in counted.items():
            if kind in kinds and seen[key] < expected:
                raise SystemExit(f"{name}: {kind} did not all happen: {seen}")
        if "type" in kinds and field != TEXT:
            raise SystemExit(f"{name}: the field holds {field!r}")
        if "label type" in kinds and label != TEXT:
            raise SystemExit(f"{name}: the labelled field holds {label!r}")


def add_ratios_and_targets(results: dict[str, Any]) -> None:
    actions = results["actions"]
    kinds = list(actions["ego"])
    results["ratios"] = {
        f"playwright_over_ego_{kind}": actions["playwright"][kind]["median_us"]
        / actions["ego"][kind]["median_us"]
        for kind in kinds
    }
    results["targets"] = {
        f"{kind}: playwright/ego median >= {TARGET_PW_OVER_EGO}": results["ratios"][
            f"playwright_over_ego_{kind}"
        ]
        >= TARGET_PW_OVER_EGO
        for kind in kinds
    }


def report(results: dict[str, Any]) -> str:
    lines = [
        f"actions on a settled page, {results['rounds']} interleaved rounds of "
        f"{results['per_round']} per contender and action",
        f"{'':18}{'ego ms':>9}{'pw ms':>9}{'pw/ego':>8}{'ego p99':>9}{'pw p99':>9}",
    ]
    actions = results["actions"]
    for kind in actions["ego"]:
        ego_stats, pw_stats = actions["ego"][kind], actions["playwright"][kind]
        ratio = results["ratios"][f"playwright_over_ego_{kind}"]
        lines.append(
            f"{kind:18}{ego_stats['median_us'] / 1000:9.2f}{pw_stats['median_us'] / 1000:9.2f}"
            f"{ratio:8.2f}{ego_stats['p99_us'] / 1000:9.2f}{pw_stats['p99_us'] / 1000:9.2f}"
            f"  {verdict(ratio >= TARGET_PW_OVER_EGO)}"
        )
    lines.append(f"target: Playwright / ego median >= {TARGET_PW_OVER_EGO} for each")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10, help="interleaved rounds")
    parser.add_argument("--per-round", type=int, default=20, help="actions per round each")
    parser.add_argument("--only", default="", help="run the kinds whose name holds this")
    parser.add_argument("--json", type=Path, default=None, help="also write results here")
    args = parser.parse_args()
    return run_benchmark(args, benchmark, add_ratios_and_targets, report)


if __name__ == "__main__":
    sys.exit(main())
