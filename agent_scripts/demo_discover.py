"""Discover what the learnings offer for the demo shop, then run one tool.

    python agent_scripts/demo_discover.py [--port 0]

Starts the demo shop and a headless Chrome, asks ``learn_context`` which sites, notes and
tools match the shop's URL, prints them, and runs ``list_products``. Exits 1 if the shop's
tools are not offered or the tool returns nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

import ego
from ego.demo import DemoServer

SITE = "demo-shop"


async def main(port: int) -> int:
    async with DemoServer(port=port) as demo, ego.launch() as browser:
        site = browser.site
        site.set_start_url(SITE, demo.url)

        print("sites in the learnings roots:")
        for summary in site.sites():
            print(f"  - {summary}")

        ctx = await site.learn_context(demo.url)
        print(f"\nlearn_context({demo.url!r}): matched={ctx.matched}")
        for match in ctx.sites:
            print(f"  site {match.site_id}: {match.name} (start {match.start_url})")
        for tool in ctx.tools:
            print(f"  [{tool.kind}] {tool.site_id}/{tool.tool_name}: {tool.description}")
            print(f"      ({tool.signature}) e.g. {tool.example}, {tool.health}")
        names = {tool.tool_name for tool in ctx.tools if tool.site_id == SITE}
        if not ctx.matched or "list_products" not in names:
            print(f"FAILED: {SITE} tools are not offered for {demo.url}", file=sys.stderr)
            return 1

        # No tab is open on the shop: the facade opens one at the start URL set above.
        listing: dict[str, Any] = await site.run_browser_tool(SITE, "list_products", {"limit": 3})
        source, total = listing["source"], listing["total"]
        print(f"\nlist_products (read from the {source}, {total} on the page):")
        for p in listing["products"]:
            print(f"  #{p['id']} {p['name']}: ${p['price']:.2f} ({p['category']})")
        if listing["count"] != 3:
            print("FAILED: expected 3 products", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=0, help="demo shop port (0: any free one)")
    sys.exit(asyncio.run(main(parser.parse_args().port)))
