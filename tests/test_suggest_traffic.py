"""``ego suggest`` on the traffic a real front end sends (tests/helpers/library_site.py): a session
driven with ego's page verbs (log in, filter with repeated parameters, page with a cursor, a
GraphQL query and mutation, a form POST with a CSRF token, a multipart review, a file
upload) becomes drafts whose own cases pass and whose live runs, in the logged-in tab,
return what the page got; the bearer token is read where the page keeps it (localStorage as
JSON here; sessionStorage as it is, or a cookie its script reads, in other runs), never
written to a file; a call the page moved on from is skipped with its reason; a drafted tool
never sends a request off the page's origin.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

import ego
from ego.learning.catalog.registry import Learnings
from ego.learning.suggest import SuggestReport, load_draft, suggest
from ego.learning.suggest.auth import TokenPlace
from ego.learning.suggest.source import api_tool_source, read_constants
from ego.learning.suggest.values import schema_of
from ego.page.tab import Tab
from ego.replay import Recorder
from ego.site import Site
from tests.helpers.commands import ego_async, ego_env
from tests.helpers.health import isolated_store
from tests.helpers.library_site import BOOKS, LIBRARY_ENDPOINTS, PASSWORD, LibraryServer

pytestmark = pytest.mark.chrome

AUTH_PLACE = TokenPlace(
    "Authorization", "localStorage", "library.auth", ("accessToken",), "Bearer "
)


@dataclass
class Session:
    """A recorded session on the library, the tab still logged in, its drafts, and each
    draft kept through the save gate (``saved``: tool name -> its save)."""

    har: Path
    tab: Tab
    learnings: Learnings
    report: SuggestReport
    site: Site
    saved: dict[str, Any]

    def tool(self, endpoint: str) -> str:
        return str(next(d.tool for d in self.report.drafts if d.endpoint == endpoint))

    def draft(self, endpoint: str) -> Any:
        return next(d for d in self.report.drafts if d.endpoint == endpoint)

    async def run(self, endpoint: str, args: dict[str, Any], *, tab: Tab | None = None) -> Any:
        """The saved tool of ``endpoint``, live in the logged-in tab (or ``tab``)."""
        return await self.site.run_tool(
            "library", self.tool(endpoint), args, tab=tab or self.tab, confirm=True
        )


async def log_in(tab: Tab, library: LibraryServer, recording: Recorder) -> None:
    await tab.navigate(library.url("/login"))
    await tab.wait_for(selector="body[data-ready]")
    await tab.type("#user", "ada")
    await tab.type("#password", PASSWORD)
    await tab.click("#login")
    await tab.wait_for(selector="#login[data-state]")
    await recording.wait_idle()  # the answer read whole before the page moves on


async def work(tab: Tab, library: LibraryServer, recording: Recorder, cover: Path) -> None:
    """What a person does on the library, with ego's page verbs."""
    await log_in(tab, library, recording)
    await tab.navigate(library.url("/"))
    await tab.wait_for(selector="body[data-ready]")
    await tab.check("#scifi")
    await tab.check("#classic")
    await tab.click("#apply")
    await tab.wait_for(selector='#books[data-state="1"]')
    await tab.click("#next")
    await tab.wait_for(selector='#books[data-state="2"]')
    await tab.uncheck("#classic")
    await tab.click("#apply")
    await tab.wait_for(selector='#books[data-state="3"]')
    await tab.type("#author", "Ursula K. Le Guin")
    await tab.click("#find")
    await tab.wait_for(selector="#find[data-state]")
    await recording.wait_idle()
    for slug in ("dune", "the-left-hand-of-darkness"):
        await tab.navigate(library.url(f"/book/{slug}"))
        await tab.wait_for(selector="body[data-ready]")
    await tab.select("#days", "14")
    await tab.click("#borrow")
    await tab.wait_for(selector="#borrow[data-state]")
    await tab.select("#rating", "5")
    await tab.type("#text", "Winter, and a long walk.")
    await tab.click("#review")
    await tab.wait_for(selector="#review[data-state]")
    await tab.upload("#cover", cover)
    await tab.click("#upload")
    await tab.wait_for(selector="#upload[data-state]")
    await recording.wait_idle()
    await tab.navigate(library.url("/loans"))
    await tab.wait_for(selector="body[data-ready]")
    await tab.click(".renew")
    await tab.wait_for(selector="#loans[data-state]")
    await recording.wait_idle()


@pytest.fixture(scope="module")
def library() -> Iterator[LibraryServer]:
    server = LibraryServer()
    yield server
    server.close()


