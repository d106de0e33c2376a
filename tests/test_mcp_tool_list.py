"""A tool list that stays put, through the MCP SDK's stdio client.

``tools/list`` holds nothing that changes between calls (no health, no counts): it is byte for
byte the same after any calls that change no learning, and changes, with
``notifications/tools/list_changed``, when a learning is saved. The generic tools' definitions
are pressed (no docstring layout, no pydantic titles or nullable wrappers) and fit in what
playwright-mcp spends on its 25 tools. ``--site-tools matching`` lists only the tools of the
sites on the current tab's origin, and says when that changes; ``--site-tools none`` lists
none, and ``learn_context`` then names ``run_browser_tool``.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from ego.demo import DemoServer
from ego.mcp.definitions import compact_description, compact_schema
from tests.helpers.commands import ego_env
from tests.helpers.mcp_client import McpClient, serving, text_of, value_of
from tests.helpers.page_server import PageServer

#: What playwright-mcp 0.0.83 spends on its 25 tools (names, descriptions and input schemas
#: as compact JSON, measured through the SDK's client): ego's generic tools fit in it.
PLAYWRIGHT_MCP_TOOL_CHARS = 17_565


def _listing(tools: dict[str, Any]) -> str:
    return json.dumps(
        [tool.model_dump(mode="json", by_alias=True) for tool in tools.values()], sort_keys=True
    )


def _chars(tool: Any) -> int:
    shown = {"name": tool.name, "description": tool.description, "inputSchema": tool.input_schema}
    return len(json.dumps(shown, ensure_ascii=False, separators=(",", ":")))


def _keys(schema: Any) -> set[str]:
    """Every keyword used anywhere in a schema (property names left out)."""
    if isinstance(schema, list):
        return set().union(*(_keys(item) for item in schema)) if schema else set()
    if not isinstance(schema, dict):
        return set()
    found = set(schema) - {"properties"}
    for key, value in schema.items():
        if key == "properties" and isinstance(value, dict):
            found |= set().union(*(_keys(item) for item in value.values())) if value else set()
        else:
            found |= _keys(value)
    return found


def test_definitions_are_pressed_without_changing_what_they_accept() -> None:
    docstring = """Click an element.

        Waits for it,
        then clicks.
        """
    assert compact_description(docstring) == "Click an element.\nWaits for it, then clicks."
    schema = {
        "title": "clickArguments",
        "type": "object",
        "properties": {
            "title": {"title": "Title", "type": "string"},  # a property may be called title
            "ref": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
            "force": {"default": False, "title": "Force", "type": "boolean"},
            "diff": {"default": True, "type": "boolean"},
            "args": {"additionalProperties": True, "type": "object"},
            "either": {"anyOf": [{"type": "string"}, {"type": "integer"}], "default": None},
        },
    }
    assert compact_schema(schema) == {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "ref": {"type": "string"},
            "force": {"type": "boolean"},
            "diff": {"default": True, "type": "boolean"},
            "args": {"type": "object"},
            "either": {"anyOf": [{"type": "string"}, {"type": "integer"}], "default": None},
        },
    }


# -- the list a server sends ------------------------------------------------------------------


@pytest.fixture(scope="module")
async def lister(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[McpClient]:
    async with serving(tmp_path_factory.mktemp("mcp-list")) as client:
        yield client


async def test_the_list_holds_nothing_that_changes_and_fits_the_budget(
    lister: McpClient,
) -> None:
    tools = await lister.tools()
    for tool in tools.values():
        description = tool.description or ""
        # No health line ("Health: 16 runs: 16 ok; last ok ..."), nor any other count.
        assert "Health:" not in description, tool.name
        assert not re.search(r"\d+ (runs?|ok|failed)\b", description), tool.name
        assert "\n " not in description, tool.name  # no docstring indentation
        assert "title" not in _keys(tool.input_schema), tool.name
    generic = [tool for name, tool in tools.items() if "__" not in name]
    spent = sum(_chars(tool) for tool in generic)
    assert spent <= PLAYWRIGHT_MCP_TOOL_CHARS, (
        f"the generic tools' definitions take {spent:,} characters, more than playwright-mcp's "
        f"{PLAYWRIGHT_MCP_TOOL_CHARS:,}: press the longest (bench/bench_mcp_flows.py lists them)"
    )
    # A pressed schema still checks what it did: an unknown argument is refused, in one line.
    refused = await lister.call("take_snapshot", {"max_depth": 2})
    assert refused.is_error
    assert "does not take 'max_depth'" in text_of(refused)


@pytest.fixture(scope="module")
def shop() -> Iterator[DemoServer]:
    with DemoServer() as server:
        yield server


@pytest.mark.chrome
async def test_the_list_stays_put_until_a_learning_is_saved(
    tmp_path: Path, shop: DemoServer
) -> None:
    env = ego_env(tmp_path / "profiles", workspace=tmp_path / "ws")
    client = McpClient(
        env, tmp_path, tmp_path / "stderr.log", args=["--start-url", f"demo-shop={shop.url}"]
    )
    await client.start()
    try:
        before = _listing(await client.tools())
        await client.call("learn_context", {"url": shop.url})
        await client.call("navigate", {"url": shop.url})
        snapshot = text_of(await client.call("take_snapshot", {"find": "Search products"}))
        assert "searchbox" in snapshot
        await client.call("type", {"selector": "input[type=search]", "text": "desk"})
        await client.call("press_key", {"key": "Enter"})
        for _ in range(3):  # runs that change the tools' health
            assert value_of(await client.call("demo-shop__search_products", {"query": "desk"}))
        assert value_of(await client.call("tool_health", {"site_id": "demo-shop"}))
        await client.call("reload")
        assert _listing(await client.tools()) == before
        assert not client.tools_changed.is_set()

        saved = await client.call(
            "save_browser_tool",
            {
                "site_id": "demo-shop",
                "tool": "page_title",
                "source": "async () => document.title",
                "description": "The page's title",
            },
        )
        assert not saved.is_error, text_of(saved)
        await asyncio.wait_for(client.tools_changed.wait(), 30)
        after = await client.tools()
        assert "demo-shop__page_title" in after
        assert _listing(after) != before
        assert _listing(await client.tools()) == _listing(after)  # and stays put again
    finally:
        await client.close()


@pytest.mark.chrome
async def test_matching_lists_the_tools_of_the_current_tabs_site_only(
    tmp_path: Path, shop: DemoServer, server: PageServer
) -> None:
    args = ["--site-tools", "matching", "--start-url", f"demo-shop={shop.url}"]
    client = McpClient(ego_env(tmp_path / "profiles"), tmp_path, tmp_path / "err.log", args=args)
    await client.start()
    try:
        assert not [name for name in await client.tools() if "__" in name]
        await client.call("navigate", {"url": shop.url})
        await asyncio.wait_for(client.tools_changed.wait(), 30)
        client.tools_changed.clear()
        site_tools = {name for name in await client.tools() if "__" in name}
        assert "demo-shop__search_products" in site_tools
        assert all(name.startswith("demo-shop__") for name in site_tools)
        await client.call("click", {"selector": "a[href='/contact']"})  # the same site
        assert not client.tools_changed.is_set()
        elsewhere = server.route("/not-a-site", "<title>elsewhere</title><p>no learnings</p>")
        await client.call("navigate", {"url": elsewhere})
        await asyncio.wait_for(client.tools_changed.wait(), 30)
        assert not [name for name in await client.tools() if "__" in name]
        # A site tool not listed still runs, through run_browser_tool.
        found = await client.call(
            "run_browser_tool",
            {"site_id": "demo-shop", "tool": "search_products", "args": {"query": "desk"}},
        )
        assert value_of(found)["total"] == 2
    finally:
        await client.close()


async def test_none_lists_no_site_tool_and_learn_context_names_run_browser_tool(
    tmp_path: Path,
) -> None:
    args = ["--site-tools", "none"]
    client = McpClient(ego_env(tmp_path / "profiles"), tmp_path, tmp_path / "err.log", args=args)
    await client.start()
    try:
        tools = await client.tools()
        assert "run_browser_tool" in tools
        assert not [name for name in tools if "__" in name]
        text = text_of(await client.call("learn_context", {"url": "http://shop.localhost:8765/"}))
        assert 'tools, each run_browser_tool {site_id: "demo-shop", tool: NAME, args' in text
        assert "confirm*=true" not in text  # run_browser_tool's own confirm says it
    finally:
        await client.close()
