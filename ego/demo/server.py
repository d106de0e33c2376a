"""The demo shop: a small, strict web shop served from memory by Python's standard library.

It gives tests, examples and benchmarks a realistic site of their own: server-rendered pages
with stable ``data-testid`` markup, a JSON API, a login that sets a persistent HttpOnly session
cookie, forms, and ``Content-Security-Policy: script-src 'self'`` on every page, so inline
scripts and late ``eval`` are blocked exactly as on a strict real site.

Chrome resolves every ``*.localhost`` name to the loopback address by itself, so
``http://shop.localhost:<port>/`` is an origin of its own (its own cookies and localStorage)
without any DNS; Python never needs to resolve that name (:attr:`DemoServer.local_url` is the
``127.0.0.1`` form for Python-side HTTP clients).
"""

from __future__ import annotations

import asyncio
import html
import json
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.cookies import CookieError, SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from string import Template
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

__all__ = ["CART_COOKIE", "CSP", "SESSION_COOKIE", "SITE_DIR", "DemoServer", "DemoState"]

SITE_DIR = Path(__file__).resolve().parent / "site"
"""Where the shop's static files, page layout and product data live."""

CSP = "script-src 'self'"
"""The Content-Security-Policy header of every HTML response."""

SESSION_COOKIE = "shop_session"
CART_COOKIE = "shop_cart"
SESSION_MAX_AGE = 86_400  # one day

_STATIC_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json; charset=utf-8",
    ".html": "text/html; charset=utf-8",
    ".svg": "image/svg+xml",
    ".txt": "text/plain; charset=utf-8",
}

Json = dict[str, Any]


