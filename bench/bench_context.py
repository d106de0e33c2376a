"""Benchmark ``learn_context(url)`` with many sites installed: the first call and hot calls.

Run from the project root::

    .venv/bin/python bench/bench_context.py [--sites N] [--rounds R] [--before DIR] [--json PATH]

The script writes ``--sites`` learnings sites (1,000 by default) to a temporary root: most
with two exact hosts, one in ten with a ``*.suffix`` wildcard, one in ten with a
``host:port`` entry, a few with a broken manifest; each declares three browser tools with
args and returns schemas, a Python tool and a note, as a real site does. Each measurement
runs in a fresh process (so the first call pays what an agent's first call pays: every
manifest read cold in that process), rounds interleaved between contenders when
``--before`` is given, and the figures are medians over rounds with their spread:

* ``import``: ``import ego.site`` (not part of the call, shown for scale);
* ``first call``: the first ``context_for(Learnings(roots=[root]), url)`` of the process;
* ``hot``: the median of repeated calls, for a URL matching an exact host, one matching a
  wildcard, and one matching nothing (the calls take turns);
* ``after an edit``: a call right after the matching site's manifest is rewritten (it must
  see it, so it loads that manifest again);
* ``after another's edit``: a call right after another site's manifest is rewritten.

``--before DIR`` names a folder holding an older ``ego`` package to compare against (for
instance ``git archive HEAD ego | tar -x -C DIR``); its figures come in the same run, round
by round, so load on a shared machine lands on both alike. The load average is printed.
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

#: The URLs timed: one per kind of match, and one that matches nothing.
URLS = {
    "exact": "https://www.site0503.example.com/items?page=2",
    "wildcard": "https://a.b.w0500.test/x",
    "none": "https://nowhere.example.org/",
}
EXPECTED = {"exact": ["site-0503"], "wildcard": ["site-0500"], "none": []}

_TOOL_JS = "async (args) => ({query: args.query, limit: args.limit ?? 5})\n"
_TOOL_PY = "def run(ctx, args):\n    return args\n"


def _domains(index: int) -> list[str]:
    kind = index % 10
    if kind == 0:
        return [f"*.w{index:04d}.test", f"w{index:04d}.test"]
    if kind == 1:
        return [f"127.0.0.1:{10000 + index}"]
    return [f"site{index:04d}.example.com", f"www.site{index:04d}.example.com"]


def _manifest(site_id: str, index: int) -> dict[str, Any]:
    search_args = {
        "query": {"type": "string", "required": True, "description": "what to search for"},
        "limit": {"type": "integer", "default": 5, "examples": [3]},
    }
    returns = {
        "type": "object",
        "required": ["items"],
        "properties": {"items": {"type": "array", "items": {"type": "object"}}},
    }
    return {
        "id": site_id,
        "name": f"Site number {index}",
        "description": f"A benchmark site ({index}) with a few tools and a note.",
        "version": 1,
        "domains": _domains(index),
        "startUrl": f"https://site{index:04d}.example.com/",
        "notes": ["notes/overview.md"],
        "browserTools": {
            name: {
                "description": f"{name} on site {index}",
                "path": f"browser-tools/{name}.js",
                "args": search_args,
                "returns": returns,
                "sideEffect": "read",
            }
            for name in ("search", "list_items", "details")
        },
        "pythonTools": {
            "report": {
                "description": "Summarise",
                "path": "tools/report.py",
                "args": {"query": {"type": "string", "required": True}},
            }
        },
    }


def make_sites(root: Path, count: int) -> None:
    """Write ``count`` sites under ``root`` (every 97th one with a broken manifest)."""
    for index in range(count):
        site_id = f"site-{index:04d}"
        site = root / site_id
        (site / "browser-tools").mkdir(parents=True)
        (site / "tools").mkdir()
        (site / "notes").mkdir()
        for name in ("search", "list_items", "details"):
            (site / "browser-tools" / f"{name}.js").write_text(_TOOL_JS)
        (site / "tools" / "report.py").write_text(_TOOL_PY)
        (site / "notes" / "overview.md").write_text(f"# Site {index}\nHow it works.\n")
        manifest = _manifest(site_id, index)
        if index % 97 == 96:
            manifest["domains"] = "not a list"  # invalid: listed by sites(), never matched
        (site / "manifest.json").write_text(json.dumps(manifest, indent=2))


# --------------------------------------------------------------------------- the worker


def worker(root: Path, calls: int, edits: int) -> dict[str, Any]:
    """One fresh process's figures (run with ``--worker``); prints them as JSON."""
    start = time.perf_counter()
    from ego.learning.catalog.registry import Learnings
    from ego.site import context_for

    import_s = time.perf_counter() - start
    learnings = Learnings(roots=[root])
    start = time.perf_counter()
    first = context_for(learnings, URLS["exact"])
    first_s = time.perf_counter() - start
    assert [site.site_id for site in first.sites] == EXPECTED["exact"], first.sites
    for name, url in URLS.items():  # warm, and check every answer once
        got = [site.site_id for site in context_for(learnings, url).sites]
        assert got == EXPECTED[name], (name, got)
    hot: dict[str, list[int]] = {name: [] for name in URLS}
    for _ in range(calls):
        for name, url in URLS.items():
            start_ns = time.perf_counter_ns()
            context_for(learnings, url)
            hot[name].append(time.perf_counter_ns() - start_ns)
    # An edit of a matching site (its name) is seen by the very next call.
    manifest_file = root / EXPECTED["exact"][0] / "manifest.json"
    original = manifest_file.read_text()
    after_edit: list[float] = []
    try:
        for edit in range(edits):
            data = json.loads(original)
            data["name"] = f"Edited {edit}"
            manifest_file.write_text(json.dumps(data, indent=2))
            start = time.perf_counter()
            context = context_for(learnings, URLS["exact"])
            after_edit.append(time.perf_counter() - start)
            names = [site.name for site in context.sites]
            assert names == [f"Edited {edit}"], names
    finally:
        manifest_file.write_text(original)
    # An edit of another site: what any change costs the next call (and what the index's
    # revalidation costs, once a second at most, when no change notification is at hand).
    other_file = root / "site-0007" / "manifest.json"
    other = other_file.read_text()
    after_other: list[float] = []
    try:
        for edit in range(edits):
            data = json.loads(other)
            data["name"] = f"Edited {edit}"
            other_file.write_text(json.dumps(data, indent=2))
            start = time.perf_counter()
            context_for(learnings, URLS["exact"])
            after_other.append(time.perf_counter() - start)
    finally:
        other_file.write_text(other)
    return {
        "import_s": import_s,
        "first_s": first_s,
        "hot_us": {name: statistics.median(times) / 1000 for name, times in hot.items()},
        "after_edit_ms": statistics.median(after_edit) * 1000 if after_edit else None,
        "after_other_ms": statistics.median(after_other) * 1000 if after_other else None,
    }


