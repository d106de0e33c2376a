"""The demo shop (ego.demo) in real Chromium, and every learnings tool through the plain wrap.

The tools are evaluated with the design's plain wrap
``(async () => { const __tool = <source>; return await __tool(<args JSON>); })()``, which proves
them independently of the loader. x-com and google-com tools run against small pages that copy
the markup they read (the real sites are not reachable from tests).
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import socket
import time
import types
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pytest

import ego
from ego.demo import CSP, SESSION_COOKIE, SITE_DIR, DemoServer, pages
from ego.demo.tour import tour
from ego.errors import ConfirmationRequiredError, NeedsLoginError, SkillBrokenError
from ego.learning.catalog.registry import Learnings
from ego.site import Site
from tests.helpers.page_server import PageServer

ROOT = Path(__file__).resolve().parent.parent
LEARNINGS = ROOT / "learnings"

# -- helpers ----------------------------------------------------------------------------------


def manifest(site: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((LEARNINGS / site / "manifest.json").read_text("utf-8"))
    return data


def tool_source(site: str, tool: str) -> str:
    """A browser tool's source as a function expression (``export default`` stripped)."""
    path = LEARNINGS / site / manifest(site)["browserTools"][tool]["path"]
    source = path.read_text("utf-8").strip()
    return re.sub(r"^\s*export\s+default\s+", "", source, count=1)


def wrap(source: str, args: Any) -> str:
    return (
        f"(async () => {{ const __tool = {source}; return await __tool({json.dumps(args)}); }})()"
    )


async def run(tab: ego.Tab, site: str, tool: str, args: Any = None) -> Any:
    return await tab.evaluate(wrap(tool_source(site, tool), {} if args is None else args))


def http(
    url: str, *, method: str = "GET", body: Any = None, cookie: str = ""
) -> tuple[int, dict[str, str], bytes]:
    """A Python-side request (urllib never follows our 303s here: we want to see them)."""

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None

    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if cookie:
        request.add_header("Cookie", cookie)
    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(request, timeout=5) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


LOGIN_JS = """
new Promise((resolve, reject) => {
  // Log in through the real form inside a same-origin frame: the frame's load events say
  // when the form page and then the redirect target have loaded (no timers, no polling).
  const frame = document.createElement("iframe");
  let submitted = false;
  frame.onload = () => {
    const doc = frame.contentDocument;
    if (!submitted) {
      const form = doc.querySelector('[data-testid="login-form"]');
      if (!form) { resolve({ path: frame.contentWindow.location.pathname, error: null }); return; }
      submitted = true;
      doc.querySelector('[data-testid="login-username"]').value = USER;
      doc.querySelector('[data-testid="login-password"]').value = PASS;
      form.requestSubmit();
      return;
    }
    const error = doc.querySelector('[data-testid="login-error"]');
    resolve({ path: frame.contentWindow.location.pathname, error: error && error.textContent });
    frame.remove();
  };
  frame.onerror = reject;
  frame.src = "/login";
  document.body.append(frame);
})
"""


async def login(tab: ego.Tab, user: str = "demo", password: str = "demo") -> dict[str, Any]:
    script = LOGIN_JS.replace("USER", json.dumps(user)).replace("PASS", json.dumps(password))
    result: dict[str, Any] = await tab.evaluate(script)
    return result


async def logout(tab: ego.Tab) -> None:
    assert await tab.evaluate("fetch('/logout').then(r => r.status)") == 200


async def me(tab: ego.Tab) -> list[Any]:
    result: list[Any] = await tab.evaluate(
        "fetch('/api/me').then(async r => [r.status, await r.json()])"
    )
    return result


# -- fixtures ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo() -> Iterator[DemoServer]:
    with DemoServer() as server:
        yield server


@pytest.fixture
async def shop(browser: ego.Browser, demo: DemoServer) -> AsyncIterator[ego.Tab]:
    """A tab on the shop's home page."""
    tab = await browser.new_tab(demo.url)
    yield tab
    if not browser.closed:
        await tab.close()


# -- the server, from Python ------------------------------------------------------------------


def test_server_urls_lifecycle_and_package_files() -> None:
    for name in ("products.json", "layout.html", "static/app.js", "static/style.css"):
        assert (SITE_DIR / name).is_file(), name
    server = DemoServer()
    with pytest.raises(RuntimeError, match="not started"):
        _ = server.url
    with server:
        assert server.port > 0
        assert server.url == f"http://shop.localhost:{server.port}/"
        assert server.local_url == f"http://127.0.0.1:{server.port}/"
        assert server.url_for("/contact") == f"http://shop.localhost:{server.port}/contact"
        status, headers, body = http(server.local_url)
        assert status == 200
        assert headers["Content-Security-Policy"] == CSP
        assert b'data-testid="product-list"' in body
        port = server.port
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    server.close()  # idempotent


