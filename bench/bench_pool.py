"""Benchmark the pool: against the site layer, over 1, 2 and 4 local browsers, and browserless.

Run from the project root::

    .venv/bin/python bench/bench_pool.py [--sections compare,scaling,browserless]
    .venv/bin/python bench/bench_pool.py --sections compare --calls 20000 --per-tab 1,16

Sections:

1. **Against the site layer** (``_pool_compare.py``): a trivial tool over ``--calls`` inputs on
   ``--tabs`` tabs of one local Chromium, with ``tabs * per_tab`` calls in flight for each
   ``--per-tab``: ``site.run_browser_tool(..., tab=t)``, ``BrowserPool.map`` and ``ego batch``
   in steady state (from its output file's growth), in interleaved rounds
   (``--compare-rounds``); calls/s per path with the spread of the rounds, the ratios to the
   site layer (targets: pool >= 0.8, batch >= 0.7) and the client's CPU per call.

The other sections call the demo shop's ``get_product`` read tool (a ``fetch`` of its JSON
API from the page). The shop (``ego.demo.DemoServer``) runs in a process of its own, so that
its request handling neither shares this process's GIL nor hides in its CPU time.

2. **Scaling**: ``BrowserPool(launch=N, per_browser=P)`` for each N, ``pool.map`` over the inputs
   after a warm-up that opens every tab and caches the tool; calls/s, the speed-up over one
   browser, and the CPU time each call costs in ego (this process), in Chrome (every process
   of the pool's Chromes) and in the shop. On a machine with few cores the CPU per call
   bounds the throughput whatever the number of browsers: ``cores / CPU per call``.
3. **browserless against direct** (when ``scripts/browserless install`` was run): a local
   browserless server started by this script, one pool browser attached to it against one
   launched directly, same concurrency: throughput, the median of sequential calls (one in
   flight) whose difference is what browserless's websocket proxy adds to each call, and the
   CPU browserless's node process spends per call.

The demo server's handler leaves Nagle's algorithm on, so each response's body waits for the
client's delayed ACK of its headers (about 40 ms per fetch on Linux). That wait would dominate
every figure here, so the script turns Nagle off in its shop process (``TCP_NODELAY``, as
``disable_nagle_algorithm = True`` on the handler does); ``--keep-nagle`` measures the server
as shipped.

Each section runs in rounds whose order rotates (``--rounds``); the spread of the rounds is
printed beside the median so that noise from other programs shows. The machine's load average
before and after is printed too: on 2 cores, anything else running shows up directly in these
figures. Every process started here is ended in a ``finally``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
from _pool_compare import Compared, compare, compare_report

from ego.demo import DemoState
from ego.pool import BrowserPool

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "browserless"
INSTALL_DIR = Path(os.environ.get("EGO_BROWSERLESS_DIR") or ROOT / ".browserless")

_SHOP = """
import sys, threading
import ego.demo.server as server
if sys.argv[1] == "nodelay":
    server._Handler.disable_nagle_algorithm = True
shop = server.DemoServer(port=0).start()
print(shop.url, flush=True)
sys.stdin.read()  # until the benchmark closes our stdin (or dies)
shop.close()
"""


@contextlib.contextmanager
def shop_process(nodelay: bool) -> Iterator[tuple[str, psutil.Process]]:
    """The demo shop in a child process: its URL and process."""
    child = subprocess.Popen(
        [sys.executable, "-c", _SHOP, "nodelay" if nodelay else "nagle"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        url = child.stdout.readline().strip()
        if not url:
            raise RuntimeError("the demo shop process did not start")
        yield url, psutil.Process(child.pid)
    finally:
        if child.stdin is not None:
            child.stdin.close()
        try:
            child.wait(10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def _inputs(count: int) -> list[dict[str, Any]]:
    ids = sorted(DemoState.load().products)
    return [{"id": ids[i % len(ids)]} for i in range(count)]


def _cpu(processes: Sequence[psutil.Process]) -> float:
    total = 0.0
    for process in processes:
        with contextlib.suppress(psutil.Error):
            times = process.cpu_times()
            total += times.user + times.system + times.children_user + times.children_system
    return total


def _chrome_trees(browsers: BrowserPool) -> list[psutil.Process]:
    found: list[psutil.Process] = []
    for member in browsers.members:
        if member.pid is not None:
            with contextlib.suppress(psutil.Error):
                root = psutil.Process(member.pid)
                found += [root, *root.children(recursive=True)]
    return found


@dataclass
class Figures:
    """One contender's rounds: calls/s, and CPU milliseconds per call by where it was spent."""

    rates: list[float] = field(default_factory=list)
    cpu_ms: dict[str, list[float]] = field(default_factory=dict)
    sequential_ms: list[float] = field(default_factory=list)

    def add_cpu(self, where: str, seconds: float, calls: int) -> None:
        self.cpu_ms.setdefault(where, []).append(seconds * 1000 / calls)


