"""Replies that say what an action did, so that an agent needs no snapshot after each one.

The note compared without a browser (lines come and gone in a page, what came first, a modal
dialog's lines with the page behind it counted, a new page less the top and bottom it shares
with the one before, the bounds), then through the MCP SDK's client on a real page: a click
that navigates, one that opens a page dialog, one that opens a modal ``<dialog>``, one that
changes text, one that changes nothing, typing, a change too long to show whole, and
``diff: false``.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import pytest

from ego.mcp.changes import MAX_LINES, MAX_NEW_LINES, Seen, changes, note_lines
from tests.helpers.mcp_client import McpClient, serving, text_of, value_of
from tests.helpers.page_server import PageServer


def seen(
    lines: list[str],
    *,
    documents: int = 1,
    url: str = "http://a.test/",
    focused: str | None = None,
    inert: int = 0,
    behind: list[str] | None = None,
) -> Seen:
    kept = tuple(behind) if behind is not None else None
    return Seen(documents, url, "A", tuple(lines), focused, inert=inert, behind=kept)


def test_a_change_in_the_page_is_its_lines_come_and_gone() -> None:
    before = seen(["banner", '  link "Cart (0)" [ref=e5] -> /cart', "main", "  text: before"])
    after = seen(["banner", '  link "Cart (1)" [ref=e5] -> /cart', "main", "  text: before"])
    note = changes(before, after)
    assert note == {
        "lines": ['+ link "Cart (1)" [ref=e5] -> /cart', '- link "Cart (0)" [ref=e5] -> /cart']
    }
    assert changes(before, before) == {}
    assert note_lines({}) == ["(no change seen on the page)"]


def test_what_came_is_said_before_what_went_each_run_keeping_its_nesting() -> None:
    page = [f"text: paragraph {n}" for n in range(40)]
    before = seen(["main", *(f"  {line}" for line in page)])
    after = seen(["main", "  list", "    listitem: new", *(f"  {line}" for line in page[35:])])
    lines = changes(before, after)["lines"]
    assert lines[:2] == ["+ list", "+   listitem: new"]  # what came, before the 35 that went
    assert lines[2:] == [f"- {line}" for line in page[:28]]


def test_a_modal_dialog_is_its_lines_and_the_page_behind_it_is_counted() -> None:
    page = ["main", *(f"  text: line {n}" for n in range(40)), '  button "Open" [ref=e1]']
    dialog = ["dialog [modal]", '  heading "Confirm" [level=2]', '  button "Close" [ref=e2]']
    opened = changes(seen(page), seen(dialog, inert=1, focused='button "Close" [ref=e2]'))
    assert opened == {
        "lines": [f"+ {dialog[0]}", f"+ {dialog[1]}", f"+ {dialog[2]}"],
        "behind": 42,
    }
    assert note_lines(opened)[-1] == "(42 lines of the page behind it are inert)"
    # Closed, with a line of the page changed meanwhile: compared with the page before it.
    after = [*page[:-1], "  text: confirmed", page[-1]]
    closed = changes(seen(dialog, inert=1, behind=page), seen(after))
    assert closed["lines"] == [
        "+ text: confirmed",
        "- dialog [modal]",
        '-   heading "Confirm" [level=2]',
        '-   button "Close" [ref=e2]',
    ]


def test_a_moved_focus_is_said_once() -> None:
    box = 'searchbox "Search" [ref=e2]'
    before = seen([box])
    typed = seen([f'{box} value="desk"'], focused=f'{box} value="desk"')
    assert changes(before, typed) == {"lines": [f'+ {box} value="desk"', f"- {box}"]}
    moved = seen([box, 'button "Go" [ref=e3]'], focused='button "Go" [ref=e3]')
    assert changes(seen([box, 'button "Go" [ref=e3]']), moved) == {
        "focused": 'button "Go" [ref=e3]'
    }


def test_a_new_page_is_listed_less_what_it_shares_with_the_page_before() -> None:
    header = ["banner", '  searchbox "Search" [ref=e{}] value="{}"', '  link "Cart" [ref=e{}]']
    footer = ["contentinfo: nothing here is real"]

    def page(refs: int, typed: str, middle: list[str], documents: int) -> Seen:
        top = [header[0], header[1].format(refs, typed), header[2].format(refs + 1)]
        return seen(top + middle + footer, documents=documents, url=f"http://a.test/{documents}")

    before = page(1, "", ["main", '  heading "All"', '  link "Desk clock" [ref=e3]'], 1)
    after = page(7, "desk", ["main", '  heading "2 results"', '  link "Desk mat" [ref=e9]'], 2)
    note = changes(before, after)
    assert note["new_page"] is True
    assert note["url"] == "http://a.test/2"
    # The header (a typed value and new refs aside), "main" and the footer read as before.
    assert note["lines"] == ['heading "2 results"', 'link "Desk mat" [ref=e9]']
    assert note["same_as_before"] == 5
    text = note_lines(note)
    assert text[0] == "new page http://a.test/2:"
    assert text[-1].startswith("(left out: 5 lines as on the page before, with new refs")
    # The same page again (a reload) is listed from its top: its refs are all new.
    again = page(11, "", ["main", '  heading "All"', '  link "Desk clock" [ref=e13]'], 2)
    reloaded = changes(before, Seen(2, before.url, "A", again.lines, None))
    assert "same_as_before" not in reloaded
    assert reloaded["lines"][:2] == ["banner", '  searchbox "Search" [ref=e11] value=""']


def test_a_note_is_bounded_and_says_what_it_left_out() -> None:
    many = [f"listitem: item {n}" for n in range(200)]
    note = changes(seen(["list"]), seen(["list", *many]))
    assert len(note["lines"]) == MAX_LINES
    assert note["more"] == 200 - MAX_LINES
    fresh = changes(None, seen(many, documents=2))
    assert len(fresh["lines"]) == MAX_NEW_LINES
    assert fresh["more"] == 200 - MAX_NEW_LINES


# -- through MCP, on a real page ----------------------------------------------------------------

PAGE_A = """<!doctype html><title>Page A</title>
<h1>Page A</h1>
<a id="go" href="/changes/b">to B</a>
<button id="ask" onclick="alert('hello')">Ask</button>
<button id="swap" onclick="document.getElementById('msg').textContent = 'after'">Swap</button>
<button id="count" onclick="document.getElementById('n').textContent = ++window.n">Count</button>
<button id="many" onclick="for (let i = 0; i < 80; i++) {
  const li = document.createElement('li'); li.textContent = 'row ' + i; rows.append(li); }">
  Many</button>
