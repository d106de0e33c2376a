"""A save changes only what it names; history keeps whole entries; a domain keeps its port.

Re-saving a tool through the Python API, ``ego save-tool`` or the MCP tool keeps every field
of its manifest entry the caller did not give (args, side effect, returns, timeout, auth,
description, keys a person added); ``clear`` removes one explicitly. ``tool_history`` and
``ego history`` carry each version's whole entry and say what changed between versions, and
``restore`` brings back source and entry. A site made from a tab on ``127.0.0.1:<port>``
gets that port in its domain, and a bare ``localhost``/loopback domain is refused.

Tools run against the demo shop (``ego.demo``) and the session's headless Chrome; the CLI
and MCP tests that start a Chrome of their own are marked ``chrome``.
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

import ego
from ego.cli.app import Settings
from ego.cli.save_commands import history, restore, save_tool
from ego.cli.save_commands import save_note as save_note_command
from ego.demo import DemoServer
from ego.errors import InvalidArgsError, SaveRefusedError
from ego.learning.catalog.matching import domain_of, is_too_broad, match_domain
from ego.learning.catalog.registry import Learnings
from ego.learning.catalog.validate import validate_site
from ego.learning.plan.draft import ToolDraft
from ego.learning.plan.save_plan import plan_browser_tool
from ego.learning.save.notes import save_note
from ego.learning.save.store import write_tool
from ego.site import Site
from tests.helpers.mcp_client import error_text, payload
from tests.helpers.page_server import PageServer

ROOT = Path(__file__).resolve().parent.parent

GET_V1 = "async ({id}) => ({got: id, v: 1})\n"
GET_V2 = "async ({id}) => ({got: id, v: 2})\n"
GET_V3 = "async ({id}) => ({got: id, v: 3})\n"
ARGS = {"id": {"type": "string", "required": True, "description": "the item's id"}}
ARGS_WIDE = {**ARGS, "full": {"type": "boolean"}}
RETURNS = {"type": "object", "required": ["got"]}


# -- fixtures -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo() -> Iterator[DemoServer]:
    server = DemoServer(port=0).start()
    yield server
    server.close()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return tmp_path / "ws"


@pytest.fixture
def learnings(workspace: Path, tmp_path: Path) -> Learnings:
    return Learnings(workspace=workspace, project=tmp_path / "no-project")


@pytest.fixture
def site(browser: ego.Browser, learnings: Learnings) -> Site:
    return Site(browser, learnings)


@pytest.fixture
async def shop_tab(browser: ego.Browser, demo: DemoServer) -> AsyncIterator[ego.Tab]:
    tab = await browser.new_tab(demo.url)
    yield tab
    if not browser.closed:
        await tab.close()


@pytest.fixture
def site_id() -> str:
    """A site id of its own per test: localStorage on the demo origin outlives a test."""
    return f"merge-{uuid.uuid4().hex[:8]}"


def manifest_of(workspace: Path, site_id: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (workspace / "learnings" / site_id / "manifest.json").read_text()
    )
    return data


def entry_of(workspace: Path, site_id: str, tool: str) -> dict[str, Any]:
    entry: dict[str, Any] = manifest_of(workspace, site_id)["browserTools"][tool]
    return entry


def edit_entry(workspace: Path, site_id: str, tool: str, **keys: Any) -> None:
    """Change a tool's manifest entry by hand, as a person editing manifest.json would."""
    path = workspace / "learnings" / site_id / "manifest.json"
    raw = json.loads(path.read_text())
    raw["browserTools"][tool].update(keys)
    path.write_text(json.dumps(raw, indent=2))


def seed(workspace: Path, site_id: str, **fields: Any) -> None:
    """Save the tool ``get`` into ``site_id`` without a browser (plan and write only)."""
    draft = ToolDraft(
        site_id=site_id,
        tool="get",
        source=GET_V1,
        domains=["shop.localhost"],
        **{"description": "Get one item", **fields},
    )
    learnings = Learnings(workspace=workspace, project=workspace / "no-project")
    write_tool(plan_browser_tool(learnings, draft))


# -- a save changes only what it names (Python) ---------------------------------------------------


