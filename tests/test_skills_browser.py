"""SKILL.md skills in real headless Chromium, against the demo shop (ego.demo.DemoServer).

Each test gets its own DemoServer on a random port, so each has an origin of its own: its own
localStorage, and a session cookie that no other server accepts (cookies ignore the port, but a
token only means something to the server that issued it). Tabs are fresh and closed after.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

import ego
from ego.demo import DemoServer
from ego.errors import (
    BrowserToolError,
    ConfirmationRequiredError,
    ContextDestroyedError,
    InvalidSkillError,
    NeedsLoginError,
    ReturnsMismatchError,
)
from ego.learning import Learnings
from ego.site import Site
from ego.skills import catalog_for, export_skill, import_skill
from tests.helpers.skills import blocks, write_skill

SEARCH = "shop.localhost/search-products"
ORDERS = "shop.localhost/get-orders"
REVIEW = "shop.localhost/post-review"


@pytest.fixture
def shop() -> Iterator[DemoServer]:
    server = DemoServer(port=0).start()
    yield server
    server.close()


@pytest.fixture
def site(browser: ego.Browser, shop: DemoServer, tmp_path: Path) -> Site:
    """A Site over a throwaway workspace (so $EGO_WORKSPACE plays no part) and the project."""
    facade = Site(browser, Learnings(workspace=tmp_path / "ws"))
    facade.set_start_url("shop.localhost", shop.url)
    facade.set_start_url("demo-shop", shop.url)
    return facade


@pytest.fixture
async def shop_tab(browser: ego.Browser, shop: DemoServer) -> AsyncIterator[ego.Tab]:
    tab = await browser.new_tab(shop.url)
    yield tab
    await close_shop_tabs(browser, shop)


async def close_shop_tabs(browser: ego.Browser, shop: DemoServer) -> None:
    """Close every tab on this shop's origin (including those run_skill opened)."""
    for tab in await browser.tabs():
        if tab.url.startswith(shop.origin):
            await tab.close()


async def log_in(browser: ego.Browser, tab: ego.Tab, shop: DemoServer) -> None:
    """Log in as demo/demo through the shop's own form, in the page, and wait for /account."""
    if await tab.evaluate("location.pathname") != "/login":
        await tab.navigate(shop.url_for("/login?next=/account"))
    loaded = (await tab.attach()).expect("Page.loadEventFired")
    with contextlib.suppress(ContextDestroyedError):
        await tab.evaluate(
            """(() => {
              document.querySelector('[data-testid=login-username]').value = 'demo';
              document.querySelector('[data-testid=login-password]').value = 'demo';
              document.querySelector('[data-testid=login-form]').requestSubmit();
            })()"""
        )
    await asyncio.wait_for(loaded, 15)
    assert await tab.evaluate("location.pathname") == "/account"


def expected_search(shop: DemoServer, query: str) -> list[str]:
    return [product["name"] for product in shop.state.search(query)]


async def test_search_skill_end_to_end(site: Site, shop: DemoServer, shop_tab: ego.Tab) -> None:
    result = await site.run_skill(SEARCH, {"query": "desk"}, tab=shop_tab)
    assert [p["name"] for p in result["products"]] == expected_search(shop, "desk")
    assert result["count"] == len(result["products"]) >= 2
    assert all(p["url"].startswith(shop.origin + "/product/") for p in result["products"])
    assert site.last_run is not None
    assert site.last_run.stored
    # The extractor now sits in the shop's localStorage under the skill's key and hash.
    skill = catalog_for(site.learnings).skill(SEARCH)
    stamp = await shop_tab.evaluate(f"localStorage.getItem({skill.key!r} + ':ver')")
    assert stamp == skill.version_hash
    # A hot run sends only the Call.
    again = await site.run_skill(SEARCH, {"query": "kettle"}, tab=shop_tab)
    assert [p["name"] for p in again["products"]] == ["Pour-Over Coffee Kettle"]
    assert again["products"][0]["in_stock"] is False
    assert (site.last_run.mode, site.last_run.evaluations) == ("cached", 1)
    assert site.last_run.bytes_sent < 1024


