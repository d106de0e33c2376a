"""The learning loop closed on the demo shop: a recorded session of browsing and searching is
drafted into tools whose cases and live runs pass; the shop's API then changes on purpose (the
search moves, ``name`` becomes ``title``), the search tool fails until health marks it
suspect, ``heal`` names both changes and proposes the moved endpoint, and the candidate passes
the old cases plus the live one and is promoted with its provenance; ``restore_tool`` still
rolls back. A candidate that changes an old case's expected result is refused unless the
case is accepted by name.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import ego
from ego.demo import DemoServer
from ego.errors import CaseRegressionError
from ego.learning.catalog.registry import Learnings
from ego.learning.health.view import SUSPECT_AFTER, current_health
from ego.learning.suggest import suggest
from ego.replay import record
from ego.site import Site
from tests.helpers.health import isolated_store
from tests.helpers.page_server import PageServer

pytestmark = pytest.mark.chrome

SEARCH_CASES = 2  # the session searches twice: lamp, then desk


@pytest.fixture(scope="module")
def shop() -> Iterator[DemoServer]:
    server = DemoServer(port=0).start()
    yield server
    server.close()


@pytest.fixture
def changed(shop: DemoServer) -> Iterator[DemoServer]:
    """The shop; its API is set back as it was after the test."""
    yield shop
    shop.api_changed = False


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    yield from isolated_store(monkeypatch, tmp_path / "state")


async def browse(tab: ego.Tab, shop: DemoServer, har: Path) -> None:
    """A session of browsing and searching the shop, recorded."""
    async with tab.record_har(har) as recording:
        await tab.navigate(shop.url)
        for product in (3, 7):
            await tab.navigate(shop.url_for(f"/product/{product}"))
            await tab.wait_for(selector='[data-testid="live-stock"]:not([hidden])')
            if product == 3:
                await tab.click('[data-testid="add-to-cart"]')
                await tab.wait_for(selector='[data-testid="add-to-cart"][data-state]')
        for words in ("lamp", "desk"):
            await tab.navigate(shop.url_for(f"/search?q={words}"))
            await tab.wait_for(selector='[data-testid="related-item"]')
        await recording.wait_idle()


@pytest.fixture(scope="module")
async def session_har(
    browser: ego.Browser, shop: DemoServer, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    har = tmp_path_factory.mktemp("session") / "session.har"
    async with browser.isolated_context() as context:
        await browse(await context.new_tab(), shop, har)
    return har


async def learned(browser: ego.Browser, session_har: Path, workspace: Path) -> Site:
    """A workspace where the session's search tool is drafted and kept."""
    learnings = Learnings(workspace=workspace)
    suggest("shop", [session_har], learnings=learnings)
    site = Site(browser, learnings)
    await site.save_draft("shop", "get_products")
    return site


async def test_the_demo_loop_from_a_session_to_a_promoted_heal(
    browser: ego.Browser, changed: DemoServer, session_har: Path, tmp_path: Path, store: Path
) -> None:
    shop = changed
    learnings = Learnings(workspace=tmp_path / "ws")
    report = suggest("shop", [session_har], learnings=learnings)
    sides = {draft.endpoint: draft.side_effect for draft in report.drafts}
    assert sides == {
        "GET /api/cart": "read",
        "POST /api/cart": "irreversible",
        "GET /api/products/{product_id}": "read",
        "GET /api/products": "read",
    }
    site = Site(browser, learnings)
    for draft in report.drafts:
        results = await site.check_draft("shop", draft.tool)
        assert all(r.passed for r in results), (draft.tool, [r.reason for r in results])
        await site.save_draft(
            "shop", draft.tool, side_effect="write" if draft.side_effect != "read" else None
        )
    search = next(d for d in report.drafts if d.endpoint == "GET /api/products")
    assert search.tool == "get_products"
    assert search.constants == {"query:limit": 3, "query:sort": "-rating"}
    recorded = json.loads(search.cases[0].har.entries[-1].response.content.text or "null")
    live = await site.run_tool("shop", "get_products", {"q": "lamp"})
    assert live == recorded  # the live run answers what the recording showed
    detail = await site.run_tool("shop", "get_product", {"product_id": 7})
    assert detail["id"] == 7

    shop.api_changed = True
    for _ in range(SUSPECT_AFTER):
        with pytest.raises(ego.SkillBrokenError, match="GET /api/products answered HTTP 404"):
            await site.run_tool("shop", "get_products", {"q": "lamp"})
    health = current_health(learnings, "shop", "get_products")
    assert health is not None
    assert health.suspect

    healed = await site.heal_tool("shop", "get_products")
    kinds = {change["kind"] for change in healed.changes}
    assert {"endpoint gone", "endpoint moved", "field renamed"} <= kinds
    renamed = next(c for c in healed.changes if c["kind"] == "field renamed")
    assert (renamed["old"], renamed["new"]) == ("name", "title")
    assert healed.proposal is not None
    assert healed.proposal["to"] == "GET /api/catalog/search"
    assert healed.candidate == "proposed"
    assert healed.live["error_kind"] == "SKILL_BROKEN"

    check = await site.check_candidate("shop", "get_products")
    assert [case.passed for case in check.old] == [True] * SEARCH_CASES
    assert check.new is not None
    assert check.new.passed
    before = site.tool_history("shop", "get_products")[0]

    promoted = await site.promote_candidate("shop", "get_products")
    history = site.tool_history("shop", "get_products")
    assert history[0].hash == promoted.saved.hash != before.hash
    provenance = history[0].provenance
    assert provenance is not None
    assert provenance["proposal"]["to"] == "GET /api/catalog/search"
    assert len(provenance["cases_passed"]) == SEARCH_CASES + 1
    assert {c["kind"] for c in provenance["changed"]} >= {"endpoint moved", "field renamed"}
    assert provenance["failed"]["live"]["error_kind"] == "SKILL_BROKEN"
    cases = json.loads((tmp_path / "ws/learnings/shop/tests/cases.json").read_text())
    new_case = next(c for c in cases["cases"] if c["name"] == provenance["new_case"])
    assert new_case["expect"]["products"][0]["name"]  # the tool still says name

    healed_run = await site.run_tool("shop", "get_products", {"q": "desk"})
    assert {p["name"] for p in healed_run["products"]} == {"Felt Desk Mat", "Mechanical Desk Clock"}
    assert not (tmp_path / "ws/learnings/.heal/shop/get_products").exists()

    restored = site.restore_tool("shop", "get_products", promoted.saved.previous_version or "")
    assert restored.hash == before.hash


