"""How large a page's snapshot is: ego's ``tab.snapshot()`` against Playwright's
``page.aria_snapshot(mode="ai")`` (the mode playwright-mcp hands agents: the accessibility
tree with a ref on every element), on the same pages, in characters.

The pages: the demo shop (``ego.demo``, as ``ego demo --serve`` serves it) and the pages the
tests serve (frames, shadow roots, components, states, a long list). Each is loaded in both
(same Chrome binary) until its load event (and, in ego, every frame attached; Playwright: network
idle), then snapshotted once by each. ego's
count includes its header line (``page "Title" URL``); "ego whole" is the snapshot with no
line budget (``max_lines=100000``), which is what an agent gets of a page under 400 lines.

    .venv/bin/python bench/bench_snapshot_size.py
    .venv/bin/python bench/bench_snapshot_size.py --show "demo: product"   # print both texts

Needs Playwright (``.venv/bin/pip install -e '.[bench]'``; no browser download: it runs the
same Chromium as ego) and the test extras (the tests' pages come from ``tests/``).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _common import chrome_args_for_playwright  # noqa: E402

import ego  # noqa: E402
from ego.demo import DemoServer  # noqa: E402
from tests.conftest import PageServer  # noqa: E402
from tests.test_ax_snapshot import COMPONENTS, STATES  # noqa: E402
from tests.test_capabilities import GIF, SNAPSHOT_PAGE  # noqa: E402
from tests.test_mcp_limits import BIG  # noqa: E402
from tests.test_real_pages import real_page  # noqa: E402

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


async def ego_snapshots(urls: dict[str, str], chrome: str) -> dict[str, tuple[str, str]]:
    found: dict[str, tuple[str, str]] = {}
    async with ego.launch(executable=chrome) as browser:
        for name, url in urls.items():
            tab = await browser.new_tab(url)
            # Every iframe's frame attached and running (the load event waited for their
            # documents; a cross-site one's session may come just after).
            iframes = await tab.evaluate("document.querySelectorAll('iframe').length")
            while len(await tab.frames()) <= iframes:
                if not await tab.changed(10):
                    raise SystemExit(f"{name}: a frame never attached")
            for frame in await tab.frames():
                await frame.evaluate("1")
            found[name] = (await tab.snapshot(), await tab.snapshot(max_lines=100_000))
            await tab.close()
    return found


async def playwright_snapshots(urls: dict[str, str], chrome: str) -> dict[str, str]:
    from playwright.async_api import async_playwright

    found: dict[str, str] = {}
    async with async_playwright() as driver:
        browser = await driver.chromium.launch(
            executable_path=chrome, headless=True, args=chrome_args_for_playwright()
        )
        try:
            for name, url in urls.items():
                page = await browser.new_page()
                await page.goto(url, wait_until="networkidle")
                found[name] = await page.aria_snapshot(mode="ai")
                await page.close()
        finally:
            await browser.close()
    return found


async def main(show: str | None, chrome: str) -> None:
    server = PageServer()
    try:
        with DemoServer(port=0) as shop:
            urls = pages(shop, server)
            ours = await ego_snapshots(urls, chrome)
            theirs = await playwright_snapshots(urls, chrome)
    finally:
        server.close()
    header = f"{'page':32} {'ego':>8} {'ego whole':>10} {'playwright ai':>14} {'ego/pw':>7}"
    print(f"snapshot size in characters (Chromium at {chrome})")
    print(header)
    print("-" * len(header))
    total_ego = total_pw = 0
    for name in urls:
        default, whole = ours[name]
        other = theirs[name]
        total_ego += len(default)
        total_pw += len(other)
        print(
            f"{name:32} {len(default):8,} {len(whole):10,} {len(other):14,} "
            f"{len(default) / len(other):7.2f}"
        )
    print("-" * len(header))
    print(f"{'all pages':32} {total_ego:8,} {'':10} {total_pw:14,} {total_ego / total_pw:7.2f}")
    if show is not None:
        default, _ = ours[show]
        print(f"\n--- ego: {show}\n{default}\n\n--- playwright ai: {show}\n{theirs[show]}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", help="print both snapshots of this page (its name above)")
    parser.add_argument("--chrome", help="the Chromium binary for both (default: ego's choice)")
    options = parser.parse_args()
    asyncio.run(main(options.show, options.chrome or ego.find_chrome()))
