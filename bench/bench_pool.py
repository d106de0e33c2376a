"""Benchmark ``pool.map`` throughput: 1, 2 and 4 local browsers, and browserless against direct.

Run from the project root::

    .venv/bin/python bench/bench_pool.py [--inputs 1000] [--browsers 1,2,4] [--per-browser 4]

Every call is the demo shop's ``get_product`` read tool (a ``fetch`` of its JSON API from the
page) against ``ego.demo.DemoServer`` served from a thread of this script. Sections:

1. **Scaling**: ``pool(launch=N, per_browser=P)`` for each N, ``pool.map`` over the inputs
   after a warm-up that opens every tab and caches the tool; calls/s and the speed-up over
   one browser.
2. **browserless against direct** (when ``scripts/browserless install`` was run): a local
   browserless server started by this script, one pool browser attached to it against one
   launched directly, same concurrency: throughput, and the median of sequential calls (one
   in flight), whose difference is what browserless's websocket proxy adds to each call.

The demo server's handler leaves Nagle's algorithm on, so each response's body waits for
the client's delayed ACK of its headers (about 40 ms per fetch on Linux). That wait would
dominate every figure here, so the script turns Nagle off for its server (``TCP_NODELAY``,
as ``disable_nagle_algorithm = True`` on the handler does); ``--keep-nagle`` measures the
server as shipped.

Each section runs in rounds whose order rotates (``--rounds``); the best and worst rounds are
printed beside the median so that noise from other programs on the machine shows. The
machine's load average before and after is printed too: on 2 cores, anything else running
shows up directly in these figures.
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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psutil

from ego.demo import DemoServer
from ego.pool import BrowserPool, pool

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "browserless"
INSTALL_DIR = Path(os.environ.get("EGO_BROWSERLESS_DIR") or ROOT / ".browserless")


def _inputs(server: DemoServer, count: int) -> list[dict[str, Any]]:
    ids = sorted(server.state.products)
    return [{"id": ids[i % len(ids)]} for i in range(count)]


async def _warm(browsers: BrowserPool, server: DemoServer) -> None:
    # Open every slot's tab on the shop and store the tool in its localStorage first.
    warm = _inputs(server, browsers.concurrency * 3)
    results = await browsers.map("demo-shop", "get_product", warm)
    failed = [item.error for item in results if not item.ok]
    if failed:
        raise RuntimeError(f"warm-up failed: {failed[0]}")


async def _throughput(browsers: BrowserPool, inputs: list[dict[str, Any]]) -> float:
    started = time.perf_counter()
    results = await browsers.map("demo-shop", "get_product", inputs, ordered=False)
    elapsed = time.perf_counter() - started
    failed = [item.error for item in results if not item.ok]
    if failed:
        raise RuntimeError(f"{len(failed)} calls failed: {failed[0]}")
    return len(inputs) / elapsed


async def _sequential_ms(browsers: BrowserPool, calls: int) -> float:
    times = []
    for number in range(calls):
        started = time.perf_counter()
        await browsers.run_browser_tool("demo-shop", "get_product", {"id": 1 + number % 5})
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


async def scaling(args: argparse.Namespace, server: DemoServer) -> dict[int, list[float]]:
    counts = [int(part) for part in args.browsers.split(",")]
    inputs = _inputs(server, args.inputs)
    rates: dict[int, list[float]] = {count: [] for count in counts}
    pools: dict[int, BrowserPool] = {}
    async with contextlib.AsyncExitStack() as stack:
        for count in counts:
            browsers = await stack.enter_async_context(
                pool(launch=count, per_browser=args.per_browser)
            )
            browsers.set_start_url("demo-shop", server.url)
            await _warm(browsers, server)
            pools[count] = browsers
        for round_number in range(args.rounds):
            order = counts[round_number % len(counts) :] + counts[: round_number % len(counts)]
            for count in order:
                rates[count].append(await _throughput(pools[count], inputs))
    return rates


class _Browserless:
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
            start_new_session=True,
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
        marker = str(INSTALL_DIR / "data" / str(self.port)) + "/"
        left = []
        for process in psutil.process_iter():
            with contextlib.suppress(psutil.Error):
                if marker in " ".join(process.cmdline()):
                    process.kill()
                    left.append(process.pid)
        return left


async def versus_browserless(
    args: argparse.Namespace, server: DemoServer, url: str
) -> dict[str, list[float]]:
    inputs = _inputs(server, args.inputs)
    figures: dict[str, list[float]] = {
        "direct_rate": [],
        "browserless_rate": [],
        "direct_ms": [],
        "browserless_ms": [],
    }
    async with (
        pool(launch=1, per_browser=args.per_browser) as direct,
        pool(endpoints=[url], per_browser=args.per_browser) as remote,
    ):
        pools = {"direct": direct, "browserless": remote}
        for browsers in pools.values():
            browsers.set_start_url("demo-shop", server.url)
            await _warm(browsers, server)
        for round_number in range(args.rounds):
            names = ["direct", "browserless"][:: 1 if round_number % 2 == 0 else -1]
            for name in names:
                figures[f"{name}_rate"].append(await _throughput(pools[name], inputs))
                figures[f"{name}_ms"].append(await _sequential_ms(pools[name], args.latency_calls))
    return figures


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):8.1f}  ({min(values):.1f} .. {max(values):.1f})"


def report(
    args: argparse.Namespace,
    rates: dict[int, list[float]],
    remote: dict[str, list[float]] | None,
    skipped: str,
) -> None:
    print(f"\npool.map over {args.inputs} get_product calls, {args.per_browser} per browser")
    print(f"{'browsers':>8}  {'calls/s median (min .. max)':>30}  speed-up")
    base = statistics.median(rates[min(rates)])
    for count, values in rates.items():
        print(f"{count:>8}  {_spread(values):>30}  {statistics.median(values) / base:6.2f}x")
    if remote is None:
        print(f"\nbrowserless: skipped ({skipped})")
        return
    print("\nbrowserless against direct, one browser each")
    print(f"{'':12}  {'calls/s':>30}  {'sequential call, ms':>30}")
    for name in ("direct", "browserless"):
        rate, ms = remote[f"{name}_rate"], remote[f"{name}_ms"]
        print(f"{name:12}  {_spread(rate):>30}  {_spread(ms):>30}")
    overhead = statistics.median(remote["browserless_ms"]) - statistics.median(remote["direct_ms"])
    ratio = statistics.median(remote["direct_rate"]) / statistics.median(remote["browserless_rate"])
    print(f"per-call overhead of browserless (sequential medians): {overhead:+.2f} ms")
    print(f"throughput direct / browserless: {ratio:.2f}x")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0] if __doc__ else "")
    parser.add_argument("--inputs", type=int, default=1000, help="calls per measurement")
    parser.add_argument("--browsers", default="1,2,4", help="pool sizes to compare")
    parser.add_argument("--per-browser", type=int, default=4, help="calls in flight per browser")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per section")
    parser.add_argument("--latency-calls", type=int, default=200, help="sequential calls")
    parser.add_argument("--no-browserless", action="store_true", help="skip section 2")
    parser.add_argument("--keep-nagle", action="store_true", help="the demo server as shipped")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if not args.keep_nagle:
        from ego.demo import server as demo_server

        # See the module docstring: without this, each fetch waits ~40 ms for a delayed ACK.
        demo_server._Handler.disable_nagle_algorithm = True
    load_before = os.getloadavg()[0]
    python = sys.version.split()[0]
    print(f"{os.cpu_count()} cores, load average {load_before:.1f}; python {python}")
    server = DemoServer(port=0).start()
    remote: dict[str, list[float]] | None = None
    skipped = ""
    browserless: _Browserless | None = None
    try:
        rates = asyncio.run(scaling(args, server))
        if args.no_browserless:
            skipped = "--no-browserless"
        elif not (INSTALL_DIR / "node_modules" / "@browserless.io" / "browserless").is_dir():
            skipped = f"not installed in {INSTALL_DIR}: run scripts/browserless install"
        else:
            browserless = _Browserless()
            browserless.start()
            remote = asyncio.run(versus_browserless(args, server, browserless.url))
    finally:
        left = browserless.stop() if browserless is not None else []
        server.close()
    report(args, rates, remote, skipped)
    print(f"\nload average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after")
    if left:
        print(f"browserless left processes behind (killed): {left}")
    if args.json is not None:
        args.json.write_text(
            json.dumps({"scaling": rates, "browserless": remote, "inputs": args.inputs}, indent=2)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
