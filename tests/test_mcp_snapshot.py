"""``take_snapshot`` and ``selector_for`` through the MCP SDK's client, as an agent uses them:
the accessibility tree with refs, a subtree by ref, a durable selector that acts, options
under their select, named tables, ``find`` showing a match's row, and a stale ref or a ref
of the wrong kind refused in MCP words.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import pytest
from mcp.types import CallToolResult

from tests.helpers.mcp_client import McpClient, serving, text_of, value_of
from tests.helpers.page_server import PageServer
from tests.helpers.real_page import real_page, ref_of
from tests.helpers.snapshot_pages import COMPONENT_LINES, COMPONENTS, TRACKER

pytestmark = pytest.mark.chrome  # the MCP server under test launches Chrome


@pytest.fixture(scope="module")
async def agent(
    tmp_path_factory: pytest.TempPathFactory, server: PageServer
) -> AsyncIterator[McpClient]:
    async with serving(tmp_path_factory.mktemp("mcp-snapshot")) as client:
        yield client


def refused(result: CallToolResult, *fragments: str) -> str:
    text = text_of(result)
    assert result.is_error is True, text
    for fragment in fragments:
        assert fragment in text, text
    assert "tab." not in text, text
    return text


async def test_take_snapshot_names_components_as_the_browser_does_and_selectors_act(
    agent: McpClient, server: PageServer
) -> None:
    url = server.route("/mcp-ax/components", COMPONENTS)
    value_of(await agent.call("navigate", {"url": url}))
    outline = text_of(await agent.call("take_snapshot"))
    lines = outline.splitlines()
    assert lines[0] == f'page "Components" {url}'
    # Refs are the tab's: whatever they are numbered, the lines are the browser's.
    assert [re.sub(r"ref=e\d+", "ref", line) for line in lines[1:]] == [
        re.sub(r"ref=e\d+", "ref", line) for line in COMPONENT_LINES
    ]

    found = text_of(await agent.call("take_snapshot", {"find": "Delete account"}))
    [line] = found.splitlines()[1:]
    ref = ref_of(line, "Delete account").removeprefix("ref=")
    answer = value_of(await agent.call("selector_for", {"ref": ref}))
    assert answer == {"ref": ref, "selector": 'role=button[name="Delete account"]'}
    value_of(await agent.call("click", {"selector": answer["selector"]}))
    assert value_of(await agent.call("evaluate", {"expression": "document.title"})) == "deleted"

    # One element's subtree, by ref or as a selector.
    listbox = ref_of(outline, 'listbox "Fruit"').removeprefix("ref=")
    subtree = text_of(await agent.call("take_snapshot", {"ref": listbox}))
    assert [re.sub(r" \[ref=e\d+\]", "", line) for line in subtree.splitlines()[1:]] == [
        'listbox "Fruit"',
        '  option "Apple"',
        '  option "Pear" [selected]',
    ]
    for same in ({"selector": f"ref={listbox}"}, {"ref": f"[ref={listbox}]"}):
        assert text_of(await agent.call("take_snapshot", same)) == subtree
    refused(await agent.call("take_snapshot", {"ref": "listbox"}), "is not a ref")
    refused(
        await agent.call("take_snapshot", {"ref": listbox, "selector": "body"}),
        "selector or ref, not both",
    )

    # A closed shadow root's button has a ref but no selector.
    sealed = ref_of(outline, 'button "Sealed"').removeprefix("ref=")
    refused(await agent.call("selector_for", {"ref": sealed}), "NoSelectorError", "closed")


async def test_refs_reach_cross_site_frames_and_go_stale_with_their_page(
    agent: McpClient, server: PageServer
) -> None:
    value_of(await agent.call("navigate", {"url": real_page(server, "mcp-ax-frames")}))
    frames = value_of(await agent.call("list_frames"))
    assert {"same", "cross"} <= {frame["name"] for frame in frames}, frames
    outline = text_of(await agent.call("take_snapshot"))
    cross = ref_of(outline, 'button "Cross button"').removeprefix("ref=")
    selector = value_of(await agent.call("selector_for", {"ref": cross}))["selector"]
    assert selector == '#cross >> role=button[name="Cross button"]'
    value_of(await agent.call("click", {"selector": selector}))
    after = text_of(await agent.call("take_snapshot", {"find": "clicked"}))
    assert f'button "cross clicked" [focused] [ref={cross}]' in after  # the same ref

    value_of(await agent.call("reload"))
    refused(
        await agent.call("selector_for", {"ref": cross}),
        "StaleRefError",
        "take a new snapshot (take_snapshot)",
    )
    refused(await agent.call("take_snapshot", {"ref": cross}), "StaleRefError")


async def test_a_form_a_named_table_and_a_row_found_as_an_agent_reads_them(
    agent: McpClient, server: PageServer
) -> None:
    value_of(await agent.call("navigate", {"url": server.route("/mcp-ax/tracker", TRACKER)}))
    outline = text_of(await agent.call("take_snapshot"))
    assert '      options: "Open", "Closed", "Stale" [disabled]' in outline.splitlines()
    assert "option " not in outline
    assert '  table "Issues"' in outline.splitlines()
    found = text_of(await agent.call("take_snapshot", {"find": "#23"})).splitlines()[1:]
    link = ref_of("\n".join(found), 'link "#23"')
    assert [re.sub(r"\[ref=e\d+\]", "[ref]", line) for line in found] == [
        'main "Work"',
        '  table "Issues"',
        "    row",
        '      cell "#23"',
        '        link "#23" [ref] -> /issue/23',
        '      cell "Issue 23"',
    ]
    clicked = value_of(await agent.call("click", {"ref": link.removeprefix("ref=")}))
    assert clicked["changes"]["url"].endswith("/issue/23")


async def test_a_ref_of_the_wrong_kind_is_refused_at_once_in_mcp_words(
    agent: McpClient, server: PageServer
) -> None:
    value_of(await agent.call("navigate", {"url": server.route("/mcp-ax/wrong-kind", TRACKER)}))
    outline = text_of(await agent.call("take_snapshot"))
    link = ref_of(outline, 'link "#2"').removeprefix("ref=")
    text = refused(await agent.call("select_option", {"ref": link, "values": ["Open"]}))
    assert text == (
        "Error executing tool select_option: "
        f"WrongElementError: ref {link} is a link (<a>), not a <select>: select_option takes "
        "a <select> (its ref or a selector for it); a dropdown built of other elements is "
        "clicked instead"
    )
    status = ref_of(outline, 'combobox "Status"').removeprefix("ref=")
    option = "form select option:nth-of-type(2)"
    text = refused(await agent.call("select_option", {"selector": option, "values": ["Closed"]}))
    assert text == (
        "Error executing tool select_option: "
        f'WrongElementError: selector "{option}" is an option ("Closed") of the <select> ref '
        f"{status}, not the <select> itself: choose it by calling select_option with ref: "
        f'"{status}" and values: ["Closed"]'
    )
    chosen = value_of(await agent.call("select_option", {"ref": status, "values": ["Closed"]}))
    assert chosen["selected"] == ["Closed"]
