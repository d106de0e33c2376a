"""Where the time of an MCP action's change note goes, step by step, on the 200-row issue
tracker of ``bench_change_notes.py`` (``bench/_tracker_site.py``), in one process with one
headless Chrome.

    .venv/bin/python bench/note_steps.py                  # 15 repeats, 200 rows
    .venv/bin/python bench/note_steps.py --repeats 30 --rows 500

Printed, each the median of ``--repeats``:

* the reads a note makes, alone: ``Accessibility.getFullAXTree`` and
  ``DOMSnapshot.captureSnapshot`` (wall time as ego's client waits for each), and the CPU time
  Chrome's renderer and browser processes spent on each (their ``psutil`` CPU times around
  the call);
* ego's Python on what they answered: the JSON parse (orjson on the answer's bytes), the
  layout facts, the lines (``axtree.ax_lines``), the whole ``snapshot.outline`` (both reads,
  the lines, the refs), the watch of the documents that keeps a read made while the page
  settles, and the comparison with the page before (``changes.changes``);
* the time in Python's cyclic garbage collector during a snapshot of the page (where the
  answer's hundred thousand containers, scanned while they live, cost the most);
* the action itself through :func:`ego.mcp.acting.act` (what the MCP tools run), with its
  note and with ``diff=False``, interleaved, the ratio of their medians, and the collector's
  time in each;
* a navigation alone, and the read of the new document after it (what a navigation's note
  adds: nothing overlaps it).

``--heap`` keeps that many more containers alive, as a long-running ``ego mcp`` server holds
(its modules and tools: about 120,000), so that a full collection costs what it costs there.

The machine's load is printed before and after: compare the figures of one run.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import orjson
import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _tracker_site import tracker  # noqa: E402

import ego  # noqa: E402
from ego.mcp import changes  # noqa: E402
from ego.mcp.acting import act  # noqa: E402
from ego.page import snapshot, unchanged  # noqa: E402
from ego.page.axtree import ax_lines  # noqa: E402
from ego.page.layout_facts import CAPTURE, layout_facts  # noqa: E402
from tests.helpers.page_server import PageServer  # noqa: E402


def _chrome() -> tuple[list[psutil.Process], list[psutil.Process]]:
    """This process's Chrome: its renderers and its browser process."""
    renderers: list[psutil.Process] = []
    browsers: list[psutil.Process] = []
    for child in psutil.Process().children(recursive=True):
        try:
            line = child.cmdline()
        except psutil.Error:
            continue
        if not line or "chrom" not in line[0]:
            continue
        if "--type=renderer" in line:
            renderers.append(child)
        elif not any(part.startswith("--type=") for part in line):
            browsers.append(child)
    return renderers, browsers


def _cpu(processes: list[psutil.Process]) -> float:
    total = 0.0
    for process in processes:
        try:
            times = process.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system
    return total


async def _chrome_call(
    tab: ego.Tab, method: str, params: dict[str, Any], repeats: int
) -> tuple[float, float, float, bytes]:
    """Median wall seconds of ``method``, and the renderer's and browser's CPU seconds per
    call (over all repeats), and the answer's JSON."""
    renderers, browsers = _chrome()
    walls: list[float] = []
    answer: Any = None
    cpu_renderer, cpu_browser = _cpu(renderers), _cpu(browsers)
    for _ in range(repeats):
        started = time.perf_counter()
        answer = await tab.send(method, params)
        walls.append(time.perf_counter() - started)
    renderer = (_cpu(renderers) - cpu_renderer) / repeats
    browser = (_cpu(browsers) - cpu_browser) / repeats
    return statistics.median(walls), renderer, browser, orjson.dumps(answer)


def _python(step: Callable[[], object], repeats: int) -> float:
    walls: list[float] = []
    for _ in range(repeats):
        started = time.perf_counter()
        step()
        walls.append(time.perf_counter() - started)
    return statistics.median(walls)


async def _awaited(step: Callable[[], Awaitable[object]], repeats: int) -> float:
    walls: list[float] = []
    for _ in range(repeats):
        started = time.perf_counter()
        await step()
        walls.append(time.perf_counter() - started)
    return statistics.median(walls)


