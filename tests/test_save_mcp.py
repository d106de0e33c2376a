"""An agent in an MCP client saves a tool and a note, then uses them in the same session.

The server is the real ``python -m ego mcp`` over stdio, driven by the MCP SDK's own client;
its Chrome is headless and its workspace is a temporary folder. The test skips (saying why)
only when the server does not list ``save_browser_tool``, i.e. before
``ego.mcp.save_tools.add_save_tools`` is wired into ``ego.mcp.build_server``.
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from ego.demo import DemoServer
from tests.helpers.mcp_client import error_text, payload

pytestmark = pytest.mark.chrome  # the MCP server under test launches Chrome

ROOT = Path(__file__).resolve().parent.parent

SEARCH = """async ({q}) => {
  const r = await fetch('/api/products?q=' + encodeURIComponent(q));
  return {names: (await r.json()).products.map((p) => p.name)};
}
"""


@pytest.fixture(scope="module")
def demo() -> Iterator[DemoServer]:
    server = DemoServer(port=0).start()
    yield server
    server.close()


async def test_an_mcp_client_saves_a_tool_and_calls_it_in_the_same_session(
    tmp_path: Path, demo: DemoServer
) -> None:
    workspace = tmp_path / "ws"
    site_id = f"mcp-{uuid.uuid4().hex[:8]}"
    env = {key: value for key, value in os.environ.items() if key != "EGO_WORKSPACE"}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "ego", "--workspace", str(workspace), "mcp"],
        env=env,
        cwd=str(ROOT),
    )
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write) as session,
    ):
        wired = await drive(session, demo, workspace, site_id)
    assert wired, "`ego mcp` does not list save_browser_tool"


async def drive(session: ClientSession, demo: DemoServer, workspace: Path, site_id: str) -> bool:
    """The agent's side of the session; False when the server has no save tools."""
    await session.initialize()
    names = {tool.name for tool in (await session.list_tools()).tools}
    if "save_browser_tool" not in names:
        return False
    assert "save_note" in names

    await session.call_tool("navigate", {"url": demo.url})
    saved = payload(
        await session.call_tool(
            "save_browser_tool",
            {
                "site_id": site_id,
                "tool": "find",
                "source": SEARCH,
                "description": "Search the shop's products",
                "args": {"q": {"type": "string", "required": True}},
                "try_args": {"q": "desk"},
            },
        )
    )
    assert saved["created_site"] is True
    assert saved["try_result"] == {"names": ["Mechanical Desk Clock", "Felt Desk Mat"]}
    assert saved["mcp_tool"] == f"{site_id}__find"
    assert (workspace / "learnings" / site_id / "browser-tools" / "find.js").read_text() == (SEARCH)

    result = payload(
        await session.call_tool(
            "run_browser_tool", {"site_id": site_id, "tool": "find", "args": {"q": "lamp"}}
        )
    )
    assert result == {"names": ["Trail Headlamp 400"]}
    names = {tool.name for tool in (await session.list_tools()).tools}
    assert f"{site_id}__find" in names
    own = payload(await session.call_tool(f"{site_id}__find", {"q": "mat"}))
    assert own == {"names": ["Felt Desk Mat"]}

    note = payload(
        await session.call_tool(
            "save_note",
            {"site_id": site_id, "name": "search", "text": "# Search\nUse find(q)."},
        )
    )
    assert note["replaced"] is False
    context = payload(await session.call_tool("learn_context", {"url": demo.url}))
    assert f"{site_id}:find" in {f"{t['site_id']}:{t['tool_name']}" for t in context["tools"]}
    assert "Search" in [n["title"] for n in context["notes"] if n["site_id"] == site_id]

    refused = await session.call_tool(
        "save_browser_tool",
        {
            "site_id": site_id,
            "tool": "buy",
            "source": "async () => document.querySelector('[ref=e42]').click()",
            "description": "Buy",
        },
    )
    text = error_text(refused)
    assert "SnapshotReferenceError" in text
    assert "stable selectors" in text
    assert not (workspace / "learnings" / site_id / "browser-tools" / "buy.js").exists()
    return True
