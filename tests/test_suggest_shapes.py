"""``ego suggest`` on hand-built recordings, without a browser: what each shape of traffic
becomes (repeated parameters, forms, multipart, GraphQL, header tokens, calls without a
whole answer) and that nothing a recording holds can give a long or unreadable tool name,
a token in a file, or a source that reads the page's storage where the recording said
something other than a place."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from ego.errors import (
    BrowserToolError,
    CrossOriginRequestError,
    JavaScriptError,
    TokenRejectedError,
)
from ego.learning.suggest import suggest_from
from ego.learning.suggest.auth import TokenPlace
from ego.learning.suggest.drafting import MAX_NAME
from ego.learning.suggest.graphql import Operation, operation_of
from ego.learning.suggest.safe_paths import path_problem
from ego.learning.suggest.source import api_tool_source, read_constants, with_constants
from ego.replay.token_places import TOKEN_PLACES_FIELD
from ego.runtime.contract import tool_error_type

ORIGIN = "http://127.0.0.1:8000"
PLACE = {
    "header": "Authorization",
    "from": "localStorage",
    "key": "auth",
    "path": ["token"],
    "prefix": "Bearer ",
}


def entry(
    method: str,
    path: str,
    *,
    status: int = 200,
    answer: Any = None,
    answer_text: str | None = None,
    answer_type: str = "application/json",
    post: str | None = None,
    post_type: str = "application/json",
    kind: str = "fetch",
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    text = answer_text if answer_text is not None else json.dumps(answer)
    request: dict[str, Any] = {"method": method, "url": ORIGIN + path, "headers": []}
    if post is not None:
        request["postData"] = {"mimeType": post_type, "text": post}
        request["headers"] = [{"name": "Content-Type", "value": post_type}]
    return {
        "request": request,
        "response": {
            "status": status,
            "headers": [{"name": "Content-Type", "value": answer_type}],
            "content": {"mimeType": answer_type, "text": text},
        },
        "_resourceType": kind,
        **(extra or {}),
    }


def recording(tmp_path: Path, *entries: dict[str, Any]) -> Path:
    page = {
        "request": {"method": "GET", "url": ORIGIN + "/", "headers": []},
        "response": {
            "status": 200,
            "headers": [{"name": "Content-Type", "value": "text/html"}],
            "content": {"mimeType": "text/html", "text": "<p>hi</p>"},
        },
        "_resourceType": "document",
    }
    path = tmp_path / "recording.har"
    path.write_text(json.dumps({"log": {"version": "1.2", "entries": [page, *entries]}}))
    return path


def drafts(tmp_path: Path, *entries: dict[str, Any]) -> Any:
    return suggest_from("app", [recording(tmp_path, *entries)], domains=["127.0.0.1:8000"])


@pytest.mark.parametrize(
    "path",
    [
        "/" + "%2F%2e%2e" * 30 + "/items",
        "/api/%E2%80%AE%2F%2F..%5C..%5Cevil%00x/items",
        "/api/" + "a" * 300,
        "/" + "/".join(f"part{n}x" for n in range(40)),
        "/%25252e%25252e/%3Cscript%3Ealert(1)%3C%2Fscript%3E",
    ],
)
def test_a_tool_name_stays_short_and_readable_whatever_the_path(tmp_path: Path, path: str) -> None:
    report = drafts(tmp_path, entry("GET", path, answer={"ok": True}))
    if path_problem(path) is not None:
        # Encoded slashes and backslashes would leave the origin: never a template at all.
        assert not report.drafts
        assert [s.reason for s in report.skipped if s.reason != "page (HTML document)"] == [
            "path leaves the origin"
        ]
        return
    [draft] = report.drafts
    assert re.fullmatch(r"[a-z][a-z0-9_]*", draft.tool), draft.tool
    assert len(draft.tool) <= MAX_NAME
    assert "2f" not in draft.tool
    assert "25" not in draft.tool


def test_repeated_query_parameters_are_an_array_arg_and_a_constant_list(tmp_path: Path) -> None:
    report = drafts(
        tmp_path,
        entry("GET", "/api/books?tag=a&tag=b&size=2", answer=[1]),
        entry("GET", "/api/books?tag=c&size=2&kind=x&kind=y", answer=[2]),
        entry("GET", "/api/books?tag=a&tag=b&size=2&kind=x&kind=y", answer=[3]),
    )
    [draft] = report.drafts
    assert draft.args["tag"] == {
        "type": "array",
        "items": {"type": "string"},
        "required": True,
        "description": "the query parameter 'tag', sent once per item",
        "examples": [["a", "b"], ["c"]],
    }
    assert draft.constants == {"query:size": 2}
    assert draft.args["kind"]["required"] is False  # one call did without it
    assert [c.case["args"] for c in draft.cases] == [
        {"tag": ["a", "b"]},
        {"tag": ["c"], "kind": ["x", "y"]},
        {"tag": ["a", "b"], "kind": ["x", "y"]},
    ]


def test_form_fields_are_typed_args_and_a_multipart_file_is_refused(tmp_path: Path) -> None:
    form = "application/x-www-form-urlencoded;charset=UTF-8"
    boundary = "----x"
    multipart = f"multipart/form-data; boundary={boundary}"

    def parts(*items: tuple[str, str, str]) -> str:
        out = ""
        for name, value, extra in items:
            out += f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"{extra}\r\n\r\n'
            out += f"{value}\r\n"
        return out + f"--{boundary}--\r\n"

    report = drafts(
        tmp_path,
        entry(
            "POST",
            "/api/loans",
            post="book=emma&days=14&flag=a&flag=b",
            post_type=form,
            answer={"loan": 1},
        ),
        entry(
            "POST",
            "/api/reviews",
            post=parts(("rating", "5", ""), ("text", "ok", "")),
            post_type=multipart,
            answer={"review": 1},
        ),
        entry(
            "POST",
            "/api/covers",
            post=parts(("cover", "PNG", '; filename="c.png"')),
            post_type=multipart,
            answer={},
        ),
    )
    loans, reviews = report.drafts
    assert loans.args["days"]["type"] == "integer"
    assert loans.args["flag"]["type"] == "array"
    assert loans.cases[0].case["args"] == {"book": "emma", "days": 14, "flag": ["a", "b"]}
    constants = read_constants(loans.source)
    assert constants is not None
    assert constants["ENCODING"] == "form"
    assert constants["BODY"] == {
        "book": {"arg": "book", "default": "emma"},
        "days": {"arg": "days", "default": 14},
        "flag": {"arg": "flag", "default": ["a", "b"]},
    }
    assert set(reviews.args) == {"rating", "text"}
    refused = [s for s in report.skipped if s.reason == "file upload"]
    assert [s.url for s in refused] == [ORIGIN + "/api/covers"]
    assert "'cover'" in refused[0].detail


def test_calls_without_a_whole_answer_are_skipped_with_a_reason(tmp_path: Path) -> None:
    report = drafts(
        tmp_path,
        entry("GET", "/api/a", answer_text=""),
        entry("POST", "/api/b", post='{"x": 1}', answer_text=""),
        {**entry("GET", "/api/c", status=0, answer_text=""), "_error": "not finished"},
        entry("DELETE", "/api/d", status=204, answer_text="", answer_type=""),
        entry("GET", "/api/e", answer={"ok": 1}),
    )
    skipped = {s.url.rsplit("/", 1)[-1]: s.reason for s in report.skipped if "/api/" in s.url}
    assert skipped == {
        "a": "incomplete response",
        "b": "incomplete response",
        "c": "incomplete response",
    }
    by_endpoint = {d.endpoint: d for d in report.drafts}
    assert sorted(by_endpoint) == ["DELETE /api/d", "GET /api/e"]
    # A write that answered "no content" is a call, and its case expects just that.
    assert by_endpoint["DELETE /api/d"].cases[0].case["expect"] is None


def test_graphql_operations_are_read_from_the_request_body() -> None:
    named = {"query": "query Books($tag: String) { books(tag: $tag) { id } }"}
    assert operation_of(named, "POST") == Operation("query", "Books")
    several = {
        "query": "query A { a } mutation Renew($id: ID!) { renew(id: $id) { id } }",
        "operationName": "Renew",
    }
    assert operation_of(several, "POST") == Operation("mutation", "Renew")
    assert operation_of({"query": "{ books { id } }"}, "POST") == Operation("query", "books")
    persisted = {"operationName": "Feed", "extensions": {"persistedQuery": {"sha256Hash": "ab"}}}
    assert operation_of(persisted, "POST") == Operation(None, "Feed")
    hostile = {"query": "{ me { id } }", "operationName": "x'); alert(1); //" + "a" * 200}
    assert operation_of(hostile, "POST") == Operation("query", "me")
    assert operation_of({"query": "SELECT 1"}, "POST") is None
    assert operation_of({"q": "query A { a }"}, "POST") is None


def test_graphql_operations_are_one_draft_each_with_variables_as_args(tmp_path: Path) -> None:
    def call(query: str, name: str, variables: dict[str, Any], answer: Any) -> dict[str, Any]:
        body = json.dumps({"query": query, "operationName": name, "variables": variables})
        return entry("POST", "/graphql", post=body, answer=answer)

    books = "query Books($tag: String, $after: String) { books(tag: $tag, after: $after) { id } }"
    renew = "mutation Renew($id: ID!) { renew(id: $id) { id } }"
    persisted = json.dumps(
        {"operationName": "Feed", "variables": {}, "extensions": {"persistedQuery": {"v": 1}}}
    )
    report = drafts(
        tmp_path,
        call(books, "Books", {"tag": "a", "after": None}, {"data": {"books": []}}),
        call(books, "Books", {"tag": "b", "after": "c1"}, {"data": {"books": [{"id": 1}]}}),
        call(renew, "Renew", {"id": "7"}, {"data": {"renew": {"id": "7"}}}),
        entry("POST", "/graphql", post=persisted, answer={"data": {}}),
    )
    by_tool = {d.tool: d for d in report.drafts}
    assert sorted(by_tool) == ["books", "feed", "renew"]
    assert [by_tool[t].side_effect for t in ("books", "renew", "feed")] == [
        "read",
        "write",
        "irreversible",
    ]
    assert by_tool["books"].endpoint == "POST /graphql query Books"
    assert set(by_tool["books"].args) == {"tag", "after"}
    assert by_tool["books"].args["after"]["type"] == ["string", "null"]
    constants = read_constants(by_tool["books"].source)
    assert constants is not None
    assert constants["BODY"]["query"] == {"const": books}
    assert constants["BODY"]["variables"] == {
        "fields": {"tag": {"arg": "tag"}, "after": {"arg": "after"}}
    }
    assert by_tool["books"].cases[0].case["args"] == {"tag": "a", "after": None}
    renewed = read_constants(by_tool["renew"].source)
    assert renewed is not None
    assert renewed["BODY"]["variables"] == {"fields": {"id": {"arg": "id", "default": "7"}}}


def test_a_header_token_is_read_where_the_recording_says_the_page_keeps_it(tmp_path: Path) -> None:
    places = {TOKEN_PLACES_FIELD: [PLACE], "_redacted": {"requestHeaders": ["Authorization"]}}
    unplaced = {"_redacted": {"requestHeaders": ["X-Api-Key"]}}
    report = drafts(
        tmp_path,
        entry("GET", "/api/me", answer={"name": "ada"}, extra=places),
        entry("GET", "/api/admin", status=401, answer={"error": "no"}, extra=places),
        entry("GET", "/api/keyed", answer={"ok": 1}, extra=unplaced),
    )
    me, admin, keyed = report.drafts
    assert me.tokens == [TokenPlace("Authorization", "localStorage", "auth", ("token",), "Bearer ")]
    assert me.auth == "session"
    constants = read_constants(me.source)
    assert constants is not None
    assert constants["AUTH"] == [PLACE]
    case = me.cases[0].case
    assert case["setup"] == 'localStorage.setItem("auth", "{\\"token\\": \\"REDACTED\\"}");'
    # A refusal in a tab that sent the page's token is the tool's typed error, not a login.
    assert admin.cases[0].case["expect_error"] == "TOOL_ERROR"
    assert admin.cases[0].case["error_contains"] == "HTTP 401 to the token"
    assert keyed.auth == "session"
    assert keyed.tokens == []
    assert any("X-Api-Key" in note and "does not send it" for note in keyed.notes)


@pytest.mark.parametrize(
    "place",
    [
        {**PLACE, "header": "Authorization\r\nX-Evil: 1"},
        {**PLACE, "from": "indexedDB"},
        {**PLACE, "key": "k" * 201},
        {**PLACE, "key": ""},
        {**PLACE, "path": "token"},
        {**PLACE, "path": [1]},
        {**PLACE, "prefix": "Bearer '+fetch('//evil')+'"},
        {**PLACE, "header": "X-CSRF-Token"},
        "Authorization",
    ],
)
def test_a_token_place_the_recording_gives_is_checked_before_it_is_used(
    tmp_path: Path, place: Any
) -> None:
    report = drafts(
        tmp_path, entry("GET", "/api/me", answer={"ok": 1}, extra={TOKEN_PLACES_FIELD: [place]})
    )
    [draft] = report.drafts
    assert draft.tokens == []
    constants = read_constants(draft.source)
    assert constants is not None
    assert constants["AUTH"] == []


def test_a_tool_drafted_before_the_origin_check_gets_it_when_its_constants_are_rewritten() -> None:
    new = api_tool_source(
        comment="Drafted by ego suggest from 1 recorded call(s).",
        method="GET",
        paths=["/api/a"],
        query={"q": {"arg": "q"}},
        body=None,
        csrf=None,
    )
    # The shape of a source drafted before ENCODING, AUTH and the origin check.
    lines = new.split("\n")
    old = "\n".join(
        line for line in lines if not line.startswith(("  const ENCODING", "  const AUTH"))
    ).replace("onOrigin(", "new URL(")
    assert "CrossOriginRequestError(" in old  # the class is declared, but never thrown
    assert read_constants(old) == read_constants(new)
    healed = with_constants(old, PATHS=["/api/a", "/api/b"])
    assert healed == new.replace('["/api/a"]', '["/api/a", "/api/b"]')
    assert "const url = onOrigin(fill(PATHS[i]));" in healed


def test_a_typed_error_a_tool_throws_raises_its_ego_exception() -> None:
    def thrown(name: str) -> type[BrowserToolError]:
        return tool_error_type(JavaScriptError("x", name=name, js_message="x"))

    assert thrown("TokenRejectedError") is TokenRejectedError
    assert thrown("CrossOriginRequestError") is CrossOriginRequestError
    assert thrown("TypeError") is BrowserToolError
    assert issubclass(TokenRejectedError, BrowserToolError)


def test_a_json_body_sent_as_plain_text_is_sent_again_as_it_was(tmp_path: Path) -> None:
    report = drafts(
        tmp_path,
        entry(
            "POST",
            "/api/notes",
            post='{"title": "a"}',
            post_type="text/plain;charset=UTF-8",
            answer={"id": 1},
        ),
    )
    [draft] = report.drafts
    assert set(draft.args) == {"title"}
    constants = read_constants(draft.source)
    assert constants is not None
    assert constants["ENCODING"] == "text/plain"
