"""The compact ``learn_context``: what a first call needs in a few lines, the rest on demand.

Without a browser: the compact form of a site's tools and notes (signature, an example, side
effect, one word of health, a note's first paragraph), ``describe_tool`` and ``read_note`` in
Python and over MCP, and the demo shop's compact answer as an MCP agent receives it, within
2,300 characters. With one: every demo shop tool called right from that answer alone.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from ego.demo import DemoServer
from ego.errors import UnknownNoteError, UnknownSiteError, UnknownToolError
from ego.learning.catalog.registry import Learnings
from ego.learning.describe.compact import CompactContext, health_word, lead, one_line
from ego.learning.describe.context import LearnContext, ToolInfo
from ego.learning.health.view import ToolHealth
from ego.site import Site
from tests.helpers.commands import ego_env
from tests.helpers.learnings import ECHO, make_site, tool
from tests.helpers.mcp_client import McpClient, serving, text_of, value_of

#: The issue's bound on the demo shop's compact learn_context, as an MCP agent reads it.
DEMO_CONTEXT_MAX = 2300

NOTE = (
    "# How the shop works\n\n"
    "Items are listed at /items and every item page has a buy button; the cart keeps what "
    "was bought for a day, and a session is needed to check out.\n\n"
    "## Details\nMore than anyone needs at first.\n"
)


def _shop(root: Path) -> None:
    make_site(
        root,
        "shop",
        name="Test Shop",
        domains=["shop.test"],
        start_url="https://shop.test/",
        description="A shop for tests. It sells nothing.",
        browser_tools={
            "search": tool(
                ECHO,
                description="Search the catalogue by words. Every word must match.",
                args={
                    "query": {"type": "string", "required": True, "examples": ["lamp"]},
                    "limit": {"type": "integer", "default": 5},
                },
            ),
            "buy": tool(
                ECHO,
                description="Buy an item (irreversible).",
                args={
                    "type": "object",
                    "properties": {
                        "item": {"type": "integer", "minimum": 1},
                        "size": {"enum": ["s", "m", "l"]},
                        "tags": {"type": "array", "items": {"type": "string"}},
                    },
                    "required": ["item"],
                },
                sideEffect="irreversible",
                auth="session",
            ),
        },
        notes={"notes/shop.md": NOTE},
    )


def _site(root: Path) -> Site:
    # learn_context, describe_tool and read_note read local files only: no browser.
    return Site(cast(Any, None), Learnings(roots=[root]))


async def test_the_compact_form_keeps_what_a_first_call_needs(tmp_path: Path) -> None:
    _shop(tmp_path)
    context = await _site(tmp_path).learn_context("https://shop.test/items")
    assert isinstance(context, CompactContext)
    assert [t.tool_name for t in context.tools] == ["search", "buy"]  # the README's loop
    [site] = context.sites
    assert (site.site_id, site.name, site.start_url) == ("shop", "Test Shop", "https://shop.test/")
    assert (context.site_id, context.matched_domain, context.skills) == ("shop", "shop.test", [])
    assert site.description == "A shop for tests."
    search, buy = context.tools
    assert search.description == "Search the catalogue by words."
    assert search.signature == "query*: str, limit: int"
    assert search.example == {"query": "lamp"}
    assert (search.side_effect, search.auth, search.health) == ("read", "none", "no runs")
    assert buy.signature == "item*: int, size: s|m|l, tags: list[str]"
    assert buy.example == {"item": 10}
    assert (buy.side_effect, buy.auth) == ("irreversible", "session")
    [note] = context.notes
    assert (note.path, note.title) == ("notes/shop.md", "How the shop works")
    assert note.lead.startswith("Items are listed at /items")
    assert note.lead.endswith("…")
    assert len(note.lead) <= 80
    lines = context.text().splitlines()
    assert lines[0] == "Test Shop (shop) https://shop.test/: A shop for tests."
    assert 'search(query*: str="lamp", limit: int) read, no runs: Search the catalogue' in (
        "\n".join(lines)
    )
    assert "buy(item*: int=10, size: s|m|l, tags: list[str]) irreversible, login, no runs" in (
        "\n".join(lines)
    )


async def test_detail_full_is_the_whole_answer_and_another_detail_is_refused(
    tmp_path: Path,
) -> None:
    _shop(tmp_path)
    site = _site(tmp_path)
    full = await site.learn_context("https://shop.test/", detail="full")
    assert isinstance(full, LearnContext)
    assert full.notes[0].text == NOTE
    assert full.tools[0].args["required"] == ["query"]
    with pytest.raises(ValueError, match="detail must be 'compact' or 'full'"):
        await site.learn_context("https://shop.test/", detail=cast(Any, "short"))
    empty = await site.learn_context("https://elsewhere.test/")
    assert not empty.matched
    assert empty.text() == "no learnings match https://elsewhere.test/"


def test_one_word_of_health() -> None:
    def info(health: ToolHealth | None, runnable: bool = True) -> ToolInfo:
        return ToolInfo(
            site_id="s",
            tool_name="t",
            kind="browser",
            description="",
            args={},
            returns=None,
            example="",
            health=health,
            runnable=runnable,
        )

    assert health_word(info(None)) == "no runs"
    assert health_word(info(ToolHealth(version="v", needs_login=2))) == "no runs"
    assert health_word(info(ToolHealth(version="v", runs=3, ok=2, failures=1))) == "ok"
    suspect = ToolHealth(version="v", runs=3, failures=3, suspect=True)
    assert health_word(info(suspect)) == "suspect"
    assert health_word(info(None, runnable=False)) is None


def test_one_line_and_a_notes_lead_are_cut_where_they_read_well() -> None:
    assert one_line("First sentence. Second one.") == "First sentence."
    assert one_line("Version 2.1 of e.g. the API. Then more.") == "Version 2.1 of e.g. the API."
    long = "Whether this browser profile has a shop session, and whose (GET /api/me) today"
    assert one_line(long, 64) == "Whether this browser profile has a shop session, and whose…"
    assert lead("# Title\n\nfirst line\nsecond line\n\nnext paragraph") == "first line second line"
    assert lead("No heading at all.\n") == "No heading at all."


async def test_describe_tool_and_read_note_give_the_rest(tmp_path: Path) -> None:
    _shop(tmp_path)
    site = _site(tmp_path)
    info = site.describe_tool("shop", "buy")
    assert info.args["properties"]["size"] == {"enum": ["s", "m", "l"]}
    assert info.side_effect == "irreversible"
    assert info.example.endswith("confirm=True)")
    assert info.health is not None
    assert info.health.runs == 0
    assert site.read_note("shop", "shop.md").text == NOTE
    assert site.read_note("shop", "How the shop works").path == "notes/shop.md"
    assert site.read_note("shop", "notes/shop.md").title == "How the shop works"
    with pytest.raises(UnknownToolError, match="declared tools: buy, search"):
        site.describe_tool("shop", "sell")
    with pytest.raises(UnknownNoteError, match=r"its notes: notes/shop\.md"):
        site.read_note("shop", "faq")
    with pytest.raises(UnknownSiteError):
        site.describe_tool("nowhere", "x")


def test_a_skill_is_described_by_its_domain_and_name() -> None:
    info = Site(cast(Any, None), Learnings()).describe_tool("shop.localhost", "search-products")
    assert (info.kind, info.site_id, info.tool_name) == (
        "skill",
        "shop.localhost",
        "search-products",
    )
    assert info.returns is not None


# -- over MCP -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
async def agent(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[McpClient]:
    async with serving(tmp_path_factory.mktemp("mcp-compact")) as client:
        yield client


async def test_the_demo_shops_compact_learn_context_fits_its_bound(agent: McpClient) -> None:
    answer = await agent.call("learn_context", {"url": "http://shop.localhost:8765/"})
    text = text_of(answer)
    assert len(text) <= DEMO_CONTEXT_MAX, (len(text), text)
    context = value_of(answer)
    # Every tool and skill of the shop, and both notes, each on a line of its own.
    assert len(context["tools"]) == 13
    for each in context["tools"]:
        assert any(line.startswith(f"{each['tool_name']}(") for line in text.splitlines())
    assert "overview.md 'Ego Demo Shop': A strict site" in text
    # The demo's first sentences are written to stand whole on their line: none is cut.
    assert "…" not in text
    assert "api.md 'Demo shop JSON API':" in text
    # Nothing of the full form: no returns schema, no note past its first paragraph.
    assert "returns" not in text
    assert "## Pages" not in text


async def test_describe_tool_and_read_note_over_mcp(agent: McpClient) -> None:
    described = value_of(
        await agent.call("describe_tool", {"site_id": "demo-shop", "tool": "post_review"})
    )
    assert described["mcp_tool"] == "demo-shop__post_review"
    assert json.loads(described["example"].partition(" ")[2])["confirm"] is True
    assert described["returns"]["type"] == "object"
    assert described["health"]["runs"] == 0
    skill = value_of(
        await agent.call("describe_tool", {"site_id": "shop.localhost", "tool": "get-orders"})
    )
    assert skill["example"].startswith('run_skill {"skill_id": "shop.localhost/get-orders"')
    note = await agent.call("read_note", {"site_id": "demo-shop", "note": "api"})
    assert text_of(note).startswith("# Demo shop JSON API")
    assert value_of(note)["path"] == "notes/api.md"
    missing = await agent.call("read_note", {"site_id": "demo-shop", "note": "faq"})
    assert missing.is_error
    assert "UnknownNoteError" in text_of(missing)
    assert "notes/overview.md, notes/api.md" in text_of(missing)


# -- every demo tool called from the compact answer alone ------------------------------------------

#: A tool's line in the compact answer: its name, its args, side effect and health.
_LINE = re.compile(r"^([\w.-]+)\((.*)\) (read|write|irreversible)(, login)?, (ok|suspect|no runs)")
#: One required arg with its example value (a JSON value), as the line gives it.
_ARG = re.compile(r'(\w+)\*(?:: [\w|\[\]]+)?=("(?:[^"\\]|\\.)*"|[^,]+)')


def _calls(text: str) -> list[tuple[str, dict[str, Any], str, bool]]:
    """Each tool line of a compact answer as (tool, args, how it is called, needs login).

    ``how`` is the MCP tool's name, from the header above the line ("each the MCP tool
    demo-shop__NAME"), or ``run_skill:<domain>`` for a skill.
    """
    found = []
    how = ""
    for line in text.splitlines():
        header = re.search(r"each the MCP tool (\S+)__NAME", line)
        if header:
            how = header.group(1) + "__"
            continue
        skills = re.search(r'run_skill \{skill_id: "([^/"]+)/NAME"', line)
        if skills:
            how = f"run_skill:{skills.group(1)}"
            continue
        match = _LINE.match(line)
        if match is None:
            continue
        args = {name: json.loads(value) for name, value in _ARG.findall(match.group(2))}
        found.append((match.group(1), args, how, bool(match.group(4))))
    return found


@pytest.fixture(scope="module")
def shop() -> Iterator[DemoServer]:
    with DemoServer() as server:
        yield server


@pytest.mark.chrome
async def test_every_demo_tool_is_called_right_from_the_compact_answer(
    tmp_path: Path, shop: DemoServer
) -> None:
    env = ego_env(tmp_path / "profiles")
    # The shop runs on a port of its own: its site and its skills' domain are told so.
    starts = ["--start-url", f"demo-shop={shop.url}", "--start-url", f"shop.localhost={shop.url}"]
    client = McpClient(env, tmp_path, tmp_path / "stderr.log", args=starts)
    await client.start()
    try:
        text = text_of(await client.call("learn_context", {"url": shop.url}))
        calls = _calls(text)
        assert len(calls) == 13, text
        # The tools marked "login" ride on a session: a person logs in by hand first.
        await client.call("navigate", {"url": shop.url + "login"})
        await client.call("type", {"selector": "#login-username", "text": "demo"})
        await client.call("type", {"selector": "#login-password", "text": "demo"})
        await client.call("press_key", {"key": "Enter"})
        for name, args, how, _ in calls:
            if "/contact" in next(line for line in text.splitlines() if line.startswith(name)):
                await client.call("navigate", {"url": shop.url + "contact"})  # as its line says
            if how.startswith("run_skill:"):
                domain = how.partition(":")[2]
                confirm = "irreversible" in next(
                    line for line in text.splitlines() if line.startswith(f"{name}(")
                )
                arguments = {"skill_id": f"{domain}/{name}", "params": args, "confirm": confirm}
                result = await client.call("run_skill", arguments)
            else:
                result = await client.call(how + name, args)
            assert not result.is_error, (name, args, text_of(result))
            value = value_of(result)
            assert not (isinstance(value, dict) and "error" in value), (name, args, value)
    finally:
        await client.close()
