"""Chain several demo-shop tools: search, pick the cheapest, read it, add it to the cart, check.

    python agent_scripts/demo_shopping.py [--query desk] [--category office] [--port 0]

1. ``search_products`` finds products matching the query (in-page fetch to the shop's API);
2. the cheapest in-stock one is picked here, in Python;
3. ``get_product`` reads its description and reviews;
4. ``add_to_cart`` puts two of it in the cart (a ``write`` tool);
5. ``get_cart`` reads the cart back, and the script checks it holds exactly that;
6. the Python tool ``cheapest_in_category`` does steps 1-3 in one call for a category.
Exits 1 when any step does not give what it should.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

import ego
from ego.demo import DemoServer
from ego.errors import EgoError

SITE = "demo-shop"


def fail(message: str) -> int:
    print(f"FAILED: {message}", file=sys.stderr)
    return 1


async def main(query: str, category: str, port: int) -> int:
    async with DemoServer(port=port) as demo, ego.launch() as browser:
        site = browser.site
        site.set_start_url(SITE, demo.url)
        tab = await browser.new_tab(demo.url)  # one tab for the whole chain

        found: dict[str, Any] = await site.run_browser_tool(
            SITE, "search_products", {"query": query, "limit": 20}, tab=tab
        )
        if "error" in found:
            return fail(f"search_products: {found['error']}")
        print(f"search_products({query!r}): {found['total']} match(es)")
        for product in found["products"]:
            stock = "in stock" if product["in_stock"] else "out of stock"
            print(f"  #{product['id']} {product['name']}: ${product['price']:.2f}, {stock}")
        in_stock = [p for p in found["products"] if p["in_stock"]]
        if not in_stock:
            return fail(f"nothing in stock matches {query!r}")
        cheapest = min(in_stock, key=lambda p: p["price"])
        print(f"cheapest in stock: #{cheapest['id']} {cheapest['name']}")

        detail: dict[str, Any] = await site.run_browser_tool(
            SITE, "get_product", {"id": cheapest["id"]}, tab=tab
        )
        print(f"get_product: {detail['name']}: {detail['description']}")
        print(f"  {detail['review_count']} review(s), rated {detail['rating']}")

        added: dict[str, Any] = await site.run_browser_tool(
            SITE, "add_to_cart", {"product_id": cheapest["id"], "quantity": 2}, tab=tab
        )
        if "error" in added:
            return fail(f"add_to_cart: {added['error']}")
        print(f"add_to_cart: cart now holds {added['cart']['count']} item(s)")

        cart: dict[str, Any] = await site.run_browser_tool(SITE, "get_cart", {}, tab=tab)
        lines = [(item["product_id"], item["quantity"]) for item in cart["items"]]
        print(f"get_cart: {lines}, total ${cart['total']:.2f}")
        if lines != [(cheapest["id"], 2)]:
            return fail(f"the cart holds {lines}, expected [({cheapest['id']}, 2)]")
        expected_total = round(cheapest["price"] * 2, 2)
        if abs(cart["total"] - expected_total) > 0.001:
            return fail(f"cart total {cart['total']} != {expected_total}")

        best: dict[str, Any] = await site.run_tool(
            SITE, "cheapest_in_category", {"category": category}, tab=tab
        )
        if "error" in best:
            return fail(f"cheapest_in_category: {best['error']}")
        product = best["product"]
        print(
            f"cheapest_in_category({category!r}): #{product['id']} {product['name']} "
            f"at ${product['price']:.2f} (out of {best['considered']})"
        )
        print(f"the shop saw {len(demo.state.requests)} requests; cart state: {demo.state.carts}")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--query", default="desk", help="what to search for")
    parser.add_argument("--category", default="kitchen", help="category for the Python tool")
    parser.add_argument("--port", type=int, default=0, help="demo shop port (0: any free one)")
    options = parser.parse_args()
    try:
        sys.exit(asyncio.run(main(options.query, options.category, options.port)))
    except EgoError as exc:
        print(f"FAILED: {type(exc).__name__}: {exc}", file=sys.stderr)
        sys.exit(1)
