"""``bench_pool.py`` section 1: ``pool.map`` and ``ego batch`` against the site layer.

The same trivial browser tool (``bench-tools/add_one``, ``async (args) => args.n + 1``, from
``_tools_site.py``) on the same local page, the same number of tabs of one Chromium each, and
the same number of calls in flight (``tabs * per_tab``), over the same inputs ``{"n": i}``:

- **site**: ``site.run_browser_tool("bench-tools", "add_one", {"n": i}, tab=t)`` on a browser
  from ``ego.launch()``, with ``tabs * per_tab`` tasks in flight, each on its own tab
  (task ``w`` uses tab ``w % tabs``) and taking the next input when its call returned.
- **pool**: ``await BrowserPool(launch=1, per_browser=tabs, per_tab=per_tab).map(...)``, which
  gives the results in input order.
- **gathered** (with ``--gathered``, for reference): the site layer with every input in
  flight at once (``asyncio.gather`` of all the calls over the tabs), as issue 23 first
  measured it; not a ratio's base, since no bounded pool or batch has that many in flight.
- **batch**: ``ego batch bench-tools add_one --browsers 1 --concurrency C --per-tab P`` as a
  child process over a JSONL file of the inputs, in **steady state**: the rate at which its
  output file grows from 10% to 90% of its lines (sampled every 2 ms by a thread here). That
  leaves out what a batch pays once: Python's start and imports, reading and checking the
  inputs, Chrome's start, opening the tabs, the first call that stores the tool in each tab,
  and closing. The whole process's rate is printed beside it.

Every answer is checked (``n + 1`` for the site and pool calls; every line ``ok`` with the
right result for the batch) outside the timing. Each round runs the three paths in an order
that rotates from round to round, ``gc.collect()`` before each; the ratios are taken round by
round (both paths of a ratio ran in the same round) before their median.
"""

from __future__ import annotations

import asyncio
import gc
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import psutil
from _common import PageServer
from _tools_site import SITE_ID, write_site

import ego
from ego.pool import BrowserPool

__all__ = ["PATHS", "Compared", "compare", "compare_report"]

TOOL = "add_one"
PATHS = ("site", "pool", "batch")
GATHERED = "gathered"
#: The targets of the issue: a path's calls/s over the site layer's, at least.
TARGETS = {"pool": 0.8, "batch": 0.7}


@dataclass
class Compared:
    """One in-flight setting's rounds: calls/s per path, this process's CPU µs per call, and
    the batch's whole-process rate and steady-state CPU µs per call."""

    tabs: int
    per_tab: int
    rates: dict[str, list[float]] = field(default_factory=dict)
    cpu_us: dict[str, list[float]] = field(default_factory=dict)
    ratios: dict[str, list[float]] = field(default_factory=dict)
    batch_whole: list[float] = field(default_factory=list)

    @property
    def in_flight(self) -> int:
        return self.tabs * self.per_tab


async def _site_round(
    browser: ego.Browser, tabs: Sequence[ego.Tab], count: int, flight: int
) -> list[Any]:
    site = browser.site
    results: list[Any] = [None] * count
    numbers = iter(range(count))

    async def worker(number: int) -> None:
        tab = tabs[number % len(tabs)]
        for n in numbers:
            results[n] = await site.run_browser_tool(SITE_ID, TOOL, {"n": n}, tab=tab)

    await asyncio.gather(*(worker(w) for w in range(flight)))
    return results


async def _gathered_round(browser: ego.Browser, tabs: Sequence[ego.Tab], count: int) -> list[Any]:
    site = browser.site
    return list(
        await asyncio.gather(
            *(
                site.run_browser_tool(SITE_ID, TOOL, {"n": n}, tab=tabs[n % len(tabs)])
                for n in range(count)
            )
        )
    )


async def _pool_round(pool: BrowserPool, count: int) -> list[Any]:
    items = await pool.map(SITE_ID, TOOL, ({"n": n} for n in range(count)))
    return [item.result if item.ok else item.error for item in items]


