"""Benchmark a hot, cached ``run_browser_tool`` call against raw CDP and Playwright, in one run.

Run from the project root::

    .venv/bin/python bench/bench_tools.py [--calls N] [--json PATH]

A learnings site is written to a temporary folder with two browser tools that compute the
same thing, ``async (args) => args.n + 1``: ``small`` is just that, ``padded`` carries about
100 KB of source the function does not need (a big comment by default). The page is served
from a thread of this script on 127.0.0.1 (a real http origin, so localStorage works), and
the same Chromium binary runs every contender. Each call passes ``{"n": i}`` with a fresh i:

* ``ego-hot``: ``site.run_browser_tool(site_id, tool, {"n": i}, tab=tab)``, cached: it sends
  the small Call snippet only (checked: ``site.last_run.mode == "cached"``);
* ``raw``: ``Runtime.evaluate`` (awaitPromise, returnByValue) of ``ego.js.wrap(expression,
  {"n": i}, url=...)``, the plain wrap a harness without the cache sends every time, from a
  minimal websockets + orjson client with its own flattened session on ego's page;
* ``playwright``: Playwright for Python's ``page.evaluate`` of that same wrapped source, on a
  Chromium that Playwright launched itself from the same binary.

Sections: (1) hot call latency for both tools, in rounds where the contenders take turns
call by call (the order rotating every call); (2) bytes sent per call: JavaScript bytes
(``site.last_run.bytes_sent``), the websocket payload and the bytes written to the socket,
counted on ego's own connection for one call, against the raw and Playwright messages for
the wrapped source; the cold first call (which stores the source) too; (3) what the hot call
costs step by step on this machine, to explain a miss. Every Chrome started here is ended in
a ``finally`` and the script checks that none it started is left running.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gc
import hashlib
import itertools
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import orjson
from _common import (
    Call,
    ChromeTracker,
    PageServer,
    RawCDP,
    chrome_args_for_playwright,
    environment,
    latency_stats,
    rotated,
    run_benchmark,
    split,
    verdict,
)

import ego
from ego.cache import cache_key, call_snippet
from ego.js import embed_json, wrap
from ego.learning.manifest import BrowserToolSpec
from ego.learning.registry import LoadedSource

if TYPE_CHECKING:
    from playwright.async_api import Page

SITE_ID = "bench-tools"
FUNCTION = "async (args) => args.n + 1"
TOOLS = {"small": "add_one", "padded": "add_one_padded"}

# The targets from the issue.
TARGET_EGO_OVER_RAW = 1.3  # hot call median at most 1.3x the raw evaluate's (small tool)
TARGET_PW_OVER_EGO = 2.0  # Playwright median at least 2x the hot call's (small tool)
TARGET_HOT_BYTES = 1024  # bytes sent per hot call, whatever the tool's size (padded tool)

BYTES_N = 12345  # the n of the calls whose bytes are counted (as many digits as a timed call)


# --------------------------------------------------------------------------- the site


def padded_source(size: int, padding: str) -> str:
    """``FUNCTION`` padded to at least ``size`` bytes with source it does not need.

    ``comment``: a block of ``//`` lines of hex data before the function (the page only has
    to scan it). ``table``: the same data as an unused ``const`` array inside the function
    body (the page builds the array on every call).
    """
    if padding == "table":
        head, separator, tail = (
            "async (args) => {\n  const TABLE = [\n    ",
            "\n    ",
            "\n  ];\n  return args.n + 1;\n}\n",
        )
    else:
        head, separator, tail = "", "\n", "\n" + FUNCTION + "\n"
    rows: list[str] = []
    total = len(head) + len(tail)
    for index in itertools.count():
        digest = hashlib.sha256(str(index).encode()).hexdigest()
        row = f'[{index}, "{digest}"],' if padding == "table" else f"// {index:06d} {digest}"
        total += len(row) + (len(separator) if rows else 0)
        rows.append(row)
        if total >= size:
            break
    return head + separator.join(rows) + tail


def write_site(root: Path, url: str, padded: str) -> Path:
    """A learnings folder with the bench site; returns the learnings root."""
    learnings = root / "learnings"
    site = learnings / SITE_ID
    (site / "browser-tools").mkdir(parents=True)
    args = {"n": {"type": "integer", "required": True, "description": "any integer"}}
    tools: dict[str, Any] = {}
    for kind, name in TOOLS.items():
        path = f"browser-tools/{name}.js"
        source = padded if kind == "padded" else FUNCTION + "\n"
        (site / path).write_text(source, encoding="utf-8")
        tools[name] = {
            "description": f"answers n + 1 ({kind} source)",
            "path": path,
            "args": args,
            "returns": {"type": "integer"},
            "sideEffect": "read",
        }
    host = url.split("//", 1)[1].rstrip("/")
    manifest = {
        "id": SITE_ID,
        "name": "ego tools bench",
        "domains": [host],
        "startUrl": url,
        "browserTools": tools,
    }
    (site / "manifest.json").write_bytes(orjson.dumps(manifest, option=orjson.OPT_INDENT_2))
    return learnings


def loaded_source(site: ego.Site, tool: str) -> LoadedSource:
    """The tool as ego loads it: what the raw and Playwright contenders wrap."""
    _, spec = site.learnings.tool(SITE_ID, tool)
    assert isinstance(spec, BrowserToolSpec)
    return site.learnings.browser_source(SITE_ID, spec)


# --------------------------------------------------------------------------- byte counting


def ws_frame_bytes(payload: int) -> int:
    """Bytes of one masked client text frame: header, extended length, mask, payload."""
    extended = 0 if payload < 126 else 2 if payload < 65536 else 8
    return 2 + extended + 4 + payload


@dataclass
class Sent:
    """What went out during one call."""

    messages: int = 0
    payload: int = 0  # websocket payload (the CDP JSON messages)
    socket: int = 0  # bytes handed to the TCP socket (frames, headers and masks included)


@contextlib.contextmanager
def counting_ego(browser: ego.Browser) -> Iterator[Sent]:
    """Count what ego's connection sends: its wire's messages and its socket's writes."""
    sent = Sent()
    wire = browser.connection._wire
    transport = wire._transport
    if transport is None:
        raise RuntimeError("ego's wire has no transport")
    send, write = wire.send, transport.write

    def counting_send(message: bytes) -> bool:
        sent.messages += 1
        sent.payload += len(message)
        return send(message)

    def counting_write(data: bytes | bytearray | memoryview) -> None:
        sent.socket += len(data)
        write(data)

    wire.send = counting_send  # type: ignore[method-assign]
    transport.write = counting_write  # type: ignore[method-assign]
    try:
        yield sent
    finally:
        del wire.send
        del transport.write


