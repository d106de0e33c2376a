"""``ego mcp`` on a real page: one snapshot reads the shadow root and every frame, the
selectors its refs give click, evaluate runs in each frame, a download is reported where the
click that started it answers, a PDF is saved, and a site's tool runs inside the frame of its
site. Through the MCP SDK's stdio client, as an agent uses it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.helpers.learnings import make_site, tool
from tests.helpers.mcp_client import McpClient, serving, text_of, value_of
from tests.helpers.page_server import PageServer
from tests.helpers.real_page import real_page, ref_of

pytestmark = pytest.mark.chrome  # the MCP server under test launches Chrome

SITE = "embedded-mcp"


@pytest.fixture(scope="module")
async def agent(
    tmp_path_factory: pytest.TempPathFactory, server: PageServer
) -> AsyncIterator[McpClient]:
    base = tmp_path_factory.mktemp("mcp-real")
    make_site(
        base / "ws" / "learnings",
        SITE,
        domains=[f"localhost:{server.port}"],
        browser_tools={"where": tool("async () => location.host\n", description="Where it ran")},
    )
    async with serving(base, workspace=base / "ws") as client:
        yield client


async def open_real(agent: McpClient, server: PageServer, tag: str) -> str:
    await agent.call("navigate", {"url": real_page(server, tag)})
    frames = value_of(await agent.call("list_frames"))
    names = {frame["name"] for frame in frames}
    assert {"same", "cross"} <= names, frames
    outline: str = text_of(await agent.call("take_snapshot"))
    return outline


async def test_one_snapshot_then_clicks_and_evaluates_in_every_frame(
    agent: McpClient, server: PageServer
) -> None:
    outline = await open_real(agent, server, "mcp-read")
    for fragment in ("Shadow text", "Same-origin text", "Cross-site text", "Use demo / demo here"):
        assert fragment in outline, outline
    for button in ('button "In shadow"', 'button "Same button"', 'button "Cross button"'):
        ref = ref_of(outline, button).removeprefix("ref=")
        selector = value_of(await agent.call("selector_for", {"ref": ref}))["selector"]
        value_of(await agent.call("click", {"selector": selector}))
    after = text_of(await agent.call("take_snapshot", {"find": "clicked"}))
    for clicked in ("inner clicked", "same clicked", "cross clicked"):
        assert clicked in after, after

    frames = value_of(await agent.call("list_frames"))
    cross = next(frame for frame in frames if frame["name"] == "cross")
    by_id = {"expression": "location.host", "frame": cross["id"]}
    assert value_of(await agent.call("evaluate", by_id)) == f"localhost:{server.port}"
    by_selector = {"expression": "document.title", "frame": 'iframe[name="same"]'}
    assert value_of(await agent.call("evaluate", by_selector)) == "Same"
    top = {"expression": "document.title"}
    assert value_of(await agent.call("evaluate", top)) == "Real"


async def test_take_snapshot_pages_and_says_how_to_get_the_rest(
    agent: McpClient, server: PageServer
) -> None:
    outline = await open_real(agent, server, "mcp-pages")
    body = outline.splitlines()[1:]
    first = text_of(await agent.call("take_snapshot", {"max_lines": 3}))
    assert first.splitlines()[1:4] == body[:3]
    assert first.splitlines()[-1].endswith("offset: 3 shows the next")
    nxt = text_of(await agent.call("take_snapshot", {"max_lines": 3, "offset": 3}))
    assert nxt.splitlines()[1:4] == body[3:6]
    subtree = text_of(await agent.call("take_snapshot", {"selector": "#cross >> body"}))
    assert "Cross-site text" in subtree
    assert "Real page" not in subtree
    frame = ref_of(outline, 'iframe "cross"').removeprefix("ref=")
    by_ref = text_of(await agent.call("take_snapshot", {"ref": frame}))
    assert by_ref.splitlines()[1].startswith('iframe "cross"')
    assert "Cross-site text" in by_ref
    assert "Same-origin text" not in by_ref
    assert by_ref == text_of(await agent.call("take_snapshot", {"selector": f"ref={frame}"}))


async def test_a_click_that_downloads_reports_the_saved_file(
    agent: McpClient, server: PageServer
) -> None:
    await open_real(agent, server, "mcp-download")
    clicked = value_of(await agent.call("click", {"selector": "#dl"}))
    [download] = clicked["downloads"]
    assert download["state"] == "completed"
    assert download["suggested_filename"] == "report.csv"
    assert Path(download["path"]).read_text() == "a,b\n1,2\n"
    listed = value_of(await agent.call("list_downloads"))
    assert download["path"] in [entry["path"] for entry in listed]


async def test_save_pdf_writes_the_page(
    agent: McpClient, server: PageServer, tmp_path: Path
) -> None:
    await open_real(agent, server, "mcp-pdf")
    saved = value_of(await agent.call("save_pdf", {"path": "page.pdf"}))
    target = Path(saved["path"])  # in the server's output folder
    assert target.name == "page.pdf"
    assert saved["bytes"] == target.stat().st_size
    assert target.read_bytes().startswith(b"%PDF-")


async def test_a_site_tool_runs_in_the_frame_of_its_site(
    agent: McpClient, server: PageServer
) -> None:
    await open_real(agent, server, "mcp-site")
    ran = value_of(await agent.call(f"{SITE}__where", {}))
    assert ran == f"localhost:{server.port}"