def test_pages_come_from_templates_and_escape_every_value(demo: DemoServer) -> None:
    """Page bodies are templates/*.html; inserted values are escaped, rendered markup is not."""
    assert (pages.TEMPLATES_DIR / "product.html").is_file()
    body = pages.login(next_url='/x"><script>', error="<b>&</b>")
    assert 'value="/x&quot;&gt;&lt;script&gt;"' in body
    assert '<p class="error" data-testid="login-error">&lt;b&gt;&amp;&lt;/b&gt;</p>' in body
    markup = pages.render("card_list", testid='"t"', cards=pages.Html("<li>x</li>"))
    assert markup == '<ul class="product-list" data-testid="&quot;t&quot;"><li>x</li></ul>'
    status, _, raw = http(demo.local_url_for("/search?q=%3Cb%3E%22x%22"))
    assert status == 200
    page = raw.decode("utf-8")
    assert '<h1 data-testid="page-title">0 results for “&lt;b&gt;&quot;x&quot;”</h1>' in page
    assert 'value="&lt;b&gt;&quot;x&quot;"' in page
    assert "<b>" not in page


async def test_async_context_manager() -> None:
    async with DemoServer() as server:
        status, _, body = http(server.local_url_for("/api/products/1"))
        assert status == 200
        assert json.loads(body)["name"] == "Aurora Wireless Headphones"
    assert not server.started


def test_api_from_python(demo: DemoServer) -> None:
    status, headers, body = http(demo.local_url_for("/api/products"))
    data = json.loads(body)
    assert status == 200
    assert headers["Content-Type"].startswith("application/json")
    assert "Content-Security-Policy" not in headers
    assert data["total"] == len(data["products"]) >= 8
    assert set(data["products"][0]) >= {"id", "name", "price", "category", "rating", "stock"}

    data = json.loads(http(demo.local_url_for("/api/products?q=desk&sort=price"))[2])
    assert [p["id"] for p in data["products"]] == [11, 10]
    data = json.loads(http(demo.local_url_for("/api/products?category=audio&limit=2"))[2])
    assert data["total"] == 3
    assert [p["category"] for p in data["products"]] == ["audio", "audio"]
    assert http(demo.local_url_for("/api/products?limit=0"))[0] == 400
    assert http(demo.local_url_for("/api/products/999"))[0] == 404
    assert http(demo.local_url_for("/api/me"))[0] == 401
    assert http(demo.local_url_for("/api/orders"))[0] == 401
    status, _, body = http(demo.local_url_for("/api/products/1/reviews"), method="POST",
                           body={"rating": 5, "text": "x"})  # fmt: skip
    assert (status, json.loads(body)) == (401, {"error": "not logged in"})
    assert http(demo.local_url_for("/account"))[0] == 303
    assert http(demo.local_url_for("/nope"))[0] == 404
    assert http(demo.local_url_for("/static/../products.json"))[0] == 404
    status, _, body = http(
        demo.local_url_for("/api/contact"), method="POST", body={"name": "A", "email": "bad"}
    )
    assert status == 400
    assert "missing field(s): message" in json.loads(body)["error"]


# -- pages and CSP in Chromium ----------------------------------------------------------------


async def test_pages_load_at_the_shop_origin(browser: ego.Browser, demo: DemoServer) -> None:
    tab = await browser.new_tab(demo.url)
    try:
        pages = {
            "/": ('[data-testid="product-card"]', "Products"),
            "/product/6": ('[data-testid="review"]', "Cast Iron Skillet 26 cm"),
            "/search?q=desk": (
                '[data-testid="search-results"] [data-testid="product-card"]',
                "Search: desk",
            ),
            "/contact": ('form[data-testid="contact-form"] [name="email"]', "Contact"),
            "/login": ('form[data-testid="login-form"] [name="password"]', "Log in"),
            "/cart": ('[data-testid="cart-total"]', "Cart"),
        }
        for path, (selector, title) in pages.items():
            await tab.navigate(demo.url_for(path))
            state = await tab.evaluate(
                f"""({{
                  origin: location.origin,
                  title: document.title,
                  found: document.querySelectorAll({json.dumps(selector)}).length,
                  app: document.documentElement.dataset.app,
                }})"""
            )
            assert state["origin"] == demo.origin, path
            assert state["title"] == f"{title} · Ego Demo Shop", path
            assert state["found"] >= 1, path
            assert state["app"] == "ready", path  # /static/app.js is allowed by 'self'
        await tab.navigate(demo.url_for("/search?q=desk"))
        ids = await tab.evaluate(
            "[...document.querySelectorAll('[data-testid=product-card]')]"
            ".map(c => Number(c.dataset.productId))"
        )
        assert sorted(ids) == [10, 11]
    finally:
        await tab.close()