@dataclass
class DemoState:
    """Everything the shop keeps, in memory, for one :class:`DemoServer`.

    Tests read it to check what a tool really did: ``reviews`` holds every review published
    through the API or the review form, ``contact_messages`` every contact message (form or
    API), ``carts`` the carts by cart cookie, ``sessions`` the live session tokens.
    """

    products: dict[int, Json]
    users: dict[str, Json]
    sessions: dict[str, str] = field(default_factory=dict)
    carts: dict[str, dict[int, int]] = field(default_factory=dict)
    reviews: list[Json] = field(default_factory=list)
    contact_messages: list[Json] = field(default_factory=list)
    requests: list[tuple[str, str]] = field(default_factory=list)
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False)

    @classmethod
    def load(cls, site_dir: Path = SITE_DIR) -> DemoState:
        """Fresh state from ``products.json``."""
        data = json.loads((site_dir / "products.json").read_text("utf-8"))
        products = {
            int(p["id"]): dict(p, reviews=list(p.get("reviews", []))) for p in data["products"]
        }
        return cls(products=products, users=dict(data["users"]))

    # -- products -----------------------------------------------------------------------------

    def product(self, product_id: int) -> Json | None:
        return self.products.get(product_id)

    def categories(self) -> list[Json]:
        counts: dict[str, int] = {}
        for product in self.products.values():
            counts[product["category"]] = counts.get(product["category"], 0) + 1
        return [{"name": name, "count": count} for name, count in sorted(counts.items())]

    def search(
        self,
        query: str = "",
        *,
        category: str = "",
        limit: int | None = None,
        sort: str = "",
    ) -> list[Json]:
        """Products whose name, category or description hold every word of ``query``."""
        terms = query.lower().split()
        found = []
        for product in self.products.values():
            if category and product["category"] != category.lower():
                continue
            haystack = " ".join(
                (product["name"], product["category"], product["description"])
            ).lower()
            if all(term in haystack for term in terms):
                found.append(product)
        if sort:
            key, reverse = sort.lstrip("-"), sort.startswith("-")
            if key == "rating":
                reverse = not reverse  # best first unless "-rating"
            found.sort(key=lambda p: (p[key], p["id"]), reverse=reverse)
        return found[:limit] if limit is not None else found

    @staticmethod
    def summary(product: Json) -> Json:
        return {
            "id": product["id"],
            "name": product["name"],
            "price": product["price"],
            "category": product["category"],
            "rating": product["rating"],
            "stock": product["stock"],
            "url": f"/product/{product['id']}",
        }

    def detail(self, product: Json) -> Json:
        with self.lock:
            reviews = [dict(review) for review in product["reviews"]]
        return {
            **self.summary(product),
            "description": product["description"],
            "currency": "USD",
            "reviews": reviews,
            "review_count": len(reviews),
        }

    # -- carts, orders, reviews, messages -----------------------------------------------------

    def cart_view(self, cart_id: str | None) -> Json:
        with self.lock:
            lines = dict(self.carts.get(cart_id or "", {}))
        items = []
        for product_id, quantity in lines.items():
            product = self.products[product_id]
            items.append(
                {
                    "product_id": product_id,
                    "name": product["name"],
                    "price": product["price"],
                    "quantity": quantity,
                    "subtotal": round(product["price"] * quantity, 2),
                }
            )
        return {
            "items": items,
            "count": sum(item["quantity"] for item in items),
            "total": round(sum(item["subtotal"] for item in items), 2),
        }

    def orders_of(self, username: str) -> list[Json]:
        orders = []
        for order in self.users[username].get("orders", []):
            items = []
            for line in order["items"]:
                product = self.products[line["product_id"]]
                items.append(
                    {
                        "product_id": product["id"],
                        "name": product["name"],
                        "price": product["price"],
                        "quantity": line["quantity"],
                    }
                )
            total = round(sum(item["price"] * item["quantity"] for item in items), 2)
            orders.append({**order, "items": items, "total": total})
        return orders

    def add_review(self, product: Json, author: str, rating: int, text: str) -> Json:
        with self.lock:
            review = {
                "id": len(self.reviews) + 1,
                "product_id": product["id"],
                "author": author,
                "rating": rating,
                "text": text,
                "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            }
            self.reviews.append(review)
            product["reviews"].append(review)
        return review

    def add_contact_message(self, name: str, email: str, message: str, *, via: str) -> Json:
        with self.lock:
            entry = {
                "id": len(self.contact_messages) + 1,
                "name": name,
                "email": email,
                "message": message,
                "via": via,
            }
            self.contact_messages.append(entry)
        return entry


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


def _esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def _money(value: float) -> str:
    return f"${value:.2f}"


def _stars(rating: float) -> str:
    return "★" * round(rating) + "☆" * (5 - round(rating))


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Without it every response waits ~40 ms for the client's delayed ACK.
    disable_nagle_algorithm = True
    server_version = "EgoDemoShop/1.0"
    server: _HTTPServer

    # -- plumbing -----------------------------------------------------------------------------

    @property
    def demo(self) -> DemoServer:
        return self.server.demo

    @property
    def state(self) -> DemoState:
        return self.server.demo.state

    def log_message(self, format: str, *args: Any) -> None:
        if self.demo.verbose:
            super().log_message(format, *args)

    def _cookies(self) -> dict[str, str]:
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(self.headers.get("Cookie") or "")
        except CookieError:
            return {}
        return {key: morsel.value for key, morsel in jar.items()}

    def _user(self) -> str | None:
        token = self._cookies().get(SESSION_COOKIE)
        if not token:
            return None
        with self.state.lock:
            return self.state.sessions.get(token)

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _form(self) -> dict[str, str]:
        parsed = parse_qs(self._body().decode("utf-8", "replace"), keep_blank_values=True)
        return {key: values[-1] for key, values in parsed.items()}

    def _json_body(self) -> Json | None:
        raw = self._body()
        try:
            data = json.loads(raw or b"{}")
        except ValueError:
            return None
        return data if isinstance(data, dict) else None

    def _send(
        self,
        status: int,
        body: bytes,
        content_type: str,
        headers: Iterable[tuple[str, str]] = (),
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, data: Any, headers: Iterable[tuple[str, str]] = ()) -> None:
        body = json.dumps(data, ensure_ascii=False).encode("utf-8")
        self._send(
            status,
            body,
            "application/json; charset=utf-8",
            [("Cache-Control", "no-store"), *headers],
        )

    def _html(
        self,
        status: int,
        title: str,
        body: str,
        *,
        page: str,
        query: str = "",
        headers: Iterable[tuple[str, str]] = (),
        user: str | None = None,
    ) -> None:
        if user:
            user_nav = (
                f'<a href="/account" data-testid="nav-account">{_esc(user)}</a> '
                '<a href="/logout" data-testid="nav-logout">Log out</a>'
            )
        else:
            user_nav = '<a href="/login" data-testid="nav-login">Log in</a>'
        text = self.demo.layout.substitute(
            title=_esc(title), body=body, page=_esc(page), query=_esc(query), user_nav=user_nav
        )
        self._send(
            status,
            text.encode("utf-8"),
            "text/html; charset=utf-8",
            [("Content-Security-Policy", CSP), ("Cache-Control", "no-store"), *headers],
        )

    def _redirect(self, location: str, headers: Iterable[tuple[str, str]] = ()) -> None:
        self._send(303, b"", "text/plain; charset=utf-8", [("Location", location), *headers])

    def _not_found(self, path: str) -> None:
        if path.startswith("/api/"):
            self._json(404, {"error": "not found"})
        else:
            body = (
                '<h1 data-testid="not-found">Not found</h1><p><a href="/">Back to the shop</a></p>'
            )
            self._html(404, "Not found", body, page="not-found", user=self._user())

    def _dispatch(self) -> None:
        parts = urlsplit(self.path)
        path = parts.path or "/"
        query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
        with self.state.lock:
            self.state.requests.append((self.command, self.path))
        routes = _ROUTES.get(self.command, [])
        for pattern, handler in routes:
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

    # -- pages --------------------------------------------------------------------------------

    def _card(self, product: Json) -> str:
        pid = product["id"]
        stock = int(product["stock"])
        stock_text = f"{stock} in stock" if stock else "Out of stock"
        return (
            f'<li class="product-card" data-testid="product-card" data-product-id="{pid}" '
            f'data-category="{_esc(product["category"])}">'
            f'<a class="product-name" data-testid="product-name" href="/product/{pid}">'
            f"{_esc(product['name'])}</a>"
            f'<span class="product-price" data-testid="product-price" '
            f'data-price="{product["price"]}">{_money(product["price"])}</span>'
            f'<span class="product-category" data-testid="product-category">'
            f"{_esc(product['category'])}</span>"
            f'<span class="product-rating" data-testid="product-rating" '
            f'data-rating="{product["rating"]}" aria-label="rated {product["rating"]} of 5">'
            f"{_stars(product['rating'])} {product['rating']}</span>"
            f'<span class="product-stock{"" if stock else " out"}" data-testid="product-stock" '
            f'data-stock="{stock}">{stock_text}</span>'
            f'<button type="button" class="add-to-cart" data-testid="add-to-cart" '
            f'data-product-id="{pid}"{"" if stock else " disabled"}>Add to cart</button>'
            "</li>"
        )

    def _card_list(self, products: list[Json], testid: str) -> str:
        cards = "".join(self._card(product) for product in products)
        return f'<ul class="product-list" data-testid="{testid}">{cards}</ul>'

    def page_home(self, query: dict[str, str]) -> None:
        category = query.get("category", "")
        products = self.state.search(category=category)
        links = ['<a href="/" data-testid="category-link" data-category="">All</a>']
        for entry in self.state.categories():
            links.append(
                f'<a href="/?category={quote(entry["name"])}" data-testid="category-link" '
                f'data-category="{_esc(entry["name"])}">{_esc(entry["name"])} '
                f"({entry['count']})</a>"
            )
        body = (
            '<h1 data-testid="page-title">All products</h1>'
            f'<nav class="category-filter" data-testid="category-filter">{"".join(links)}</nav>'
            f'<p class="result-count" data-testid="product-count">{len(products)} products</p>'
            + self._card_list(products, "product-list")
        )
        self._html(200, "Products", body, page="home", user=self._user())

    def page_product(self, query: dict[str, str], raw_id: str) -> None:
        product = self.state.product(int(raw_id))
        if product is None:
            self._not_found(self.path)
            return
        user = self._user()
        detail = self.state.detail(product)
        reviews = "".join(
            '<li class="review" data-testid="review">'
            f'<strong class="review-author">{_esc(review["author"])}</strong>'
            f'<span class="review-rating" data-rating="{review["rating"]}"> '
            f"{'★' * int(review['rating'])}</span>"
            f'<p class="review-text">{_esc(review["text"])}</p></li>'
            for review in detail["reviews"]
        )
        if user:
            review_form = (
                f'<form class="stacked" method="post" action="/product/{product["id"]}/reviews" '
                f'data-testid="review-form" data-product-id="{product["id"]}">'
                '<label>Rating <select name="rating" data-testid="review-rating">'
                + "".join(f'<option value="{n}">{n}</option>' for n in range(5, 0, -1))
                + "</select></label>"
                '<label>Review <textarea name="text" required data-testid="review-text">'
                "</textarea></label>"
                '<button type="submit" data-testid="review-submit">Publish review</button>'
                "</form>"
                '<p data-testid="review-status" hidden></p>'
            )
        else:
            review_form = (
                f'<p><a href="/login?next=/product/{product["id"]}" data-testid="review-login">'
                "Log in</a> to write a review.</p>"
            )
        stock = int(product["stock"])
        body = (
            f'<article class="product-detail" data-testid="product-detail" '
            f'data-product-id="{product["id"]}" data-category="{_esc(product["category"])}">'
            f'<h1 class="product-title" data-testid="product-title">{_esc(product["name"])}</h1>'
            f'<p class="product-detail-price" data-testid="product-price" '
            f'data-price="{product["price"]}">{_money(product["price"])}</p>'
            f'<p class="product-category" data-testid="product-category">'
            f"{_esc(product['category'])}</p>"
            f'<p class="product-rating" data-testid="product-rating" '
            f'data-rating="{product["rating"]}">{_stars(product["rating"])} '
            f"{product['rating']}</p>"
            f'<p class="product-stock" data-testid="product-stock" data-stock="{stock}">'
            f"{f'{stock} in stock' if stock else 'Out of stock'}</p>"
            f'<p class="product-description" data-testid="product-description">'
            f"{_esc(product['description'])}</p>"
            f'<button type="button" class="add-to-cart" data-testid="add-to-cart" '
            f'data-product-id="{product["id"]}"{"" if stock else " disabled"}>Add to cart</button>'
            f'<section class="reviews"><h2>Reviews ({detail["review_count"]})</h2>'
            f'<ul class="review-list" data-testid="review-list">{reviews}</ul>'
            f"{review_form}</section></article>"
        )
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
        products = self.state.search(q) if q else []
        if not q:
            heading = "Search the shop"
        else:
            heading = f"{len(products)} result{'s' if len(products) != 1 else ''} for “{_esc(q)}”"
        body = (
            f'<h1 data-testid="page-title">{heading}</h1>'
            f'<p class="result-count" data-testid="result-count" data-count="{len(products)}">'
            f"{len(products)} products</p>" + self._card_list(products, "search-results")
        )
        self._html(
            200, f"Search: {q}" if q else "Search", body, page="search", query=q, user=self._user()
        )

    def _contact_page(
        self,
        status: int,
        *,
        notice: str = "",
        error: str = "",
        fields: dict[str, str] | None = None,
        sent_id: str = "",
    ) -> None:
        values = fields or {}
        if notice:
            status_html = (
                f'<p class="notice" data-testid="contact-status" data-state="sent" '
                f'data-message-id="{_esc(sent_id)}">{_esc(notice)}</p>'
            )
        elif error:
            status_html = (
                f'<p class="error" data-testid="contact-status" data-state="error">'
                f"{_esc(error)}</p>"
            )
        else:
            status_html = '<p data-testid="contact-status" hidden></p>'
        body = (
            '<h1 data-testid="page-title">Contact us</h1>'
            f"{status_html}"
            '<form class="stacked contact-form" method="post" action="/contact" '
            'data-testid="contact-form">'
            '<label for="contact-name">Name</label>'
            f'<input id="contact-name" name="name" required data-testid="contact-name" '
            f'value="{_esc(values.get("name", ""))}">'
            '<label for="contact-email">Email</label>'
            f'<input id="contact-email" name="email" type="email" required '
            f'data-testid="contact-email" value="{_esc(values.get("email", ""))}">'
            '<label for="contact-message">Message</label>'
            '<textarea id="contact-message" name="message" rows="5" required '
            f'data-testid="contact-message">{_esc(values.get("message", ""))}</textarea>'
            '<button type="submit" data-testid="contact-submit">Send message</button>'
            "</form>"
        )
        self._html(status, "Contact", body, page="contact", user=self._user())

    def page_contact(self, query: dict[str, str]) -> None:
        sent = query.get("sent", "")
        notice = f"Thanks! Message #{sent} was received." if sent else ""
        self._contact_page(200, notice=notice, sent_id=sent)

    def form_contact(self, query: dict[str, str]) -> None:
        fields, error = _validate_contact(self._form())
        if error:
            self._contact_page(400, error=error, fields=fields)
            return
        entry = self.state.add_contact_message(
            fields["name"], fields["email"], fields["message"], via="form"
        )
        self._redirect(f"/contact?sent={entry['id']}")

    def _login_page(self, status: int, *, next_url: str, error: str = "") -> None:
        error_html = (
            f'<p class="error" data-testid="login-error">{_esc(error)}</p>' if error else ""
        )
        body = (
            '<h1 data-testid="page-title">Log in</h1>'
            f"{error_html}"
            '<form class="stacked login-form" method="post" action="/login" '
            'data-testid="login-form">'
            f'<input type="hidden" name="next" value="{_esc(next_url)}">'
            '<label for="login-username">Username</label>'
            '<input id="login-username" name="username" autocomplete="username" required '
            'data-testid="login-username">'
            '<label for="login-password">Password</label>'
            '<input id="login-password" name="password" type="password" '
            'autocomplete="current-password" required data-testid="login-password">'
            '<button type="submit" data-testid="login-submit">Log in</button>'
            "</form>"
            '<p class="hint">Demo account: <code>demo</code> / <code>demo</code>.</p>'
        )
        self._html(status, "Log in", body, page="login")

    def page_login(self, query: dict[str, str]) -> None:
        next_url = _safe_next(query.get("next", ""))
        if self._user():
            self._redirect(next_url)
            return
        self._login_page(200, next_url=next_url)

    def form_login(self, query: dict[str, str]) -> None:
        form = self._form()
        username = form.get("username", "").strip()
        password = form.get("password", "")
        next_url = _safe_next(form.get("next", ""))
        account = self.state.users.get(username)
        if account is None or not secrets.compare_digest(
            str(account["password"]).encode(), password.encode()
        ):
            self._login_page(401, next_url=next_url, error="Wrong username or password.")
            return
        token = secrets.token_urlsafe(24)
        with self.state.lock:
            self.state.sessions[token] = username
        cookie = (
            f"{SESSION_COOKIE}={token}; Max-Age={SESSION_MAX_AGE}; Path=/; HttpOnly; SameSite=Lax"
        )
        self._redirect(next_url, [("Set-Cookie", cookie)])

    def page_logout(self, query: dict[str, str]) -> None:
        token = self._cookies().get(SESSION_COOKIE)
        if token:
            with self.state.lock:
                self.state.sessions.pop(token, None)
        cookie = f"{SESSION_COOKIE}=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax"
        self._redirect("/", [("Set-Cookie", cookie)])

    def page_account(self, query: dict[str, str]) -> None:
        user = self._user()
        if user is None:
            self._redirect("/login?next=/account")
            return
        rows = []
        for order in self.state.orders_of(user):
            items = ", ".join(
                f"{item['quantity']} x {_esc(item['name'])}" for item in order["items"]
            )
            rows.append(
                f'<tr class="order" data-testid="order" data-order-id="{_esc(order["id"])}">'
                f'<td class="order-id">{_esc(order["id"])}</td>'
                f'<td class="order-date">{_esc(order["date"])}</td>'
                f'<td class="order-status">{_esc(order["status"])}</td>'
                f'<td class="order-items">{items}</td>'
                f'<td class="order-total" data-total="{order["total"]}">'
                f"{_money(order['total'])}</td></tr>"
            )
        display = self.state.users[user].get("display_name", user)
        body = (
            f'<h1 data-testid="page-title">Hello, {_esc(display)}</h1>'
            f'<p data-testid="account-username" data-username="{_esc(user)}">Signed in as '
            f"<strong>{_esc(user)}</strong>.</p>"
            "<h2>Your orders</h2>"
            '<table class="orders" data-testid="orders"><thead><tr><th>Order</th><th>Date</th>'
            "<th>Status</th><th>Items</th><th>Total</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>"
        )
        self._html(200, "Your account", body, page="account", user=user)

    def page_cart(self, query: dict[str, str]) -> None:
        cart = self.state.cart_view(self._cookies().get(CART_COOKIE))
        rows = "".join(
            f'<tr class="cart-item" data-testid="cart-item" data-product-id="{item["product_id"]}">'
            f'<td><a href="/product/{item["product_id"]}">{_esc(item["name"])}</a></td>'
            f'<td class="cart-quantity">{item["quantity"]}</td>'
            f'<td class="cart-subtotal">{_money(item["subtotal"])}</td></tr>'
            for item in cart["items"]
        )
        body = (
            '<h1 data-testid="page-title">Your cart</h1>'
            '<table class="orders" data-testid="cart"><thead><tr><th>Product</th>'
            f"<th>Quantity</th><th>Subtotal</th></tr></thead><tbody>{rows}</tbody></table>"
            f'<p data-testid="cart-total" data-total="{cart["total"]}">Total: '
            f"{_money(cart['total'])}</p>"
        )
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
                "products": [self.state.summary(p) for p in matches[:limit]],
            },
        )

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
        self._json(
            200,
            {"username": user, "display_name": self.state.users[user].get("display_name", user)},
        )

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
            headers.append(
                (
                    "Set-Cookie",
                    f"{CART_COOKIE}={cart_id}; Max-Age={SESSION_MAX_AGE}; Path=/; HttpOnly; "
                    "SameSite=Lax",
                )
            )
        with self.state.lock:
            lines = self.state.carts.setdefault(cart_id, {})
            wanted = lines.get(product_id, 0) + quantity
            if wanted > int(product["stock"]):
                self._json(
                    409,
                    {"error": f"out of stock: {product['stock']} left", "stock": product["stock"]},
                    headers,
                )
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


