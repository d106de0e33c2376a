"""cheapest_in_category: the cheapest product of a category, with its full details.

Chains two browser tools of this site: ``search_products`` (the category, sorted by price)
then ``get_product`` (description and reviews of the winner).
"""

from __future__ import annotations

from typing import Any


def _failed(result: Any) -> str | None:
    if isinstance(result, dict) and isinstance(result.get("error"), str):
        return str(result["error"])
    return None


async def run(ctx: Any, args: dict[str, Any]) -> dict[str, Any]:
    category = str(args["category"]).strip().lower()
    query = str(args.get("query") or "")
    in_stock_only = bool(args.get("in_stock_only", True))

    found = await ctx.site.run_browser_tool(
        ctx.site_id,
        "search_products",
        {"query": query, "category": category, "limit": 100, "sort": "price"},
        tab=ctx.tab,
    )
    error = _failed(found)
    if error:
        return {"error": error}
    candidates = [p for p in found["products"] if p["in_stock"] or not in_stock_only]
    if not candidates:
        return {
            "error": f"not found: no {'in-stock ' if in_stock_only else ''}products "
            f"in category {category!r}",
            "category": category,
            "considered": len(found["products"]),
        }
    cheapest = min(candidates, key=lambda p: (p["price"], p["id"]))
    detail = await ctx.site.run_browser_tool(
        ctx.site_id, "get_product", {"id": cheapest["id"]}, tab=ctx.tab
    )
    error = _failed(detail)
    if error:
        return {"error": error}
    return {
        "category": category,
        "considered": len(candidates),
        "next_cheapest": [
            {"id": p["id"], "name": p["name"], "price": p["price"]}
            for p in sorted(candidates, key=lambda p: (p["price"], p["id"]))[1:3]
        ],
        "product": detail,
    }