async def test_a_resave_keeps_every_field_it_does_not_name(
    site: Site, shop_tab: ego.Tab, workspace: Path, site_id: str
) -> None:
    await site.save_browser_tool(
        site_id, "get", GET_V1, "Get one item", ARGS, RETURNS, "write", auth="session", tab=shop_tab
    )
    # A person adds a timeout and a key ego does not know.
    edit_entry(workspace, site_id, "get", timeout=7, **{"x-owner": "team-a"})
    before = entry_of(workspace, site_id, "get")

    saved = await site.save_browser_tool(site_id, "get", GET_V2, tab=shop_tab)

    assert entry_of(workspace, site_id, "get") == before
    assert before["sideEffect"] == "write"  # not silently made retryable
    assert saved.changed == ("source",)
    assert await site.run_browser_tool(site_id, "get", {"id": "a"}, tab=shop_tab) == {
        "got": "a",
        "v": 2,
    }
    # The same source again, naming nothing: nothing to write.
    again = await site.save_browser_tool(site_id, "get", GET_V2, tab=shop_tab)
    assert again.unchanged
    assert again.changed == ()


async def test_a_resave_changes_exactly_the_fields_given(
    site: Site, shop_tab: ego.Tab, workspace: Path, site_id: str
) -> None:
    await site.save_browser_tool(
        site_id, "get", GET_V1, "Get one item", ARGS, RETURNS, "write", tab=shop_tab
    )
    edit_entry(workspace, site_id, "get", timeout=7)
    saved = await site.save_browser_tool(
        site_id, "get", GET_V1, side_effect="irreversible", args=ARGS_WIDE, tab=shop_tab
    )
    assert saved.changed == ("args", "sideEffect")
    assert entry_of(workspace, site_id, "get") == {
        "description": "Get one item",
        "path": "browser-tools/get.js",
        "args": ARGS_WIDE,
        "sideEffect": "irreversible",
        "auth": "none",
        "returns": RETURNS,
        "timeout": 7,
    }


async def test_clearing_a_field_is_explicit(
    site: Site, shop_tab: ego.Tab, workspace: Path, site_id: str
) -> None:
    await site.save_browser_tool(
        site_id, "get", GET_V1, "Get one item", ARGS, RETURNS, "write", tab=shop_tab
    )
    edit_entry(workspace, site_id, "get", timeout=7)
    saved = await site.save_browser_tool(
        site_id, "get", GET_V1, clear=("returns", "timeout"), tab=shop_tab
    )
    assert saved.changed == ("returns", "timeout")
    entry = entry_of(workspace, site_id, "get")
    assert "returns" not in entry
    assert "timeout" not in entry
    assert entry["args"] == ARGS
    assert entry["sideEffect"] == "write"

    await site.save_browser_tool(site_id, "get", "async () => 'none'", clear=["args"], tab=shop_tab)
    assert entry_of(workspace, site_id, "get")["args"] == {}  # no args
    with pytest.raises(InvalidArgsError):
        await site.run_browser_tool(site_id, "get", {"id": "a"}, tab=shop_tab)

    before = manifest_of(workspace, site_id)
    with pytest.raises(SaveRefusedError) as unknown:
        await site.save_browser_tool(site_id, "get", GET_V1, clear=["description"], tab=shop_tab)
    assert unknown.value.reason == "manifest"
    assert "only args, returns, timeout can be cleared" in str(unknown.value)
    with pytest.raises(SaveRefusedError) as both:
        await site.save_browser_tool(
            site_id, "get", GET_V1, returns=RETURNS, clear=["returns"], tab=shop_tab
        )
    assert "both given and cleared (clear=('returns',))" in str(both.value)
    assert manifest_of(workspace, site_id) == before


async def test_a_new_tool_keeps_todays_defaults_and_needs_a_description(
    site: Site, shop_tab: ego.Tab, workspace: Path, site_id: str
) -> None:
    with pytest.raises(SaveRefusedError) as caught:
        await site.save_browser_tool(site_id, "get", GET_V1, tab=shop_tab)
    assert caught.value.reason == "manifest"
    assert "'get' is a new tool: give it a description (description=)" in str(caught.value)
    assert not (workspace / "learnings" / site_id).exists()

    saved = await site.save_browser_tool(site_id, "get", GET_V1, "Get one item", tab=shop_tab)
    assert entry_of(workspace, site_id, "get") == {
        "description": "Get one item",
        "path": "browser-tools/get.js",
        "args": {},
        "sideEffect": "read",
        "auth": "none",
    }
    assert saved.changed == ("source", "description", "args", "sideEffect", "auth")


