"""``ego mcp`` driven by the MCP SDK's own stdio client, against real headless Chromium.

One server process serves the whole module: a background task owns the SDK's stdio client and
session (their cancel scopes must open and close in one task) while tests call tools through
it. The last test disconnects the client and checks that the server's Chrome is gone.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import CallToolResult, TextContent, Tool

from ego.demo import DemoServer
from tests.cli_helpers import alive, ego_env, is_chrome, process_tree, wait_gone

pytestmark = pytest.mark.chrome  # the MCP server under test launches Chrome

CORE_TOOLS = {
    "learn_context",
    "run_browser_tool",
    "run_skill",
    "list_sites",
    "navigate",
    "evaluate",
    "snapshot",
    "click",
    "type",
    "network_requests",
    "tabs",
}


class McpClient:
    """An ``ego mcp`` subprocess and a connected SDK ClientSession, owned by one task."""

    def __init__(self, env: dict[str, str], cwd: Path, errlog: Path) -> None:
        self.params = StdioServerParameters(
            command=sys.executable, args=["-m", "ego", "mcp"], env=env, cwd=str(cwd)
        )
        self.errlog = errlog
        self.session: ClientSession | None = None
        self.server: psutil.Process | None = None
        self.chromes_at_start: list[psutil.Process] = []
        self.descendants: dict[int, psutil.Process] = {}
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def start(self, timeout: float = 60) -> None:
        self._task = asyncio.create_task(self._run())
        ready = asyncio.create_task(self._ready.wait())
        done, _ = await asyncio.wait(
            {ready, self._task}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
        )
        if ready not in done:
            ready.cancel()
            if self._task in done:
                self._task.result()  # raises what went wrong
            raise AssertionError(f"the MCP server did not initialize within {timeout} s")

    async def _run(self) -> None:
        with self.errlog.open("w") as errlog:
            async with (
                stdio_client(self.params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                self.session = session
                self.server = _find_server()
                self.chromes_at_start = [p for p in process_tree(self.server) if is_chrome(p)]
                self._ready.set()
                await self._stop.wait()

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def remember_descendants(self) -> list[psutil.Process]:
        """The server's descendants now (Chrome, its helpers, the watchdog), remembered."""
        assert self.server is not None
        for process in process_tree(self.server):
            self.descendants.setdefault(process.pid, process)
        return list(self.descendants.values())

    async def call(self, name: str, arguments: dict[str, Any] | None = None) -> CallToolResult:
        assert self.session is not None
        assert self.running
        result = await asyncio.wait_for(self.session.call_tool(name, arguments or {}), 60)
        self.remember_descendants()
        return result

    async def close(self, timeout: float = 30) -> None:
        """Disconnect the client (closes the server's stdin) and wait for the transport."""
        if self._task is None:
            return
        self._stop.set()
        await asyncio.wait_for(self._task, timeout)


def _find_server() -> psutil.Process:
    for child in psutil.Process().children():
        try:
            if child.cmdline()[1:] == ["-m", "ego", "mcp"]:
                return child
        except psutil.Error:
            continue
    raise AssertionError("no `ego mcp` child process found")


def text_of(result: CallToolResult) -> str:
    return "\n".join(part.text for part in result.content if isinstance(part, TextContent))


def value_of(result: CallToolResult) -> Any:
    """A successful tool's JSON value (structured content when the tool declares a schema)."""
    assert not result.is_error, text_of(result)
    if result.structured_content is not None:
        content = result.structured_content
        return content["result"] if set(content) == {"result"} else content
    return json.loads(text_of(result))


@pytest.fixture(scope="module")
def shop() -> Iterator[DemoServer]:
    with DemoServer() as server:
        yield server