async def test_csp_blocks_inline_scripts_and_late_eval(shop: ego.Tab, demo: DemoServer) -> None:
    result = await shop.evaluate(
        """(async () => {
          const violations = [];
          document.addEventListener(
            "securitypolicyviolation", (e) => violations.push(e.violatedDirective));
          const script = document.createElement("script");
          script.textContent = "window.__inlineRan = true";
          document.head.append(script);
          const header = (await fetch("/")).headers.get("content-security-policy");
          return { ran: window.__inlineRan === true, violations, header };
        })()"""
    )
    assert result["ran"] is False
    assert result["header"] == CSP
    assert result["violations"]
    assert result["violations"][0].startswith("script-src")
    # The measured rule of the design: eval works synchronously inside the evaluation ...
    assert await shop.evaluate("eval('6 * 7')") == 42
    # ... and is blocked once it runs in a later task.
    late = await shop.evaluate(
        "new Promise(r => setTimeout(() => {"
        " try { r(String(eval('1'))) } catch (e) { r(e.name) } }))"
    )
    assert late == "EvalError"


async def test_login_form_sets_persistent_session_cookie(shop: ego.Tab, demo: DemoServer) -> None:
    await logout(shop)
    assert await me(shop) == [401, {"error": "not logged in"}]

    wrong = await login(shop, "demo", "nope")
    assert wrong == {"path": "/login", "error": "Wrong username or password."}
    assert await me(shop) == [401, {"error": "not logged in"}]

    before = time.time()
    assert await login(shop) == {"path": "/account", "error": None}
    assert await me(shop) == [200, {"username": "demo", "display_name": "Demo Shopper"}]
    cookies = (await shop.send("Network.getCookies", {"urls": [demo.url]}))["cookies"]
    session = next(c for c in cookies if c["name"] == SESSION_COOKIE)
    assert session["httpOnly"] is True
    assert session["path"] == "/"
    assert session["domain"] == "shop.localhost"
    assert session["session"] is False  # persistent, not a browser-session cookie
    assert before + 86_400 - 60 < session["expires"] < time.time() + 86_400 + 60
    assert await shop.evaluate("document.cookie.includes('shop_session')") is False

    await shop.navigate(demo.url_for("/account"))
    orders = await shop.evaluate(
        "[...document.querySelectorAll('[data-testid=order]')].map(r => r.dataset.orderId)"
    )
    assert orders == ["A-1001", "A-1002"]

    await logout(shop)
    assert (await me(shop))[0] == 401
    await shop.navigate(demo.url_for("/account"))
    assert await shop.evaluate("location.pathname + location.search") == "/login?next=/account"


async def test_api_in_page_and_the_page_scripts(shop: ego.Tab, demo: DemoServer) -> None:
    await shop.evaluate("fetch('/api/cart', {method: 'DELETE'})")
    # app.js's "Add to cart" button posts to the API and updates the header count.
    await shop.evaluate(
        """new Promise((resolve) => {
          const button = document.querySelector('[data-testid=add-to-cart][data-product-id="2"]');
          new MutationObserver((_, observer) => {
            if (button.dataset.state) { observer.disconnect(); resolve(button.dataset.state); }
          }).observe(button, { attributes: true });
          button.click();
        })"""
    )
    assert (
        await shop.evaluate("document.querySelector('[data-testid=cart-count]').textContent") == "1"
    )
    cart = await shop.evaluate("fetch('/api/cart').then(r => r.json())")
    assert cart["items"][0]["product_id"] == 2
    assert cart["count"] == 1
    assert cart["total"] == 34.5
    detail = await shop.evaluate("fetch('/api/products/1').then(r => r.json())")
    assert detail["review_count"] == 2
    assert detail["description"].startswith("Over-ear headphones")
    categories = await shop.evaluate("fetch('/api/categories').then(r => r.json())")
    assert {c["name"] for c in categories["categories"]} == {
        "audio", "books", "kitchen", "outdoor", "office"
    }  # fmt: skip


# -- demo-shop tools through the plain wrap ---------------------------------------------------


async def test_list_products_reads_the_dom(shop: ego.Tab, demo: DemoServer) -> None:
    result = await run(shop, "demo-shop", "list_products", {"limit": 3})
    assert result["source"] == "page"
    assert result["total"] == 12
    assert result["count"] == 3
    first = result["products"][0]
    assert first == {
        "id": 1,
        "name": "Aurora Wireless Headphones",
        "price": 89.0,
        "category": "audio",
        "rating": 4.6,
        "stock": 14,
        "in_stock": True,
        "url": demo.url_for("/product/1"),
    }
    # From another page it fetches and parses the list page; the category filter applies.
    await shop.navigate(demo.url_for("/contact"))
    kitchen = await run(shop, "demo-shop", "list_products", {"category": "kitchen"})
    assert kitchen["source"] == "fetch"
    assert [(p["id"], p["in_stock"]) for p in kitchen["products"]] == [(6, True), (7, False)]


