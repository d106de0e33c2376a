"""``learn_context(url)``: what the learnings offer for a URL, as data."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

import ego
from ego.learning.catalog.registry import Learnings
from ego.learning.describe.context import LearnContext, SiteContext, ToolInfo
from ego.site import Site
from tests.helpers.learnings import ECHO, make_site, tool, write_manifest
from tests.helpers.page_server import PageServer

SEARCH_ARGS = {
    "query": {"type": "string", "required": True, "description": "what to search for"},
    "limit": {"type": "integer", "default": 5},
}
FULL_ARGS = {
    "type": "object",
    "properties": {
        "sort": {"type": "string", "enum": ["new", "top"]},
        "page": {"type": "integer", "examples": [2]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "exact": {"type": "boolean"},
        "ratio": {"type": ["null", "number"]},
        "filters": {"type": "object"},
    },
    "required": ["sort", "tags", "exact", "ratio", "filters"],
    "additionalProperties": False,
}
RETURNS = {"type": "array", "items": {"type": "object"}}

SHOP_NOTE = "# How the shop works\nItems are listed at /items; the cart needs a session.\n"
CART_NOTE = "Nothing but text, no heading.\n"


def _shop(root: Path) -> None:
    make_site(
        root,
        "shop",
        name="The Shop",
        description="A shop for tests",
        domains=["shop.test", "*.shop.test"],
        start_url="https://shop.test/",
        browser_tools={
            "search": tool(
                ECHO, description="Search the catalogue", args=SEARCH_ARGS, returns=RETURNS
            ),
            "filter": tool(ECHO, description="Filter the list", args=FULL_ARGS),
            "buy": tool(ECHO, description="Buy for real", sideEffect="irreversible"),
        },
        python_tools={
            "report": tool(
                "def run(ctx, args):\n    return args\n",
                description="Summarise the catalogue",
                args={"query": {"type": "string", "required": True}},
                returns={"type": "object"},
                auth="session",
            )
        },
        notes={"notes/shop.md": SHOP_NOTE, "notes/cart-rules.md": CART_NOTE},
    )


async def _context(browser: ego.Browser, root: Path, url: str) -> LearnContext:
    return await Site(browser, Learnings(roots=[root])).learn_context(url, detail="full")


async def test_a_matching_url_gets_everything(tmp_path: Path, browser: ego.Browser) -> None:
    _shop(tmp_path)
    make_site(tmp_path, "elsewhere", domains=["elsewhere.test"], browser_tools={"e": tool(ECHO)})
    context = await _context(browser, tmp_path, "https://www.shop.test/items?page=2")

    assert context.url == "https://www.shop.test/items?page=2"
    assert context.matched is True
    assert context.site_id == "shop"
    assert context.name == "The Shop"
    assert context.matched_domain == "*.shop.test"
    (site,) = context.sites
    assert isinstance(site, SiteContext)
    assert site.description == "A shop for tests"
    assert site.start_url == "https://shop.test/"

    notes = [(n.site_id, n.path, n.title, n.text) for n in context.notes]
    assert notes == [
        ("shop", "notes/shop.md", "How the shop works", SHOP_NOTE),
        ("shop", "notes/cart-rules.md", "cart rules", CART_NOTE),
    ]
    assert site.notes == context.notes

    tools = {t.tool_name: t for t in context.tools}
    assert list(tools) == ["search", "filter", "buy", "report"]
    assert site.tools == context.tools
    assert all(isinstance(t, ToolInfo) and t.site_id == "shop" for t in tools.values())
    assert {name: t.kind for name, t in tools.items()} == {
        "search": "browser",
        "filter": "browser",
        "buy": "browser",
        "report": "python",
    }
    search = tools["search"]
    assert search.description == "Search the catalogue"
    assert search.args == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "what to search for"},
            "limit": {"type": "integer", "default": 5},
        },
        "additionalProperties": False,
        "required": ["query"],
    }
    assert search.returns == RETURNS
    assert search.side_effect == "read"
    assert search.example == "await site.run_browser_tool('shop', 'search', {'query': 'query'})"
    assert tools["filter"].args == FULL_ARGS
    assert tools["filter"].returns is None
    assert tools["buy"].side_effect == "irreversible"
    assert tools["buy"].example == "await site.run_browser_tool('shop', 'buy', {}, confirm=True)"
    report = tools["report"]
    assert report.description == "Summarise the catalogue"
    assert report.returns == {"type": "object"}
    assert report.auth == "session"
    assert report.example == "await site.run_tool('shop', 'report', {'query': 'query'})"


async def test_examples_are_valid_python_calls(tmp_path: Path, browser: ego.Browser) -> None:
    _shop(tmp_path)
    context = await _context(browser, tmp_path, "https://shop.test/")
    assert context.matched_domain == "shop.test"
    for info in context.tools:
        tree = ast.parse(info.example)
        (statement,) = tree.body
        assert isinstance(statement, ast.Expr)
        assert isinstance(statement.value, ast.Await)
        call = statement.value.value
        assert isinstance(call, ast.Call)
        assert isinstance(call.func, ast.Attribute)
        assert isinstance(call.func.value, ast.Name)
        assert call.func.value.id == "site"
        assert call.func.attr == ("run_browser_tool" if info.kind == "browser" else "run_tool")
        site_id, tool_name, args = (ast.literal_eval(arg) for arg in call.args)
        assert (site_id, tool_name) == ("shop", info.tool_name)
        assert isinstance(args, dict)
        assert set(info.args.get("required", [])) <= set(args)
        assert [k.arg for k in call.keywords] == (
            ["confirm"] if info.side_effect == "irreversible" else []
        )
    examples = {t.tool_name: t.example for t in context.tools}
    filter_args = ast.literal_eval(ast.parse(examples["filter"]).body[0].value.value.args[2])  # type: ignore[attr-defined]
    assert filter_args == {
        "sort": "new",
        "page": 2,
        "tags": [],
        "exact": True,
        "ratio": 1.5,
        "filters": {},
    }


async def test_an_example_runs_as_pasted(
    tmp_path: Path, browser: ego.Browser, tab: ego.Tab, server: PageServer
) -> None:
    """The example is not only valid Python: pasted into an async script, it works."""
    _shop(tmp_path)
    write_manifest(
        tmp_path / "shop",
        (tmp_path / "shop" / "manifest.json")
        .read_text()
        .replace('"shop.test",', f'"127.0.0.1:{server.port}",'),
    )
    await tab.navigate(server.route("/learning-context", "<title>ctx</title>"))
    site = Site(browser, Learnings(roots=[tmp_path]))
    context = await site.learn_context(tab.url, detail="full")
    assert context.matched_domain == f"127.0.0.1:{server.port}"
    results: dict[str, Any] = {}
    for info in context.tools:
        code = compile(info.example, "<example>", "eval", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        results[info.tool_name] = await eval(code, {"site": site})
    assert results == {
        "search": {"query": "query"},
        "filter": {
            "sort": "new",
            "page": 2,
            "tags": [],
            "exact": True,
            "ratio": 1.5,
            "filters": {},
        },
        "buy": {},
        "report": {"query": "query"},
    }


async def test_every_matching_site_is_included(tmp_path: Path, browser: ego.Browser) -> None:
    make_site(
        tmp_path,
        "alpha",
        name="Alpha",
        domains=["app.test"],
        browser_tools={"a": tool(ECHO, description="from alpha")},
        notes={"notes/a.md": "# Alpha note\n"},
    )
    make_site(
        tmp_path,
        "beta",
        name="Beta",
        domains=["other.test", "*.test"],
        python_tools={"b": tool("def run(ctx, args):\n    return 1\n")},
        notes={"notes/b.md": "# Beta note\n"},
    )
    make_site(tmp_path, "gamma", domains=["gamma.test"], browser_tools={"g": tool(ECHO)})
    make_site(tmp_path, "broken", domains=["app.test"], manifest_id="not-broken")

    context = await _context(browser, tmp_path, "https://APP.test./x")
    assert [(s.site_id, s.name, s.matched_domain) for s in context.sites] == [
        ("alpha", "Alpha", "app.test"),
        ("beta", "Beta", "*.test"),
    ]
    assert context.site_id == "alpha"
    assert [(t.site_id, t.tool_name, t.kind) for t in context.tools] == [
        ("alpha", "a", "browser"),
        ("beta", "b", "python"),
    ]
    assert [(n.site_id, n.title) for n in context.notes] == [
        ("alpha", "Alpha note"),
        ("beta", "Beta note"),
    ]


@pytest.mark.parametrize(
    "url",
    [
        "https://nowhere.test/",
        "about:blank",
        "data:text/html,shop.test",
        "https://shop.test.evil/",
        "https://evilshop.test/",
        "not a url",
    ],
)
async def test_an_unmatched_url_gets_nothing(
    tmp_path: Path, browser: ego.Browser, url: str
) -> None:
    _shop(tmp_path)
    context = await _context(browser, tmp_path, url)
    assert context.url == url
    assert context.matched is False
    assert context.sites == []
    assert context.tools == []
    assert context.notes == []
    assert context.site_id is None
    assert context.name is None
    assert context.matched_domain is None


async def test_the_context_is_plain_json(tmp_path: Path, browser: ego.Browser) -> None:
    _shop(tmp_path)
    context = await _context(browser, tmp_path, "https://shop.test/")
    data = context.model_dump(mode="json")
    assert data["matched"] is True
    assert data["sites"][0]["site_id"] == "shop"
    assert {t["tool_name"] for t in data["tools"]} == {"search", "filter", "buy", "report"}
    assert LearnContext.model_validate_json(context.model_dump_json()) == context


async def test_learn_context_reads_no_tool_file(tmp_path: Path, browser: ego.Browser) -> None:
    _shop(tmp_path)
    for file in (tmp_path / "shop").rglob("*"):
        if file.suffix in (".js", ".py"):
            file.unlink()
    context = await _context(browser, tmp_path, "https://shop.test/")
    assert len(context.tools) == 4