@pytest.fixture(scope="module")
async def mcp(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[McpClient]:
    base = tmp_path_factory.mktemp("mcp")
    client = McpClient(ego_env(base / "profiles"), base, base / "server-stderr.log")
    await client.start()
    try:
        yield client
    finally:
        if client.running:
            await client.close()


# -- listing ----------------------------------------------------------------------------------


async def test_lists_core_and_learning_tools_with_annotations(mcp: McpClient) -> None:
    assert mcp.session is not None
    listed = await asyncio.wait_for(mcp.session.list_tools(), 30)
    tools: dict[str, Tool] = {tool.name: tool for tool in listed.tools}
    assert set(tools) >= CORE_TOOLS
    assert {"demo-shop__list_products", "demo-shop__post_review"} <= set(tools)

    def hints(name: str) -> tuple[bool | None, bool | None]:
        annotations = tools[name].annotations
        assert annotations is not None, name
        return annotations.read_only_hint, annotations.destructive_hint

    assert hints("learn_context") == (True, False)
    assert hints("snapshot") == (True, False)
    assert hints("demo-shop__list_products") == (True, False)
    assert hints("demo-shop__post_review") == (False, True)
    assert hints("run_browser_tool")[0] is False
    assert "confirm" in tools["run_browser_tool"].input_schema["properties"]
    assert "confirm" in tools["demo-shop__post_review"].input_schema["properties"]
    # Chrome starts on the first tool call, not when a client connects.
    assert mcp.chromes_at_start == []


async def test_list_sites(mcp: McpClient) -> None:
    sites = {site["site_id"]: site for site in value_of(await mcp.call("list_sites"))}
    assert {"demo-shop", "x-com", "google-com"} <= set(sites)
    assert sites["demo-shop"]["valid"] is True


# -- learnings --------------------------------------------------------------------------------


async def test_learn_context_for_the_demo_shop(mcp: McpClient, shop: DemoServer) -> None:
    context = value_of(await mcp.call("learn_context", {"url": shop.url}))
    assert context["matched"] is True
    assert [site["site_id"] for site in context["sites"]] == ["demo-shop"]
    assert {"list_products", "post_review", "whoami"} <= {t["tool_name"] for t in context["tools"]}


async def test_run_browser_tool_on_the_demo_shop(mcp: McpClient, shop: DemoServer) -> None:
    navigated = value_of(await mcp.call("navigate", {"url": shop.url}))
    assert navigated["url"] == shop.url
    assert navigated["title"] == "Products · Ego Demo Shop"

    listed = value_of(
        await mcp.call(
            "run_browser_tool",
            {"site_id": "demo-shop", "tool": "list_products", "args": {"limit": 2}},
        )
    )
    assert listed["count"] == 2
    assert [product["id"] for product in listed["products"]] == [1, 2]
    # It ran in the DemoServer's tab (not at the manifest's startUrl port).
    assert all(p["url"].startswith(shop.origin + "/") for p in listed["products"])

    found = value_of(await mcp.call("demo-shop__search_products", {"args": {"query": "desk"}}))
    assert found["total"] == 2
    assert {p["name"] for p in found["products"]} == {"Mechanical Desk Clock", "Felt Desk Mat"}


async def test_bad_args_are_a_tool_error_naming_the_field(mcp: McpClient, shop: DemoServer) -> None:
    await mcp.call("navigate", {"url": shop.url})
    result = await mcp.call(
        "run_browser_tool",
        {"site_id": "demo-shop", "tool": "list_products", "args": {"limit": "many"}},
    )
    assert result.is_error is True
    text = text_of(result)
    assert "InvalidArgsError" in text
    assert "'limit'" in text

    unknown = await mcp.call("run_browser_tool", {"site_id": "demo-shop", "tool": "nope"})
    assert unknown.is_error is True
    assert "nope" in text_of(unknown)
    assert "list_products" in text_of(unknown)


async def test_irreversible_tool_refused_without_confirm(mcp: McpClient, shop: DemoServer) -> None:
    await mcp.call("navigate", {"url": shop.url})
    reviews_before = len(shop.state.reviews)
    args = {"product_id": 3, "rating": 5, "text": "Lovely."}
    for name, arguments in (
        ("demo-shop__post_review", {"args": args}),
        ("run_browser_tool", {"site_id": "demo-shop", "tool": "post_review", "args": args}),
    ):
        result = await mcp.call(name, arguments)
        assert result.is_error is True, name
        assert "confirm" in text_of(result), name
    assert len(shop.state.reviews) == reviews_before


async def test_needs_login_comes_back_with_its_recovery(mcp: McpClient, shop: DemoServer) -> None:
    await mcp.call("navigate", {"url": shop.url})
    result = await mcp.call("demo-shop__get_orders")
    assert result.is_error is True
    text = text_of(result)
    assert "NEEDS_LOGIN" in text
    assert "log in" in text.lower()


# -- page capabilities ------------------------------------------------------------------------

WAIT_SENT = """
new Promise((resolve, reject) => {
  const sent = () => document.querySelector('[data-testid="contact-status"][data-state="sent"]');
  if (sent()) return resolve(sent().dataset.messageId);
  const timer = setTimeout(() => reject(new Error("no sent status within 10 s")), 10000);
  new MutationObserver((_, observer) => {
    if (sent()) { observer.disconnect(); clearTimeout(timer); resolve(sent().dataset.messageId); }
  }).observe(document.body, {subtree: true, attributes: true, childList: true});
})
"""


async def test_snapshot_type_click_and_network_on_the_contact_page(
    mcp: McpClient, shop: DemoServer
) -> None:
    contact = shop.url_for("/contact")
    await mcp.call("navigate", {"url": contact})
    outline = value_of(await mcp.call("snapshot"))
    assert '"Contact us"' in outline

    def selector(role: str, label: str) -> str:
        """The reusable selector the snapshot gives for an element (as an agent would)."""
        match = re.search(rf'(?m)^\s*{role} "{label}".*\{{(.+)\}}$', outline)
        assert match, f"no {role} {label!r} in the snapshot:\n{outline}"
        return match.group(1)

    fields = {"name": "Ada MCP", "email": "ada@example.com", "message": "Hello from MCP."}
    for field, text in fields.items():
        typed = await mcp.call(
            "type", {"selector": selector("textbox", field.title()), "text": text}
        )
        assert not typed.is_error, text_of(typed)
    clicked = await mcp.call("click", {"selector": selector("button", "Send message")})
    assert not clicked.is_error, text_of(clicked)
    message_id = value_of(await mcp.call("evaluate", {"expression": WAIT_SENT}))

    sent = [m for m in shop.state.contact_messages if str(m["id"]) == str(message_id)]
    assert len(sent) == 1, shop.state.contact_messages
    assert {key: sent[0][key] for key in fields} == fields

    requests = value_of(await mcp.call("network_requests"))
    assert any(r["method"] == "GET" and r["url"] == contact for r in requests), requests
    posts = [r for r in requests if r["method"] == "POST" and r["url"].endswith("/api/contact")]
    assert len(posts) == 1, requests
    assert posts[0]["status"] == 201

    tabs = value_of(await mcp.call("tabs"))
    assert any(tab["url"] == contact for tab in tabs), tabs


# -- shutdown (keep last: it disconnects the module's client) ---------------------------------


async def test_no_chrome_left_after_the_client_disconnects(mcp: McpClient) -> None:
    await mcp.call("tabs")  # Chrome is running (started now if this test runs alone)
    descendants = mcp.remember_descendants()
    chromes = [process for process in descendants if is_chrome(process)]
    assert alive(chromes), "the server should be running a Chrome"
    assert mcp.server is not None
    server = mcp.server

    await mcp.close()
    assert await wait_gone([server, *descendants], timeout=20) == []
    log = mcp.errlog.read_text(errors="replace")
    assert "Traceback" not in log, log[-3000:]