def _safe_next(value: str) -> str:
    """Only same-site paths may follow a login (no open redirect)."""
    if value.startswith("/") and not value.startswith("//") and "\\" not in value:
        return value
    return "/account"


_Route = tuple["re.Pattern[str]", Callable[..., None]]


def _routes(*entries: tuple[str, Callable[..., None]]) -> list[_Route]:
    return [(re.compile(pattern), handler) for pattern, handler in entries]


_GET = _routes(
    (r"/", _Handler.page_home),
    (r"/product/(\d{1,9})", _Handler.page_product),
    (r"/search", _Handler.page_search),
    (r"/contact", _Handler.page_contact),
    (r"/login", _Handler.page_login),
    (r"/logout", _Handler.page_logout),
    (r"/account", _Handler.page_account),
    (r"/cart", _Handler.page_cart),
    (r"/static/([A-Za-z0-9_.-]+)", _Handler.static_file),
    (r"/favicon\.ico", _Handler.favicon),
    (r"/api/products", _Handler.api_products),
    (r"/api/products/(\d{1,9})", _Handler.api_product),
    (r"/api/categories", _Handler.api_categories),
    (r"/api/me", _Handler.api_me),
    (r"/api/orders", _Handler.api_orders),
    (r"/api/cart", _Handler.api_cart_get),
)
_ROUTES: dict[str, list[_Route]] = {
    "GET": _GET,
    "HEAD": _GET,
    "POST": _routes(
        (r"/contact", _Handler.form_contact),
        (r"/login", _Handler.form_login),
        (r"/product/(\d{1,9})/reviews", _Handler.form_review),
        (r"/api/cart", _Handler.api_cart_post),
        (r"/api/products/(\d{1,9})/reviews", _Handler.api_review),
        (r"/api/contact", _Handler.api_contact),
    ),
    "DELETE": _routes((r"/api/cart", _Handler.api_cart_delete)),
}


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], demo: DemoServer) -> None:
        self.demo = demo
        super().__init__(address, _Handler)


