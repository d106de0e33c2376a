"""The six capabilities every tab offers, on pages served over http in real Chromium:
navigate, evaluate, snapshot, click, type and network."""

from __future__ import annotations

import asyncio
import re
import socket
from typing import Any

import pytest

import ego
from ego.errors import (
    CommandTimeoutError,
    ElementNotFoundError,
    JavaScriptError,
    NavigationError,
)
from ego.page.locate import element_object, resolve_ref
from tests.helpers.page_server import PageServer
from tests.helpers.snapshot_pages import GIF, SNAPSHOT_PAGE

#: Turns a hang into a failure; never a timing assertion (healthy calls end far sooner).
HANG = 15.0


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (and that Chrome does not refuse as unsafe)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# --- navigate -----------------------------------------------------------------------------------

RECORD_LIFECYCLE = """<script>
window.__seen = [];
document.addEventListener('DOMContentLoaded', () => __seen.push('domcontentloaded'));
window.addEventListener('load', () => __seen.push('load'));
</script>"""


async def test_navigate_waits_for_load_or_domcontentloaded(
    tab: ego.Tab, server: PageServer
) -> None:
    server.route("/cap/nav/pixel.gif", GIF, content_type="image/gif")
    loaded = server.route(
        "/cap/nav/loaded",
        f"<title>Loaded</title>{RECORD_LIFECYCLE}<img src='/cap/nav/pixel.gif' alt='pixel'>",
    )
    await tab.navigate(loaded, wait_until="load")
    assert await tab.evaluate("[document.readyState, __seen, document.images[0].complete]") == [
        "complete",
        ["domcontentloaded", "load"],
        True,
    ]
    assert tab.url == loaded

    # An image that never arrives holds back "load" but not "domcontentloaded".
    hang = "/cap/nav/never.gif"
    server.hanging.add(hang)
    try:
        stalled = server.route(
            "/cap/nav/stalled", f"<title>Stalled</title>{RECORD_LIFECYCLE}<img src='{hang}'>"
        )
        await tab.navigate(stalled, wait_until="domcontentloaded")
        assert await tab.evaluate("[document.readyState, __seen, document.title]") == [
            "interactive",
            ["domcontentloaded"],
            "Stalled",
        ]
        with pytest.raises(CommandTimeoutError, match="did not reach 'load'"):
            await asyncio.wait_for(tab.navigate(stalled, wait_until="load", timeout=0.5), HANG)
    finally:
        server.hanging.discard(hang)
        await tab.navigate("about:blank")


async def test_navigate_reports_a_failed_navigation(tab: ego.Tab) -> None:
    with pytest.raises(NavigationError, match="ERR_CONNECTION_REFUSED"):
        await tab.navigate(f"http://127.0.0.1:{closed_port()}/nothing-listens-here")


# --- evaluate -----------------------------------------------------------------------------------


async def test_evaluate_returns_values_awaits_promises_and_raises_js_errors(
    tab: ego.Tab, server: PageServer
) -> None:
    await tab.navigate(server.route("/cap/eval", "<title>Eval</title><p id='p'>para</p>"))
    assert await tab.evaluate("1 + 2") == 3
    assert await tab.evaluate(
        "document.getElementById('p').textContent + ' ' + document.title"
    ) == ("para Eval")
    value = {"a": [1, "x\u2028</script>", None], "b": {"c": True, "d": 1.5}}
    assert await tab.evaluate("({a: [1, 'x\\u2028</script>', null], b: {c: true, d: 1.5}})") == (
        value
    )
    assert await tab.evaluate("new Promise((r) => setTimeout(() => r(location.pathname), 0))") == (
        "/cap/eval"
    )
    with pytest.raises(JavaScriptError) as caught:
        await tab.evaluate("null.boom")
    assert caught.value.name == "TypeError"
    assert "null" in caught.value.js_message


# --- snapshot -----------------------------------------------------------------------------------


#: Describes the element a function is called on (``Runtime.callFunctionOn``).
DESCRIBE = """function () {
  const all = Array.from(document.querySelectorAll('*'));
  return {
    index: all.indexOf(this),
    tag: this.localName,
    role: this.getAttribute('role') || '',
    type: this.getAttribute('type') || '',
    href: this.getAttribute('href'),
    text: this.textContent.replace(/\\s+/g, ' ').trim(),
  };
}"""


