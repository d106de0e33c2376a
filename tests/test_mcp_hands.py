"""The rest of a user's hands through ``ego mcp`` and the MCP SDK's stdio client: ``click``
with a button, a double click and modifiers, by a text selector; ``drag`` by selector and by
ref, HTML5 and pointer-driven; ``scroll`` to a row of a virtualized list, by the wheel, to an
edge; ``press_key`` with chords in sequence; ``type`` with no target typing into the focus;
the locators people use (label, placeholder, a test id by the site's own attribute, which
``--test-id-attribute`` names); wrong arguments refused in MCP words.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.helpers.hands_pages import CLICKS, KANBAN, NAMED, RECORD, SORTABLE, VIRTUAL
from tests.helpers.mcp_client import McpClient, serving, text_of, value_of
from tests.helpers.page_server import PageServer

pytestmark = pytest.mark.chrome  # the MCP server under test launches Chrome


@pytest.fixture(scope="module")
async def agent(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[McpClient]:
    base = tmp_path_factory.mktemp("mcp-hands")
    # The sites these pages stand for mark their test ids data-qa.
    async with serving(base, "--test-id-attribute", "data-qa", workspace=base / "ws") as client:
        yield client


async def open_page(agent: McpClient, server: PageServer, path: str, body: str) -> str:
    url = server.route(path, f"<!doctype html><title>hands</title>{RECORD}{body}")
    return str(value_of(await agent.call("navigate", {"url": url, "diff": False}))["url"])


async def page_value(agent: McpClient, expression: str) -> Any:
    return value_of(await agent.call("evaluate", {"expression": expression}))


async def test_click_with_a_button_a_double_click_and_modifiers(
    agent: McpClient, server: PageServer
) -> None:
    await open_page(agent, server, "/mcp-hands/clicks", CLICKS)
    right = {"selector": "text=report.pdf", "button": "right"}
    clicked = value_of(await agent.call("click", right))
    assert clicked["clicked"] == "text=report.pdf"
    assert await page_value(agent, "getComputedStyle(menu).display") == "block"
    value_of(await agent.call("click", {"selector": "text=Buy milk", "double": True}))
    assert await page_value(agent, "document.activeElement.id") == "edit"
    value_of(await agent.call("click", {"selector": "#file", "modifiers": ["Shift"]}))
    shifted = await page_value(agent, "log.filter((e) => e[0] === 'click').map((e) => e[4])")
    assert shifted[-1] is True
    refused = await agent.call("click", {"selector": "#file", "modifiers": ["Hyper"]})
    assert refused.is_error
    assert "modifiers holds 'Hyper'" in text_of(refused)


async def test_drag_by_selector_and_by_ref(agent: McpClient, server: PageServer) -> None:
    await open_page(agent, server, "/mcp-hands/kanban", KANBAN)
    dragged = value_of(await agent.call("drag", {"source": "text=Card A", "target": "#done"}))
    assert (dragged["dragged"], dragged["onto"]) == ("text=Card A", "#done")
    assert await page_value(agent, "order()") == [["todo", ["card-b"]], ["done", ["card-a"]]]

    await open_page(agent, server, "/mcp-hands/sortable", SORTABLE)
    outline = text_of(await agent.call("take_snapshot", {}))
    refs = {name: ref for ref, name in re.findall(r"listitem \[ref=(e\d+)\]: (\w+)", outline)}
    one, four = refs["One"], refs["Four"]  # a bare ref, and one written ref=e12
    value_of(await agent.call("drag", {"source": one, "target": f"ref={four}"}))
    assert await page_value(agent, "order()") == ["Two", "Three", "One", "Four"]
    missing = await agent.call("drag", {"source": "text=One", "target": "text=Nowhere"})
    assert missing.is_error
    assert "ElementNotFoundError" in text_of(missing)


async def test_scroll_reaches_a_far_row_and_the_wheel_turns(
    agent: McpClient, server: PageServer
) -> None:
    await open_page(agent, server, "/mcp-hands/virtual", VIRTUAL)
    found = value_of(await agent.call("scroll", {"target": "#rows", "until": 'text="Row 250"'}))
    assert found["found"] == '<div class=row> "Row 250"'
    assert found["scrolled"] == "<div id=rows>"
    value_of(await agent.call("click", {"selector": 'text="Row 250"'}))
    assert await page_value(agent, "log.filter((e) => e[0] === 'row')") == [
        ["row", True, "Row 250"]
    ]
    turned = value_of(await agent.call("scroll", {"target": "#rows", "dy": 90, "wheel": True}))
    assert turned["wheel"] == [0, 90]
    assert await page_value(agent, "rows.scrollTop") == found["y"] + 90
    page = value_of(await agent.call("scroll", {"to": "bottom", "diff": False}))
    assert page["scrolled"] == "the page"
    assert page["y"] == page["max_y"]
    both = await agent.call("scroll", {"dy": 10, "to": "top"})
    assert both.is_error
    assert "scroll takes one of" in text_of(both)


async def test_keys_in_sequence_and_typing_into_the_focus(
    agent: McpClient, server: PageServer
) -> None:
    await open_page(agent, server, "/mcp-hands/keys", "<input id=field value='old words'>")
    value_of(await agent.call("click", {"selector": "#field"}))
    pressed = value_of(await agent.call("press_key", {"key": "Control+A Backspace"}))
    assert pressed["pressed"] == "Control+A Backspace"
    typed = value_of(await agent.call("type", {"text": "new words"}))
    assert typed["typed"] == "the focus"
    assert await page_value(agent, "field.value") == "new words"
    unknown = await agent.call("press_key", {"key": "Control+Hyper"})
    assert unknown.is_error
    assert "unknown key 'Hyper'" in text_of(unknown)


#: A kanban board of cards with no role but ``draggable="true"`` (Chrome makes a draggable
#: ``<div>`` a group; a ``<span>`` stays generic): a card dropped on a card lands in that
#: card's column.
DRAGGABLE_CARDS = """
<style>.column { width: 200px; min-height: 60px; margin: 8px; background: #eee; }
.card { padding: 8px; margin: 4px; background: white; }</style>
<div class=column id=todo><div class=card draggable=true id=a>Write the spec</div>
  <div class=card draggable=true id=b>Fix the build</div></div>
<div class=column id=done><span class=card draggable=true id=c>Ship it</span></div>
<script>
for (const card of document.querySelectorAll('.card')) {
  card.addEventListener('dragstart', (e) => e.dataTransfer.setData('text/plain', card.id));
}
for (const column of document.querySelectorAll('.column')) {
  column.addEventListener('dragover', (e) => e.preventDefault());
  column.addEventListener('drop', (e) => {
    e.preventDefault();
    column.appendChild(document.getElementById(e.dataTransfer.getData('text/plain')));
  });
}
window.order = () => [...document.querySelectorAll('.column')].map(
  (c) => [c.id, [...c.children].map((card) => card.id)]);
</script>
"""


async def test_draggable_cards_have_refs_and_drag_by_them(
    agent: McpClient, server: PageServer
) -> None:
    await open_page(agent, server, "/mcp-hands/cards", DRAGGABLE_CARDS)
    outline = text_of(await agent.call("take_snapshot", {}))
    found = re.findall(r"(?:group|generic) \[ref=(e\d+)\]: (.+)", outline)
    cards = {name: ref for ref, name in found}
    assert set(cards) == {"Write the spec", "Fix the build", "Ship it"}
    dragged = await agent.call(
        "drag", {"source": cards["Fix the build"], "target": cards["Ship it"]}
    )
    assert value_of(dragged)["dragged"] == f"ref={cards['Fix the build']}"
    assert await page_value(agent, "order()") == [["todo", ["a"]], ["done", ["c", "b"]]]


#: A button with the site's test id, and its twin with the usual attribute's.
SEND = "<button id=decoy data-testid=send>Send</button><button id=send data-qa=send>Send</button>"


async def test_locators_by_label_placeholder_and_the_sites_test_id(
    agent: McpClient, server: PageServer
) -> None:
    await open_page(agent, server, "/mcp-hands/named", SEND + NAMED)
    typed = value_of(await agent.call("type", {"selector": "label=Email", "text": "me@x.org"}))
    assert typed["typed"] == "label=Email"
    value_of(await agent.call("type", {"selector": "placeholder=Search", "text": "chairs"}))
    value_of(await agent.call("click", {"selector": "testid=send"}))  # data-qa's, not the decoy
    assert await page_value(agent, "[email.value, search.value, log.map((e) => e[2])]") == [
        "me@x.org", "chairs", ["send"],
    ]  # fmt: skip
