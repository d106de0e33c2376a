"""Benchmark ``ego catalog search`` with many sites installed: the first search and hot ones.

Run from the project root::

    .venv/bin/python bench/bench_catalog.py [--sites N] [--rounds R] [--calls C]

The sites are bench_context.py's (1,000 by default: three browser tools, a Python tool and a
note each, a few broken manifests). Each round runs in a fresh process, so the first search
pays what ``ego catalog search`` pays: listing the root, reading every manifest and note once
(the domain index's raw read, no schema check), ranking, and loading the sites of the ten
hits shown. Hot searches (the same process, nothing changed) re-stat manifests and notes and
rank again. Figures are medians over rounds, with their spread; the load average is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_context import make_sites

QUERIES = {"words": "search items site 503", "domain": ""}


def worker(root: Path, calls: int) -> dict[str, Any]:
    """One fresh process's figures (run with ``--worker``); prints them as JSON."""
    from ego.learning.catalog.registry import Learnings
    from ego.learning.describe.search import catalog_search

    learnings = Learnings(roots=[root])
    start = time.perf_counter()
    first = catalog_search(learnings, QUERIES["words"])
    first_s = time.perf_counter() - start
    assert first.hits[0].site_id == "site-0503", first.hits[0]
    assert first.total > 1000, first.total
    hot: list[int] = []
    for _ in range(calls):
        start_ns = time.perf_counter_ns()
        catalog_search(learnings, QUERIES["words"])
        hot.append(time.perf_counter_ns() - start_ns)
    start = time.perf_counter()
    by_domain = catalog_search(learnings, "", domain="www.site0503.example.com")
    domain_s = time.perf_counter() - start
    assert {hit.site_id for hit in by_domain.hits} == {"site-0503"}, by_domain.hits
    return {
        "first_ms": first_s * 1000,
        "hot_ms": statistics.median(hot) / 1e6,
        "domain_ms": domain_s * 1000,
    }


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):8.1f}  ({min(values):.1f}-{max(values):.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sites", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.worker:
        print(json.dumps(worker(options.worker, options.calls)))
        return
    with tempfile.TemporaryDirectory(prefix="ego-bench-catalog-") as folder:
        root = Path(folder) / "learnings"
        make_sites(root, options.sites)
        figures: dict[str, list[float]] = {"first_ms": [], "hot_ms": [], "domain_ms": []}
        load = os.getloadavg()[0]
        for _ in range(options.rounds):
            command = [
                sys.executable,
                __file__,
                "--worker",
                str(root),
                "--calls",
                str(options.calls),
            ]
            done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
            if done.returncode != 0:
                raise SystemExit(f"worker failed:\n{done.stderr}")
            for key, value in json.loads(done.stdout).items():
                figures[key].append(value)
        print(
            f"{options.sites} sites, {options.rounds} rounds; 1-minute load {load:.1f} before, "
            f"{os.getloadavg()[0]:.1f} after"
        )
        print(f"first search of a process (ms)    {_spread(figures['first_ms'])}")
        print(f"hot search, same process (ms)     {_spread(figures['hot_ms'])}")
        print(f"--domain search after them (ms)   {_spread(figures['domain_ms'])}")


if __name__ == "__main__":
    main()
