"""Recorded flows on the demo shop's order desk (ego/demo/desk.py), as an agent's verbs make
them: a search that posts, and a three-page order with a password."""

from __future__ import annotations

from pathlib import Path

import ego
from ego.demo import DemoServer
from ego.demo.desk import DESK_PASSWORD

__all__ = ["record_order", "record_search"]


async def record_search(tab: ego.Tab, shop: DemoServer, path: Path) -> None:
    async with tab.record_actions(path, har=True):
        await tab.navigate(shop.url_for("/desk/search"))
        await tab.type("#words", "desk")
        await tab.select("#category", "office")
        await tab.click("[data-testid=desk-search-submit]")
        await tab.wait_for(url="/desk/results")
        await tab.wait_for(selector="#results")  # the URL commits before the page is parsed
        await tab.snapshot(selector="#results")


async def record_order(tab: ego.Tab, shop: DemoServer, path: Path) -> None:
    async with tab.record_actions(path, har=True):
        await tab.navigate(shop.url_for("/desk/order"))
        await tab.type("#customer", "Ada Lovelace")
        await tab.type("#email", "ada@example.org")
        await tab.click('role=button[name="Next"]')
        await tab.wait_for(url="/desk/order/details")
        await tab.select("#product", "7")
        await tab.type("#quantity", "2")
        await tab.type("#password", DESK_PASSWORD)
        await tab.click("[data-testid=desk-place]")
        await tab.wait_for(url="/desk/order/done")
        await tab.wait_for(selector="#confirmation")
        await tab.snapshot(selector="#confirmation")
