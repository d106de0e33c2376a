"""Benchmark ``Tab.evaluate`` against a raw CDP loop and Playwright, in one run.

Run from the project root::

    .venv/bin/python bench/bench_evaluate.py [--calls N] [--inflight M] [--json PATH]

Three contenders evaluate ``1+1`` on the same tiny page, served from a thread of this script on
127.0.0.1, with the same Chromium binary:

* ``raw``: a minimal websockets + orjson client on its own websocket and its own flattened
  session (``Target.attachToTarget flatten=true``) attached to ego's page;
* ``ego``: ``Tab.evaluate``;
* ``playwright``: Playwright for Python's ``page.evaluate`` (async API) on a Chromium that
  Playwright launched itself from the same binary.

Sections: (1) sequential latency, (2) throughput with M calls in flight, (3) Chrome start to a
usable connection. The contenders run in interleaved rounds (the order rotates every round)
so that machine noise hits all of them alike. Every Chrome started here is ended in a
``finally`` and the script checks that no new Chromium process is left when it exits.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import http.server
import importlib.metadata
import os
import platform
import statistics
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
import psutil
from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed

import ego

if TYPE_CHECKING:
    from playwright.async_api import Playwright

EXPRESSION = "1+1"
EXPECTED = 2
PAGE = (
    b"<!doctype html><html><head><meta charset='utf-8'><title>ego bench</title></head>"
    b"<body><p>ego bench page</p></body></html>"
)

# The targets from the issue.
TARGET_EGO_OVER_RAW = 1.3  # ego median latency at most 1.3x the raw loop's
TARGET_PW_OVER_EGO = 2.0  # Playwright median latency at least 2x ego's
TARGET_THROUGHPUT = 4.0  # ego calls/s with M in flight at least 4x Playwright's

Call = Callable[[], Awaitable[Any]]


# --------------------------------------------------------------------------- the page


class _PageHandler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path.split("?", 1)[0] in ("/", "/index.html"):
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(PAGE)))
            self.end_headers()
            self.wfile.write(PAGE)
        else:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep the benchmark output clean


class PageServer:
    """A tiny HTML page on 127.0.0.1, served from a daemon thread."""

    def __init__(self) -> None:
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _PageHandler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/"

    def __enter__(self) -> PageServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


# --------------------------------------------------------------------------- raw CDP client


class RawCDP:
    """The minimal CDP client: one websocket, orjson, one flattened session.

    Sequential calls send and then read until the matching id, with nothing in between.
    For concurrent calls :meth:`start_reader` runs a reader task that resolves futures by id.
    """

    def __init__(self, ws: ClientConnection) -> None:
        self._ws = ws
        self._next_id = 0
        self.session_id = ""
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._reader: asyncio.Task[None] | None = None

    @classmethod
    async def attach(cls, ws_url: str, target_id: str) -> RawCDP:
        ws = await ws_connect(
            ws_url, max_size=None, compression=None, ping_interval=None, user_agent_header=None
        )
        client = cls(ws)
        try:
            result = await client._call_direct(
                {
                    "method": "Target.attachToTarget",
                    "params": {"targetId": target_id, "flatten": True},
                }
            )
            client.session_id = result["result"]["sessionId"]
        except BaseException:
            await ws.close()
            raise
        return client

    async def _call_direct(self, message: dict[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        message_id = self._next_id
        message["id"] = message_id
        await self._ws.send(orjson.dumps(message), text=True)
        while True:
            answer: dict[str, Any] = orjson.loads(await self._ws.recv(decode=False))
            if answer.get("id") == message_id:
                if "error" in answer:
                    raise RuntimeError(f"raw CDP error: {answer['error']}")
                return answer

    async def evaluate(self, expression: str) -> Any:
        """Sequential: send Runtime.evaluate, read frames until the matching id."""
        self._next_id += 1
        message_id = self._next_id
        await self._ws.send(
            orjson.dumps(
                {
                    "id": message_id,
                    "method": "Runtime.evaluate",
                    "sessionId": self.session_id,
                    "params": {"expression": expression, "returnByValue": True},
                }
            ),
            text=True,
        )
        while True:
            answer = orjson.loads(await self._ws.recv(decode=False))
            if answer.get("id") == message_id:
                return answer["result"]["result"].get("value")

    async def start_reader(self) -> None:
        self._reader = asyncio.get_running_loop().create_task(self._read_loop())

    async def stop_reader(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
            self._reader = None

    async def _read_loop(self) -> None:
        while True:
            answer = orjson.loads(await self._ws.recv(decode=False))
            future = self._pending.pop(answer.get("id", -1), None)
            if future is not None and not future.done():
                future.set_result(answer)

    async def evaluate_concurrent(self, expression: str) -> Any:
        """Concurrent: register a future by id; the reader task resolves it."""
        self._next_id += 1
        message_id = self._next_id
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[message_id] = future
        await self._ws.send(
            orjson.dumps(
                {
                    "id": message_id,
                    "method": "Runtime.evaluate",
                    "sessionId": self.session_id,
                    "params": {"expression": expression, "returnByValue": True},
                }
            ),
            text=True,
        )
        answer = await future
        return answer["result"]["result"].get("value")

    async def close(self) -> None:
        await self.stop_reader()
        await self._ws.close()


# --------------------------------------------------------------------------- measurement


@dataclass
class Contender:
    name: str
    sequential: Call
    concurrent: Call
    before_concurrent: Callable[[], Awaitable[None]] | None = None
    after_concurrent: Callable[[], Awaitable[None]] | None = None
    latencies_ns: list[int] = field(default_factory=list)
    stream_seconds: list[float] = field(default_factory=list)
    stream_calls: list[int] = field(default_factory=list)


def rotated(items: Sequence[Contender], shift: int) -> list[Contender]:
    shift %= len(items)
    return [*items[shift:], *items[:shift]]


def split(total: int, parts: int) -> list[int]:
    parts = max(1, min(parts, total))
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


async def timed_calls(call: Call, count: int, into: list[int]) -> None:
    clock = time.perf_counter_ns
    for _ in range(count):
        start = clock()
        await call()
        into.append(clock() - start)


async def stream(call: Call, total: int, inflight: int) -> float:
    """Run ``total`` calls with at most ``inflight`` at once; return the wall time in s."""
    remaining = total

    async def worker() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            await call()

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(min(inflight, total))))
    return time.perf_counter() - start


async def check(contender: Contender) -> None:
    """Both call styles must really evaluate the expression."""
    values = [await contender.sequential()]
    if contender.before_concurrent is not None:
        await contender.before_concurrent()
    try:
        values.append(await contender.concurrent())
    finally:
        if contender.after_concurrent is not None:
            await contender.after_concurrent()
    if values != [EXPECTED, EXPECTED]:
        raise SystemExit(f"{contender.name}: {EXPRESSION} gave {values!r}, not {EXPECTED}")


async def run_sequential(contenders: list[Contender], calls: int, warmup: int, rounds: int) -> None:
    for contender in contenders:  # warm-up, not recorded
        await timed_calls(contender.sequential, warmup, [])
    for index, chunk in enumerate(split(calls, rounds)):
        for contender in rotated(contenders, index):
            gc.collect()
            await timed_calls(contender.sequential, chunk, contender.latencies_ns)


async def run_throughput(
    contenders: list[Contender], total: int, inflight: int, warmup: int, rounds: int
) -> None:
    async def one(contender: Contender, count: int) -> float:
        if contender.before_concurrent is not None:
            await contender.before_concurrent()
        try:
            return await stream(contender.concurrent, count, inflight)
        finally:
            if contender.after_concurrent is not None:
                await contender.after_concurrent()

    for contender in contenders:
        await one(contender, max(warmup, inflight))
    for index, chunk in enumerate(split(total, rounds)):
        for contender in rotated(contenders, index):
            gc.collect()
            contender.stream_seconds.append(await one(contender, chunk))
            contender.stream_calls.append(chunk)


async def ego_start(chrome: str, tracker: ChromeTracker) -> float:
    start = time.perf_counter()
    browser = await ego.launch(executable=chrome)
    try:
        tab = await browser.new_tab()
        elapsed = time.perf_counter() - start
        tracker.note_ego(browser)
        if await tab.evaluate(EXPRESSION) != EXPECTED:  # usable, checked outside the timing
            raise SystemExit("ego start: the new tab did not evaluate")
    finally:
        await browser.close()
    return elapsed


async def playwright_start(pw: Playwright, chrome: str, tracker: ChromeTracker) -> float:
    start = time.perf_counter()
    browser = await pw.chromium.launch(
        executable_path=chrome, headless=True, args=chrome_args_for_playwright()
    )
    try:
        page = await browser.new_page()
        elapsed = time.perf_counter() - start
        tracker.note_playwright()
        if await page.evaluate(EXPRESSION) != EXPECTED:
            raise SystemExit("playwright start: the new page did not evaluate")
    finally:
        await browser.close()
    return elapsed


def chrome_args_for_playwright() -> list[str]:
    running_as_root = hasattr(os, "geteuid") and os.geteuid() == 0
    return ["--no-sandbox"] if running_as_root else []


# --------------------------------------------------------------------------- reporting


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(fraction * len(ordered) + 0.5)))
    return ordered[rank - 1]


def latency_stats(latencies_ns: Sequence[int]) -> dict[str, float]:
    micros = [value / 1000 for value in latencies_ns]
    return {
        "calls": len(micros),
        "median_us": statistics.median(micros),
        "p99_us": percentile(micros, 0.99),
        "mean_us": statistics.fmean(micros),
        "min_us": min(micros),
    }


def throughput_stats(contender: Contender) -> dict[str, float]:
    rates = [c / s for c, s in zip(contender.stream_calls, contender.stream_seconds, strict=True)]
    return {
        "calls": sum(contender.stream_calls),
        "seconds": sum(contender.stream_seconds),
        "calls_per_s": sum(contender.stream_calls) / sum(contender.stream_seconds),
        "round_min_calls_per_s": min(rates),
        "round_max_calls_per_s": max(rates),
    }


def verdict(ok: bool | None) -> str:
    return "SKIP" if ok is None else ("PASS" if ok else "MISS")


def _is_chromium(process: psutil.Process) -> bool:
    try:
        return "chrom" in process.name().lower()
    except psutil.Error:
        return False


class ChromeTracker:
    """Remembers every Chromium process this run started, to check that none outlives it.

    Other programs on the machine may run their own Chromes, so a before/after diff of
    ``pgrep chromium`` is not enough: the tracker records (pid, start time) of the process
    trees of the Chromes started here (ego's, and Playwright's under its node driver).
    """

    def __init__(self) -> None:
        self._seen: dict[int, float] = {}

    def _add(self, processes: Sequence[psutil.Process]) -> None:
        for process in processes:
            with contextlib.suppress(psutil.Error):
                if _is_chromium(process):
                    self._seen[process.pid] = process.create_time()

    def note_ego(self, browser: ego.Browser) -> None:
        if browser.process is None:
            return
        with contextlib.suppress(psutil.Error):
            root = psutil.Process(browser.process.pid)
            self._add([root, *root.children(recursive=True)])

    def note_playwright(self) -> None:
        """Chromes under this process: Playwright's driver starts them as its children."""
        self._add(psutil.Process().children(recursive=True))

    @property
    def count(self) -> int:
        return len(self._seen)

    def leftovers(self, wait: float = 5.0) -> list[str]:
        """Tracked processes still alive after up to ``wait`` seconds, described."""
        deadline = time.monotonic() + wait
        while True:
            alive = []
            for pid, created in self._seen.items():
                with contextlib.suppress(psutil.Error):
                    process = psutil.Process(pid)
                    if process.create_time() == created and process.status() not in (
                        psutil.STATUS_ZOMBIE,
                        psutil.STATUS_DEAD,
                    ):
                        alive.append(process)
            if not alive or time.monotonic() >= deadline:
                break
            time.sleep(0.1)
        described = []
        for process in alive:
            with contextlib.suppress(psutil.Error):
                described.append(f"{process.pid} {' '.join(process.cmdline())[:120]}")
        return described


