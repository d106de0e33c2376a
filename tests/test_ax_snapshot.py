"""The snapshot is Chrome's accessibility tree, with refs: names, roles, values and states as
the browser computes them (slotted text, labels, shadow roots, a framework's patched
``childNodes``), refs that stay with their nodes and fail at once when their node is gone,
durable selectors for them, and the ``role=`` selectors the engine takes.
"""

from __future__ import annotations

import asyncio
import gc
import re
from typing import Any

import pytest

import ego
from ego.errors import (
    ElementNotFoundError,
    InvalidSelectorError,
    NoSelectorError,
    StaleRefError,
    WrongElementError,
)
from ego.page.locate import element_object, locate, resolve_ref
from tests.helpers.page_server import PageServer
from tests.helpers.real_page import real_page, ref_of
from tests.helpers.snapshot_pages import COMPONENT_LINES, COMPONENTS, STATES, TRACKER

STATE_LINES = [
    'heading "Order" [level=2]',
    'spinbutton "Quantity" [ref=e1] value="3"',
    'switch "Gift wrap" [checked] [ref=e2]',
    'checkbox "Some" [checked=mixed] [ref=e3]',
    'button "Options" [expanded] [ref=e4]',
    'button "Pay" [disabled] [ref=e5]',
    'textbox "Email" [required] [ref=e6] value="ada@example.com"',
    'combobox "Size" [ref=e7] value="M"',
    '  options: "S", "M"',
    'slider "Volume" [ref=e8] value="30"',
    'link "Help" [ref=e9] -> /help',
    "text: or",
    'link "elsewhere" [ref=e10] -> https://example.com/x',
    'textbox "Note" [readonly] [ref=e11] value="hi"',
    "generic [ref=e12]: Open card",
    "generic [ref=e13]: Row one",
    "generic [ref=e14]: Focus me",
    "text: Plain bold words",
]

#: Describes the element a function is called on.
DESCRIBE = """function () {
  return {tag: this.localName, id: this.id, text: this.textContent.trim(),
    host: this.getRootNode().host ? this.getRootNode().host.localName : null};
}"""


async def describe(page: Any, object_id: str) -> dict[str, Any]:
    answer = await page.send(
        "Runtime.callFunctionOn",
        {"functionDeclaration": DESCRIBE, "objectId": object_id, "returnByValue": True},
    )
    value: dict[str, Any] = answer["result"]["value"]
    return value


async def found_by(page: ego.Tab, selector: str) -> dict[str, Any]:
    """What ``selector`` (frame-qualified ones too) finds first, from the tab."""
    frame, css = await locate(page, selector, 0)
    object_id = await element_object(frame, css)
    assert object_id is not None, selector
    return await describe(frame, object_id)


# -- what the browser computes ----------------------------------------------------------------


async def test_slotted_labelled_and_patched_controls_are_named_as_the_browser_names_them(
    tab: ego.Tab, server: PageServer
) -> None:
    url = server.route("/ax/components", COMPONENTS)
    await tab.navigate(url)
    outline = await tab.snapshot()
    assert outline.splitlines() == [f'page "Components" {url}', *COMPONENT_LINES]

    # What an agent was told to act on is found by its words, and acts.
    found = await tab.snapshot(find="delete ACCOUNT")
    assert found.splitlines()[1:] == ['button "Delete account" [ref=e1]']
    assert await tab.selector_for("e1") == 'role=button[name="Delete account"]'
    await tab.click('role=button[name="Delete account"]')  # the shadow button's own listener
    assert await tab.evaluate("document.title") == "deleted"

    # The shadow checkbox inside the label is a control with its ref (not just the label's
    # text), and so is the field the patched component holds.
    await tab.click(await tab.selector_for("ref=e9"))
    assert "checkbox [checked] [focused] [ref=e9]" in await tab.snapshot()
    await tab.type(await tab.selector_for("e10"), "SPRING")
    assert 'textbox "Promo code" [focused] [ref=e10] value="SPRING"' in await tab.snapshot()


async def test_roles_states_values_and_what_scripts_made_controls(
    tab: ego.Tab, server: PageServer
) -> None:
    url = server.route("/ax/states", STATES)
    await tab.navigate(url)
    outline = await tab.snapshot()
    assert outline.splitlines() == [f'page "States" {url}', *STATE_LINES]
    for hidden in ("Invisible", "Gone"):
        assert hidden not in outline
    hidden_one = await tab.snapshot(selector="div[aria-hidden]")
    assert hidden_one.splitlines()[1:] == ["(nothing shown: it is empty or hidden)"]
    # A click listener's element, a pointer's and a tabbable one act by their ref.
    await tab.click(await tab.selector_for("e12"))
    assert "generic [ref=e12]: opened" in await tab.snapshot(find="opened")