@contextlib.contextmanager
def counting_playwright(page: Page) -> Iterator[Sent | None]:
    """Count what Playwright for Python sends to its driver: length-prefixed JSON on a pipe.

    Reaches into Playwright's internals (its connection hands every outgoing message to
    ``onmessage``, which the pipe transport serialises with ``json.dumps``); yields None when
    they are not where expected.
    """
    connection = getattr(getattr(page, "_impl_obj", None), "_connection", None)
    forward = getattr(connection, "onmessage", None)
    if connection is None or forward is None:
        yield None
        return
    sent = Sent()

    def counting_onmessage(message: dict[str, Any]) -> None:
        size = len(json.dumps(message, allow_nan=False).encode())  # as the transport does
        sent.messages += 1
        sent.payload += size
        sent.socket += 4 + size  # the 4-byte length prefix
        forward(message)

    connection.onmessage = counting_onmessage
    try:
        yield sent
    finally:
        connection.onmessage = forward


# --------------------------------------------------------------------------- contenders


@dataclass
class Entry:
    tool: str  # "small" or "padded"
    contender: str
    call: Call
    latencies_ns: list[int] = field(default_factory=list)
    cpu_ns: list[int] = field(default_factory=list)  # CPU time of this Python process

    def stats(self) -> dict[str, float]:
        stats = latency_stats(self.latencies_ns)
        stats["python_cpu_median_us"] = statistics.median(self.cpu_ns) / 1000
        return stats


