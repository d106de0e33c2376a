"""``learn_context`` with many sites: the domain index answers what a full scan would, sees
every change by the next call, and loads only the sites that match.

No browser: :func:`ego.site.context_for` is what ``Site.learn_context`` answers.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from ego.errors import InvalidManifestError
from ego.learning.catalog import index as index_module
from ego.learning.catalog import loading, registry, sites, watch
from ego.learning.catalog.index import read_domains
from ego.learning.catalog.manifest import MAX_MANIFEST_BYTES, Manifest, load_manifest
from ego.learning.catalog.matching import match_domain
from ego.learning.catalog.registry import Learnings
from ego.learning.catalog.watch import REVALIDATE_SECONDS
from ego.site import context_for
from ego.skills import catalog as catalog_module
from ego.skills import catalog_for
from ego.skills.format import load_skill
from tests.helpers.learnings import ECHO, make_site, tool, write_manifest
from tests.helpers.skills import write_skill

linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="change notification is inotify (Linux)"
)

#: Domain entries of every kind the matching rules know.
KINDS: list[list[str]] = [
    ["site{i}.test", "www.site{i}.test"],
    ["*.w{i}.test"],
    ["*.v{i}.test", "v{i}.test"],
    ["127.0.0.1:{port}"],
    ["localhost:{port}", "app{i}.localhost"],
    ["Upper{i}.Test."],
    ["*.shared.test"],  # several sites share one wildcard
    ["deep.{i}.shared.test:8443"],
]

URLS = [
    "https://site7.test/",
    "https://WWW.SITE7.TEST./x",
    "https://site7.test:9999/",
    "https://a.w9.test/",
    "https://a.b.w9.test/",
    "https://w9.test/",  # a wildcard never matches its bare domain
    "https://x.v10.test/",
    "https://v10.test/",
    "http://127.0.0.1:20011/",
    "http://127.0.0.1:20012/",
    "http://127.0.0.1/",
    "http://localhost:20012/",
    "http://app12.localhost:1234/",
    "https://upper13.test/",
    "https://x.shared.test/",
    "https://deep.15.shared.test:8443/",
    "https://deep.15.shared.test/",
    "about:blank",
    "file:///etc/hosts",
    "not a url",
    "http://[::1]:8080/",
    "https://nowhere.example/",
]


def fill(root: Path, count: int, *, start: int = 0) -> None:
    """``count`` sites with domains of every kind, a tool and a note each."""
    for i in range(start, start + count):
        domains = [d.format(i=i, port=20000 + i) for d in KINDS[i % len(KINDS)]]
        make_site(
            root,
            f"s{i:03d}",
            domains=domains,
            browser_tools={"echo": tool(ECHO, args={"q": {"type": "string"}})},
            notes={"notes/a.md": f"# Site {i}\n"},
        )


def reference(roots: list[Path], url: str) -> list[tuple[str, str]]:
    """What a full scan of ``roots`` answers: every valid site whose domains match, by id."""
    chosen: dict[str, Path] = {}
    for root in roots:
        for folder in sorted(root.iterdir()) if root.is_dir() else []:
            if folder.is_dir() and not folder.name.startswith(("_", ".")):
                chosen.setdefault(folder.name, root)
    found = []
    for site_id, root in sorted(chosen.items()):
        try:
            manifest = load_manifest(root / site_id, root=root)
        except InvalidManifestError:
            continue
        matched = match_domain(url, manifest.domains)
        if matched is not None:
            found.append((site_id, matched))
    return found


def matched(learnings: Learnings, url: str) -> list[tuple[str, str]]:
    context = context_for(learnings, url)
    return [(site.site_id, site.matched_domain) for site in context.sites]


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The site ids whose manifest is loaded in full, in order."""
    seen: list[str] = []
    real = load_manifest

    def counting(site_dir: Path, **options: Any) -> Manifest:
        seen.append(site_dir.name)
        return real(site_dir, **options)

    monkeypatch.setattr(sites, "load_manifest", counting)
    return seen


