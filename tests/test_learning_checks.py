"""The checks that hold before anything runs, each with its own exception and a clear message."""

from __future__ import annotations

import builtins
import io
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

import ego
from ego.errors import (
    InvalidArgsError,
    InvalidManifestError,
    LearningError,
    ToolLoadError,
    UnknownSiteError,
    UnknownToolError,
    UnsafePathError,
)
from ego.learning.catalog.paths import check_relative, resolve_inside
from ego.learning.catalog.registry import Learnings
from ego.places import state_dir
from ego.site import Site
from tests.helpers.learnings import ECHO, CdpSpy, make_site, tool, write_manifest
from tests.helpers.page_server import PageServer

#: A browser tool that leaves a mark in the page, at load and when called.
MARKER = """window.__ego_marker = (window.__ego_marker || 0) + 1;
export default async function mark(args) {
  window.__ego_called = true;
  return args;
}
"""

#: A browser tool that must never run.
EVIL_JS = "async function () {\n  window.__ego_evil = true;\n  return 'evil ran';\n}\n"

ARGS = {
    "text": {"type": "string", "required": True, "maxLength": 5},
    "count": {"type": "integer", "minimum": 0},
}


@pytest.fixture(scope="module")
async def shared_tab(browser: ego.Browser, server: PageServer) -> AsyncIterator[ego.Tab]:
    """One tab on the test server for the module (a tab per test would double its runtime)."""
    tab = await browser.new_tab(server.route("/learning-checks", "<title>checks</title>"))
    yield tab
    if not browser.closed:
        await tab.close()


@pytest.fixture
async def page(shared_tab: ego.Tab) -> ego.Tab:
    """The module's tab, with the marks that tools leave wiped."""
    await shared_tab.evaluate(
        "delete window.__ego_marker; delete window.__ego_called; delete window.__ego_evil"
    )
    return shared_tab


async def _marks(tab: ego.Tab) -> dict[str, Any]:
    result: dict[str, Any] = await tab.evaluate(
        "({marker: window.__ego_marker ?? null, called: window.__ego_called ?? null,"
        " evil: window.__ego_evil ?? null})"
    )
    return result