@pytest.fixture(scope="module")
async def session(
    browser: ego.Browser, library: LibraryServer, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Session]:
    folder = tmp_path_factory.mktemp("library")
    cover = folder / "cover.png"
    cover.write_bytes(b"\x89PNG\r\n\x1a\n cover")
    har = folder / "session.har"
    with pytest.MonkeyPatch.context() as monkeypatch:
        store = isolated_store(monkeypatch, folder / "state")
        next(store)
        async with browser.isolated_context() as context:
            tab = await context.new_tab()
            async with tab.record_har(har) as recording:
                await work(tab, library, recording, cover)
            learnings = Learnings(workspace=folder / "ws")
            report = suggest("library", [har], learnings=learnings)
            site = Site(browser, learnings)
            # Each draft kept through the save gate: its own cases run there first.
            saved = {d.tool: await site.save_draft("library", d.tool) for d in report.drafts}
            yield Session(har, tab, learnings, report, site, saved)
        next(store, None)


def recorded_answer(session: Session, method: str, path_and_query: str, sent: str = "") -> Any:
    """The last answer the page got to ``METHOD path?query`` (whose body holds ``sent``) in
    the recording."""
    entries = json.loads(session.har.read_text())["log"]["entries"]
    found = [
        e
        for e in entries
        if e["request"]["method"] == method
        and e["request"]["url"].endswith(path_and_query)
        and sent in (e["request"].get("postData") or {}).get("text", "")
    ]
    return json.loads(found[-1]["response"]["content"]["text"])


def constants_of(source: str) -> dict[str, Any]:
    constants = read_constants(source)
    assert constants is not None, "not a drafted tool's source"
    return constants


def files_under(*folders: Path) -> Iterator[Path]:
    for folder in folders:
        yield from (path for path in folder.rglob("*") if path.is_file())


async def test_the_session_gives_a_draft_per_endpoint_each_passing_its_cases_no_secret_kept(
    library: LibraryServer, session: Session
) -> None:
    report = session.report
    assert sorted(d.endpoint for d in report.drafts) == sorted(LIBRARY_ENDPOINTS)
    effects = {d.endpoint: d.side_effect for d in report.drafts}
    assert effects == {
        "POST /api/session": "irreversible",
        "GET /api/me": "read",
        "GET /api/books": "read",
        "GET /api/books/{book}": "read",
        "POST /graphql query BooksByAuthor": "read",
        "POST /api/loans": "irreversible",
        "POST /api/reviews": "irreversible",
        "GET /api/loans": "read",
        "POST /graphql mutation RenewLoan": "write",
    }
    upload = [s for s in report.skipped if s.reason == "file upload"]
    assert [s.url.rsplit("/", 1)[-1] for s in upload] == ["covers"]
    assert "'cover'" in upload[0].detail
    assert not [s for s in report.skipped if s.reason in ("incomplete response", "not JSON")]

    for draft in report.drafts:
        saved = session.saved[draft.tool]
        assert saved.cases is not None
        assert len(saved.cases.cases) == len(draft.cases) > 0, draft.tool
        assert all(c.passed for c in saved.cases.cases), (draft.tool, saved.cases)
        assert all(c.case.get("expect", True) is not None for c in draft.cases), draft.tool

    # The tokens the site issued and the password typed are in no file the loop wrote.
    assert library.tokens
    secrets = [*library.tokens, PASSWORD]
    for path in files_under(session.har.parent):
        text = path.read_bytes().decode("utf-8", "replace")
        assert not [s for s in secrets if s in text], path


async def test_repeated_query_parameters_are_an_array_arg_sent_as_repeated_parameters(
    session: Session, library: LibraryServer
) -> None:
    books = session.draft("GET /api/books")
    assert books.args["tag"]["type"] == "array"
    assert books.args["tag"]["items"] == {"type": "string"}
    assert books.args["tag"]["examples"] == [["scifi", "classic"], ["scifi"]]
    assert books.constants == {"query:page[size]": 2}
    cursor = books.args["page_after"]["examples"][0]

    await session.tab.navigate(library.url("/"))
    before = len(library.requests)
    got = await session.run("GET /api/books", {"tag": ["scifi", "classic"], "page_after": cursor})
    sent = [path for _, path, _, _ in library.requests[before:] if path.startswith("/api/books")]
    wanted = f"/api/books?tag=scifi&tag=classic&page%5Bsize%5D=2&page%5Bafter%5D={cursor}"
    assert sent == [wanted]  # as the page sent it
    assert got == recorded_answer(session, "GET", wanted)
    assert [b["id"] for b in got["data"]] == [BOOKS[2]["slug"], BOOKS[3]["slug"]]