async def _warm(browsers: BrowserPool) -> None:
    # Open every slot's tab on the shop and store the tool in its localStorage first.
    results = await browsers.map("demo-shop", "get_product", _inputs(browsers.concurrency * 3))
    failed = [item.error for item in results if not item.ok]
    if failed:
        raise RuntimeError(f"warm-up failed: {failed[0]}")


async def _measure(
    browsers: BrowserPool,
    inputs: list[dict[str, Any]],
    figures: Figures,
    watched: dict[str, list[psutil.Process]],
) -> None:
    # Chrome's process tree changes (renderers come and go): collect it at both ends.
    watched = {**watched, "chrome": watched.get("chrome", []) + _chrome_trees(browsers)}
    cpu_before = {where: _cpu(processes) for where, processes in watched.items()}
    ego_before = time.process_time()
    started = time.perf_counter()
    results = await browsers.map("demo-shop", "get_product", inputs, ordered=False)
    elapsed = time.perf_counter() - started
    figures.add_cpu("ego", time.process_time() - ego_before, len(inputs))
    for where, processes in watched.items():
        figures.add_cpu(where, _cpu(processes) - cpu_before[where], len(inputs))
    failed = [item.error for item in results if not item.ok]
    if failed:
        raise RuntimeError(f"{len(failed)} calls failed: {failed[0]}")
    figures.rates.append(len(inputs) / elapsed)


async def _sequential_ms(browsers: BrowserPool, calls: int) -> float:
    times = []
    for number in range(calls):
        started = time.perf_counter()
        await browsers.run_browser_tool("demo-shop", "get_product", {"id": 1 + number % 5})
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


async def scaling(args: argparse.Namespace, url: str, shop: psutil.Process) -> dict[int, Figures]:
    counts = [int(part) for part in args.browsers.split(",")]
    inputs = _inputs(args.inputs)
    figures = {count: Figures() for count in counts}
    pools: dict[int, BrowserPool] = {}
    async with contextlib.AsyncExitStack() as stack:
        for count in counts:
            browsers = await stack.enter_async_context(
                BrowserPool(launch=count, per_browser=args.per_browser)
            )
            browsers.set_start_url("demo-shop", url)
            await _warm(browsers)
            pools[count] = browsers
        for round_number in range(args.rounds):
            shift = round_number % len(counts)
            for count in counts[shift:] + counts[:shift]:
                await _measure(pools[count], inputs, figures[count], {"shop": [shop]})
    return figures