def version_of(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


# --------------------------------------------------------------------------- main


async def benchmark(args: argparse.Namespace, tracker: ChromeTracker) -> dict[str, Any]:
    chrome = args.chrome or ego.find_chrome()
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        async_playwright = None  # type: ignore[assignment]
        print("playwright is not installed (pip install -e '.[bench]'): its columns are skipped")

    results: dict[str, Any] = {
        "environment": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "chrome_binary": chrome,
            "ego": ego.__version__,
            "playwright": version_of("playwright"),
            "websockets": version_of("websockets"),
            "orjson": version_of("orjson"),
        },
        "config": {
            "expression": EXPRESSION,
            "calls": args.calls,
            "warmup": args.warmup,
            "rounds": args.rounds,
            "inflight": args.inflight,
            "stream_calls": args.stream_calls,
            "stream_rounds": args.stream_rounds,
            "starts": args.starts,
        },
    }

    # AsyncExitStack: every Chrome (and the Playwright driver) is ended even when another
    # clean-up step fails.
    with PageServer() as server:
        results["config"]["page"] = server.url
        async with contextlib.AsyncExitStack() as driver_stack:
            pw: Playwright | None = None
            if async_playwright is not None:
                pw = await driver_stack.enter_async_context(async_playwright())
            async with contextlib.AsyncExitStack() as stack:
                # Sections 1 and 2: three contenders, two Chromes of the same binary.
                browser = await ego.launch(executable=chrome)
                stack.push_async_callback(browser.close)
                tracker.note_ego(browser)
                tab = await browser.new_tab(server.url)
                tracker.note_ego(browser)
                version = await browser.version()
                results["environment"]["chrome"] = version.get("product", "?")
                raw = await RawCDP.attach(browser.endpoint, tab.target_id)
                stack.push_async_callback(raw.close)
                contenders = [
                    Contender(
                        "raw",
                        lambda: raw.evaluate(EXPRESSION),
                        lambda: raw.evaluate_concurrent(EXPRESSION),
                        raw.start_reader,
                        raw.stop_reader,
                    ),
                    Contender(
                        "ego", lambda: tab.evaluate(EXPRESSION), lambda: tab.evaluate(EXPRESSION)
                    ),
                ]
                if pw is not None:
                    pw_browser = await pw.chromium.launch(
                        executable_path=chrome, headless=True, args=chrome_args_for_playwright()
                    )
                    stack.push_async_callback(pw_browser.close)
                    tracker.note_playwright()
                    page = await pw_browser.new_page()
                    await page.goto(server.url)
                    tracker.note_playwright()
                    contenders.append(
                        Contender(
                            "playwright",
                            lambda: page.evaluate(EXPRESSION),
                            lambda: page.evaluate(EXPRESSION),
                        )
                    )
                for contender in contenders:
                    await check(contender)

                print(f"1/3 sequential: {args.calls} calls each ...", flush=True)
                await run_sequential(contenders, args.calls, args.warmup, args.rounds)
                print(
                    f"2/3 throughput: {args.stream_calls} calls each, {args.inflight} in flight",
                    flush=True,
                )
                await run_throughput(
                    contenders, args.stream_calls, args.inflight, args.warmup, args.stream_rounds
                )
                results["sequential"] = {c.name: latency_stats(c.latencies_ns) for c in contenders}
                results["throughput"] = {c.name: throughput_stats(c) for c in contenders}

            # Section 3: start to a usable connection, alternating, with the bench Chromes gone.
            print(f"3/3 start-up: {args.starts} starts each ...", flush=True)
            starts: dict[str, list[float]] = {"ego": []}
            if pw is not None:
                starts["playwright"] = []
            for index in range(args.starts):
                order = ["ego", "playwright"] if index % 2 == 0 else ["playwright", "ego"]
                for name in order:
                    if name == "ego":
                        starts["ego"].append(await ego_start(chrome, tracker))
                    elif pw is not None:
                        starts["playwright"].append(await playwright_start(pw, chrome, tracker))
            results["startup"] = {
                name: {
                    "median_ms": statistics.median(values) * 1000,
                    "min_ms": min(values) * 1000,
                    "max_ms": max(values) * 1000,
                    "samples_ms": [value * 1000 for value in values],
                }
                for name, values in starts.items()
            }
    return results