def _check(path: str, results: Sequence[Any]) -> None:
    wrong = [n for n, value in enumerate(results) if value != n + 1]
    if wrong:
        raise SystemExit(f"{path}: {len(wrong)} wrong answers, first {results[wrong[0]]!r}")


class _Growth:
    """Watches a file fill with lines from a thread: when it held 10% and 90% of ``total``
    lines, and the CPU time of ``process`` at those moments."""

    def __init__(self, path: Path, total: int, process: psutil.Process) -> None:
        self.path, self.total, self.process = path, total, process
        self.marks: dict[float, tuple[float, float]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> _Growth:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)

    def _cpu(self) -> float:
        try:
            times = self.process.cpu_times()
        except psutil.Error:
            return float("nan")
        return times.user + times.system

    def _watch(self) -> None:
        lines, offset = 0, 0
        wanted = [(fraction, int(self.total * fraction)) for fraction in (0.1, 0.9)]
        while wanted and not self._stop.is_set():
            try:
                with open(self.path, "rb") as handle:
                    handle.seek(offset)
                    data = handle.read()
            except FileNotFoundError:
                data = b""
            offset += len(data)
            lines += data.count(b"\n")
            now = time.perf_counter()
            while wanted and lines >= wanted[0][1]:
                self.marks[wanted.pop(0)[0]] = (now, self._cpu())
            # Sampling, not synchronisation: 2 ms is 0.04% of a 5 s steady state.
            time.sleep(0.002)

    def rate(self) -> tuple[float, float]:
        """Lines per second and CPU µs per line between the 10% and 90% marks."""
        (t10, cpu10), (t90, cpu90) = self.marks[0.1], self.marks[0.9]
        lines = int(self.total * 0.9) - int(self.total * 0.1)
        return lines / (t90 - t10), (cpu90 - cpu10) * 1e6 / lines


def _batch_round(
    workspace: Path, inputs: Path, output: Path, url: str, tabs: int, per_tab: int, count: int
) -> tuple[float, float, float]:
    """One ``ego batch`` run: (steady calls/s, steady CPU µs per call, whole-process calls/s)."""
    output.unlink(missing_ok=True)
    per_tab_option = ["--per-tab", str(per_tab)] if per_tab > 1 else []
    command = [
        sys.executable,
        "-m",
        "ego",
        "--workspace",
        str(workspace),
        "batch",
        SITE_ID,
        TOOL,
        "--input",
        str(inputs),
        "--output",
        str(output),
        "--browsers",
        "1",
        "--concurrency",
        str(tabs * per_tab),
        *per_tab_option,
        "--url",
        url,
        "--json",
    ]
    started = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    with _Growth(output, count, psutil.Process(child.pid)) as growth:
        out, err = child.communicate(timeout=600)
    whole = count / (time.perf_counter() - started)
    if child.returncode != 0:
        raise SystemExit(f"ego batch exited {child.returncode}: {err.decode()[-2000:]}")
    summary = json.loads(out)
    lines = [orjson.loads(line) for line in output.read_bytes().splitlines()]
    bad = [r for r in lines if not r["ok"] or r["result"] != r["args"]["n"] + 1]
    if summary["ok"] != count or len(lines) != count or bad:
        raise SystemExit(f"ego batch: {summary}, {len(bad)} wrong lines")
    rate, cpu = growth.rate()
    return rate, cpu, whole


