"""``ego catalog search|show`` on sites written under tmp_path: ranking, the domain filter,
notes, invalid sites, changes seen by the next search, and the command's own checks.

No browser: the catalog reads files only.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ego.errors import UnknownToolError
from ego.learning.catalog.registry import Learnings
from ego.learning.describe.search import CatalogSite, CatalogTool, catalog_search, show
from tests.helpers.commands import ego_env, ego_sync
from tests.helpers.learnings import ECHO, make_site, tool, write_manifest


@pytest.fixture
def roots(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace and a project root with a few sites."""
    workspace, project = tmp_path / "ws" / "learnings", tmp_path / "project"
    make_site(
        project,
        "shop",
        name="Corner Shop",
        domains=["shop.test:8765"],
        browser_tools={
            "search_products": tool(ECHO, description="Find products by words."),
            "place_order": tool(ECHO, description="Buy the cart.", sideEffect="irreversible"),
        },
        notes={"notes/checkout.md": "# Checkout\nThe basket page lists every product.\n"},
    )
    make_site(
        project,
        "news",
        name="Daily News",
        domains=["*.news.test"],
        browser_tools={"headlines": tool(ECHO, description="Today's headlines.")},
        notes={"notes/overview.md": "# Overview\nSearch is slow; products are never sold.\n"},
    )
    make_site(
        workspace,
        "notes-only",
        domains=["notes.test"],
        notes={"notes/search.md": "# Searching products\nUse the wombat box at the top.\n"},
    )
    return workspace, project


def test_tools_matching_more_words_and_heavier_fields_rank_first(roots: tuple[Path, Path]) -> None:
    learnings = Learnings(roots=list(roots))
    found = catalog_search(learnings, "search products")
    ranked = [(hit.site_id, hit.kind, hit.name) for hit in found.hits]
    # Both words in a tool's name beat both words in a note's title, then in notes' text.
    assert ranked[0] == ("shop", "tool", "search_products")
    assert ranked[1] == ("notes-only", "note", "notes/search.md")
    assert found.total == len(found.hits)
    best = found.hits[0]
    assert (best.source, best.side_effect, best.tool_kind) == ("folder", "read", "browser")
    assert best.example == "await site.run_browser_tool('shop', 'search_products', {})"
    assert found.hits[1].source == "workspace"
    assert found.hits[1].example is None
    # A query word matches the words it starts.
    assert catalog_search(learnings, "headl").hits[0].name == "headlines"
    assert catalog_search(learnings, "zebra").hits == []


def test_the_domain_filter_matches_as_learn_context_does(roots: tuple[Path, Path]) -> None:
    learnings = Learnings(roots=list(roots))
    on_shop = catalog_search(learnings, "", domain="shop.test:8765")
    assert [hit.name for hit in on_shop.hits] == [
        "place_order",
        "search_products",
        "notes/checkout.md",
    ]
    assert (
        on_shop.hits[0].example
        == "await site.run_browser_tool('shop', 'place_order', {}, confirm=True)"
    )
    assert catalog_search(learnings, "", domain="shop.test").hits == []  # another port
    assert {hit.site_id for hit in catalog_search(learnings, "", domain="a.news.test").hits} == {
        "news"
    }
    assert catalog_search(learnings, "search", domain="news.test").hits == []  # not the bare domain
    with pytest.raises(ValueError, match="is not a host"):
        catalog_search(learnings, "x", domain="http://")


def test_an_invalid_site_is_found_and_says_why(roots: tuple[Path, Path]) -> None:
    workspace, _ = roots
    site = make_site(
        workspace,
        "broken",
        domains=["broken.test"],
        browser_tools={"search_products": tool(ECHO, description="Broken search.")},
    )
    manifest = json.loads((site / "manifest.json").read_text())
    manifest["browserTools"]["search_products"]["sideEffect"] = "sometimes"
    write_manifest(site, manifest)
    hit = next(
        hit
        for hit in catalog_search(Learnings(roots=list(roots)), "broken search").hits
        if hit.site_id == "broken"
    )
    assert hit.valid is False
    assert hit.example is None
    assert any("sideEffect" in problem or "sometimes" in problem for problem in hit.problems), hit


def test_a_change_is_seen_by_the_next_search(roots: tuple[Path, Path]) -> None:
    workspace, _ = roots
    learnings = Learnings(roots=list(roots))
    assert catalog_search(learnings, "quokka").hits == []
    (workspace / "notes-only" / "notes" / "search.md").write_text("# Searching\nA quokka.\n")
    assert [hit.name for hit in catalog_search(learnings, "quokka").hits] == ["notes/search.md"]
    make_site(
        workspace,
        "zoo",
        domains=["zoo.test"],
        browser_tools={"find_quokka": tool(ECHO, description="Where it is.")},
    )
    assert catalog_search(learnings, "quokka").hits[0].name == "find_quokka"


def test_show_prints_a_site_or_a_tool_in_full(roots: tuple[Path, Path]) -> None:
    learnings = Learnings(roots=list(roots))
    site = show(learnings, "shop")
    assert isinstance(site, CatalogSite)
    assert [tool.tool_name for tool in site.tools] == ["search_products", "place_order"]
    assert [note.title for note in site.notes] == ["Checkout"]
    one = show(learnings, "shop/place_order")
    assert isinstance(one, CatalogTool)
    assert (one.tool.side_effect, Path(one.file).name) == ("irreversible", "place_order.js")
    with pytest.raises(UnknownToolError, match="declared tools: place_order, search_products"):
        show(learnings, "shop/nothing")


def test_the_commands_print_hits_and_refuse_an_empty_search(
    roots: tuple[Path, Path], tmp_path: Path
) -> None:
    env = ego_env(tmp_path / "profiles", workspace=tmp_path / "ws")
    found = ego_sync("catalog", "search", "wombat", "box", "--no-json", env=env, cwd=tmp_path)
    assert found.returncode == 0, found
    assert found.stdout.splitlines()[0] == "notes-only notes/search.md  [note, workspace]"
    empty = ego_sync("catalog", "search", "--json", env=env, cwd=tmp_path)
    assert empty.returncode == 2, empty
    assert "give words to search for, or --domain HOST" in empty.stderr
    missing = ego_sync("catalog", "show", "nowhere", "--json", env=env, cwd=tmp_path)
    assert missing.returncode == 3, missing
    assert json.loads(missing.error_line())["type"] == "UnknownSiteError"