def test_the_index_answers_what_a_full_scan_answers(tmp_path: Path) -> None:
    workspace, project = tmp_path / "workspace", tmp_path / "project"
    fill(project, 40)
    # The workspace shadows some project sites with other domains, and adds its own.
    for i in (3, 7, 9):
        make_site(workspace, f"s{i:03d}", domains=[f"shadow{i}.test", f"site{i + 1}.test"])
    make_site(workspace, "extra", domains=["*.site7.test", "site7.test"])
    write_manifest(project / "s011", "{ not json")  # broken: never matched
    # Domains that match, but the site is invalid (its id is not its folder's): skipped.
    write_manifest(project / "s012", {"id": "other", "name": "x", "domains": ["localhost:20012"]})
    (project / "_skipped").mkdir()
    write_manifest(project / "_skipped", {"id": "_skipped", "name": "x", "domains": ["x.test"]})
    (project / "a-file").write_text("not a site folder")

    learnings = Learnings(roots=[workspace, project])
    urls = [*URLS, "https://shadow3.test/", "https://site8.test/", "https://a.site7.test/"]
    for url in urls:
        assert matched(learnings, url) == reference([workspace, project], url), url
    assert matched(learnings, "https://site7.test/") == [("extra", "site7.test")]
    assert matched(learnings, "https://shadow3.test/") == [("s003", "shadow3.test")]
    # Two sites (a workspace one and a project one) claim site8.test: both come, by id.
    assert matched(learnings, "https://site8.test/") == [
        ("s007", "site8.test"),
        ("s008", "site8.test"),
    ]
    assert matched(learnings, "https://x.shared.test/") == [
        (f"s{i:03d}", "*.shared.test") for i in range(40) if i % len(KINDS) == 6
    ]
    assert matched(learnings, "http://localhost:20012/") == []
    # Invalid sites are still listed by sites(), with their problems.
    invalid = {entry.site_id for entry in learnings.sites() if not entry.valid}
    assert {"s011", "s012"} <= invalid
    assert "_skipped" not in {entry.site_id for entry in learnings.sites()}


def test_changes_are_seen_by_the_next_call(tmp_path: Path) -> None:
    fill(tmp_path, 30)
    learnings = Learnings(roots=[tmp_path])
    for _ in range(3):  # the first call indexes, the next ones run hot
        assert matched(learnings, "https://new.test/") == []

    make_site(tmp_path, "new", domains=["new.test", "*.new.test"])
    assert matched(learnings, "https://new.test/") == [("new", "new.test")]
    assert matched(learnings, "https://a.new.test/") == [("new", "*.new.test")]

    # Edited in place: the domains change.
    manifest = json.loads((tmp_path / "new" / "manifest.json").read_text())
    manifest["domains"] = ["renamed.test:8080"]
    (tmp_path / "new" / "manifest.json").write_text(json.dumps(manifest))
    assert matched(learnings, "https://new.test/") == []
    assert matched(learnings, "http://renamed.test:8080/") == [("new", "renamed.test:8080")]
    assert matched(learnings, "http://renamed.test/") == []

    # Replaced atomically, as editors save.
    manifest["domains"] = ["atomic.test"]
    temporary = tmp_path / "new" / "manifest.json.tmp"
    temporary.write_text(json.dumps(manifest))
    os.replace(temporary, tmp_path / "new" / "manifest.json")
    assert matched(learnings, "http://renamed.test:8080/") == []
    assert matched(learnings, "https://atomic.test/") == [("new", "atomic.test")]

    # Broken: it drops out of learn_context, and sites() reports it.
    (tmp_path / "new" / "manifest.json").write_text(json.dumps({**manifest, "name": 5}))
    assert matched(learnings, "https://atomic.test/") == []
    assert not learnings.find("new").valid
    (tmp_path / "new" / "manifest.json").write_text(json.dumps(manifest))
    assert matched(learnings, "https://atomic.test/") == [("new", "atomic.test")]

    # Renamed, then removed.
    os.rename(tmp_path / "new", tmp_path / "_new")
    assert matched(learnings, "https://atomic.test/") == []
    shutil.rmtree(tmp_path / "_new")
    make_site(tmp_path, "new", domains=["again.test"])  # the same folder name, made again
    assert matched(learnings, "https://again.test/") == [("new", "again.test")]
    manifest = json.loads((tmp_path / "new" / "manifest.json").read_text())
    (tmp_path / "new" / "manifest.json").write_text(json.dumps({**manifest, "domains": ["b.test"]}))
    assert matched(learnings, "https://b.test/") == [("new", "b.test")]
    # Removed and made again between two calls: the new folder is watched too.
    shutil.rmtree(tmp_path / "new")
    make_site(tmp_path, "new", domains=["c.test"])
    for _ in range(2):  # a URL of another site: only the index looks at this folder
        assert matched(learnings, "https://nowhere.test/") == []
    (tmp_path / "new" / "manifest.json").write_text(json.dumps({**manifest, "domains": ["d.test"]}))
    assert matched(learnings, "https://d.test/") == [("new", "d.test")]
    shutil.rmtree(tmp_path / "new")
    assert matched(learnings, "https://d.test/") == []


