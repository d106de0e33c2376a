"""The demo shop's HTTP plumbing: reading requests and writing responses, for every route.

:class:`BaseShopHandler` parses cookies, forms and JSON bodies, knows the logged-in user, and
writes JSON, HTML (every page with ``Content-Security-Policy: script-src 'self'``), redirects
and 404s; :mod:`ego.demo.routes` builds the shop's routes on it. :class:`ShopHTTPServer` is
the threading HTTP server a :class:`~ego.demo.server.DemoServer` runs them in.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from http.cookies import CookieError, SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from string import Template
from typing import Any, Protocol
from urllib.parse import parse_qs

from . import pages
from .state import DemoState, Json

__all__ = [
    "CART_COOKIE",
    "CSP",
    "SESSION_COOKIE",
    "SESSION_MAX_AGE",
    "BaseShopHandler",
    "Shop",
    "ShopHTTPServer",
    "cookie_header",
]

CSP = "script-src 'self'"
"""The Content-Security-Policy header of every HTML response."""

SESSION_COOKIE = "shop_session"
CART_COOKIE = "shop_cart"
SESSION_MAX_AGE = 86_400  # one day


class Shop(Protocol):
    """What the handler needs from the shop it serves (a :class:`~ego.demo.server.DemoServer`)."""

    state: DemoState
    site_dir: Path
    api_changed: bool
    pages_changed: bool
    desk_orders: list[dict[str, object]]
    layout: Template
    verbose: bool


def cookie_header(name: str, value: str, max_age: int) -> str:
    """A ``Set-Cookie`` value for a site-wide HttpOnly, SameSite=Lax cookie."""
    return f"{name}={value}; Max-Age={max_age}; Path=/; HttpOnly; SameSite=Lax"


class BaseShopHandler(BaseHTTPRequestHandler):
    """Request parsing and response writing for the shop's routes (no routes of its own)."""

    protocol_version = "HTTP/1.1"
    # Without it every response waits ~40 ms for the client's delayed ACK.
    disable_nagle_algorithm = True
    server_version = "EgoDemoShop/1.0"
    server: ShopHTTPServer

    # -- plumbing -----------------------------------------------------------------------------

    @property
    def demo(self) -> Shop:
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
        try:
            data = json.loads(self._body() or b"{}")
        except ValueError:
            return None
        return data if isinstance(data, dict) else None

    def _send(
        self, status: int, body: bytes, content_type: str, headers: Iterable[tuple[str, str]] = ()
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
        headers = [("Cache-Control", "no-store"), *headers]
        self._send(status, body, "application/json; charset=utf-8", headers)

    def _html(
        self,
        status: int,
        title: str,
        body: pages.Html,
        *,
        page: str,
        query: str = "",
        user: str | None = None,
    ) -> None:
        text = pages.document(
            self.demo.layout, title=title, body=body, page=page, query=query, user=user
        )
        headers = [("Content-Security-Policy", CSP), ("Cache-Control", "no-store")]
        self._send(status, text.encode("utf-8"), "text/html; charset=utf-8", headers)

    def _redirect(self, location: str, headers: Iterable[tuple[str, str]] = ()) -> None:
        self._send(303, b"", "text/plain; charset=utf-8", [("Location", location), *headers])

    def _not_found(self, path: str) -> None:
        if path.startswith("/api/"):
            self._json(404, {"error": "not found"})
        else:
            self._html(404, "Not found", pages.not_found(), page="not-found", user=self._user())


class ShopHTTPServer(ThreadingHTTPServer):
    """A threading HTTP server answering with ``handler`` for ``demo``."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self, address: tuple[str, int], demo: Shop, handler: type[BaseShopHandler]
    ) -> None:
        self.demo = demo
        super().__init__(address, handler)