@dataclass
class Bench:
    """Everything the calls need, and a counter that gives every call a fresh ``n``.

    Every call method takes the tool kind and an optional ``n`` (default: the next count)
    and answers what the page answered, ``n + 1`` when all is well.
    """

    browser: ego.Browser
    site: ego.Site
    tab: ego.Tab
    raw: RawCDP
    page: Page | None
    sources: dict[str, LoadedSource]
    counter: Iterator[int] = field(default_factory=lambda: itertools.count(100))
    not_cached: int = 0

    def _n(self, n: int | None) -> int:
        return next(self.counter) if n is None else n

    def wrapped(self, kind: str, n: int) -> str:
        """The plain wrap of the tool with ``{"n": n}``: what raw and Playwright send."""
        loaded = self.sources[kind]
        return wrap(loaded.expression, {"n": n}, url=loaded.url)

    def call_snippet(self, kind: str, n: int) -> str:
        """ego's Call snippet for ``{"n": n}``, as the cache layer builds it."""
        loaded = self.sources[kind]
        key = cache_key(loaded.site_id, loaded.tool)
        return call_snippet(key, loaded.version, embed_json({"n": n}))

    # The contenders (sections 1 and 2).

    async def ego_hot(self, kind: str, n: int | None = None) -> Any:
        result = await self.site.run_browser_tool(
            SITE_ID, TOOLS[kind], {"n": self._n(n)}, tab=self.tab
        )
        last = self.site.last_run
        if last is None or last.mode != "cached" or last.evaluations != 1:
            self.not_cached += 1
        return result

    async def raw_call(self, kind: str, n: int | None = None) -> Any:
        return await self.raw.evaluate(self.wrapped(kind, self._n(n)), await_promise=True)

    async def playwright_call(self, kind: str, n: int | None = None) -> Any:
        assert self.page is not None
        return await self.page.evaluate(self.wrapped(kind, self._n(n)))

    # The steps of the breakdown (section 3).

    async def ego_evaluate_snippet(self, kind: str, n: int | None = None) -> Any:
        return await self.tab.evaluate(self.call_snippet(kind, self._n(n)))

    async def raw_snippet(self, kind: str, n: int | None = None) -> Any:
        return await self.raw.evaluate(self.call_snippet(kind, self._n(n)), await_promise=True)

    async def ego_plain(self, kind: str, n: int | None = None) -> Any:
        """run_browser_tool with the cache off: the plain wrap through all of ego."""
        return await self.site.run_browser_tool(
            SITE_ID, TOOLS[kind], {"n": self._n(n)}, tab=self.tab, cache=False
        )


CallWith = Callable[[str, int | None], Awaitable[Any]]


async def check(bench: Bench, kind: str, calls: dict[str, CallWith]) -> None:
    """Every call must really compute n + 1; ego's hot call must send the Call snippet only."""
    for n in (7, 8):
        for name, call in calls.items():
            not_cached = bench.not_cached
            value = await call(kind, n)
            if value != n + 1:
                raise SystemExit(f"{name}, {TOOLS[kind]}: n={n} gave {value!r}, not {n + 1}")
            if bench.not_cached != not_cached:
                raise SystemExit(
                    f"{name}, {TOOLS[kind]}: the hot call was not cached ({bench.site.last_run})"
                )


# --------------------------------------------------------------------------- sections


