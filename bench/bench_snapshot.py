"""What a snapshot costs on a page with frames, against the same content in one document.

Two pages hold the same outline: ``framed`` has a same-origin iframe, a cross-site iframe
(``localhost`` on the same port: its own renderer process) and a component with an open
shadow root; ``flat`` has the same content inline in its own document. Each round snapshots
both (interleaved), and the script prints the medians, their spread over the rounds and the
ratio framed/flat, plus what the framed page's outline holds.

    .venv/bin/python bench/bench_snapshot.py --rounds 30 --items 300
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import ego


def _items(prefix: str, count: int) -> str:
    return "".join(
        f'<li><span>{prefix} item {n}</span> <a href="/{prefix}/{n}">open</a>'
        f' <button data-testid="{prefix}-{n}">Add</button></li>'
        for n in range(count)
    )


def _pages(port: int, items: int) -> dict[str, str]:
    shadow = (
        "<script>customElements.define('x-list', class extends HTMLElement {"
        " constructor() { super(); this.attachShadow({mode: 'open'}).innerHTML ="
        f" `<ul>{_items('shadow', items)}</ul>`; }} }});</script>"
    )
    return {
        "/same": f"<ul>{_items('same', items)}</ul>",
        "/cross": f"<ul>{_items('cross', items)}</ul>",
        "/framed": (
            f"<title>Framed</title><h1>Framed</h1><ul>{_items('top', items)}</ul>{shadow}"
            '<x-list></x-list><iframe name="same" src="/same"></iframe>'
            f'<iframe name="cross" src="http://localhost:{port}/cross"></iframe>'
        ),
        "/flat": (
            f"<title>Flat</title><h1>Flat</h1><ul>{_items('top', items)}</ul>"
            f"<ul>{_items('shadow', items)}</ul><div><ul>{_items('same', items)}</ul></div>"
            f"<div><ul>{_items('cross', items)}</ul></div>"
        ),
    }


def _serve(items: int) -> tuple[ThreadingHTTPServer, int]:
    pages: dict[str, str] = {}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            body = pages.get(self.path, "not found").encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port = httpd.server_address[1]
    pages.update(_pages(port, items))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, port


def _lines_in_frames(lines: list[str]) -> int:
    """How many lines sit under an iframe's line (indented deeper than it)."""
    count, frame_depth = 0, None
    for line in lines:
        depth = len(line) - len(line.lstrip(" "))
        if frame_depth is not None and depth > frame_depth:
            count += 1
            continue
        frame_depth = depth if line.lstrip().startswith("iframe ") else None
    return count


async def main(rounds: int, items: int) -> None:
    httpd, port = _serve(items)
    try:
        async with ego.launch() as browser:
            framed = await browser.new_tab(f"http://127.0.0.1:{port}/framed")
            await framed.frame(name="cross", timeout=10)
            flat = await browser.new_tab(f"http://127.0.0.1:{port}/flat")
            budget = 100_000
            for tab in (framed, flat):  # warm up: compile, caches
                await tab.snapshot(max_lines=budget)
            times: dict[str, list[float]] = {"framed": [], "flat": []}
            for _ in range(rounds):
                for name, tab in (("framed", framed), ("flat", flat)):
                    started = time.perf_counter()
                    outline = await tab.snapshot(max_lines=budget)
                    times[name].append((time.perf_counter() - started) * 1000)
            lines = len(outline.splitlines())
            framed_outline = await framed.snapshot(max_lines=budget)
            in_frames = _lines_in_frames(framed_outline.splitlines())
            print(
                f"snapshot, {rounds} interleaved rounds, {items} items per list "
                f"(framed: {len(framed_outline.splitlines())} lines, {in_frames} inside "
                f"frames; flat: {lines} lines)"
            )
            for name, values in times.items():
                print(
                    f"  {name:6}  median {statistics.median(values):7.1f} ms   "
                    f"min {min(values):7.1f}   max {max(values):7.1f}"
                )
            ratio = statistics.median(times["framed"]) / statistics.median(times["flat"])
            per_round = [a / b for a, b in zip(times["framed"], times["flat"], strict=True)]
            print(
                f"  framed/flat median ratio {ratio:.2f} (rounds: min {min(per_round):.2f}, "
                f"max {max(per_round):.2f})"
            )
    finally:
        httpd.shutdown()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--items", type=int, default=300)
    options = parser.parse_args()
    asyncio.run(main(options.rounds, options.items))
