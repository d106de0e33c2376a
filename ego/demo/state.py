"""The demo shop's state: products, accounts, sessions, carts, reviews and contact messages.

One :class:`DemoState` per :class:`~ego.demo.server.DemoServer`, loaded fresh from
``site/products.json`` and kept in memory; the HTTP handlers read and change it under its
lock, and tests read it to check what a tool really did.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["SITE_DIR", "DemoState", "Json"]

SITE_DIR = Path(__file__).resolve().parent / "site"
"""Where the shop's static files, page layout and product data live."""

Json = dict[str, Any]


@dataclass
class DemoState:
    """Everything the shop keeps, in memory, for one :class:`~ego.demo.server.DemoServer`.

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
        """Fresh state from ``products.json``.

        Args:
            site_dir: the folder holding ``products.json`` (the bundled site by default).
        """
        data = json.loads((site_dir / "products.json").read_text("utf-8"))
        products = {
            int(p["id"]): dict(p, reviews=list(p.get("reviews", []))) for p in data["products"]
        }
        return cls(products=products, users=dict(data["users"]))

    # -- products -----------------------------------------------------------------------------

    def product(self, product_id: int) -> Json | None:
        """The product with this id, or None."""
        return self.products.get(product_id)

    def categories(self) -> list[Json]:
        """Every category with its product count, by name."""
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
        """Products whose name, category or description hold every word of ``query``.

        Args:
            query: the words to look for (all of them, case-insensitive); empty matches all.
            category: only products of this category, if given.
            limit: at most this many products, if given.
            sort: a product key (``price``, ``rating``, ``name``, ``id``), ``-`` first to
                reverse; ratings sort best first unless reversed.
        """
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
        """A product as the list API shows it."""
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
        """A product as its own API answer and page show it, reviews included."""
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
        """The cart under this cart cookie (empty if none): items, count and total."""
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
        """The account's past orders, with product names, prices and totals filled in."""
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
        """Publish a review of ``product``; returns it."""
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
        """Keep a contact message (``via`` says ``"form"`` or ``"api"``); returns it."""
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