def test_a_site_in_an_earlier_root_shadows_by_the_next_call(tmp_path: Path) -> None:
    workspace, project = tmp_path / "workspace" / "learnings", tmp_path / "project"
    fill(project, 10)
    learnings = Learnings(roots=[workspace, project])  # the workspace does not exist yet
    for _ in range(3):
        assert matched(learnings, "https://site0.test/") == [("s000", "site0.test")]
    make_site(workspace, "s000", domains=["elsewhere.test"])
    assert matched(learnings, "https://site0.test/") == []
    assert matched(learnings, "https://elsewhere.test/") == [("s000", "elsewhere.test")]


def test_a_call_loads_only_the_matching_sites(tmp_path: Path, loads: list[str]) -> None:
    fill(tmp_path, 200)
    learnings = Learnings(roots=[tmp_path])
    assert matched(learnings, "https://site8.test/") == [("s008", "site8.test")]
    assert loads == ["s008"]
    assert learnings.index.reads == 200  # the domains of each, read once

    for _ in range(5):
        assert matched(learnings, "https://site8.test/") == [("s008", "site8.test")]
        assert matched(learnings, "https://x.shared.test/") != []
        assert matched(learnings, "https://nowhere.test/") == []
    shared = [f"s{i:03d}" for i in range(200) if i % len(KINDS) == 6]
    assert loads == ["s008", *shared]  # each loaded once, then taken from memory
    assert learnings.index.reads == 200

    # An edit elsewhere re-reads that one manifest's domains, and loads nothing.
    manifest = json.loads((tmp_path / "s100" / "manifest.json").read_text())
    (tmp_path / "s100" / "manifest.json").write_text(json.dumps({**manifest, "name": "New"}))
    assert matched(learnings, "https://site8.test/") == [("s008", "site8.test")]
    assert learnings.index.reads == 201
    assert loads == ["s008", *shared]

    # sites() (ego validate) still loads every site.
    assert len(learnings.sites()) == 200
    assert len(set(loads)) == 200


def test_read_domains_reads_only_what_a_load_would_parse(tmp_path: Path) -> None:
    file = tmp_path / "manifest.json"
    cases: list[tuple[bytes, tuple[str, ...]]] = [
        (b'{"domains": ["a.test", "*.b.test:81", 5]}', ("a.test", "*.b.test:81")),
        (b'{"domains": "a.test"}', ()),
        (b'["a.test"]', ()),
        (b"{ not json", ()),
        (b'\xff{"domains": ["a.test"]}', ()),
        (b"[" * 100_000 + b"]" * 100_000, ()),
        (b'{"domains": ["a.test"], "pad": "' + b"x" * MAX_MANIFEST_BYTES + b'"}', ()),
    ]
    for data, expected in cases:
        file.write_bytes(data)
        assert read_domains(str(file)) == expected, data[:40]
    assert read_domains(str(tmp_path / "missing.json")) == ()


