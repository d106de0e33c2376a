"""Pieces shared by the benchmarks: the page server, the raw CDP client, timing and clean-up.

Imported by ``bench_evaluate.py`` and ``bench_tools.py`` (run as scripts from the project root,
so this folder is on ``sys.path``).
"""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import importlib.metadata
import os
import platform
import statistics
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, TypeVar

import orjson
import psutil
from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed

import ego
from ego.protocol.chrome import ChromeProcess, LaunchOptions

PAGE = (
    b"<!doctype html><html><head><meta charset='utf-8'><title>ego bench</title></head>"
    b"<body><p>ego bench page</p></body></html>"
)

Call = Callable[[], Awaitable[Any]]
T = TypeVar("T")


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
        #: Bytes of the last message :meth:`evaluate` sent (the websocket payload).
        self.last_message_bytes = 0

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

    async def evaluate(self, expression: str, *, await_promise: bool = False) -> Any:
        """Sequential: send Runtime.evaluate, read frames until the matching id.

        ``await_promise`` adds ``awaitPromise: true`` (for an async IIFE). The size of the
        message sent (the websocket payload) is left in :attr:`last_message_bytes`.
        """
        self._next_id += 1
        message_id = self._next_id
        params: dict[str, Any] = {"expression": expression, "returnByValue": True}
        if await_promise:
            params["awaitPromise"] = True
        message = orjson.dumps(
            {
                "id": message_id,
                "method": "Runtime.evaluate",
                "sessionId": self.session_id,
                "params": params,
            }
        )
        self.last_message_bytes = len(message)
        await self._ws.send(message, text=True)
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

    async def evaluate_concurrent(self, expression: str, *, await_promise: bool = False) -> Any:
        """Concurrent: register a future by id; the reader task resolves it.

        ``await_promise`` adds ``awaitPromise: true`` (for an async IIFE).
        """
        self._next_id += 1
        message_id = self._next_id
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[message_id] = future
        params: dict[str, Any] = {"expression": expression, "returnByValue": True}
        if await_promise:
            params["awaitPromise"] = True
        await self._ws.send(
            orjson.dumps(
                {
                    "id": message_id,
                    "method": "Runtime.evaluate",
                    "sessionId": self.session_id,
                    "params": params,
                }
            ),
            text=True,
        )
        answer = await future
        return answer["result"]["result"].get("value")

    async def close(self) -> None:
        await self.stop_reader()
        await self._ws.close()


class _RawPipeReader(asyncio.Protocol):
    """The read end of the raw pipe loop: split at NUL, orjson, resolve the future by id."""

    def __init__(self, pending: dict[int, asyncio.Future[dict[str, Any]]]) -> None:
        self._pending = pending
        self._rest = b""
        self.lost: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        if self._rest:
            data = self._rest + data
        *messages, self._rest = data.split(b"\0")
        pending = self._pending
        for message in messages:
            answer = orjson.loads(message)
            future = pending.pop(answer.get("id", -1), None)
            if future is not None and not future.done():
                future.set_result(answer)

    def connection_lost(self, exc: Exception | None) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionError("the raw pipe's Chrome closed its pipe"))
        self._pending.clear()
        if not self.lost.done():
            self.lost.set_result(None)