async def describe(page: ego.Tab, object_id: str) -> dict[str, Any]:
    answer = await page.send(
        "Runtime.callFunctionOn",
        {"functionDeclaration": DESCRIBE, "objectId": object_id, "returnByValue": True},
    )
    value: dict[str, Any] = answer["result"]["value"]
    return value


def _check_line(kind: str, rest: str, el: dict[str, Any]) -> None:
    """The element a ref names is the one its line describes."""
    quoted = re.match(r'"((?:[^"\\]|\\.)*)"', rest.strip())
    label = quoted.group(1) if quoted else ""
    tag = el["tag"]
    if kind == "link":
        assert tag == "a"
        assert rest.endswith(el["href"]) or rest.endswith(f"/cap/snapshot{el['href']}")
        assert el["text"] == label
    elif kind == "button":
        assert tag == "button" or el["role"] == "button"
        assert el["text"] == label
    elif kind == "textbox":
        assert tag == "textarea" or (tag == "input" and el["type"] not in ("checkbox", "radio"))
    elif kind == "checkbox":
        assert (tag, el["type"]) == ("input", "checkbox")
    else:
        assert (kind, tag) == ("combobox", "select")


async def test_snapshot_outline_with_refs_that_name_exactly_their_element(
    tab: ego.Tab, server: PageServer
) -> None:
    server.route("/cap/nav/pixel.gif", GIF, content_type="image/gif")
    url = server.route("/cap/snapshot", SNAPSHOT_PAGE)
    await tab.navigate(url)
    outline = await tab.snapshot()
    lines = outline.splitlines()
    assert lines[0] == f'page "Snapshot page" {url}'

    # What an agent needs, as the browser names it, with a ref on what it can act on.
    for expected in (
        'navigation "Main"',
        'heading "Catalog" [level=1]',
        'link "Docs" [ref=e1] -> /docs',
        'button "Save" [ref=',
        'textbox "Email" [ref=',
        'textbox "First name" [ref=',
        'textbox "Search" [ref=',
        'textbox "Notes" [ref=',
        'checkbox "In stock" [checked] [ref=',
        'value="price"',
        'options: "price", "name"',  # chosen through the select's ref: none of their own
        'img "logo"',
        'button "Custom" [ref=',
        "text: Plain paragraph",
        'region "More"',
        'link "Leading digit" [ref=',
        "contentinfo: Footer text",
    ):
        assert any(expected in line for line in lines), f"{expected!r} not in\n{outline}"
    assert "Ghost" not in outline  # hidden
    assert outline.count('button "Add"') == 3
    assert outline.count('textbox "Coupon"') == 2
    # Never CSS selectors or coordinates: refs only.
    assert not re.search(r"[{}]|\bx=\d|\by=\d", outline)

    # Every ref names one element, the one its line describes, each a different element, in
    # document order; selector_for gives a selector that finds that element alone.
    refs = re.findall(r"^ *(\S+)(.*?)\[ref=(e\d+)\](.*)$", outline, re.M)
    assert len(refs) == 21
    indexes = []
    for kind, before, ref, after in refs:
        frame, object_id = await resolve_ref(tab, ref)
        assert frame is tab.main_frame
        described = await describe(tab, object_id)
        _check_line(kind, before + after, described)
        indexes.append(described["index"])
        selector = await tab.selector_for(ref)
        found = await element_object(tab, selector)
        assert found is not None, selector
        assert (await describe(tab, found))["index"] == described["index"], selector
    assert indexes == sorted(set(indexes))
    # A durable selector is role and name where they find the element alone, else CSS.
    by_ref = {ref: await tab.selector_for(ref) for _, _, ref, _ in refs}
    assert by_ref["e1"] == 'role=link[name="Docs"]'
    assert by_ref["e5"] == 'role=textbox[name="Email"]'
    assert by_ref["e9"] == 'role=checkbox[name="In stock"]'
    assert by_ref["e3"].startswith("body > header > nav > a:nth-of-type(")  # two "Top" links
    add_selectors = [by_ref[ref] for kind, rest, ref, _ in refs if 'Add"' in rest]
    assert len(set(add_selectors)) == 3
    assert all(":nth-of-type(" in sel for sel in add_selectors)


# --- click --------------------------------------------------------------------------------------