# -- refs ---------------------------------------------------------------------------------


async def test_refs_stay_with_their_nodes_across_snapshots(
    tab: ego.Tab, server: PageServer
) -> None:
    await tab.navigate(server.route("/ax/stable", STATES))
    first = await tab.snapshot()
    assert await tab.snapshot() == first
    await tab.evaluate(
        "document.body.prepend(Object.assign(document.createElement('button'),"
        " {textContent: 'New first'})); 1"
    )
    second = await tab.snapshot()
    assert 'button "New first" [ref=e15]' in second.splitlines()[1]  # a new node: a new ref
    assert second.splitlines()[2:] == first.splitlines()[1:]  # the others kept theirs
    # A frame's nodes too (every snapshot of the tab shares one registry).
    frame = await tab.frame(url="/ax/stable")
    assert "[ref=e1]" in await frame.snapshot(find="Quantity")


async def test_a_ref_resolves_in_shadow_roots_and_frames_and_its_selector_finds_it_again(
    tab: ego.Tab, server: PageServer
) -> None:
    await tab.navigate(real_page(server, "ax-resolve"))
    cross_frame = await tab.frame(name="cross", timeout=10)
    await tab.frame(name="same", timeout=10)
    outline = await tab.snapshot()
    cases = {
        'button "In shadow"': ("button", "inner-btn", "my-card", 'role=button[name="In shadow"]'),
        'button "Same button"': (
            "button", "same-btn", None, 'iframe[name="same"] >> role=button[name="Same button"]'
        ),
        'button "Cross button"': (
            "button", "cross-btn", None, '#cross >> role=button[name="Cross button"]'
        ),
        'iframe "cross"': ("iframe", "cross", None, "#cross"),
        'link "Download report"': ("a", "dl", None, 'role=link[name="Download report"]'),
    }  # fmt: skip
    for line, (tag, id_, host, selector) in cases.items():
        ref = ref_of(outline, line)
        frame, object_id = await resolve_ref(tab, ref.removeprefix("ref="))
        element = await describe(frame, object_id)
        assert (element["tag"], element["id"], element["host"]) == (tag, id_, host)
        assert await tab.selector_for(ref) == selector
        assert await found_by(tab, selector) == element
    # The cross-site button resolves in its own frame's session, and the frame's own
    # selector for it needs no iframe part.
    cross_ref = ref_of(outline, 'button "Cross button"')
    frame, _ = await resolve_ref(tab, cross_ref.removeprefix("ref="))
    assert frame is cross_frame
    assert frame.session is not tab.session
    assert await cross_frame.selector_for(cross_ref) == 'role=button[name="Cross button"]'
    with pytest.raises(ElementNotFoundError, match=r"not .* nor inside it"):
        await cross_frame.selector_for(ref_of(outline, 'button "In shadow"'))
    # The selector acts: the cross-site click lands.
    await tab.click(await tab.selector_for(cross_ref))
    assert 'button "cross clicked"' in await tab.snapshot(find="clicked")
    # A closed shadow root: the browser shows its button, and its ref acts, but no selector
    # reaches it.
    sealed = ref_of(outline, 'button "Secret"').removeprefix("ref=")
    frame, object_id = await resolve_ref(tab, sealed)
    assert (await describe(frame, object_id))["text"] == "Secret"
    with pytest.raises(NoSelectorError, match="closed shadow root"):
        await tab.selector_for(sealed)
    with pytest.raises(ValueError, match="not a ref"):
        await tab.selector_for("#inner-btn")


async def test_a_ref_whose_node_is_gone_fails_at_once(tab: ego.Tab, server: PageServer) -> None:
    await tab.navigate(real_page(server, "ax-stale"))
    await tab.frame(name="cross", timeout=10)
    await tab.frame(name="same", timeout=10)
    outline = await tab.snapshot()
    removed = ref_of(outline, 'link "Download report"')
    same = ref_of(outline, 'button "Same button"')
    shadow = ref_of(outline, 'button "In shadow"')

    # Removed, though the page still holds it.
    await tab.evaluate("window.kept = document.getElementById('dl'); kept.remove(); 1")
    with pytest.raises(StaleRefError, match=r"removed from the page.*take a new snapshot"):
        await tab.selector_for(removed)
    with pytest.raises(StaleRefError):
        await resolve_ref(tab, removed.removeprefix("ref="))
    # Its frame removed.
    await tab.evaluate("document.querySelector('iframe[name=same]').remove(); 1")
    with pytest.raises(StaleRefError, match="frame that is gone"):
        await tab.snapshot(selector=same)
    # Never given.
    with pytest.raises(StaleRefError, match="not given by a snapshot"):
        await tab.snapshot(selector="ref=e999")
    # The page navigated: every ref of the old document is stale, even where the new one
    # holds the same element.
    await tab.reload()
    with pytest.raises(StaleRefError, match="navigated since the snapshot") as caught:
        await tab.selector_for(shadow)
    assert caught.value.selector == shadow
    fresh = await tab.snapshot()
    assert ref_of(fresh, 'button "In shadow"') != shadow
    await tab.selector_for(ref_of(fresh, 'button "In shadow"'))


