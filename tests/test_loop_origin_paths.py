"""Drafted tools stay on their origin: a recorded path that would make ``new URL(path,
location.origin)`` name another host (a backslash, two slashes, their percent-encoded forms,
a control character) is never a template. ``ego suggest`` skips its entry with the reason,
``ego heal`` proposes no such endpoint, and a CSRF header is never read from such a URL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ego.learning.catalog.registry import Learnings
from ego.learning.heal.compare import view_of
from ego.learning.heal.run import _candidate, _compare
from ego.learning.suggest import suggest
from ego.learning.suggest.safe_paths import REASON, path_problem
from ego.learning.suggest.source import api_tool_source, read_constants
from ego.replay.har import Entry, Har, build_entry
from tests.helpers.commands import ego_env, ego_sync

ORIGIN = "http://127.0.0.1:8851"
#: The issue's HAR: a literal backslash, which a browser's URL parser reads as a slash.
STEAL = f"{ORIGIN}/\\127.0.0.1:8852/api/steal"

HOSTILE_PATHS = [
    "/\\127.0.0.1:8852/api/steal",  # /\ : another host
    "/\\\\127.0.0.1:8852/api/steal",  # a doubled backslash
    "//127.0.0.1:8852/api/steal",  # //
    "/\\/127.0.0.1:8852/api/steal",  # \/
    "/%2F%2F127.0.0.1:8852/api/steal",  # %2F%2F
    "/%2f/127.0.0.1:8852/api/steal",
    "/%5C127.0.0.1:8852/api/steal",  # %5C
    "/%255C127.0.0.1:8852/api/steal",  # encoded twice
    "/api/\t/127.0.0.1:8852/x",  # the URL parser drops the tab: //
    "/api/%0A/x",
    "/api/x\x00",
]


def _api(url: str, body: object, method: str = "GET") -> Entry:
    return build_entry(
        url,
        json.dumps(body),
        method=method,
        headers={"content-type": "application/json"},
        resource_type="fetch",
    )


def _har(path: Path, urls: list[str]) -> Path:
    har = Har()
    har.add(build_entry(f"{ORIGIN}/", "<html></html>", resource_type="document"))
    for number, url in enumerate(urls):
        har.add(_api(url, {"id": number, "secret": "x"}))
    har.save(path)
    return path


@pytest.mark.parametrize("path", HOSTILE_PATHS)
def test_a_path_that_can_leave_the_origin_is_refused(path: str) -> None:
    assert path_problem(path) is not None


@pytest.mark.parametrize(
    "path", ["/api/products/3", "/", "/api/a%20b/c", "/api/@x/y:z", "/a/../b", "/api/%E2%82%AC"]
)
def test_a_path_on_the_origin_is_a_template(path: str) -> None:
    assert path_problem(path) is None


def test_the_issues_backslash_har_drafts_nothing_and_says_why(tmp_path: Path) -> None:
    har = _har(tmp_path / "steal.har", [STEAL, STEAL])
    report = suggest("steal", [har], learnings=Learnings(workspace=tmp_path / "ws"))
    assert report.drafts == []
    refused = [item for item in report.skipped if item.reason == REASON]
    assert len(refused) == 2
    assert "backslash" in refused[0].detail
    assert "path leaves the origin" in report.format()


def test_every_hostile_form_is_skipped_while_the_sites_own_path_is_drafted(
    tmp_path: Path,
) -> None:
    hostile = [ORIGIN + path for path in HOSTILE_PATHS]
    har = _har(tmp_path / "mixed.har", [f"{ORIGIN}/api/items/1", *hostile])
    report = suggest("mixed", [har], learnings=Learnings(workspace=tmp_path / "ws"))
    assert [draft.endpoint for draft in report.drafts] == ["GET /api/items/{item_id}"]
    constants = read_constants(report.drafts[0].source)
    assert constants is not None
    assert constants["PATHS"] == ["/api/items/{item_id}"]
    # Python's urlsplit drops tab and newline as the browser does, so those two read as //.
    assert report.skipped_counts()[REASON] == len(HOSTILE_PATHS)


def test_a_csrf_header_is_never_read_again_from_a_path_that_leaves(tmp_path: Path) -> None:
    har = Har()
    har.add(build_entry(f"{ORIGIN}/", "<html></html>", resource_type="document"))
    token = build_entry(
        f"{ORIGIN}/%2F%2Fevil.example/token",
        "{}",
        headers={"content-type": "application/json", "x-csrf-token": "t0ken-value"},
        resource_type="fetch",
    )
    har.add(token)
    post = build_entry(
        f"{ORIGIN}/api/pin",
        "{}",
        method="POST",
        headers={"content-type": "application/json"},
        post_data='{"id": 1}',
        request_headers={"x-csrf-token": "t0ken-value"},
        resource_type="fetch",
    )
    har.add(post)
    har.save(tmp_path / "csrf.har")
    report = suggest("csrf", [tmp_path / "csrf.har"], learnings=Learnings(workspace=tmp_path))
    (draft,) = report.drafts
    assert draft.csrf is not None
    assert draft.csrf.url is None or "evil" not in draft.csrf.url


def test_heal_never_proposes_a_live_endpoint_whose_path_leaves_the_origin() -> None:
    old = view_of(_api(f"{ORIGIN}/api/products", {"products": [{"name": "lamp"}]}))
    gone = view_of(
        build_entry(
            f"{ORIGIN}/api/products", "{}", status=404, headers={"content-type": "application/json"}
        )
    )
    hostile = view_of(
        _api(f"{ORIGIN}/%2F%2F127.0.0.1:8852/api/steal", {"products": [{"name": "lamp"}]})
    )
    changes, proposal = _compare([old], [gone], [gone, hostile])
    assert proposal is None
    assert not any(change.kind == "endpoint moved" for change in changes)
    source = api_tool_source(
        comment="x", method="GET", paths=["/api/products"], query={}, body=None, csrf=None
    )
    fake = {"from": old.label, "to": hostile.label, "url": hostile.url, "score": 1.0}
    moved = [
        *changes,
        type(changes[0])("endpoint moved", old.label, "", old=old.path, new=hostile.path),
    ]
    assert _candidate(source, moved, fake, {}) is None


def test_ego_suggest_reports_the_refused_path_on_the_command_line(tmp_path: Path) -> None:
    har = _har(tmp_path / "steal.har", [STEAL, STEAL])
    env = ego_env(tmp_path / "profiles", workspace=tmp_path / "ws")
    result = ego_sync("suggest", "steal", "--har", str(har), "--json", env=env)
    assert result.returncode == 0, result
    data = result.json()
    assert data["found"] == []
    assert data["skipped_counts"][REASON] == 2
    drafted = tmp_path / "ws" / "learnings" / ".drafts" / "steal"
    assert sorted(p.name for p in drafted.iterdir()) == ["manifest.json"]  # no tool