async def test_a_builtin_tool_resaved_keeps_its_entry_in_the_copy(
    browser: ego.Browser, shop_tab: ego.Tab, workspace: Path
) -> None:
    site = Site(browser, Learnings(workspace=workspace))  # the real project learnings
    project_entry = json.loads((ROOT / "learnings/demo-shop/manifest.json").read_text())[
        "browserTools"
    ]["list_products"]
    source = (ROOT / "learnings/demo-shop/browser-tools/list_products.js").read_text()
    saved = await site.save_browser_tool("demo-shop", "list_products", source + "\n// v2\n")
    assert saved.shadowed
    assert saved.changed == ("source",)
    assert entry_of(workspace, "demo-shop", "list_products") == project_entry
    found = await site.run_browser_tool("demo-shop", "list_products", {"limit": 2}, tab=shop_tab)
    assert found["count"] == 2


# -- history records whole entries; restore brings them back --------------------------------------


async def test_history_keeps_entries_says_what_changed_and_restore_brings_both_back(
    site: Site, shop_tab: ego.Tab, workspace: Path, site_id: str
) -> None:
    await site.save_browser_tool(
        site_id, "get", GET_V1, "Get one item", ARGS, None, "write", tab=shop_tab
    )
    await site.save_browser_tool(site_id, "get", GET_V1, args=ARGS_WIDE)  # args only
    await site.save_browser_tool(
        site_id, "get", GET_V3, "Get one item (read)", side_effect="read", returns=RETURNS
    )
    versions = site.tool_history(site_id, "get")
    assert [v.changed for v in versions] == [
        ("source", "description", "returns", "sideEffect"),
        ("args",),
        None,  # the oldest: nothing before it to compare with
    ]
    assert versions[1].hash == versions[2].hash  # two versions differing in args alone
    assert versions[2].entry["args"] == ARGS
    assert versions[2].entry["sideEffect"] == "write"
    data = versions[1].as_dict()
    assert data["entry"]["args"] == ARGS_WIDE
    assert data["changed"] == ["args"]
    json.dumps([v.as_dict() for v in versions])  # JSON-ready

    restored = site.restore_tool(site_id, "get", versions[2].version)
    assert restored.hash == versions[2].hash
    entry = entry_of(workspace, site_id, "get")
    assert entry == {**versions[2].entry, "path": "browser-tools/get.js"}
    assert (workspace / "learnings" / site_id / "browser-tools" / "get.js").read_text() == GET_V1
    assert await site.run_browser_tool(site_id, "get", {"id": "a"}, tab=shop_tab) == {
        "got": "a",
        "v": 1,
    }
    with pytest.raises(InvalidArgsError):  # the args came back with the source
        await site.run_browser_tool(site_id, "get", {"id": "a", "full": True}, tab=shop_tab)
    after = site.tool_history(site_id, "get")
    assert after[0].changed == ("source", "description", "args", "returns", "sideEffect")


# -- domains keep the port ------------------------------------------------------------------------


async def test_a_site_made_from_a_tab_on_a_port_keeps_the_port(
    site: Site, browser: ego.Browser, server: PageServer, workspace: Path, site_id: str
) -> None:
    url = server.route(f"/{site_id}", "<title>local app</title><p>hi</p>")
    tab = await browser.new_tab(url)
    try:
        await site.save_browser_tool(
            site_id, "title", "async () => document.title", "Title", tab=tab
        )
        assert await site.run_browser_tool(site_id, "title", tab=tab) == "local app"
    finally:
        await tab.close()
    manifest = manifest_of(workspace, site_id)
    assert manifest["domains"] == [f"127.0.0.1:{server.port}"]
    assert validate_site(site.learnings.find(site_id)) == []
    assert [t.tool_name for t in (await site.learn_context(url)).tools] == ["title"]
    other = f"http://127.0.0.1:{server.port + 1 if server.port < 65535 else 1}/"
    assert (await site.learn_context(other)).tools == []  # another local app


BROAD = ["localhost", "127.0.0.1", "[::1]", "::1", "LocalHost.", "127.0.0.2", "0.0.0.0"]


@pytest.mark.parametrize("domain", BROAD)
async def test_a_bare_local_domain_is_refused_as_too_broad(
    site: Site, workspace: Path, site_id: str, domain: str
) -> None:
    with pytest.raises(SaveRefusedError) as caught:
        await site.save_browser_tool(site_id, "get", GET_V1, "Get", domains=[domain])
    error = caught.value
    assert error.reason == "domains"
    assert "too broad" in str(error)
    example = "[::1]:8765" if ":" in domain else f"{domain.lower().rstrip('.')}:8765"
    assert f"domains=['{example}']" in str(error)
    assert not workspace.joinpath("learnings", site_id).exists()