# -- the page as a whole: frames, paging, subtrees ----------------------------------------------


async def test_cross_site_frames_are_inline_with_their_refs(
    tab: ego.Tab, server: PageServer
) -> None:
    await tab.navigate(real_page(server, "ax-frames"))
    await tab.frame(name="cross", timeout=10)
    await tab.frame(name="same", timeout=10)
    outline = await tab.snapshot()
    lines = outline.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith('iframe "cross" [ref='))
    field = ref_of(outline, "textbox", after='iframe "cross"')
    assert lines[at + 1 : at + 4] == [
        "  text: Cross-site text",
        f'  button "Cross button" [{ref_of(outline, "Cross button")}]',
        f"  textbox [{field}]",
    ]
    # The subtree of the iframe's ref is the frame; of a ref inside it, that element.
    frame = await tab.snapshot(selector=ref_of(outline, 'iframe "cross"'))
    assert frame.splitlines()[1:] == lines[at : at + 4]
    button = await tab.snapshot(selector=ref_of(outline, 'button "Cross button"'))
    assert button.splitlines()[1:] == [lines[at + 2].strip()]
    # Paged and searched across frames, with the refs kept.
    paged = [
        line
        for offset in range(0, len(lines) - 1, 5)
        for line in (await tab.snapshot(max_lines=5, offset=offset)).splitlines()[1:6]
        if not line.startswith("…")
    ]
    assert paged == lines[1:]
    found = (await tab.snapshot(find="button")).splitlines()
    assert f'  button "Cross button" [{ref_of(outline, "Cross button")}]' in found
    assert any(line.startswith('iframe "cross"') for line in found)


async def test_long_text_is_cut_on_its_line_but_found_whole(
    tab: ego.Tab, server: PageServer
) -> None:
    words = " ".join(f"word{n}" for n in range(120))
    await tab.navigate(server.route("/ax/long", f"<title>Long</title><p>{words}</p>"))
    [line] = (await tab.snapshot()).splitlines()[1:]
    assert line.endswith("…")
    assert len(line) == len("text: ") + 300
    [found] = (await tab.snapshot(find="word119")).splitlines()[1:]
    assert found == f"text: {words}"


async def test_a_page_nested_past_the_walk_says_so(tab: ego.Tab, server: PageServer) -> None:
    nested = "<ul><li>deeper " * 500 + "bottom" + "</li></ul>" * 500
    await tab.navigate(server.route("/ax/deep", f"<title>Deep</title>{nested}"))
    outline = (await tab.snapshot(max_lines=5000)).splitlines()
    assert outline[1:3] == ["list", "  listitem: deeper"]
    assert outline[-1].strip() == (
        "text: (nested deeper than a snapshot walks: take one of an element inside)"
    )
    assert "bottom" not in "\n".join(outline)


# -- role= selectors ------------------------------------------------------------------------

ROLE_PAGE = """<!doctype html><title>Roles</title>
<dialog><button onclick="document.title = 'hidden twin'">Save</button></dialog>
<button onclick="document.title = 'saved'">Save</button>
<button aria-label="Close">&times;</button>
<label for="q">Query</label><input id="q">
"""


async def test_role_selectors_find_visible_elements_by_role_and_name(
    tab: ego.Tab, server: PageServer
) -> None:
    await tab.navigate(server.route("/ax/roles", ROLE_PAGE))
    # The closed dialog's twin is hidden: the role selector finds only the visible one.
    await tab.click('role=button[name="Save"]')
    assert await tab.evaluate("document.title") == "saved"
    await tab.type('role=textbox[name="Query"]', "hello")
    assert await tab.evaluate("document.getElementById('q').value") == "hello"
    await tab.wait_for(selector='role=button[name="Close"]', timeout=5)
    await tab.wait_for(selector="role=textbox", timeout=5)
    assert await tab.selector_for(ref_of(await tab.snapshot(), "Close")) == (
        'role=button[name="Close"]'
    )
    with pytest.raises(InvalidSelectorError, match="not a valid role= selector"):
        await tab.click("role=button[name=Save]")
    await tab.click("body > button")  # CSS works as before


