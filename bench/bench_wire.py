"""A/B: ego's own websocket (``Wire``) against the ``websockets`` library's asyncio client.

Run from the project root::

    .venv/bin/python bench/bench_wire.py [--calls N] [--inflight N] [--rounds N] [--json PATH]

The same :class:`ego.protocol.transport.Connection` runs over either channel, each its own
websocket to one headless Chromium, each with its own flattened session on the same page:

* ``wire``: :class:`ego.protocol.wire.Wire` (sans-I/O protocol, messages handed over inside
  ``data_received``, one write per loop iteration), as ego uses it;
* ``library``: :class:`LibraryChannel`, the library's ``ClientConnection`` as ego would use
  it: a reader task on ``recv()`` (text decoded, so invalid UTF-8 closes with 1007) and a
  writer task on ``send()`` (which waits while the socket is full). Same keepalive and
  write limit as ``Wire``;
* ``library-bytes``: the same with ``recv(decode=False)`` (no UTF-8 check), the fastest the
  library's reading goes.

Each call is ``Runtime.evaluate`` (awaitPromise, returnByValue) of a small async function of
``{"n": i}``, about the size of ego's hot Call snippet, checked for ``i + 1``. A round runs
two sections: ``--calls`` calls one after the other, and ``--slices`` batches of
``--inflight`` calls at once (``asyncio.gather``); in each, the contenders take turns slice
by slice (``--calls / --slices`` sequential calls, or one batch), the order rotating every
turn, so a burst of load from elsewhere lands on all of them alike. Per round and contender:
calls per second (wall) and this process's CPU per call (less sensitive to other load on a
shared machine). Reported: the median over rounds with quartiles and extremes, and the
ratios taken round by round. The decision rule is in :func:`add_ratios_and_targets`.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import time
from collections import deque
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, cast

from _common import ChromeTracker, PageServer, environment, rotated, run_benchmark, spread
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed
from websockets.protocol import State

import ego
from ego.protocol.transport import Channel, Connection
from ego.protocol.wire import PING_INTERVAL, PING_TIMEOUT, WRITE_LIMIT, Wire

CONTENDERS = ("wire", "library", "library-bytes")
EXPRESSION = "(async (args) => args.n + 1)({n: %d})"


class LibraryChannel:
    """A :class:`~ego.protocol.transport.Channel` over ``websockets.asyncio.client``."""

    def __init__(self, ws: ClientConnection, *, decode: bool) -> None:
        self._ws = ws
        self._decode = decode
        self._queue: deque[bytes] = deque()
        self._wake: asyncio.Event = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    @classmethod
    async def open(cls, url: str, *, decode: bool) -> LibraryChannel:
        ws = await connect(
            url,
            max_size=None,
            compression=None,
            ping_interval=PING_INTERVAL,
            ping_timeout=PING_TIMEOUT,
            write_limit=WRITE_LIMIT,
        )
        return cls(ws, decode=decode)

    def attach(self, on_message: Callable[[bytes], None], on_close: Callable[[str], None]) -> None:
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._read(on_message, on_close)),
            loop.create_task(self._write()),
        ]

    async def _read(
        self, on_message: Callable[[bytes], None], on_close: Callable[[str], None]
    ) -> None:
        ws, decode = self._ws, self._decode
        try:
            while True:
                # orjson parses str and bytes alike.
                on_message(cast(bytes, await ws.recv(decode=decode)))
        except ConnectionClosed as exc:
            on_close(f"the connection to the browser closed ({exc})")

    async def _write(self) -> None:
        ws, queue, wake = self._ws, self._queue, self._wake
        try:
            while True:
                while queue:
                    await ws.send(queue.popleft(), text=True)
                wake.clear()
                await wake.wait()
        except ConnectionClosed:
            return

    def send(self, message: bytes) -> bool:
        if self._ws.state is not State.OPEN:
            return False
        self._queue.append(message)
        self._wake.set()
        return True

    def fail(self, code: int, reason: str) -> None:
        self._ws.protocol.fail(code, reason)
        self._ws.send_data()

    async def close(self) -> None:
        await self._ws.close()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def abort(self) -> None:
        self._ws.transport.abort()


Call = Callable[[int], Awaitable[Any]]


async def contender(connection: Connection, target_id: str) -> Call:
    """A call of the benchmark's evaluate on its own session of the page."""
    attached = await connection.send(
        "Target.attachToTarget", {"targetId": target_id, "flatten": True}
    )
    session = connection.session(attached["sessionId"])

    async def call(n: int) -> Any:
        result = await session.send(
            "Runtime.evaluate",
            {"expression": EXPRESSION % n, "awaitPromise": True, "returnByValue": True},
        )
        return result["result"]["value"]

    return call


