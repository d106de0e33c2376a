"""Section 3 of ``bench_tools.py``: what a hot call costs step by step on this machine.

The steps against the browser (the raw loop sending the plain wrap and the hot Call, ego's
``Tab.evaluate`` of the hot Call, the hot and the uncached ``run_browser_tool``) take turns as
in section 1; then the Python steps of a hot call run in a tight loop without a browser, and
the whole ``run_browser_tool`` against a stub tab gives the Site layer's Python cost per call,
with its run recorded (as every call's is) and, taking turns with it, not recorded.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import time
from collections.abc import Callable
from typing import Any, cast

from _common import latency_stats, spread
from _tools_contenders import Bench, CallWith, Entry, check, run_rounds
from _tools_site import SITE_ID, TOOLS

import ego
from ego.learning.catalog.manifest import BrowserToolSpec
from ego.learning.health.origin import unrecorded

__all__ = ["SITE_LAYER_STEP", "StubTab", "python_overhead_us", "report_lines", "run_breakdown"]

STUB_ROUNDS = 5  # rounds of the stub-tab timing; the median round is the Site layer's cost
SITE_LAYER_STEP = "all of run_browser_tool, stub tab"


class StubTab:
    """Stands in for a tab: answers every evaluate at once, as a hot Call would (n + 1)."""

    def __init__(self, url: str) -> None:
        self.answer = 0
        # On the site's domains, as the tool's tab must be.
        self.url = url
        # A tab whose document never changes: after the first call, run_browser_tool sends
        # the hot Call, as it does to a real tab that already ran the tool.
        self.document_memo: dict[str, Any] = {}

    async def evaluate(
        self, expression: str, *, timeout: float | None = None, describe: bool = True
    ) -> Any:
        return self.answer


async def python_overhead_us(bench: Bench, kind: str, count: int) -> dict[str, float]:
    """The Python work of one hot call without the browser: median µs of each step.

    The last line runs the whole ``run_browser_tool`` against :class:`StubTab`: everything
    ego does for a hot call except the CDP round trip.
    """
    site, tool = bench.site, TOOLS[kind]
    learnings = site.learnings
    _, spec = learnings.tool(SITE_ID, tool)
    assert isinstance(spec, BrowserToolSpec)
    stub = StubTab(learnings.site(SITE_ID).start_url or "")
    steps: dict[str, Callable[[int], object]] = {
        "learnings.tool (site + manifest lookup)": lambda n: learnings.tool(SITE_ID, tool),
        "check_args (JSON Schema)": lambda n: learnings.check_args(SITE_ID, spec, {"n": n}),
        "browser_source (path checks, stat)": lambda n: learnings.browser_source(SITE_ID, spec),
        "embed_json + hot_snippet": lambda n: bench.hot_call(kind, n),
        "wrap (plain, what raw builds)": lambda n: bench.wrapped(kind, n),
    }
    out: dict[str, float] = {}
    clock = time.perf_counter_ns
    for name, step in steps.items():
        samples = []
        for n in range(count):
            start = clock()
            step(n)
            samples.append(clock() - start)
        out[name] = latency_stats(samples)["median_us"]

    async def stub_round(recorded: bool) -> float:
        gc.collect()
        samples = []
        with contextlib.nullcontext() if recorded else unrecorded():
            for n in range(count):
                stub.answer = n + 1
                start = clock()
                value = await site.run_browser_tool(
                    SITE_ID, tool, {"n": n}, tab=cast(ego.Tab, stub)
                )
                samples.append(clock() - start)
                if value != n + 1 or site.last_run is None or site.last_run.mode != "cached":
                    raise SystemExit(f"run_browser_tool on a stub tab: {value!r}, {site.last_run}")
        return latency_stats(samples)["median_us"]

    # Recorded (as every call is) and not recorded take turns, which goes first alternating:
    # the difference is what recording the run costs the call.
    medians: dict[bool, list[float]] = {True: [], False: []}
    for index in range(STUB_ROUNDS):
        for recorded in (True, False) if index % 2 == 0 else (False, True):
            medians[recorded].append(await stub_round(recorded))
    rounds = spread(medians[True])
    out[SITE_LAYER_STEP] = rounds["median"]
    out[SITE_LAYER_STEP + " (fastest round)"] = rounds["min"]
    out[SITE_LAYER_STEP + " (slowest round)"] = rounds["max"]
    out[SITE_LAYER_STEP + ", run not recorded"] = spread(medians[False])["median"]
    return out


#: The steps against the browser; the differences between them are derived below.
RAW_PLAIN = "raw: plain wrap"
RAW_HOT = "raw: hot Call"
EGO_EVAL_HOT = "ego Tab.evaluate: hot Call"
EGO_HOT = "ego run_browser_tool (hot)"
EGO_PLAIN = "ego run_browser_tool cache=False"


async def run_breakdown(bench: Bench, calls: int, warmup: int, rounds: int) -> dict[str, Any]:
    """The section's figures: ``calls`` calls per step and tool in ``rounds`` rounds."""
    step_calls: dict[str, CallWith] = {
        RAW_PLAIN: bench.raw_call,
        RAW_HOT: bench.raw_snippet,
        EGO_EVAL_HOT: bench.ego_evaluate_snippet,
        EGO_HOT: bench.ego_hot,
        EGO_PLAIN: bench.ego_plain,
    }
    for kind in TOOLS:
        await check(bench, kind, step_calls)
    steps = [
        Entry(kind, name, functools.partial(call, kind))
        for kind in TOOLS
        for name, call in step_calls.items()
    ]
    await run_rounds(steps, calls, warmup, rounds)
    breakdown = {kind: {e.contender: e.stats() for e in steps if e.tool == kind} for kind in TOOLS}
    return {
        "breakdown_calls": calls,
        "breakdown": breakdown,
        "breakdown_diffs": {
            kind: {
                "site_layer_us": of[EGO_HOT]["median_us"] - of[EGO_EVAL_HOT]["median_us"],
                "site_layer_cpu_us": of[EGO_HOT]["python_cpu_median_us"]
                - of[EGO_EVAL_HOT]["python_cpu_median_us"],
                "snippet_over_plain_us": of[RAW_HOT]["median_us"] - of[RAW_PLAIN]["median_us"],
            }
            for kind, of in breakdown.items()
        },
        "python_overhead_us": {kind: await python_overhead_us(bench, kind, 2000) for kind in TOOLS},
    }


