"""The hot call path: no stat per call, yet every edit to a site's files is seen in time.

No browser: the checks all happen in :func:`ego.calls.prepare` and the Call snippet is built
by :mod:`ego.runtime.cache`, so a stub tab that answers at once is enough.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import types
import weakref
from pathlib import Path
from typing import Any, cast

import pytest

import ego
from ego import calls
from ego.learning.catalog import freshness, loading, registry, sites, watch
from ego.learning.catalog.registry import Learnings
from ego.runtime import cache
from ego.site import Site

linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="change notification is inotify (Linux)"
)


def patch_catalog(monkeypatch: pytest.MonkeyPatch, name: str, value: Any) -> None:
    """Replace ``name`` in both modules of the registry that use it: finding sites (the
    manifests) and loading tools (their sources)."""
    for module in (sites, loading):
        monkeypatch.setattr(module, name, value)


def write_site(root: Path, *, source: str = "async (args) => args.n + 1\n") -> Path:
    site = root / "hot"
    (site / "browser-tools").mkdir(parents=True, exist_ok=True)
    (site / "browser-tools" / "add.js").write_text(source, encoding="utf-8")
    manifest = {
        "id": "hot",
        "name": "Hot",
        "domains": ["127.0.0.1"],
        "browserTools": {
            "add": {
                "description": "n + 1",
                "path": "browser-tools/add.js",
                "args": {"n": {"type": "integer", "required": True}},
            }
        },
    }
    (site / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return site


def refs_for(learnings: Learnings) -> calls.ToolRefs:
    """The refs a Site on ``learnings`` would keep for its calls (one set per learnings)."""
    return _REFS.setdefault(learnings, calls.ToolRefs())


_REFS: weakref.WeakKeyDictionary[Learnings, calls.ToolRefs] = weakref.WeakKeyDictionary()


def expression(learnings: Learnings, args: Any = None) -> str:
    """The tool's source as a Site's call of it finds it."""
    call = calls.prepare(
        learnings, "hot", "add", {"n": 1} if args is None else args, refs=refs_for(learnings)
    )
    assert call.source is not None
    return call.source.expression


@pytest.fixture
def stats(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every path the registry stats for freshness, in order."""
    seen: list[str] = []
    real = registry.file_stamp

    def counting(path: str | os.PathLike[str]) -> registry.FileStamp:
        seen.append(str(path))
        return real(path)

    patch_catalog(monkeypatch, "file_stamp", counting)
    return seen


@linux_only
def test_a_hot_call_stats_nothing(tmp_path: Path, stats: list[str]) -> None:
    write_site(tmp_path)
    learnings = Learnings(roots=[tmp_path])
    for _ in range(3):  # the first call loads, the second stats once to arm the watches
        expression(learnings)
    stats.clear()
    for _ in range(100):
        expression(learnings)
    assert stats == []


@linux_only
def test_a_hot_call_looks_at_the_watcher_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_site(tmp_path)
    learnings = Learnings(roots=[tmp_path])
    for _ in range(3):
        expression(learnings)
    looks = []

    def counted() -> int:
        looks.append(1)
        return watch.generation()

    # The site and the tool's source, both trusted: one look covers the two.
    patch_catalog(monkeypatch, "generation", counted)
    for n in range(10):
        call = calls.prepare(learnings, "hot", "add", {"n": n}, refs=refs_for(learnings))
        assert call.args == {"n": n}
    assert len(looks) == 10


@linux_only
def test_an_edit_is_seen_by_the_very_next_call(tmp_path: Path, stats: list[str]) -> None:
    site = write_site(tmp_path)
    learnings = Learnings(roots=[tmp_path])
    for _ in range(3):
        assert expression(learnings) == "async (args) => args.n + 1\n"

    # The tool's source, rewritten in place (same size: only the content changes).
    (site / "browser-tools" / "add.js").write_text("async (args) => args.n + 2\n")
    assert expression(learnings) == "async (args) => args.n + 2\n"
    expression(learnings)

    # Replaced atomically (a new inode under the same name), as editors save.
    new = site / "browser-tools" / "add.js.tmp"
    new.write_text("async (args) => args.n + 3\n")
    os.replace(new, site / "browser-tools" / "add.js")
    assert expression(learnings) == "async (args) => args.n + 3\n"
    expression(learnings)

    # The manifest: the tool now needs a string, so the old args fail at once.
    manifest = json.loads((site / "manifest.json").read_text())
    manifest["browserTools"]["add"]["args"] = {"n": {"type": "string", "required": True}}
    (site / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ego.InvalidArgsError):
        expression(learnings)
    assert expression(learnings, {"n": "1"}) == "async (args) => args.n + 3\n"

    # The site folder removed: the site is gone at once.
    (site / "browser-tools" / "add.js").unlink()
    (site / "manifest.json").unlink()
    (site / "browser-tools").rmdir()
    site.rmdir()
    with pytest.raises(ego.UnknownSiteError):
        expression(learnings, {"n": "1"})


