"""``ego run`` of a hot tool against the browser ``ego launch`` keeps: wall time per command.

Run from the project root::

    .venv/bin/python bench/bench_cli.py              # 20 runs of each
    .venv/bin/python bench/bench_cli.py --runs 50 --json /tmp/cli.json

It serves the demo shop, starts ``ego launch --detach`` (its own profile and state folder,
under a temporary directory), warms the tool up once, then times whole processes, interleaved
round by round so that a busy machine slows every kind alike:

- ``python -c pass``: Python's start-up;
- ``python -c "import ego"``: start-up plus ``import ego`` (the exception types only);
- ``ego --help``: start-up plus ego's command line listing its commands (none imported);
- ``ego --version``: start-up plus importing ego's command line;
- ``ego run demo-shop get_product --arg id=1``: one hot Call in the kept browser, made by its
  ``ego launch`` process for this one (the call service), print, exit;
- the same with ``--endpoint`` naming the kept browser: the command checks the call, attaches
  and runs it in its own process (the way without the service);
- the same with ``--new-browser`` (a cold Chrome per run), for comparison (fewer runs);
- ``ego run demo-shop get_prodct``: a typo, refused before any browser is reached (exit 3).

The targets, each a median beyond Python's start-up: ``import ego`` at most 0.10 s, ``ego
--help`` and a hot ``ego run`` at most 0.15 s. Exits 1 when one is missed, 0 otherwise. ``ego
close`` ends the Chrome at the end, and whatever is left is killed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

from ego.demo import DemoServer

EGO = [sys.executable, "-m", "ego"]
#: The most each may take beyond Python's start-up, in seconds (the median).
TARGETS = {
    "python -c 'import ego'": 0.10,
    "ego --help": 0.15,
    "ego run (kept browser, hot)": 0.15,
}


def timed(
    argv: list[str], env: dict[str, str], code: int = 0
) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.perf_counter()
    done = subprocess.run(
        argv, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )
    elapsed = time.perf_counter() - started
    if done.returncode != code:
        raise SystemExit(f"$ {' '.join(argv)} exited {done.returncode}:\n{done.stderr}")
    return elapsed, done


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "median": statistics.median(ordered),
        "p90": ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))],
        "min": ordered[0],
        "runs": len(ordered),
    }


def end_kept(state_dir: Path) -> None:
    """Kill whatever the kept browser left (after ``ego close``, normally nothing)."""
    with contextlib.suppress(OSError, ValueError, KeyError):
        record = json.loads((state_dir / "browser.json").read_text())
        for pid in (record["owner"], record["pid"]):
            with contextlib.suppress(psutil.Error):
                root = psutil.Process(pid)
                for process in [root, *root.children(recursive=True)]:
                    with contextlib.suppress(psutil.Error):
                        process.kill()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="timed runs of each command")
    parser.add_argument("--cold-runs", type=int, default=5, help="timed --new-browser runs")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    options = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="ego-bench-cli-") as folder, DemoServer() as shop:
        root = Path(folder)
        env = {
            **{k: v for k, v in os.environ.items() if k not in ("EGO_ENDPOINT", "EGO_NEW_BROWSER")},
            "EGO_STATE_DIR": str(root / "state"),
            "EGO_PROFILES_DIR": str(root / "profiles"),
        }
        run = [*EGO, "run", "demo-shop", "get_product", "--arg", "id=1"]
        try:
            timed([*EGO, "launch", "--detach", "--profile", "bench"], env)
            _, warm = timed([*run, "--url", shop.url], env)  # opens the shop, stores the tool
            assert json.loads(warm.stdout)["id"] == 1
            endpoint = json.loads((root / "state" / "browser.json").read_text())["endpoint"]
            kinds: dict[str, list[str]] = {
                "python -c pass": [sys.executable, "-c", "pass"],
                "python -c 'import ego'": [sys.executable, "-c", "import ego"],
                "ego --help": [*EGO, "--help"],
                "ego --version": [*EGO, "--version"],
                "ego run (kept browser, hot)": run,
                "ego run --endpoint (in-process)": [*run, "--endpoint", endpoint],
            }
            typo = "ego run with a typo (refused, exit 3)"
            kinds[typo] = [*EGO, "run", "demo-shop", "get_prodct"]
            times: dict[str, list[float]] = {name: [] for name in kinds}
            for _ in range(options.runs):
                for name, argv in kinds.items():
                    times[name].append(timed(argv, env, 3 if name == typo else 0)[0])
            cold = "ego run --new-browser (cold Chrome)"
            times[cold] = [
                timed([*run, "--new-browser", "--url", shop.url], env)[0]
                for _ in range(options.cold_runs)
            ]
        finally:
            subprocess.run([*EGO, "close"], env=env, capture_output=True, timeout=60)
            end_kept(root / "state")

    figures = {name: summary(values) for name, values in times.items()}
    python = figures["python -c pass"]["median"]
    imported = figures["ego --version"]["median"]
    hot = figures["ego run (kept browser, hot)"]["median"]
    alone = figures["ego run --endpoint (in-process)"]["median"]
    print(f"{'command':40} {'median':>8} {'p90':>8} {'min':>8} {'beyond python':>14}")
    for name, figure in figures.items():
        print(
            f"{name:40} {figure['median'] * 1000:6.0f}ms {figure['p90'] * 1000:6.0f}ms "
            f"{figure['min'] * 1000:6.0f}ms {(figure['median'] - python) * 1000:12.0f}ms"
        )
    print(
        f"\nego run, hot: of its {(hot - python) * 1000:.0f} ms beyond Python, importing ego's "
        f"CLI takes {(imported - python) * 1000:.0f} ms; reaching the service, the call and "
        f"printing {(hot - imported) * 1000:.0f} ms. In its own process (--endpoint): "
        f"{(alone - python) * 1000:.0f} ms beyond Python"
    )
    missed = []
    for name, target in TARGETS.items():
        beyond = figures[name]["median"] - python
        verdict = "PASS" if beyond <= target else "FAIL"
        if verdict == "FAIL":
            missed.append(name)
        print(f"target: {name} at most {target * 1000:.0f} ms beyond Python: "
              f"{beyond * 1000:.0f} ms, {verdict}")  # fmt: skip
    if options.json:
        report: dict[str, Any] = {
            "figures": figures,
            "beyond_python_startup": {name: figures[name]["median"] - python for name in TARGETS},
            "targets": TARGETS,
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load": os.getloadavg() if hasattr(os, "getloadavg") else None,
        }
        options.json.write_text(json.dumps(report, indent=2))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
