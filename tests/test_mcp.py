"""``ego mcp`` driven by the MCP SDK's own stdio client, against real headless Chromium.

One server process serves the whole module: a background task owns the SDK's stdio client and
session (their cancel scopes must open and close in one task) while tests call tools through
it. The last test disconnects the client and checks that the server's Chrome is gone.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import AsyncIterator, Iterator
from typing import Any

import psutil
import pytest
from jsonschema import Draft202012Validator
from jsonschema.validators import validator_for

from ego.demo import DemoServer
from ego.learning.catalog.manifest import args_schema
from ego.learning.catalog.registry import project_learnings_dir
from ego.mcp.learning_tools import mcp_name
from tests.helpers.mcp_client import McpClient, serving, text_of, value_of
from tests.helpers.processes import alive, is_chrome, wait_gone

# Tests that start Chrome are marked `chrome` one by one (or through a browser fixture);
# the rest need none and run in the fast tier.

CORE_TOOLS = {
    "learn_context",
    "run_browser_tool",
    "run_skill",
    "list_sites",
    "navigate",
    "evaluate",
    "take_snapshot",
    "selector_for",
    "click",
    "type",
    "list_network_requests",
    "get_network_request",
    "list_tabs",
    "select_tab",
    "close_tab",
    "navigate_back",
    "navigate_forward",
    "reload",
    "take_screenshot",
    "list_console_messages",
    "wait_for",
    "press_key",
    "hover",
    "select_option",
    "upload_file",
    "handle_dialog",
    "save_browser_tool",
    "save_note",
    "tool_history",
    "restore_tool",
    "import_skill",
}


@pytest.fixture(scope="module")
def shop() -> Iterator[DemoServer]:
    with DemoServer() as server:
        yield server


@pytest.fixture(scope="module")
async def mcp(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[McpClient]:
    async with serving(tmp_path_factory.mktemp("mcp")) as client:
        yield client


# -- listing ----------------------------------------------------------------------------------


async def test_lists_core_and_learning_tools_with_annotations(mcp: McpClient) -> None:
    assert mcp.session is not None
    tools = await mcp.tools()
    assert set(tools) >= CORE_TOOLS
    assert {"demo-shop__list_products", "demo-shop__post_review"} <= set(tools)
    # A client that caches the list is told it can change (a saved tool appears).
    capabilities = mcp.initialized.capabilities.tools
    assert capabilities is not None
    assert capabilities.list_changed is True

    def hints(name: str) -> tuple[bool | None, bool | None]:
        annotations = tools[name].annotations
        assert annotations is not None, name
        return annotations.read_only_hint, annotations.destructive_hint

    assert hints("learn_context") == (True, False)
    assert hints("take_snapshot") == (True, False)
    assert hints("selector_for") == (True, False)
    assert hints("take_screenshot") == (True, False)
    assert hints("demo-shop__list_products") == (True, False)
    assert hints("demo-shop__post_review") == (False, True)
    assert hints("run_browser_tool")[0] is False
    assert "confirm" in tools["run_browser_tool"].input_schema["properties"]
    assert "confirm" in tools["demo-shop__post_review"].input_schema["properties"]
    # Only irreversible tools take confirm.
    assert "confirm" not in tools["demo-shop__list_products"].input_schema["properties"]
    assert "confirm" not in tools["demo-shop__add_to_cart"].input_schema["properties"]
    # Descriptions are written for a model: no Python reprs of schemas.
    for tool in tools.values():
        description = tool.description or ""
        assert description.strip(), tool.name
        assert "'additionalProperties'" not in description, tool.name
        assert "{'" not in description, tool.name
        assert "confirm=" not in description, tool.name
    # Chrome starts on the first tool call, not when a client connects.
    assert mcp.chromes_at_start == []


def manifest_tools() -> dict[str, tuple[dict[str, Any], str]]:
    """Every learning tool of the project's manifests: MCP name -> (its args as the manifest
    file writes them, its side effect)."""
    found: dict[str, tuple[dict[str, Any], str]] = {}
    for manifest_file in sorted(project_learnings_dir().glob("*/manifest.json")):
        manifest = json.loads(manifest_file.read_text())
        for kind in ("browserTools", "pythonTools"):
            for name, entry in (manifest.get(kind) or {}).items():
                side_effect = entry.get("sideEffect", "read")
                found[mcp_name(manifest["id"], name)] = (entry.get("args") or {}, side_effect)
    return found


async def test_every_site_tool_takes_its_manifest_schema_at_the_top(mcp: McpClient) -> None:
    tools = await mcp.tools()
    declared = manifest_tools()
    assert "demo-shop__search_products" in declared
    for name, (raw_args, side_effect) in declared.items():
        assert name in tools, name
        schema = dict(tools[name].input_schema)
        validator_for(schema).check_schema(schema)  # a valid JSON Schema
        properties = dict(schema.get("properties", {}))
        if side_effect == "irreversible":
            confirm = properties.pop("confirm")
            assert (confirm["type"], confirm["default"]) == ("boolean", False), name
        else:
            assert "confirm" not in properties, name
        expected = args_schema(raw_args)
        expected.setdefault("type", "object")
        assert {**schema, "properties": properties} == {
            **expected,
            "properties": expected.get("properties", {}),
        }, name

    search = tools["demo-shop__search_products"].input_schema
    assert search["required"] == ["query"]
    assert search["additionalProperties"] is False
    assert Draft202012Validator(search).is_valid({"query": "desk"})
    assert not Draft202012Validator(search).is_valid({"args": {"query": "desk"}})


@pytest.mark.chrome
async def test_list_sites(mcp: McpClient) -> None:
    sites = {site["site_id"]: site for site in value_of(await mcp.call("list_sites"))}
    assert {"demo-shop", "x-com", "google-com"} <= set(sites)
    assert sites["demo-shop"]["valid"] is True


# -- learnings --------------------------------------------------------------------------------


@pytest.mark.chrome
async def test_learn_context_for_the_demo_shop(mcp: McpClient, shop: DemoServer) -> None:
    answer = await mcp.call("learn_context", {"url": shop.url})
    context = value_of(answer)
    assert context["matched"] is True
    assert [site["site_id"] for site in context["sites"]] == ["demo-shop"]
    tools = {t["tool_name"]: t for t in context["tools"]}
    assert {"list_products", "post_review", "whoami"} <= set(tools)
    assert tools["search_products"]["mcp_tool"] == "demo-shop__search_products"
    assert tools["search_products"]["example"] == {"query": "desk"}
    # The text names each tool as it is called, with its args and an example to call it with
    # (confirm: true for an irreversible one).
    lines = text_of(answer).splitlines()
    assert "tools, each the MCP tool demo-shop__NAME (* required, =example):" in lines
    search = next(line for line in lines if line.startswith("search_products("))
    assert search.startswith('search_products(query*: str="desk", category: str,'), search
    review = next(line for line in lines if line.startswith("post_review("))
    assert "confirm*=true) irreversible, login, " in review, review
    assert any(
        line.startswith('skills, each run_skill {skill_id: "shop.localhost/') for line in lines
    )
    # The full form keeps each example as the MCP call.
    full = value_of(await mcp.call("learn_context", {"url": shop.url, "detail": "full"}))
    examples = {t["tool_name"]: t["example"] for t in full["tools"]}
    name, _, arguments = examples["search_products"].partition(" ")
    assert (name, json.loads(arguments)) == ("demo-shop__search_products", {"query": "desk"})
    name, _, arguments = examples["post_review"].partition(" ")
    assert name == "demo-shop__post_review"
    assert json.loads(arguments)["confirm"] is True
    skills = [t for t in full["tools"] if t["kind"] == "skill"]
    assert all(t["example"].startswith("run_skill {") for t in skills), skills


@pytest.mark.chrome
async def test_navigate_reads_a_bare_host_as_a_url(mcp: McpClient, shop: DemoServer) -> None:
    bare = shop.url_for("/cart").removeprefix("http://")
    navigated = value_of(await mcp.call("navigate", {"url": bare}))
    assert navigated["url"] == shop.url_for("/cart")


@pytest.mark.chrome
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

    # A site tool takes its own args at the top level, as its input schema says.
    found = value_of(await mcp.call("demo-shop__search_products", {"query": "desk"}))
    assert found["total"] == 2
    assert {p["name"] for p in found["products"]} == {"Mechanical Desk Clock", "Felt Desk Mat"}

    # The old nested shape is refused, naming the fix.
    nested = await mcp.call("demo-shop__search_products", {"args": {"query": "desk"}})
    assert nested.is_error is True
    assert "InvalidArgsError" in text_of(nested)
    assert "at the top level" in text_of(nested)

    # A list result: structured content under "result", and one JSON text block.
    products = await mcp.call("demo-shop__list_products", {"limit": 2})
    assert products.structured_content is not None
    assert json.loads(text_of(products)) == products.structured_content


@pytest.mark.chrome
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


@pytest.mark.chrome
async def test_irreversible_tool_refused_without_confirm(mcp: McpClient, shop: DemoServer) -> None:
    await mcp.call("navigate", {"url": shop.url})
    reviews_before = len(shop.state.reviews)
    args = {"product_id": 3, "rating": 5, "text": "Lovely."}
    for name, arguments in (
        ("demo-shop__post_review", args),
        ("run_browser_tool", {"site_id": "demo-shop", "tool": "post_review", "args": args}),
    ):
        result = await mcp.call(name, arguments)
        assert result.is_error is True, name
        text = text_of(result)
        assert "ConfirmationRequiredError" in text, name
        # The fix as an MCP caller types it, not Python's confirm=True.
        assert "confirm: true" in text, name
        assert "confirm=True" not in text, name
    assert len(shop.state.reviews) == reviews_before

    # With confirm: true it passes the gate (and then needs a login, which the test has not).
    confirmed = await mcp.call("demo-shop__post_review", {**args, "confirm": True})
    assert confirmed.is_error is True
    assert "NEEDS_LOGIN" in text_of(confirmed)
    assert "ConfirmationRequiredError" not in text_of(confirmed)
    assert len(shop.state.reviews) == reviews_before


@pytest.mark.chrome
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


@pytest.mark.chrome
async def test_snapshot_type_click_and_network_on_the_contact_page(
    mcp: McpClient, shop: DemoServer
) -> None:
    contact = shop.url_for("/contact")
    await mcp.call("navigate", {"url": contact})
    outline = value_of(await mcp.call("take_snapshot"))
    assert '"Contact us"' in outline

    async def selector(role: str, label: str) -> str:
        """The durable selector for the element the snapshot shows with a ref (as an agent
        keeping it for a learning would ask)."""
        match = re.search(rf'(?m)^\s*{role} "{label}".*\[ref=(e\d+)\]', outline)
        assert match, f"no {role} {label!r} with a ref in the snapshot:\n{outline}"
        found = value_of(await mcp.call("selector_for", {"ref": match.group(1)}))
        assert found["ref"] == match.group(1)
        return str(found["selector"])

    fields = {"name": "Ada MCP", "email": "ada@example.com", "message": "Hello from MCP."}
    for field, text in fields.items():
        typed = await mcp.call(
            "type", {"selector": await selector("textbox", field.title()), "text": text}
        )
        assert not typed.is_error, text_of(typed)
    clicked = await mcp.call("click", {"selector": await selector("button", "Send message")})
    assert not clicked.is_error, text_of(clicked)
    message_id = value_of(await mcp.call("evaluate", {"expression": WAIT_SENT}))

    sent = [m for m in shop.state.contact_messages if str(m["id"]) == str(message_id)]
    assert len(sent) == 1, shop.state.contact_messages
    assert {key: sent[0][key] for key in fields} == fields

    requests = value_of(await mcp.call("list_network_requests"))
    assert any(r["method"] == "GET" and r["url"] == contact for r in requests), requests
    posts = [r for r in requests if r["method"] == "POST" and r["url"].endswith("/api/contact")]
    assert len(posts) == 1, requests
    assert posts[0]["status"] == 201

    tabs = value_of(await mcp.call("list_tabs"))
    assert any(tab["url"] == contact and tab["current"] for tab in tabs), tabs

    # A request's response body, by the id list_network_requests gives.
    detail = value_of(await mcp.call("get_network_request", {"id": posts[0]["id"]}))
    assert detail["status"] == 201
    assert detail["base64_encoded"] is False
    assert str(message_id) in detail["body"]

    # A missing element: the fix names the MCP tool, not tab.snapshot().
    missing = await mcp.call("click", {"selector": "#no-such-thing"})
    assert missing.is_error is True
    assert "ElementNotFoundError" in text_of(missing)
    assert "take_snapshot" in text_of(missing)
    assert "tab." not in text_of(missing)


# -- the browser ------------------------------------------------------------------------------


@pytest.mark.chrome
async def test_the_servers_chrome_opens_no_port(mcp: McpClient) -> None:
    # Chrome is running (started now if this test runs alone).
    assert isinstance(value_of(await mcp.call("list_tabs")), list)
    chromes = [process for process in mcp.remember_descendants() if is_chrome(process)]
    # The browser process: its helpers (zygotes, renderers) carry a --type= flag.
    browsers = [each for each in alive(chromes) if "--type=" not in " ".join(each.cmdline())]
    assert len(browsers) == 1, "ego mcp should run one Chrome"
    assert "--remote-debugging-pipe" in browsers[0].cmdline()
    assert not [flag for flag in browsers[0].cmdline() if "--remote-debugging-port" in flag]
    listening = []
    for process in alive(chromes):
        with contextlib.suppress(psutil.NoSuchProcess):  # a helper process may end meanwhile
            connections = process.net_connections(kind="tcp")
            listening += [conn.laddr for conn in connections if conn.status == psutil.CONN_LISTEN]
    assert listening == []


# -- shutdown (keep last: it disconnects the module's client) ---------------------------------


@pytest.mark.chrome
async def test_no_chrome_left_after_the_client_disconnects(mcp: McpClient) -> None:
    # Chrome is running (started now if this test runs alone).
    assert isinstance(value_of(await mcp.call("list_tabs")), list)
    descendants = mcp.remember_descendants()
    chromes = [process for process in descendants if is_chrome(process)]
    assert alive(chromes), "the server should be running a Chrome"
    assert mcp.server is not None
    server = mcp.server

    await mcp.close()
    assert await wait_gone([server, *descendants], timeout=20) == []
    log = mcp.errlog.read_text(errors="replace")
    assert "Traceback" not in log, log[-3000:]
