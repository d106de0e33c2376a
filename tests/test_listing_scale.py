"""Listing many sites: a manifest's schemas are checked once, then read unchecked.

Timed tests are not allowed here (bench/bench_sites.py times ``ego sites`` with 1,000 and
10,000 sites); these count the work instead. Each ``Learnings`` below is what a new process
makes: it shares nothing with the one before but the state folder.
"""

from __future__ import annotations

import gc
import json
import logging
import os
import time
import weakref
from pathlib import Path
from typing import Any

import pytest

from ego.errors import InvalidManifestError
from ego.learning.catalog import checked as checked_module
from ego.learning.catalog import index as index_module
from ego.learning.catalog import manifest as manifest_module
from ego.learning.catalog import schemas
from ego.learning.catalog.checked import CHECKED_NAME, CheckedManifests
from ego.learning.catalog.loading import ToolLoader
from ego.learning.catalog.registry import Learnings
from ego.learning.describe.context import summarize_site
from ego.learning.health.store import Run, connect, store_path, write_runs
from ego.learning.health.versions import tool_version
from ego.learning.health.view import ran_tools
from ego.protocol.gc_pause import gc_paused

SITES = 10_000
ARGS = {"q": {"type": "string", "required": True, "description": "what to look for"}}
RETURNS = {"type": "object", "properties": {"items": {"type": "array"}}}


def write_sites(root: Path, count: int) -> None:
    """``count`` sites, each a manifest with two tools that share their schemas."""
    tools = {
        name: {"path": f"browser-tools/{name}.js", "args": ARGS, "returns": RETURNS}
        for name in ("search", "open")
    }
    root.mkdir(parents=True)
    for index in range(count):
        site_id = f"s{index:05d}"
        os.mkdir(os.path.join(root, site_id))
        manifest = {
            "id": site_id,
            "name": f"Site {index}",
            "domains": [f"s{index}.test"],
            "browserTools": tools,
        }
        with open(os.path.join(root, site_id, "manifest.json"), "w") as file:
            file.write(json.dumps(manifest))


def count_checks(monkeypatch: pytest.MonkeyPatch, *, run: bool) -> dict[str, int]:
    """How often a manifest is checked against the manifest schema (``manifest``) and a tool
    schema against its meta-schema (``meta``); each check runs too when ``run`` is set, else
    it finds nothing (its findings are other tests' subject: this one counts)."""
    monkeypatch.setattr(schemas, "_remembered", {})
    counts = {"manifest": 0, "meta": 0}
    schema_errors, check_schema = manifest_module._schema_errors, schemas._check_schema

    def manifest_checked(raw: Any) -> list[str]:
        counts["manifest"] += 1
        return schema_errors(raw) if run else []

    def meta_checked(schema: dict[str, Any]) -> list[str]:
        counts["meta"] += 1
        return check_schema(schema) if run else []

    monkeypatch.setattr(manifest_module, "_schema_errors", manifest_checked)
    monkeypatch.setattr(schemas, "_check_schema", meta_checked)
    return counts


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, int]:
    """The checks counted (and run), with a state folder of the test's own."""
    monkeypatch.setenv("EGO_STATE_DIR", str(tmp_path / "state"))
    return count_checks(monkeypatch, run=True)


def test_ten_thousand_sites_are_checked_once_then_listed_unchecked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EGO_STATE_DIR", str(tmp_path / "state"))
    checks = count_checks(monkeypatch, run=False)
    root = tmp_path / "learnings"
    write_sites(root, SITES)

    first = Learnings(roots=[root]).sites()
    assert len(first) == SITES
    assert all(entry.valid for entry in first)
    # Every manifest once; the tools' schemas once for all (the args and the returns).
    assert checks == {"manifest": SITES, "meta": 2}

    # The next listing, as the next process makes it, reads no schema: not the manifest
    # schema, not a tool's.
    learnings = Learnings(roots=[root])
    again = learnings.sites()
    assert [entry.manifest for entry in again] == [entry.manifest for entry in first]
    assert checks == {"manifest": SITES, "meta": 2}

    # An edited manifest is checked again, and only it.
    edited = root / "s04321" / "manifest.json"
    edited.write_text(edited.read_text().replace('"Site 4321"', '"Edited"'))
    third = {entry.site_id: entry for entry in learnings.sites()}
    assert checks == {"manifest": SITES + 1, "meta": 2}
    assert third["s04321"].require().name == "Edited"