# -- forms, tables and landmarks, as an agent reads them ---------------------------------------


async def test_options_are_listed_under_their_select_and_tables_and_landmarks_named(
    tab: ego.Tab, server: PageServer
) -> None:
    await tab.navigate(server.route("/ax/tracker", TRACKER))
    outline = await tab.snapshot(max_lines=5000)
    lines = outline.splitlines()
    at = lines.index('  form "Filter"')
    assert [re.sub(r"e\d+", "e", line) for line in lines[at : at + 7]] == [
        '  form "Filter"',
        '    combobox "Status" [ref=e] value="Open"',
        '      options: "Open", "Closed", "Stale" [disabled]',
        '    listbox "Tags" [ref=e]',
        '      options: "ui" [selected], "api"',
        '    checkbox "Only mine" [ref=e]',
        '    button "Apply" [ref=e]',
    ]
    assert "option " not in outline  # no line, nor ref, of an option's own
    for named in (
        'banner "Site"',
        'navigation "Main"',
        'main "Work"',
        'list "Labels"',
        'search "Find"',
        'table "Issues"',
        'region "Help"',
        'complementary "Tips"',
        'dialog "Notice"',
        'contentinfo "Legal"',
    ):
        assert any(line.strip() == named for line in lines), f"{named!r} not in\n{outline}"
    # A row's name is its cells' text, which its lines say: not repeated.
    assert "    row\n" in outline


async def test_find_shows_the_row_or_list_item_of_a_match_with_what_acts_on_it(
    tab: ego.Tab, server: PageServer
) -> None:
    await tab.navigate(server.route("/ax/tracker-find", TRACKER))
    found = (await tab.snapshot(find="#23")).splitlines()[1:]
    link = ref_of("\n".join(found), 'link "#23"')
    assert found == [
        'main "Work"',
        '  table "Issues"',
        "    row",
        '      cell "#23"',
        f'        link "#23" [{link}] -> /issue/23',
        '      cell "Issue 23"',
    ]
    await tab.click(link)
    assert tab.url.endswith("/issue/23")
    await tab.back()
    item = (await tab.snapshot(find="feature")).splitlines()[1:]
    assert [re.sub(r"e\d+", "e", line) for line in item] == [
        'main "Work"',
        '  list "Labels"',
        "    listitem: feature",
        '      button "Drop feature" [ref=e]',
    ]


async def test_a_ref_of_the_wrong_kind_fails_at_once_naming_the_call_to_make(
    tab: ego.Tab, server: PageServer
) -> None:
    await tab.navigate(server.route("/ax/wrong-kind", TRACKER))
    outline = await tab.snapshot(max_lines=5000)
    link = ref_of(outline, 'link "#2"')
    with pytest.raises(WrongElementError) as caught:
        await tab.select(link, "Open")
    assert str(caught.value) == (
        f"'{link}' is a link (<a>), not a <select>: tab.select() takes a <select> (its ref or "
        "a selector for it); a dropdown built of other elements is clicked instead"
    )
    # An option (by a selector, or by a ref of its node) is chosen through its select, whose
    # ref the error names: before any wait for the option, which never shows, to be visible.
    status = ref_of(outline, 'combobox "Status"')
    option = "form select option:nth-of-type(2)"
    with pytest.raises(WrongElementError) as caught:
        await tab.select(option, "Closed")
    assert caught.value.owner == status
    assert str(caught.value) == (
        f"'{option}' is an option (\"Closed\") of the <select> '{status}', not the <select> "
        f"itself: choose it by calling tab.select('{status}', 'Closed')"
    )
    held = await tab.send("Runtime.evaluate", {"expression": f"document.querySelector({option!r})"})
    node = await tab.send("DOM.describeNode", {"objectId": held["result"]["objectId"]})
    option_ref = f"ref={tab.refs.ref_for(tab, node['node']['backendNodeId'])}"
    with pytest.raises(WrongElementError, match=f"of the <select> '{status}'"):
        await tab.select(option_ref, "Closed")
    assert await tab.select(status, "Closed") == ["Closed"]


