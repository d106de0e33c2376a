"""The learning loop in real headless Chromium: save, check, shadow, replace, crash, restore.

Every test writes into its own temporary workspace; the "project" root is a temporary copy of
``learnings/demo-shop``, so the real ``learnings/`` is never touched. Tools run against the
demo shop (``ego.demo``), which serves ``script-src 'self'`` like a strict real site.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

import ego
from ego.demo import DemoServer
from ego.errors import (
    SaveRefusedError,
    SnapshotReferenceError,
    UnknownVersionError,
    WorkspaceRequiredError,
)
from ego.learning.catalog.registry import Learnings
from ego.learning.catalog.validate import validate_site
from ego.learning.plan.history import HISTORY_DIR, content_hash, write_atomic
from ego.learning.plan.locks import LOCK_DIR
from ego.site import Site

ROOT = Path(__file__).resolve().parent.parent
DEMO_SHOP = ROOT / "learnings" / "demo-shop"

SEARCH_V1 = """async ({q}) => {
  const r = await fetch('/api/products?q=' + encodeURIComponent(q));
  const data = await r.json();
  return {version: 1, names: data.products.map((p) => p.name)};
}
"""
SEARCH_V2 = SEARCH_V1.replace("version: 1", "version: 2")
SEARCH_V3 = SEARCH_V1.replace("version: 1", "version: 3")
SEARCH_ARGS = {"q": {"type": "string", "required": True, "description": "words to find"}}


# -- fixtures -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo() -> Iterator[DemoServer]:
    server = DemoServer(port=0).start()
    yield server
    server.close()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A throwaway "project" learnings root holding a copy of demo-shop."""
    root = tmp_path / "project"
    shutil.copytree(DEMO_SHOP, root / "demo-shop")
    return root


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return tmp_path / "ws"


@pytest.fixture
def learnings(workspace: Path, project: Path) -> Learnings:
    return Learnings(workspace=workspace, project=project)


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
    return f"saved-{uuid.uuid4().hex[:8]}"


def tree(folder: Path) -> dict[str, Any]:
    """Every file (bytes) and folder under ``folder``, to compare before and after."""
    if not folder.exists():
        return {}
    found: dict[str, Any] = {}
    for path in sorted(folder.rglob("*")):
        key = path.relative_to(folder).as_posix()
        found[key] = path.read_bytes() if path.is_file() else "dir"
    return found


def checksum(folder: Path) -> str:
    digest = hashlib.sha256()
    for key, value in tree(folder).items():
        digest.update(key.encode() + b"\0" + (value if isinstance(value, bytes) else b"dir"))
    return digest.hexdigest()


async def save_search(site: Site, site_id: str, tab: ego.Tab, source: str = SEARCH_V1, **kw: Any):  # type: ignore[no-untyped-def]
    return await site.save_browser_tool(
        site_id,
        "find",
        source,
        kw.pop("description", "Search products"),
        SEARCH_ARGS,
        tab=tab,
        **kw,
    )


# -- saving and running -----------------------------------------------------------------------


async def test_saved_tool_is_found_by_learn_context_and_runs_through_the_cache(
    site: Site, shop_tab: ego.Tab, demo: DemoServer, workspace: Path, project: Path, site_id: str
) -> None:
    before_project = checksum(project)
    saved = await save_search(site, site_id, shop_tab, try_args={"q": "desk"})

    assert saved.created_site
    assert not saved.shadowed
    assert not saved.replaced
    assert saved.try_result == {"version": 1, "names": ["Mechanical Desk Clock", "Felt Desk Mat"]}
    site_dir = workspace / "learnings" / site_id
    assert saved.file == site_dir / "browser-tools" / "find.js"
    assert saved.file.read_text() == SEARCH_V1
    manifest = json.loads((site_dir / "manifest.json").read_text())
    assert manifest["id"] == site_id
    assert manifest["name"] == site_id
    assert manifest["domains"] == [f"shop.localhost:{demo.port}"]  # the tab's host and port
    assert manifest["startUrl"] == demo.url
    assert manifest["browserTools"]["find"]["args"] == SEARCH_ARGS  # compact map kept as given
    assert validate_site(site.learnings.find(site_id)) == []

    context = await site.learn_context(demo.url_for("/product/3"), detail="full")
    found = [t for t in context.tools if t.site_id == site_id]
    assert [t.tool_name for t in found] == ["find"]
    assert found[0].args["required"] == ["q"]
    assert found[0].description == "Search products"

    first = await site.run_browser_tool(site_id, "find", {"q": "lamp"}, tab=shop_tab)
    assert first == {"version": 1, "names": ["Trail Headlamp 400"]}
    assert site.last_run is not None
    assert site.last_run.mode == "stored"
    again = await site.run_browser_tool(site_id, "find", {"q": "lamp"}, tab=shop_tab)
    assert again == first
    assert site.last_run.mode == "cached"
    assert checksum(project) == before_project