def test_a_broken_manifest_is_checked_every_time_and_says_why(
    tmp_path: Path, checks: dict[str, int]
) -> None:
    root = tmp_path / "learnings"
    write_sites(root, 2)
    broken = root / "s00001" / "manifest.json"
    data = json.loads(broken.read_text())
    data["browserTools"]["search"]["args"] = {"type": "object", "properties": {"q": {"type": 5}}}
    broken.write_text(json.dumps(data))

    for listing in (1, 2):
        entries = {entry.site_id: entry for entry in Learnings(roots=[root]).sites()}
        assert entries["s00000"].valid
        assert not entries["s00001"].valid
        assert "browserTools.search.args: not a valid JSON Schema" in entries["s00001"].problems[0]
        assert checks["manifest"] == 1 + listing  # the broken one each time, the good one once


def test_a_manifest_in_another_folder_is_still_held_to_its_folders_name(
    tmp_path: Path, checks: dict[str, int]
) -> None:
    root = tmp_path / "learnings"
    write_sites(root, 1)
    assert Learnings(roots=[root]).sites()[0].valid
    # The same bytes under another name: the schemas passed, the id is checked all the same.
    (root / "s00000").rename(root / "other")
    entry = Learnings(roots=[root]).sites()[0]
    assert not entry.valid
    assert entry.problems == ["id: 's00000' must equal the folder name 'other'"]
    assert checks["manifest"] == 1