class DemoServer:
    """The demo shop on a local port.

    ``server = DemoServer().start()`` serves it until ``server.close()``; it is also a context
    manager, sync (``with DemoServer() as server:``) and async (``async with``). The port is
    0 by default: the system picks a free one, see :attr:`port`.

    Attributes:
        state: the shop's in-memory :class:`DemoState` (products, carts, sessions, posted
            reviews, contact messages), fresh for each server.
        hostname: the name pages are served under; ``shop.localhost`` by default, which Chrome
            resolves to loopback by itself and treats as an origin of its own.
    """

    def __init__(
        self,
        port: int = 0,
        *,
        host: str = "127.0.0.1",
        hostname: str = "shop.localhost",
        site_dir: str | Path | None = None,
        verbose: bool = False,
    ) -> None:
        self.requested_port = port
        self.host = host
        self.hostname = hostname
        self.site_dir = Path(site_dir) if site_dir is not None else SITE_DIR
        self.verbose = verbose
        self.state = DemoState.load(self.site_dir)
        self.layout = Template((self.site_dir / "layout.html").read_text("utf-8"))
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    def __repr__(self) -> str:
        where = self.url if self._httpd is not None else "not started"
        return f"<DemoServer {where}>"

    @property
    def started(self) -> bool:
        return self._httpd is not None

    def start(self) -> DemoServer:
        """Bind the port and serve from a daemon thread; returns ``self``. Idempotent."""
        if self._httpd is None:
            httpd = _HTTPServer((self.host, self.requested_port), self)
            thread = threading.Thread(
                target=httpd.serve_forever,
                kwargs={"poll_interval": 0.05},
                name=f"ego-demo-shop:{httpd.server_address[1]}",
                daemon=True,
            )
            thread.start()
            self._httpd, self._thread = httpd, thread
        return self

    def close(self) -> None:
        """Stop serving and release the port. Idempotent."""
        httpd, thread = self._httpd, self._thread
        self._httpd = self._thread = None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
        if thread is not None:
            thread.join(timeout=5)

    @property
    def port(self) -> int:
        """The port being served (the one the system picked when asked for 0)."""
        if self._httpd is None:
            raise RuntimeError("the demo server is not started: call start() first")
        return int(self._httpd.server_address[1])

    @property
    def origin(self) -> str:
        """``http://shop.localhost:<port>``"""
        return f"http://{self.hostname}:{self.port}"

    @property
    def url(self) -> str:
        """``http://shop.localhost:<port>/``: the shop's home page, for the browser."""
        return self.origin + "/"

    @property
    def local_url(self) -> str:
        """``http://127.0.0.1:<port>/``: the same server for Python-side clients."""
        return f"http://{self.host}:{self.port}/"

    def url_for(self, path: str = "/") -> str:
        """The browser URL of ``path`` (``"/contact"`` -> ``http://shop.localhost:<port>/contact``)."""
        return self.origin + "/" + path.lstrip("/")

    def local_url_for(self, path: str = "/") -> str:
        """The ``127.0.0.1`` URL of ``path``."""
        return self.local_url + path.lstrip("/")

    def __enter__(self) -> DemoServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    async def __aenter__(self) -> DemoServer:
        return self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await asyncio.to_thread(self.close)