async def test_full_schema_and_module_source_and_no_tab_given(
    site: Site, shop_tab: ego.Tab, demo: DemoServer, site_id: str
) -> None:
    source = (
        "const PREFIX = 'p:';\n"
        "export default async function names({limit}) {\n"
        "  const cards = [...document.querySelectorAll('[data-testid=product-card]')];\n"
        "  return cards.slice(0, limit).map((c) => PREFIX + c.dataset.productId);\n"
        "}\n"
    )
    args = {
        "type": "object",
        "properties": {"limit": {"type": "integer", "minimum": 1}},
        "required": ["limit"],
        "additionalProperties": False,
    }
    saved = await site.save_browser_tool(
        site_id,
        "card_ids",
        source,
        "Product ids on the list page",
        args,
        {"type": "array", "items": {"type": "string"}},
        domains=["shop.localhost"],  # no tab given: the open shop tab is found by its domain
        try_args={"limit": 2},
    )
    assert saved.try_result == ["p:1", "p:2"]
    assert await site.run_browser_tool(site_id, "card_ids", {"limit": 3}, tab=shop_tab) == [
        "p:1",
        "p:2",
        "p:3",
    ]


async def test_compile_check_does_not_run_the_source(
    site: Site, shop_tab: ego.Tab, demo: DemoServer, site_id: str
) -> None:
    probe = demo.url_for("/compile-probe")
    source = (
        f"const sent = fetch('{probe}?where=' + encodeURIComponent(location.href))"
        ".then((r) => r.status);\n"
        "export default async function probe() { return await sent; }\n"
    )
    await site.save_browser_tool(site_id, "probe", source, "Probe", tab=shop_tab)
    # Running it does fetch the probe (its module top level runs, and the tool waits for the
    # answer, so the request has reached the server); the compile check must not have.
    assert await site.run_browser_tool(site_id, "probe", tab=shop_tab) == 404
    probes = [path for _, path in demo.state.requests if path.startswith("/compile-probe")]
    assert probes
    assert all("about%3Ablank" not in path for path in probes)
    assert all("shop.localhost" in path for path in probes)


# -- checks that refuse, writing nothing ----------------------------------------------------------

THROWS = "async ({q}) => { throw new TypeError('no results box'); }"
NEEDS_LOGIN = "async ({q}) => ({error: 'NEEDS_LOGIN: no session cookie'})"
BROKEN = "async ({q}) => { throw new Error('SKILL_BROKEN: #results is gone'); }"

