"""The shop's order desk: a part rendered on the server, with no JavaScript and no JSON API.

What an agent does here is a sequence of page actions, which ``tab.record_actions()`` keeps
and ``ego suggest SITE --actions FILE`` drafts a tool from (docs/learning-loop.md):

- ``GET /desk/search``: a search form that posts (``POST /desk/results``) and gets the
  matching products back as HTML;
- ``GET /desk/order``: a two-step order form: the customer (``POST /desk/order/details``),
  then the product, the quantity and the desk's password (``POST /desk/order/done``), which
  places the order (:attr:`~ego.demo.server.DemoServer.desk_orders`) and shows it.

``DemoServer(pages_changed=True)`` (settable while it serves) redesigns the desk on purpose,
as :attr:`~ego.demo.server.DemoServer.api_changed` does the API: the search button "Look up"
is renamed "Find", and the order's email field moves from the first step to the second. A
tool drafted before the change fails until it is healed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from .pages import Html, escape

if TYPE_CHECKING:
    from .routes import ShopHandler

__all__ = [
    "DESK_PASSWORD",
    "desk_details",
    "desk_done",
    "desk_order",
    "desk_results",
    "desk_search",
]

#: The password the order desk asks for before it places an order.
DESK_PASSWORD: Final = "copper-kettle-42"


def _field(label: str, name: str, kind: str = "text", value: str = "") -> str:
    return (
        f'<p><label for="{name}">{escape(label)}</label> '
        f'<input id="{name}" name="{name}" type="{kind}" value="{escape(value)}" '
        f'data-testid="desk-{name}"></p>'
    )


def _hidden(name: str, value: str) -> str:
    return f'<input type="hidden" name="{name}" value="{escape(value)}">'


def desk_search(handler: ShopHandler, query: dict[str, str]) -> None:
    """The search form (posts to ``/desk/results``)."""
    changed = handler.demo.pages_changed
    options = "".join(
        f'<option value="{escape(c["name"])}">{escape(c["name"])}</option>'
        for c in handler.state.categories()
    )
    # A redesign renames the button and its test id both: the tool's selector breaks.
    button, testid = ("Find", "desk-find") if changed else ("Look up", "desk-search-submit")
    body = Html(
        '<h1>Order desk: search</h1><form method="post" action="/desk/results" '
        'data-testid="desk-search-form">'
        + _field("Words", "words")
        + '<p><label for="category">Category</label> <select id="category" name="category" '
        f'data-testid="desk-category"><option value="">any</option>{options}</select></p>'
        + f'<p><button type="submit" data-testid="{testid}">{button}</button></p>'
        "</form>"
    )
    handler._html(200, "Desk search", body, page="desk-search", user=handler._user())


def desk_results(handler: ShopHandler, query: dict[str, str]) -> None:
    """The products matching the posted words and category, as HTML."""
    form = handler._form()
    words, category = form.get("words", "").strip(), form.get("category", "").strip()
    found = handler.state.search(words, category=category)
    items = "".join(
        f'<li data-testid="desk-result">{escape(p["name"])}: {p["price"]:.2f}</li>' for p in found
    )
    body = Html(
        f'<h1>Order desk: results</h1><section id="results" data-testid="desk-results" '
        f'aria-label="Results"><h2>{len(found)} result(s) for “{escape(words)}”</h2>'
        f"<ul>{items}</ul></section>"
    )
    handler._html(200, "Desk results", body, page="desk-results", user=handler._user())


def desk_order(handler: ShopHandler, query: dict[str, str]) -> None:
    """Step 1 of the order: who orders (the email moves to step 2 once the pages changed)."""
    email = "" if handler.demo.pages_changed else _field("Email", "email", "email")
    body = Html(
        '<h1>Order desk: step 1 of 2</h1><form method="post" action="/desk/order/details" '
        'data-testid="desk-order-form">'
        + _field("Customer name", "customer")
        + email
        + '<p><button type="submit" data-testid="desk-next">Next</button></p></form>'
    )
    handler._html(200, "Desk order", body, page="desk-order", user=handler._user())


def desk_details(handler: ShopHandler, query: dict[str, str]) -> None:
    """Step 2: the product, the quantity and the desk's password."""
    form = handler._form()
    changed = handler.demo.pages_changed
    options = "".join(
        f'<option value="{p["id"]}">{escape(p["name"])}</option>' for p in handler.state.search("")
    )
    email = (
        _field("Email", "email", "email") if changed else _hidden("email", form.get("email", ""))
    )
    body = Html(
        '<h1>Order desk: step 2 of 2</h1><form method="post" action="/desk/order/done" '
        'data-testid="desk-details-form">'
        + _hidden("customer", form.get("customer", ""))
        + email
        + '<p><label for="product">Product</label> <select id="product" name="product" '
        f'data-testid="desk-product">{options}</select></p>'
        + _field("Quantity", "quantity", "number", "1")
        + _field("Desk password", "password", "password")
        + '<p><button type="submit" data-testid="desk-place">Place order</button></p></form>'
    )
    handler._html(200, "Desk order details", body, page="desk-details", user=handler._user())


def desk_done(handler: ShopHandler, query: dict[str, str]) -> None:
    """Place the order and show it (a wrong password or a bad field is refused, 400)."""
    form = handler._form()
    customer, email = form.get("customer", "").strip(), form.get("email", "").strip()
    product = (
        handler.state.product(int(form["product"])) if form.get("product", "").isdigit() else None
    )
    quantity = int(form["quantity"]) if form.get("quantity", "").isdigit() else 0
    problem = ""
    if form.get("password", "") != DESK_PASSWORD:
        problem = "Wrong desk password."
    elif not customer or "@" not in email or product is None or not 1 <= quantity <= 99:
        problem = "Give a name, an email, a product and a quantity from 1 to 99."
    if problem:
        body = Html(f'<h1>Order desk</h1><p role="alert">{escape(problem)}</p>')
        handler._html(400, "Desk order refused", body, page="desk-done", user=handler._user())
        return
    assert product is not None
    with handler.state.lock:
        order = {
            "id": f"D-{len(handler.demo.desk_orders) + 1}",
            "customer": customer,
            "email": email,
            "product_id": product["id"],
            "quantity": quantity,
        }
        handler.demo.desk_orders.append(order)
    body = Html(
        '<h1>Order desk: done</h1><section id="confirmation" aria-label="Confirmation" '
        f'data-testid="desk-confirmation"><p>Order {order["id"]} placed for '
        f"{escape(customer)}: {quantity} x {escape(product['name'])}.</p></section>"
    )
    handler._html(200, "Desk order placed", body, page="desk-done", user=handler._user())
