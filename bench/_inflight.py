"""The in-flight section of ``bench_tools.py``: many hot calls at once on one tab.

Each contender fires a batch of calls at once (``asyncio.gather``, the same driver for every
one) and the batch's wall time gives its calls per second. A round runs one batch per
contender, the order rotating per round and ``gc.collect()`` before each batch, so load from
other programs lands on all of them alike; the figures are the median over rounds with the
slowest and fastest round, and the ratios are taken round by round (ego-hot against raw and
Playwright in the same round) before their median.
"""

from __future__ import annotations

import asyncio
import gc
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

from _common import rotated, spread

import ego

__all__ = ["InFlight", "commands_sent", "run_inflight"]

NCall = Callable[[int], Awaitable[Any]]


def commands_sent(browser: ego.Browser) -> int:
    """How many CDP commands ego's connection has sent so far (its id counter).

    Read from the counter's repr (``count(N)``) so that nothing is added to the calls being
    timed; used to check that every in-flight hot call sent exactly one command (a cached
    Call) without reading ``site.last_run`` in each call's task, which the timing would pay.
    """
    match = re.fullmatch(r"count\((\d+)\)", repr(browser.connection._link.ids))
    if match is None:
        raise RuntimeError("cannot read ego's command counter")
    return int(match.group(1)) - 1


class InFlight:
    """The contenders of the in-flight section and what they measured."""

    def __init__(self, contenders: dict[str, NCall], hot: dict[str, ego.Browser]) -> None:
        self.contenders = contenders
        # The hot-call contenders and the browser whose command counter checks each.
        self.hot = hot
        self.rates: dict[str, list[float]] = {name: [] for name in contenders}
        self.next_n = 1_000_000

    async def batch(self, name: str, count: int) -> float:
        """``count`` calls of ``name`` at once; answers calls per second. Checks every answer."""
        call, first = self.contenders[name], self.next_n
        self.next_n += count
        browser = self.hot.get(name)
        before = 0 if browser is None else commands_sent(browser)
        start = time.perf_counter()
        answers = await asyncio.gather(*(call(first + i) for i in range(count)))
        elapsed = time.perf_counter() - start
        wrong = [(first + i, a) for i, a in enumerate(answers) if a != first + i + 1]
        if wrong:
            raise SystemExit(f"in flight, {name}: {len(wrong)} wrong answers, e.g. {wrong[0]}")
        if browser is not None:
            sent = commands_sent(browser) - before
            if sent != count:
                raise SystemExit(
                    f"in flight, {name}: {count} calls sent {sent} commands, not one each "
                    "(a call that was not cached)"
                )
        return count / elapsed

    def result(self) -> dict[str, Any]:
        names = list(self.rates)
        out: dict[str, Any] = {"calls_per_s": {n: spread(self.rates[n]) for n in names}}
        ratios: dict[str, dict[str, float]] = {}
        for other in ("raw", "playwright", "ego-eval"):
            if other in self.rates and "ego-hot" in self.rates:
                per_round = [
                    hot / rate
                    for hot, rate in zip(self.rates["ego-hot"], self.rates[other], strict=True)
                ]
                ratios[f"ego-hot/{other}"] = spread(per_round)
        # The pipe against the websocket: how many times the pipe's throughput, per round.
        for call in ("ego-hot", "ego-eval"):
            if f"{call}-ws" in self.rates:
                per_round = [
                    pipe / ws
                    for pipe, ws in zip(self.rates[call], self.rates[f"{call}-ws"], strict=True)
                ]
                ratios[f"{call}/{call}-ws"] = spread(per_round)
        out["ratios"] = ratios
        return out


async def run_inflight(inflight: InFlight, calls: int, rounds: int) -> dict[str, Any]:
    """One warm-up batch per contender, then ``rounds`` rounds of one batch each."""
    names = list(inflight.contenders)
    for name in names:
        await inflight.batch(name, calls)
    for index in range(rounds):
        for name in rotated(names, index):
            gc.collect()
            inflight.rates[name].append(await inflight.batch(name, calls))
    result = inflight.result()
    result["rounds"] = rounds
    result["calls"] = calls
    result["spread_note"] = "median over rounds (slowest round - fastest round)"
    return result


def report_lines(result: dict[str, Any]) -> list[str]:
    """The section's lines for the report."""
    lines = [
        f"4. In flight: {result['calls']:,} calls at once on one tab (small tool), "
        f"{result['rounds']} interleaved rounds; calls/s, median over rounds (slowest - fastest)",
    ]
    for name, figures in result["calls_per_s"].items():
        lines.append(
            f"   {name:<12}{figures['median']:>10,.0f}   ({figures['min']:,.0f} - "
            f"{figures['max']:,.0f})"
        )
    for name, figures in result["ratios"].items():
        lines.append(
            f"   {name:<22}{figures['median']:>6.2f}x  per-round ratio, median "
            f"({figures['min']:.2f} - {figures['max']:.2f})"
        )
    return lines
