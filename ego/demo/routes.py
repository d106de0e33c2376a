"""The demo shop's routes: which handler answers each method and path, and the handlers.

:class:`ShopHandler` answers each request from the shop's :class:`~ego.demo.state.DemoState`:
HTML pages (bodies from :mod:`ego.demo.pages`), the forms' no-JavaScript posts, the JSON API,
and the static files, on the plumbing of :class:`~ego.demo.handler.BaseShopHandler`.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

from . import desk, pages
from .handler import (
    CART_COOKIE,
    SESSION_COOKIE,
    SESSION_MAX_AGE,
    BaseShopHandler,
    cookie_header,
)

__all__ = ["SEARCH_MOVED_TO", "ShopHandler"]

#: Where the product search (``GET /api/products``) lives once the shop's API changed
#: (``DemoServer(api_changed=True)``), whose product summaries say ``title`` for ``name``.
SEARCH_MOVED_TO = "/api/catalog/search"

_STATIC_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json; charset=utf-8",
    ".html": "text/html; charset=utf-8",
    ".svg": "image/svg+xml",
    ".txt": "text/plain; charset=utf-8",
}


def _validate_contact(fields: dict[str, Any]) -> tuple[dict[str, str], str | None]:
    clean = {key: str(fields.get(key) or "").strip() for key in ("name", "email", "message")}
    missing = [key for key, value in clean.items() if not value]
    if missing:
        return clean, f"missing field(s): {', '.join(missing)}"
    if not re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", clean["email"]):
        return clean, "email: not a valid address"
    if len(clean["message"]) > 5000:
        return clean, "message: longer than 5000 characters"
    return clean, None


def _safe_next(value: str) -> str:
    """Only same-site paths may follow a login (no open redirect)."""
    if value.startswith("/") and not value.startswith("//") and "\\" not in value:
        return value
    return "/account"


class ShopHandler(BaseShopHandler):
    """One request to the shop: finds its route in ``_ROUTES`` and answers it."""

    def _dispatch(self) -> None:
        parts = urlsplit(self.path)
        path = parts.path or "/"
        query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
        with self.state.lock:
            self.state.requests.append((self.command, self.path))
        for pattern, handler in _ROUTES.get(self.command, []):
            match = pattern.fullmatch(path)
            if match:
                handler(self, query, *match.groups())
                return
        if any(pattern.fullmatch(path) for method in _ROUTES for pattern, _ in _ROUTES[method]):
            if path.startswith("/api/"):
                self._json(405, {"error": f"method {self.command} not allowed"})
            else:
                self._send(405, b"method not allowed", "text/plain; charset=utf-8")
            return
        self._not_found(path)

    def do_GET(self) -> None:
        self._dispatch()

    def do_HEAD(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def do_DELETE(self) -> None:
        self._dispatch()

    # -- pages and forms ----------------------------------------------------------------------

    def page_home(self, query: dict[str, str]) -> None:
        products = self.state.search(category=query.get("category", ""))
        body = pages.home(products, self.state.categories())
        self._html(200, "Products", body, page="home", user=self._user())

    def page_product(self, query: dict[str, str], raw_id: str) -> None:
        product = self.state.product(int(raw_id))
        if product is None:
            self._not_found(self.path)
            return
        user = self._user()
        body = pages.product(self.state.detail(product), logged_in=bool(user))
        self._html(200, product["name"], body, page="product", user=user)

    def form_review(self, query: dict[str, str], raw_id: str) -> None:
        # The no-JavaScript path of the review form; app.js posts to the API instead.
        product = self.state.product(int(raw_id))
        form = self._form()
        user = self._user()
        if product is None:
            self._not_found(self.path)
            return
        if user is None:
            self._redirect(f"/login?next=/product/{raw_id}")
            return
        try:
            rating = int(form.get("rating", ""))
        except ValueError:
            rating = 0
        text = form.get("text", "").strip()
        if 1 <= rating <= 5 and text:
            self.state.add_review(product, user, rating, text)
        self._redirect(f"/product/{raw_id}")

    def page_search(self, query: dict[str, str]) -> None:
        q = query.get("q", "").strip()
        api = SEARCH_MOVED_TO if self.demo.api_changed else "/api/products"
        body = pages.search(q, self.state.search(q) if q else [], api=api)
        title = f"Search: {q}" if q else "Search"
        self._html(200, title, body, page="search", query=q, user=self._user())

    def page_contact(self, query: dict[str, str]) -> None:
        sent = query.get("sent", "")
        notice = f"Thanks! Message #{sent} was received." if sent else ""
        body = pages.contact(notice=notice, sent_id=sent)
        self._html(200, "Contact", body, page="contact", user=self._user())

    def form_contact(self, query: dict[str, str]) -> None:
        fields, error = _validate_contact(self._form())
        if error:
            body = pages.contact(error=error, fields=fields)
            self._html(400, "Contact", body, page="contact", user=self._user())
            return
        entry = self.state.add_contact_message(
            fields["name"], fields["email"], fields["message"], via="form"
        )
        self._redirect(f"/contact?sent={entry['id']}")

    def page_login(self, query: dict[str, str]) -> None:
        next_url = _safe_next(query.get("next", ""))
        if self._user():
            self._redirect(next_url)
            return
        self._html(200, "Log in", pages.login(next_url=next_url), page="login")

    def form_login(self, query: dict[str, str]) -> None:
        form = self._form()
        username = form.get("username", "").strip()
        password = form.get("password", "")
        next_url = _safe_next(form.get("next", ""))
        account = self.state.users.get(username)
        if account is None or not secrets.compare_digest(
            str(account["password"]).encode(), password.encode()
        ):
            body = pages.login(next_url=next_url, error="Wrong username or password.")
            self._html(401, "Log in", body, page="login")
            return
        token = secrets.token_urlsafe(24)
        with self.state.lock:
            self.state.sessions[token] = username
        cookie = cookie_header(SESSION_COOKIE, token, SESSION_MAX_AGE)
        self._redirect(next_url, [("Set-Cookie", cookie)])

    def page_logout(self, query: dict[str, str]) -> None:
        token = self._cookies().get(SESSION_COOKIE)
        if token:
            with self.state.lock:
                self.state.sessions.pop(token, None)
        self._redirect("/", [("Set-Cookie", cookie_header(SESSION_COOKIE, "", 0))])

    def page_account(self, query: dict[str, str]) -> None:
        user = self._user()
        if user is None:
            self._redirect("/login?next=/account")
            return
        display = self.state.users[user].get("display_name", user)
        body = pages.account(user, display, self.state.orders_of(user))
        self._html(200, "Your account", body, page="account", user=user)

    def page_cart(self, query: dict[str, str]) -> None:
        body = pages.cart(self.state.cart_view(self._cookies().get(CART_COOKIE)))
        self._html(200, "Cart", body, page="cart", user=self._user())

    def static_file(self, query: dict[str, str], name: str) -> None:
        static_dir = self.demo.site_dir / "static"
        target = (static_dir / name).resolve()
        suffix = target.suffix.lower()
        if (
            target.parent != static_dir.resolve()
            or not target.is_file()
            or suffix not in _STATIC_TYPES
        ):
            self._not_found(self.path)
            return
        self._send(200, target.read_bytes(), _STATIC_TYPES[suffix], [("Cache-Control", "no-cache")])

    def favicon(self, query: dict[str, str]) -> None:
        self._send(204, b"", "image/x-icon")

    # -- JSON API -----------------------------------------------------------------------------

    def api_products(self, query: dict[str, str]) -> None:
        if self.demo.api_changed:  # the search moved (see SEARCH_MOVED_TO)
            self._not_found(urlsplit(self.path).path)
            return
        self._search(query)

    def api_search_moved(self, query: dict[str, str]) -> None:
        if not self.demo.api_changed:
            self._not_found(urlsplit(self.path).path)
            return
        self._search(query)

    def _search(self, query: dict[str, str]) -> None:
        raw_limit = query.get("limit", "")
        try:
            limit = int(raw_limit) if raw_limit else 50
        except ValueError:
            self._json(400, {"error": "limit: not an integer"})
            return
        if not 1 <= limit <= 100:
            self._json(400, {"error": "limit: must be between 1 and 100"})
            return
        sort = query.get("sort", "")
        if sort.lstrip("-") not in ("", "price", "rating", "name", "id"):
            self._json(400, {"error": "sort: use price, rating, name or id (prefix - to reverse)"})
            return
        q, category = query.get("q", "").strip(), query.get("category", "").strip()
        matches = self.state.search(q, category=category, sort=sort)
        self._json(
            200,
            {
                "query": {"q": q, "category": category, "limit": limit, "sort": sort},
                "total": len(matches),
                "products": [self._summary(p) for p in matches[:limit]],
            },
        )

    def _summary(self, product: dict[str, Any]) -> dict[str, Any]:
        summary = self.state.summary(product)
        if self.demo.api_changed:  # the changed API calls a product's name its title
            summary = {("title" if key == "name" else key): value for key, value in summary.items()}
        return summary

    def api_product(self, query: dict[str, str], raw_id: str) -> None:
        product = self.state.product(int(raw_id))
        if product is None:
            self._json(404, {"error": f"no product with id {raw_id}"})
            return
        self._json(200, self.state.detail(product))

    def api_categories(self, query: dict[str, str]) -> None:
        self._json(200, {"categories": self.state.categories()})

    def api_me(self, query: dict[str, str]) -> None:
        user = self._user()
        if user is None:
            self._json(401, {"error": "not logged in"})
            return
        display = self.state.users[user].get("display_name", user)
        self._json(200, {"username": user, "display_name": display})

    def api_orders(self, query: dict[str, str]) -> None:
        user = self._user()
        if user is None:
            self._json(401, {"error": "not logged in"})
            return
        self._json(200, {"username": user, "orders": self.state.orders_of(user)})

    def api_cart_get(self, query: dict[str, str]) -> None:
        self._json(200, self.state.cart_view(self._cookies().get(CART_COOKIE)))

    def api_cart_post(self, query: dict[str, str]) -> None:
        data = self._json_body()
        if data is None:
            self._json(400, {"error": "body: expected a JSON object"})
            return
        product_id, quantity = data.get("product_id"), data.get("quantity", 1)
        if not isinstance(product_id, int) or isinstance(product_id, bool):
            self._json(400, {"error": "product_id: expected an integer"})
            return
        if not isinstance(quantity, int) or isinstance(quantity, bool) or not 1 <= quantity <= 99:
            self._json(400, {"error": "quantity: expected an integer from 1 to 99"})
            return
        product = self.state.product(product_id)
        if product is None:
            self._json(404, {"error": f"no product with id {product_id}"})
            return
        cart_id = self._cookies().get(CART_COOKIE)
        headers: list[tuple[str, str]] = []
        if not cart_id:
            cart_id = secrets.token_urlsafe(12)
            headers.append(("Set-Cookie", cookie_header(CART_COOKIE, cart_id, SESSION_MAX_AGE)))
        with self.state.lock:
            lines = self.state.carts.setdefault(cart_id, {})
            wanted = lines.get(product_id, 0) + quantity
            if wanted > int(product["stock"]):
                stock = product["stock"]
                self._json(409, {"error": f"out of stock: {stock} left", "stock": stock}, headers)
                return
            lines[product_id] = wanted
        self._json(200, self.state.cart_view(cart_id), headers)

    def api_cart_delete(self, query: dict[str, str]) -> None:
        cart_id = self._cookies().get(CART_COOKIE)
        if cart_id:
            with self.state.lock:
                self.state.carts.pop(cart_id, None)
        self._json(200, self.state.cart_view(None))

    def api_review(self, query: dict[str, str], raw_id: str) -> None:
        user = self._user()
        data = self._json_body()
        if user is None:
            self._json(401, {"error": "not logged in"})
            return
        product = self.state.product(int(raw_id))
        if product is None:
            self._json(404, {"error": f"no product with id {raw_id}"})
            return
        if data is None:
            self._json(400, {"error": "body: expected a JSON object"})
            return
        rating, text = data.get("rating"), data.get("text")
        if not isinstance(rating, int) or isinstance(rating, bool) or not 1 <= rating <= 5:
            self._json(400, {"error": "rating: expected an integer from 1 to 5"})
            return
        if not isinstance(text, str) or not text.strip() or len(text) > 2000:
            self._json(400, {"error": "text: expected 1 to 2000 characters"})
            return
        review = self.state.add_review(product, user, rating, text.strip())
        self._json(201, {"review": review})

    def api_contact(self, query: dict[str, str]) -> None:
        data = self._json_body()
        if data is None:
            self._json(400, {"error": "body: expected a JSON object"})
            return
        fields, error = _validate_contact(data)
        if error:
            self._json(400, {"error": error})
            return
        entry = self.state.add_contact_message(
            fields["name"], fields["email"], fields["message"], via="api"
        )
        self._json(201, {"id": entry["id"], "status": "received"})


_Route = tuple["re.Pattern[str]", Callable[..., None]]
"""A path pattern and the method answering it (called with the query and the groups)."""


def _routes(*entries: tuple[str, Callable[..., None]]) -> list[_Route]:
    return [(re.compile(pattern), handler) for pattern, handler in entries]


_GET = _routes(
    (r"/", ShopHandler.page_home),
    (r"/product/(\d{1,9})", ShopHandler.page_product),
    (r"/search", ShopHandler.page_search),
    (r"/contact", ShopHandler.page_contact),
    (r"/login", ShopHandler.page_login),
    (r"/logout", ShopHandler.page_logout),
    (r"/account", ShopHandler.page_account),
    (r"/cart", ShopHandler.page_cart),
    (r"/static/([A-Za-z0-9_.-]+)", ShopHandler.static_file),
    (r"/favicon\.ico", ShopHandler.favicon),
    (r"/api/products", ShopHandler.api_products),
    (r"/api/products/(\d{1,9})", ShopHandler.api_product),
    (r"/api/catalog/search", ShopHandler.api_search_moved),
    (r"/api/categories", ShopHandler.api_categories),
    (r"/api/me", ShopHandler.api_me),
    (r"/api/orders", ShopHandler.api_orders),
    (r"/api/cart", ShopHandler.api_cart_get),
    # The order desk, rendered on the server (ego.demo.desk).
    (r"/desk/search", desk.desk_search),
    (r"/desk/order", desk.desk_order),
)
_ROUTES: dict[str, list[_Route]] = {
    "GET": _GET,
    "HEAD": _GET,
    "POST": _routes(
        (r"/contact", ShopHandler.form_contact),
        (r"/login", ShopHandler.form_login),
        (r"/product/(\d{1,9})/reviews", ShopHandler.form_review),
        (r"/api/cart", ShopHandler.api_cart_post),
        (r"/api/products/(\d{1,9})/reviews", ShopHandler.api_review),
        (r"/api/contact", ShopHandler.api_contact),
        (r"/desk/results", desk.desk_results),
        (r"/desk/order/details", desk.desk_details),
        (r"/desk/order/done", desk.desk_done),
    ),
    "DELETE": _routes((r"/api/cart", ShopHandler.api_cart_delete)),
}