def add_ratios_and_targets(results: dict[str, Any]) -> None:
    seq = results["sequential"]
    tput = results["throughput"]
    ratios: dict[str, float | None] = {
        "ego_over_raw_median": seq["ego"]["median_us"] / seq["raw"]["median_us"],
        "ego_over_raw_p99": seq["ego"]["p99_us"] / seq["raw"]["p99_us"],
        "raw_over_ego_throughput": tput["raw"]["calls_per_s"] / tput["ego"]["calls_per_s"],
        "playwright_over_ego_median": None,
        "playwright_over_ego_p99": None,
        "ego_over_playwright_throughput": None,
    }
    if "playwright" in seq:
        ratios["playwright_over_ego_median"] = (
            seq["playwright"]["median_us"] / seq["ego"]["median_us"]
        )
        ratios["playwright_over_ego_p99"] = seq["playwright"]["p99_us"] / seq["ego"]["p99_us"]
        ratios["ego_over_playwright_throughput"] = (
            tput["ego"]["calls_per_s"] / tput["playwright"]["calls_per_s"]
        )
    results["ratios"] = ratios

    def target(name: str, value: float | None, limit: float, at_most: bool) -> dict[str, Any]:
        ok = None if value is None else (value <= limit if at_most else value >= limit)
        return {"name": name, "value": value, "limit": limit, "result": verdict(ok)}

    results["targets"] = [
        target(
            f"ego median within {TARGET_EGO_OVER_RAW}x of the raw loop (ego/raw)",
            ratios["ego_over_raw_median"],
            TARGET_EGO_OVER_RAW,
            at_most=True,
        ),
        target(
            f"ego at least {TARGET_PW_OVER_EGO:g}x faster than Playwright at the median "
            "(playwright/ego)",
            ratios["playwright_over_ego_median"],
            TARGET_PW_OVER_EGO,
            at_most=False,
        ),
        target(
            f"throughput at least {TARGET_THROUGHPUT:g}x Playwright's (ego/playwright)",
            ratios["ego_over_playwright_throughput"],
            TARGET_THROUGHPUT,
            at_most=False,
        ),
    ]


