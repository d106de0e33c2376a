"""How large a page's snapshot is: ego's ``tab.snapshot()`` against Playwright's
``page.aria_snapshot(mode="ai")`` (the mode playwright-mcp hands agents: the accessibility
tree with a ref on every element), on the same pages, in characters.

The pages: the demo shop (``ego.demo``, as ``ego demo --serve`` serves it) and the pages the
tests serve (frames, shadow roots, components, states, a long list). Each is loaded in both
(same Chrome binary) until its load event (and, in ego, every frame attached; Playwright:
network idle), then snapshotted by each. ego's count includes its header line (``page "Title"
URL``); "ego whole" is the snapshot with no line budget (``max_lines=100000``), which is what
an agent gets of a page under 400 lines.
Then each takes its snapshot ``--rounds`` times, interleaved (ego its default one, the
400 lines an agent gets, and its whole one; Playwright its one, always whole), and the
medians are printed: a machine's load changes them, so compare the figures of one run.

    .venv/bin/python bench/bench_snapshot_size.py
    .venv/bin/python bench/bench_snapshot_size.py --show "demo: product"   # print both texts
    .venv/bin/python bench/bench_snapshot_size.py --only "tests: 1,500 rows" --rounds 21

Needs Playwright (``.venv/bin/pip install -e '.[bench]'``; no browser download: it runs the
same Chromium as ego) and the test extras (the tests' pages come from ``tests/``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _common import chrome_args_for_playwright  # noqa: E402

import ego  # noqa: E402
from ego.demo import DemoServer  # noqa: E402
from tests.helpers.page_server import PageServer  # noqa: E402
from tests.helpers.real_page import real_page  # noqa: E402
from tests.helpers.snapshot_pages import BIG, COMPONENTS, GIF, SNAPSHOT_PAGE, STATES  # noqa: E402

DEMO_PATHS = {
    "demo: home": "/",
    "demo: product": "/product/1",
    "demo: search": "/search?q=desk",
    "demo: contact": "/contact",
    "demo: login": "/login",
}


def pages(shop: DemoServer, server: PageServer) -> dict[str, str]:
    server.route("/cap/nav/pixel.gif", GIF, content_type="image/gif")
    tests = {
        "tests: frames and shadow roots": real_page(server, "size"),
        "tests: components": server.route("/size/components", COMPONENTS),
        "tests: states": server.route("/size/states", STATES),
        "tests: catalog": server.route("/size/catalog", SNAPSHOT_PAGE),
        "tests: 1,500 rows": server.route("/size/big", BIG),
    }
    return {**{name: shop.url_for(path) for name, path in DEMO_PATHS.items()}, **tests}


@dataclass
class Measured:
    """One page: ego's default and whole snapshots, Playwright's, and the time each took."""

    default: str = ""
    whole: str = ""
    playwright: str = ""
    ego_ms: list[float] = field(default_factory=list)
    default_ms: list[float] = field(default_factory=list)
    playwright_ms: list[float] = field(default_factory=list)


async def ego_tab(browser: ego.Browser, name: str, url: str) -> ego.Tab:
    tab = await browser.new_tab(url)
    # Every iframe's frame attached and running (the load event waited for their documents;
    # a cross-site one's session may come just after).
    iframes = await tab.evaluate("document.querySelectorAll('iframe').length")
    while len(await tab.frames()) <= iframes:
        if not await tab.changed(10):
            raise SystemExit(f"{name}: a frame never attached")
    for frame in await tab.frames():
        await frame.evaluate("1")
    return tab


async def measure(urls: dict[str, str], chrome: str, rounds: int) -> dict[str, Measured]:
    from playwright.async_api import async_playwright

    found: dict[str, Measured] = {}
    async with async_playwright() as driver, ego.launch(executable=chrome) as ours:
        theirs = await driver.chromium.launch(
            executable_path=chrome, headless=True, args=chrome_args_for_playwright()
        )
        try:
            for name, url in urls.items():
                tab = await ego_tab(ours, name, url)
                page = await theirs.new_page()
                await page.goto(url, wait_until="networkidle")
                one = found[name] = Measured(
                    await tab.snapshot(),
                    await tab.snapshot(max_lines=100_000),
                    await page.aria_snapshot(mode="ai"),
                )
                for index in range(rounds):  # interleaved, the order turning each round
                    order = ("ego", "default", "pw")[index % 3 :] + ("ego", "default", "pw")[
                        : index % 3
                    ]
                    for who in order:
                        started = time.perf_counter()
                        if who == "ego":
                            await tab.snapshot(max_lines=100_000)
                            one.ego_ms.append((time.perf_counter() - started) * 1000)
                        elif who == "default":
                            await tab.snapshot()
                            one.default_ms.append((time.perf_counter() - started) * 1000)
                        else:
                            await page.aria_snapshot(mode="ai")
                            one.playwright_ms.append((time.perf_counter() - started) * 1000)
                await tab.close()
                await page.close()
        finally:
            await theirs.close()
    return found


async def main(show: str | None, chrome: str, rounds: int, only: str | None) -> None:
    server = PageServer()
    load = os.getloadavg()[0]
    try:
        with DemoServer(port=0) as shop:
            urls = pages(shop, server)
            if only is not None:
                urls = {only: urls[only]}
            found = await measure(urls, chrome, rounds)
    finally:
        server.close()
    print(f"1-minute load: {load:.2f} before, {os.getloadavg()[0]:.2f} after")
    print(f"snapshot size in characters (Chromium at {chrome})")
    header = (
        f"{'page':32} {'ego':>8} {'ego whole':>10} {'playwright ai':>14} {'ego/pw':>7} "
        f"{'whole/pw':>9}"
    )
    print(header)
    print("-" * len(header))
    total_ego = total_whole = total_pw = 0
    for name, one in found.items():
        total_ego += len(one.default)
        total_whole += len(one.whole)
        total_pw += len(one.playwright)
        print(
            f"{name:32} {len(one.default):8,} {len(one.whole):10,} {len(one.playwright):14,} "
            f"{len(one.default) / len(one.playwright):7.2f} "
            f"{len(one.whole) / len(one.playwright):9.2f}"
        )
    print("-" * len(header))
    print(
        f"{'all pages':32} {total_ego:8,} {total_whole:10,} {total_pw:14,} "
        f"{total_ego / total_pw:7.2f} {total_whole / total_pw:9.2f}"
    )
    if rounds:
        print(f"\ntime to take it, medians of {rounds} interleaved rounds, in ms")
        print(
            f"{'page':32} {'ego':>8} {'ego whole':>10} {'playwright':>11} {'ego/pw':>7} "
            f"{'whole/pw':>9}"
        )
        for name, one in found.items():
            mine, whole = statistics.median(one.default_ms), statistics.median(one.ego_ms)
            other = statistics.median(one.playwright_ms)
            print(
                f"{name:32} {mine:8.1f} {whole:10.1f} {other:11.1f} {mine / other:7.2f} "
                f"{whole / other:9.2f}"
            )
    if show is not None:
        one = found[show]
        print(f"\n--- ego: {show}\n{one.default}\n\n--- playwright ai: {show}\n{one.playwright}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", help="print both snapshots of this page (its name above)")
    parser.add_argument("--chrome", help="the Chromium binary for both (default: ego's choice)")
    parser.add_argument(
        "--rounds", type=int, default=5, help="timed snapshots per page and contender (0: none)"
    )
    parser.add_argument("--only", help="measure this page only (its name above)")
    options = parser.parse_args()
    asyncio.run(
        main(options.show, options.chrome or ego.find_chrome(), options.rounds, options.only)
    )