async def test_get_product_and_not_found(shop: ego.Tab, demo: DemoServer) -> None:
    product = await run(shop, "demo-shop", "get_product", {"id": 6})
    assert product["name"] == "Cast Iron Skillet 26 cm"
    assert product["price"] == 42.0
    assert product["currency"] == "USD"
    assert product["url"] == demo.url_for("/product/6")
    assert product["reviews"][0] == {
        "author": "sam", "rating": 5, "text": "Heavy, even heat, will outlive me."
    }  # fmt: skip
    missing = await run(shop, "demo-shop", "get_product", {"id": 999})
    assert missing == {"error": "not found: no product with id 999"}


async def test_search_products(shop: ego.Tab) -> None:
    found = await run(shop, "demo-shop", "search_products", {"query": "desk"})
    assert {p["name"] for p in found["products"]} == {"Mechanical Desk Clock", "Felt Desk Mat"}
    assert found["total"] == found["count"] == 2
    cheap = await run(
        shop, "demo-shop", "search_products",
        {"query": "", "category": "office", "sort": "price", "limit": 2},
    )  # fmt: skip
    assert [p["price"] for p in cheap["products"]] == [19.9, 22.0]
    assert cheap["total"] == 3
    assert await run(shop, "demo-shop", "search_products", {"query": "zzz"}) == {
        "query": "zzz", "total": 0, "count": 0, "products": []
    }  # fmt: skip
    bad = await run(shop, "demo-shop", "search_products", {"query": "", "limit": 500})
    assert bad == {"error": "bad request: limit: must be between 1 and 100"}


async def test_get_orders_needs_login_then_works(shop: ego.Tab) -> None:
    await logout(shop)
    with pytest.raises(ego.JavaScriptError) as caught:
        await run(shop, "demo-shop", "get_orders")
    assert caught.value.js_message.startswith("NEEDS_LOGIN: ")
    assert await run(shop, "demo-shop", "whoami") == {
        "logged_in": False, "username": None, "login_url": shop.origin + "/login"
    }  # fmt: skip
    await login(shop)
    try:
        orders = await run(shop, "demo-shop", "get_orders", {"limit": 1})
        assert orders["username"] == "demo"
        assert orders["count"] == 1
        assert orders["orders"][0]["id"] == "A-1001"
        assert orders["orders"][0]["total"] == round(42.0 + 2 * 12.99, 2)
        assert (await run(shop, "demo-shop", "whoami"))["username"] == "demo"
    finally:
        await logout(shop)


async def test_add_to_cart_and_get_cart(shop: ego.Tab, demo: DemoServer) -> None:
    await shop.evaluate("fetch('/api/cart', {method: 'DELETE'})")
    added = await run(shop, "demo-shop", "add_to_cart", {"product_id": 3, "quantity": 2})
    assert added["added"] == {"product_id": 3, "quantity": 2}
    assert added["cart"]["total"] == 25.98
    await run(shop, "demo-shop", "add_to_cart", {"product_id": 8})
    cart = await run(shop, "demo-shop", "get_cart")
    assert [(i["product_id"], i["quantity"]) for i in cart["items"]] == [(3, 2), (8, 1)]
    assert cart == {"items": cart["items"], "count": 3, "total": round(25.98 + 27.4, 2)}
    assert await run(shop, "demo-shop", "add_to_cart", {"product_id": 7}) == {
        "error": "out of stock: 0 left", "stock": 0
    }  # fmt: skip
    missing = await run(shop, "demo-shop", "add_to_cart", {"product_id": 999})
    assert missing == {"error": "not found: no product with id 999"}
    # The server really holds that cart, under the browser's cart cookie.
    assert {3: 2, 8: 1} in demo.state.carts.values()


async def test_post_review_is_session_only_and_publishes(shop: ego.Tab, demo: DemoServer) -> None:
    await logout(shop)
    count = len(demo.state.reviews)
    args = {"product_id": 5, "rating": 4, "text": 'Clear charts "and" </script> \u2028 ✨'}
    with pytest.raises(ego.JavaScriptError, match="NEEDS_LOGIN"):
        await run(shop, "demo-shop", "post_review", args)
    assert len(demo.state.reviews) == count
    await login(shop)
    try:
        result = await run(shop, "demo-shop", "post_review", args)
        assert result["published"] is True
        assert result["review"]["author"] == "demo"
        assert result["review"]["text"] == args["text"]
        assert demo.state.reviews[-1]["text"] == args["text"]
        product = await run(shop, "demo-shop", "get_product", {"id": 5})
        assert product["reviews"][-1] == {"author": "demo", "rating": 4, "text": args["text"]}
        bad = await run(shop, "demo-shop", "post_review", {**args, "rating": 9})
        assert bad == {"error": "bad request: rating: expected an integer from 1 to 5"}
    finally:
        await logout(shop)


