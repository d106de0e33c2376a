"""Client memory across many hot tool calls on one tab: does ego's RSS stay flat?

Run from the project root::

    .venv/bin/python bench/bench_memory.py [--calls N] [--concurrency N] [--no-fetch]
        [--unbounded-log] [--json PATH]

A learnings site is written to a temporary folder with one browser tool that, like most real
tools, makes a request per call: ``fetch('/api?n=' + args.n)`` on its page (a 404 from the
page server, which is enough for a request in the tab's network log), and answers
``args.n + 1``. ``--no-fetch`` uses ``async (args) => args.n + 1`` instead. The page server
runs in a child process, so this process's RSS is ego's (and Python's) alone.

The calls are ``site.run_browser_tool(site, tool, {"n": i}, tab=tab)`` on one tab that is
never navigated (as a pool reuses its tabs), ``--concurrency`` at a time, every answer
checked. RSS (psutil, after ``gc.collect()``) is taken after the first call, after a warm-up
of ``--warmup`` calls (the network log is full by then), every tenth of the run, and at the
end; the growth reported is from the warm-up to the end (target: under 5 MB for 100,000
calls). ``--unbounded-log`` lifts the network log's bound, to show what it saves.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import psutil
from _common import ChromeTracker, environment, run_benchmark

import ego
from ego.page.network import MAX_REQUESTS

SITE_ID = "bench-memory"
TOOL = "add_one"
FETCHING = "async (args) => (await fetch('/api?n=' + args.n)).status === 404 ? args.n + 1 : -1"
PLAIN = "async (args) => args.n + 1"
TARGET_GROWTH_MB = 5.0

# The page server, run as a child process: a page at /, 404 for anything else.
SERVER = r"""
import http.server, sys
PAGE = b"<!doctype html><meta charset=utf-8><title>ego memory bench</title><p>bench</p>"
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        page = self.path in ("/", "/index.html")
        body = PAGE if page else b""
        self.send_response(200 if page else 404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(server.server_address[1], flush=True)
server.serve_forever()
"""


@contextlib.contextmanager
def page_server() -> Iterator[str]:
    """The page server in a child process; yields its URL."""
    child = subprocess.Popen(
        [sys.executable, "-c", SERVER], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        assert child.stdout is not None
        port = int(child.stdout.readline())
        yield f"http://127.0.0.1:{port}/"
    finally:
        child.terminate()
        child.wait(timeout=10)


def write_site(root: Path, url: str, source: str) -> Path:
    """A learnings folder with the bench site; returns the learnings root."""
    site = root / "learnings" / SITE_ID
    (site / "browser-tools").mkdir(parents=True)
    (site / "browser-tools" / f"{TOOL}.js").write_text(source + "\n", encoding="utf-8")
    manifest = {
        "id": SITE_ID,
        "name": "ego memory bench",
        "domains": [url.split("//", 1)[1].rstrip("/")],
        "startUrl": url,
        "browserTools": {
            TOOL: {
                "description": "answers n + 1",
                "path": f"browser-tools/{TOOL}.js",
                "args": {"n": {"type": "integer", "required": True, "description": "any"}},
                "returns": {"type": "integer"},
                "sideEffect": "read",
            }
        },
    }
    (site / "manifest.json").write_bytes(orjson.dumps(manifest, option=orjson.OPT_INDENT_2))
    return root / "learnings"


def rss_mb() -> float:
    gc.collect()
    return float(psutil.Process().memory_info().rss) / 2**20


async def run_calls(site: ego.Site, tab: ego.Tab, first: int, count: int, width: int) -> None:
    """``count`` hot calls, ``width`` at a time; every answer checked."""
    next_n = first
    end = first + count

    async def worker() -> None:
        nonlocal next_n
        while next_n < end:
            n = next_n
            next_n += 1
            answer = await site.run_browser_tool(SITE_ID, TOOL, {"n": n}, tab=tab)
            if answer != n + 1:
                raise SystemExit(f"wrong answer for n={n}: {answer!r}")

    await asyncio.gather(*(worker() for _ in range(width)))


async def benchmark(args: argparse.Namespace, tracker: ChromeTracker) -> dict[str, Any]:
    chrome = args.chrome or ego.find_chrome()
    results: dict[str, Any] = {
        "environment": environment(chrome),
        "config": {
            "calls": args.calls,
            "warmup": args.warmup,
            "concurrency": args.concurrency,
            "fetch": args.fetch,
            "log_bound": None if args.unbounded_log else MAX_REQUESTS,
        },
    }
    samples: list[dict[str, float]] = []
    with page_server() as url, tempfile.TemporaryDirectory(prefix="ego-bench-") as tmp:
        learnings = write_site(Path(tmp), url, FETCHING if args.fetch else PLAIN)
        async with ego.launch(executable=chrome, learnings=ego.Learnings(roots=[learnings])) as (
            browser
        ):
            tracker.note_ego(browser)
            tab = await browser.new_tab(url)
            tracker.note_ego(browser)
            results["environment"]["chrome"] = (await browser.version()).get("product", "?")
            if args.unbounded_log:
                tab._network.max_requests = sys.maxsize
            site = browser.site
            await run_calls(site, tab, 0, 1, 1)
            first_mb = rss_mb()
            await run_calls(site, tab, 1, args.warmup, args.concurrency)
            last_run = site.last_run
            if last_run is None or last_run.mode != "cached":
                raise SystemExit(f"the calls are not hot (cached): {last_run}")
            before_mb = rss_mb()
            start, cpu = time.perf_counter(), time.process_time()
            done, step = 0, max(1, args.calls // 10)
            while done < args.calls:
                chunk = min(step, args.calls - done)
                await run_calls(site, tab, 1 + args.warmup + done, chunk, args.concurrency)
                done += chunk
                samples.append({"calls": done, "rss_mb": rss_mb()})
                print(f"{done:>9,} calls  RSS {samples[-1]['rss_mb']:.1f} MB", file=sys.stderr)
            elapsed, used = time.perf_counter() - start, time.process_time() - cpu
            after_mb = samples[-1]["rss_mb"]
            log = tab._network
            results["network_log"] = {
                "entries": len(log.requests_by_id),
                "dropped": log.dropped,
                "requests_listed": len(await tab.network()),
            }
    results["rss_mb"] = {
        "after_first_call": first_mb,
        "after_warmup": before_mb,
        "after_calls": after_mb,
        "growth": after_mb - before_mb,
        "growth_from_first_call": after_mb - first_mb,
        "samples": samples,
    }
    results["rate"] = {
        "calls_per_s": args.calls / elapsed,
        "client_cpu_us_per_call": used / args.calls * 1e6,
    }
    return results


def add_ratios_and_targets(results: dict[str, Any]) -> None:
    growth = results["rss_mb"]["growth"]
    results["target"] = {"growth_mb_under": TARGET_GROWTH_MB, "met": growth < TARGET_GROWTH_MB}


def report(results: dict[str, Any]) -> str:
    config, env, rss = results["config"], results["environment"], results["rss_mb"]
    load = env["loadavg_1m_before_after"]
    kind = "a fetch per call" if config["fetch"] else "no request"
    bound = config["log_bound"]
    lines = [
        f"Client RSS over {config['calls']:,} hot run_browser_tool calls on one tab ({kind}, "
        f"{config['concurrency']} at a time), Chrome {env.get('chrome', '?')}, {env['cpus']} "
        f"CPUs, load avg (1 min) before/after {load[0]:.1f}/{load[1]:.1f}",
        f"network log bound: {bound if bound is not None else 'none (--unbounded-log)'}",
        f"   {'after the first call':<28}{rss['after_first_call']:8.1f} MB",
    ]
    warmed = f"after {config['warmup']:,} warm-up calls"
    lines.append(f"   {warmed:<28}{rss['after_warmup']:8.1f} MB")
    for sample in rss["samples"]:
        label = f"+ {sample['calls']:,} calls"
        lines.append(f"   {label:<28}{sample['rss_mb']:8.1f} MB")
    met = "PASS" if results["target"]["met"] else "MISS"
    lines += [
        f"growth over the {config['calls']:,} calls: {rss['growth']:+.1f} MB "
        f"(target under {TARGET_GROWTH_MB:g} MB: {met}); from the first call "
        f"{rss['growth_from_first_call']:+.1f} MB",
        f"network log at the end: {results['network_log']['entries']:,} entries, "
        f"{results['network_log']['dropped']:,} dropped",
        f"rate: {results['rate']['calls_per_s']:,.0f} calls/s, client CPU "
        f"{results['rate']['client_cpu_us_per_call']:.0f} µs per call",
    ]
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0] if __doc__ else "")
    parser.add_argument("--calls", type=int, default=100_000, help="measured hot calls")
    parser.add_argument("--warmup", type=int, default=5_000, help="calls before 'before'")
    parser.add_argument("--concurrency", type=int, default=16, help="calls at once on the tab")
    parser.add_argument(
        "--no-fetch", dest="fetch", action="store_false", help="a tool that makes no request"
    )
    parser.add_argument(
        "--unbounded-log", action="store_true", help="lift the network log's bound (to compare)"
    )
    parser.add_argument("--chrome", default=None, help="Chrome binary (default: ego's choice)")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args(argv)
    for name in ("calls", "warmup", "concurrency"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    return run_benchmark(parse_args(argv), benchmark, add_ratios_and_targets, report)


if __name__ == "__main__":
    sys.exit(main())