REFUSALS: dict[str, tuple[dict[str, Any], str, str]] = {
    # name: (save_browser_tool kwargs, reason, text in the message)
    "syntax error": (
        {"source": "async ({q}) => {\n  const x = q +;\n  return x;\n}\n"},
        "syntax",
        "line 2",
    ),
    "unclosed brace": ({"source": "async ({q}) => {\n  return q;\n"}, "syntax", "SyntaxError"),
    "bad full schema": (
        {"args": {"type": "object", "properties": {"q": {"type": "strin"}}}},
        "args schema",
        "not a valid JSON Schema",
    ),
    "compact entry not an object": ({"args": {"q": "string"}}, "args schema", "'q'"),
    "schema not an object type": ({"args": {"type": "array"}}, "args schema", '"object"'),
    "bad returns schema": ({"returns": {"type": 12}}, "args schema", "returns"),
    "try_args throws": ({"source": THROWS, "try_args": {"q": "x"}}, "try run", "no results box"),
    "try_args NEEDS_LOGIN": (
        {"source": NEEDS_LOGIN, "try_args": {"q": "x"}},
        "try run",
        "NEEDS_LOGIN",
    ),
    "try_args SKILL_BROKEN": (
        {"source": BROKEN, "try_args": {"q": "x"}},
        "try run",
        "SKILL_BROKEN",
    ),
    "try_args fail the schema": ({"try_args": {"q": 5}}, "try run", "args schema"),
    "result fails returns": (
        {"try_args": {"q": "desk"}, "returns": {"type": "array"}},
        "try run",
        "does not fit returns",
    ),
    "snapshot ref": (
        {"source": "async ({q}) => document.querySelector('[ref=e12]').click()"},
        "snapshot refs",
        "ref=e12",
    ),
    "bad tool name": ({"tool": "find-things"}, "name", "identifier"),
    "not a function": ({"source": "document.title"}, "source", "not a function"),
    "empty description": ({"description": "  "}, "manifest", "description"),
    "bad domain": ({"domains": ["not a host!"]}, "manifest", "domains"),
}


@pytest.mark.parametrize("case", REFUSALS.values(), ids=REFUSALS.keys())
async def test_a_failed_check_writes_nothing(
    site: Site, shop_tab: ego.Tab, workspace: Path, project: Path, site_id: str, case: Any
) -> None:
    kwargs, reason, text = case
    await save_search(site, site_id, shop_tab)  # an existing workspace site, to stay unchanged
    before, before_project = tree(workspace), checksum(project)
    call: dict[str, Any] = {
        "site_id": site_id,
        "tool": "find",
        "source": SEARCH_V2,
        "description": "Search v2",
        "args": SEARCH_ARGS,
        "tab": shop_tab,
        **kwargs,
    }
    with pytest.raises(SaveRefusedError) as caught:
        await site.save_browser_tool(**call)
    error = caught.value
    assert error.reason == reason, error
    assert text in str(error)
    assert "nothing was written" in str(error)
    assert tree(workspace) == before
    assert checksum(project) == before_project
    assert await site.run_browser_tool(site_id, "find", {"q": "lamp"}, tab=shop_tab) == {
        "version": 1,
        "names": ["Trail Headlamp 400"],
    }


async def test_a_refused_new_site_leaves_no_folder(
    site: Site, shop_tab: ego.Tab, workspace: Path, site_id: str
) -> None:
    with pytest.raises(SaveRefusedError):
        await save_search(site, site_id, shop_tab, source="async ({q}) => { return q +; }")
    with pytest.raises(SaveRefusedError):
        await save_search(site, "Bad_Id", shop_tab)
    assert not workspace.exists()


async def test_snapshot_refs_are_refused_with_the_reason(
    site: Site, shop_tab: ego.Tab, workspace: Path, site_id: str
) -> None:
    source = (
        "async () => {\n"
        "  const target = document.elementFromPoint(412, 230);\n"
        "  target.click();\n"
        "}\n"
    )
    with pytest.raises(SnapshotReferenceError) as caught:
        await site.save_browser_tool(site_id, "buy", source, "Click buy", tab=shop_tab)
    assert caught.value.problems == ["line 2: pixel coordinates: elementFromPoint("]
    assert "stable selectors" in str(caught.value)
    assert "site's own API" in str(caught.value)
    assert not workspace.exists()


async def test_new_site_needs_domains_or_a_tab(
    site: Site, browser: ego.Browser, workspace: Path, site_id: str
) -> None:
    blank = await browser.new_tab()
    try:
        with pytest.raises(SaveRefusedError) as caught:
            await save_search(site, site_id, blank)
    finally:
        await blank.close()
    assert caught.value.reason == "domains"
    assert "domains=" in str(caught.value)
    assert not workspace.exists()