def test_new_checks_check_every_manifest_again(tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text("{}")
    store = tmp_path / "state" / CHECKED_NAME
    digest = CheckedManifests(store, [schema]).digest(b"{}")
    assert digest is not None
    CheckedManifests(store, [schema]).remember(digest)
    assert CheckedManifests(store, [schema]).passed(digest)
    schema.write_text('{"required": ["id"]}')
    assert CheckedManifests(store, [schema]).digest(b"{}") != digest
    # Checks whose file is missing keep nothing and trust nothing.
    assert CheckedManifests(store, [tmp_path / "gone.json"]).digest(b"{}") is None


def test_the_remembered_manifests_start_over_past_their_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(checked_module, "MAX_REMEMBERED", 3)
    store = tmp_path / CHECKED_NAME
    checks = [tmp_path / "schema.json"]
    checks[0].write_text("{}")
    digests = [CheckedManifests(store, checks).digest(bytes([n])) for n in range(5)]
    writer = CheckedManifests(store, checks)
    for digest in digests:
        assert digest is not None
        writer.remember(digest)
    assert len(store.read_text().splitlines()) == 5
    reader = CheckedManifests(store, checks)
    assert not reader.passed(digests[0])  # over the bound: forgotten, the file gone
    assert not store.exists()


def test_a_state_folder_that_cannot_be_written_costs_only_the_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    blocked = tmp_path / "state"
    blocked.write_text("a file where the folder would be")
    monkeypatch.setenv("EGO_STATE_DIR", str(blocked))
    root = tmp_path / "learnings"
    write_sites(root, 3)
    with caplog.at_level(logging.WARNING, logger="ego.learning"):
        entries = Learnings(roots=[root]).sites()
    assert [entry.valid for entry in entries] == [True, True, True]
    warnings = [record.getMessage() for record in caplog.records]
    assert len(warnings) == 1
    assert "cannot remember checked manifests" in warnings[0]


def test_a_schema_of_the_same_text_is_checked_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(schemas, "_remembered", {})
    seen: list[Any] = []
    check_schema = schemas._check_schema

    def counted(schema: dict[str, Any]) -> list[str]:
        seen.append(schema)
        return check_schema(schema)

    monkeypatch.setattr(schemas, "_check_schema", counted)
    bad = {"type": "object", "properties": {"q": {"type": 5}}}
    first = schemas.schema_problems(bad)
    assert len(first) == 1
    assert first[0].startswith("not a valid JSON Schema")
    first.append("a caller's own line")  # the answer is the caller's: the memory keeps its own
    assert schemas.schema_problems(json.loads(json.dumps(bad))) == first[:1]
    assert len(seen) == 1
    # Another text (the same keys in another order) is checked for itself.
    schemas.schema_problems({"properties": {"q": {"type": 5}}, "type": "object"})
    assert len(seen) == 2


def test_a_listing_reads_the_files_of_the_tools_that_ran_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EGO_STATE_DIR", str(tmp_path / "state"))
    root = tmp_path / "learnings"
    write_sites(root, 3)
    for site_id in ("s00000", "s00001"):
        (root / site_id / "browser-tools").mkdir()
        for name in ("search", "open"):
            (root / site_id / "browser-tools" / f"{name}.js").write_text("async () => 1\n")
    learnings = Learnings(roots=[root])
    entry, spec = learnings.tool("s00001", "search")
    version = tool_version(learnings, entry, spec)
    assert version is not None
    conn = connect(store_path(), create=True)
    assert conn is not None
    try:
        write_runs(conn, [Run("s00001", "search", version, "OK", "", time.time(), 0.1, "python")])
    finally:
        conn.close()

    read: list[tuple[str, str]] = []
    browser_source = ToolLoader.browser_source

    def counted(self: ToolLoader, site_id: str, spec: Any, entry: Any = None) -> Any:
        read.append((site_id, spec.name))
        return browser_source(self, site_id, spec, entry)

    monkeypatch.setattr(ToolLoader, "browser_source", counted)
    fresh = Learnings(roots=[root])
    ran = ran_tools()
    assert ran == {("s00001", "search")}
    summaries = {entry.site_id: summarize_site(entry, fresh, ran) for entry in fresh.sites()}
    assert read == [("s00001", "search")]
    assert summaries["s00001"].health["search"].ok == 1
    assert summaries["s00000"].health == summaries["s00002"].health == {}
    # Without the listing's answer every tool is looked at, and the health is the same.
    whole = {entry.site_id: summarize_site(entry, fresh) for entry in fresh.sites()}
    assert whole == summaries
    assert len(read) > 1


def test_a_listing_over_two_roots_looks_at_the_later_ones_folders_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, checks: dict[str, int]
) -> None:
    workspace, project = tmp_path / "workspace", tmp_path / "project"
    write_sites(workspace, 300)
    write_sites(project, 200)  # s00000 to s00199: each shadowed by the workspace's
    (project / "s09999").mkdir()  # a project-only site
    (project / "s09999" / "manifest.json").write_text(
        json.dumps({"id": "s09999", "name": "Only here", "domains": ["only.test"]})
    )
    later = {str(project / name) for name in os.listdir(project)}
    looked: list[str] = []
    stat = os.stat

    def counted(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        if os.fspath(path) in later:
            looked.append(os.fspath(path))
        return stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", counted)
    entries = {entry.site_id: entry for entry in Learnings(roots=[workspace, project]).sites()}
    assert len(entries) == 301
    assert [site_id for site_id, entry in entries.items() if entry.shadows] == [
        f"s{index:05d}" for index in range(200)
    ]
    assert entries["s00200"].shadows == ()
    assert entries["s09999"].root == project
    # Which workspace site shadows a project one comes from one listing of the project's
    # folders, not a look at the project for each site.
    assert looked == []


def test_a_listing_reads_and_parses_each_manifest_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, checks: dict[str, int]
) -> None:
    root = tmp_path / "learnings"
    write_sites(root, 50)
    parsed: list[bytes] = []
    parse_json = manifest_module.parse_json

    def counted(data: bytes) -> Any:
        parsed.append(data)
        return parse_json(data)

    monkeypatch.setattr(manifest_module, "parse_json", counted)
    monkeypatch.setattr(index_module, "parse_json", counted)
    learnings = Learnings(roots=[root])
    assert all(entry.valid for entry in learnings.sites())
    assert len(parsed) == 50 == learnings.index.reads
    # Listed again: nothing changed, nothing read.
    assert len(learnings.sites()) == 50
    assert len(parsed) == 50
    # An edit between two listings: that manifest alone, read once, and the change shown.
    edited = root / "s00007" / "manifest.json"
    edited.write_text(edited.read_text().replace('"Site 7"', '"Seven"'))
    entries = {entry.site_id: entry for entry in learnings.sites()}
    assert len(parsed) == 51
    assert entries["s00007"].require().name == "Seven"
    # A lookup by URL hands over its candidates' reads and keeps none of the others'.
    edited.write_text(edited.read_text().replace('"Seven"', '"Seven again"'))
    (root / "s00008" / "manifest.json").write_text(
        (root / "s00008" / "manifest.json").read_text().replace('"Site 8"', '"Eight"')
    )
    [(entry, matched)] = learnings.sites_for_url("https://s7.test/")
    assert (entry.require().name, matched) == ("Seven again", "s7.test")
    assert len(parsed) == 53
    assert learnings.index.take(learnings.index.sites([root])[8]) is None


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"id": "s00000", "name": NaN}', "not JSON: NaN is not JSON"),
        ('{"id": "s00000", "name": "x"', "not JSON: Expecting ',' delimiter at line 1 column 29"),
        ("[1, 2]", '(top level): [1, 2] is not of type "object"'),
    ],
)
def test_a_broken_manifest_reads_the_same_in_a_listing_as_alone(
    tmp_path: Path, checks: dict[str, int], text: str, problem: str
) -> None:
    root = tmp_path / "learnings"
    write_sites(root, 2)
    manifest = root / "s00000" / "manifest.json"
    manifest.write_text(text)
    with pytest.raises(InvalidManifestError) as alone:
        manifest_module.load_manifest(root / "s00000", root=root)
    learnings = Learnings(roots=[root])
    for _ in range(2):  # the first listing and the next
        entries = {entry.site_id: entry for entry in learnings.sites()}
        assert entries["s00001"].valid
        assert entries["s00000"].problems == alone.value.problems
        assert entries["s00000"].problems[0].startswith(problem)
        assert str(entries["s00000"].error) == str(alone.value)
        manifest.touch()  # seen as changed: read again, reported again