async def test_fill_contact_form(shop: ego.Tab, demo: DemoServer) -> None:
    args = {"name": "Ada", "email": "ada@example.com", "message": "Hello\nfrom a tool"}
    elsewhere = await run(shop, "demo-shop", "fill_contact_form", args)
    assert elsewhere["error"].startswith("not on the contact page")

    await shop.navigate(demo.url_for("/contact"))
    result = await run(shop, "demo-shop", "fill_contact_form", args)
    assert result == {"status": "sent", "message_id": result["message_id"], "via": "page"}
    stored = demo.state.contact_messages[result["message_id"] - 1]
    assert stored == {**args, "id": result["message_id"], "via": "api"}
    shown = await shop.evaluate(
        "document.querySelector('[data-testid=contact-status]').textContent"
    )
    assert f"#{result['message_id']}" in shown

    # Without the page's enhancement the tool sends the form's own POST.
    await shop.evaluate(
        "delete document.querySelector('[data-testid=contact-form]').dataset.enhanced"
    )
    plain = await run(shop, "demo-shop", "fill_contact_form", {**args, "name": "Grace"})
    assert plain["via"] == "form-post"
    assert demo.state.contact_messages[plain["message_id"] - 1]["via"] == "form"

    invalid = await run(shop, "demo-shop", "fill_contact_form", {**args, "email": "nope"})
    assert invalid["error"].startswith("invalid: email")

    await shop.evaluate("document.querySelector('[data-testid=contact-form]').remove()")
    with pytest.raises(ego.JavaScriptError, match="SKILL_BROKEN"):
        await run(shop, "demo-shop", "fill_contact_form", args)


async def test_api_tools_report_skill_broken(shop: ego.Tab) -> None:
    # The API answering HTML instead of JSON is what a redesigned site looks like.
    await shop.evaluate(
        "window.fetch = async () => new Response('<html></html>', "
        "{status: 200, headers: {'content-type': 'text/html'}})"
    )
    for tool, args in [
        ("get_product", {"id": 1}),
        ("search_products", {"query": "x"}),
        ("get_cart", {}),
        ("add_to_cart", {"product_id": 1}),
        ("whoami", {}),
    ]:
        with pytest.raises(ego.JavaScriptError) as caught:
            await run(shop, "demo-shop", tool, args)
        assert caught.value.js_message.startswith("SKILL_BROKEN: "), tool


@dataclass
class StubSite:
    """Just enough of the facade for a Python tool: run_browser_tool through the plain wrap."""

    tab: ego.Tab
    calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)

    async def run_browser_tool(
        self, site_id: str, tool: str, args: dict[str, Any], *, tab: ego.Tab | None = None
    ) -> Any:
        self.calls.append((site_id, tool, args))
        return await run(tab or self.tab, site_id, tool, args)


@dataclass
class StubContext:
    site: StubSite
    tab: ego.Tab
    browser: ego.Browser
    site_id: str = "demo-shop"


async def test_python_tool_cheapest_in_category(browser: ego.Browser, shop: ego.Tab) -> None:
    path = (
        LEARNINGS
        / "demo-shop"
        / manifest("demo-shop")["pythonTools"]["cheapest_in_category"]["path"]
    )
    spec = importlib.util.spec_from_file_location("cheapest_in_category", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    site = StubSite(shop)
    ctx = StubContext(site, shop, browser)
    result = await module.run(ctx, {"category": "kitchen"})
    assert result["product"]["id"] == 6  # the kettle (7) is cheaper but out of stock
    assert result["product"]["description"].startswith("Pre-seasoned")
    assert [call[1] for call in site.calls] == ["search_products", "get_product"]
    anything = await module.run(ctx, {"category": "kitchen", "in_stock_only": False})
    assert anything["product"]["id"] == 7
    none = await module.run(ctx, {"category": "toys"})
    assert none["error"].startswith("not found")


async def test_tools_through_the_facade(
    browser: ego.Browser, shop: ego.Tab, demo: DemoServer
) -> None:
    """The same tools through ``browser.site``: cached in localStorage under the strict CSP."""
    site = browser.site
    site.set_start_url("demo-shop", demo.url)
    ctx = await site.learn_context(demo.url)
    assert ctx.matched
    names = {tool.tool_name for tool in ctx.tools if tool.site_id == "demo-shop"}
    assert {"list_products", "get_product", "search_products", "cheapest_in_category"} <= names
    await logout(shop)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("list_products", {"limit": 2}),
        ("get_product", {"id": 1}),
        ("search_products", {"query": "desk"}),
        ("get_cart", {}),
        ("whoami", {}),
    ]
    for tool, args in calls:
        first = await site.run_browser_tool("demo-shop", tool, args, tab=shop, check_returns=True)
        again = await site.run_browser_tool("demo-shop", tool, args, tab=shop, check_returns=True)
        assert first == again, tool
    with pytest.raises(NeedsLoginError):
        await site.run_browser_tool("demo-shop", "get_orders", {}, tab=shop)
    with pytest.raises(ConfirmationRequiredError):
        await site.run_browser_tool(
            "demo-shop", "post_review", {"product_id": 1, "rating": 5, "text": "x"}, tab=shop
        )
    best = await site.run_tool(
        "demo-shop", "cheapest_in_category", {"category": "office"}, tab=shop
    )
    assert best["product"]["name"] == "Felt Desk Mat"


