"""``ego mcp`` as an agent uses it beyond the learnings: saving a tool (and hearing the list
change), confirming an irreversible one, and the page verbs (screenshot, console, wait,
keys, hover, options, uploads, history, tabs, dialogs), through the MCP SDK's stdio client.

One server process (with its own workspace and headless Chrome) serves the module, on pages
the session's local :class:`~tests.helpers.page_server.PageServer` serves.
"""

from __future__ import annotations

import asyncio
import base64
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp.types import ImageContent

from ego.skills import export_skill
from tests.helpers.browsers import HANG
from tests.helpers.images import png_size
from tests.helpers.mcp_client import McpClient, serving, text_of, value_of
from tests.helpers.page_server import PageServer

# Tests that start Chrome are marked `chrome` one by one (or through a browser fixture);
# the rest need none and run in the fast tier.


@pytest.fixture(scope="module")
async def agent(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[McpClient]:
    base = tmp_path_factory.mktemp("mcp-verbs")
    # Files the tools read or write must be inside the server's output folder.
    output = base / "out"
    output.mkdir()
    async with serving(base, "--output-dir", str(output), workspace=base / "ws") as client:
        client.output = output
        yield client


async def changed(agent: McpClient, timeout: float = 15) -> None:
    """Wait (bounded) for notifications/tools/list_changed, then re-arm."""
    await asyncio.wait_for(agent.tools_changed.wait(), timeout)
    agent.tools_changed.clear()


# -- saving a tool: the list changes, the tool takes flat args, confirm gates it --------------

SEND = """async ({to, text}) => {
  const r = await fetch('/api/send', {method: 'POST', body: JSON.stringify({to, text})});
  return {status: r.status, sent: (await r.json()).sent};
}
"""

ECHO_CONFIRM = "async ({confirm}) => ({echoed: confirm})"


@pytest.mark.chrome
async def test_a_saved_tool_appears_at_once_and_irreversible_needs_confirm(
    agent: McpClient, server: PageServer
) -> None:
    server.route("/outbox", "<title>Outbox</title><p>outbox</p>")
    server.route("/api/send", '{"sent": true}', content_type="application/json")
    site_id = f"mcp-{uuid.uuid4().hex[:8]}"
    await agent.call("navigate", {"url": server.url("/outbox")})
    agent.tools_changed.clear()

    saved = value_of(
        await agent.call(
            "save_browser_tool",
            {
                "site_id": site_id,
                "tool": "send",
                "source": SEND,
                "description": "Send a message",
                "args": {
                    "to": {"type": "string", "required": True},
                    "text": {"type": "string", "required": True},
                },
                "side_effect": "irreversible",
            },
        )
    )
    name = f"{site_id}__send"
    assert saved["mcp_tool"] == name
    await changed(agent)
    tools = await agent.tools()
    assert name in tools
    schema = tools[name].input_schema
    assert schema["required"] == ["to", "text"]
    assert set(schema["properties"]) == {"to", "text", "confirm"}
    assert tools[name].annotations is not None
    assert tools[name].annotations.destructive_hint is True

    def posts() -> int:
        return sum(
            1 for method, path, *_ in server.requests if (method, path) == ("POST", "/api/send")
        )

    before = posts()
    refused = await agent.call(name, {"to": "ada", "text": "hi"})
    assert refused.is_error is True
    assert "confirm: true" in text_of(refused)
    assert "confirm=True" not in text_of(refused)
    assert posts() == before

    sent = value_of(await agent.call(name, {"to": "ada", "text": "hi", "confirm": True}))
    assert sent == {"status": 200, "sent": True}
    assert posts() == before + 1

    # A re-save and a restore change the tool; each says so.
    value_of(
        await agent.call(
            "save_browser_tool",
            {"site_id": site_id, "tool": "send", "source": SEND, "description": "Send a note"},
        )
    )
    await changed(agent)
    assert (await agent.tools())[name].description.startswith(f"[{site_id}] Send a note")
    history = value_of(await agent.call("tool_history", {"site_id": site_id, "tool": "send"}))
    assert len(history) == 2
    restored = value_of(
        await agent.call(
            "restore_tool", {"site_id": site_id, "tool": "send", "version": history[1]["version"]}
        )
    )
    assert restored["mcp_tool"] == name
    await changed(agent)
    assert (await agent.tools())[name].description.startswith(f"[{site_id}] Send a message")


@pytest.mark.chrome
async def test_an_irreversible_tool_with_its_own_confirm_arg(
    agent: McpClient, server: PageServer
) -> None:
    server.route("/echo", "<title>Echo</title><p>echo</p>")
    site_id = f"mcp-{uuid.uuid4().hex[:8]}"
    await agent.call("navigate", {"url": server.url("/echo")})
    value_of(
        await agent.call(
            "save_browser_tool",
            {
                "site_id": site_id,
                "tool": "echo",
                "source": ECHO_CONFIRM,
                "description": "Echo the confirm arg",
                "args": {"confirm": {"type": "string", "required": True}},
                "side_effect": "irreversible",
            },
        )
    )
    name = f"{site_id}__echo"
    schema = (await agent.tools())[name].input_schema
    # The tool keeps its arg; ego's confirmation is ego_confirm.
    assert schema["properties"]["confirm"] == {"type": "string"}
    assert schema["properties"]["ego_confirm"]["type"] == "boolean"
    refused = await agent.call(name, {"confirm": "yes"})
    assert refused.is_error is True
    assert "ego_confirm: true" in text_of(refused)
    echoed = value_of(await agent.call(name, {"confirm": "yes", "ego_confirm": True}))
    assert echoed == {"echoed": "yes"}


# -- page verbs -------------------------------------------------------------------------------

BOX_PAGE = """<!doctype html><title>Box</title>
<style>body { margin: 0 } #box { width: 120px; height: 80px; background: #c33 }</style>
<div id="box"></div>
"""


@pytest.mark.chrome
async def test_take_screenshot_returns_a_png(agent: McpClient, server: PageServer) -> None:
    await agent.call("navigate", {"url": server.route("/box", BOX_PAGE)})
    viewport = value_of(
        await agent.call(
            "evaluate",
            {"expression": "[innerWidth * devicePixelRatio, innerHeight * devicePixelRatio]"},
        )
    )
    shot = await agent.call("take_screenshot")
    assert not shot.is_error, text_of(shot)
    images = [part for part in shot.content if isinstance(part, ImageContent)]
    assert len(images) == 1
    assert images[0].mime_type == "image/png"
    data = base64.b64decode(images[0].data)
    assert list(png_size(data)) == viewport
    assert shot.structured_content is not None
    assert shot.structured_content["bytes"] == len(data)
    assert "png" in text_of(shot)

    element = await agent.call("take_screenshot", {"selector": "#box"})
    box = base64.b64decode(next(p for p in element.content if isinstance(p, ImageContent)).data)
    ratio = viewport[0] / value_of(await agent.call("evaluate", {"expression": "innerWidth"}))
    assert png_size(box) == (round(120 * ratio), round(80 * ratio))

    jpeg = await agent.call("take_screenshot", {"format": "jpeg", "quality": 50})
    image = next(p for p in jpeg.content if isinstance(p, ImageContent))
    assert image.mime_type == "image/jpeg"
    assert base64.b64decode(image.data)[:3] == b"\xff\xd8\xff"


CONSOLE_PAGE = """<!doctype html><title>Console</title>
<script>
console.log("hello %s", "mcp");
console.warn("careful");
</script>
<script>throw new Error("boom at load");</script>
"""


@pytest.mark.chrome
async def test_list_console_messages(agent: McpClient, server: PageServer) -> None:
    url = server.route("/console", CONSOLE_PAGE)
    await agent.call("navigate", {"url": url})
    messages = value_of(await agent.call("list_console_messages"))
    mine = [m for m in messages if m["url"] == url]
    by_text = {m["text"]: m for m in mine}
    assert by_text["hello mcp"]["level"] == "log"
    assert by_text["hello mcp"]["line"] == 3
    assert by_text["careful"]["level"] == "warning"
    boom = [m for m in mine if "boom at load" in m["text"]]
    assert len(boom) == 1
    assert boom[0]["level"] == "error"
    assert boom[0]["exception"] is True

    errors = value_of(await agent.call("list_console_messages", {"level": "error"}))
    assert errors
    assert all(m["level"] == "error" for m in errors)


TIMER_PAGE = """<!doctype html><title>Timer</title><p id="status">Loading</p>
<script>
setTimeout(() => {
  document.getElementById("status").textContent = "Results are ready";
  const done = document.createElement("div"); done.id = "done"; document.body.append(done);
}, 400);
</script>
"""


@pytest.mark.chrome
async def test_wait_for_text_that_appears_after_a_timer(
    agent: McpClient, server: PageServer
) -> None:
    await agent.call("navigate", {"url": server.route("/timer", TIMER_PAGE)})
    waited = value_of(await agent.call("wait_for", {"text": "Results are ready", "timeout": 10}))
    assert waited["waited_for"] == {"text": "Results are ready"}
    status = value_of(
        await agent.call(
            "evaluate", {"expression": "document.getElementById('status').textContent"}
        )
    )
    assert status == "Results are ready"
    assert not (await agent.call("wait_for", {"selector": "#done", "timeout": 10})).is_error

    missing = await agent.call("wait_for", {"text": "never shown", "timeout": 0.5})
    assert missing.is_error is True
    assert "never shown" in text_of(missing)


FORM_PAGE = """<!doctype html><title>Form</title>
<input id="q" autofocus>
<select id="size" multiple><option value="s">Small</option><option value="m">Medium</option>
<option value="l">Large</option></select>
<input id="file" type="file">
<div id="menu" style="width:100px;height:40px">menu</div>
<p id="log"></p>
<script>
const log = (t) => document.getElementById("log").textContent += t + ";";
document.getElementById("q").addEventListener("keydown", (e) => log("key:" + e.key));
document.getElementById("menu").addEventListener("mouseover", () => log("hover"));
document.getElementById("file").addEventListener("change", (e) =>
  log("file:" + [...e.target.files].map((f) => f.name + "/" + f.size).join(",")));
</script>
"""


@pytest.mark.chrome
async def test_press_hover_select_and_upload(
    agent: McpClient, server: PageServer, tmp_path: Path
) -> None:
    await agent.call("navigate", {"url": server.route("/form", FORM_PAGE)})
    await agent.call("click", {"selector": "#q"})
    assert value_of(await agent.call("press_key", {"key": "Enter"}))["pressed"] == "Enter"
    assert value_of(await agent.call("hover", {"selector": "#menu"}))["hovered"] == "#menu"
    selected = value_of(
        await agent.call("select_option", {"selector": "#size", "values": ["m", "l"]})
    )
    assert selected["selected"] == ["m", "l"]
    upload = agent.output / "note.txt"
    upload.write_text("twelve bytes")
    uploaded = await agent.call("upload_file", {"selector": "#file", "paths": [str(upload)]})
    assert not uploaded.is_error, text_of(uploaded)

    log = value_of(
        await agent.call("evaluate", {"expression": "document.getElementById('log').textContent"})
    )
    assert "key:Enter;" in log
    assert "hover;" in log
    assert "file:note.txt/12;" in log
    chosen = value_of(
        await agent.call(
            "evaluate",
            {"expression": "[...document.querySelector('#size').selectedOptions].map(o=>o.value)"},
        )
    )
    assert chosen == ["m", "l"]


@pytest.mark.chrome
async def test_history_reload_and_tabs(agent: McpClient, server: PageServer) -> None:
    first = server.route("/first", "<title>First</title><p>one</p>")
    second = server.route("/second", "<title>Second</title><p>two</p>")
    await agent.call("navigate", {"url": first})
    await agent.call("navigate", {"url": second})
    assert value_of(await agent.call("navigate_back"))["url"] == first
    assert value_of(await agent.call("navigate_forward"))["url"] == second
    await agent.call("evaluate", {"expression": "window.marker = 1"})
    reloaded = value_of(await agent.call("reload"))
    assert reloaded["title"] == "Second"
    assert value_of(await agent.call("evaluate", {"expression": "typeof window.marker"})) == (
        "undefined"
    )

    opened = value_of(await agent.call("navigate", {"url": first, "new_tab": True}))
    tabs = value_of(await agent.call("list_tabs"))
    current = [tab for tab in tabs if tab["current"]]
    assert [tab["id"] for tab in current] == [opened["id"]]
    other = next(tab for tab in tabs if tab["url"] == second)
    assert value_of(await agent.call("select_tab", {"id": other["id"]}))["title"] == "Second"
    assert value_of(await agent.call("evaluate", {"expression": "document.title"})) == "Second"

    closed = value_of(await agent.call("close_tab", {"id": opened["id"]}))
    assert closed["closed"] == opened["id"]
    assert opened["id"] not in {tab["id"] for tab in value_of(await agent.call("list_tabs"))}
    unknown = await agent.call("select_tab", {"id": "nope"})
    assert unknown.is_error is True
    assert "list_tabs" in text_of(unknown)


# -- dialogs: left open for the agent, which answers them with handle_dialog ------------------

DIALOG_PAGE = """<!doctype html><title>Dialogs</title><button id="arm">arm</button>
<script>
document.getElementById("arm").addEventListener("click", () => {
  addEventListener("beforeunload", (event) => { event.preventDefault(); event.returnValue = ""; });
});
</script>
"""


async def opens_dialog(agent: McpClient, expression: str, kind: str, message: str) -> None:
    """Run ``expression``; the dialog it opens fails the call at once, naming the dialog."""
    blocked = await agent.call("evaluate", {"expression": expression})
    assert blocked.is_error is True
    text = text_of(blocked)
    assert "DialogOpenError" in text
    assert f"{kind} dialog" in text
    assert repr(message) in text
    assert "handle_dialog" in text
    assert "tab." not in text
    # A new call fails at once too while the dialog is open: it ends within HANG, before the
    # tab's 30 s timeout it would otherwise wait out could fire.
    also = await asyncio.wait_for(agent.call("take_snapshot"), HANG)
    assert also.is_error is True
    assert "DialogOpenError" in text_of(also)


@pytest.mark.chrome
async def test_handle_each_dialog_type(agent: McpClient, server: PageServer) -> None:
    await agent.call("navigate", {"url": server.route("/dialogs", DIALOG_PAGE)})

    await opens_dialog(agent, "alert('Hello there')", "alert", "Hello there")
    answered = value_of(await agent.call("handle_dialog", {"accept": True}))
    assert (answered["type"], answered["message"], answered["answer"]) == (
        "alert",
        "Hello there",
        "accepted",
    )
    assert answered["open"] is False
    assert value_of(await agent.call("evaluate", {"expression": "1 + 1"})) == 2

    await opens_dialog(agent, "window.sure = confirm('Delete it?')", "confirm", "Delete it?")
    dismissed = value_of(await agent.call("handle_dialog", {"accept": False}))
    assert (dismissed["type"], dismissed["answer"]) == ("confirm", "dismissed")
    assert value_of(await agent.call("evaluate", {"expression": "window.sure"})) is False

    await opens_dialog(agent, "window.who = prompt('Your name?', 'x')", "prompt", "Your name?")
    prompted = value_of(await agent.call("handle_dialog", {"accept": True, "prompt_text": "Ada"}))
    assert (prompted["type"], prompted["prompt_text"]) == ("prompt", "Ada")
    assert value_of(await agent.call("evaluate", {"expression": "window.who"})) == "Ada"

    # beforeunload: a page that asks before it is left (after a user gesture, as Chrome wants).
    await agent.call("click", {"selector": "#arm"})
    after = server.route("/after-dialogs", "<title>After</title><p>left</p>")
    leaving = await agent.call("navigate", {"url": after})
    assert leaving.is_error is True
    assert "beforeunload dialog" in text_of(leaving)
    left = value_of(await agent.call("handle_dialog", {"accept": True}))
    assert (left["type"], left["answer"]) == ("beforeunload", "accepted")
    assert not (await agent.call("wait_for", {"url": "/after-dialogs", "timeout": 10})).is_error
    assert [d["type"] for d in left["recent"]][-4:] == [
        "alert",
        "confirm",
        "prompt",
        "beforeunload",
    ]

    nothing = await agent.call("handle_dialog", {"accept": True})
    assert nothing.is_error is True
    assert "no dialog is open" in text_of(nothing)


async def test_import_skill_says_the_list_changed(agent: McpClient, tmp_path: Path) -> None:
    skill_file = agent.output / "SKILL.md"
    skill_file.write_text(export_skill("shop.localhost/search-products"))
    agent.tools_changed.clear()
    imported = value_of(await agent.call("import_skill", {"path": str(skill_file)}))
    assert imported["skill_id"] == "shop.localhost/search-products"
    assert Path(imported["folder"], "SKILL.md").is_file()
    await changed(agent)

    again = await agent.call("import_skill", {"path": str(skill_file)})
    assert again.is_error is True
    assert "SkillExistsError" in text_of(again)
    assert "overwrite: true" in text_of(again)
    assert not (
        await agent.call("import_skill", {"path": str(skill_file), "overwrite": True})
    ).is_error
