"""An MCP agent closes the learning loop through the SDK's own client: it records what it does
on the demo shop, drafts tools from the recording, keeps one and calls it as its own MCP
tool; once the shop's API changed, it heals the tool and promotes the candidate.

The server is the real ``python -m ego mcp`` over stdio; its Chrome is headless, its workspace
and output folder temporary.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from ego.demo import DemoServer
from tests.helpers.mcp_client import error_text, payload

pytestmark = pytest.mark.chrome

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def shop() -> Iterator[DemoServer]:
    server = DemoServer(port=0).start()
    yield server
    server.close()


async def test_an_mcp_agent_records_suggests_saves_and_heals(
    tmp_path: Path, shop: DemoServer
) -> None:
    output = tmp_path / "out"
    env = {key: value for key, value in os.environ.items() if key != "EGO_WORKSPACE"}
    env["EGO_STATE_DIR"] = str(tmp_path / "state")
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "ego",
            "--workspace",
            str(tmp_path / "ws"),
            "mcp",
            "--output-dir",
            str(output),
            "--allowed-origins",
            f"{shop.origin}",
        ],
        env=env,
        cwd=str(ROOT),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        names = {tool.name for tool in (await session.list_tools()).tools}
        assert {"start_recording", "stop_recording", "suggest_tools", "heal_tool"} <= names

        refused = await session.call_tool("start_recording", {"path": "/etc/x.har"})
        assert "outside the folders" in error_text(refused)
        started = payload(await session.call_tool("start_recording", {"path": "session.har"}))
        assert started["har"] == str((output / "session.har").resolve())
        for words in ("lamp", "desk"):
            url = shop.url_for(f"/search?q={words}")
            payload(await session.call_tool("navigate", {"url": url}))
            payload(
                await session.call_tool("wait_for", {"selector": '[data-testid="related-item"]'})
            )
        stopped = payload(await session.call_tool("stop_recording", {}))
        assert stopped["entries"] > 0
        assert stopped["hosts"][f"shop.localhost:{shop.port}"] > 0
        # The page actions, beside the HAR: a Python tool is drafted from them.
        assert stopped["actions"] == str((output / "session.actions.json").resolve())
        assert stopped["steps"] == 2  # the two navigations
        flow = payload(
            await session.call_tool(
                "suggest_tools",
                {"site_id": "shop-pages", "har_paths": ["session.actions.json"]},
            )
        )
        assert flow["found"][0]["tool"] == "search"
        assert flow["found"][0]["side_effect"] == "read"
        kept = payload(
            await session.call_tool("save_draft", {"site_id": "shop-pages", "tool": "search"})
        )
        assert kept["file"].endswith("tools/search.py")
        assert [c["passed"] for c in kept["cases"]["ran"]] == [True]

        drafted = payload(
            await session.call_tool(
                "suggest_tools",
                {"site_id": "shop", "har_paths": ["session.har"], "check_cases": True},
            )
        )
        tools = {d["endpoint"]: d["tool"] for d in drafted["found"]}
        assert tools["GET /api/products"] == "get_products"
        assert all(c["status"] == "passed" for c in drafted["checked"]["get_products"])
        saved = payload(
            await session.call_tool(
                "save_draft",
                {"site_id": "shop", "tool": "get_products", "description": "Search products"},
            )
        )
        own = saved["mcp_tool"]
        assert own == "shop__get_products"
        found = payload(await session.call_tool(own, {"q": "lamp"}))
        assert found["products"][0]["name"]

        shop.api_changed = True
        report = payload(
            await session.call_tool("heal_tool", {"site_id": "shop", "tool": "get_products"})
        )
        assert report["proposal"]["to"] == "GET /api/catalog/search"
        checked = payload(
            await session.call_tool(
                "heal_tool", {"site_id": "shop", "tool": "get_products", "step": "check"}
            )
        )
        assert checked["passed"] is True
        promoted = payload(
            await session.call_tool(
                "heal_tool", {"site_id": "shop", "tool": "get_products", "step": "promote"}
            )
        )
        assert promoted["provenance"]["new_case"]
        again = payload(await session.call_tool(own, {"q": "lamp"}))
        assert again["products"][0]["name"]