async def test_skill_finds_or_opens_its_tab(
    site: Site, shop: DemoServer, browser: ego.Browser
) -> None:
    try:
        result = await site.run_skill(SEARCH, {"query": "pen"})
        opened = [t for t in await browser.tabs() if t.url.startswith(shop.origin)]
        assert len(opened) == 1  # a new tab at the overridden url (port replaced)
        assert result["products"][0]["name"] == "Fountain Pen Starter Set"
        await site.run_skill(SEARCH, {"query": "pen"})
        assert len([t for t in await browser.tabs() if t.url.startswith(shop.origin)]) == 1
    finally:
        await close_shop_tabs(browser, shop)


async def test_session_skill_needs_login_then_succeeds(
    site: Site, shop: DemoServer, browser: ego.Browser
) -> None:
    try:
        with pytest.raises(NeedsLoginError) as info:
            await site.run_skill(ORDERS)
        assert info.value.tool == ORDERS
        assert "log in" in str(info.value)
        (tab,) = [t for t in await browser.tabs() if t.url.startswith(shop.origin)]
        # The skill's url was /account on the test's port; the shop sent it on to its login.
        assert await tab.evaluate("location.pathname + location.search") == ("/login?next=/account")
        assert ("GET", "/account") in shop.state.requests
        await log_in(browser, tab, shop)
        result = await site.run_skill(ORDERS, {"limit": 1})
        assert result["username"] == "demo"
        assert [order["id"] for order in result["orders"]] == ["A-1001"]
        everything = await site.run_skill(ORDERS, tab=tab)
        assert [order["id"] for order in everything["orders"]] == ["A-1001", "A-1002"]
    finally:
        await close_shop_tabs(browser, shop)


async def test_session_skill_navigates_a_blank_tab_to_its_page(
    site: Site, shop: DemoServer, tab: ego.Tab
) -> None:
    with pytest.raises(NeedsLoginError):
        await site.run_skill(ORDERS, tab=tab)
    assert (await tab.evaluate("location.origin")) == shop.origin


async def test_skill_navigates_a_tab_that_is_off_site(
    site: Site, shop: DemoServer, tab: ego.Tab
) -> None:
    assert await tab.evaluate("location.href") == "about:blank"
    result = await site.run_skill(SEARCH, {"query": "tarp"}, tab=tab)
    assert [p["name"] for p in result["products"]] == ["Ultralight Tarp 3x3"]
    assert await tab.evaluate("location.href") == shop.url


async def test_irreversible_skill_needs_confirm(
    site: Site, shop: DemoServer, shop_tab: ego.Tab, browser: ego.Browser
) -> None:
    params = {"product_id": 3, "rating": 4, "text": "Long enough, and braided."}
    await log_in(browser, shop_tab, shop)
    with pytest.raises(ConfirmationRequiredError):
        await site.run_skill(REVIEW, params, tab=shop_tab)
    assert shop.state.reviews == []
    assert not [r for r in shop.state.requests if r[1].endswith("/reviews")]  # nothing sent
    result = await site.run_skill(REVIEW, params, tab=shop_tab, confirm=True)
    assert result["published"] is True
    assert result["review"]["author"] == "demo"
    assert [(r["product_id"], r["text"]) for r in shop.state.reviews] == [
        (3, "Long enough, and braided.")
    ]


async def test_returns_mismatch_and_domain_errors(
    site: Site, shop_tab: ego.Tab, tmp_path: Path
) -> None:
    skills = tmp_path / "ws" / "skills"
    write_skill(skills, task="liar", source="async (root, params) => ({ parameters: params })")
    write_skill(
        skills,
        task="no-such",
        source="async (root, params) => ({ error: 'not found: ' + params.q })",
    )
    write_skill(
        skills,
        task="thrower",
        source="async (root, params) => {\n  throw new TypeError('boom ' + params.q);\n}\n",
    )
    with pytest.raises(ReturnsMismatchError, match=re.escape("skill shop.localhost/liar returned")):
        await site.run_skill("shop.localhost/liar", {"q": "x"}, tab=shop_tab)
    data = await site.run_skill("shop.localhost/no-such", {"q": "x"}, tab=shop_tab)
    assert data == {"error": "not found: x"}
    with pytest.raises(BrowserToolError) as info:
        await site.run_skill("shop.localhost/thrower", {"q": "x"}, tab=shop_tab)
    assert info.value.tool == "shop.localhost/thrower"
    assert info.value.line == 2
    assert "boom x" in str(info.value)


