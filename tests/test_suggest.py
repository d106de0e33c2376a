"""``ego suggest`` against a served site with a JSON API (tests/helpers/loop_sites.py):
recordings of a person's visits become drafted tools whose args, constants, auth and cases
are right.

Two visits that differ in the page asked and the note opened give ``page`` as an arg,
``per_page`` as a constant and the note's UUID as a path arg; a POST whose CSRF token comes
from a meta tag and one whose token comes from a cookie both run live against the site (which
checks the token) and from their offline cases; a 401 is a NEEDS_LOGIN case; the stylesheet,
the script and the other host's image are skipped with their reasons.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

import ego
from ego.learning.catalog.registry import Learnings
from ego.learning.suggest import list_drafts, suggest
from ego.learning.suggest.source import read_constants, with_constants
from ego.site import Site
from tests.helpers.health import isolated_store
from tests.helpers.loop_sites import META_TOKEN, NOTES, NOTES_ENDPOINTS, NotesServer

pytestmark = pytest.mark.chrome


@pytest.fixture(scope="module")
def notes() -> Iterator[NotesServer]:
    server = NotesServer()
    yield server
    server.close()


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    yield from isolated_store(monkeypatch, tmp_path / "state")


async def visit(
    browser: ego.Browser, notes: NotesServer, har: Path, page: int, note: int, *, act: bool
) -> None:
    """A person's visit, recorded: a page of the list, a note, and (``act``) pinning it and
    adding a tag."""
    async with browser.isolated_context() as context:
        tab = await context.new_tab()
        async with tab.record_har(har) as recording:
            await tab.navigate(notes.url(f"/?page={page}"))
            await tab.wait_for(selector="body[data-ready]")
            await tab.navigate(notes.url(f"/note/{NOTES[note]['id']}"))
            await tab.wait_for(selector="body[data-ready]")
            if act:
                await tab.click("#pin")
                await tab.wait_for(selector="#pin[data-state]")
                await recording.wait_idle()  # its answer read whole before the page moves on
                await tab.navigate(notes.url("/tags"))
                await tab.wait_for(selector="body[data-ready]")
                await tab.click("#add")
                await tab.wait_for(selector="#add[data-state]")
            await recording.wait_idle()


@pytest.fixture(scope="module")
async def recordings(
    browser: ego.Browser, notes: NotesServer, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[list[Path]]:
    folder = tmp_path_factory.mktemp("recordings")
    first, second = folder / "first.har", folder / "second.har"
    await visit(browser, notes, first, 1, 0, act=True)
    await visit(browser, notes, second, 2, 3, act=False)
    return [first, second]


def test_two_recordings_give_templated_args_constants_and_skipped_reasons(
    recordings: list[Path], notes: NotesServer, tmp_path: Path
) -> None:
    report = suggest("notes", recordings, learnings=Learnings(workspace=tmp_path / "ws"))
    drafts = {draft.endpoint: draft for draft in report.drafts}
    assert sorted(drafts) == sorted(NOTES_ENDPOINTS)

    listing = drafts["GET /v1/notes"]
    assert listing.args["page"]["type"] == "integer"
    assert listing.args["page"]["examples"] == [1, 2]
    assert listing.constants == {"query:per_page": 2}
    assert listing.side_effect == "read"
    assert listing.returns is not None
    assert listing.returns["type"] == "array"

    detail = drafts["GET /v1/notes/{note_id}"]
    assert set(detail.args) == {"note_id"}
    assert detail.args["note_id"]["examples"] == [NOTES[0]["id"], NOTES[3]["id"]]

    pin = drafts["POST /v1/notes/{note_id}/pin"]
    assert pin.side_effect == "irreversible"
    assert pin.auth == "session"
    assert pin.csrf is not None
    assert (pin.csrf.source, pin.csrf.name) == ("meta", "csrf-token")
    assert pin.csrf.header == "X-CSRF-Token"
    tags = drafts["POST /v1/tags"]
    assert tags.csrf is not None
    assert (tags.csrf.source, tags.csrf.name) == ("cookie", "csrftoken")
    assert tags.csrf.header == "X-CSRFToken"

    private = drafts["GET /v1/private"]
    assert private.auth == "session"
    assert [case.case.get("expect_error") for case in private.cases] == ["NEEDS_LOGIN"]

    skipped = {(item.reason, item.url.rsplit("/", 1)[-1]) for item in report.skipped}
    assert ("static asset", "site.css") in skipped
    assert ("static asset", "notes.js") in skipped
    assert ("third-party host", "pixel.png") in skipped
    assert any(reason == "page (HTML document)" for reason, _ in skipped)
    # Nothing dropped without a word: each request of the recordings is a draft's or skipped.
    entries = sum(len(json.loads(p.read_text())["log"]["entries"]) for p in recordings)
    assert sum(d.calls for d in report.drafts) + len(report.skipped) == entries
    assert report.manifest is not None  # a site with no learning yet: drafted from the host
    assert report.manifest["domains"] == [f"127.0.0.1:{notes.port}"]


async def test_drafted_tools_pass_their_cases_save_through_the_gate_and_run_live(
    browser: ego.Browser,
    notes: NotesServer,
    recordings: list[Path],
    tmp_path: Path,
    store: Path,
) -> None:
    learnings = Learnings(workspace=tmp_path / "ws")
    site = Site(browser, learnings)
    report = suggest("notes", recordings, learnings=learnings)
    assert report.drafts_dir is not None
    assert report.drafts_dir.is_dir()
    assert "notes" not in {entry.site_id for entry in learnings.sites()}  # not live: drafts

    for draft in report.drafts:
        results = await site.check_draft("notes", draft.tool)
        assert results, draft.tool
        assert all(r.passed for r in results), (draft.tool, results)
    names = {d.endpoint: d.tool for d in report.drafts}
    for draft in report.drafts:
        side = "write" if draft.side_effect != "read" else None
        saved = await site.save_draft("notes", draft.tool, side_effect=side)
        assert saved.cases is not None
        assert all(c.passed for c in saved.cases.cases)
    assert list_drafts(learnings, "notes") == []
    manifest = learnings.site("notes")
    assert manifest.browser_tools[names["POST /v1/tags"]].side_effect == "write"
    cases = json.loads((tmp_path / "ws/learnings/notes/tests/cases.json").read_text())
    assert len(cases["cases"]) >= len(NOTES_ENDPOINTS)

    # Live, against the served site: what the recording showed.
    listed = await site.run_tool("notes", names["GET /v1/notes"], {"page": 2})
    assert [n["title"] for n in listed] == ["Books", "Trips"]
    note = await site.run_tool(
        "notes", names["GET /v1/notes/{note_id}"], {"note_id": NOTES[1]["id"]}
    )
    assert note["title"] == "Ideas"
    with pytest.raises(ego.NeedsLoginError):
        await site.run_tool("notes", names["GET /v1/private"], {})

    async with browser.isolated_context() as context:
        tab = await context.new_tab()
        await tab.navigate(notes.url(f"/note/{NOTES[2]['id']}"))
        pinned = await site.run_tool(
            "notes", names["POST /v1/notes/{note_id}/pin"], {"note_id": NOTES[2]["id"]}, tab=tab
        )
        assert pinned == {"id": NOTES[2]["id"], "pinned": True}
        assert notes.pins[NOTES[2]["id"]] is True  # the site took the meta tag's token
        await tab.navigate(notes.url("/tags"))
        before = len(notes.tags)
        added = await site.run_tool("notes", names["POST /v1/tags"], {"name": "later"}, tab=tab)
        assert added["tag"]["name"] == "later"
        assert len(notes.tags) == before + 1
    sent = [h for method, path, h in notes.requests if method == "POST" and path == "/v1/tags"]
    assert sent[-1].get("X-CSRFToken")  # read from the cookie at run time
    assert META_TOKEN not in json.dumps(report.as_dict())


def test_a_drafted_sources_constants_read_and_rewrite() -> None:
    from ego.learning.suggest.source import api_tool_source

    source = api_tool_source(
        comment="test",
        method="GET",
        paths=["/api/a/{id}"],
        query={"q": {"arg": "q"}, "limit": {"const": 3}},
        body=None,
        csrf=None,
    )
    constants = read_constants(source)
    assert constants is not None
    assert constants["PATHS"] == ["/api/a/{id}"]
    changed = with_constants(source, PATHS=["/api/a/{id}", "/api/b/{id}"], RENAMED={"t": "n"})
    again = read_constants(changed)
    assert again is not None
    assert again["PATHS"] == ["/api/a/{id}", "/api/b/{id}"]
    assert again["RENAMED"] == {"t": "n"}
    assert again["QUERY"] == constants["QUERY"]
    assert read_constants("async () => 1") is None
    with pytest.raises(ValueError, match="not a drafted API tool"):
        with_constants("async () => 1", PATHS=[])
