"""``ego mcp`` run for an agent: what the operator's limits refuse (local URLs, origins outside
the allowed ones, paths outside the server's folders), that no page traps a tab, that results
fit a context window, that state changes are said, and that bad or unknown arguments get one
line. Through the MCP SDK's stdio client, as an agent uses it.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from pathlib import Path

import psutil
import pytest
from mcp.types import ImageContent

import ego
from ego.demo import DemoServer
from ego.mcp.images import MAX_BYTES, MAX_EDGE
from tests.helpers.commands import ego_async, ego_env, free_port
from tests.helpers.images import png_size
from tests.helpers.mcp_client import McpClient, refused, start, text_of, value_of
from tests.helpers.page_server import PageServer
from tests.helpers.processes import is_chrome, process_tree, wait_gone
from tests.helpers.real_page import real_page
from tests.helpers.snapshot_pages import BIG

pytestmark = pytest.mark.chrome  # the MCP servers under test launch Chrome


@pytest.fixture(scope="module")
async def agent(
    tmp_path_factory: pytest.TempPathFactory, server: PageServer
) -> AsyncIterator[tuple[McpClient, Path]]:
    client, output = await start(
        tmp_path_factory, "mcp-limits", "--allowed-origins", f"127.0.0.1:{server.port}"
    )
    try:
        yield client, output
    finally:
        if client.running:
            await client.close()


# -- what the operator allows -------------------------------------------------------------------


async def test_local_urls_and_other_origins_are_refused_in_every_frame(
    agent: tuple[McpClient, Path], server: PageServer
) -> None:
    client, _ = agent
    refused(
        await client.call("navigate", {"url": "file:///etc/hostname"}),
        "OriginBlockedError",
        "file:",
    )
    refused(await client.call("navigate", {"url": "chrome://version"}), "chrome:")
    refused(
        await client.call("navigate", {"url": f"http://localhost:{server.port}/"}),
        "not among the allowed origins",
    )
    # The page's own cross-site frame is refused too: Chrome shows its error page there.
    value_of(await client.call("navigate", {"url": real_page(server, "mcp-limited")}))
    frames = value_of(await client.call("list_frames"))
    cross = next(frame for frame in frames if frame["name"] == "cross")
    body = value_of(
        await client.call(
            "evaluate", {"expression": "document.body.innerText", "frame": cross["id"]}
        )
    )
    assert "Cross-site text" not in body
    outline = text_of(await client.call("take_snapshot"))
    assert "Same-origin text" in outline
    assert "Cross-site text" not in outline


async def test_files_stay_inside_the_servers_folders(
    agent: tuple[McpClient, Path], server: PageServer, tmp_path: Path
) -> None:
    client, output = agent
    value_of(await client.call("navigate", {"url": real_page(server, "mcp-files")}))
    outside = tmp_path / "x"
    (outside / "sub").mkdir(parents=True)
    refused(
        await client.call("take_screenshot", {"path": f"{outside}/sub/../../escape.png"}),
        "FileAccessError",
        "outside the folders",
    )
    assert not (tmp_path / "escape.png").exists()
    refused(
        await client.call("upload_file", {"selector": "#inner-file", "paths": ["/etc/hostname"]}),
        "outside the folders",
    )
    # A link inside the output folder cannot lead out.
    output.mkdir(parents=True, exist_ok=True)
    (output / "link").symlink_to(outside, target_is_directory=True)
    refused(await client.call("save_pdf", {"path": "link/page.pdf"}), "outside the folders")
    # A relative path lands in the output folder; an existing file ego did not write stays.
    saved = value_of(await client.call("take_screenshot", {"path": "shot.png"}))
    assert Path(saved["path"]) == output.resolve() / "shot.png"
    assert (output / "shot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    again = value_of(await client.call("take_screenshot", {"path": "shot.png"}))
    assert again["path"] == saved["path"]  # its own file: replaced
    (output / "victim.txt").write_text("keep me")
    refused(await client.call("take_screenshot", {"path": "victim.txt"}), "exists")
    assert (output / "victim.txt").read_text() == "keep me"
    # A file inside the folder can be uploaded.
    (output / "upload.txt").write_text("hello")
    value_of(await client.call("upload_file", {"selector": "#inner-file", "paths": ["upload.txt"]}))
    # Downloads are saved in the output folder too.
    clicked = value_of(await client.call("click", {"selector": "#dl"}))
    assert Path(clicked["downloads"][0]["path"]).parent == (output / "downloads").resolve()


async def test_the_client_roots_are_folders_the_server_may_use_too(
    tmp_path_factory: pytest.TempPathFactory, server: PageServer, tmp_path: Path
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "upload.txt").write_text("from the root")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    client, output = await start(tmp_path_factory, "mcp-roots", roots=[root])
    try:
        value_of(await client.call("navigate", {"url": real_page(server, "mcp-roots")}))
        saved = value_of(await client.call("take_screenshot", {"path": str(root / "shot.png")}))
        assert Path(saved["path"]) == (root / "shot.png").resolve()
        assert (root / "shot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        value_of(
            await client.call(
                "upload_file", {"selector": "#inner-file", "paths": [str(root / "upload.txt")]}
            )
        )
        # The root widens the folders; it does not lift the limit.
        refused(
            await client.call("take_screenshot", {"path": str(elsewhere / "shot.png")}),
            "outside the folders",
            str(root.resolve()),
            str(output.resolve()),
        )
        assert list(elsewhere.iterdir()) == []
    finally:
        await client.close()


async def test_the_operator_can_lift_each_limit(
    tmp_path_factory: pytest.TempPathFactory, server: PageServer, tmp_path: Path
) -> None:
    client, _ = await start(
        tmp_path_factory,
        "mcp-lifted",
        "--allow-file-urls",
        "--allow-unrestricted-file-access",
        "--blocked-origins",
        f"localhost:{server.port}",
    )
    try:
        note = tmp_path / "note.txt"
        note.write_text("a local file")
        value_of(await client.call("navigate", {"url": note.as_uri()}))
        body = value_of(await client.call("evaluate", {"expression": "document.body.innerText"}))
        assert body.strip() == "a local file"
        # A blocked origin stays blocked when everything else is allowed.
        refused(
            await client.call("navigate", {"url": f"http://localhost:{server.port}/"}),
            "OriginBlockedError",
            "blocked",
        )
        value_of(await client.call("navigate", {"url": real_page(server, "mcp-lifted")}))
        # Files anywhere the server can reach, and an existing file overwritten.
        victim = tmp_path / "victim.png"
        victim.write_text("old")
        saved = value_of(await client.call("take_screenshot", {"path": str(victim)}))
        assert Path(saved["path"]) == victim.resolve()
        assert victim.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        value_of(
            await client.call("upload_file", {"selector": "#inner-file", "paths": [str(note)]})
        )
    finally:
        await client.close()


# -- no page traps a tab ---------------------------------------------------------------------


async def test_a_spinning_script_is_stopped_and_the_next_call_answers_at_once(
    agent: tuple[McpClient, Path], server: PageServer
) -> None:
    client, _ = agent
    value_of(await client.call("navigate", {"url": server.route("/mcp/spin", "<p>spin</p>")}))
    # Its own 2 s ends it, as the message says (every call here has the client's hang bound).
    refused(
        await client.call("evaluate", {"expression": "while (true) {}", "timeout": 2}),
        "stopped it after 2 s",
    )
    # Stopped, not left spinning: a call behind a spinning script gets no answer within its
    # timeout (it would be refused as stopped), so an answer proves it.
    assert value_of(await client.call("evaluate", {"expression": "1 + 1", "timeout": 15})) == 2
    value_of(await client.call("take_snapshot"))


# -- results sized for a context window ---------------------------------------------------------


async def test_a_big_page_is_paged_searched_and_screenshot_within_bounds(
    agent: tuple[McpClient, Path], server: PageServer
) -> None:
    client, _ = agent
    value_of(await client.call("navigate", {"url": server.route("/mcp/big", BIG)}))
    first = text_of(await client.call("take_snapshot"))
    assert len(first.splitlines()) == 402  # the header, 400 lines, how to get the rest
    assert first.splitlines()[-1].endswith("offset: 400 shows the next")
    later = text_of(await client.call("take_snapshot", {"offset": 2990, "max_lines": 50}))
    assert 'button "Buy 1499"' in later
    assert "shows the next" not in later
    found = text_of(await client.call("take_snapshot", {"find": "Buy 777"}))
    assert 'button "Buy 777"' in found
    assert len(found.splitlines()) < 5

    shot = await client.call("take_screenshot", {"full_page": True})
    [image] = [part for part in shot.content if isinstance(part, ImageContent)]
    data = base64.b64decode(image.data)
    assert len(data) <= MAX_BYTES
    assert max(png_size(data)) <= MAX_EDGE if data[:4] == b"\x89PNG" else True
    info = value_of(shot)
    assert 0 < info["scale"] < 1
    assert max(info["width"], info["height"]) <= MAX_EDGE


async def test_learn_context_lists_each_tool_and_note_once(
    agent: tuple[McpClient, Path],
) -> None:
    client, _ = agent
    result = await client.call(
        "learn_context", {"url": "http://shop.localhost:8765/", "detail": "full"}
    )
    context = value_of(result)
    # The text block is the same value without indentation: nothing in it is spent on layout.
    text = text_of(result)
    assert json.loads(text) == context
    assert "\n" not in text
    names = [tool["tool_name"] for tool in context["tools"]]
    assert names
    assert len(names) == len(set(names))
    for site in context["sites"]:
        assert all(isinstance(name, str) for name in site["tools"])
        assert all(isinstance(note, str) for note in site["notes"])
    assert "skills" not in context


# -- arguments ------------------------------------------------------------------------------


async def test_unknown_and_bad_arguments_get_one_line(agent: tuple[McpClient, Path]) -> None:
    client, _ = agent
    refused(
        await client.call("take_snapshot", {"max_depth": 2}), "does not take 'max_depth'", "offset"
    )
    text = refused(await client.call("navigate", {}), "url")
    assert "pydantic" not in text
    assert "validation error" not in text
    refused(await client.call("take_snapshot", {"max_lines": 0}), "max_lines")


async def test_a_click_that_opens_a_dialog_says_it_ran(
    agent: tuple[McpClient, Path], server: PageServer
) -> None:
    client, _ = agent
    page = server.route(
        "/mcp/ask",
        "<button id=\"ask\" onclick=\"document.title = confirm('Delete?') ? 'yes' : 'no'\">"
        "Ask</button>",
    )
    value_of(await client.call("navigate", {"url": page}))
    clicked = value_of(await client.call("click", {"selector": "#ask"}))
    assert clicked["clicked"] == "#ask"
    assert clicked["dialog"]["type"] == "confirm"
    assert "handle_dialog" in clicked["next"]
    value_of(await client.call("handle_dialog", {"accept": True}))
    assert value_of(await client.call("evaluate", {"expression": "document.title"})) == "yes"


# -- state changes are said --------------------------------------------------------------------


def _browser_process(process: psutil.Process) -> bool:
    try:
        return is_chrome(process) and "--type=" not in " ".join(process.cmdline())
    except psutil.Error:
        return False


async def test_a_replaced_chrome_is_announced_once(
    tmp_path_factory: pytest.TempPathFactory, server: PageServer
) -> None:
    client, _ = await start(tmp_path_factory, "mcp-replaced")
    try:
        value_of(await client.call("navigate", {"url": server.route("/mcp/r", "<p>r</p>")}))
        assert client.server is not None
        # The browser process itself (its helpers go with it).
        chromes = [p for p in process_tree(client.server) if _browser_process(p)]
        assert chromes
        for chrome in chromes:
            chrome.kill()
        assert await wait_gone(chromes, 10) == []
        replaced = await client.call("list_tabs")
        if replaced.is_error:
            # The dead connection may be found by this call itself: it says the browser closed.
            assert "BrowserClosedError" in text_of(replaced), text_of(replaced)
            replaced = await client.call("list_tabs")
        assert replaced.structured_content is not None, text_of(replaced)
        assert "started Chrome again" in replaced.structured_content.get("notice", ""), text_of(
            replaced
        )
        assert text_of(replaced).startswith("Note: ego started Chrome again")
        after = await client.call("list_tabs")
        assert "notice" not in (after.structured_content or {})
    finally:
        await client.close()


async def test_a_reconnected_browser_is_announced_once(
    tmp_path_factory: pytest.TempPathFactory, server: PageServer
) -> None:
    port = free_port()
    first = await ego.launch(port=port)
    client, _ = await start(
        tmp_path_factory, "mcp-reconnected", "--endpoint", f"http://127.0.0.1:{port}"
    )
    second: ego.Browser | None = None
    try:
        value_of(await client.call("navigate", {"url": server.route("/mcp/rc", "<p>rc</p>")}))
        await first.close()
        # Another Chrome at the same address: the server attaches to it again.
        second = await ego.launch(port=port)
        replaced = await client.call("list_tabs")
        if replaced.is_error:
            # The closed connection may be found by this call itself: it says so.
            assert "BrowserClosedError" in text_of(replaced), text_of(replaced)
            replaced = await client.call("list_tabs")
        assert text_of(replaced).startswith("Note: ego reconnected to the browser"), text_of(
            replaced
        )
        assert "were lost" in (replaced.structured_content or {}).get("notice", "")
        after = await client.call("list_tabs")
        assert "notice" not in (after.structured_content or {})
    finally:
        await client.close()
        await first.close()
        if second is not None:
            await second.close()


async def test_start_url_sends_a_sites_tools_to_the_named_copy(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    with DemoServer() as ours, DemoServer() as other:
        client, _ = await start(
            tmp_path_factory, "mcp-start", "--start-url", f"demo-shop={ours.url}"
        )
        try:
            # A tab of another copy of the shop is open: it is not the one named.
            value_of(await client.call("navigate", {"url": other.url}))
            product = value_of(await client.call("demo-shop__get_product", {"id": 1}))
            assert product["url"].startswith(ours.origin)
            assert value_of(
                await client.call("set_start_url", {"site_id": "demo-shop", "url": other.url})
            ) == {"site_id": "demo-shop", "url": other.url}
            product = value_of(await client.call("demo-shop__get_product", {"id": 1}))
            assert product["url"].startswith(other.origin)
        finally:
            await client.close()


# -- read-only and tool groups -------------------------------------------------------------------


async def test_read_only_serves_reading_and_read_tools_only(
    tmp_path_factory: pytest.TempPathFactory, server: PageServer
) -> None:
    client, _ = await start(tmp_path_factory, "mcp-read-only", "--read-only")
    try:
        tools = await client.tools()
        for kept in (
            "navigate",
            "scroll",
            "take_snapshot",
            "take_screenshot",
            "learn_context",
            "search_catalog",
            "tool_health",
            "demo-shop__list_products",
        ):
            assert kept in tools, kept
        for gone in (
            "click",
            "drag",
            "type",
            "evaluate",
            "save_browser_tool",
            "upload_file",
            "demo-shop__add_to_cart",
            "demo-shop__post_review",
        ):
            assert gone not in tools, gone
        refused(
            await client.call(
                "run_browser_tool",
                {"site_id": "demo-shop", "tool": "add_to_cart", "args": {"id": 1}},
            ),
            "read-only",
        )
    finally:
        await client.close()


async def test_tools_chooses_the_groups_served(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    client, _ = await start(tmp_path_factory, "mcp-groups", "--tools", "pages,network")
    try:
        tools = set(await client.tools())
        assert {"navigate", "take_snapshot", "list_network_requests"} <= tools
        assert not tools & {"click", "evaluate", "learn_context", "save_browser_tool"}
        assert not any("__" in name for name in tools)
    finally:
        await client.close()


async def test_ego_run_takes_start_url_too(tmp_path: Path) -> None:
    with DemoServer() as shop:
        env = ego_env(tmp_path / "profiles")
        result = await ego_async(
            "run", "demo-shop", "get_product", "--arg", "id=2", "--new-browser",
            "--start-url", f"demo-shop={shop.url}", "--json", env=env, cwd=tmp_path,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        product = json.loads(result.stdout)
        assert product["url"].startswith(shop.origin)
        bad = await ego_async(
            "run", "demo-shop", "get_product", "--start-url", "demo-shop=",
            env=env, cwd=tmp_path,
        )  # fmt: skip
        assert bad.returncode == 2
        assert "SITE=URL" in bad.stderr


async def test_ego_batch_takes_start_url_too(tmp_path: Path) -> None:
    with DemoServer() as shop:
        inputs = tmp_path / "in.jsonl"
        inputs.write_text('{"id": 1}\n{"id": 2}\n')
        output = tmp_path / "out.jsonl"
        result = await ego_async(
            "batch", "demo-shop", "get_product", "--input", str(inputs), "--output", str(output),
            "--start-url", f"demo-shop={shop.url}", "--json",
            env=ego_env(tmp_path / "profiles"), cwd=tmp_path,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        lines = [json.loads(line) for line in output.read_text().splitlines()]
        assert sorted(line["index"] for line in lines) == [0, 1]
        assert all(line["ok"] and line["result"]["url"].startswith(shop.origin) for line in lines)