async def test_a_candidate_that_changes_an_old_expectation_is_refused_unless_accepted(
    browser: ego.Browser, changed: DemoServer, session_har: Path, tmp_path: Path, store: Path
) -> None:
    site = await learned(browser, session_har, tmp_path / "ws")
    changed.api_changed = True
    healed = await site.heal_tool("shop", "get_products")
    candidate = Path(healed.folder) / "candidate.js"
    # The agent's edit: the tool now answers with one more field.
    source = candidate.read_text().replace(
        "return rename(data);", "return {...rename(data), healed: true};"
    )
    candidate.write_text(source)
    current = site.tool_history("shop", "get_products")[0].hash

    check = await site.check_candidate("shop", "get_products")
    assert len(check.changed) == SEARCH_CASES
    with pytest.raises(CaseRegressionError, match="accept_changed_cases") as refused:
        await site.promote_candidate("shop", "get_products")
    assert len(refused.value.problems) == SEARCH_CASES
    assert site.tool_history("shop", "get_products")[0].hash == current  # nothing written

    promoted = await site.promote_candidate(
        "shop", "get_products", accept_changed_cases=check.changed
    )
    assert sorted(promoted.provenance["accepted_changed_cases"]) == sorted(check.changed)
    cases = json.loads((tmp_path / "ws/learnings/shop/tests/cases.json").read_text())
    accepted = [c for c in cases["cases"] if c["name"] in check.changed]
    assert all(c["expect"]["healed"] is True for c in accepted)


async def test_heal_names_a_selector_that_no_longer_matches_and_the_nearest_element(
    browser: ego.Browser, server: PageServer, tmp_path: Path, store: Path
) -> None:
    path = f"/heal-selector-{tmp_path.name}"
    url = server.route(path, '<!doctype html><h1 data-testid="title">Hello</h1>')
    learnings = Learnings(workspace=tmp_path / "ws")
    site = Site(browser, learnings)
    source = "async () => ({title: document.querySelector('[data-testid=\"title\"]').textContent})"
    await site.save_browser_tool(
        "sel", "get_title", source, "The page's title", domains=[f"127.0.0.1:{server.port}"]
    )
    tests = tmp_path / "ws/learnings/sel/tests"
    await record(browser, url, tests / "page.har")
    case = {"name": "title", "har": "page.har", "url": url, "tool": "get_title"}
    case["expect"] = {"title": "Hello"}
    (tests / "cases.json").write_text(json.dumps({"cases": [case]}))

    server.route(path, '<!doctype html><h1 data-testid="page-title">Hello</h1>')
    healed = await site.heal_tool("sel", "get_title")
    assert [case.passed for case in healed.cases] == [True]  # offline, the old page still is
    assert healed.live["error_kind"] == "TOOL_ERROR"
    gone = [c for c in healed.changes if c["kind"] == "selector gone"]
    assert gone == [
        {
            "kind": "selector gone",
            "where": '[data-testid="title"]',
            "detail": '[data-testid="title"] matches nothing on the live page; the nearest '
            'element is [data-testid="page-title"]',
            "old": '[data-testid="title"]',
            "new": '[data-testid="page-title"]',
        }
    ]
    assert healed.candidate == "copy"  # a hand-written tool: the agent edits the copy
    assert (Path(healed.folder) / "candidate.js").read_text() == source