async def test_saving_needs_a_workspace(browser: ego.Browser, project: Path, site_id: str) -> None:
    site = Site(browser, Learnings(roots=[project]))
    before = checksum(project)
    with pytest.raises(WorkspaceRequiredError) as caught:
        await site.save_browser_tool(site_id, "find", SEARCH_V1, "x", domains=["shop.localhost"])
    assert "EGO_WORKSPACE" in str(caught.value)
    assert "workspace=" in str(caught.value)
    with pytest.raises(WorkspaceRequiredError):
        await site.save_note("demo-shop", "tips", "# Tips\n")
    assert checksum(project) == before


# -- replacing, history and restore ---------------------------------------------------------


async def test_replacing_keeps_the_previous_version_and_re_stores_the_new_one(
    site: Site, shop_tab: ego.Tab, workspace: Path, site_id: str
) -> None:
    await save_search(site, site_id, shop_tab)
    assert (await site.run_browser_tool(site_id, "find", {"q": "lamp"}, tab=shop_tab))[
        "version"
    ] == 1
    assert site.last_run is not None
    assert site.last_run.mode == "stored"
    await site.run_browser_tool(site_id, "find", {"q": "lamp"}, tab=shop_tab)
    assert site.last_run.mode == "cached"

    saved = await save_search(site, site_id, shop_tab, SEARCH_V2, description="Search v2")
    assert saved.replaced
    assert saved.previous_version is not None
    kept_dir = workspace / "learnings" / site_id / HISTORY_DIR / "find"
    assert (kept_dir / f"{saved.previous_version}.js").read_text() == SEARCH_V1
    record = json.loads((kept_dir / f"{saved.previous_version}.json").read_text())
    assert record["entry"]["description"] == "Search products"

    context = await site.learn_context(shop_tab.url)
    assert [t.description for t in context.tools if t.site_id == site_id] == ["Search v2"]
    result = await site.run_browser_tool(site_id, "find", {"q": "lamp"}, tab=shop_tab)
    assert result == {"version": 2, "names": ["Trail Headlamp 400"]}
    assert site.last_run.mode == "stored"  # its content hash changed
    await site.run_browser_tool(site_id, "find", {"q": "lamp"}, tab=shop_tab)
    assert site.last_run.mode == "cached"


async def test_saving_the_same_tool_again_changes_nothing(
    site: Site, shop_tab: ego.Tab, workspace: Path, site_id: str
) -> None:
    await save_search(site, site_id, shop_tab)
    before = tree(workspace)
    saved = await save_search(site, site_id, shop_tab)
    assert saved.unchanged
    assert not saved.replaced
    assert tree(workspace) == before


async def test_history_and_restore_round_trip(
    site: Site, shop_tab: ego.Tab, workspace: Path, site_id: str
) -> None:
    await save_search(site, site_id, shop_tab, SEARCH_V1, description="v1")
    await save_search(site, site_id, shop_tab, SEARCH_V2, description="v2")
    await save_search(site, site_id, shop_tab, SEARCH_V3, description="v3")
    versions = site.tool_history(site_id, "find")
    assert [(v.current, v.description) for v in versions] == [
        (True, "v3"),
        (False, "v2"),
        (False, "v1"),
    ]
    assert [v.hash for v in versions] == [
        content_hash(s.encode()) for s in (SEARCH_V3, SEARCH_V2, SEARCH_V1)
    ]
    assert all(v.size == len(SEARCH_V1) for v in versions)
    oldest = versions[-1]

    restored = site.restore_tool(site_id, "find", oldest.version)
    assert restored.hash == oldest.hash
    assert restored.previous_version is not None
    after = site.tool_history(site_id, "find")
    assert [(v.current, v.description) for v in after] == [
        (True, "v1"),
        (False, "v3"),
        (False, "v2"),
        (False, "v1"),
    ]
    context = await site.learn_context(shop_tab.url)
    assert [t.description for t in context.tools if t.site_id == site_id] == ["v1"]
    result = await site.run_browser_tool(site_id, "find", {"q": "lamp"}, tab=shop_tab)
    assert result["version"] == 1

    # By a hash prefix too; the current file is always browser-tools/find.js.
    v2 = next(v for v in after if v.description == "v2")
    site.restore_tool(site_id, "find", v2.hash[:8])
    assert (workspace / "learnings" / site_id / "browser-tools" / "find.js").read_text() == (
        SEARCH_V2
    )
    assert (await site.run_browser_tool(site_id, "find", {"q": "x"}, tab=shop_tab))["version"] == 2

    with pytest.raises(UnknownVersionError) as caught:
        site.restore_tool(site_id, "find", "19990101T000000.000000Z")
    assert oldest.version in str(caught.value)
    assert site.tool_history(site_id, "nothing") == []


