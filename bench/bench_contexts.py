"""What an agent costs in memory: a browser context in one shared Chrome against a whole Chrome
per agent.

Run from the project root::

    .venv/bin/python bench/bench_contexts.py [--agents 1,4,8] [--settle 2] [--json PATH]

For each count N of agents, both ways:

* **contexts**: one headless Chrome (``ego.launch()``), and per agent a context of its own
  (``browser.new_context()``) with one tab on the bench page, as ``ego mcp --http`` gives each
  session and a pool with ``contexts=True`` each member;
* **chromes**: one headless Chrome per agent (``ego.launch()`` N times), each with one tab on
  the same page, as one ``ego mcp`` (stdio) process per agent does.

Once every tab loaded and ``--settle`` seconds passed, the memory of every process of those
Chromes (each Chrome's whole process tree: browser, GPU, network, renderers, utilities) is
summed, three samples half a second apart, the median kept: RSS (which counts a page shared
by two processes twice) and PSS (which splits it between them: the fairer sum). Reported per
agent, and the ratio chromes / contexts.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
from pathlib import Path
from typing import Any

import psutil
from _common import ChromeTracker, PageServer, environment, run_benchmark

import ego
from ego.protocol.chrome import find_chrome

MB = 1024 * 1024


def tree_memory(pids: list[int]) -> tuple[int, int, int]:
    """Summed RSS, summed PSS and the process count of the process trees under ``pids``."""
    rss = pss = count = 0
    for pid in pids:
        with contextlib.suppress(psutil.Error):
            root = psutil.Process(pid)
            for process in [root, *root.children(recursive=True)]:
                with contextlib.suppress(psutil.Error):
                    info = process.memory_full_info()
                    rss += info.rss
                    pss += getattr(info, "pss", info.rss)
                    count += 1
    return rss, pss, count


async def sampled(pids: list[int], settle: float) -> dict[str, float]:
    """The median of three samples of :func:`tree_memory`, after ``settle`` seconds."""
    await asyncio.sleep(settle)
    samples = []
    for _ in range(3):
        samples.append(tree_memory(pids))
        await asyncio.sleep(0.5)
    return {
        "rss_mb": statistics.median(s[0] for s in samples) / MB,
        "pss_mb": statistics.median(s[1] for s in samples) / MB,
        "processes": statistics.median(s[2] for s in samples),
    }


async def as_contexts(url: str, agents: int, settle: float, tracker: ChromeTracker) -> Any:
    async with ego.launch() as browser:
        contexts = []
        for _ in range(agents):
            context = await browser.new_context()
            await context.new_tab(url)
            contexts.append(context)
        tracker.note_ego(browser)
        assert browser.process is not None
        measured = await sampled([browser.process.pid], settle)
        for context in contexts:
            await context.close()
        return measured


async def as_chromes(url: str, agents: int, settle: float, tracker: ChromeTracker) -> Any:
    browsers = await asyncio.gather(*(ego.launch() for _ in range(agents)))
    try:
        for browser in browsers:
            await browser.new_tab(url)
            tracker.note_ego(browser)
        pids = [browser.process.pid for browser in browsers if browser.process is not None]
        return await sampled(pids, settle)
    finally:
        await asyncio.gather(*(browser.close() for browser in browsers))


async def benchmark(args: argparse.Namespace, tracker: ChromeTracker) -> dict[str, Any]:
    counts = [int(part) for part in args.agents.split(",")]
    rounds: list[dict[str, Any]] = []
    with PageServer() as server:
        url = server.url
        for agents in counts:
            contexts = await as_contexts(url, agents, args.settle, tracker)
            chromes = await as_chromes(url, agents, args.settle, tracker)
            rounds.append({"agents": agents, "contexts": contexts, "chromes": chromes})
            print(
                f"{agents} agent(s): contexts {contexts['pss_mb']:.0f} MB PSS "
                f"({contexts['rss_mb']:.0f} MB RSS, {contexts['processes']:.0f} processes); "
                f"chromes {chromes['pss_mb']:.0f} MB PSS ({chromes['rss_mb']:.0f} MB RSS, "
                f"{chromes['processes']:.0f} processes)",
                file=sys.stderr,
            )
    return {"rounds": rounds, "environment": environment(find_chrome())}


def add_ratios(results: dict[str, Any]) -> None:
    for each in results["rounds"]:
        agents = each["agents"]
        for way in ("contexts", "chromes"):
            each[way]["pss_mb_per_agent"] = each[way]["pss_mb"] / agents
            each[way]["rss_mb_per_agent"] = each[way]["rss_mb"] / agents
        for size in ("pss", "rss"):
            each[f"ratio_chromes_to_contexts_{size}"] = (
                each["chromes"][f"{size}_mb"] / each["contexts"][f"{size}_mb"]
            )
    rounds = results["rounds"]
    if len(rounds) > 1:
        first, last = rounds[0], rounds[-1]
        extra = last["agents"] - first["agents"]
        for way in ("contexts", "chromes"):
            results[f"{way}_pss_mb_per_extra_agent"] = (
                last[way]["pss_mb"] - first[way]["pss_mb"]
            ) / extra


def report(results: dict[str, Any]) -> str:
    lines = [
        "| agents | contexts in one Chrome: PSS (RSS) | a Chrome per agent: PSS (RSS) | ratio |",
        "| ---: | ---: | ---: | ---: |",
    ]
    for each in results["rounds"]:
        contexts, chromes = each["contexts"], each["chromes"]
        lines.append(
            f"| {each['agents']} | {contexts['pss_mb']:.0f} MB ({contexts['rss_mb']:.0f} MB) | "
            f"{chromes['pss_mb']:.0f} MB ({chromes['rss_mb']:.0f} MB) | "
            f"{each['ratio_chromes_to_contexts_pss']:.1f}x |"
        )
    if "contexts_pss_mb_per_extra_agent" in results:
        lines.append(
            f"\neach agent more: a context {results['contexts_pss_mb_per_extra_agent']:.1f} MB "
            f"PSS, a Chrome {results['chromes_pss_mb_per_extra_agent']:.1f} MB PSS"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", default="1,4,8", help="agent counts, comma-separated")
    parser.add_argument("--settle", type=float, default=2.0, help="seconds before sampling")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()
    return run_benchmark(args, benchmark, add_ratios, report)


if __name__ == "__main__":
    sys.exit(main())