async def sequential(call: Call, count: int, first: int) -> tuple[float, float]:
    """``count`` calls one after the other: (seconds, client CPU seconds)."""
    cpu, start = time.process_time(), time.perf_counter()
    for n in range(first, first + count):
        if await call(n) != n + 1:
            raise SystemExit(f"wrong answer for n={n}")
    return time.perf_counter() - start, time.process_time() - cpu


async def in_flight(call: Call, count: int, first: int) -> tuple[float, float]:
    """``count`` calls at once: (seconds, client CPU seconds)."""
    cpu, start = time.process_time(), time.perf_counter()
    answers = await asyncio.gather(*(call(first + i) for i in range(count)))
    elapsed, used = time.perf_counter() - start, time.process_time() - cpu
    if answers != [first + i + 1 for i in range(count)]:
        raise SystemExit("wrong answers in flight")
    return elapsed, used


Run = Callable[[Call, int, int], Awaitable[tuple[float, float]]]


async def benchmark(args: argparse.Namespace, tracker: ChromeTracker) -> dict[str, Any]:
    chrome = args.chrome or ego.find_chrome()
    results: dict[str, Any] = {
        "environment": environment(chrome),
        "config": {
            "calls": args.calls,
            "inflight": args.inflight,
            "rounds": args.rounds,
            "slices": args.slices,
            "expression": EXPRESSION % 1,
        },
    }
    with PageServer() as server:
        async with ego.launch(executable=chrome, port=0) as browser:
            tracker.note_ego(browser)
            tab = await browser.new_tab(server.url)
            tracker.note_ego(browser)
            version = await browser.version()
            results["environment"]["chrome"] = version.get("product", "?")
            endpoint = browser.endpoint
            assert endpoint is not None  # launched with a port for these websockets
            channels: dict[str, Channel] = {
                "wire": await Wire.open(endpoint),
                "library": await LibraryChannel.open(endpoint, decode=True),
                "library-bytes": await LibraryChannel.open(endpoint, decode=False),
            }
            connections = {name: Connection(channel) for name, channel in channels.items()}
            try:
                calls = {
                    name: await contender(connections[name], tab.target_id) for name in CONTENDERS
                }
                results.update(await measure(calls, args))
            finally:
                for connection in connections.values():
                    await connection.close()
    return results


