"""Learning packs without a browser or an installer: distributions written by hand into a
folder (METADATA, entry_points.txt and a RECORD of hashes, as pip writes them) are found,
ordered, verified file by file, and take their place among the roots.
"""

from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path

import pytest

from ego.errors import PackIntegrityError, UnknownPackError, WorkspaceRequiredError
from ego.learning.catalog.packs import Pack, find_pack, installed_packs
from ego.learning.catalog.registry import Learnings, project_learnings_dir
from ego.learning.describe.context import summarize_site
from ego.learning.plan.save_plan import workspace_root
from tests.helpers.learnings import ECHO, make_site, tool


def record_line(base: Path, file: Path) -> str:
    data = file.read_bytes()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{file.relative_to(base).as_posix()},sha256={digest},{len(data)}"


def install(
    base: Path,
    name: str,
    version: str,
    sites: dict[str, list[str]],
    *,
    value: str | None = None,
    unhashed: str | None = None,
) -> Path:
    """Write the distribution ``name`` into ``base`` as an installer would: each site of
    ``sites`` (id -> domains) under ``ego_pack_<name>/learnings``, then its RECORD."""
    package = f"ego_pack_{name.replace('-', '_')}"
    learnings = base / package / "learnings"
    for site_id, domains in sites.items():
        make_site(
            learnings,
            site_id,
            name=f"{name} {site_id}",
            domains=domains,
            browser_tools={"echo": tool(ECHO)},
            notes={"notes/a.md": "# A\nabout\n"},
        )
    info = base / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(
        f"[ego.learnings]\n{name} = {value or package + '.learnings'}\n"
    )
    lines = []
    for file in sorted(path for path in (base / package).rglob("*") if path.is_file()):
        line = record_line(base, file)
        if unhashed and file == learnings / unhashed:
            line = f"{file.relative_to(base).as_posix()},,"
        lines.append(line)
    lines += [f"{info.name}/METADATA,,", f"{info.name}/RECORD,,"]
    (info / "RECORD").write_text("\n".join(lines) + "\n")
    return learnings


def test_packs_are_found_in_name_order_and_take_their_place_among_the_roots(tmp_path: Path) -> None:
    base = tmp_path / "site-packages"
    zeta = install(base, "zeta-pack", "3.1", {"shared": ["shared.test"], "zeta": ["z.test"]})
    alpha = install(base, "alpha-pack", "1.0", {"shared": ["shared.test"]})
    found = installed_packs(path=[str(base)])
    assert [(pack.name, pack.version, pack.root) for pack in found] == [
        ("alpha-pack", "1.0", alpha),
        ("zeta-pack", "3.1", zeta),
    ]
    make_site(tmp_path / "ws" / "learnings", "zeta", domains=["z.test"])
    learnings = Learnings(workspace=tmp_path / "ws", packs=found)
    assert learnings.roots == [tmp_path / "ws" / "learnings", alpha, zeta, project_learnings_dir()]
    assert learnings.workspace_root == tmp_path / "ws" / "learnings"
    summaries = {entry.site_id: summarize_site(entry) for entry in learnings.sites()}
    shared, own = summaries["shared"], summaries["zeta"]
    assert (shared.source, shared.pack, shared.pack_version) == ("pack", "alpha-pack", "1.0")
    assert shared.shadows == ["pack zeta-pack 3.1"]
    assert "pack alpha-pack 1.0 is used, pack zeta-pack 3.1 shadowed" in shared.warning
    assert (own.source, own.shadows, own.warning) == ("workspace", ["pack zeta-pack 3.1"], "")
    assert find_pack("Zeta_Pack", found) is found[1]
    with pytest.raises(UnknownPackError, match=r"installed: alpha-pack 1.0, zeta-pack 3.1"):
        find_pack("gamma", found)


def test_without_a_workspace_a_pack_is_never_where_saves_go(tmp_path: Path) -> None:
    base = tmp_path / "site-packages"
    install(base, "alpha-pack", "1.0", {"shop": ["shop.test"]})
    learnings = Learnings(packs=installed_packs(path=[str(base)]))
    assert learnings.workspace_root is None
    with pytest.raises(WorkspaceRequiredError):
        workspace_root(learnings)