class _Browserless:
    """A local browserless server started with ``scripts/browserless start``."""

    def __init__(self) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = int(probe.getsockname()[1])
        self.token = secrets.token_hex(12)
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}?token={self.token}"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [str(SCRIPT), "start", "--port", str(self.port), "--token", self.token],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its own group, ended as a whole in stop()
        )
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{self.port}/active?token={self.token}", timeout=2
                ) as response:
                    if response.status == 204:
                        return
            except (urllib.error.URLError, OSError):
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("browserless did not start (try scripts/browserless start)")
            time.sleep(0.1)

    def node(self) -> list[psutil.Process]:
        if self.process is None:
            return []
        with contextlib.suppress(psutil.Error):
            script = psutil.Process(self.process.pid)
            return [p for p in script.children() if p.name() == "node"]
        return []

    def chromes(self) -> list[psutil.Process]:
        marker = str(INSTALL_DIR / "data" / str(self.port)) + "/"
        found = []
        for process in psutil.process_iter():
            with contextlib.suppress(psutil.Error):
                if marker in " ".join(process.cmdline()):
                    found.append(process)
        return found

    def stop(self) -> list[int]:
        """Stop the server; return the pids of whatever it left running (then killed)."""
        if self.process is None:
            return []
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)
        left = []
        for process in self.chromes():
            with contextlib.suppress(psutil.Error):
                process.kill()
                left.append(process.pid)
        return left


async def versus_browserless(
    args: argparse.Namespace, url: str, shop: psutil.Process, server: _Browserless
) -> dict[str, Figures]:
    inputs = _inputs(args.inputs)
    figures = {"direct": Figures(), "browserless": Figures()}
    async with (
        BrowserPool(launch=1, per_browser=args.per_browser) as direct,
        BrowserPool(endpoints=[server.url], per_browser=args.per_browser) as remote,
    ):
        pools = {"direct": direct, "browserless": remote}
        for browsers in pools.values():
            browsers.set_start_url("demo-shop", url)
            await _warm(browsers)
        for round_number in range(args.rounds):
            names = ["direct", "browserless"][:: 1 if round_number % 2 == 0 else -1]
            for name in names:
                watched = {"shop": [shop]}
                if name == "browserless":
                    # Its Chromes are not ours: count them by their data folder.
                    watched |= {"chrome": server.chromes(), "node": server.node()}
                await _measure(pools[name], inputs, figures[name], watched)
                figures[name].sequential_ms.append(
                    await _sequential_ms(pools[name], args.latency_calls)
                )
    return figures


def _spread(values: list[float], digits: int = 1) -> str:
    median = statistics.median(values)
    return f"{median:.{digits}f} ({min(values):.{digits}f}..{max(values):.{digits}f})"


def _cpu_text(figures: Figures) -> str:
    parts = [
        f"{where} {statistics.median(values):.2f}"
        for where, values in sorted(figures.cpu_ms.items())
    ]
    total = sum(statistics.median(values) for values in figures.cpu_ms.values())
    return f"{total:.2f} = " + ", ".join(parts)


