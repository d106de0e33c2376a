"""``ego mcp``'s action tools act as a user does, through the MCP SDK's stdio client: a click
reaches a listener inside a shadow root with real input, a covered element is refused naming
what covers it (and ``force: true`` in MCP words), a click whose release the page slid an
invisible element under is an error naming it, never ``clicked``, typing reaches a
``role=textbox`` and a contenteditable and refuses a read-only field, ``check``/``uncheck``
verify the state, and a malformed selector, a ref never given or neither argument are typed
errors."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.helpers.action_pages import CHECKS, COVERED, FIELDS, RECORD, SHADOW_ITEM, SLIDING_VEIL
from tests.helpers.mcp_client import McpClient, serving, text_of, value_of
from tests.helpers.page_server import PageServer

pytestmark = pytest.mark.chrome  # the MCP server under test launches Chrome


@pytest.fixture(scope="module")
async def agent(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[McpClient]:
    base = tmp_path_factory.mktemp("mcp-actions")
    async with serving(base, workspace=base / "ws") as client:
        yield client


async def open_page(agent: McpClient, server: PageServer, path: str, body: str) -> None:
    url = server.route(path, f"<!doctype html><title>act</title>{RECORD}{body}")
    value_of(await agent.call("navigate", {"url": url}))


async def page_value(agent: McpClient, expression: str) -> Any:
    return value_of(await agent.call("evaluate", {"expression": expression}))


async def test_click_reaches_a_shadow_listener_and_a_cover_is_named(
    agent: McpClient, server: PageServer
) -> None:
    await open_page(agent, server, "/mcp-act/shadow", SHADOW_ITEM)
    assert value_of(await agent.call("click", {"selector": "#item"}))["clicked"] == "#item"
    assert await page_value(agent, "log") == [["li", True]]

    await open_page(agent, server, "/mcp-act/covered", COVERED)
    refused = await agent.call("click", {"selector": "#under"})
    assert refused.is_error
    message = text_of(refused)
    assert "ElementNotActionableError: cannot click <button id=under>" in message
    assert 'covered by <div class=overlay> "Loading…"' in message
    assert "force: true" in message
    assert "force=True" not in message
    assert await page_value(agent, "log") == []


async def test_a_click_the_page_slid_a_veil_under_is_an_error_naming_it(
    agent: McpClient, server: PageServer
) -> None:
    await open_page(agent, server, "/mcp-act/sliding-veil", SLIDING_VEIL)
    refused = await agent.call("click", {"selector": "#cancel"})
    assert refused.is_error, refused
    message = text_of(refused)
    assert "ElementNotActionableError: cannot click <button id=cancel>" in message
    assert "the pointerup went to <div id=veil> after the press reached it" in message
    assert "clicked" not in message
    assert await page_value(agent, "log") == []


async def test_type_goes_where_the_focus_went_and_refuses_read_only(
    agent: McpClient, server: PageServer
) -> None:
    await open_page(agent, server, "/mcp-act/fields", FIELDS)
    value_of(await agent.call("type", {"selector": "#box", "text": "Hi"}))
    value_of(await agent.call("type", {"selector": "#editor", "text": "done", "clear": False}))
    assert await page_value(agent, "[box.textContent, editor.textContent]") == [
        "Hi",
        "old textdone",
    ]
    refused = await agent.call("type", {"selector": "#ro", "text": "changed"})
    assert refused.is_error
    assert "ElementNotActionableError" in text_of(refused)
    assert "read-only" in text_of(refused)
    assert await page_value(agent, "ro.value") == "fixed"


async def test_check_and_uncheck_tools(agent: McpClient, server: PageServer) -> None:
    await open_page(agent, server, "/mcp-act/checks", CHECKS)
    checked = value_of(await agent.call("check", {"selector": "#terms"}))
    assert checked["checked"] == "#terms"
    assert any("[checked]" in line for line in checked["changes"]["lines"]), checked
    value_of(await agent.call("check", {"selector": "#switch"}))
    value_of(await agent.call("uncheck", {"selector": "#terms"}))
    state = "[terms.checked, document.getElementById('switch').getAttribute('aria-checked')]"
    assert await page_value(agent, state) == [False, "true"]
    stuck = await agent.call("check", {"selector": "#stuck"})
    assert stuck.is_error
    assert "state changed check: it is still unchecked" in text_of(stuck)


async def test_malformed_selectors_and_refs_are_typed_errors(
    agent: McpClient, server: PageServer
) -> None:
    await open_page(agent, server, "/mcp-act/errors", SHADOW_ITEM)
    bad = await agent.call("click", {"selector": "li[role="})
    assert bad.is_error
    assert "InvalidSelectorError: the selector 'li[role=' is not valid CSS;" in text_of(bad)
    neither = await agent.call("hover", {})
    assert neither.is_error
    assert "give selector (CSS) or ref" in text_of(neither)
    unknown = await agent.call("click", {"ref": "e987654"})
    assert unknown.is_error
    assert "StaleRefError: ref e987654 was not given by a snapshot" in text_of(unknown)
    assert "take_snapshot" in text_of(unknown)
    assert await page_value(agent, "log") == []