def report(results: dict[str, Any]) -> str:
    env, config = results["environment"], results["config"]
    lines = [
        f"{env['chrome']} ({env['chrome_binary']}), Python {env['python']}, {env['cpus']} CPUs",
        f"ego {env['ego']}, playwright {env['playwright']}, websockets {env['websockets']}, "
        f"orjson {env['orjson']}",
        f"page {config['page']}, expression {config['expression']!r}, 1-min load average "
        f"{env['loadavg_1m_before_after'][0]:.1f} before, "
        f"{env['loadavg_1m_before_after'][1]:.1f} after",
        "",
        f"1. Sequential evaluate: {config['calls']} calls each after {config['warmup']} "
        f"warm-up, {config['rounds']} interleaved rounds",
        f"   {'contender':<12}{'median us':>12}{'p99 us':>12}{'mean us':>12}{'min us':>12}",
    ]
    for name, stats in results["sequential"].items():
        lines.append(
            f"   {name:<12}{stats['median_us']:>12.0f}{stats['p99_us']:>12.0f}"
            f"{stats['mean_us']:>12.0f}{stats['min_us']:>12.0f}"
        )
    ratios = results["ratios"]

    def fmt(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.2f}x"

    lines += [
        f"   ego/raw: median {fmt(ratios['ego_over_raw_median'])}, "
        f"p99 {fmt(ratios['ego_over_raw_p99'])}; playwright/ego: median "
        f"{fmt(ratios['playwright_over_ego_median'])}, "
        f"p99 {fmt(ratios['playwright_over_ego_p99'])}",
        "",
        f"2. Throughput, {config['inflight']} in flight: {config['stream_calls']} calls each, "
        f"{config['stream_rounds']} interleaved rounds",
        f"   {'contender':<12}{'calls/s':>12}{'round min':>12}{'round max':>12}",
    ]
    for name, stats in results["throughput"].items():
        lines.append(
            f"   {name:<12}{stats['calls_per_s']:>12.0f}{stats['round_min_calls_per_s']:>12.0f}"
            f"{stats['round_max_calls_per_s']:>12.0f}"
        )
    lines += [
        f"   ego/playwright: {fmt(ratios['ego_over_playwright_throughput'])}; raw/ego: "
        f"{fmt(ratios['raw_over_ego_throughput'])}",
        "",
        f"3. Chrome start to a usable connection: median of {config['starts']}",
        f"   {'contender':<40}{'median ms':>10}{'min ms':>10}{'max ms':>10}",
    ]
    labels = {
        "ego": "ego.launch() + new_tab()",
        "playwright": "playwright chromium.launch() + new_page()",
    }
    for name, stats in results["startup"].items():
        lines.append(
            f"   {labels[name]:<40}{stats['median_ms']:>10.0f}{stats['min_ms']:>10.0f}"
            f"{stats['max_ms']:>10.0f}"
        )
    lines += ["", "Targets"]
    for item in results["targets"]:
        value = "n/a" if item["value"] is None else f"{item['value']:.2f}x"
        lines.append(f"   {item['result']:<5} {item['name']}: {value}")
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0] if __doc__ else "")
    parser.add_argument("--calls", type=int, default=2000, help="sequential calls per contender")
    parser.add_argument("--warmup", type=int, default=200, help="warm-up calls per contender")
    parser.add_argument("--rounds", type=int, default=10, help="interleaved sequential rounds")
    parser.add_argument("--inflight", type=int, default=100, help="calls in flight at once")
    parser.add_argument(
        "--stream-calls", type=int, default=5000, help="throughput calls per contender"
    )
    parser.add_argument("--stream-rounds", type=int, default=5, help="interleaved stream rounds")
    parser.add_argument("--starts", type=int, default=5, help="Chrome starts per contender")
    parser.add_argument("--chrome", default=None, help="Chrome binary (default: ego's choice)")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args(argv)
    for name in (
        "calls",
        "warmup",
        "rounds",
        "inflight",
        "stream_calls",
        "stream_rounds",
        "starts",
    ):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    return args