class RawPipeCDP:
    """The minimal CDP client over Chrome's debugging pipe, on a Chromium of its own.

    Chrome is started with ``--remote-debugging-pipe`` (through ego's ``ChromeProcess``, so
    that it gets the same flags as ego's and the same clean-up; nothing of ego's connection is
    used): it reads commands on its descriptor 3 and writes on 4, each message JSON followed by
    a NUL byte. A command is ``orjson.dumps`` plus the NUL, written at once; the read end's
    ``data_received`` splits at NUL, parses with orjson and resolves the future of the id.
    Sequential calls and calls in flight take the same path.
    """

    def __init__(self, chrome: ChromeProcess) -> None:
        self.chrome = chrome
        self.session_id = ""
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._writer: asyncio.WriteTransport | None = None
        self._reader: _RawPipeReader | None = None
        self._read_transport: asyncio.ReadTransport | None = None

    @classmethod
    async def launch(cls, executable: str, url: str, *, timeout: float = 30.0) -> RawPipeCDP:
        """Start a headless Chromium with the pipe, open a page at ``url`` and attach to it."""
        chrome = await ChromeProcess.start(LaunchOptions(executable=executable))
        client = cls(chrome)
        try:
            read_fd, write_fd = chrome.take_pipe()
            loop = asyncio.get_running_loop()
            reader = _RawPipeReader(client._pending)
            client._reader = reader
            client._read_transport, _ = await loop.connect_read_pipe(
                lambda: reader,
                open(read_fd, "rb", buffering=0),  # noqa: SIM115
            )
            client._writer, _ = await loop.connect_write_pipe(
                asyncio.Protocol,
                open(write_fd, "wb", buffering=0),  # noqa: SIM115
            )
            async with asyncio.timeout(timeout):
                target = await client.call("Target.createTarget", {"url": "about:blank"})
                attached = await client.call(
                    "Target.attachToTarget", {"targetId": target["targetId"], "flatten": True}
                )
                client.session_id = attached["sessionId"]
                await client.call("Page.navigate", {"url": url}, session=True)
                await client.wait_loaded(url)
        except BaseException:
            await client.close()
            raise
        return client

    async def wait_loaded(self, url: str) -> None:
        """Poll until the page shows ``url``, loaded (an evaluate may meet the old document)."""
        ready = {"expression": "document.readyState === 'complete' && location.href"}
        while True:
            with contextlib.suppress(RuntimeError):
                answer = await self.call("Runtime.evaluate", ready, session=True)
                if answer["result"].get("value") == url:
                    return
            await asyncio.sleep(0.02)

    def _send(self, message: dict[str, Any]) -> asyncio.Future[dict[str, Any]]:
        self._next_id += 1
        message["id"] = self._next_id
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[self._next_id] = future
        assert self._writer is not None
        self._writer.write(orjson.dumps(message) + b"\0")
        return future

    async def call(
        self, method: str, params: dict[str, Any], *, session: bool = False
    ) -> dict[str, Any]:
        """One command (on the page's session when ``session``); its result."""
        message: dict[str, Any] = {"method": method, "params": params}
        if session:
            message["sessionId"] = self.session_id
        answer = await self._send(message)
        if "error" in answer:
            raise RuntimeError(f"raw pipe CDP error: {answer['error']}")
        result: dict[str, Any] = answer["result"]
        return result

    async def evaluate(self, expression: str, *, await_promise: bool = False) -> Any:
        """``Runtime.evaluate`` (returnByValue) on the page; its value.

        ``await_promise`` adds ``awaitPromise: true`` (for an async IIFE).
        """
        params: dict[str, Any] = {"expression": expression, "returnByValue": True}
        if await_promise:
            params["awaitPromise"] = True
        answer = await self._send(
            {"method": "Runtime.evaluate", "sessionId": self.session_id, "params": params}
        )
        return answer["result"]["result"].get("value")

    async def close(self) -> None:
        """Close our ends of the pipe (Chrome quits) and end its process tree."""
        if self._writer is not None:
            self._writer.close()
        if self._read_transport is not None:
            self._read_transport.close()
        if self._reader is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._reader.lost), 5)
        await self.chrome.wait_exit(5)
        await self.chrome.terminate()


# --------------------------------------------------------------------------- measurement


def rotated(items: Sequence[T], shift: int) -> list[T]:
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


def chrome_args_for_playwright() -> list[str]:
    running_as_root = hasattr(os, "geteuid") and os.geteuid() == 0
    return ["--no-sandbox"] if running_as_root else []


# --------------------------------------------------------------------------- reporting


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(fraction * len(ordered) + 0.5)))
    return ordered[rank - 1]


def spread(values: Sequence[float]) -> dict[str, float]:
    """The median of per-round figures with their spread (lowest and highest round)."""
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def latency_stats(latencies_ns: Sequence[int]) -> dict[str, float]:
    micros = [value / 1000 for value in latencies_ns]
    return {
        "calls": len(micros),
        "median_us": statistics.median(micros),
        "p99_us": percentile(micros, 0.99),
        "mean_us": statistics.fmean(micros),
        "min_us": min(micros),
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

    def note_pid(self, pid: int) -> None:
        """A Chrome started here without ego's Browser (the raw pipe loop's) and its tree."""
        with contextlib.suppress(psutil.Error):
            root = psutil.Process(pid)
            self._add([root, *root.children(recursive=True)])

    def note_playwright(self) -> None:
        """Chromes under this process: Playwright's driver starts them as its children."""
        self._add(psutil.Process().children(recursive=True))

    @property
    def count(self) -> int:
        return len(self._seen)

    @property
    def processes(self) -> list[dict[str, float]]:
        """Every Chromium process recorded: its pid and start time (pids get reused)."""
        return [{"pid": pid, "create_time": self._seen[pid]} for pid in sorted(self._seen)]

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


def environment(chrome: str) -> dict[str, Any]:
    """What a benchmark's figures depend on, for the ``environment`` part of its JSON."""
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "chrome_binary": chrome,
        "ego": ego.__version__,
        "playwright": version_of("playwright"),
        "websockets": version_of("websockets"),
        "orjson": version_of("orjson"),
    }


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


def run_benchmark(
    args: Any,
    benchmark: Callable[[Any, ChromeTracker], Coroutine[Any, Any, dict[str, Any]]],
    add_ratios_and_targets: Callable[[dict[str, Any]], None],
    report: Callable[[dict[str, Any]], str],
    *,
    record_processes: bool = False,
) -> int:
    """Run ``benchmark``, check that every Chrome it started is gone, print and save results.

    Returns the exit code: 2 when a benchmark Chrome went away mid-run, else 0.
    """
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
    if record_processes:
        results["chromium_started"] = tracker.processes
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