async def test_the_tour_fails_when_the_search_finds_nothing(
    browser: ego.Browser, demo: DemoServer, tmp_path: Path
) -> None:
    """A broken search stops ``ego demo`` with SKILL_BROKEN instead of touring product 1."""
    root = tmp_path / "learnings"
    shutil.copytree(ROOT / "learnings" / "demo-shop", root / "demo-shop")
    search = root / "demo-shop" / "browser-tools" / "search_products.js"
    search.write_text("async () => ({query: 'desk', count: 0, products: []})\n")
    site = Site(browser, Learnings(roots=[root]))
    stand_in = cast(ego.Browser, types.SimpleNamespace(site=site, new_tab=browser.new_tab))
    before = {tab.target_id for tab in await browser.tabs()}
    try:
        with pytest.raises(SkillBrokenError, match="for 'desk' returned") as caught:
            await tour(stand_in, demo.url)
    finally:
        for tab in await browser.tabs():
            if tab.target_id not in before:
                await tab.close()
    assert (caught.value.site_id, caught.value.tool) == ("demo-shop", "search_products")


# -- every learnings file ---------------------------------------------------------------------


async def test_every_learnings_tool_is_a_function_in_one_of_three_shapes(tab: ego.Tab) -> None:
    shapes: set[str] = set()
    for site_dir in sorted(p for p in LEARNINGS.iterdir() if (p / "manifest.json").is_file()):
        data = manifest(site_dir.name)
        assert data["id"] == site_dir.name
        for note in data["notes"]:
            assert (site_dir / note).is_file(), note
        for name, tool in data["browserTools"].items():
            assert tool["sideEffect"] in ("read", "write", "irreversible"), name
            assert tool["auth"] in ("none", "session"), name
            raw = (site_dir / tool["path"]).read_text("utf-8").lstrip()
            shapes.add(
                "module" if raw.startswith("export default")
                else "function" if raw.startswith("async function")
                else "arrow"
            )  # fmt: skip
            source = tool_source(site_dir.name, name)
            kind = await tab.evaluate(
                f"(() => {{ const __tool = {source}; return typeof __tool; }})()"
            )
            assert kind == "function", f"{site_dir.name}/{name}"
        for name, tool in data.get("pythonTools", {}).items():
            text = (site_dir / tool["path"]).read_text("utf-8")
            assert "async def run(ctx" in text, name
    assert shapes == {"module", "function", "arrow"}


# -- x-com and google-com against pages with their markup -------------------------------------

X_POST = """
<article data-testid="tweet" role="article">
  <div data-testid="socialContext">{social}</div>
  <div data-testid="User-Name"><a href="/{handle}"><span>{name}</span></a>
    <a href="/{handle}"><span>@{handle}</span></a>
    <a href="/{handle}/status/{id}"><time datetime="2025-01-0{day}T10:00:00.000Z">Jan {day}</time>
    </a></div>
  <div data-testid="tweetText" lang="en"><span>{text}</span><img alt="🚀" src="x.png"></div>
  <div role="group">
    <button data-testid="reply" aria-label="{replies} Replies. Reply"></button>
    <button data-testid="retweet" aria-label="3 reposts. Repost"></button>
    <button data-testid="unlike" aria-label="1,204 Likes. Liked"></button>
    <a href="/{handle}/status/{id}/analytics" aria-label="12K views. View post analytics"></a>
  </div>
</article>
"""


def x_page(*, articles: int, logged_in: bool = True, column: bool = True) -> str:
    posts = "".join(
        X_POST.format(
            handle=f"user{i}", name=f"User {i}", id=1000 + i, day=i + 1, text=f"post {i}",
            replies=i, social="User 0 reposted" if i == 1 else "",
        )
        for i in range(articles)
    )  # fmt: skip
    nav = '<a data-testid="AppTabBar_Profile_Link" href="/me">Profile</a>' if logged_in else ""
    prompt = "" if logged_in else '<a data-testid="loginButton" href="/login">Log in</a>'
    body = f'<div data-testid="primaryColumn">{posts}</div>' if column else posts
    return f"<title>X</title><nav>{nav}</nav>{body}{prompt}"


