"""The tour ``ego demo`` gives: discover the demo shop's tools, run them, show the results."""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ConfirmationRequiredError, EgoError, NeedsLoginError, SkillBrokenError
from ..learning.describe.compact import CompactContext

if TYPE_CHECKING:
    from ..api import Browser
    from ..page.tab import Tab
    from ..site import Site

__all__ = ["SITE_ID", "Step", "tour"]

SITE_ID = "demo-shop"


@dataclass
class Step:
    """One call of the tour and what came of it."""

    call: str
    ok: bool
    result: Any
    ms: float
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "call": self.call,
            "ok": self.ok,
            "result": self.result,
            "ms": round(self.ms, 2),
            "note": self.note,
        }


async def tour(browser: Browser, shop_url: str) -> tuple[CompactContext, list[Step]]:
    """Run the demo shop's tools the way an agent would, in one tab, closed at the end.

    Reads the catalogue, searches it, reads a product, fills the cart, shows that a session
    tool asks for a login (NEEDS_LOGIN) and that an irreversible tool waits for
    confirmation, then runs the Python tool that chains two browser tools. Expected refusals
    are steps with ``ok=False`` and a note; anything else unexpected raises.

    Raises:
        SkillBrokenError: the search for desk products found none.
        EgoError: a step failed in a way the tour does not expect.
    """
    site = browser.site
    site.set_start_url(SITE_ID, shop_url)
    context = await site.learn_context(shop_url)
    tab = await browser.new_tab(shop_url)
    try:
        return context, await _steps(site, tab)
    finally:
        # The shop stops with the demo: a tab left on it would outlive it in a kept browser.
        with contextlib.suppress(EgoError):
            await tab.close()


async def _steps(site: Site, tab: Tab) -> list[Step]:
    """The tour's calls, in ``tab``; each step's outcome."""
    steps: list[Step] = []

    async def step(
        tool: str, args: dict[str, Any], *, expect: type[EgoError] | None = None, note: str = ""
    ) -> Any:
        call = f"{tool}({args})"
        started = time.perf_counter()
        try:
            result = await site.run_tool(SITE_ID, tool, args, tab=tab)
        except EgoError as exc:
            if expect is None or not isinstance(exc, expect):
                raise
            steps.append(Step(call, False, str(exc), _ms(started), note))
            return None
        mode = site.last_run.mode if site.last_run is not None else ""
        steps.append(Step(call, True, result, _ms(started), note or mode))
        return result

    await step("list_products", {"limit": 3})
    await step("list_products", {"limit": 3}, note="second run: served from the page's cache")
    found = await step("search_products", {"query": "desk", "limit": 5})
    products = found.get("products") if isinstance(found, dict) else None
    if not products:
        # The shop sells desk items: finding none means the search is broken, and the rest
        # of the tour must not hide it behind some other product.
        raise SkillBrokenError(
            f"SKILL_BROKEN from {SITE_ID}/search_products: searching the demo shop for 'desk' "
            f"returned {found!r}, not its desk products; the tool or the shop's search needs "
            "fixing",
            site_id=SITE_ID,
            tool="search_products",
            detail="no products for 'desk'",
        )
    product_id = products[0]["id"]
    await step("get_product", {"id": product_id})
    await step("add_to_cart", {"product_id": product_id, "quantity": 2})
    await step("get_cart", {})
    await step(
        "get_orders",
        {},
        expect=NeedsLoginError,
        note="a session tool: a person logs in by hand (ego login demo-shop), then retries",
    )
    await step(
        "post_review",
        {"product_id": product_id, "rating": 5, "text": "Sturdy."},
        expect=ConfirmationRequiredError,
        note="irreversible: runs only with confirm=True",
    )
    await step("cheapest_in_category", {"category": "kitchen"}, note="a Python tool")
    return steps


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