#: A page of many rows, each with what the snapshot reads beyond the tree: text and inline
#: elements in a block, a listener, a pointer cursor, a tabindex, a draggable element, a
#: select and a frame.
LARGE = "<!doctype html><title>Large</title>" + "".join(
    f"<div><span>Row {n}</span> <b>bold</b> words <button>Buy {n}</button>"
    f'<select aria-label="Size {n}"><option>S</option><option>M</option></select>'
    f'<span tabindex="0">Tab {n}</span><div style="cursor: pointer"><span>Card {n}</span>'
    f"</div><div onclick=\"this.textContent = 'done'\">Click {n}</div>"
    f'<span draggable="true">Drag {n}</span>'
    + ('<iframe name="inner" srcdoc="<button>In frame</button>"></iframe>' if n == 3 else "")
    + "</div>"
    for n in range(300)
)


async def test_a_large_page_is_read_only_as_far_as_the_lines_shown(
    tab: ego.Tab, server: PageServer
) -> None:
    await tab.navigate(server.route("/ax/large", LARGE))
    await tab.frame(name="inner", timeout=10)
    whole = (await tab.snapshot(max_lines=100_000)).splitlines()
    assert len(whole) == 1 + 300 * 8 + 2  # the header, 8 lines a row, the frame's two
    first = (await tab.snapshot()).splitlines()
    # The first 400 lines, as the whole page's, and no count of the rest (never read).
    assert first[1:401] == whole[1:401]
    assert first[401] == "… lines 1-400 of more: snapshot(offset=400) shows the next"
    assert first[25:35] == [
        "text: Row 3 bold words",
        'button "Buy 3" [ref=e19]',
        'combobox "Size 3" [ref=e20] value="S"',
        '  options: "S", "M"',
        "generic [ref=e21]: Tab 3",
        "generic [ref=e22]: Card 3",
        "generic [ref=e23]: Click 3",
        "generic [ref=e24]: Drag 3",
        'iframe "inner" [ref=e25]',
        '  button "In frame" [ref=e26]',
    ]
    later = (await tab.snapshot(offset=1200, max_lines=300)).splitlines()
    assert later[1:301] == whole[1201:1501]
    await tab.click("ref=e23")
    assert (await tab.snapshot(max_lines=40)).splitlines()[31] == "generic [ref=e23]: done"


#: Displays, each with whether it lays its element out as a block (its text on its own line).
DISPLAYS = {
    "block": True, "flex": True, "grid": True, "table-cell": True, "flow-root": True,
    "-webkit-box": True, "block ruby": True, "inline": False, "inline-block": False,
    "inline-flex": False, "inline-grid": False, "contents": False, "ruby": False,
}  # fmt: skip
DISPLAYED = (
    "<!doctype html><title>Displays</title>"
    + "".join(
        f'<div>before {n} <span style="display: {display}">inside {n}</span> after {n}</div>'
        for n, display in enumerate(DISPLAYS)
    )
    + "<div><span>filler</span></div>" * 1000
)


async def test_what_a_display_lays_out_as_a_block_is_read_alike_in_part_and_whole(
    tab: ego.Tab, server: PageServer
) -> None:
    await tab.navigate(server.route("/ax/displays", DISPLAYED))
    expected: list[str] = []
    for n, block in enumerate(DISPLAYS.values()):
        if block:
            expected += [f"text: before {n}", f"text: inside {n}", f"text: after {n}"]
        else:
            expected.append(f"text: before {n} inside {n} after {n}")
    whole = (await tab.snapshot(max_lines=100_000)).splitlines()
    in_part = (await tab.snapshot(max_lines=60)).splitlines()  # 2,000 elements: read in part
    assert in_part[-1].startswith("… lines 1-60 of more")
    assert whole[1 : 1 + len(expected)] == expected
    assert in_part[1 : 1 + len(expected)] == expected


async def test_the_collector_is_paused_while_the_tree_is_read_and_runs_again_after(
    tab: ego.Tab, server: PageServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Paused from the request of the whole tree to its lines (the answer's containers are
    # never walked), and running again after a snapshot, also one cancelled midway.
    await tab.navigate(server.route("/ax/collector", STATES))
    asked = asyncio.Event()
    answer = asyncio.Event()
    paused: list[bool] = []
    frame = tab.main_frame
    send = frame.send

    async def held(method: str, params: dict[str, Any] | None = None, **more: Any) -> Any:
        if method == "Accessibility.getFullAXTree":
            paused.append(not gc.isenabled())
            asked.set()
            await answer.wait()
        return await send(method, params, **more)

    monkeypatch.setattr(frame, "send", held)
    reading = asyncio.ensure_future(tab.snapshot())
    await asyncio.wait_for(asked.wait(), 10)
    reading.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reading
    assert paused == [True]
    assert gc.isenabled()
    answer.set()
    assert "[ref=" in await tab.snapshot()
    assert paused == [True, True]
    assert gc.isenabled()