class CollectorTime:
    """Seconds Python's cyclic collector ran since :meth:`reset`."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._started = 0.0
        gc.callbacks.append(self._note)

    def _note(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._started

    def reset(self) -> float:
        seconds, self.seconds = self.seconds, 0.0
        return seconds


def _row(label: str, seconds: float, extra: str = "") -> None:
    print(f"  {label:52} {seconds * 1000:8.1f} ms {extra}")


async def steps(url: str, repeats: int) -> None:
    collector = CollectorTime()
    print(f"containers alive: {len(gc.get_objects()):,}")
    async with ego.launch() as browser:
        tab = await browser.new_tab(url)
        frame = {"frameId": tab._frame_id}
        await snapshot.outline(tab, max_lines=changes.MAX_COMPARED, timeout=30)  # warm

        print("Chrome's reads (wall as ego waits; CPU of Chrome's processes per call):")
        for method, params in (
            ("Accessibility.getFullAXTree", frame),
            ("DOMSnapshot.captureSnapshot", CAPTURE),
        ):
            wall, renderer, browser_cpu, raw = await _chrome_call(tab, method, params, repeats)
            _row(
                method,
                wall,
                f"renderer {renderer * 1000:.1f} ms, browser {browser_cpu * 1000:.1f} ms, "
                f"{len(raw) / 1024:.0f} KiB",
            )
            parse = _python(lambda raw=raw: orjson.loads(raw), repeats)
            _row(f"  orjson parse of its {len(raw) / 1024:.0f} KiB", parse)
            if method.startswith("Accessibility"):
                tree = orjson.loads(raw)
            else:
                capture = orjson.loads(raw)

        async def both() -> object:
            return await asyncio.gather(
                tab.send("Accessibility.getFullAXTree", frame),
                tab.send("DOMSnapshot.captureSnapshot", CAPTURE),
            )

        _row("both at once (as a snapshot reads them)", await _awaited(both, repeats))

        print("ego's Python:")
        nodes = tree["nodes"]
        facts = layout_facts(capture)[tab._frame_id]
        _row(
            f"layout facts ({len(capture['documents'][0]['nodes']['backendNodeId'])} DOM nodes)",
            _python(lambda: layout_facts(capture), repeats),
        )
        _row(
            f"ax_lines ({len(nodes)} AX nodes)",
            _python(lambda: ax_lines(nodes, nodes[0], facts, url=url), repeats),
        )

        async def whole() -> object:
            return await snapshot.outline(tab, max_lines=changes.MAX_COMPARED, timeout=30)

        collector.reset()
        _row("snapshot.outline (reads, lines, refs)", await _awaited(whole, repeats))
        _row("  of which the collector (mean)", collector.reset() / repeats)

        async def watched() -> object:
            watch = await unchanged.watch(await tab.frames(), 5)
            return await watch.unchanged(5)

        _row("document watch (frames, start, stop)", await _awaited(watched, repeats))

        before = await changes._read(tab, keep=False)
        await tab.select("#prio", "Low")
        after = await changes._read(tab, keep=False)
        assert before is not None
        assert after is not None
        _row(
            "changes.changes (the comparison)",
            _python(lambda: changes.changes(before, after), repeats),
        )
        lines = len(after.lines or ())
        print(f"  (the page has {lines} lines)")

        print("the action through ego.mcp.acting.act (select_option):")
        noted: list[float] = []
        plain: list[float] = []
        values = ["High", "Medium", "Low"]
        calls = 0

        in_collector: dict[bool, list[float]] = {True: [], False: []}

        async def choose(diff: bool) -> float:
            nonlocal calls
            calls += 1
            value = values[calls % 3]
            collector.reset()
            started = time.perf_counter()
            await act(tab, lambda: tab.select("#prio", value), lambda _: {}, diff=diff)
            took = time.perf_counter() - started
            in_collector[diff].append(collector.reset())
            return took

        for index in range(repeats):
            for diff in (True, False) if index % 2 == 0 else (False, True):
                if diff:
                    await choose(True)  # untimed: the note starts from the last one's snapshot
                    noted.append(await choose(True))
                else:
                    plain.append(await choose(False))
        mine, other = statistics.median(noted), statistics.median(plain)
        _row("with its note", mine, f"(collector: {_mean(in_collector[True]) * 1000:.1f} ms)")
        _row("diff=False", other, f"(collector: {_mean(in_collector[False]) * 1000:.1f} ms)")
        print(f"  ratio {mine / other:.2f}")

        print("a navigation, and the read of the new document after it:")
        loads: list[float] = []
        reads: list[float] = []
        renderers, browsers = _chrome()
        cpu_renderer, cpu_browser = _cpu(renderers), _cpu(browsers)
        for _ in range(repeats):
            started = time.perf_counter()
            await tab.navigate(url)
            loaded = time.perf_counter()
            await snapshot.outline(tab, max_lines=changes.MAX_COMPARED, timeout=30)
            reads.append(time.perf_counter() - loaded)
            loads.append(loaded - started)
        _row("the navigation", statistics.median(loads))
        _row(
            "the read of the new document",
            statistics.median(reads),
            f"(load and read: renderer {(_cpu(renderers) - cpu_renderer) / repeats * 1000:.0f} "
            f"ms, browser {(_cpu(browsers) - cpu_browser) / repeats * 1000:.0f} ms of CPU)",
        )
        ratio = 1 + statistics.median(reads) / statistics.median(loads)
        print(f"  (navigation + read) / navigation: {ratio:.2f}")


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--heap", type=int, default=0, help="more containers kept alive")
    options = parser.parse_args()
    kept = [{"n": [n]} for n in range(options.heap // 2)]  # a dict and a list each
    server = PageServer()
    try:
        url = server.route("/tracker", tracker(options.rows))
        print(f"1-minute load before: {os.getloadavg()[0]:.2f}")
        asyncio.run(steps(url, options.repeats))
        print(f"1-minute load after: {os.getloadavg()[0]:.2f}")
    finally:
        server.close()
    del kept


if __name__ == "__main__":
    main()