def report(
    args: argparse.Namespace,
    scaled: dict[int, Figures] | None,
    remote: dict[str, Figures] | None,
    skipped: str,
) -> None:
    if scaled is None:
        return
    cores = os.cpu_count() or 1
    print(f"\n2. pool.map over {args.inputs} get_product calls, {args.per_browser} per browser")
    print(f"{'browsers':>8}  {'calls/s (min..max)':>24}  {'speed-up':>8}  CPU ms per call")
    base = statistics.median(scaled[min(scaled)].rates)
    for count, figures in scaled.items():
        speedup = statistics.median(figures.rates) / base
        print(f"{count:>8}  {_spread(figures.rates):>24}  {speedup:7.2f}x  {_cpu_text(figures)}")
    one = scaled[min(scaled)]
    per_call = sum(statistics.median(values) for values in one.cpu_ms.values())
    print(f"CPU bound on {cores} cores: about {cores * 1000 / per_call:.0f} calls/s at most")
    if remote is None:
        print(f"\n3. browserless: skipped ({skipped})")
        return
    print("\n3. browserless against direct, one browser each")
    print(f"{'':12}  {'calls/s (min..max)':>24}  {'sequential ms':>20}  CPU ms per call")
    for name, figures in remote.items():
        print(
            f"{name:12}  {_spread(figures.rates):>24}  "
            f"{_spread(figures.sequential_ms, 2):>20}  {_cpu_text(figures)}"
        )
    direct, through = remote["direct"], remote["browserless"]
    overhead = statistics.median(through.sequential_ms) - statistics.median(direct.sequential_ms)
    ratio = statistics.median(direct.rates) / statistics.median(through.rates)
    print(f"per-call latency browserless adds (sequential medians): {overhead:+.2f} ms")
    print(f"throughput direct / browserless: {ratio:.2f}x")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0] if __doc__ else "")
    parser.add_argument(
        "--sections",
        default="compare,scaling,browserless",
        help="which sections to run, comma-separated: compare, scaling, browserless",
    )
    parser.add_argument("--calls", type=int, default=20000, help="calls per path (section 1)")
    parser.add_argument("--tabs", type=int, default=4, help="tabs of each path (section 1)")
    parser.add_argument(
        "--per-tab", default="1,16", help="calls in flight per tab to compare at (section 1)"
    )
    parser.add_argument("--compare-rounds", type=int, default=5, help="rounds of section 1")
    parser.add_argument(
        "--gathered",
        action="store_true",
        help="also time the site layer with every call in flight at once (section 1)",
    )
    parser.add_argument("--chrome", help="the Chromium binary of section 1 (ego's choice)")
    parser.add_argument("--inputs", type=int, default=1000, help="calls per measurement")
    parser.add_argument("--browsers", default="1,2,4", help="pool sizes to compare")
    parser.add_argument("--per-browser", type=int, default=4, help="calls in flight per browser")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per section")
    parser.add_argument("--latency-calls", type=int, default=200, help="sequential calls")
    parser.add_argument("--no-browserless", action="store_true", help="skip section 3")
    parser.add_argument("--keep-nagle", action="store_true", help="the demo server as shipped")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    sections = {part.strip() for part in args.sections.split(",") if part.strip()}
    unknown = sections - {"compare", "scaling", "browserless"}
    if unknown:
        raise SystemExit(f"unknown sections: {', '.join(sorted(unknown))}")
    load_before = os.getloadavg()[0]
    python = sys.version.split()[0]
    print(f"{os.cpu_count()} cores, load average {load_before:.1f}; python {python}")
    compared: list[Compared] | None = None
    scaled: dict[int, Figures] | None = None
    remote: dict[str, Figures] | None = None
    skipped = ""
    server: _Browserless | None = None
    left: list[int] = []
    if "compare" in sections:
        compared = asyncio.run(
            compare(
                count=args.calls,
                tabs=args.tabs,
                per_tabs=[int(part) for part in args.per_tab.split(",")],
                rounds=args.compare_rounds,
                gathered=args.gathered,
                chrome=args.chrome,
            )
        )
        print("\n" + "\n".join(compare_report(compared, args.calls)))
    if sections & {"scaling", "browserless"}:
        with shop_process(nodelay=not args.keep_nagle) as (url, shop):
            try:
                if "scaling" in sections:
                    scaled = asyncio.run(scaling(args, url, shop))
                if args.no_browserless or "browserless" not in sections:
                    skipped = "not asked for"
                elif not (
                    INSTALL_DIR / "node_modules" / "@browserless.io" / "browserless"
                ).is_dir():
                    skipped = f"not installed in {INSTALL_DIR}: run scripts/browserless install"
                else:
                    server = _Browserless()
                    server.start()
                    remote = asyncio.run(versus_browserless(args, url, shop, server))
            finally:
                if server is not None:
                    left = server.stop()
        report(args, scaled, remote, skipped)
    print(f"\nload average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after")
    if left:
        print(f"browserless left processes behind (killed): {left}")
    if args.json is not None:
        data = {
            "compare": [vars(figure) for figure in compared] if compared else None,
            "calls": args.calls,
            "inputs": args.inputs,
            "scaling": {count: vars(f) for count, f in scaled.items()} if scaled else None,
            "browserless": {k: vars(v) for k, v in remote.items()} if remote else None,
        }
        args.json.write_text(json.dumps(data, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