async def cold_and_hot_bytes(bench: Bench, kind: str) -> dict[str, Any]:
    """The first call (stores the source) and the next (hot), counted on ego's socket."""
    tool = TOOLS[kind]
    out: dict[str, Any] = {}
    for label, n in (("cold", 1), ("hot", BYTES_N)):
        with counting_ego(bench.browser) as sent:
            start = time.perf_counter()
            value = await bench.site.run_browser_tool(SITE_ID, tool, {"n": n}, tab=bench.tab)
            elapsed = time.perf_counter() - start
        stats = bench.site.last_run
        assert stats is not None
        if value != n + 1:
            raise SystemExit(f"ego {tool}: n={n} gave {value!r}")
        want = "stored" if label == "cold" else "cached"
        if stats.mode != want:
            raise SystemExit(f"ego {tool}: the {label} call ran in mode {stats.mode!r}, not {want}")
        out[label] = {
            "mode": stats.mode,
            "stored": stats.stored,
            "evaluations": stats.evaluations,
            "js_bytes": stats.bytes_sent,
            "ws_payload_bytes": sent.payload,
            "ws_messages": sent.messages,
            "socket_bytes": sent.socket,
            "ms": elapsed * 1000,
        }
    return out


async def contender_bytes(bench: Bench, kind: str) -> dict[str, Any]:
    """What raw and Playwright send for one call of the wrapped source."""
    wrapped = bench.wrapped(kind, BYTES_N)
    js_bytes = len(wrapped.encode())
    await bench.raw.evaluate(wrapped, await_promise=True)
    payload = bench.raw.last_message_bytes
    out: dict[str, Any] = {
        "raw": {
            "js_bytes": js_bytes,
            "ws_payload_bytes": payload,
            "socket_bytes": ws_frame_bytes(payload),
        }
    }
    if bench.page is not None:
        with counting_playwright(bench.page) as sent:
            await bench.page.evaluate(wrapped)
        out["playwright"] = {
            "js_bytes": js_bytes,
            "driver_payload_bytes": None if sent is None else sent.payload,
            "driver_messages": None if sent is None else sent.messages,
            "driver_pipe_bytes": None if sent is None else sent.socket,
        }
    return out


async def take_turns(entries: list[Entry], count: int, record: bool) -> None:
    """``count`` calls of each entry, the entries taking turns call by call (order rotating)."""
    clock, cpu_clock = time.perf_counter_ns, time.process_time_ns
    for index in range(count):
        for entry in rotated(entries, index):
            cpu = cpu_clock()
            start = clock()
            await entry.call()
            elapsed = clock() - start
            if record:
                entry.cpu_ns.append(cpu_clock() - cpu)
                entry.latencies_ns.append(elapsed)


async def run_rounds(entries: list[Entry], calls: int, warmup: int, rounds: int) -> None:
    """Warm up, then ``calls`` timed calls per entry in ``rounds`` rounds.

    In a round each tool's entries take turns call by call, so that a burst of load from
    other programs hits them alike; the tools go in turn, their order rotating per round.
    """
    tools = list(dict.fromkeys(entry.tool for entry in entries))
    groups = {tool: [entry for entry in entries if entry.tool == tool] for tool in tools}
    for tool in tools:
        await take_turns(groups[tool], warmup, record=False)
    for index, chunk in enumerate(split(calls, rounds)):
        for tool in rotated(tools, index):
            gc.collect()
            await take_turns(groups[tool], chunk, record=True)


class StubTab:
    """Stands in for a tab: answers every evaluate at once, as a hot Call would (n + 1)."""

    def __init__(self) -> None:
        self.answer = 0

    async def evaluate(self, expression: str, *, timeout: float | None = None) -> Any:
        return self.answer