@linux_only
def test_a_hot_call_stats_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fill(tmp_path, 50)
    stats: list[str] = []
    real = registry.file_stamp

    def counting(path: str | os.PathLike[str]) -> registry.FileStamp:
        stats.append(str(path))
        return real(path)

    for module in (sites, loading):
        monkeypatch.setattr(module, "file_stamp", counting)
    learnings = Learnings(roots=[tmp_path])
    for _ in range(3):  # the first call indexes, the second stats with the watches in place
        matched(learnings, "https://nowhere.test/")
        matched(learnings, "https://site0.test/")
    stats.clear()
    for _ in range(20):
        assert matched(learnings, "https://nowhere.test/") == []
        assert matched(learnings, "https://site0.test/") == [("s000", "site0.test")]
    assert stats == []


def test_a_change_no_watch_sees_is_seen_within_the_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A change the watcher misses (a network filesystem written from another machine): the
    # generation stands still, yet the rescan after REVALIDATE_SECONDS finds it.
    fill(tmp_path, 5)
    clock = [1000.0]
    monkeypatch.setattr(index_module, "monotonic", lambda: clock[0])
    monkeypatch.setattr(index_module, "generation", lambda: 7)
    monkeypatch.setattr(index_module, "watcher_epoch", lambda: 0)
    monkeypatch.setattr(index_module, "watch", lambda paths: 0)
    learnings = Learnings(roots=[tmp_path])
    assert matched(learnings, "https://site0.test/") == [("s000", "site0.test")]
    make_site(tmp_path, "late", domains=["late.test"])
    clock[0] += REVALIDATE_SECONDS / 2
    assert matched(learnings, "https://late.test/") == []  # trusted: no stat, no listing
    clock[0] += REVALIDATE_SECONDS
    assert matched(learnings, "https://late.test/") == [("late", "late.test")]


def test_without_change_notification_every_call_rescans(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fill(tmp_path, 5)
    monkeypatch.setattr(index_module, "watch", lambda paths: -1)
    learnings = Learnings(roots=[tmp_path])
    assert matched(learnings, "https://late.test/") == []
    make_site(tmp_path, "late", domains=["late.test"])
    assert matched(learnings, "https://late.test/") == [("late", "late.test")]


@linux_only
def test_a_folder_that_cannot_be_watched_is_still_seen_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The user's inotify limit reached part way: the others are watched, this one is not.
    fill(tmp_path, 10)
    real = watch.watch
    monkeypatch.setattr(
        index_module, "watch", lambda paths: -1 if "s004" in str(paths) else real(paths)
    )
    learnings = Learnings(roots=[tmp_path])
    for _ in range(3):
        assert matched(learnings, "https://nowhere.test/") == []
    manifest = json.loads((tmp_path / "s004" / "manifest.json").read_text())
    (tmp_path / "s004" / "manifest.json").write_text(
        json.dumps({**manifest, "domains": ["now.test"]})
    )
    assert matched(learnings, "https://now.test/") == [("s004", "now.test")]


def test_skills_for_a_url_read_only_the_folders_it_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    skills = tmp_path / "skills"
    for i in range(30):
        write_skill(skills, f"d{i}.test", "echo")
    write_skill(skills, "shop.test", "search")
    write_skill(skills, "www.shop.test", "cart")
    write_skill(skills, "other.test", "search")
    learnings = Learnings(roots=[tmp_path / "learnings"])
    loaded: list[str] = []
    real = load_skill

    def counting(directory: Path) -> Any:
        loaded.append(f"{directory.parent.name}/{directory.name}")
        return real(directory)

    monkeypatch.setattr(catalog_module, "load_skill", counting)
    context = context_for(learnings, "https://www.shop.test/x")
    assert [(tool.site_id, tool.tool_name) for tool in context.skills] == [
        ("shop.test", "search"),
        ("www.shop.test", "cart"),
    ]
    assert sorted(loaded) == ["shop.test/search", "www.shop.test/cart"]
    assert context_for(learnings, "https://shop.test/").skills[0].tool_name == "search"
    assert context_for(learnings, "https://nowhere.test/").skills == []
    assert sorted(loaded) == ["shop.test/search", "www.shop.test/cart"]
    on_d7 = context_for(learnings, "http://a.D7.test:81/").skills
    assert [(tool.site_id, tool.tool_name) for tool in on_d7] == [("d7.test", "echo")]
    # The catalog still lists every skill.
    assert len(catalog_for(learnings).entries()) == 33