def report_lines(results: dict[str, Any], short: dict[str, str]) -> list[str]:
    """The section's lines for the report; ``short`` names each tool in a column head."""
    breakdown, python = results["breakdown"], results["python_overhead_us"]
    lines = [
        f"3. Breakdown of a call: {results['breakdown_calls']} calls per step and tool, taking "
        "turns as in 1",
        f"   {'step':<38}"
        + "".join(f"{short[kind] + ' median':>15}{'py cpu':>8}" for kind in breakdown),
    ]
    for name in next(iter(breakdown.values())):
        lines.append(
            f"   {name:<38}"
            + "".join(
                f"{breakdown[kind][name]['median_us']:>15.0f}"
                f"{breakdown[kind][name]['python_cpu_median_us']:>8.0f}"
                for kind in breakdown
            )
        )
    lines.append(
        f"   {'Python steps of a hot call, no browser':<38}"
        + "".join(f"{short[kind] + ' median':>15}{'':>8}" for kind in python)
    )
    for step in next(iter(python.values())):
        lines.append(
            f"   {step:<38}" + "".join(f"{python[kind][step]:>15.1f}{'':>8}" for kind in python)
        )
    for kind in breakdown:
        diffs = results["breakdown_diffs"][kind]
        lines.append(
            f"   {short[kind]}: Site layer (hot run_browser_tool - Tab.evaluate of the hot "
            f"Call) {diffs['site_layer_us']:+.0f} us, {diffs['site_layer_cpu_us']:+.0f} us CPU; "
            f"hot Call in the page (raw hot Call - raw plain wrap) "
            f"{diffs['snippet_over_plain_us']:+.0f} us"
        )
    return lines