async def test_form_and_multipart_bodies_are_args_and_a_file_upload_is_refused(
    session: Session, library: LibraryServer
) -> None:
    loans = session.draft("POST /api/loans")
    assert set(loans.args) == {"book_id", "days"}
    assert loans.args["days"]["type"] == "integer"
    assert constants_of(loans.source)["ENCODING"] == "form"
    reviews = session.draft("POST /api/reviews")
    assert set(reviews.args) == {"book_id", "rating", "text"}
    assert constants_of(reviews.source)["ENCODING"] == "multipart"

    await session.tab.navigate(library.url("/book/emma"))
    await session.tab.wait_for(selector="body[data-ready]")
    before = len(library.requests)
    loan = await session.run("POST /api/loans", {"book_id": "emma", "days": 21})
    assert loan["data"]["attributes"] == {"book": "emma", "due": "+21d"}
    assert library.loans[-1]["book"] == "emma"
    _, _, headers, body = next(r for r in library.requests[before:] if r[1] == "/api/loans")
    assert headers["Content-Type"].startswith("application/x-www-form-urlencoded")
    assert body == b"book_id=emma&days=21"
    assert headers["X-CSRF-Token"]  # read from the page's meta tag at run time

    review = await session.run(
        "POST /api/reviews", {"book_id": "emma", "rating": 4, "text": "Clever & kind"}
    )
    assert review["data"]["attributes"] == {
        "book_id": "emma",
        "rating": "4",
        "text": "Clever & kind",
    }
    assert library.reviews[-1] == review["data"]["attributes"]
    _, _, headers, _ = [r for r in library.requests if r[1] == "/api/reviews"][-1]
    assert headers["Content-Type"].startswith("multipart/form-data; boundary=")


async def test_a_bearer_token_in_local_storage_is_read_there_and_a_refused_one_is_typed(
    session: Session, library: LibraryServer
) -> None:
    me = session.draft("GET /api/me")
    assert me.tokens == [AUTH_PLACE]
    assert me.auth == "session"
    assert constants_of(me.source)["AUTH"] == [AUTH_PLACE.spec()]

    await session.tab.navigate(library.url("/"))
    got = await session.run("GET /api/me", {})
    assert got == recorded_answer(session, "GET", "/api/me")

    # The tab has a token and the site refuses it: a typed failure naming the header.
    kept = await session.tab.evaluate("localStorage.getItem('library.auth')")
    await session.tab.evaluate(
        "localStorage.setItem('library.auth', JSON.stringify({accessToken: 'revoked-1234'}))"
    )
    try:
        with pytest.raises(
            ego.TokenRejectedError, match="HTTP 401 to the token in the Authorization header"
        ):
            await session.run("GET /api/me", {})
        await session.tab.evaluate("localStorage.removeItem('library.auth')")
        with pytest.raises(ego.NeedsLoginError, match="no token in localStorage"):
            await session.run("GET /api/me", {})
    finally:
        await session.tab.evaluate(f"localStorage.setItem('library.auth', {json.dumps(kept)})")


@pytest.mark.parametrize(
    ("store", "place"),
    [
        ("session", TokenPlace("Authorization", "sessionStorage", "token", None, "Bearer ")),
        ("cookie", TokenPlace("Authorization", "cookie", "library_token", None, "Bearer ")),
    ],
)
async def test_a_bearer_token_in_session_storage_or_a_cookie_is_read_there(
    browser: ego.Browser, tmp_path: Path, store: Literal["session", "cookie"], place: TokenPlace
) -> None:
    library = LibraryServer(token_store=store)
    try:
        har = tmp_path / "session.har"
        async with browser.isolated_context() as context:
            tab = await context.new_tab()
            async with tab.record_har(har) as recording:
                await log_in(tab, library, recording)
                await tab.navigate(library.url("/"))
                await tab.wait_for(selector="body[data-ready]")
                await recording.wait_idle()
            learnings = Learnings(workspace=tmp_path / "ws")
            report = suggest("library", [har], learnings=learnings)
            me = next(d for d in report.drafts if d.endpoint == "GET /api/me")
            assert me.tokens == [place]
            site = Site(browser, learnings)
            assert all(r.passed for r in await site.check_draft("library", me.tool))
            source = load_draft(learnings, "library", me.tool).source
            got = await tab.evaluate(f"({source})({{}})")
        assert got["data"]["attributes"]["name"] == "Ada Lovelace"
        assert not [t for t in library.tokens if t in har.read_text()]
    finally:
        library.close()


