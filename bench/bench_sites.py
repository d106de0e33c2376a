"""Benchmark ``ego sites --json`` with 1,000 and 10,000 sites: the first listing and the next.

Run from the project root::

    .venv/bin/python bench/bench_sites.py [--sites 1000,10000] [--rounds 3] [--before DIR]
                                          [--distinct]

Writes bench_context.py's sites (three browser tools, a Python tool and a note each; every
97th manifest broken) to a temporary workspace and times the whole command in a fresh process,
as a shell runs it: Python's start, ego's import, every manifest read and checked, each site
summarised with its tools' health, the JSON printed. Each round gives the command a state
folder of its own: ``first`` is the first listing with that state (nothing remembered yet),
``again`` the listing right after it (what each later ``ego sites`` costs while the manifests
stay as they are). ``empty`` is the same command on an empty workspace: the start and import
every listing pays, the floor of the others. Beside each wall time stands the CPU time the
command used: on a machine others share it moves less with their load.

bench_context.py's sites share their tools' schemas; ``--distinct`` gives every site schemas
of its own (a description naming the site), so that nothing checked for one site serves
another.

``--before DIR`` names a folder holding an older ``ego`` package (for instance
``git archive HEAD ego learnings skills pyproject.toml | tar -x -C DIR``); it runs the same
commands, round by round in turn with this checkout, so load on a shared machine lands on
both alike. The load average is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_context import make_sites

#: What one listing may take: the goal for 10,000 sites listed again (seconds).
GOAL_S = 2.0


def _distinct(root: Path) -> None:
    """Give every site's tools schemas of their own (a description naming the site)."""
    for manifest_file in root.glob("*/manifest.json"):
        manifest = json.loads(manifest_file.read_text())
        site_id = manifest["id"]
        for kind in ("browserTools", "pythonTools"):
            for tool in manifest.get(kind, {}).values():
                tool["args"]["query"]["description"] = f"what to search for on {site_id}"
                if isinstance(tool.get("returns"), dict):
                    tool["returns"]["description"] = f"what {site_id} answers"
        manifest_file.write_text(json.dumps(manifest, indent=2))


def _listing(package_dir: Path, workspace: Path, state: Path) -> tuple[float, float, int]:
    """Seconds one ``ego sites --json`` takes in a fresh process (wall, and the CPU time it
    used), and how many sites it lists."""
    env = dict(
        os.environ,
        PYTHONPATH=str(package_dir),
        PYTHONDONTWRITEBYTECODE="1",
        EGO_STATE_DIR=str(state),
    )
    env.pop("EGO_WORKSPACE", None)
    # -P: the working directory (this checkout) must not come before PYTHONPATH's package.
    command = [sys.executable, "-P", "-m", "ego", "sites", "--json", "--workspace", str(workspace)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=3600)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        raise SystemExit(f"ego sites for {package_dir} failed:\n{done.stderr}")
    return seconds, cpu, len(json.loads(done.stdout)["sites"])


def _package_of(package_dir: Path) -> Path:
    """Where ``import ego`` leads with ``package_dir`` on PYTHONPATH, as _listing runs it."""
    env = dict(os.environ, PYTHONPATH=str(package_dir))
    probe = [sys.executable, "-P", "-c", "import ego; print(ego.__file__)"]
    done = subprocess.run(probe, env=env, capture_output=True, text=True, timeout=120, check=True)
    return Path(done.stdout.strip()).parent


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):8.2f}  ({min(values):.2f}-{max(values):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sites", default="1000,10000", help="site counts (1000,10000)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per count (3)")
    parser.add_argument("--before", type=Path, help="a folder holding an older ego package")
    parser.add_argument("--distinct", action="store_true", help="no schema shared by two sites")
    args = parser.parse_args()
    here = Path(__file__).resolve().parent.parent
    contenders = {"now": here}
    if args.before is not None:
        if not (args.before / "ego" / "__init__.py").is_file():
            raise SystemExit(f"--before {args.before}: no ego package there")
        contenders = {"before": args.before.resolve(), **contenders}
    for name, package_dir in contenders.items():
        found = _package_of(package_dir)
        if found != package_dir / "ego":
            raise SystemExit(f"{name}: ego is imported from {found}, not {package_dir / 'ego'}")
    counts = [int(count) for count in args.sites.split(",")]
    names = list(contenders)
    for count in counts:
        load_start = os.getloadavg()
        figures: dict[tuple[str, str], list[float]] = {}
        listed: dict[str, set[int]] = {name: set() for name in names}
        with tempfile.TemporaryDirectory(prefix="ego-bench-sites-") as tmp:
            workspace, empty = Path(tmp) / "workspace", Path(tmp) / "empty"
            make_sites(workspace / "learnings", count)
            (empty / "learnings").mkdir(parents=True)
            if args.distinct:
                _distinct(workspace / "learnings")
            for round_index in range(args.rounds):
                # The order turns every round, so neither contender always runs first.
                shift = round_index % len(names)
                for name in names[shift:] + names[:shift]:
                    state = Path(tmp) / f"state-{name}-{round_index}"
                    for kind in ("first", "again"):
                        seconds, cpu, sites = _listing(contenders[name], workspace, state)
                        figures.setdefault((name, kind), []).append(seconds)
                        figures.setdefault((name, f"{kind} cpu"), []).append(cpu)
                        listed[name].add(sites)
                    seconds, cpu, _ = _listing(contenders[name], empty, Path(tmp) / "state-e")
                    figures.setdefault((name, "empty"), []).append(seconds)
                    figures.setdefault((name, "empty cpu"), []).append(cpu)
        load_end = os.getloadavg()
        schemas = "a schema of its own per site" if args.distinct else "schemas shared"
        print(f"\nego sites --json, {count:,} sites ({schemas}), {args.rounds} rounds")
        print(
            f"load average: start {load_start[0]:.2f}, end {load_end[0]:.2f}; cpus {os.cpu_count()}"
        )
        print("seconds, median over rounds (lowest-highest round): wall, and the CPU time used")
        for name in names:
            print(f"[{name}] {contenders[name]}  (sites listed: {sorted(listed[name])})")
            for kind in ("first", "again", "empty"):
                wall, cpu = figures[(name, kind)], figures[(name, f"{kind} cpu")]
                print(f"  {kind:<6} wall {_spread(wall)}   cpu {_spread(cpu)}")
        if "before" in contenders:
            for kind in ("first", "again"):
                for measure in (kind, f"{kind} cpu"):
                    ratio = statistics.median(figures[("now", measure)]) / statistics.median(
                        figures[("before", measure)]
                    )
                    print(f"  now / before, {measure:<10} {ratio:.3f}")
        again = statistics.median(figures[("now", "again")])
        again_cpu = statistics.median(figures[("now", "again cpu")])
        print(
            f"{count:,} sites listed again: {again:.2f} s wall, {again_cpu:.2f} s CPU "
            f"(target {GOAL_S:g} s; {'met' if again <= GOAL_S else 'not met'}; "
            f"load {load_start[0]:.1f}-{load_end[0]:.1f} on {os.cpu_count()} cpus)"
        )


if __name__ == "__main__":
    main()