class FileReads:
    """Records every file Python opens while installed."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.paths: list[str] = []
        real_open = io.open
        real_open_code = io.open_code
        real_read_text = Path.read_text
        paths = self.paths

        def recording_open(file: Any, *args: Any, **kwargs: Any) -> Any:
            paths.append(os.fspath(file) if isinstance(file, (str, os.PathLike)) else repr(file))
            return real_open(file, *args, **kwargs)

        def recording_open_code(file: str) -> Any:
            paths.append(file)
            return real_open_code(file)

        def recording_read_text(self: Path, *args: Any, **kwargs: Any) -> str:
            paths.append(str(self))
            return real_read_text(self, *args, **kwargs)

        monkeypatch.setattr(io, "open", recording_open)
        monkeypatch.setattr(builtins, "open", recording_open)
        monkeypatch.setattr(io, "open_code", recording_open_code)
        monkeypatch.setattr(Path, "read_text", recording_read_text)


# --- unknown site -----------------------------------------------------------------------------


@pytest.mark.parametrize("site_id", ["nowhere", "../shop", "shop/..", "_shop", "Shop", ""])
async def test_unknown_site_lists_the_roots(
    tmp_path: Path,
    browser: ego.Browser,
    page: ego.Tab,
    monkeypatch: pytest.MonkeyPatch,
    site_id: str,
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    make_site(second, "shop", domains=["127.0.0.1"], browser_tools={"echo": tool(ECHO)})
    site = Site(browser, Learnings(roots=[first, second]))
    spy = CdpSpy().install(monkeypatch)
    with pytest.raises(UnknownSiteError) as info:
        await site.run_browser_tool(site_id, "echo", tab=page)
    message = str(info.value)
    assert message.startswith(f"cannot run {site_id}/echo: no learnings site {site_id!r}; ")
    assert f"searched {first}, {second}" in message
    assert "known sites: shop" in message
    with pytest.raises(UnknownSiteError):
        await site.run_tool(site_id, "echo", tab=page)
    assert spy.methods == []


# --- undeclared tools -------------------------------------------------------------------------


async def test_an_undeclared_tool_is_refused_before_any_file_is_read(
    tmp_path: Path, browser: ego.Browser, page: ego.Tab, monkeypatch: pytest.MonkeyPatch
) -> None:
    site_dir = make_site(
        tmp_path,
        "shop",
        domains=["127.0.0.1"],
        browser_tools={"search": tool(ECHO), "list_items": tool(ECHO)},
        python_tools={"report": tool("def run(ctx, args):\n    return 1\n")},
    )
    # Files that exist on disk but that the manifest does not declare.
    (site_dir / "browser-tools" / "secret.js").write_text(EVIL_JS)
    (site_dir / "tools" / "secret.py").write_text(
        f"open({str(tmp_path / 'imported')!r}, 'w').close()\ndef run(ctx, args):\n    return 1\n"
    )
    site = Site(browser, Learnings(roots=[tmp_path]))
    reads = FileReads(monkeypatch)
    spy = CdpSpy().install(monkeypatch)
    for call in (site.run_browser_tool, site.run_tool):
        with pytest.raises(UnknownToolError) as info:
            await call("shop", "secret", tab=page)
        message = str(info.value)
        assert "'shop'" in message
        assert "'secret'" in message
        assert str(site_dir / "manifest.json") in message
        assert message.endswith("declared tools: list_items, report, search")
    monkeypatch.undo()

    # Only the manifest may have been read; no tool file, and nothing reached the browser.
    # (ego's own record of the manifests that passed their checks, in its state folder, is
    # no file of the learnings.)
    assert spy.methods == []
    read = [path for path in reads.paths if not Path(path).is_relative_to(state_dir())]
    assert {Path(p).name for p in read} <= {"manifest.json"}
    assert not any("browser-tools" in p or os.sep + "tools" in p for p in reads.paths)
    assert not (tmp_path / "imported").exists()
    assert (await _marks(page))["evil"] is None


async def test_undeclared_tool_on_a_site_with_no_tool_files(
    tmp_path: Path, browser: ego.Browser, page: ego.Tab
) -> None:
    # The declared tool has no file at all: asking for another name never looks for one.
    make_site(tmp_path, "bare", domains=["127.0.0.1"], browser_tools={"declared": tool(None)})
    site = Site(browser, Learnings(roots=[tmp_path]))
    with pytest.raises(UnknownToolError, match=r"declared tools: declared$"):
        await site.run_browser_tool("bare", "ghost", tab=page)
    # The declared one is found in the manifest and then reported missing on disk.
    with pytest.raises(ToolLoadError) as info:
        await site.run_browser_tool("bare", "declared", tab=page)
    assert "bare/declared" in str(info.value)
    assert str(tmp_path / "bare" / "browser-tools" / "declared.js") in str(info.value)


async def test_a_site_with_no_tools_says_none(tmp_path: Path, browser: ego.Browser) -> None:
    make_site(tmp_path, "empty", domains=["127.0.0.1"])
    site = Site(browser, Learnings(roots=[tmp_path]))
    with pytest.raises(UnknownToolError, match="declared tools: none"):
        await site.run_tool("empty", "anything")


async def test_wrong_kind_of_tool_is_refused(
    tmp_path: Path, browser: ego.Browser, page: ego.Tab
) -> None:
    make_site(
        tmp_path,
        "shop",
        domains=["127.0.0.1"],
        python_tools={"report": tool("def run(ctx, args):\n    return 'ran'\n")},
    )
    site = Site(browser, Learnings(roots=[tmp_path]))
    with pytest.raises(ToolLoadError, match=r"shop/report is a Python tool: call site\.run_tool"):
        await site.run_browser_tool("shop", "report", tab=page)
    assert await site.run_tool("shop", "report", tab=page) == "ran"


# --- unsafe paths -----------------------------------------------------------------------------


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the learnings root, holding files no site may reach."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "evil.js").write_text(EVIL_JS)
    (folder / "evil.py").write_text(
        f"open({str(folder / 'imported')!r}, 'w').close()\ndef run(ctx, args):\n    return 'evil'\n"
    )
    (folder / "secret.md").write_text("# Secret\nTOP-SECRET-TEXT\n")
    return folder


def _unsafe_paths(outside: Path, suffix: str) -> Iterator[tuple[str, str]]:
    """(path as the manifest gives it, what the message says) for each unsafe kind."""
    yield str(outside / f"evil.{suffix}"), "is absolute"
    yield f"../../outside/evil.{suffix}", "holds '..'"
    yield f"sub/../../../outside/evil.{suffix}", "holds '..'"
    yield f"folder\\evil.{suffix}", "holds a backslash"
    yield f"~/evil.{suffix}", "is absolute"
    yield f"C:/evil.{suffix}", "is absolute"
    yield f"link/evil.{suffix}", "outside the site folder"  # a linked folder
    yield f"linked.{suffix}", "outside the site folder"  # a linked file


def _link_outside(site_dir: Path, outside: Path, suffix: str) -> None:
    site_dir.mkdir(parents=True, exist_ok=True)
    (site_dir / "link").symlink_to(outside, target_is_directory=True)
    (site_dir / f"linked.{suffix}").symlink_to(outside / f"evil.{suffix}")


UNSAFE_JS = list(_unsafe_paths(Path("/OUTSIDE"), "js"))


@pytest.mark.parametrize("index", range(len(UNSAFE_JS)), ids=[p for p, _ in UNSAFE_JS])
async def test_unsafe_browser_tool_paths_are_refused(
    tmp_path: Path,
    outside: Path,
    browser: ego.Browser,
    page: ego.Tab,
    monkeypatch: pytest.MonkeyPatch,
    index: int,
) -> None:
    path, reason = list(_unsafe_paths(outside, "js"))[index]
    root = tmp_path / "learnings"
    _link_outside(root / "shop", outside, "js")
    make_site(root, "shop", domains=["127.0.0.1"], browser_tools={"evil": tool(None, path)})
    site = Site(browser, Learnings(roots=[root]))
    spy = CdpSpy().install(monkeypatch)
    with pytest.raises(UnsafePathError) as info:
        await site.run_browser_tool("shop", "evil", tab=page)
    monkeypatch.undo()
    message = str(info.value)
    assert message.startswith("shop/evil: path ")
    assert repr(path) in message
    assert reason in message
    assert spy.methods == []
    assert (await _marks(page))["evil"] is None


@pytest.mark.parametrize("index", range(len(UNSAFE_JS)), ids=[p for p, _ in UNSAFE_JS])
async def test_unsafe_python_tool_paths_are_refused(
    tmp_path: Path, outside: Path, browser: ego.Browser, page: ego.Tab, index: int
) -> None:
    path, reason = list(_unsafe_paths(outside, "py"))[index]
    root = tmp_path / "learnings"
    _link_outside(root / "shop", outside, "py")
    make_site(root, "shop", domains=["127.0.0.1"], python_tools={"evil": tool(None, path)})
    site = Site(browser, Learnings(roots=[root]))
    with pytest.raises(UnsafePathError) as info:
        await site.run_tool("shop", "evil", tab=page)
    message = str(info.value)
    assert message.startswith("shop/evil: path ")
    assert repr(path) in message
    assert reason in message
    assert not (outside / "imported").exists()


async def test_unsafe_note_paths_are_refused(
    tmp_path: Path, outside: Path, browser: ego.Browser
) -> None:
    root = tmp_path / "learnings"
    site_dir = root / "shop"
    _link_outside(site_dir, outside, "md")
    (site_dir / "linked.md").unlink()
    (site_dir / "linked.md").symlink_to(outside / "secret.md")
    unsafe = [
        str(outside / "secret.md"),
        "../../outside/secret.md",
        "notes\\secret.md",
        "link/secret.md",
        "linked.md",
    ]
    (site_dir / "notes").mkdir()
    (site_dir / "notes" / "ok.md").write_text("# Fine\nsafe text\n")
    write_manifest(
        site_dir,
        {"id": "shop", "name": "Shop", "domains": ["127.0.0.1"], "notes": ["notes/ok.md", *unsafe]},
    )
    learnings = Learnings(roots=[root])
    assert len(learnings.site("shop").notes) == 1 + len(unsafe)

    # Each unsafe note is refused by the same check the registry applies ...
    for path in unsafe:
        with pytest.raises(UnsafePathError, match="shop note: path"):
            resolve_inside(site_dir, path, what="shop note")
    # ... so only the safe note is served and the outside text never leaks.
    notes = learnings.notes("shop")
    assert [(n.path, n.title, n.text) for n in notes] == [
        ("notes/ok.md", "Fine", "# Fine\nsafe text\n")
    ]
    context = await Site(browser, learnings).learn_context("http://127.0.0.1/")
    assert context.matched
    assert "TOP-SECRET-TEXT" not in context.model_dump_json()
    assert [n.path for n in context.notes] == ["notes/ok.md"]


@pytest.mark.parametrize(
    "path", ["browser-tools/a.js", "a.js", "deep/er/a.js", "./a.js", "x..y/a.js", "a..js"]
)
def test_plain_relative_paths_pass(path: str) -> None:
    check_relative(path, what="s/t")


@pytest.mark.parametrize("path", ["", "   ", "a\x00b.js"])
def test_empty_or_nul_paths_are_refused(path: str) -> None:
    with pytest.raises(UnsafePathError, match="s/t"):
        check_relative(path, what="s/t")


async def test_a_link_that_stays_inside_the_site_is_fine(
    tmp_path: Path, browser: ego.Browser, page: ego.Tab
) -> None:
    site_dir = make_site(
        tmp_path,
        "shop",
        domains=["127.0.0.1"],
        browser_tools={"real": tool("async () => 'real'\n"), "alias": tool(None, "alias.js")},
    )
    (site_dir / "alias.js").symlink_to(site_dir / "browser-tools" / "real.js")
    site = Site(browser, Learnings(roots=[tmp_path]))
    assert await site.run_browser_tool("shop", "alias", tab=page) == "real"


# --- args -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "field", "needle"),
    [
        ({}, "text", '"text" is a required property'),
        ({"text": 5}, "text", '5 is not of type "string"'),
        ({"text": "too long"}, "text", "is too long"),
        ({"text": "ok", "count": -1}, "count", "less than the minimum"),
        ({"text": "ok", "count": 1.5}, "count", 'not of type "integer"'),
        ({"text": "ok", "colour": "red"}, "colour", '"colour" was unexpected'),
        (["text"], "(args)", "args must be a JSON object, not list"),
        ("text", "(args)", "args must be a JSON object, not str"),
    ],
)
async def test_bad_args_never_reach_the_browser(
    tmp_path: Path,
    browser: ego.Browser,
    page: ego.Tab,
    monkeypatch: pytest.MonkeyPatch,
    args: Any,
    field: str,
    needle: str,
) -> None:
    make_site(
        tmp_path, "shop", domains=["127.0.0.1"], browser_tools={"mark": tool(MARKER, args=ARGS)}
    )
    site = Site(browser, Learnings(roots=[tmp_path]))
    spy = CdpSpy().install(monkeypatch)
    for explicit_tab in (page, None):  # not even a tab lookup happens
        with pytest.raises(InvalidArgsError) as info:
            await site.run_browser_tool("shop", "mark", args, tab=explicit_tab)
        assert info.value.field == field
        message = str(info.value)
        assert message.startswith("shop/mark (browser-tools/mark.js): ")
        assert needle in message
        assert "nothing was sent to the browser" in message or field == "(args)"
    monkeypatch.undo()
    assert spy.methods == []
    assert await _marks(page) == {"marker": None, "called": None, "evil": None}
    # The same tool with good args does run: the mark proves the check was the only stop.
    # (Its module top level ran once in this document, for whichever case called it first.)
    assert await site.run_browser_tool("shop", "mark", {"text": "ok"}, tab=page) == {"text": "ok"}
    marks = await _marks(page)
    assert marks["called"] is True
    assert marks["evil"] is None


@pytest.mark.parametrize(
    "args",
    [{"x": float("nan")}, {"x": [1, float("inf")]}, {"x": {1, 2}}, {"x": object()}, {"x": 2**70}],
    ids=["nan", "inf", "set", "object", "huge-int"],
)
async def test_args_that_are_not_json_never_reach_the_browser(
    tmp_path: Path, browser: ego.Browser, page: ego.Tab, monkeypatch: pytest.MonkeyPatch, args: Any
) -> None:
    # A schema that lets anything through: only the JSON check can stop these.
    make_site(
        tmp_path,
        "shop",
        domains=["127.0.0.1"],
        browser_tools={"mark": tool(MARKER, args={"type": "object"})},
    )
    site = Site(browser, Learnings(roots=[tmp_path]))
    spy = CdpSpy().install(monkeypatch)
    with pytest.raises(InvalidArgsError) as info:
        await site.run_browser_tool("shop", "mark", args, tab=page)
    monkeypatch.undo()
    assert info.value.field == "(args)"
    assert str(info.value).startswith("shop/mark (browser-tools/mark.js): args are not JSON")
    assert spy.methods == []
    assert (await _marks(page))["marker"] is None


async def test_bad_args_for_a_python_tool_never_run_it(
    tmp_path: Path, browser: ego.Browser
) -> None:
    make_site(
        tmp_path,
        "shop",
        domains=["127.0.0.1"],
        python_tools={
            "report": tool(
                f"open({str(tmp_path / 'imported')!r}, 'w').close()\n"
                "def run(ctx, args):\n    return 1\n",
                args=ARGS,
            )
        },
    )
    site = Site(browser, Learnings(roots=[tmp_path]))
    with pytest.raises(InvalidArgsError) as info:
        await site.run_tool("shop", "report", {"count": 1})
    assert info.value.field == "text"
    assert "shop/report (tools/report.py)" in str(info.value)
    assert not (tmp_path / "imported").exists()


def test_every_check_is_a_learning_error() -> None:
    for error in (
        UnknownSiteError,
        UnknownToolError,
        UnsafePathError,
        InvalidArgsError,
        InvalidManifestError,
        ToolLoadError,
    ):
        assert issubclass(error, LearningError)
        assert issubclass(error, ego.EgoError)


# --- broken manifests -------------------------------------------------------------------------


def _mixed_root(root: Path) -> None:
    make_site(
        root,
        "good",
        domains=["127.0.0.1"],
        browser_tools={"echo": tool(ECHO)},
        python_tools={"py": tool("def run(ctx, args):\n    return 'py ran'\n")},
    )
    make_site(root, "bad-json", domains=["127.0.0.1"], browser_tools={"echo": tool(ECHO)})
    write_manifest(root / "bad-json", '{"id": "bad-json", "name": "x", "domains": ["127.0.0.1"]')
    make_site(root, "bad-schema", domains=[], browser_tools={"echo": tool(ECHO)})
    make_site(
        root,
        "mismatch",
        manifest_id="other",
        domains=["127.0.0.1"],
        browser_tools={"echo": tool(ECHO)},
    )
    make_site(root, "zzz-good", domains=["127.0.0.1"], browser_tools={"echo": tool(ECHO)})


async def test_a_broken_manifest_spoils_only_its_own_site(
    tmp_path: Path, browser: ego.Browser, page: ego.Tab, monkeypatch: pytest.MonkeyPatch
) -> None:
    _mixed_root(tmp_path)
    site = Site(browser, Learnings(roots=[tmp_path]))

    listed = {summary.site_id: summary for summary in site.sites()}
    assert list(listed) == ["bad-json", "bad-schema", "good", "mismatch", "zzz-good"]
    assert {sid for sid, s in listed.items() if s.valid} == {"good", "zzz-good"}
    assert listed["good"].problems == []
    assert listed["good"].browser_tools == ["echo"]
    assert listed["good"].python_tools == ["py"]
    assert listed["bad-json"].valid is False
    assert listed["bad-json"].name is None
    assert "not JSON" in listed["bad-json"].problems[0]
    assert listed["bad-schema"].problems == ["domains: [] is too short (at least 1 item)"]
    assert listed["mismatch"].problems == ["id: 'other' must equal the folder name 'mismatch'"]

    # Every other site keeps working.
    assert await site.run_browser_tool("good", "echo", {}, tab=page) == {}
    assert await site.run_browser_tool("zzz-good", "echo", tab=page) == {}
    assert await site.run_tool("good", "py", tab=page) == "py ran"
    context = await site.learn_context(page.url)
    assert [s.site_id for s in context.sites] == ["good", "zzz-good"]

    # The broken ones refuse to run, naming the site, the manifest and the problem.
    spy = CdpSpy().install(monkeypatch)
    for site_id, needle in [
        ("bad-json", "not JSON"),
        ("bad-schema", "is too short (at least 1 item)"),
        ("mismatch", "must equal the folder name"),
    ]:
        for call in (site.run_browser_tool, site.run_tool):
            with pytest.raises(InvalidManifestError) as info:
                await call(site_id, "echo", tab=page)
            assert info.value.site_id == site_id
            assert str(info.value).startswith(f"cannot run {site_id}/echo: site {site_id!r} ")
            assert str(tmp_path / site_id / "manifest.json") in str(info.value)
            assert needle in str(info.value)
            assert info.value.problems
    monkeypatch.undo()
    assert spy.methods == []


async def test_fixing_a_manifest_on_disk_makes_the_site_valid(
    tmp_path: Path, browser: ego.Browser, page: ego.Tab
) -> None:
    _mixed_root(tmp_path)
    site = Site(browser, Learnings(roots=[tmp_path]))
    with pytest.raises(InvalidManifestError):
        await site.run_browser_tool("mismatch", "echo", tab=page)
    make_site(
        tmp_path,
        "mismatch",
        domains=["127.0.0.1"],
        browser_tools={"echo": tool(ECHO)},
        description="fixed, and a different size",
    )
    assert await site.run_browser_tool("mismatch", "echo", {}, tab=page) == {}
    assert {s.site_id: s.valid for s in site.sites()}["mismatch"] is True
