"""The demo shop's HTML: each page's body rendered from the template files in ``templates/``.

A template is a ``string.Template`` (``$name`` placeholders) written one tag per line for
reading; loading joins its lines with their indentation removed, so the served markup has no
whitespace between tags, as the shop has always served it. :func:`render` escapes every value
(``html.escape`` with quotes) unless it is :class:`Html`, markup another template produced,
so nothing from a request or the shop's data reaches a page unescaped.

The page layout around each body (``site/layout.html``) belongs to the site folder a
:class:`~ego.demo.server.DemoServer` serves; :func:`document` fills it in.
"""

from __future__ import annotations

import functools
import html
from collections.abc import Iterable
from pathlib import Path
from string import Template
from urllib.parse import quote

from .state import Json

__all__ = [
    "TEMPLATES_DIR",
    "Html",
    "account",
    "cart",
    "contact",
    "document",
    "escape",
    "home",
    "login",
    "not_found",
    "product",
    "render",
    "search",
]

TEMPLATES_DIR = Path(__file__).resolve().parent / "templates"
"""Where the page templates (``<name>.html``) live."""


class Html(str):
    """Markup that is already safe: :func:`render` inserts it as is."""

    __slots__ = ()


def escape(value: object) -> str:
    """``value`` as text safe inside HTML, attribute values included."""
    return html.escape(str(value), quote=True)


@functools.cache
def _template(name: str) -> Template:
    text = (TEMPLATES_DIR / f"{name}.html").read_text("utf-8")
    return Template("".join(line.strip() for line in text.splitlines()))


def render(template: str, /, **values: object) -> Html:
    """The template ``templates/<template>.html`` filled in with ``values``.

    Args:
        template: the template's file name without ``.html``.
        values: one per placeholder; each is escaped unless it is :class:`Html`.

    Raises:
        KeyError: a placeholder has no value.
        FileNotFoundError: there is no such template.
    """
    return Html(
        _template(template).substitute(
            {
                key: value if isinstance(value, Html) else escape(value)
                for key, value in values.items()
            }
        )
    )


def _join(fragments: Iterable[Html]) -> Html:
    return Html("".join(fragments))


def _money(value: float) -> str:
    return f"${value:.2f}"


def _stars(rating: float) -> str:
    return "★" * round(rating) + "☆" * (5 - round(rating))


def document(
    layout: Template, *, title: str, body: Html, page: str, query: str = "", user: str | None
) -> str:
    """A whole page: ``body`` inside the site's layout, with the visitor's navigation links.

    Args:
        layout: the site's ``layout.html`` (placeholders ``title``, ``body``, ``page``,
            ``query``, ``user_nav``).
        title: the page title (text).
        body: the page's rendered body.
        page: the page's name, for ``<body data-page>``.
        query: the search box's value (text).
        user: the logged-in username, or None for a guest.
    """
    user_nav = render("nav_user", user=user) if user else render("nav_guest")
    return layout.substitute(
        title=escape(title), body=body, page=escape(page), query=escape(query), user_nav=user_nav
    )


def not_found() -> Html:
    """The body of the 404 page."""
    return render("not_found")


def _card_list(products: list[Json], testid: str) -> Html:
    cards = []
    for item in products:
        stock = int(item["stock"])
        cards.append(
            render(
                "card",
                pid=item["id"],
                name=item["name"],
                category=item["category"],
                price=item["price"],
                money=_money(item["price"]),
                rating=item["rating"],
                stars=_stars(item["rating"]),
                stock=stock,
                stock_text=f"{stock} in stock" if stock else "Out of stock",
                out="" if stock else " out",
                disabled="" if stock else " disabled",
            )
        )
    return render("card_list", testid=testid, cards=_join(cards))


def home(products: list[Json], categories: list[Json]) -> Html:
    """The home page's body: category links and a card per product."""
    links = (
        render("category_link", quoted=quote(c["name"]), name=c["name"], count=c["count"])
        for c in categories
    )
    return render(
        "home",
        links=_join(links),
        count=len(products),
        products=_card_list(products, "product-list"),
    )


def product(detail: Json, *, logged_in: bool) -> Html:
    """A product page's body from its :meth:`~ego.demo.state.DemoState.detail`.

    Args:
        detail: the product with its reviews.
        logged_in: whether to offer the review form (else a link to log in).
    """
    pid, stock = detail["id"], int(detail["stock"])
    reviews = (
        render(
            "review",
            author=review["author"],
            rating=review["rating"],
            stars="★" * int(review["rating"]),
            text=review["text"],
        )
        for review in detail["reviews"]
    )
    return render(
        "product",
        pid=pid,
        name=detail["name"],
        category=detail["category"],
        price=detail["price"],
        money=_money(detail["price"]),
        rating=detail["rating"],
        stars=_stars(detail["rating"]),
        stock=stock,
        stock_text=f"{stock} in stock" if stock else "Out of stock",
        description=detail["description"],
        disabled="" if stock else " disabled",
        review_count=detail["review_count"],
        reviews=_join(reviews),
        review_form=render("review_form" if logged_in else "review_login", pid=pid),
    )


def search(q: str, products: list[Json], api: str = "/api/products") -> Html:
    """The search page's body for query ``q`` (empty: the page before any search).

    Args:
        q: the query.
        products: what it found.
        api: the search API the page's script asks for its top rated matches.
    """
    count = len(products)
    heading = f"{count} result{'s' if count != 1 else ''} for “{q}”" if q else "Search the shop"
    return render(
        "search",
        heading=heading,
        count=count,
        products=_card_list(products, "search-results"),
        api=api,
        q=q,
    )


def contact(
    *, notice: str = "", error: str = "", fields: dict[str, str] | None = None, sent_id: str = ""
) -> Html:
    """The contact page's body.

    Args:
        notice: the thanks shown after a message was sent (with ``sent_id``, its number).
        error: why the posted form was refused.
        fields: the posted values to show again.
        sent_id: the sent message's number.
    """
    values = fields or {}
    if notice:
        status = render("contact_sent", message_id=sent_id, notice=notice)
    elif error:
        status = render("contact_error", error=error)
    else:
        status = render("contact_idle")
    return render(
        "contact",
        status=status,
        name=values.get("name", ""),
        email=values.get("email", ""),
        message=values.get("message", ""),
    )


def login(*, next_url: str, error: str = "") -> Html:
    """The login page's body: the form (posting ``next_url`` along) and ``error`` if any."""
    error_html = render("login_error", error=error) if error else Html()
    return render("login", error=error_html, next_url=next_url)


def account(user: str, display_name: str, orders: list[Json]) -> Html:
    """The account page's body: who is signed in and their orders."""
    rows = (
        render(
            "order_row",
            order_id=order["id"],
            date=order["date"],
            status=order["status"],
            items=", ".join(f"{item['quantity']} x {item['name']}" for item in order["items"]),
            total=order["total"],
            money=_money(order["total"]),
        )
        for order in orders
    )
    return render("account", display_name=display_name, user=user, rows=_join(rows))


def cart(view: Json) -> Html:
    """The cart page's body from a :meth:`~ego.demo.state.DemoState.cart_view`."""
    rows = (
        render(
            "cart_row",
            pid=item["product_id"],
            name=item["name"],
            quantity=item["quantity"],
            money=_money(item["subtotal"]),
        )
        for item in view["items"]
    )
    return render("cart", rows=_join(rows), total=view["total"], money=_money(view["total"]))
