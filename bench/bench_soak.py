"""A long-lived process: 1,000 tabs opened, used and closed and 400 iframes attached and
removed in one ``ego.launch()`` process, then what is left.

Prints asyncio tasks, the connection's sessions, subscriptions, listeners and waiters, and the
client's memory (RSS) before and after, and the hot call (a tool-sized ``Tab.evaluate`` on a
settled tab) before and after; after, it is also interleaved round by round with the same
call on a fresh Chrome started in the same process, so that "no slower" is a ratio measured
in the same run whatever else the machine did during the churn. Run from the project root::

    .venv/bin/python bench/bench_soak.py                 # 1,000 tabs, 400 frames
    .venv/bin/python bench/bench_soak.py --tabs 200 --frames 100 --json /tmp/soak.json
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import http.server
import statistics
import sys
import threading
import time
from typing import Any

import orjson
import psutil

import ego

ROUNDS = 5
CALLS = 400


class _Handler(http.server.BaseHTTPRequestHandler):
    port = 0

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path == "/page":
            body = (
                "<title>Soak</title><p>page</p><iframe name=same src='/same'></iframe>"
                f"<iframe name=cross src='http://localhost:{self.port}/cross'></iframe>"
            )
        elif path in ("/same", "/cross"):
            body = f"<title>{path[1:]}</title><p>frame</p>"
        else:
            body = "<title>blank</title>"
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a tab closed before its frame loaded: the reset is expected


def _serve() -> tuple[http.server.ThreadingHTTPServer, int]:
    server = _Server(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    port = int(server.server_address[1])
    _Handler.port = port
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, port


def _rss_mb() -> float:
    gc.collect()
    return psutil.Process().memory_info().rss / 1e6


#: Client CPU (this process's, in microseconds) per hot call, by the tab it went to.
CPU: dict[str, list[float]] = {}


async def _hot_calls(tab: ego.Tab, count: int, label: str = "") -> list[float]:
    expression = "(() => { const a = [1, 2, 3]; return a.map(x => x * 2).length; })()"
    times: list[float] = []
    cpu = time.process_time_ns()
    for _ in range(count):
        started = time.perf_counter_ns()
        await tab.evaluate(expression, describe=False)
        times.append((time.perf_counter_ns() - started) / 1000)
    if label:
        CPU.setdefault(label, []).append((time.process_time_ns() - cpu) / 1000 / count)
    return times


async def _churn(browser: ego.Browser, base: str, port: int, tabs: int, frames: int) -> None:
    page = f"{base}/page"

    async def one(index: int) -> None:
        tab = await browser.new_tab(page)
        frame = await tab.frame(name="cross", timeout=10)
        await frame.evaluate("document.title")
        await tab.evaluate(f"{index} + 1")
        await tab.close()

    for start in range(0, tabs, 10):
        await asyncio.gather(*(one(index) for index in range(start, min(tabs, start + 10))))
    tab = await browser.new_tab(f"{base}/same")
    for index in range(frames):
        source = f"http://localhost:{port}/cross" if index % 2 else "/same"
        await tab.evaluate(
            f"new Promise(r => {{ const f = document.createElement('iframe'); f.name = 'f{index}';"
            f" f.onload = r; f.src = '{source}'; document.body.append(f); }})"
        )
        frame = await tab.frame(name=f"f{index}", timeout=10)
        await frame.evaluate("1 + 1")
        await tab.evaluate(f"document.querySelector('iframe[name=f{index}]').remove()")
    await tab.close()


async def main(tabs: int, frames: int) -> dict[str, Any]:
    server, port = _serve()
    base = f"http://127.0.0.1:{port}"
    fresh_hot: list[float] = []
    try:
        async with await ego.launch(allowed_origins=[base, f"http://localhost:{port}"]) as browser:
            hot = await browser.new_tab(f"{base}/same")
            warm = await browser.new_tab(f"{base}/page")
            await warm.close()
            await _hot_calls(hot, 200)
            before_hot: list[float] = []
            after_hot: list[float] = []
            tasks_before = len(asyncio.all_tasks())
            held_before = browser.connection.resources()
            rss_before = _rss_mb()
            # The hot call before and after, each in rounds; the churn in between.
            for _ in range(ROUNDS):
                before_hot += await _hot_calls(hot, CALLS // ROUNDS)
            started = time.monotonic()
            await _churn(browser, base, port, tabs, frames)
            churn_seconds = time.monotonic() - started
            leftovers = {t for t in asyncio.all_tasks() if t is not asyncio.current_task()}
            await asyncio.wait(leftovers, timeout=2)  # tasks that are ending, end
            tasks_after = len(asyncio.all_tasks())
            held_after = browser.connection.resources()
            rss_after = _rss_mb()
            # The same call on a fresh Chrome, interleaved round by round with the soaked one:
            # what the soak costs, apart from whatever else the machine did meanwhile.
            # The same limits, so that the same sessions (the guard's) attach to its page.
            async with await ego.launch(
                allowed_origins=[base, f"http://localhost:{port}"]
            ) as fresh:
                other = await fresh.new_tab(f"{base}/same")
                await _hot_calls(other, 200)
                for _ in range(ROUNDS):
                    after_hot += await _hot_calls(hot, CALLS // ROUNDS, "soaked")
                    fresh_hot += await _hot_calls(other, CALLS // ROUNDS, "fresh")
    finally:
        server.shutdown()
    before_median = statistics.median(before_hot)
    after_median = statistics.median(after_hot)
    fresh_median = statistics.median(fresh_hot)
    return {
        "tabs": tabs,
        "frames": frames,
        "churn_seconds": round(churn_seconds, 1),
        "tasks": [tasks_before, tasks_after],
        "held": [held_before, held_after],
        "rss_mb": [round(rss_before, 1), round(rss_after, 1)],
        "rss_growth_mb": round(rss_after - rss_before, 1),
        "hot_call_us": [round(before_median, 1), round(after_median, 1)],
        "hot_after_over_before": round(after_median / before_median, 3),
        "hot_fresh_us": round(fresh_median, 1),
        "hot_soaked_over_fresh": round(after_median / fresh_median, 3),
        "client_cpu_us": {
            label: round(statistics.median(values), 1) for label, values in CPU.items()
        },
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tabs", type=int, default=1000)
    parser.add_argument("--frames", type=int, default=400)
    parser.add_argument("--json", help="also write the figures to this file")
    options = parser.parse_args()
    figures = asyncio.run(main(options.tabs, options.frames))
    print(f"{figures['tabs']} tabs and {figures['frames']} frames in {figures['churn_seconds']} s")
    print(f"asyncio tasks: {figures['tasks'][0]} before, {figures['tasks'][1]} after")
    print(f"connection holds: {figures['held'][0]} before, {figures['held'][1]} after")
    print(
        f"client RSS: {figures['rss_mb'][0]} MB before, {figures['rss_mb'][1]} MB after "
        f"({figures['rss_growth_mb']:+} MB)"
    )
    print(
        f"hot call median: {figures['hot_call_us'][0]} us before, {figures['hot_call_us'][1]} "
        f"us after (after/before {figures['hot_after_over_before']}); a fresh Chrome in the "
        f"same rounds {figures['hot_fresh_us']} us (soaked/fresh "
        f"{figures['hot_soaked_over_fresh']}); client CPU per call {figures['client_cpu_us']}"
    )
    if options.json:
        with open(options.json, "wb") as out:
            out.write(orjson.dumps(figures, option=orjson.OPT_INDENT_2))
    sys.exit(0)
