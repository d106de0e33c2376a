"""Section 5 of ``bench_tools.py``: ego's default pipe against a minimal raw pipe loop, alone.

Two contenders, nothing else between them: ego's hot call (``ego-hot``, over the pipe of the
Chrome ``ego.launch()`` started) and the raw pipe loop (``raw-pipe``, :class:`RawPipeCDP` on a
Chromium of its own, sending the same hot Call to the same page). Sequentially they take turns
call by call, the order swapping every call, in rounds; in flight each fires a batch of calls
at once per round, which goes first alternating. Every round gives a ratio ego-hot/raw-pipe (of
the round's median time, or of its calls per second), so both contenders of a ratio ran under
the same load; the figure is the median of those ratios, the same way the issue measured them.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import statistics
import time
from typing import Any

from _common import latency_stats, rotated, spread
from _inflight import commands_sent
from _tools_contenders import Bench, Entry, check, take_turns
from _tools_site import SITE_ID, TOOLS

__all__ = ["report_lines", "run_pipe_pair"]


async def run_pipe_pair(
    bench: Bench, calls: int, warmup: int, rounds: int, inflight: int, batches: int = 1
) -> dict[str, Any]:
    """``rounds`` rounds of ``calls`` sequential calls each and of ``batches`` batches of
    ``inflight`` calls each, the contenders' batches taking turns."""
    entries = [
        Entry("small", "raw-pipe", functools.partial(bench.raw_pipe_call, "small")),
        Entry("small", "ego-hot", functools.partial(bench.ego_hot_bare, "small")),
    ]
    # The first call stores the tool in the page (when the other sections did not run).
    await bench.site.run_browser_tool(SITE_ID, TOOLS["small"], {"n": 1}, tab=bench.tab)
    await check(bench, "small", {"raw-pipe": bench.raw_pipe_call, "ego-hot": bench.ego_hot})
    await take_turns(entries, warmup, record=False)
    sequential: list[float] = []
    for _ in range(rounds):
        gc.collect()
        before = commands_sent(bench.browser)
        await take_turns(entries, calls, record=True)  # the order swaps every call
        if commands_sent(bench.browser) - before != calls:
            raise SystemExit("pipe pair: an ego-hot call was not a cached hot Call")
        raw, ego = (statistics.median(entry.latencies_ns[-calls:]) for entry in entries)
        sequential.append(ego / raw)
    result: dict[str, Any] = {
        "calls": calls,
        "rounds": rounds,
        "latency": {
            entry.contender: {
                **latency_stats(entry.latencies_ns),
                "client_cpu_us": statistics.median(entry.cpu_ns) / 1000,
            }
            for entry in entries
        },
        "sequential_ratios": sequential,
        "sequential": spread(sequential),
    }
    if inflight:
        rates: dict[str, list[float]] = {"raw-pipe": [], "ego-hot": []}
        cpu: dict[str, list[float]] = {"raw-pipe": [], "ego-hot": []}
        contenders = {
            "raw-pipe": bench.raw_pipe_call,
            "ego-hot": bench.ego_hot_bare,
        }
        first = 2_000_000
        for index in range(rounds + 1):  # the first round warms up
            # A single batch swings by a factor of two on a shared machine (Chrome's own
            # scheduling of a thousand queued evaluates): a round times several, taking turns.
            seconds = dict.fromkeys(contenders, 0.0)
            cpu_seconds = dict.fromkeys(contenders, 0.0)
            for turn in range(batches):
                for name in rotated(list(contenders), index + turn):
                    gc.collect()
                    call = contenders[name]
                    before = commands_sent(bench.browser)
                    cpu_start, start = time.thread_time(), time.perf_counter()
                    answers = await _gather(call, first, inflight)
                    seconds[name] += time.perf_counter() - start
                    cpu_seconds[name] += time.thread_time() - cpu_start
                    if answers != [first + i + 1 for i in range(inflight)]:
                        raise SystemExit(f"pipe pair, in flight, {name}: wrong answers")
                    if name == "ego-hot" and commands_sent(bench.browser) - before != inflight:
                        raise SystemExit("pipe pair, in flight: an ego-hot call was not cached")
                    first += inflight
            if index:
                for name in contenders:
                    rates[name].append(batches * inflight / seconds[name])
                    cpu[name].append(cpu_seconds[name] / (batches * inflight) * 1e6)
        ratios = [ego / raw for ego, raw in zip(rates["ego-hot"], rates["raw-pipe"], strict=True)]
        result["inflight"] = {
            "calls": inflight,
            "batches": batches,
            "calls_per_s": {name: spread(values) for name, values in rates.items()},
            # This process's CPU per call (the main thread's), median over rounds.
            "client_cpu_us": {name: statistics.median(values) for name, values in cpu.items()},
            "ratios": ratios,
            "ratio": spread(ratios),
        }
    return result


async def _gather(call: Any, first: int, count: int) -> list[Any]:
    return list(await asyncio.gather(*(call("small", first + i) for i in range(count))))


def report_lines(result: dict[str, Any]) -> list[str]:
    """The section's lines for the report."""
    latency = result["latency"]
    sequential = result["sequential"]
    lines = [
        f"5. The pipe at its limit: ego-hot (ego's default pipe) against raw-pipe (a minimal "
        f"raw pipe loop on its own Chromium), alone, small tool, {result['rounds']} rounds",
        f"   sequential, {result['calls']} calls per round each, taking turns call by call:",
    ]
    for name, figures in latency.items():
        lines.append(
            f"   {name:<12}median {figures['median_us']:>7.0f} us   "
            f"p99 {figures['p99_us']:>7.0f} us   mean {figures['mean_us']:>7.0f} us   "
            f"client CPU {figures['client_cpu_us']:.0f} us"
        )
    lines.append(
        f"   ego-hot/raw-pipe time, per-round median ratio {sequential['median']:.2f}x "
        f"({sequential['min']:.2f} - {sequential['max']:.2f}); round by round: "
        + " ".join(f"{value:.2f}" for value in result["sequential_ratios"])
    )
    inflight = result.get("inflight")
    if inflight is not None:
        lines.append(
            f"   in flight, {inflight['calls']:,} calls at once, {inflight['batches']} batches "
            "each per round, taking turns:"
        )
        for name, figures in inflight["calls_per_s"].items():
            lines.append(
                f"   {name:<12}{figures['median']:>8,.0f} calls/s   ({figures['min']:,.0f} - "
                f"{figures['max']:,.0f});   client CPU {inflight['client_cpu_us'][name]:.0f} us "
                "per call"
            )
        ratio = inflight["ratio"]
        lines.append(
            f"   ego-hot/raw-pipe throughput, per-round median ratio {ratio['median']:.2f}x "
            f"({ratio['min']:.2f} - {ratio['max']:.2f}); round by round: "
            + " ".join(f"{value:.2f}" for value in inflight["ratios"])
        )
    return lines