async def python_overhead_us(bench: Bench, kind: str, count: int) -> dict[str, float]:
    """The Python work of one hot call without the browser: median µs of each step.

    The last line runs the whole ``run_browser_tool`` against :class:`StubTab`: everything
    ego does for a hot call except the CDP round trip.
    """
    site, tool = bench.site, TOOLS[kind]
    learnings = site.learnings
    _, spec = learnings.tool(SITE_ID, tool)
    assert isinstance(spec, BrowserToolSpec)
    stub = StubTab()
    steps: dict[str, Callable[[int], object]] = {
        "learnings.tool (site + manifest lookup)": lambda n: learnings.tool(SITE_ID, tool),
        "check_args (JSON Schema)": lambda n: learnings.check_args(SITE_ID, spec, {"n": n}),
        "browser_source (path checks, stat)": lambda n: learnings.browser_source(SITE_ID, spec),
        "embed_json + call_snippet": lambda n: bench.call_snippet(kind, n),
        "wrap (plain, what raw builds)": lambda n: bench.wrapped(kind, n),
    }
    out: dict[str, float] = {}
    clock = time.perf_counter_ns
    for name, step in steps.items():
        samples = []
        for n in range(count):
            start = clock()
            step(n)
            samples.append(clock() - start)
        out[name] = latency_stats(samples)["median_us"]
    samples = []
    for n in range(count):
        stub.answer = n + 1
        start = clock()
        value = await site.run_browser_tool(SITE_ID, tool, {"n": n}, tab=cast(ego.Tab, stub))
        samples.append(clock() - start)
        if value != n + 1 or site.last_run is None or site.last_run.mode != "cached":
            raise SystemExit(f"run_browser_tool on a stub tab: {value!r}, {site.last_run}")
    out["all of run_browser_tool, stub tab"] = latency_stats(samples)["median_us"]
    return out


# --------------------------------------------------------------------------- main