def closed_errors() -> tuple[type[BaseException], ...]:
    """The errors that mean a browser or its connection went away under the benchmark."""
    errors: list[type[BaseException]] = [
        ego.BrowserClosedError,
        ego.TabClosedError,
        ConnectionClosed,
    ]
    try:
        from playwright.async_api import Error as PlaywrightError
    except ImportError:
        pass
    else:
        errors.append(PlaywrightError)
    return tuple(errors)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    tracker = ChromeTracker()
    load_before = os.getloadavg()
    finished = False
    try:
        results = asyncio.run(benchmark(args, tracker))
        finished = True
    except closed_errors() as exc:
        # Seen on shared machines: a test suite's clean-up that kills every Chrome started
        # with --remote-debugging-port=0 (or a pipe) on the machine also kills these ones.
        print(
            f"\nA benchmark Chrome went away mid-run ({type(exc).__name__}: {exc}).\n"
            "Did another program on this machine end it (a test suite killing 'leftover' "
            "Chromes, an OOM kill)? Run again when the machine is quiet.",
            file=sys.stderr,
        )
        return 2
    finally:
        leftovers = tracker.leftovers()
        if leftovers:
            print("WARNING: Chromium processes left behind:", *leftovers, sep="\n  ")
        elif not finished:
            print(f"Chromium processes started by this run: {tracker.count}, none left running")
    results["environment"]["loadavg_1m_before_after"] = [load_before[0], os.getloadavg()[0]]
    results["chromium_processes_started"] = tracker.count
    results["leftover_chromium"] = leftovers
    add_ratios_and_targets(results)
    print()
    print(report(results))
    verdict_text = "none left running" if not leftovers else f"{len(leftovers)} LEFT RUNNING"
    print(f"\nChromium processes started by this run: {tracker.count}, {verdict_text}")
    if args.json is not None:
        args.json.write_bytes(orjson.dumps(results, option=orjson.OPT_INDENT_2) + b"\n")
        print(f"results written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
