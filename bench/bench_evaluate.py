"""Benchmark ``Tab.evaluate`` against a raw CDP loop and Playwright, in one run.

Run from the project root::

    .venv/bin/python bench/bench_evaluate.py [--calls N] [--inflight M] [--json PATH]

Three contenders evaluate ``1+1`` on the same tiny page, served from a thread of this script on
127.0.0.1, with the same Chromium binary:

* ``raw``: a minimal websockets + orjson client on its own websocket and its own flattened
  session (``Target.attachToTarget flatten=true``) attached to ego's page;
* ``ego``: ``Tab.evaluate``;
* ``playwright``: Playwright for Python's ``page.evaluate`` (async API) on a Chromium that
  Playwright launched itself from the same binary.

Sections: (1) sequential latency, (2) throughput with M calls in flight, (3) Chrome start to a
usable connection. The contenders run in interleaved rounds (the order rotates every round)
so that machine noise hits all of them alike. Every Chrome started here is ended in a
``finally`` and the script checks that no new Chromium process is left when it exits.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from _common import (
    Call,
    ChromeTracker,
    PageServer,
    RawCDP,
    chrome_args_for_playwright,
    environment,
    latency_stats,
    rotated,
    run_benchmark,
    split,
    timed_calls,
    verdict,
)

import ego

if TYPE_CHECKING:
    from playwright.async_api import Playwright

EXPRESSION = "1+1"
EXPECTED = 2
# The targets from the issue.
TARGET_EGO_OVER_RAW = 1.3  # ego median latency at most 1.3x the raw loop's
TARGET_PW_OVER_EGO = 2.0  # Playwright median latency at least 2x ego's
TARGET_THROUGHPUT = 4.0  # ego calls/s with M in flight at least 4x Playwright's

# --------------------------------------------------------------------------- measurement


@dataclass
class Contender:
    name: str
    sequential: Call
    concurrent: Call
    before_concurrent: Callable[[], Awaitable[None]] | None = None
    after_concurrent: Callable[[], Awaitable[None]] | None = None
    latencies_ns: list[int] = field(default_factory=list)
    stream_seconds: list[float] = field(default_factory=list)
    stream_calls: list[int] = field(default_factory=list)


async def stream(call: Call, total: int, inflight: int) -> float:
    """Run ``total`` calls with at most ``inflight`` at once; return the wall time in s."""
    remaining = total

    async def worker() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            await call()

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(min(inflight, total))))
    return time.perf_counter() - start


async def check(contender: Contender) -> None:
    """Both call styles must really evaluate the expression."""
    values = [await contender.sequential()]
    if contender.before_concurrent is not None:
        await contender.before_concurrent()
    try:
        values.append(await contender.concurrent())
    finally:
        if contender.after_concurrent is not None:
            await contender.after_concurrent()
    if values != [EXPECTED, EXPECTED]:
        raise SystemExit(f"{contender.name}: {EXPRESSION} gave {values!r}, not {EXPECTED}")


async def run_sequential(contenders: list[Contender], calls: int, warmup: int, rounds: int) -> None:
    for contender in contenders:  # warm-up, not recorded
        await timed_calls(contender.sequential, warmup, [])
    for index, chunk in enumerate(split(calls, rounds)):
        for contender in rotated(contenders, index):
            gc.collect()
            await timed_calls(contender.sequential, chunk, contender.latencies_ns)


async def run_throughput(
    contenders: list[Contender], total: int, inflight: int, warmup: int, rounds: int
) -> None:
    async def one(contender: Contender, count: int) -> float:
        if contender.before_concurrent is not None:
            await contender.before_concurrent()
        try:
            return await stream(contender.concurrent, count, inflight)
        finally:
            if contender.after_concurrent is not None:
                await contender.after_concurrent()

    for contender in contenders:
        await one(contender, max(warmup, inflight))
    for index, chunk in enumerate(split(total, rounds)):
        for contender in rotated(contenders, index):
            gc.collect()
            contender.stream_seconds.append(await one(contender, chunk))
            contender.stream_calls.append(chunk)


async def ego_start(chrome: str, tracker: ChromeTracker) -> float:
    start = time.perf_counter()
    browser = await ego.launch(executable=chrome)
    try:
        tab = await browser.new_tab()
        elapsed = time.perf_counter() - start
        tracker.note_ego(browser)
        if await tab.evaluate(EXPRESSION) != EXPECTED:  # usable, checked outside the timing
            raise SystemExit("ego start: the new tab did not evaluate")
    finally:
        await browser.close()
    return elapsed


async def playwright_start(pw: Playwright, chrome: str, tracker: ChromeTracker) -> float:
    start = time.perf_counter()
    browser = await pw.chromium.launch(
        executable_path=chrome, headless=True, args=chrome_args_for_playwright()
    )
    try:
        page = await browser.new_page()
        elapsed = time.perf_counter() - start
        tracker.note_playwright()
        if await page.evaluate(EXPRESSION) != EXPECTED:
            raise SystemExit("playwright start: the new page did not evaluate")
    finally:
        await browser.close()
    return elapsed


# --------------------------------------------------------------------------- reporting


def throughput_stats(contender: Contender) -> dict[str, float]:
    rates = [c / s for c, s in zip(contender.stream_calls, contender.stream_seconds, strict=True)]
    return {
        "calls": sum(contender.stream_calls),
        "seconds": sum(contender.stream_seconds),
        "calls_per_s": sum(contender.stream_calls) / sum(contender.stream_seconds),
        "round_min_calls_per_s": min(rates),
        "round_max_calls_per_s": max(rates),
    }


# --------------------------------------------------------------------------- main


async def benchmark(args: argparse.Namespace, tracker: ChromeTracker) -> dict[str, Any]:
    chrome = args.chrome or ego.find_chrome()
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        async_playwright = None  # type: ignore[assignment]
        print("playwright is not installed (pip install -e '.[bench]'): its columns are skipped")

    results: dict[str, Any] = {
        "environment": environment(chrome),
        "config": {
            "expression": EXPRESSION,
            "calls": args.calls,
            "warmup": args.warmup,
            "rounds": args.rounds,
            "inflight": args.inflight,
            "stream_calls": args.stream_calls,
            "stream_rounds": args.stream_rounds,
            "starts": args.starts,
        },
    }

    # AsyncExitStack: every Chrome (and the Playwright driver) is ended even when another
    # clean-up step fails.
    with PageServer() as server:
        results["config"]["page"] = server.url
        async with contextlib.AsyncExitStack() as driver_stack:
            pw: Playwright | None = None
            if async_playwright is not None:
                pw = await driver_stack.enter_async_context(async_playwright())
            async with contextlib.AsyncExitStack() as stack:
                # Sections 1 and 2: three contenders, two Chromes of the same binary. The port
                # is for the raw client; ego's own connection is the pipe.
                browser = await ego.launch(executable=chrome, port=0)
                stack.push_async_callback(browser.close)
                tracker.note_ego(browser)
                tab = await browser.new_tab(server.url)
                tracker.note_ego(browser)
                version = await browser.version()
                results["environment"]["chrome"] = version.get("product", "?")
                assert browser.endpoint is not None
                raw = await RawCDP.attach(browser.endpoint, tab.target_id)
                stack.push_async_callback(raw.close)
                contenders = [
                    Contender(
                        "raw",
                        lambda: raw.evaluate(EXPRESSION),
                        lambda: raw.evaluate_concurrent(EXPRESSION),
                        raw.start_reader,
                        raw.stop_reader,
                    ),
                    Contender(
                        "ego", lambda: tab.evaluate(EXPRESSION), lambda: tab.evaluate(EXPRESSION)
                    ),
                ]
                if pw is not None:
                    pw_browser = await pw.chromium.launch(
                        executable_path=chrome, headless=True, args=chrome_args_for_playwright()
                    )
                    stack.push_async_callback(pw_browser.close)
                    tracker.note_playwright()
                    page = await pw_browser.new_page()
                    await page.goto(server.url)
                    tracker.note_playwright()
                    contenders.append(
                        Contender(
                            "playwright",
                            lambda: page.evaluate(EXPRESSION),
                            lambda: page.evaluate(EXPRESSION),
                        )
                    )
                for contender in contenders:
                    await check(contender)

                print(f"1/3 sequential: {args.calls} calls each ...", flush=True)
                await run_sequential(contenders, args.calls, args.warmup, args.rounds)
                print(
                    f"2/3 throughput: {args.stream_calls} calls each, {args.inflight} in flight",
                    flush=True,
                )
                await run_throughput(
                    contenders, args.stream_calls, args.inflight, args.warmup, args.stream_rounds
                )
                results["sequential"] = {c.name: latency_stats(c.latencies_ns) for c in contenders}
                results["throughput"] = {c.name: throughput_stats(c) for c in contenders}

            # Section 3: start to a usable connection, alternating, with the bench Chromes gone.
            print(f"3/3 start-up: {args.starts} starts each ...", flush=True)
            starts: dict[str, list[float]] = {"ego": []}
            if pw is not None:
                starts["playwright"] = []
            for index in range(args.starts):
                order = ["ego", "playwright"] if index % 2 == 0 else ["playwright", "ego"]
                for name in order:
                    if name == "ego":
                        starts["ego"].append(await ego_start(chrome, tracker))
                    elif pw is not None:
                        starts["playwright"].append(await playwright_start(pw, chrome, tracker))
            results["startup"] = {
                name: {
                    "median_ms": statistics.median(values) * 1000,
                    "min_ms": min(values) * 1000,
                    "max_ms": max(values) * 1000,
                    "samples_ms": [value * 1000 for value in values],
                }
                for name, values in starts.items()
            }
    return results


def add_ratios_and_targets(results: dict[str, Any]) -> None:
    seq = results["sequential"]
    tput = results["throughput"]
    ratios: dict[str, float | None] = {
        "ego_over_raw_median": seq["ego"]["median_us"] / seq["raw"]["median_us"],
        "ego_over_raw_p99": seq["ego"]["p99_us"] / seq["raw"]["p99_us"],
        "raw_over_ego_throughput": tput["raw"]["calls_per_s"] / tput["ego"]["calls_per_s"],
        "playwright_over_ego_median": None,
        "playwright_over_ego_p99": None,
        "ego_over_playwright_throughput": None,
    }
    if "playwright" in seq:
        ratios["playwright_over_ego_median"] = (
            seq["playwright"]["median_us"] / seq["ego"]["median_us"]
        )
        ratios["playwright_over_ego_p99"] = seq["playwright"]["p99_us"] / seq["ego"]["p99_us"]
        ratios["ego_over_playwright_throughput"] = (
            tput["ego"]["calls_per_s"] / tput["playwright"]["calls_per_s"]
        )
    results["ratios"] = ratios

    def target(name: str, value: float | None, limit: float, at_most: bool) -> dict[str, Any]:
        ok = None if value is None else (value <= limit if at_most else value >= limit)
        return {"name": name, "value": value, "limit": limit, "result": verdict(ok)}

    results["targets"] = [
        target(
            f"ego median within {TARGET_EGO_OVER_RAW}x of the raw loop (ego/raw)",
            ratios["ego_over_raw_median"],
            TARGET_EGO_OVER_RAW,
            at_most=True,
        ),
        target(
            f"ego at least {TARGET_PW_OVER_EGO:g}x faster than Playwright at the median "
            "(playwright/ego)",
            ratios["playwright_over_ego_median"],
            TARGET_PW_OVER_EGO,
            at_most=False,
        ),
        target(
            f"throughput at least {TARGET_THROUGHPUT:g}x Playwright's (ego/playwright)",
            ratios["ego_over_playwright_throughput"],
            TARGET_THROUGHPUT,
            at_most=False,
        ),
    ]


def report(results: dict[str, Any]) -> str:
    env, config = results["environment"], results["config"]
    lines = [
        f"{env['chrome']} ({env['chrome_binary']}), Python {env['python']}, {env['cpus']} CPUs",
        f"ego {env['ego']}, playwright {env['playwright']}, websockets {env['websockets']}, "
        f"orjson {env['orjson']}",
        f"page {config['page']}, expression {config['expression']!r}, 1-min load average "
        f"{env['loadavg_1m_before_after'][0]:.1f} before, "
        f"{env['loadavg_1m_before_after'][1]:.1f} after",
        "",
        f"1. Sequential evaluate: {config['calls']} calls each after {config['warmup']} "
        f"warm-up, {config['rounds']} interleaved rounds",
        f"   {'contender':<12}{'median us':>12}{'p99 us':>12}{'mean us':>12}{'min us':>12}",
    ]
    for name, stats in results["sequential"].items():
        lines.append(
            f"   {name:<12}{stats['median_us']:>12.0f}{stats['p99_us']:>12.0f}"
            f"{stats['mean_us']:>12.0f}{stats['min_us']:>12.0f}"
        )
    ratios = results["ratios"]

    def fmt(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.2f}x"

    lines += [
        f"   ego/raw: median {fmt(ratios['ego_over_raw_median'])}, "
        f"p99 {fmt(ratios['ego_over_raw_p99'])}; playwright/ego: median "
        f"{fmt(ratios['playwright_over_ego_median'])}, "
        f"p99 {fmt(ratios['playwright_over_ego_p99'])}",
        "",
        f"2. Throughput, {config['inflight']} in flight: {config['stream_calls']} calls each, "
        f"{config['stream_rounds']} interleaved rounds",
        f"   {'contender':<12}{'calls/s':>12}{'round min':>12}{'round max':>12}",
    ]
    for name, stats in results["throughput"].items():
        lines.append(
            f"   {name:<12}{stats['calls_per_s']:>12.0f}{stats['round_min_calls_per_s']:>12.0f}"
            f"{stats['round_max_calls_per_s']:>12.0f}"
        )
    lines += [
        f"   ego/playwright: {fmt(ratios['ego_over_playwright_throughput'])}; raw/ego: "
        f"{fmt(ratios['raw_over_ego_throughput'])}",
        "",
        f"3. Chrome start to a usable connection: median of {config['starts']}",
        f"   {'contender':<40}{'median ms':>10}{'min ms':>10}{'max ms':>10}",
    ]
    labels = {
        "ego": "ego.launch() + new_tab()",
        "playwright": "playwright chromium.launch() + new_page()",
    }
    for name, stats in results["startup"].items():
        lines.append(
            f"   {labels[name]:<40}{stats['median_ms']:>10.0f}{stats['min_ms']:>10.0f}"
            f"{stats['max_ms']:>10.0f}"
        )
    lines += ["", "Targets"]
    for item in results["targets"]:
        value = "n/a" if item["value"] is None else f"{item['value']:.2f}x"
        lines.append(f"   {item['result']:<5} {item['name']}: {value}")
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0] if __doc__ else "")
    parser.add_argument("--calls", type=int, default=2000, help="sequential calls per contender")
    parser.add_argument("--warmup", type=int, default=200, help="warm-up calls per contender")
    parser.add_argument("--rounds", type=int, default=10, help="interleaved sequential rounds")
    parser.add_argument("--inflight", type=int, default=100, help="calls in flight at once")
    parser.add_argument(
        "--stream-calls", type=int, default=5000, help="throughput calls per contender"
    )
    parser.add_argument("--stream-rounds", type=int, default=5, help="interleaved stream rounds")
    parser.add_argument("--starts", type=int, default=5, help="Chrome starts per contender")
    parser.add_argument("--chrome", default=None, help="Chrome binary (default: ego's choice)")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args(argv)
    for name in (
        "calls",
        "warmup",
        "rounds",
        "inflight",
        "stream_calls",
        "stream_rounds",
        "starts",
    ):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    return run_benchmark(parse_args(argv), benchmark, add_ratios_and_targets, report)


if __name__ == "__main__":
    sys.exit(main())