async def measure(calls: dict[str, Call], args: argparse.Namespace) -> dict[str, Any]:
    """Every round runs each section in slices, the contenders taking turns slice by slice
    (the order rotating), so a burst of load from elsewhere lands on all of them alike."""
    names = list(calls)
    # section: (run, calls per slice, slices per round)
    sections: dict[str, tuple[Run, int, int]] = {
        "sequential": (sequential, max(1, args.calls // args.slices), args.slices),
        "inflight": (in_flight, args.inflight, args.slices),
    }
    rates: dict[str, dict[str, list[float]]] = {k: {m: [] for m in names} for k in sections}
    cpu_us: dict[str, dict[str, list[float]]] = {k: {m: [] for m in names} for k in sections}
    n = 0
    for call in calls.values():  # warm-up
        for run, count, _ in sections.values():
            await run(call, count, n)
            n += count
    turn = 0
    for index in range(args.rounds):
        for kind, (run, count, slices) in sections.items():
            elapsed = dict.fromkeys(names, 0.0)
            used = dict.fromkeys(names, 0.0)
            for _ in range(slices):
                turn += 1
                for name in rotated(names, turn):
                    gc.collect()
                    seconds, cpu = await run(calls[name], count, n)
                    n += count
                    elapsed[name] += seconds
                    used[name] += cpu
            for name in names:
                rates[kind][name].append(count * slices / elapsed[name])
                cpu_us[kind][name].append(used[name] / (count * slices) * 1e6)
        print(f"round {index + 1}/{args.rounds} done", file=sys.stderr)
    out: dict[str, Any] = {}
    for kind in sections:
        wire_rate, wire_cpu = rates[kind]["wire"], cpu_us[kind]["wire"]
        ratios = {}
        for name in names[1:]:
            throughput = [a / b for a, b in zip(wire_rate, rates[kind][name], strict=True)]
            ratios[name] = {
                "throughput": quartiles(throughput),
                "wire_wins": sum(ratio > 1.0 for ratio in throughput),
                "cpu": quartiles(
                    [b / a for a, b in zip(wire_cpu, cpu_us[kind][name], strict=True)]
                ),
            }
        out[kind] = {
            "calls_per_s": {name: quartiles(rates[kind][name]) for name in names},
            "client_cpu_us_per_call": {name: quartiles(cpu_us[kind][name]) for name in names},
            "wire_over": ratios,
        }
    return out


def quartiles(values: list[float]) -> dict[str, float]:
    """Median, quartiles and extremes of per-round figures."""
    if len(values) < 2:
        return {**spread(values), "q1": values[0], "q3": values[0]}
    low, median, high = statistics.quantiles(values, n=4, method="inclusive")
    return {**spread(values), "median": median, "q1": low, "q3": high}


def add_ratios_and_targets(results: dict[str, Any]) -> None:
    """The decision: keep ``Wire`` unless the library's client is as fast (within noise).

    Wire is faster in a section when it wins in at least three rounds out of four: the lower
    quartile of its per-round throughput ratio against the library's client is above 1.
    """
    verdicts = {}
    for kind in ("sequential", "inflight"):
        ratio = results[kind]["wire_over"]["library"]["throughput"]
        verdicts[kind] = "wire faster" if ratio["q1"] > 1.0 else "within noise"
    keep = any(value == "wire faster" for value in verdicts.values())
    results["decision"] = {
        "per_section": verdicts,
        "keep_wire": keep,
        "text": "keep Wire" if keep else "the library's client is as fast: switch to it",
    }


def report(results: dict[str, Any]) -> str:
    config, env = results["config"], results["environment"]
    load = env["loadavg_1m_before_after"]
    lines = [
        f"Wire vs websockets.asyncio.client, same Connection, Chrome {env.get('chrome', '?')}, "
        f"websockets {env['websockets']}, {env['cpus']} CPUs, load avg (1 min) before/after "
        f"{load[0]:.1f}/{load[1]:.1f}",
        f"{config['rounds']} rounds, contenders taking turns in {config['slices']} slices per "
        "round; per-round figures: median [quartiles] (slowest - fastest round)",
    ]
    titles = {
        "sequential": f"{config['calls']:,} calls one after the other per round",
        "inflight": f"{config['inflight']:,} calls in flight at once, {config['slices']} batches "
        "per round",
    }
    for kind, title in titles.items():
        section = results[kind]
        lines.append(f"\n{title}:")
        lines.append(f"   {'':<15}{'calls/s':>8}{'':<30}{'client CPU µs/call':>20}")
        for name in section["calls_per_s"]:
            rate, cpu = section["calls_per_s"][name], section["client_cpu_us_per_call"][name]
            lines.append(
                f"   {name:<15}{rate['median']:>8,.0f} [{rate['q1']:,.0f}-{rate['q3']:,.0f}] "
                f"({rate['min']:,.0f} - {rate['max']:,.0f}){cpu['median']:>9.1f} "
                f"[{cpu['q1']:.1f}-{cpu['q3']:.1f}]"
            )
        for name, ratio in section["wire_over"].items():
            tp, cpu = ratio["throughput"], ratio["cpu"]
            lines.append(
                f"   wire/{name}: throughput {tp['median']:.2f}x [{tp['q1']:.2f}-{tp['q3']:.2f}] "
                f"({tp['min']:.2f} - {tp['max']:.2f}), wire ahead in {ratio['wire_wins']} of "
                f"{config['rounds']} rounds; CPU per call {cpu['median']:.2f}x less "
                f"[{cpu['q1']:.2f}-{cpu['q3']:.2f}]"
            )
    decision = results["decision"]
    lines.append(f"\ndecision: {decision['text']} ({decision['per_section']})")
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0] if __doc__ else "")
    parser.add_argument("--calls", type=int, default=2000, help="sequential calls per round")
    parser.add_argument("--inflight", type=int, default=1000, help="calls at once per round")
    parser.add_argument("--rounds", type=int, default=9, help="rounds")
    parser.add_argument(
        "--slices", type=int, default=5, help="turns per contender and section in a round"
    )
    parser.add_argument("--chrome", default=None, help="Chrome binary (default: ego's choice)")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args(argv)
    for name in ("calls", "inflight", "rounds", "slices"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    return run_benchmark(parse_args(argv), benchmark, add_ratios_and_targets, report)


if __name__ == "__main__":
    sys.exit(main())