CLICK_PAGE = """<!doctype html><title>Click</title>
<div style="height: 3000px">tall</div>
<button id="go">Go</button>
<svg id="icon" width="20" height="20"><rect width="20" height="20"></rect></svg>
<script>
window.__clicks = [];
document.getElementById('go').addEventListener('click', (e) => __clicks.push(e.target.id));
document.getElementById('icon').addEventListener('click', (e) => __clicks.push('icon'));
</script>
"""


async def test_click_runs_the_handler_waits_for_late_elements_and_reports_missing_ones(
    tab: ego.Tab, server: PageServer
) -> None:
    await tab.navigate(server.route("/cap/click", CLICK_PAGE))
    await tab.click("#go")
    assert await tab.evaluate("[__clicks, document.activeElement.id]") == [["go"], "go"]
    # Scrolled into view on the way: the button sits below a 3000 px block.
    assert await tab.evaluate("document.getElementById('go').getBoundingClientRect().top") < (
        await tab.evaluate("innerHeight")
    )

    # An element the page adds later is waited for.
    await tab.evaluate(
        "setTimeout(() => { const b = document.createElement('button'); b.id = 'late';"
        " b.textContent = 'Late'; b.onclick = () => __clicks.push('late');"
        " document.body.append(b); }, 150); 0"
    )
    assert await tab.evaluate("document.querySelector('#late')") is None
    await tab.click("#late", wait=5)
    assert await tab.evaluate("__clicks") == ["go", "late"]

    # An SVG icon has no click() method; it is clicked all the same.
    await tab.click("#icon svg, svg#icon")
    assert await tab.evaluate("__clicks") == ["go", "late", "icon"]

    # A missing element ends the wait with an error naming it (bounded: never a hang).
    with pytest.raises(ElementNotFoundError) as caught:
        await asyncio.wait_for(tab.click("#nope", wait=0.2), HANG)
    assert caught.value.selector == "#nope"
    assert "'#nope'" in str(caught.value)
    assert "waited 0.2 s" in str(caught.value)
    assert await tab.evaluate("__clicks") == ["go", "late", "icon"]


# --- type ---------------------------------------------------------------------------------------

TYPE_PAGE = """<!doctype html><title>Type</title>
<input id="name" value="old">
<textarea id="bio"></textarea>
<div id="editor" contenteditable="true"></div>
<select id="size"><option>S</option><option>M</option><option>L</option></select>
<input id="react">
<script>
window.__events = [];
for (const id of ['name', 'bio', 'editor', 'size']) {
  const el = document.getElementById(id);
  for (const type of ['input', 'change']) {
    el.addEventListener(type, (e) => __events.push(`${id}:${e.type}`));
  }
}
// What React does: an own 'value' property on the element records assignments through it,
// and onChange fires only when the native value differs from the last recorded one.
const react = document.getElementById('react');
const native = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value');
let tracked = react.value;
window.__assigned = [];
window.__onChange = [];
Object.defineProperty(react, 'value', {
  configurable: true,
  get() { return native.get.call(this); },
  set(v) { __assigned.push(v); tracked = '' + v; native.set.call(this, v); },
});
react.addEventListener('input', () => {
  const now = native.get.call(react);
  if (now !== tracked) { tracked = now; __onChange.push(now); }
});
</script>
"""