def test_each_kind_of_difference_names_its_file_and_fails_only_its_site(tmp_path: Path) -> None:
    base = tmp_path / "site-packages"
    root = install(
        base,
        "alpha-pack",
        "1.0",
        {name: [f"{name}.test"] for name in "abcde"},
        unhashed="a/notes/a.md",
    )
    (pack,) = installed_packs(path=[str(base)])
    learnings = Learnings(roots=[root], packs=[pack])
    assert learnings.find("b").valid
    (root / "b" / "notes" / "a.md").write_text("# A\nchanged\n")
    (root / "c" / "browser-tools" / "echo.js").unlink()
    (root / "d" / "notes" / "extra.md").write_text("new\n")
    (root / "e" / "notes" / "a.md").unlink()
    os.symlink(root / "b" / "manifest.json", root / "e" / "notes" / "a.md")
    problems = {entry.site_id: entry.problems for entry in learnings.sites()}
    assert problems["a"] == [
        "notes/a.md has no hash in the pack's RECORD, so it cannot be verified"
    ]
    assert problems["b"] == [
        "notes/a.md was changed after the install (its sha256 differs from the pack's RECORD)"
    ]
    assert problems["c"] == ["browser-tools/echo.js is missing (the pack's RECORD lists it)"]
    assert problems["d"] == [
        "notes/extra.md was added after the install (not in the pack's RECORD)"
    ]
    assert problems["e"] == ["notes/a.md is not a regular file (the pack's RECORD lists a file)"]
    with pytest.raises(PackIntegrityError, match=r"cannot run c/echo: site 'c' of pack alpha-pack"):
        learnings.tool("c", "echo")
    # Python's own compiled files are not the pack's: they are never reported.
    (root / "b" / "notes" / "a.md").unlink()
    (root / "b" / "__pycache__").mkdir()
    (root / "b" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    assert learnings.find("b").problems == ["notes/a.md is missing (the pack's RECORD lists it)"]


def test_a_pack_whose_entry_point_is_not_a_folder_path_is_broken_not_a_root(tmp_path: Path) -> None:
    base = tmp_path / "site-packages"
    install(base, "odd-pack", "1.0", {"x": ["x.test"]}, value="ego_pack_odd_pack:sites")
    install(base, "gone-pack", "1.0", {"y": ["y.test"]}, value="ego_pack_nothing_here")
    found = {pack.name: pack for pack in installed_packs(path=[str(base)])}
    assert found["odd-pack"].root is None
    assert "must be a dotted path to the folder of its sites" in found["odd-pack"].problem
    assert found["gone-pack"].root is None
    assert "is not a folder" in found["gone-pack"].problem
    learnings = Learnings(workspace=tmp_path / "ws", packs=list(found.values()))
    assert learnings.roots == [tmp_path / "ws" / "learnings", project_learnings_dir()]
    assert learnings.packs == []


def test_a_pack_site_is_checked_again_only_when_a_stat_changes(tmp_path: Path) -> None:
    base = tmp_path / "site-packages"
    root = install(base, "alpha-pack", "1.0", {"a": ["a.test"]})
    (pack,) = installed_packs(path=[str(base)])
    assert isinstance(pack, Pack)
    learnings = Learnings(roots=[root], packs=[pack])
    assert learnings.find("a").valid
    hashed = learnings.integrity.hashed
    assert hashed == 3  # manifest, tool, note
    for _ in range(3):
        learnings.sites()
        learnings.sites_for_url("https://a.test/")
    assert learnings.integrity.hashed == hashed
    note = root / "a" / "notes" / "a.md"
    note.write_text("# B\nother\n")
    assert not learnings.find("a").valid  # seen at once, by the note's stat
    assert learnings.integrity.hashed == hashed + 1
    assert learnings.sites_for_url("https://a.test/") == []