async def test_x_get_timeline_posts(tab: ego.Tab, server: PageServer) -> None:
    await tab.navigate(server.route("/x-home", x_page(articles=3)))
    result = await run(tab, "x-com", "get_timeline_posts", {"max_posts": 3})
    assert result["count"] == 3
    assert result["scrolls"] == 0
    second = result["posts"][1]
    assert second["id"] == "1001"
    assert second["author"] == {"name": "User 1", "handle": "user1"}
    assert second["text"] == "post 1🚀"
    assert second["time"] == "2025-01-02T10:00:00.000Z"
    assert second["permalink"] == server.url("/user1/status/1001")
    assert second["metrics"] == {"replies": 1, "reposts": 3, "likes": 1204, "views": 12000}
    assert second["social_context"] == "User 0 reposted"
    assert second["promoted"] is False

    await tab.navigate(server.route("/x-out", x_page(articles=0, logged_in=False)))
    with pytest.raises(ego.JavaScriptError, match="NEEDS_LOGIN"):
        await run(tab, "x-com", "get_timeline_posts", {"max_posts": 3})
    await tab.navigate(server.route("/x-broken", x_page(articles=1, column=False)))
    with pytest.raises(ego.JavaScriptError, match="SKILL_BROKEN"):
        await run(tab, "x-com", "get_timeline_posts", {"max_posts": 3})


X_COMPOSER = """
<title>X</title><a data-testid="AppTabBar_Profile_Link" href="/me">Profile</a>
<div data-testid="primaryColumn">
  <div data-testid="tweetTextarea_0" role="textbox" contenteditable="true"></div>
  <button data-testid="tweetButtonInline" aria-disabled="true">Post</button>
</div>
<script>
  const box = document.querySelector('[data-testid="tweetTextarea_0"]');
  const button = document.querySelector('[data-testid="tweetButtonInline"]');
  box.addEventListener("input",
    () => button.setAttribute("aria-disabled", String(!box.textContent)));
  button.addEventListener("click", () => {
    if (button.getAttribute("aria-disabled") === "true") return;
    window.__posted = box.innerText;
    setTimeout(() => {
      box.textContent = "";
      const toast = document.createElement("div");
      toast.dataset.testid = "toast";
      toast.innerHTML = 'Your post was sent. <a href="/me/status/42">View</a>';
      document.body.append(toast);
    }, 20);
  });
</script>
"""


async def test_x_post_from_active_element(tab: ego.Tab, server: PageServer) -> None:
    await tab.navigate(server.route("/x-compose", X_COMPOSER))
    await tab.evaluate("document.querySelector('[data-testid=tweetTextarea_0]').focus()")
    text = 'Hello "world" </script> ✨'
    result = await run(tab, "x-com", "post_from_active_element", {"text": text})
    assert result == {
        "status": "posted",
        "text": text,
        "confirmed": True,
        "toast": "Your post was sent. View",
        "permalink": server.url("/me/status/42"),
    }
    assert await tab.evaluate("window.__posted") == text


X_USERS = """
<title>X</title><a data-testid="AppTabBar_Profile_Link" href="/me">Profile</a>
<script src="/x-static/main.abc123.js"></script>
<div data-testid="primaryColumn">
  <div data-testid="UserCell">
    <a href="/ada_l"><img src="https://pbs.twimg.com/profile_images/1/a.jpg"></a>
    <div><a href="/ada_l"><span>Ada Lovelace</span></a>
      <svg aria-label="Verified account"></svg></div>
    <div><a href="/ada_l"><span>@ada_l</span></a></div><button>Follow</button>
    <div dir="auto">First programmer.</div></div>
  <div data-testid="UserCell"><a href="/grace"><span>Grace Hopper</span></a>
    <div><span>@grace</span></div></div>
</div>
"""
FAKE_BEARER = "AAAAAAAAAAAAAAAAAAAAAegoTestToken%3D0123456789abcdefghijklmnop"


async def test_x_search_users_dom_then_api(tab: ego.Tab, server: PageServer) -> None:
    server.route(
        "/x-static/main.abc123.js", f'var t="{FAKE_BEARER}";', content_type="text/javascript"
    )
    await tab.navigate(server.route("/x-users", X_USERS))
    # No ct0 cookie: the API path is skipped and the UserCells on the page answer.
    dom = await run(tab, "x-com", "search_users", {"query": "ada", "limit": 5})
    assert dom["source"] == "dom"
    assert dom["api_problem"].startswith("no ct0 cookie")
    assert dom["users"] == [
        {
            "id": None,
            "handle": "ada_l",
            "name": "Ada Lovelace",
            "verified": True,
            "protected": False,
            "avatar": "https://pbs.twimg.com/profile_images/1/a.jpg",
            "url": "https://x.com/ada_l",
            "bio": "First programmer.",
        }
    ]
    # With the CSRF cookie the app's typeahead API is called the way the app calls it.
    server.route(
        "/i/api/1.1/search/typeahead.json",
        json.dumps(
            {
                "num_results": 1,
                "users": [
                    {
                        "id_str": "7",
                        "screen_name": "ada_l",
                        "name": "Ada",
                        "verified": False,
                        "is_blue_verified": True,
                        "profile_image_url_https": "https://p/a.jpg",
                    },
                ],
            }
        ),
        content_type="application/json",
    )
    await tab.evaluate("document.cookie = 'ct0=csrf123; path=/'")
    try:
        api = await run(tab, "x-com", "search_users", {"query": "@ada"})
    finally:
        await tab.evaluate("document.cookie = 'ct0=; path=/; max-age=0'; sessionStorage.clear()")
    assert api["source"] == "api"
    assert api["users"][0]["handle"] == "ada_l"
    assert api["users"][0]["verified"] is True
    _, path, headers, _ = next(r for r in server.requests if "typeahead" in r[1])
    lowered = {key.lower(): value for key, value in headers.items()}
    assert path.startswith("/i/api/1.1/search/typeahead.json?q=ada&")
    assert lowered["x-csrf-token"] == "csrf123"
    assert lowered["authorization"] == "Bearer " + FAKE_BEARER