# --------------------------------------------------------------------------- the driver


def _run_worker(package_dir: Path, root: Path, calls: int, edits: int) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(package_dir), PYTHONDONTWRITEBYTECODE="1")
    command = [sys.executable, __file__, "--worker", str(root)]
    command += ["--calls", str(calls), "--edits", str(edits)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"worker for {package_dir} failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):9.2f}  ({min(values):.2f}-{max(values):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sites", type=int, default=1000, help="sites installed (1000)")
    parser.add_argument("--rounds", type=int, default=5, help="fresh processes per contender")
    parser.add_argument("--calls", type=int, default=200, help="hot calls per URL per round")
    parser.add_argument("--edits", type=int, default=5, help="edits timed per round")
    parser.add_argument("--before", type=Path, help="a folder holding an older ego package")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        print(json.dumps(worker(args.worker, args.calls, args.edits)))
        return

    here = Path(__file__).resolve().parent.parent
    contenders = {"now": here}
    if args.before is not None:
        if not (args.before / "ego" / "__init__.py").is_file():
            raise SystemExit(f"--before {args.before}: no ego package there")
        contenders = {"before": args.before.resolve(), **contenders}
    load_start = os.getloadavg()
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in contenders}
    with tempfile.TemporaryDirectory(prefix="ego-bench-context-") as tmp:
        root = Path(tmp) / "learnings"
        make_sites(root, args.sites)
        names = list(contenders)
        for round_index in range(args.rounds):
            # The order rotates every round, so neither contender always runs first.
            shift = round_index % len(names)
            for name in names[shift:] + names[:shift]:
                results[name].append(_run_worker(contenders[name], root, args.calls, args.edits))
    load_end = os.getloadavg()

    print(f"learn_context with {args.sites} sites, {args.rounds} rounds (fresh process each)")
    print(f"load average: start {load_start[0]:.2f}, end {load_end[0]:.2f}; cpus {os.cpu_count()}")
    print("median over rounds (lowest-highest round)")
    rows: list[tuple[str, str, float]] = [
        ("import ego.site", "import_s", 1000.0),
        ("first call", "first_s", 1000.0),
        ("after an edit", "after_edit_ms", 1.0),
        ("after another's edit", "after_other_ms", 1.0),
    ]
    summary: dict[str, Any] = {}
    for name, runs in results.items():
        print(f"\n[{name}] {contenders[name]}")
        figures: dict[str, Any] = {}
        for label, key, scale in rows:
            values = [run[key] * scale for run in runs if run[key] is not None]
            if values:
                print(f"  {label:<22} ms {_spread(values)}")
                figures[key] = {"median_ms": statistics.median(values), "all_ms": values}
        for url_name in URLS:
            values = [run["hot_us"][url_name] for run in runs]
            print(f"  hot, {url_name:<17} µs {_spread(values)}")
            figures[f"hot_{url_name}"] = {"median_us": statistics.median(values), "all_us": values}
        summary[name] = figures
    if args.json is not None:
        payload = {"sites": args.sites, "rounds": args.rounds, "load": [load_start, load_end]}
        args.json.write_text(json.dumps({**payload, "results": summary}, indent=2))


if __name__ == "__main__":
    main()
