"""The pointer as a person uses it, on small pages the test server serves: a double click
opens an item's editor (``dblclick`` with ``detail`` 2), a right click its context menu, a
middle click ``auxclick``, a shift-click holds Shift, a click lands at a position on the
element; the mouse pans a surface by hand; ``drag_to`` moves a card between lists by HTML5
drag and drop (in a cross-site frame too) and reorders a list that listens to pointer events
only; the wheel scrolls what is under the pointer; ``scroll`` reaches a row of a virtualized
list in one call, by pixels and to an edge; ``scroll_into_view`` brings an element in.

Nothing sleeps to synchronise: each test waits on the verb under test or reads the page.
"""

from __future__ import annotations

import pytest

import ego
from ego.errors import ElementNotFoundError, InvalidSelectorError
from tests.helpers.hands_pages import CLICKS, KANBAN, PANNING, RECORD, SORTABLE, VIRTUAL
from tests.helpers.page_server import PageServer

pytestmark = pytest.mark.chrome


async def serve(tab: ego.Tab, server: PageServer, path: str, body: str) -> None:
    await tab.navigate(server.route(path, f"<!doctype html><title>hands</title>{RECORD}{body}"))


async def log(tab: ego.Tab) -> list[list[object]]:
    entries = await tab.evaluate("log.splice(0)")
    assert isinstance(entries, list)
    return entries


# -- clicks of every kind -----------------------------------------------------------------------


async def test_a_double_click_opens_the_editor_with_the_events_a_person_makes(
    tab: ego.Tab, server: PageServer
) -> None:
    await serve(tab, server, "/hands/clicks", CLICKS)
    await tab.dblclick("text=Buy milk")
    assert await tab.evaluate("document.activeElement.id") == "edit"
    # [event, trusted, button, detail, shift, control]: two clicks, the second with
    # detail 2, then dblclick, as Chrome makes them for a person.
    assert await log(tab) == [
        ["mousedown", True, 0, 1, False, False],
        ["mouseup", True, 0, 1, False, False],
        ["click", True, 0, 1, False, False],
        ["mousedown", True, 0, 2, False, False],
        ["mouseup", True, 0, 2, False, False],
        ["click", True, 0, 2, False, False],
        ["dblclick", True, 0, 2, False, False],
    ]
    await tab.keyboard.press("End")
    await tab.keyboard.type(" and eggs")
    assert await tab.evaluate("edit.value") == "Buy milk and eggs"


async def test_right_middle_modified_triple_and_positioned_clicks(
    tab: ego.Tab, server: PageServer
) -> None:
    await serve(tab, server, "/hands/clicks-kinds", CLICKS)
    await tab.click("#file", button="right")
    entries = await log(tab)
    assert [e[0] for e in entries] == ["mousedown", "contextmenu", "mouseup", "auxclick"]
    assert all(e[2] == 2 for e in entries)
    await tab.click('role=menuitem[name="Rename"]')  # the menu the right click opened
    assert await log(tab) == [["rename", True]]

    await tab.click("#file", button="middle")
    assert [(e[0], e[2]) for e in await log(tab)] == [
        ("mousedown", 1), ("mouseup", 1), ("auxclick", 1),
    ]  # fmt: skip

    await tab.click("#file", modifiers=["Shift"])
    entries = await log(tab)
    assert entries[0] == ["keydown", True, "Shift"]  # held down before, as a person does
    assert ["click", True, 0, 1, True, False] in entries

    await tab.click("#file", modifiers=["ControlOrMeta"])
    assert ["click", True, 0, 1, False, True] in await log(tab)  # Control, off macOS

    await tab.click("#file", click_count=3, delay=0.01)
    assert [e[3] for e in await log(tab) if e[0] == "click"] == [1, 2, 3]

    await tab.click("#pad", position={"x": 15, "y": 25})
    assert await log(tab) == [["pad", True, 15, 25]]
    with pytest.raises(ValueError, match="button='back' is no mouse button"):
        await tab.click("#pad", button="back")
    with pytest.raises(ValueError, match="modifiers holds 'Hyper'"):
        await tab.click("#pad", modifiers=["Hyper"])
    with pytest.raises(ValueError, match="position="):
        await tab.click("#pad", position={"x": 1})


# -- the mouse by hand, and drags -----------------------------------------------------------