def test_a_tab_derived_or_added_local_domain_without_a_port_is_refused(
    learnings: Learnings, workspace: Path, site_id: str
) -> None:
    draft = ToolDraft(site_id=site_id, tool="get", source=GET_V1, description="Get")
    with pytest.raises(SaveRefusedError) as derived:
        plan_browser_tool(learnings, draft, page_url="http://127.0.0.1/")  # port 80: bare
    assert derived.value.reason == "domains"
    assert "'127.0.0.1' is too broad" in str(derived.value)

    plan = plan_browser_tool(learnings, draft, page_url="http://localhost:8765/app")
    assert plan.manifest["domains"] == ["localhost:8765"]
    assert plan.manifest["startUrl"] == "http://localhost:8765/app"
    write_tool(plan)
    more = ToolDraft(site_id=site_id, tool="get", source=GET_V1, domains=["localhost"])
    with pytest.raises(SaveRefusedError, match="'localhost' is too broad"):
        plan_browser_tool(learnings, more)
    with pytest.raises(SaveRefusedError, match="'localhost' is too broad"):
        save_note(learnings, site_id, "tips", "# Tips\n", domains=["localhost"])
    assert manifest_of(workspace, site_id)["domains"] == ["localhost:8765"]


@pytest.mark.parametrize(
    ("url", "domain"),
    [
        ("http://127.0.0.1:8765/a", "127.0.0.1:8765"),
        ("https://X.com./", "x.com"),
        ("https://x.com:443/", "x.com"),
        ("http://x.com:80/", "x.com"),
        ("https://x.com:8443/", "x.com:8443"),
        ("http://[::1]:8765/", "[::1]:8765"),
        ("about:blank", None),
        ("file:///tmp/x", None),
        (None, None),
    ],
)
def test_domain_of_a_url_keeps_an_explicit_port(url: str | None, domain: str | None) -> None:
    assert domain_of(url) == domain


def test_matching_understands_ports_and_bracketed_ipv6() -> None:
    assert match_domain("http://[::1]:8765/x", ["[::1]:8765"]) == "[::1]:8765"
    assert match_domain("http://[::1]:8766/x", ["[::1]:8765"]) is None
    assert match_domain("http://[::1]:8766/x", ["[::1]"]) == "[::1]"
    assert match_domain("http://127.0.0.1:8765/", ["127.0.0.1:8765"]) == "127.0.0.1:8765"
    assert match_domain("http://127.0.0.1:8766/", ["127.0.0.1:8765"]) is None
    assert [d for d in BROAD if is_too_broad(d)] == BROAD
    assert not any(
        is_too_broad(d) for d in ["localhost:8765", "[::1]:1", "shop.localhost", "10.0.0.1"]
    )


# -- the command line -----------------------------------------------------------------------------


def invoke(command: Any, args: list[str], workspace: Path, *, json_mode: bool = True) -> Result:
    settings = Settings(None, json_mode, str(workspace))
    return CliRunner().invoke(command, args, obj=settings, catch_exceptions=False)


@pytest.mark.chrome  # save-tool starts a Chrome of its own to compile the source
def test_save_tool_command_keeps_what_it_does_not_name(tmp_path: Path, site_id: str) -> None:
    workspace = tmp_path / "ws"
    seed(workspace, site_id, args=ARGS, returns=RETURNS, side_effect="write")
    edit_entry(workspace, site_id, "get", timeout=7)
    before = entry_of(workspace, site_id, "get")
    source = tmp_path / "get.js"
    source.write_text(GET_V2)

    result = invoke(
        save_tool, [site_id, "get", "--file", str(source), "--clear", "returns"], workspace
    )
    assert result.exit_code == 0, result.output + result.stderr
    data = json.loads(result.stdout)
    assert data["changed"] == ["source", "returns"]
    assert entry_of(workspace, site_id, "get") == {
        k: v for k, v in before.items() if k != "returns"
    }

    text = invoke(history, [site_id, "get"], workspace, json_mode=False)
    assert text.exit_code == 0, text.output
    lines = text.stdout.splitlines()
    assert "CHANGED" in lines[0]
    assert len(lines) == 3
    current, oldest = lines[1], lines[2]
    assert current.startswith("current ")
    assert " write " in current
    assert " id* " in current  # the args, * for a required one
    assert "source, returns" in current
    assert "(oldest)" in oldest
    rows = json.loads(invoke(history, [site_id, "get"], workspace).stdout)
    assert rows[1]["entry"]["returns"] == RETURNS
    assert rows[0]["changed"] == ["source", "returns"]

    back = invoke(restore, [site_id, "get", rows[1]["version"]], workspace)
    assert back.exit_code == 0, back.output
    assert entry_of(workspace, site_id, "get") == before