async def test_graphql_operations_are_a_draft_each_query_read_mutation_write(
    session: Session, library: LibraryServer
) -> None:
    query = session.draft("POST /graphql query BooksByAuthor")
    mutation = session.draft("POST /graphql mutation RenewLoan")
    assert (query.tool, query.side_effect) == ("books_by_author", "read")
    assert (mutation.tool, mutation.side_effect) == ("renew_loan", "write")
    assert query.args["author"]["examples"] == ["Ursula K. Le Guin"]
    assert set(query.args) == {"author", "first"}
    assert set(mutation.args) == {"loan", "days"}
    body = constants_of(mutation.source)["BODY"]
    assert body["operationName"] == {"const": "RenewLoan"}
    assert body["query"]["const"].startswith("mutation RenewLoan(")

    await session.tab.navigate(library.url("/"))
    got = await session.run("POST /graphql query BooksByAuthor", {"author": "Ursula K. Le Guin"})
    assert got == recorded_answer(session, "POST", "/graphql", "BooksByAuthor")
    assert [b["slug"] for b in got["data"]["books"]] == [
        b["slug"] for b in BOOKS if b["author"] == "Ursula K. Le Guin"
    ]
    other = await session.run("POST /graphql query BooksByAuthor", {"author": "Jane Austen"})
    assert other == {"data": {"books": [{"slug": "emma", "title": "Emma"}]}}
    due = library.loans[0]["due"]
    renewed = await session.run("POST /graphql mutation RenewLoan", {"loan": "loan-1", "days": 3})
    assert renewed == {"data": {"renewLoan": {"loan": {"id": "loan-1", "due": f"{due}+3d"}}}}
    assert library.loans[0]["due"] == f"{due}+3d"


async def test_a_call_the_page_moved_on_from_is_skipped_with_its_reason(
    browser: ego.Browser, session: Session, library: LibraryServer, tmp_path: Path
) -> None:
    har = tmp_path / "moved-on.har"
    kept = await session.tab.evaluate("localStorage.getItem('library.auth')")
    async with browser.isolated_context() as context:
        tab = await context.new_tab()
        await tab.navigate(library.url("/login"))
        await tab.evaluate(f"localStorage.setItem('library.auth', {json.dumps(kept)})")
        async with tab.record_har(har):
            await tab.navigate(library.url("/stats"))
            await tab.wait_for(selector="#stats[data-state]")  # its headers came, no body yet
            await tab.navigate(library.url("/"))  # the agent moves on
            await tab.wait_for(selector="body[data-ready]")
    library.release.set()
    report = suggest("library", [har], learnings=Learnings(workspace=tmp_path / "ws"))
    moved = [s for s in report.skipped if s.url.endswith("/api/stats")]
    assert [s.reason for s in moved] == ["incomplete response"]
    assert "moved on" in moved[0].detail
    assert "GET /api/stats" not in [d.endpoint for d in report.drafts]
    assert "GET /api/me" in [d.endpoint for d in report.drafts]


def test_a_recorded_login_case_checks_the_shape_of_what_came_back(session: Session) -> None:
    login = session.draft("POST /api/session")
    [case] = login.cases
    assert "expect" not in case.case
    schema = case.case["expect_schema"]
    attributes = schema["properties"]["data"]["properties"]["attributes"]
    assert attributes["properties"]["token"] == {"type": "string"}
    assert "token" in attributes["required"]
    assert login.args["password"]["required"] is True
    assert "examples" not in login.args["password"]
    assert session.saved[login.tool].cases.cases[0].passed


async def test_a_drafted_tool_never_sends_a_request_off_the_page_origin(
    session: Session, library: LibraryServer
) -> None:
    other = LibraryServer()
    try:
        source = api_tool_source(
            comment="a path that the URL parser reads as another host",
            method="POST",
            paths=[f"/\\127.0.0.1:{other.port}/api/loans"],
            query={},
            body={"book_id": {"arg": "book_id"}},
            csrf={"from": "meta", "name": "csrf-token", "header": "X-CSRF-Token"},
            auth=[AUTH_PLACE.spec()],
        )
        saved = await session.site.save_browser_tool(
            "library",
            "steal",
            source,
            "A tool whose path leaves the page",
            {"book_id": {"type": "string"}},
        )
        assert saved.file.is_file()
        await session.tab.navigate(library.url("/"))
        with pytest.raises(ego.CrossOriginRequestError, match="not on the page's origin"):
            await session.site.run_tool("library", "steal", {"book_id": "dune"}, tab=session.tab)
        assert other.requests == []
    finally:
        other.close()