async def test_the_mouse_pans_a_surface_and_drag_to_pans_it_too(
    tab: ego.Tab, server: PageServer
) -> None:
    await serve(tab, server, "/hands/panning", PANNING)
    box = await tab.evaluate("[map.getBoundingClientRect().x, map.getBoundingClientRect().y]")
    x, y = box[0] + 150, box[1] + 100
    await tab.mouse.move(x, y)
    await tab.mouse.down()
    await tab.mouse.move(x + 60, y + 30, steps=4)
    await tab.mouse.up()
    assert await tab.evaluate("panned()") == [60, 30]
    assert tab.mouse.position == (x + 60, y + 30)
    # The same gesture from element to element, at points on them.
    await tab.drag_to(
        "#map", "#map", source_position={"x": 100, "y": 100}, target_position={"x": 80, "y": 150}
    )
    assert await tab.evaluate("panned()") == [40, 80]
    assert tab.input_state.buttons == []


async def test_drag_to_moves_a_card_between_lists_by_html5_drag_and_drop(
    tab: ego.Tab, server: PageServer
) -> None:
    await serve(tab, server, "/hands/kanban", KANBAN)
    await tab.drag_to("text=Card A", "#done")
    assert await tab.evaluate("order()") == [["todo", ["card-b"]], ["done", ["card-a"]]]
    # The page's own dataTransfer carried the card, and the source heard how it ended.
    assert await log(tab) == [
        ["dragstart", True, "card-a"],
        ["drop", True, "card-a", "done"],
        ["dragend", True, "move"],
    ]
    await tab.click("#card-b")  # the mouse is free again after the drop
    await tab.drag_to("#done >> text=Card A", "#todo", steps=1)
    assert await tab.evaluate("order()") == [["todo", ["card-b", "card-a"]], ["done", []]]


async def test_drag_to_in_a_cross_site_frame(tab: ego.Tab, server: PageServer) -> None:
    inner = server.route("/hands/kanban-inner", f"<!doctype html>{RECORD}{KANBAN}")
    cross = inner.replace("127.0.0.1", "localhost")
    await serve(
        tab, server, "/hands/kanban-outer",
        f'<p style="height: 150px">board below</p><iframe id=board src="{cross}" '
        'style="width: 600px; height: 400px"></iframe>',
    )  # fmt: skip
    await tab.drag_to("#board >> text=Card B", "#board >> #done")
    frame = await tab.frame(selector="#board")
    assert await frame.evaluate("order()") == [["todo", ["card-a"]], ["done", ["card-b"]]]
    # A frame's mouse and keyboard are the tab's, in the tab's coordinates.
    assert frame.mouse.position == tab.mouse.position
    assert tab.mouse.position[1] > 150  # below the paragraph above the frame
    await frame.drag_to("text=Card A", "#done")
    assert await frame.evaluate("order()") == [["todo", []], ["done", ["card-b", "card-a"]]]


#: Where the frame's own handlers saw each double click, right click and wheel turn (before
#: the page's own handlers change what is under it): the nearest element with an id, and
#: the point in the frame's viewport.
AT = """<script>
for (const type of ['dblclick', 'contextmenu', 'wheel']) document.addEventListener(type, (e) => {
  log.push(['at', type, e.target.closest('[id]').id, e.clientX, e.clientY]);
}, true);
</script>"""

#: The content box of the iframe #inner in the tab's viewport.
_CONTENT_BOX = """(() => {
  const r = inner.getBoundingClientRect();
  return [r.left + inner.clientLeft, r.top + inner.clientTop];
})()"""


async def test_clicks_scrolls_and_the_wheel_in_a_cross_site_frame(
    tab: ego.Tab, server: PageServer
) -> None:
    inner = server.route("/hands/frame-inner", f"<!doctype html>{RECORD}{AT}{CLICKS}{VIRTUAL}")
    cross = inner.replace("127.0.0.1", "localhost")
    await serve(
        tab, server, "/hands/frame-outer",
        f'<p style="height: 100px">frame below</p><iframe id=inner src="{cross}" '
        'style="width: 500px; height: 480px"></iframe>',
    )  # fmt: skip
    frame = await tab.frame(selector="#inner")

    async def seen(kind: str) -> tuple[str, float, float]:
        """The element the frame saw the last ``kind`` on and the point, checked to be where
        the tab's mouse is: the frame's point plus its box's corner in the tab."""
        left, top = await tab.evaluate(_CONTENT_BOX)
        entries = [e for e in await frame.evaluate("log") if e[:2] == ["at", kind]]
        _, _, where, x, y = entries[-1]
        assert abs(tab.mouse.position[0] - (left + x)) < 1, (kind, entries[-1], left)
        assert abs(tab.mouse.position[1] - (top + y)) < 1, (kind, entries[-1], top)
        return where, x, y

    await frame.dblclick("text=Buy milk")
    assert await frame.evaluate("document.activeElement.id") == "edit"
    assert (await seen("dblclick"))[0] == "todo"
    assert tab.mouse.position[1] > 100  # the tab's coordinates: below the paragraph

    await frame.click("#file", button="right")
    where, x, _ = await seen("contextmenu")
    assert where == "file"
    # The page's menu opened where the frame saw the press.
    assert await frame.evaluate("[getComputedStyle(menu).display, menu.style.left]") == [
        "block", f"{x}px",
    ]  # fmt: skip

    scrolled = await frame.scroll("#rows", dy=300)
    assert (scrolled.scrolled, scrolled.y) == ("<div id=rows>", 300)
    assert await frame.evaluate("rows.querySelector('.row').textContent") == "Row 11"

    await frame.hover("#rows")
    page_at = await frame.evaluate("scrollY")
    await frame.mouse.wheel(0, 120)
    assert (await seen("wheel"))[0] == "rows"
    await frame.wait_for(function="rows.scrollTop === 420", timeout=5)  # the scroll, a frame on
    assert await frame.evaluate("scrollY") == page_at  # the list took it, not its page