def test_save_tool_refuses_a_bare_local_domain_in_its_own_words(
    tmp_path: Path, site_id: str
) -> None:
    workspace = tmp_path / "ws"
    source = tmp_path / "get.js"
    source.write_text(GET_V1)
    args = [site_id, "get", "--file", str(source), "--description", "Get", "--domain", "127.0.0.1"]
    result = invoke(save_tool, args, workspace)  # refused before any Chrome starts
    assert result.exit_code == 3
    error = json.loads(result.stderr)
    assert error["type"] == "SaveRefusedError"
    assert "too broad" in error["error"]
    assert "--domain 127.0.0.1:8765" in error["error"]
    note = tmp_path / "note.md"
    note.write_text("# Tips\n")
    refused = invoke(
        save_note_command,
        [site_id, "tips", "--file", str(note), "--domain", "localhost"],
        workspace,
    )
    assert refused.exit_code == 3
    assert "--domain localhost:8765" in json.loads(refused.stderr)["error"]
    assert not (workspace / "learnings" / site_id).exists()


# -- MCP ------------------------------------------------------------------------------------------


@pytest.mark.chrome  # the MCP server under test launches Chrome
async def test_mcp_resave_keeps_fields_and_history_carries_entries(
    tmp_path: Path, demo: DemoServer, site_id: str
) -> None:
    workspace = tmp_path / "ws"
    env = {key: value for key, value in os.environ.items() if key != "EGO_WORKSPACE"}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "ego", "--workspace", str(workspace), "mcp"],
        env=env,
        cwd=str(ROOT),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.call_tool("navigate", {"url": demo.url})
        first = {
            "site_id": site_id,
            "tool": "get",
            "source": GET_V1,
            "description": "Get one item",
            "args": ARGS,
            "returns": RETURNS,
            "side_effect": "write",
        }
        payload(await session.call_tool("save_browser_tool", first))
        resaved = payload(
            await session.call_tool(
                "save_browser_tool", {"site_id": site_id, "tool": "get", "source": GET_V2}
            )
        )
        assert resaved["changed"] == ["source"]
        entry = entry_of(workspace, site_id, "get")
        assert (entry["args"], entry["returns"], entry["sideEffect"]) == (ARGS, RETURNS, "write")
        ran = payload(
            await session.call_tool(
                "run_browser_tool", {"site_id": site_id, "tool": "get", "args": {"id": "a"}}
            )
        )
        assert ran == {"got": "a", "v": 2}

        cleared = payload(
            await session.call_tool(
                "save_browser_tool",
                {"site_id": site_id, "tool": "get", "source": GET_V2, "clear": ["returns"]},
            )
        )
        assert cleared["changed"] == ["returns"]
        versions = payload(
            await session.call_tool("tool_history", {"site_id": site_id, "tool": "get"})
        )
        assert [v["changed"] for v in versions] == [["returns"], ["source"], None]
        assert versions[2]["entry"]["returns"] == RETURNS
        restored = payload(
            await session.call_tool(
                "restore_tool",
                {"site_id": site_id, "tool": "get", "version": versions[2]["version"]},
            )
        )
        assert restored["mcp_tool"] == f"{site_id}__get"
        assert entry_of(workspace, site_id, "get")["returns"] == RETURNS

        refused = await session.call_tool(
            "save_browser_tool",
            {
                "site_id": f"{site_id}-local",
                "tool": "get",
                "source": GET_V1,
                "description": "Get",
                "domains": ["localhost"],
            },
        )
        text = error_text(refused)
        assert "too broad" in text
        assert 'domains: ["localhost:8765"]' in text
        note = await session.call_tool(
            "save_note",
            {"site_id": site_id, "name": "tips", "text": "# Tips\n", "domains": ["127.0.0.1"]},
        )
        assert 'domains: ["127.0.0.1:8765"]' in error_text(note)
    assert manifest_of(workspace, site_id)["domains"] == [f"shop.localhost:{demo.port}"]