@linux_only
def test_a_site_in_an_earlier_root_shadows_at_once(tmp_path: Path) -> None:
    workspace, project = tmp_path / "workspace", tmp_path / "project"
    write_site(project)
    learnings = Learnings(roots=[workspace, project])  # the workspace root does not exist yet
    for _ in range(3):
        assert expression(learnings) == "async (args) => args.n + 1\n"
    write_site(workspace, source="async (args) => 'from the workspace'\n")
    assert expression(learnings) == "async (args) => 'from the workspace'\n"


def test_a_change_no_watch_sees_is_seen_within_the_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A change the watcher misses (a network filesystem written from another machine): the
    # generation stands still, yet a stat after REVALIDATE_SECONDS finds it.
    site = write_site(tmp_path)
    learnings = Learnings(roots=[tmp_path])
    clock = [1000.0]
    patch_catalog(monkeypatch, "monotonic", lambda: clock[0])
    patch_catalog(monkeypatch, "generation", lambda: 7)
    monkeypatch.setattr(freshness, "watcher_epoch", lambda: 0)
    patch_catalog(monkeypatch, "watch", lambda paths: 0)
    for _ in range(3):
        expression(learnings)
    (site / "browser-tools" / "add.js").write_text("async (args) => 'edited unseen'\n")
    clock[0] += watch.REVALIDATE_SECONDS / 2
    assert expression(learnings) == "async (args) => args.n + 1\n"  # trusted: no event, in time
    clock[0] += watch.REVALIDATE_SECONDS / 2 + 0.001
    assert expression(learnings) == "async (args) => 'edited unseen'\n"


def test_without_watches_every_call_stats(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stats: list[str]
) -> None:
    # Where inotify is missing (or a watch cannot be added), a call stats as it always did.
    patch_catalog(monkeypatch, "watch", lambda paths: -1)
    site = write_site(tmp_path)
    learnings = Learnings(roots=[tmp_path])
    expression(learnings)
    stats.clear()
    for _ in range(5):
        expression(learnings)
    assert len(stats) == 10  # the manifest and the tool file, each call
    (site / "browser-tools" / "add.js").write_text("async (args) => 'edited'\n")
    assert expression(learnings) == "async (args) => 'edited'\n"


def test_a_forked_child_trusts_nothing_it_does_not_watch(tmp_path: Path) -> None:
    if not hasattr(os, "fork") or not sys.platform.startswith("linux"):
        pytest.skip("needs fork and inotify")
    site = write_site(tmp_path)
    learnings = Learnings(roots=[tmp_path])
    for _ in range(3):
        expression(learnings)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its parent's watcher is not its own
        try:
            (site / "browser-tools" / "add.js").write_text("async (args) => 'child'\n")
            ok = expression(learnings) == "async (args) => 'child'\n"
            os.write(write, b"1" if ok else b"0")
        finally:
            os._exit(0)
    os.close(write)
    try:
        assert os.read(read, 1) == b"1"
    finally:
        os.close(read)
        os.waitpid(pid, 0)


class StubTab:
    """Answers every evaluate at once, each with an answer of its own (``{"answer": n}`` for
    the n-th), keeping what it was sent."""

    #: On the test site's domains, as a tool's tab must be.
    url = "http://127.0.0.1/"

    def __init__(self) -> None:
        self.sent: list[str] = []

    async def evaluate(
        self, expression: str, *, timeout: float | None = None, describe: bool = True
    ) -> Any:
        assert describe is False  # a tool call takes the raw path: one round trip
        self.sent.append(expression)
        return {"answer": len(self.sent)}


def test_the_call_snippet_is_built_from_its_fixed_parts(tmp_path: Path) -> None:
    write_site(tmp_path)
    site = Site(cast(ego.Browser, types.SimpleNamespace(process=None)), Learnings(roots=[tmp_path]))
    tab = StubTab()
    for n in (1, 1, 12345):
        result = asyncio.run(site.run_browser_tool("hot", "add", {"n": n}, tab=cast(ego.Tab, tab)))
        assert result == {"answer": len(tab.sent)}  # this call's own answer, as the page gave it
        assert site.last_run is not None
        assert (site.last_run.mode, site.last_run.evaluations) == ("cached", 1)
        assert site.last_run.bytes_sent == len(tab.sent[-1].encode())
    call = calls.prepare(site.learnings, "hot", "add", {"n": 12345})
    assert call.source is not None
    key = cache.cache_key("hot", "add")
    # The same text the unoptimised build gives, for this process's signal key and another.
    expected = cache.call_snippet(
        key, call.source.version, '{"n":12345}', signal_key=cache.PORTABLE_SIGNAL_KEY
    ).replace(cache.PORTABLE_SIGNAL_KEY, cache.SIGNAL_KEY)
    assert tab.sent[-1] == expected