async def test_drag_to_reorders_a_list_that_listens_to_pointer_events(
    tab: ego.Tab, server: PageServer
) -> None:
    await serve(tab, server, "/hands/sortable", SORTABLE)
    await tab.drag_to("text=One", "text=Four")
    assert await tab.evaluate("order()") == ["Two", "Three", "One", "Four"]
    entries = await log(tab)
    assert entries[0][:2] == ["sorted", True]
    assert entries[0][2] >= 4  # several moves with the button down, not a jump
    with pytest.raises(ElementNotFoundError, match="no element matches 'text=Five'"):
        await tab.drag_to("text=One", "text=Five", wait=0.3)
    assert tab.input_state.buttons == []  # a failed drag leaves nothing pressed
    with pytest.raises(ValueError, match="steps=0"):
        await tab.drag_to("text=One", "text=Two", steps=0)


# -- the wheel and scrolling ----------------------------------------------------------------


async def test_scroll_reaches_a_row_of_a_virtualized_list_in_one_call(
    tab: ego.Tab, server: PageServer
) -> None:
    await serve(tab, server, "/hands/virtual", VIRTUAL)
    assert await tab.evaluate("document.querySelectorAll('.row').length") < 20
    position = await tab.scroll("#rows", until='text="Row 250"')
    assert position.scrolled == "<div id=rows>"
    assert position.found == '<div class=row> "Row 250"'
    await tab.click('text="Row 250"', wait=0)  # there now: no retry needed
    assert await log(tab) == [["row", True, "Row 250"]]

    by = await tab.scroll("#rows", dy=-300)
    assert by.y == position.y - 300
    end = await tab.scroll("#rows", to="bottom")
    assert (end.y, end.max_y) == (29700, 29700)
    assert await tab.evaluate("document.querySelector('.row:last-child').textContent") == "Row 1000"
    with pytest.raises(ElementNotFoundError, match="as far as it goes"):
        await tab.scroll("#rows", until='text="Row 1001"')
    # An element inside a scroller scrolls that scroller; one around it, what it holds.
    assert (await tab.scroll('text="Row 1000"', to="top")).y == 0
    assert (await tab.scroll("#panel", dy=60)).scrolled == "<div id=rows>"
    page = await tab.scroll(to="end")
    assert page.scrolled == "the page"
    assert page.y == page.max_y > 0
    with pytest.raises(ValueError, match="one of"):
        await tab.scroll("#rows", dy=10, to="top")
    with pytest.raises(InvalidSelectorError):
        await tab.scroll("#rows", until="text=")


async def test_the_wheel_scrolls_what_is_under_the_pointer_and_scroll_into_view(
    tab: ego.Tab, server: PageServer
) -> None:
    await serve(tab, server, "/hands/wheel", VIRTUAL)
    await tab.hover("#rows")
    await tab.mouse.wheel(0, 450)
    assert await log(tab) == [["wheel", True, 450]]  # its handlers ran before it returned
    await tab.wait_for(function="rows.scrollTop === 450", timeout=5)  # the scroll, a frame on
    assert await tab.evaluate("scrollY") == 0  # the page stayed: the list took it

    await tab.scroll_into_view("#far")
    top, bottom, height = await tab.evaluate(
        "[far.getBoundingClientRect().top, far.getBoundingClientRect().bottom, innerHeight]"
    )
    assert top >= 0
    assert bottom <= height