async def compare(
    *,
    count: int,
    tabs: int,
    per_tabs: Sequence[int],
    rounds: int,
    gathered: bool = False,
    chrome: str | None = None,
) -> list[Compared]:
    """Run the comparison for every ``per_tab`` in ``per_tabs``; see the module docstring."""
    figures = [Compared(tabs, per_tab) for per_tab in per_tabs]
    paths = (*PATHS, GATHERED) if gathered else PATHS
    with PageServer() as server, tempfile.TemporaryDirectory(prefix="ego-bench-pool-") as tmp:
        root = Path(tmp)
        learnings = ego.Learnings(roots=[write_site(root, server.url, "")])
        inputs = root / "inputs.jsonl"
        inputs.write_bytes(b"".join(b'{"n": %d}\n' % n for n in range(count)))
        output = root / "results.jsonl"
        async with ego.launch(learnings=learnings, executable=chrome) as browser:
            tab_list = [await browser.new_tab(server.url) for _ in range(tabs)]
            _check("site warm-up", await _site_round(browser, tab_list, 10 * tabs, tabs))
            for figure in figures:
                # Only named when it is not the default: the same script measures a version
                # of ego from before per_tab existed.
                options: dict[str, Any] = {"per_tab": figure.per_tab} if figure.per_tab > 1 else {}
                async with BrowserPool(
                    launch=1, per_browser=tabs, learnings=learnings, executable=chrome, **options
                ) as pool:
                    # Open every tab and store the tool in it before the timing.
                    _check("pool warm-up", await _pool_round(pool, 10 * figure.in_flight))
                    for number in range(rounds):
                        rates: dict[str, float] = {}
                        shift = number % len(paths)
                        for path in paths[shift:] + paths[:shift]:
                            gc.collect()
                            if path == "batch":
                                rate, cpu, whole = await asyncio.to_thread(
                                    _batch_round,
                                    root,
                                    inputs,
                                    output,
                                    server.url,
                                    tabs,
                                    figure.per_tab,
                                    count,
                                )
                                figure.batch_whole.append(whole)
                            else:
                                cpu_before = time.process_time()
                                started = time.perf_counter()
                                if path == "site":
                                    results = await _site_round(
                                        browser, tab_list, count, figure.in_flight
                                    )
                                elif path == GATHERED:
                                    results = await _gathered_round(browser, tab_list, count)
                                else:
                                    results = await _pool_round(pool, count)
                                rate = count / (time.perf_counter() - started)
                                cpu = (time.process_time() - cpu_before) * 1e6 / count
                                _check(path, results)
                            rates[path] = rate
                            figure.rates.setdefault(path, []).append(rate)
                            figure.cpu_us.setdefault(path, []).append(cpu)
                        for path in paths[1:]:
                            figure.ratios.setdefault(path, []).append(rates[path] / rates["site"])
                        print(
                            f"  round {number + 1}, {figure.in_flight} in flight: "
                            + ", ".join(f"{p} {rates[p]:.0f}/s" for p in paths),
                            flush=True,
                        )
    return figures


def _spread(values: Sequence[float], digits: int = 0) -> str:
    median = statistics.median(values)
    return f"{median:.{digits}f} ({min(values):.{digits}f}..{max(values):.{digits}f})"


def compare_report(figures: Sequence[Compared], count: int) -> list[str]:
    """The section's lines: calls/s and CPU per path, ratios to the site layer, verdicts."""
    lines = [
        f"1. the pool and ego batch against the site layer: {count} calls of a trivial tool, "
        "one Chromium each, same tabs and calls in flight"
    ]
    for figure in figures:
        lines.append(
            f"\n{figure.tabs} tabs x {figure.per_tab} per tab = {figure.in_flight} in flight, "
            f"{len(figure.rates['site'])} rounds (median, min..max)"
        )
        lines.append(f"{'path':9}  {'calls/s':>22}  {'x site':>18}  CPU us per call (client)")
        for path, rates in figure.rates.items():
            ratio = _spread(figure.ratios[path], 2) if path in figure.ratios else "1"
            lines.append(
                f"{path:9}  {_spread(rates):>22}  {ratio:>18}  {_spread(figure.cpu_us[path], 1)}"
            )
        lines.append(
            "batch, whole process (start, inputs, Chrome, close included): "
            f"{_spread(figure.batch_whole)} calls/s"
        )
        for path, target in TARGETS.items():
            median = statistics.median(figure.ratios[path])
            verdict = "PASS" if median >= target else "MISS"
            lines.append(f"{path}/site >= {target}: {median:.2f}  {verdict}")
    return lines