async def test_a_failing_drafts_message_names_the_drafts_own_file(
    browser: ego.Browser, session: Session, tmp_path: Path
) -> None:
    learnings = Learnings(workspace=tmp_path / "ws")
    report = suggest("library", [session.har], learnings=learnings)
    me = next(d for d in report.drafts if d.endpoint == "GET /api/me")
    draft = load_draft(learnings, "library", me.tool)
    (draft.folder / f"{me.tool}.js").write_text("async function (args) { throw new Error('no'); }")
    [result] = await Site(browser, learnings).check_draft("library", me.tool)
    assert not result.passed
    assert f".drafts/library/{me.tool}/{me.tool}.js" in result.reason
    assert "browser-tools" not in result.reason


async def test_the_library_loop_measured(
    session: Session, library: LibraryServer, tmp_path: Path
) -> None:
    """The figures of the loop on the library: `ego suggest` on the session's recording (its
    drafts' own cases ran in the save gate, as `--check` runs them), then each kept tool live
    in the logged-in tab against what the page got."""
    env = ego_env(tmp_path / "profiles", workspace=tmp_path / "ws")
    drafted = await ego_async("suggest", "library", "--har", str(session.har), env=env)
    assert drafted.returncode == 0, drafted
    data = drafted.json()
    found = {d["endpoint"]: d for d in data["found"]}
    used = [*LIBRARY_ENDPOINTS, "POST /api/covers"]
    refused = [s for s in data["skipped"] if s["reason"] == "file upload"]
    gates = [session.saved[d.tool].cases for d in session.report.drafts]
    passing = [g for g in gates if g is not None and g.cases and all(c.passed for c in g.cases)]
    cases = sum(len(g.cases) for g in gates if g is not None)
    effects = {
        e: "read"
        if e.startswith("GET") or " query " in e
        else "write"
        if " mutation " in e
        else "irreversible"
        for e in LIBRARY_ENDPOINTS
    }
    right = [e for e, d in found.items() if d["side_effect"] == effects.get(e)]

    # Live, in the tab the session logged in: a read gives what the page got for the same
    # request (the loans, which the other tests changed, as the page gets them now); a write
    # gives an answer of the shape the page got, and its effect.
    page_loans = session.har.parent / "loans-now.har"
    async with session.tab.record_har(page_loans) as recording:
        await session.tab.navigate(library.url("/loans"))
        await session.tab.wait_for(selector="body[data-ready]")
        await recording.wait_idle()
    [loans_now] = [
        json.loads(e.response.content.text or "null")
        for e in recording.har.entries
        if e.request.url.endswith("/api/loans")
    ]
    matching = writes = 0
    loans_before = len(library.loans)
    reads_first = sorted(session.report.drafts, key=lambda d: d.side_effect != "read")
    for draft in reads_first:
        if draft.endpoint == "POST /api/session":
            continue  # a login is never automated
        case = draft.cases[0].case
        got = await session.run(draft.endpoint, case["args"])
        if draft.endpoint == "GET /api/loans":
            matching += got == loans_now
        elif draft.side_effect == "read":
            matching += got == case["expect"]
        else:
            writes += 1
            matching += schema_of([got]) == schema_of([case["expect"]])
    assert len(library.loans) == loans_before + 1

    files = list(files_under(tmp_path / "ws", session.har.parent))
    secrets = [*library.tokens, PASSWORD]
    holding = [
        p for p in files if any(s in p.read_bytes().decode("utf-8", "replace") for s in secrets)
    ]
    figures = (
        f"library: endpoints drafted {len(found)} of {len(used)} used ({len(refused)} refused: "
        f"file upload); drafts whose own cases pass {len(passing)} of {len(found)} ({cases} "
        f"cases); live runs that return what the page got {matching} of "
        f"{len(session.report.drafts) - 1} ({writes} writes by shape and effect; the login not "
        f"run); side effects right {len(right)} of {len(found)}; files holding a secret "
        f"{len(holding)} of {len(files)}"
    )
    print(figures)
    assert sorted(found) == sorted(LIBRARY_ENDPOINTS), figures
    assert len(refused) == 1, figures
    assert len(passing) == len(found), figures
    assert matching == len(session.report.drafts) - 1, figures
    assert len(right) == len(found), figures
    assert holding == [], figures
