"""Learning tools' MCP names: unique, the same in every session, and said where they differ.

``a__b`` with tool ``c`` and ``a`` with tool ``b__c`` both read ``a__b__c``; so do two long
names cut at 128 characters. Each tool gets a name of its own, the first in ``(site, tool)``
order keeps the plain one, and the tool list, ``learn_context``, ``list_sites`` and a logged
warning say which tool got which name. No browser: the server's tools that need one get a
stand-in whose site layer is real and whose browser is never reached.
"""

from __future__ import annotations

import logging
import types
from pathlib import Path
from typing import Any, cast

import pytest
from mcp.types import Tool as MCPTool

import ego
from ego.learning.catalog.registry import Learnings
from ego.mcp.ego_server import MAX_TOOL_NAME, EgoServer
from ego.mcp.holder import BrowserHolder
from ego.mcp.learning_tools import mcp_name
from ego.mcp.server import build_server
from ego.site import Site
from tests.helpers.learnings import ECHO, make_site, tool

LONG_SITE = "s" * 100


def write_sites(root: Path) -> None:
    """Two pairs of tools whose plain MCP names are the same."""
    args_c = {"only_c": {"type": "string"}}
    args_bc = {"only_bc": {"type": "string"}}
    make_site(root, "a__b", domains=["x.test"], browser_tools={"c": tool(ECHO, args=args_c)})
    make_site(root, "a", domains=["x.test"], browser_tools={"b__c": tool(ECHO, args=args_bc)})
    make_site(
        root,
        LONG_SITE,
        domains=["x.test"],
        browser_tools={f"tool_{'x' * 30}_{end}": tool(ECHO) for end in ("one", "two")},
    )


def server_on(root: Path) -> EgoServer:
    learnings = Learnings(roots=[root])
    holder = BrowserHolder(endpoint=None, profile=None, headless=True, learnings=learnings)
    stand_in = types.SimpleNamespace(site=Site(cast(ego.Browser, None), learnings), closed=False)

    async def browser() -> Any:
        return stand_in

    holder.browser = browser  # type: ignore[method-assign]
    return build_server(holder)


async def learning_tools(server: EgoServer) -> dict[str, MCPTool]:
    return {tool.name: tool for tool in await server.list_tools() if "__" in tool.name}


async def structured(server: EgoServer, name: str, arguments: dict[str, Any]) -> Any:
    result = await server.call_tool(name, arguments)
    assert not getattr(result, "is_error", False), result
    content = result.structured_content  # type: ignore[union-attr]
    return content.get("result", content) if isinstance(content, dict) else content


async def test_tools_with_the_same_plain_name_each_get_their_own(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write_sites(tmp_path)
    assert mcp_name("a__b", "c") == mcp_name("a", "b__c") == "a__b__c"
    with caplog.at_level(logging.WARNING, logger="ego.mcp"):
        server = server_on(tmp_path)
    tools = await learning_tools(server)
    names = server.learning_tool_names()
    assert len(tools) == len(names) == 4  # none replaced another
    # The first in (site, tool) order keeps the plain name: site "a" sorts before "a__b".
    assert names[("a", "b__c")] == "a__b__c"
    renamed = names[("a__b", "c")]
    assert renamed.startswith("a__b__c_")
    assert len(renamed) == len("a__b__c_") + 8
    assert "only_bc" in tools["a__b__c"].input_schema["properties"]
    assert "only_c" in tools[renamed].input_schema["properties"]
    assert tools[renamed].description is not None
    assert "(Tool 'c' of site 'a__b': a__b__c names another tool.)" in tools[renamed].description
    warnings = [record.getMessage() for record in caplog.records if record.name == "ego.mcp"]
    assert f"MCP tool name a__b__c is taken by a/b__c: a__b/c is served as {renamed}" in warnings

    # Cut at 128 characters, the two long names meet too.
    one, two = (names[(LONG_SITE, f"tool_{'x' * 30}_{end}")] for end in ("one", "two"))
    assert one == mcp_name(LONG_SITE, f"tool_{'x' * 30}_one")
    assert len(one) == len(two) == MAX_TOOL_NAME
    assert one != two
    assert two[:-9] == one[:-9]


async def test_the_names_do_not_depend_on_the_order_sites_are_found(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    write_sites(first)
    # The same sites, written in the other order, in a root of their own.
    make_site(
        second,
        LONG_SITE,
        domains=["x.test"],
        browser_tools={f"tool_{'x' * 30}_{end}": tool(ECHO) for end in ("two", "one")},
    )
    make_site(second, "a", domains=["x.test"], browser_tools={"b__c": tool(ECHO)})
    make_site(second, "a__b", domains=["x.test"], browser_tools={"c": tool(ECHO)})
    assert server_on(first).learning_tool_names() == server_on(second).learning_tool_names()


async def test_learn_context_and_list_sites_say_which_tool_has_which_name(tmp_path: Path) -> None:
    write_sites(tmp_path)
    server = server_on(tmp_path)
    names = server.learning_tool_names()
    context = await structured(server, "learn_context", {"url": "https://x.test/"})
    listed = {(each["site_id"], each["tool_name"]): each for each in context["tools"]}
    for key in (("a", "b__c"), ("a__b", "c")):
        assert listed[key]["mcp_tool"] == names[key]
    # The compact text names a tool by its plain name under "each the MCP tool <site>__NAME",
    # and by its whole MCP name when it is served under another.
    text = (await server.call_tool("learn_context", {"url": "https://x.test/"})).content[0].text  # type: ignore[union-attr]
    lines = text.splitlines()
    assert "tools, each the MCP tool a__NAME (* required, =example):" in lines
    assert any(line.startswith("b__c(") for line in lines), text
    assert any(line.startswith(f"{names[('a__b', 'c')]}(") for line in lines), text
    full = await structured(server, "learn_context", {"url": "https://x.test/", "detail": "full"})
    examples = {(each["site_id"], each["tool_name"]): each["example"] for each in full["tools"]}
    for key in (("a", "b__c"), ("a__b", "c")):
        assert examples[key].split(" ", 1)[0] == names[key]
    sites = {each["site_id"]: each for each in await structured(server, "list_sites", {})}
    assert sites["a__b"]["mcp_tools"] == {"c": names[("a__b", "c")]}
    assert sites["a"]["mcp_tools"] == {"b__c": "a__b__c"}


async def test_a_saved_tool_keeps_the_name_it_has_and_a_new_one_never_takes_one(
    tmp_path: Path,
) -> None:
    write_sites(tmp_path)
    server = server_on(tmp_path)
    before = server.learning_tool_names()
    # A tool named again (a save replaces it) keeps its name, whoever else reads the same.
    assert server.learning_tool_name("a__b", "c", "a__b__c") == before[("a__b", "c")]
    # A new tool whose plain name is taken gets a name of its own, the same every time.
    fresh = server.learning_tool_name("a_", "_b__c", "a__b__c")
    assert fresh not in before.values()
    assert fresh == server_on(tmp_path).learning_tool_name("a_", "_b__c", "a__b__c")