async def test_type_types_as_a_keyboard_does_and_change_fires_when_focus_leaves(
    tab: ego.Tab, server: PageServer
) -> None:
    await tab.navigate(server.route("/cap/type", TYPE_PAGE))

    # The old value is selected and deleted, then the text inserted: an input event each, as
    # from a user; change comes when the field loses focus, as it does for a user.
    await tab.type("#name", "Ada")
    assert await tab.evaluate("[document.getElementById('name').value, __events]") == [
        "Ada",
        ["name:input", "name:input"],
    ]
    await tab.press("Tab")
    assert await tab.evaluate("__events") == ["name:input", "name:input", "name:change"]
    await tab.type("#name", " Lovelace", clear=False)
    assert await tab.evaluate("document.getElementById('name').value") == "Ada Lovelace"

    await tab.evaluate("__events.length = 0")
    await tab.type("#bio", 'line one\nline two \u2028 "quoted" </script>')
    value, events = await tab.evaluate("[document.getElementById('bio').value, __events]")
    assert value == 'line one\nline two \u2028 "quoted" </script>'
    # The click on #bio took the focus from #name (its change), then the text went in: an
    # input event for each line, as Chrome inserts a multi-line text; no change yet.
    assert events[0] == "name:change"
    assert set(events[1:]) == {"bio:input"}

    await tab.evaluate("__events.length = 0")
    await tab.type("#editor", "Hello editor")
    assert await tab.evaluate("document.getElementById('editor').textContent") == "Hello editor"
    assert "editor:input" in await tab.evaluate("__events")
    # Appending to an editor that is not focused goes at the end, wherever the click was.
    await tab.evaluate("document.getElementById('name').focus()")
    await tab.type("#editor", " and more", clear=False)
    assert await tab.evaluate("document.getElementById('editor').textContent") == (
        "Hello editor and more"
    )
    await tab.type("#editor", "Bye")
    assert await tab.evaluate("document.getElementById('editor').textContent") == "Bye"

    # A <select> gets the option with that label, as typing its first letters chooses it.
    await tab.type("#size", "M")
    assert await tab.evaluate("document.getElementById('size').value") == "M"
    assert "size:change" in await tab.evaluate("__events")

    with pytest.raises(ElementNotFoundError):
        await tab.type("#missing", "x", wait=0)


async def test_type_reaches_a_react_like_value_tracker(tab: ego.Tab, server: PageServer) -> None:
    await tab.navigate(server.route("/cap/type", TYPE_PAGE))
    await tab.type("#react", "hello")
    # The native setter changed the value behind the tracker's back, so the tracker saw a
    # change on the input event (React's onChange would fire).
    assert await tab.evaluate(
        "[document.getElementById('react').value, __assigned, __onChange]"
    ) == [
        "hello",
        [],
        ["hello"],
    ]
    await tab.type("#react", " world", clear=False)
    assert await tab.evaluate("__onChange") == ["hello", "hello world"]

    # The control: assigning through the element's own property hides the change from it.
    await tab.evaluate(
        "const r = document.getElementById('react'); r.value = 'naive';"
        " r.dispatchEvent(new Event('input', {bubbles: true})); 0"
    )
    assert await tab.evaluate("[__assigned, __onChange]") == [["naive"], ["hello", "hello world"]]


# --- network ------------------------------------------------------------------------------------


async def test_network_lists_the_pages_requests_and_starts_over_on_navigation(
    tab: ego.Tab, server: PageServer
) -> None:
    server.route("/cap/net/app.js", "window.__app = 1;", content_type="text/javascript")
    server.route("/cap/net/api", '{"created": true}', status=201, content_type="application/json")
    page = server.route(
        "/cap/net/page", "<title>Net</title><script src='/cap/net/app.js'></script><p>net</p>"
    )
    favicon = server.url("/favicon.ico")
    second = server.route("/cap/net/second", "<title>Second</title><p>nothing else</p>")
    await tab.navigate(page)
    post = "fetch('/cap/net/api', {method: 'POST', body: 'x=1'}).then((r) => r.status)"
    assert await tab.evaluate(post) == 201
    unreachable = f"http://127.0.0.1:{closed_port()}/unreachable"
    refused = f"fetch('{unreachable}').then(() => 'answered', (e) => e.name)"
    assert await tab.evaluate(refused) == "TypeError"

    requests = await tab.network()
    by_url = {request.url: request for request in requests}
    document = by_url[page]
    assert (document.method, document.type, document.status) == ("GET", "Document", 200)
    assert document.mime_type == "text/html"
    script = by_url[server.url("/cap/net/app.js")]
    assert (script.method, script.type, script.status, script.failed) == ("GET", "Script", 200, "")
    api = by_url[server.url("/cap/net/api")]
    assert (api.method, api.type, api.status) == ("POST", "Fetch", 201)
    assert api.mime_type == "application/json"
    failed = by_url[unreachable]
    assert failed.status is None
    assert failed.failed == "net::ERR_CONNECTION_REFUSED"
    # In the order they started. Chrome may also fetch /favicon.ico for the page, at a
    # moment of its own choosing: leave it out of the order.
    assert [r.url for r in requests if r.url != favicon] == [
        page,
        script.url,
        api.url,
        failed.url,
    ]
    assert api.as_dict()["status"] == 201

    await tab.navigate(second)
    after = [r for r in await tab.network() if r.url != favicon]
    assert [(r.url, r.type, r.status) for r in after] == [(second, "Document", 200)]