async def benchmark(args: argparse.Namespace, tracker: ChromeTracker) -> dict[str, Any]:
    chrome = args.chrome or ego.find_chrome()
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        async_playwright = None  # type: ignore[assignment]
        print("playwright is not installed (pip install -e '.[bench]'): its columns are skipped")

    results: dict[str, Any] = {
        "environment": environment(chrome),
        "config": {
            "calls": args.calls,
            "warmup": args.warmup,
            "rounds": args.rounds,
            "padding": args.padding,
            "tool_kb": args.tool_kb,
            "breakdown": args.breakdown,
        },
    }

    with PageServer() as server, tempfile.TemporaryDirectory(prefix="ego-bench-") as tmp:
        padded = padded_source(args.tool_kb * 1024, args.padding)
        learnings = write_site(Path(tmp), server.url, padded)
        results["config"]["page"] = server.url
        async with contextlib.AsyncExitStack() as stack:
            # AsyncExitStack: every Chrome (and the Playwright driver) is ended even when
            # another clean-up step fails.
            browser = await ego.launch(
                executable=chrome, learnings=ego.Learnings(roots=[learnings])
            )
            stack.push_async_callback(browser.close)
            tracker.note_ego(browser)
            tab = await browser.new_tab(server.url)
            tracker.note_ego(browser)
            version = await browser.version()
            results["environment"]["chrome"] = version.get("product", "?")
            raw = await RawCDP.attach(browser.endpoint, tab.target_id)
            stack.push_async_callback(raw.close)
            page: Page | None = None
            if async_playwright is not None:
                pw = await stack.enter_async_context(async_playwright())
                pw_browser = await pw.chromium.launch(
                    executable_path=chrome, headless=True, args=chrome_args_for_playwright()
                )
                stack.push_async_callback(pw_browser.close)
                tracker.note_playwright()
                page = await pw_browser.new_page()
                await page.goto(server.url)
                tracker.note_playwright()

            site = browser.site
            sources = {kind: loaded_source(site, tool) for kind, tool in TOOLS.items()}
            bench = Bench(browser, site, tab, raw, page, sources)
            results["config"]["tools"] = {
                kind: {
                    "name": TOOLS[kind],
                    "source_bytes": len(sources[kind].expression.encode()),
                    "wrapped_bytes": len(bench.wrapped(kind, 1).encode()),
                }
                for kind in TOOLS
            }

            print("1/3 bytes: the cold (storing) call and a hot call of each tool ...", flush=True)
            byte_figures: dict[str, Any] = {}
            for kind in TOOLS:
                byte_figures[kind] = {"ego": await cold_and_hot_bytes(bench, kind)}
            contenders: dict[str, CallWith] = {"raw": bench.raw_call, "ego-hot": bench.ego_hot}
            if page is not None:
                contenders["playwright"] = bench.playwright_call
            for kind in TOOLS:
                await check(bench, kind, contenders)
            for kind in TOOLS:
                byte_figures[kind].update(await contender_bytes(bench, kind))
            results["bytes"] = byte_figures

            print(
                f"2/3 latency: {args.calls} calls per tool and contender, "
                f"{args.rounds} interleaved rounds ...",
                flush=True,
            )
            entries = [
                Entry(kind, name, functools.partial(call, kind))
                for kind in TOOLS
                for name, call in contenders.items()
            ]
            await run_rounds(entries, args.calls, args.warmup, args.rounds)
            if bench.not_cached:
                raise SystemExit(f"{bench.not_cached} timed ego calls were not cached")
            for kind in TOOLS:
                await check(bench, kind, contenders)  # still right, and still hot
            results["latency"] = {
                kind: {e.contender: e.stats() for e in entries if e.tool == kind} for kind in TOOLS
            }
            results["ego_hot_calls_not_cached"] = bench.not_cached

            if args.breakdown:
                print("3/3 breakdown of a hot call, step by step ...", flush=True)
                step_calls: dict[str, CallWith] = {
                    "raw: plain wrap": bench.raw_call,
                    "raw: Call snippet": bench.raw_snippet,
                    "ego Tab.evaluate: Call snippet": bench.ego_evaluate_snippet,
                    "ego run_browser_tool (hot)": bench.ego_hot,
                    "ego run_browser_tool cache=False": bench.ego_plain,
                }
                for kind in TOOLS:
                    await check(bench, kind, step_calls)
                steps = [
                    Entry(kind, name, functools.partial(call, kind))
                    for kind in TOOLS
                    for name, call in step_calls.items()
                ]
                calls = max(args.rounds, args.calls // 4)
                results["config"]["breakdown_calls"] = calls
                await run_rounds(steps, calls, max(1, args.warmup // 2), args.rounds)
                breakdown = {
                    kind: {e.contender: e.stats() for e in steps if e.tool == kind}
                    for kind in TOOLS
                }
                results["breakdown"] = breakdown
                results["breakdown_diffs"] = {
                    kind: {
                        "site_layer_us": steps_of["ego run_browser_tool (hot)"]["median_us"]
                        - steps_of["ego Tab.evaluate: Call snippet"]["median_us"],
                        "site_layer_cpu_us": steps_of["ego run_browser_tool (hot)"][
                            "python_cpu_median_us"
                        ]
                        - steps_of["ego Tab.evaluate: Call snippet"]["python_cpu_median_us"],
                        "snippet_over_plain_us": steps_of["raw: Call snippet"]["median_us"]
                        - steps_of["raw: plain wrap"]["median_us"],
                    }
                    for kind, steps_of in breakdown.items()
                }
                results["python_overhead_us"] = {
                    kind: await python_overhead_us(bench, kind, 2000) for kind in TOOLS
                }
    return results


def add_ratios_and_targets(results: dict[str, Any]) -> None:
    ratios: dict[str, dict[str, float | None]] = {}
    for kind, stats in results["latency"].items():
        ego_hot, raw, pw = stats["ego-hot"], stats["raw"], stats.get("playwright")
        ratios[kind] = {
            "ego_over_raw_median": ego_hot["median_us"] / raw["median_us"],
            "ego_over_raw_p99": ego_hot["p99_us"] / raw["p99_us"],
            "playwright_over_ego_median": None
            if pw is None
            else pw["median_us"] / ego_hot["median_us"],
            "playwright_over_ego_p99": None if pw is None else pw["p99_us"] / ego_hot["p99_us"],
        }
    results["ratios"] = ratios

    def target(name: str, value: float | None, limit: float, test: str) -> dict[str, Any]:
        ok: bool | None = None
        if value is not None:
            ok = (
                value >= limit
                if test == "at least"
                else value <= limit
                if test == "at most"
                else value < limit
            )
        return {"name": name, "value": value, "limit": limit, "test": test, "result": verdict(ok)}

    hot = results["bytes"]["padded"]["ego"]["hot"]
    kb = results["config"]["tool_kb"]
    results["targets"] = [
        target(
            f"hot call within {TARGET_EGO_OVER_RAW}x of the raw evaluate, small tool "
            "(ego-hot/raw median)",
            ratios["small"]["ego_over_raw_median"],
            TARGET_EGO_OVER_RAW,
            "at most",
        ),
        target(
            f"hot call at least {TARGET_PW_OVER_EGO:g}x faster than Playwright, small tool "
            "(playwright/ego-hot median)",
            ratios["small"]["playwright_over_ego_median"],
            TARGET_PW_OVER_EGO,
            "at least",
        ),
        target(
            f"under {TARGET_HOT_BYTES} bytes sent per hot call, {kb} KB tool (bytes written "
            "to ego's socket)",
            hot["socket_bytes"],
            TARGET_HOT_BYTES,
            "under",
        ),
    ]


def _fmt_ratio(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}x"


def _fmt_bytes(value: int | None) -> str:
    return "n/a" if value is None else f"{value:,}"


def report(results: dict[str, Any]) -> str:
    env, config = results["environment"], results["config"]
    tools = config["tools"]
    label = {
        "small": f"small ({tools['small']['source_bytes']:,} B)",
        "padded": f"{config['tool_kb']} KB ({tools['padded']['source_bytes']:,} B, "
        f"{config['padding']})",
    }
    lines = [
        f"{env['chrome']} ({env['chrome_binary']}), Python {env['python']}, {env['cpus']} CPUs",
        f"ego {env['ego']}, playwright {env['playwright']}, websockets {env['websockets']}, "
        f"orjson {env['orjson']}",
        f"page {config['page']}, tool async (args) => args.n + 1, 1-min load average "
        f"{env['loadavg_1m_before_after'][0]:.1f} before, "
        f"{env['loadavg_1m_before_after'][1]:.1f} after",
        "",
        f"1. Hot call latency: {config['calls']} calls per tool and contender after "
        f"{config['warmup']} warm-up, {config['rounds']} rounds, contenders taking turns call "
        "by call",
        "   (py cpu = CPU time this Python process spent per call, median)",
        f"   {'tool':<28}{'contender':<12}{'median us':>10}{'p99 us':>10}{'mean us':>10}"
        f"{'min us':>10}{'py cpu us':>10}",
    ]
    for kind, stats in results["latency"].items():
        for index, (name, figures) in enumerate(stats.items()):
            tool = label[kind] if index == 0 else ""
            lines.append(
                f"   {tool:<28}{name:<12}{figures['median_us']:>10.0f}{figures['p99_us']:>10.0f}"
                f"{figures['mean_us']:>10.0f}{figures['min_us']:>10.0f}"
                f"{figures['python_cpu_median_us']:>10.0f}"
            )
    for kind, ratio in results["ratios"].items():
        lines.append(
            f"   {label[kind]}: ego-hot/raw median {_fmt_ratio(ratio['ego_over_raw_median'])}, "
            f"p99 {_fmt_ratio(ratio['ego_over_raw_p99'])}; playwright/ego-hot median "
            f"{_fmt_ratio(ratio['playwright_over_ego_median'])}, "
            f"p99 {_fmt_ratio(ratio['playwright_over_ego_p99'])}"
        )
    lines += [
        "   ego calls that were not cached during the timing: "
        f"{results['ego_hot_calls_not_cached']}",
        "",
        "2. Bytes sent per call (JS = the JavaScript; payload = the CDP messages; wire = what",
        "   goes into the socket or pipe, frames included)",
        f"   {'tool':<28}{'call':<40}{'JS':>9}{'payload':>10}{'wire':>10}",
    ]
    for kind, figures in results["bytes"].items():
        ego_figures = figures["ego"]
        rows: list[tuple[str, int | None, int | None, int | None]] = []
        for phase in ("hot", "cold"):
            item = ego_figures[phase]
            what = (
                "ego hot (cached, 1 evaluate)"
                if phase == "hot"
                else f"ego cold ({item['mode']}, {item['evaluations']} evaluates, "
                f"{item['ms']:.0f} ms)"
            )
            rows.append((what, item["js_bytes"], item["ws_payload_bytes"], item["socket_bytes"]))
        raw = figures["raw"]
        rows.append(
            (
                "raw Runtime.evaluate (websocket)",
                raw["js_bytes"],
                raw["ws_payload_bytes"],
                raw["socket_bytes"],
            )
        )
        pw = figures.get("playwright")
        if pw is not None:
            rows.append(
                (
                    "playwright (Python -> driver pipe)",
                    pw["js_bytes"],
                    pw["driver_payload_bytes"],
                    pw["driver_pipe_bytes"],
                )
            )
        for index, (what, js, payload, wire) in enumerate(rows):
            tool = label[kind] if index == 0 else ""
            lines.append(
                f"   {tool:<28}{what:<40}{_fmt_bytes(js):>9}{_fmt_bytes(payload):>10}"
                f"{_fmt_bytes(wire):>10}"
            )
    lines.append(
        "   (Playwright's driver then sends the source to Chrome again, over its own pipe; "
        "not counted)"
    )
    if "breakdown" in results:
        breakdown, python = results["breakdown"], results["python_overhead_us"]
        short = {"small": "small", "padded": f"{config['tool_kb']} KB"}
        lines += [
            "",
            f"3. Breakdown of a call: {config['breakdown_calls']} calls per step and tool, taking "
            "turns as in 1",
            f"   {'step':<38}"
            + "".join(f"{short[kind] + ' median':>15}{'py cpu':>8}" for kind in breakdown),
        ]
        for name in next(iter(breakdown.values())):
            lines.append(
                f"   {name:<38}"
                + "".join(
                    f"{breakdown[kind][name]['median_us']:>15.0f}"
                    f"{breakdown[kind][name]['python_cpu_median_us']:>8.0f}"
                    for kind in breakdown
                )
            )
        lines.append(
            f"   {'Python steps of a hot call, no browser':<38}"
            + "".join(f"{short[kind] + ' median':>15}{'':>8}" for kind in python)
        )
        for step in next(iter(python.values())):
            lines.append(
                f"   {step:<38}" + "".join(f"{python[kind][step]:>15.1f}{'':>8}" for kind in python)
            )
        for kind in breakdown:
            diffs = results["breakdown_diffs"][kind]
            lines.append(
                f"   {short[kind]}: Site layer (hot run_browser_tool - Tab.evaluate of the "
                f"snippet) {diffs['site_layer_us']:+.0f} us, {diffs['site_layer_cpu_us']:+.0f} "
                f"us CPU; Call snippet in the page (raw snippet - raw plain wrap) "
                f"{diffs['snippet_over_plain_us']:+.0f} us"
            )
    lines += ["", "Targets"]
    for item in results["targets"]:
        value = item["value"]
        shown = (
            "n/a"
            if value is None
            else (f"{value:,} bytes" if isinstance(value, int) else f"{value:.2f}x")
        )
        lines.append(f"   {item['result']:<5} {item['name']}: {shown}")
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0] if __doc__ else "")
    parser.add_argument(
        "--calls", type=int, default=2000, help="timed calls per tool and contender"
    )
    parser.add_argument("--warmup", type=int, default=200, help="warm-up calls per contender")
    parser.add_argument("--rounds", type=int, default=10, help="interleaved rounds")
    parser.add_argument("--tool-kb", type=int, default=100, help="size of the padded tool, KB")
    parser.add_argument(
        "--padding",
        choices=("comment", "table"),
        default="comment",
        help="what pads the big tool: a comment, or an unused constant table in the function",
    )
    parser.add_argument(
        "--no-breakdown",
        dest="breakdown",
        action="store_false",
        help="skip section 3 (the step-by-step breakdown, calls/4 calls per step)",
    )
    parser.add_argument("--chrome", default=None, help="Chrome binary (default: ego's choice)")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args(argv)
    for name in ("calls", "warmup", "rounds", "tool_kb"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    return run_benchmark(
        parse_args(argv), benchmark, add_ratios_and_targets, report, record_processes=True
    )


if __name__ == "__main__":
    sys.exit(main())