# -- built-in learnings are shadowed, never modified -----------------------------------------


async def test_a_builtin_site_is_shadowed_not_modified(
    site: Site, shop_tab: ego.Tab, workspace: Path, project: Path
) -> None:
    before = checksum(project)
    source = "async () => ({logged_in: false, saved: 'in the workspace'})"
    saved = await site.save_browser_tool("demo-shop", "whoami", source, "Who am I (saved)")
    assert saved.shadowed
    assert saved.replaced
    assert not saved.created_site
    assert checksum(project) == before

    copy_dir = workspace / "learnings" / "demo-shop"
    assert saved.file == copy_dir / "browser-tools" / "whoami.js"
    assert site.learnings.find("demo-shop").root == workspace / "learnings"
    kept = site.tool_history("demo-shop", "whoami")
    assert [v.current for v in kept] == [True, False]
    assert kept[1].file.read_bytes() == (project / "demo-shop/browser-tools/whoami.js").read_bytes()

    result = await site.run_browser_tool("demo-shop", "whoami", tab=shop_tab)
    assert result == {"logged_in": False, "saved": "in the workspace"}
    # The copy keeps every other tool working, the Python one included.
    found = await site.run_browser_tool(
        "demo-shop", "search_products", {"query": "desk"}, tab=shop_tab
    )
    assert found["count"] == 2
    cheapest = await site.run_tool(
        "demo-shop", "cheapest_in_category", {"category": "kitchen"}, tab=shop_tab
    )
    assert "product" in cheapest

    note = await site.save_note("demo-shop", "tips", "# Shop tips\nSearch by API.\n")
    assert not note.shadowed  # the workspace copy exists now
    context = await site.learn_context(shop_tab.url)
    assert "Shop tips" in [n.title for n in context.notes]
    assert checksum(project) == before


async def test_a_note_on_a_builtin_site_shadows_it(
    site: Site, workspace: Path, project: Path
) -> None:
    before = checksum(project)
    note = await site.save_note("demo-shop", "overview", "# New overview\nShorter.\n")
    assert note.shadowed
    assert note.replaced
    assert note.previous_file is not None
    assert note.previous_file.read_bytes() == (project / "demo-shop/notes/overview.md").read_bytes()
    assert checksum(project) == before
    titles = [n.title for n in (await site.learn_context("http://shop.localhost/")).notes]
    assert "New overview" in titles


async def test_notes_on_a_new_site_and_replaced(
    site: Site, shop_tab: ego.Tab, workspace: Path, site_id: str
) -> None:
    with pytest.raises(SaveRefusedError) as caught:
        await site.save_note(site_id, "api", "# API\n")
    assert caught.value.reason == "domains"
    for bad in ("../x", "a b", ""):
        with pytest.raises(SaveRefusedError):
            await site.save_note(site_id, bad, "# x\n", tab=shop_tab)
    with pytest.raises(SaveRefusedError):
        await site.save_note(site_id, "api", "  \n", tab=shop_tab)
    assert not workspace.exists()

    first = await site.save_note(site_id, "api.md", "# The API\nGET /api/products?q=", tab=shop_tab)
    assert first.created_site
    assert first.file.name == "api.md"
    second = await site.save_note(site_id, "api", "# The API, v2\n", tab=shop_tab)
    assert second.replaced
    assert second.previous_file is not None
    assert second.previous_file.read_text() == "# The API\nGET /api/products?q=\n"
    manifest = json.loads((workspace / "learnings" / site_id / "manifest.json").read_text())
    assert manifest["notes"] == ["notes/api.md"]
    notes = (await site.learn_context(shop_tab.url)).notes
    assert [n.title for n in notes if n.site_id == site_id] == ["The API, v2"]


