"""A trace of a failing demo-shop tool, shared by the trace, viewer and report tests; and a
tab that may fetch nothing but ``file:`` and ``data:`` URLs, to open the pages they check.

The trace follows a browser context through a short session on the demo shop: the shop's
list, a product, a login (its password typed into a password field), a console error and an
alert the page raises, a tool run that passes, then the shop's broken-site switch
(``api_changed``: the search moves) and the same tool failing with SKILL_BROKEN.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ego
from ego.demo import DemoServer
from ego.errors import SkillBrokenError
from ego.trace import TraceSummary

__all__ = ["PASSWORD", "DemoTrace", "offline_tab", "trace_demo_session"]

#: The password typed in the traced session: it must appear nowhere in the trace.
PASSWORD = "correct-horse-battery-9"
USER = "ada"


@dataclass
class DemoTrace:
    """The trace made, and what the test needs to check it."""

    path: Path
    summary: TraceSummary
    shop: DemoServer
    session_tokens: list[str]
    verbs: list[str]


async def trace_demo_session(browser: ego.Browser, shop: DemoServer, path: Path) -> DemoTrace:
    """Trace a session on ``shop`` in a context of ``browser`` into ``path``."""
    shop.state.users[USER] = {"password": PASSWORD, "display_name": "Ada", "orders": []}
    async with await browser.new_context() as context:
        context.site.set_start_url("demo-shop", shop.url)
        tab = await context.new_tab()
        async with context.trace(path, subject="the demo shop, broken") as trace:
            await tab.navigate(shop.url)
            await tab.click('[data-testid="product-card"] a')
            await tab.navigate(shop.url_for("/login"))
            await tab.type('[data-testid="login-username"]', USER)
            await tab.type('[data-testid="login-password"]', PASSWORD)
            await tab.click('[data-testid="login-submit"]')
            await tab.wait_for(text="Ada")
            await tab.evaluate("console.error('the recommendations widget failed to load')")
            await tab.evaluate("alert('Welcome back')")  # the dialog policy accepts it
            await context.site.run_browser_tool(
                "demo-shop", "search_products", {"query": "lamp"}, tab=tab
            )
            shop.api_changed = True
            try:
                try:
                    await context.site.run_browser_tool(
                        "demo-shop", "search_products", {"query": "lamp"}, tab=tab
                    )
                except SkillBrokenError:
                    pass
                else:
                    raise AssertionError("the broken shop's search did not fail")
            finally:
                shop.api_changed = False
        summary = await trace.stop()
    verbs = [
        "navigate", "click", "navigate", "type", "type", "click", "wait_for",
        "run_tool", "run_tool",
    ]  # fmt: skip
    return DemoTrace(path, summary, shop, list(shop.state.sessions), verbs)


@contextlib.asynccontextmanager
async def offline_tab(browser: ego.Browser) -> AsyncIterator[tuple[ego.Tab, list[str]]]:
    """A new tab whose every request but a ``file:`` or ``data:`` one is refused (Fetch);
    yields the tab and the URLs it refused, so that a test can say nothing was fetched. The
    viewport is 1280 x 800 for the pictures the docs show."""
    tab = await browser.new_tab()
    refused: list[str] = []
    try:
        session = await tab.attach()

        async def paused(params: dict[str, Any]) -> None:
            url = str(params["request"]["url"])
            if url.startswith(("file:", "data:")):
                await tab.send("Fetch.continueRequest", {"requestId": params["requestId"]})
                return
            refused.append(url)
            await tab.send(
                "Fetch.failRequest",
                {"requestId": params["requestId"], "errorReason": "BlockedByClient"},
            )

        session.subscribe("Fetch.requestPaused", paused)
        await tab.send("Fetch.enable", {"patterns": [{"urlPattern": "*"}]})
        await tab.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False},
        )
        yield tab, refused
    finally:
        await tab.close()