async def test_a_broken_skill_leaves_the_others_working(
    site: Site, shop: DemoServer, shop_tab: ego.Tab, tmp_path: Path
) -> None:
    skills = tmp_path / "ws" / "skills"
    write_skill(skills, task="Bad_Name", drop_sections=("Execute",))
    listed = {s.skill_id: s for s in site.skills()}
    broken = listed["shop.localhost/Bad_Name"]
    assert not broken.valid
    assert "missing section: ## Execute" in broken.problems
    assert all(listed[s].valid for s in (SEARCH, ORDERS, REVIEW))
    result = await site.run_skill(SEARCH, {"query": "cable"}, tab=shop_tab)
    assert [p["name"] for p in result["products"]] == expected_search(shop, "cable")
    context = await site.learn_context(shop.url)
    assert {t.tool_name for t in context.skills} >= {"search-products", "get-orders"}
    assert "Bad_Name" not in {t.tool_name for t in context.skills}


async def test_export_import_round_trip_of_a_browser_tool(
    browser: ego.Browser, shop: DemoServer, shop_tab: ego.Tab, tmp_path: Path
) -> None:
    workspace = tmp_path / "agent"
    learnings = Learnings(workspace=workspace)
    text = export_skill("demo-shop/search_products", learnings=learnings)
    exported = tmp_path / "search_products.SKILL.md"
    exported.write_text(text)
    folder = import_skill(exported, workspace)
    assert folder == workspace / "skills" / "shop.localhost" / "search-products"

    site = Site(browser, learnings)
    site.set_start_url("shop.localhost", shop.url)
    # The imported skill shadows the project's skill of the same id.
    assert catalog_for(learnings).find(SEARCH).directory == folder
    params = {"query": "audio", "limit": 2, "sort": "price"}
    from_skill = await site.run_skill(SEARCH, params, tab=shop_tab)
    from_tool = await site.run_browser_tool("demo-shop", "search_products", params, tab=shop_tab)
    assert from_skill == from_tool
    assert [p["name"] for p in from_skill["products"]] == [
        "Braided Audio Cable 2 m",
        "Pocket Bluetooth Speaker",
    ]


async def test_exported_snippets_work_raw(site: Site, shop: DemoServer, shop_tab: ego.Tab) -> None:
    params = {"query": "skillet"}
    text = export_skill(SEARCH, learnings=site.learnings, params=params)
    (call,) = blocks(text, "Call")
    (store,) = blocks(text, "Store")
    # An agent with another bridge pastes these as they are.
    assert await shop_tab.evaluate(call) == {"__ego_cache__": "NEEDS_STORE"}
    assert await shop_tab.evaluate(store) == "stored"
    raw = await shop_tab.evaluate(call)
    assert [p["name"] for p in raw["products"]] == ["Cast Iron Skillet 26 cm"]
    # ego agrees on KEY and VER: its own run is a hit on what the snippet stored.
    result = await site.run_skill(SEARCH, params, tab=shop_tab)
    assert result == raw
    assert site.last_run is not None
    assert (site.last_run.mode, site.last_run.stored) == ("cached", False)


async def test_exported_browser_tool_snippets_work_raw(
    site: Site, shop: DemoServer, shop_tab: ego.Tab, browser: ego.Browser
) -> None:
    text = export_skill("demo-shop/get_orders", learnings=site.learnings, params={"limit": 1})
    (call,) = blocks(text, "Call")
    (store,) = blocks(text, "Store")
    assert await shop_tab.evaluate(call) == {"__ego_cache__": "NEEDS_STORE"}
    assert await shop_tab.evaluate(store) == "stored"
    with pytest.raises(ego.JavaScriptError, match=r"^.*NEEDS_LOGIN"):
        await shop_tab.evaluate(call)
    await log_in(browser, shop_tab, shop)
    raw: Any = await shop_tab.evaluate(call)
    assert raw["username"] == "demo"
    assert [o["id"] for o in raw["orders"]] == ["A-1001"]


async def test_invalid_skill_run_names_its_problems(
    site: Site, shop_tab: ego.Tab, tmp_path: Path
) -> None:
    write_skill(tmp_path / "ws" / "skills", task="gap", needs=["evaluate", "teleport"])
    with pytest.raises(InvalidSkillError) as info:
        await site.run_skill("shop.localhost/gap", {"q": "x"}, tab=shop_tab)
    assert any(re.search(r"'teleport' is not a capability", p) for p in info.value.problems)