# -- crashes and freshness ---------------------------------------------------------------------


def fail_replace(monkeypatch: pytest.MonkeyPatch, name: str, nth: int) -> list[Path]:
    """Make the ``nth`` os.replace onto a path called ``name`` raise (a simulated crash).

    Returns the targets of the replaces that went through, in order.
    """
    real = os.replace
    done: list[Path] = []
    count = 0

    def replace(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
        nonlocal count
        if Path(dst).name == name:
            count += 1
            if count == nth:
                raise OSError("simulated crash")
        real(src, dst, *args, **kwargs)
        done.append(Path(dst))

    monkeypatch.setattr(os, "replace", replace)
    return done


def assert_consistent(learnings_root: Path, site_id: str) -> None:
    fresh = Learnings(roots=[learnings_root])
    entry = fresh.find(site_id)
    assert entry.valid, entry.problems
    assert validate_site(entry) == []  # every declared file exists
    assert not list(learnings_root.glob(".ego-saving-*"))


@pytest.mark.parametrize("nth", [1, 2], ids=["pin-step", "final-step"])
async def test_a_crash_between_tool_file_and_manifest_leaves_a_consistent_site(
    site: Site,
    shop_tab: ego.Tab,
    workspace: Path,
    site_id: str,
    monkeypatch: pytest.MonkeyPatch,
    nth: int,
) -> None:
    await save_search(site, site_id, shop_tab)
    live = workspace / "learnings" / site_id / "browser-tools" / "find.js"
    done = fail_replace(monkeypatch, "manifest.json", nth)
    with pytest.raises(OSError, match="simulated crash"):
        await save_search(site, site_id, shop_tab, SEARCH_V2, description="v2")
    monkeypatch.undo()
    # The final step fails after the tool file was replaced: the case the manifest must survive.
    assert (live in done) == (nth == 2)
    assert sum(path.name == "manifest.json" for path in done) == nth - 1

    assert_consistent(workspace / "learnings", site_id)
    result = await site.run_browser_tool(site_id, "find", {"q": "lamp"}, tab=shop_tab)
    assert result["version"] == 1  # the old tool, whole: its entry and its source
    context = await site.learn_context(shop_tab.url)
    assert [t.description for t in context.tools if t.site_id == site_id] == ["Search products"]

    # Saving again after the crash works and does not keep v1 twice.
    await save_search(site, site_id, shop_tab, SEARCH_V2, description="v2")
    assert (await site.run_browser_tool(site_id, "find", {"q": "x"}, tab=shop_tab))["version"] == 2
    kept = [v for v in site.tool_history(site_id, "find") if not v.current]
    assert [v.hash for v in kept] == [content_hash(SEARCH_V1.encode())]
    assert live.read_text() == SEARCH_V2


async def test_a_crash_adding_a_tool_leaves_the_site_as_it_was(
    site: Site, shop_tab: ego.Tab, workspace: Path, site_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    await save_search(site, site_id, shop_tab)
    fail_replace(monkeypatch, "manifest.json", 1)
    with pytest.raises(OSError, match="simulated crash"):
        await site.save_browser_tool(
            site_id, "title", "async () => document.title", "Title", tab=shop_tab
        )
    monkeypatch.undo()
    assert_consistent(workspace / "learnings", site_id)
    assert sorted(site.learnings.site(site_id).browser_tools) == ["find"]
    assert (await site.run_browser_tool(site_id, "find", {"q": "lamp"}, tab=shop_tab))[
        "version"
    ] == 1


async def test_a_crash_creating_a_site_leaves_nothing(
    site: Site,
    shop_tab: ego.Tab,
    workspace: Path,
    project: Path,
    site_id: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = checksum(project)
    fail_replace(monkeypatch, site_id, 1)  # the rename of the assembled folder into place
    with pytest.raises(OSError, match="simulated crash"):
        await save_search(site, site_id, shop_tab)
    fail_replace(monkeypatch, "demo-shop", 1)
    with pytest.raises(OSError, match="simulated crash"):
        await site.save_browser_tool("demo-shop", "whoami", "async () => 1", "x", tab=shop_tab)
    monkeypatch.undo()
    # Only the (hidden, never listed) folder of the sites' lock files is there.
    assert [p.name for p in (workspace / "learnings").iterdir()] == [LOCK_DIR]
    assert checksum(project) == before
    assert site.learnings.find("demo-shop").root == project


async def test_same_size_rewrites_within_one_clock_tick_are_seen(
    site: Site, shop_tab: ego.Tab, workspace: Path, site_id: str
) -> None:
    await save_search(site, site_id, shop_tab, description="desc A")
    manifest = workspace / "learnings" / site_id / "manifest.json"
    tool_file = manifest.parent / "browser-tools" / "find.js"
    assert (await site.learn_context(shop_tab.url)).tools  # cached in Learnings
    # A coarse clock: the files claim to be from the future, so a rewrite gets an older time.
    future = manifest.stat().st_mtime_ns + 10_000_000_000
    for path in (manifest, tool_file):
        os.utime(path, ns=(future, future))
    site.learnings.site(site_id)  # re-read and cache at those stamps
    await site.run_browser_tool(site_id, "find", {"q": "x"}, tab=shop_tab)

    await save_search(site, site_id, shop_tab, SEARCH_V2, description="desc B")  # same sizes
    assert manifest.stat().st_mtime_ns > future
    context = await site.learn_context(shop_tab.url)
    assert [t.description for t in context.tools if t.site_id == site_id] == ["desc B"]
    result = await site.run_browser_tool(site_id, "find", {"q": "x"}, tab=shop_tab)
    assert result["version"] == 2


def test_write_atomic_replaces_whole_files_and_moves_mtime_on(tmp_path: Path) -> None:
    target = tmp_path / "a" / "file.txt"
    write_atomic(target, b"one")
    first = target.stat()
    os.utime(target, ns=(first.st_atime_ns, first.st_mtime_ns + 5_000_000_000))
    bumped = target.stat().st_mtime_ns
    write_atomic(target, b"two")
    assert target.read_bytes() == b"two"
    assert target.stat().st_mtime_ns > bumped
    assert [p.name for p in target.parent.iterdir()] == ["file.txt"]  # no temporary left


async def test_two_saves_into_a_new_site_at_once_keep_both(
    site: Site, shop_tab: ego.Tab, workspace: Path, site_id: str
) -> None:
    first, second = await asyncio.gather(
        save_search(site, site_id, shop_tab),
        site.save_browser_tool(
            site_id, "title", "async () => document.title", "Title", tab=shop_tab
        ),
    )
    assert [first.created_site, second.created_site].count(True) == 1
    assert sorted(site.learnings.site(site_id).browser_tools) == ["find", "title"]
    assert_consistent(workspace / "learnings", site_id)
    assert await site.run_browser_tool(site_id, "title", tab=shop_tab) == "Products · Ego Demo Shop"


async def test_saving_a_builtin_tool_unchanged_makes_no_copy(
    site: Site, shop_tab: ego.Tab, workspace: Path, project: Path
) -> None:
    manifest = json.loads((project / "demo-shop" / "manifest.json").read_text())
    entry = manifest["browserTools"]["get_cart"]
    source = (project / "demo-shop" / entry["path"]).read_text()
    saved = await site.save_browser_tool(
        "demo-shop",
        "get_cart",
        source,
        entry["description"],
        entry["args"],
        entry["returns"],
        entry["sideEffect"],
        auth=entry["auth"],
        tab=shop_tab,
    )
    assert saved.unchanged
    assert not saved.shadowed
    assert not workspace.exists()


async def test_a_workspace_that_is_the_project_is_refused(
    browser: ego.Browser, project: Path, site_id: str
) -> None:
    before = checksum(project)
    site = Site(browser, Learnings(workspace=project.parent, project=project.parent / "learnings"))
    (project.parent / "learnings").symlink_to(project)
    with pytest.raises(WorkspaceRequiredError) as caught:
        await site.save_note("demo-shop", "tips", "# Tips\n")
    assert "never modified" in str(caught.value)
    assert checksum(project) == before