def test_a_broken_sites_error_holds_no_listing_alive(
    tmp_path: Path, checks: dict[str, int]
) -> None:
    root = tmp_path / "learnings"
    write_sites(root, 2)
    (root / "s00001" / "manifest.json").write_text('{"id": "s00001"')
    learnings = Learnings(roots=[root])
    broken = learnings.sites()[1]
    assert broken.error is not None
    assert broken.error.__traceback__ is None
    gone = weakref.ref(learnings)
    collecting = gc.isenabled()
    gc.disable()
    try:
        del learnings
        # Freed at once: the kept error's traceback no longer holds the frames that loaded it
        # (and through them the finder and every manifest) in a cycle.
        assert gone() is None
    finally:
        if collecting:
            gc.enable()
    with pytest.raises(InvalidManifestError, match="not JSON: Expecting") as raised:
        broken.require()
    assert raised.value is broken.error


def test_what_a_lasting_pause_makes_joins_the_oldest_generation() -> None:
    collecting = gc.isenabled()
    gc.enable()
    try:
        gc.collect()
        with gc_paused(lasting=True):
            assert not gc.isenabled()
            made = [{"n": [index]} for index in range(5000)]
        assert gc.isenabled()
        # Nothing young left to walk: the next collection of the young generation is cheap.
        assert gc.get_count()[0] < 100
        assert all(gc.is_tracked(item) for item in made[:10])
    finally:
        if not collecting:
            gc.disable()