GOOGLE_RESULTS = """
<title>ego browser - Google Search</title>
<div id="search"><div id="rso">
  <div class="MjjYud"><div class="g">
    <a href="https://example.com/ego"><br><h3>Ego: a browser harness</h3>
      <div><cite>example.com \u203a ego</cite></div></a>
    <div class="VwiC3b">Drive Chrome over raw CDP and run site learnings inside the page.</div>
  </div></div>
  <div class="related-question-pair" data-q="What is ego?">
    <a href="https://faq.example/"><h3>What is ego?</h3></a></div>
  <div class="MjjYud"><div class="g">
    <a href="/url?q=https://docs.example.org/cdp&sa=U"><h3>CDP docs</h3></a>
    <div><span>Jan 5, 2025 \u2014 </span>
      <span>The Chrome DevTools Protocol reference, every domain and event.</span></div>
  </div></div>
  <div class="MjjYud"><a href="https://maps.google.com/x"><h3>Maps</h3></a></div>
</div></div>
"""


async def test_google_tools(tab: ego.Tab, server: PageServer) -> None:
    server.route("/search", GOOGLE_RESULTS)
    await tab.navigate(server.url("/search?q=ego+browser"))
    found = await run(tab, "google-com", "search_and_extract", {"query": "ego browser"})
    assert found == {
        "query": "ego browser",
        "source": "page",
        "count": 2,
        "results": [
            {
                "position": 1,
                "title": "Ego: a browser harness",
                "url": "https://example.com/ego",
                "displayed_url": "example.com \u203a ego",
                "snippet": "Drive Chrome over raw CDP and run site learnings inside the page.",
            },
            {
                "position": 2,
                "title": "CDP docs",
                "url": "https://docs.example.org/cdp",
                "displayed_url": None,
                "snippet": "Jan 5, 2025 \u2014 The Chrome DevTools Protocol reference, "
                "every domain and event.",
            },
        ],
    }
    one = await run(tab, "google-com", "search_and_extract", {"max_results": 1})
    assert [r["title"] for r in one["results"]] == ["Ego: a browser harness"]

    await tab.navigate(
        server.route("/search?q=broken", "<title>changed</title><div id=main></div>")
    )
    with pytest.raises(ego.JavaScriptError, match="SKILL_BROKEN: this results page has no #search"):
        await run(tab, "google-com", "search_and_extract", {"query": "broken"})

    base = "/complete/search?client={}&q=ego&hl=en&ie=utf-8&oe=utf-8"
    server.route(base.format("firefox"), '["ego",["ego browser","ego death"],[],{}]',
                 content_type="text/javascript; charset=utf-8")  # fmt: skip
    suggested = await run(
        tab, "google-com", "get_autocomplete_suggestions", {"query": "ego", "hl": "en"}
    )
    assert suggested == {
        "query": "ego", "client": "firefox", "count": 2, "suggestions": ["ego browser", "ego death"]
    }  # fmt: skip
    server.route(base.format("firefox"), "<html>gone</html>")
    server.route(
        base.format("gws-wiz"),
        ')]}\'\n[[["ego <b>browser</b>",0,[512]],["ego <b>lite</b>",0,[512]]],{"q":"x"}]',
    )
    fallback = await run(
        tab, "google-com", "get_autocomplete_suggestions", {"query": "ego", "hl": "en", "limit": 1}
    )
    assert fallback == {
        "query": "ego",
        "client": "gws-wiz",
        "count": 1,
        "suggestions": ["ego browser"],
    }
    server.route(base.format("gws-wiz"), "nope")
    with pytest.raises(ego.JavaScriptError, match="SKILL_BROKEN"):
        await run(tab, "google-com", "get_autocomplete_suggestions", {"query": "ego", "hl": "en"})