<input id="field" aria-label="Field">
<p id="msg">before</p>
<p>clicks: <span id="n">0</span></p>
<p id="plain">just text</p>
<ul id="rows"></ul>
<script>window.n = 0</script>
"""
PAGE_B = "<!doctype html><title>Page B</title><h1>Page B</h1><p>only on B</p>"


@pytest.fixture(scope="module")
async def agent(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[McpClient]:
    async with serving(tmp_path_factory.mktemp("mcp-changes")) as client:
        yield client


async def open_a(agent: McpClient, server: PageServer) -> None:
    server.route("/changes/b", PAGE_B)
    opened = value_of(await agent.call("navigate", {"url": server.route("/changes/a", PAGE_A)}))
    assert opened["title"] == "Page A"
    # The reply lists the new page's first lines, with refs to act on.
    assert opened["changes"]["new_page"] is True
    assert any('button "Ask"' in line for line in opened["changes"]["lines"])


@pytest.mark.chrome
async def test_a_click_that_navigates_lists_the_new_page(
    agent: McpClient, server: PageServer
) -> None:
    await open_a(agent, server)
    clicked = await agent.call("click", {"selector": "#go"})
    note = value_of(clicked)["changes"]
    assert note["new_page"] is True
    assert note["url"] == server.url("/changes/b")
    assert note["title"] == "Page B"
    assert 'heading "Page B" [level=1]' in note["lines"]
    assert "text: only on B" in note["lines"]
    text = text_of(clicked)
    assert text.splitlines()[0] == '{"clicked":"#go"}'
    assert text.splitlines()[1] == f'new page {server.url("/changes/b")} "Page B":'
    back = value_of(await agent.call("navigate_back"))
    assert back["title"] == "Page A"
    assert back["changes"]["new_page"] is True
    assert any('link "to B"' in line for line in back["changes"]["lines"])


@pytest.mark.chrome
async def test_a_click_that_opens_a_dialog_says_so(agent: McpClient, server: PageServer) -> None:
    await open_a(agent, server)
    asked = value_of(await agent.call("click", {"selector": "#ask"}))
    assert asked["dialog"]["message"] == "hello"
    assert "handle_dialog" in asked["next"]
    assert "changes" not in asked  # the page runs nothing until the dialog is answered
    await agent.call("handle_dialog", {"accept": True})


@pytest.mark.chrome
async def test_a_click_that_changes_text_and_one_that_changes_nothing(
    agent: McpClient, server: PageServer
) -> None:
    await open_a(agent, server)
    swapped = value_of(await agent.call("click", {"selector": "#swap"}))
    assert swapped["changes"]["lines"] == ["+ text: after", "- text: before"]
    nothing = await agent.call("click", {"selector": "#plain"})
    assert value_of(nothing)["changes"] == {}
    assert text_of(nothing).splitlines() == [
        '{"clicked":"#plain"}',
        "(no change seen on the page)",
    ]
    # diff: false reads nothing more: the reply is what it was before notes.
    counted = await agent.call("click", {"selector": "#count", "diff": False})
    assert value_of(counted) == {"clicked": "#count"}
    assert text_of(counted) == '{"clicked":"#count"}'
    # The next note is against the page just before its own click, not the one read before
    # the unwatched click.
    again = value_of(await agent.call("click", {"selector": "#count"}))
    assert again["changes"]["lines"] == ["+ text: clicks: 2", "- text: clicks: 1"]


@pytest.mark.chrome
async def test_typing_and_a_long_change(agent: McpClient, server: PageServer) -> None:
    await open_a(agent, server)
    typed = value_of(await agent.call("type", {"selector": "#field", "text": "abc"}))
    [came, gone] = typed["changes"]["lines"]
    assert gone.startswith('- textbox "Field" [ref=')
    assert came == gone.replace("- ", "+ ", 1) + ' value="abc"'
    many = await agent.call("click", {"selector": "#many"})
    note = value_of(many)["changes"]
    assert len(note["lines"]) == MAX_LINES
    assert note["more"] == 80 - MAX_LINES  # the 80 rows (the empty list had its line)
    assert f"(left out: {80 - MAX_LINES} more lines" in text_of(many)


MODAL = (
    "<!doctype html><title>Modal</title>"
    + "".join(f"<p>paragraph {n}</p>" for n in range(40))
    + '<button id="open" onclick="d.showModal()">Open</button>'
    + '<dialog id="d"><h2>Confirm</h2><button id="close" onclick="d.close(); '
    + "document.getElementById('last').textContent = 'confirmed'\">Confirm close</button>"
    + '</dialog><p id="last">not yet</p>'
)


@pytest.mark.chrome
async def test_a_modal_dialog_is_shown_as_its_lines_and_closing_it_as_what_it_did(
    agent: McpClient, server: PageServer
) -> None:
    value_of(await agent.call("navigate", {"url": server.route("/changes/modal", MODAL)}))
    opened = await agent.call("click", {"selector": "#open"})
    note = value_of(opened)["changes"]
    assert note["lines"][:3] == [
        "+ dialog [modal]",
        '+   heading "Confirm" [level=2]',
        note["lines"][2],
    ]
    assert note["lines"][2].startswith('+   button "Confirm close" [ref=')
    assert note["behind"] == 42  # 40 paragraphs, the button and the last line, out of reach
    assert "focused" not in note  # the dialog's button has the focus: its line says so
    assert text_of(opened).splitlines()[1] == "+ dialog [modal]"
    closed = value_of(await agent.call("click", {"selector": "#close"}))["changes"]
    # What the dialog did to the page, and the dialog's lines that went: not 42 lines back.
    assert closed["lines"][:2] == ["+ text: confirmed", "- dialog [modal]"]
    assert "- text: not yet" in closed["lines"]
    assert len(closed["lines"]) == 5


SELECTS = """<!doctype html><title>Selects</title>
<label>Priority <select id="prio"><option>High</option><option>Medium</option>
<option>Low</option></select></label>
<a id="link" href="#top">Top</a>
"""


@pytest.mark.chrome
async def test_an_action_without_a_note_leaves_no_stale_page_to_compare_with(
    agent: McpClient, server: PageServer
) -> None:
    value_of(await agent.call("navigate", {"url": server.route("/changes/selects", SELECTS)}))
    choose = {"selector": "#prio"}
    high = value_of(await agent.call("select_option", {**choose, "values": ["High"]}))
    assert "lines" not in high["changes"]  # it held High already: only the focus moved
    assert high["changes"]["focused"].startswith('combobox "Priority" [ref=')
    low = value_of(await agent.call("select_option", {**choose, "values": ["Low"], "diff": False}))
    assert "changes" not in low
    again = value_of(await agent.call("select_option", {**choose, "values": ["High"]}))
    [came, went] = again["changes"]["lines"]
    assert came.startswith('+ combobox "Priority" [ref=')
    assert came.endswith('value="High"')
    assert went == came.replace("+ ", "- ", 1).replace('value="High"', 'value="Low"')


ASKING = """<!doctype html><title>Asking</title>
<button id="ask" onclick="if (confirm('sure?')) state.textContent = 'yes'">Ask</button>
<button id="reset" onclick="state.textContent = 'no'">Reset</button>
<p id="state">no</p>
"""


@pytest.mark.chrome
async def test_a_dialog_answered_leaves_no_stale_page_to_compare_with(
    agent: McpClient, server: PageServer
) -> None:
    value_of(await agent.call("navigate", {"url": server.route("/changes/asking", ASKING)}))
    asked = value_of(await agent.call("click", {"selector": "#ask"}))
    assert "changes" not in asked  # the page waits for the answer
    await agent.call("handle_dialog", {"accept": True})
    reset = value_of(await agent.call("click", {"selector": "#reset"}))
    assert reset["changes"]["lines"] == ["+ text: no", "- text: yes"]


LATE = """<!doctype html><title>Late</title>
<button id="late" onclick="setTimeout(() => { msg.textContent = 'later'; }, 80)">Late</button>
<p id="msg">before</p>
"""


@pytest.mark.chrome
async def test_a_page_that_changes_while_it_settles_is_read_again(
    agent: McpClient, server: PageServer
) -> None:
    value_of(await agent.call("navigate", {"url": server.route("/changes/late", LATE)}))
    # The page is read while the click settles; the change 80 ms after the click comes after
    # that read, and the note is the page as it settled.
    clicked = value_of(await agent.call("click", {"selector": "#late"}))
    assert "+ text: later" in clicked["changes"]["lines"]
    assert "- text: before" in clicked["changes"]["lines"]


@pytest.mark.chrome
async def test_a_navigation_after_an_action_without_a_note_lists_the_page_it_shows(
    agent: McpClient, server: PageServer
) -> None:
    await open_a(agent, server)
    value_of(await agent.call("click", {"selector": "#count", "diff": False}))
    # Nothing is read before it (the last snapshot was dropped): the new page is listed.
    went = value_of(await agent.call("navigate", {"url": server.url("/changes/b")}))
    assert went["changes"]["new_page"] is True
    assert 'heading "Page B" [level=1]' in went["changes"]["lines"]
    value_of(await agent.call("click", {"selector": "h1", "diff": False}))
    # The same document at another fragment is no new page, though nothing was known.
    moved = value_of(await agent.call("navigate", {"url": server.url("/changes/b#end")}))
    assert "new_page" not in moved["changes"]
    assert moved["changes"]["listed"] is True
    assert "text: only on B" in moved["changes"]["lines"]


#: A 200-row table whose top button changes the last row's cell and, with no event, ticks a
#: box below the table (a property no attribute reflects).
FAR = (
    "<!doctype html><title>Far</title>"
    '<button id="far" onclick="last.textContent = \'Closed\'; done.checked = true">Close</button>'
    "<table><tbody>"
    + "".join(f"<tr><td>#{n}</td><td>Open</td></tr>" for n in range(1, 200))
    + '<tr><td>#200</td><td id="last">Open</td></tr></tbody></table>'
    '<label><input type="checkbox" id="done"> Done</label>'
)


@pytest.mark.chrome
async def test_a_change_far_from_the_element_acted_on_is_seen(
    agent: McpClient, server: PageServer
) -> None:
    url = server.route("/changes/far", FAR)
    opened = value_of(await agent.call("navigate", {"url": url}))
    assert opened["changes"]["more"] > 0  # the page is longer than a new page's note shows
    closed = value_of(await agent.call("click", {"selector": "#far"}))["changes"]
    # A run of changed lines keeps its nesting: the last row's cell sits under the table.
    lines = [(line[0], re.sub(r"ref=e\d+", "ref", line[1:].strip())) for line in closed["lines"]]
    assert lines == [
        ("+", 'cell "Closed"'),
        ("+", 'checkbox "Done" [checked] [ref]'),
        ("-", 'cell "Open"'),
        ("-", 'checkbox "Done" [ref]'),
    ]
    # The same page again (a reload): listed from its top, its address said by the answer.
    again = value_of(await agent.call("navigate", {"url": url}))
    assert again["url"] == url
    assert again["changes"]["new_page"] is True
    assert again["changes"]["lines"][0].startswith('button "Close"')
