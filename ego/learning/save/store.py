"""Writing a checked save to disk, atomically, keeping the replaced version; and restoring one.

A new site (or the workspace copy of a project site) is assembled in a hidden folder of the
workspace and renamed into place. Replacing a tool in a workspace site keeps the previous
version in ``browser-tools/.history/<tool>/`` (see :mod:`ego.learning.plan.history`) and then, for
a tool file whose name does not change, points the manifest at that kept copy before the live
file is replaced, so that whatever step a crash interrupts, the manifest names a file that
exists and holds the source that goes with its entry. :func:`restore_tool` brings a kept
version back with the same steps.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal, Protocol

from ..cases.verdict import GateReport
from ..catalog.manifest import load_manifest
from ..catalog.naming import check_site_id, check_tool_name, live_path
from ..catalog.registry import Learnings
from ..plan.draft import ToolDraft, merge_entry
from ..plan.history import (
    HISTORY_DIR,
    PYTHON_HISTORY_DIR,
    ToolVersion,
    archive_file,
    content_hash,
    fsync_dir,
    json_fields,
    keep_cases,
    load_version,
    tool_kind,
    write_atomic,
)
from ..plan.locks import site_lock
from ..plan.modes import folder_mode
from ..plan.save_plan import ToolPlan, validate_candidate, workspace_root

__all__ = [
    "SavedTool",
    "archive_old",
    "assemble_and_rename",
    "manifest_bytes",
    "overlay",
    "restore_tool",
    "write_tool",
]

_TMP_PREFIX = ".ego-saving-"


@dataclass(frozen=True)
class SavedTool:
    """What a browser tool save (or restore) did.

    Attributes:
        site_id, tool: what was saved.
        file: the tool file now in use.
        manifest: the manifest written.
        created_site: the site did not exist before.
        shadowed: the site existed only in the project; a workspace copy now shadows it.
        replaced: an earlier version of the tool was replaced.
        previous_version: the history id the replaced version was kept under (see
            ``ego history``), or None.
        hash: the first 12 hex digits of the saved source's SHA-256.
        unchanged: source and entry equal the current ones; nothing was written.
        try_result: what the try run returned, when there was one.
        changed: what the save changed in the tool (``"source"``, ``"args"``,
            ``"sideEffect"``, ...; see :attr:`ToolPlan.changed`); empty when unchanged.
        cases: the tool's offline cases the save gate ran against the new source, or None
            when the site has none for it (see :mod:`ego.learning.cases.gate`).
    """

    site_id: str
    tool: str
    file: Path
    manifest: Path
    created_site: bool
    shadowed: bool
    replaced: bool
    previous_version: str | None
    hash: str
    unchanged: bool = False
    try_result: Any = None
    changed: tuple[str, ...] = ()
    cases: GateReport | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready data (for the CLI and MCP): the fields, with paths as strings."""
        data = asdict(self, dict_factory=json_fields)
        data["cases"] = self.cases.as_dict() if self.cases is not None else None
        return data


def manifest_bytes(raw: dict[str, Any]) -> bytes:
    """A manifest as it is written: indented JSON, UTF-8, ending in a newline."""
    return (json.dumps(raw, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _is_history_path(path: str) -> bool:
    return path.startswith((HISTORY_DIR + "/", PYTHON_HISTORY_DIR + "/"))


def archive_old(
    site_dir: Path, tool: str, old_entry: Any, *, folder: Path | None = None
) -> ToolVersion | None:
    """Keep the tool's current version, unless there is none or it is a kept copy already."""
    if not isinstance(old_entry, dict) or not isinstance(old_entry.get("path"), str):
        return None
    if _is_history_path(old_entry["path"]):
        return None
    old_file = site_dir / old_entry["path"]
    if not old_file.is_file():
        return None
    return archive_file(site_dir, tool, old_file, dict(old_entry), folder=folder)


def assemble_and_rename(
    site_id: str, workspace: Path, base_dir: Path | None, fill: Callable[[Path], None]
) -> Path:
    """Build a site in a hidden folder of ``workspace`` and rename it into place atomically.

    Args:
        site_id: the site; it ends up in ``workspace / site_id``, which must not exist.
        workspace: the workspace learnings root.
        base_dir: a site folder to start from (copied), or None to start empty.
        fill: writes the save's files into the hidden folder it is given.

    Returns:
        The site folder now in place.

    Raises:
        OSError: a write failed, or the site folder appeared meanwhile
            (``FileExistsError``); the hidden folder is removed.
    """
    workspace.mkdir(parents=True, exist_ok=True)
    target = workspace / site_id
    staging = Path(tempfile.mkdtemp(prefix=f"{_TMP_PREFIX}{site_id}-", dir=workspace))
    try:
        if base_dir is not None:
            staging.rmdir()
            shutil.copytree(base_dir, staging, symlinks=True)
        os.chmod(staging, folder_mode())
        fill(staging)
        if target.exists():
            raise FileExistsError(f"{target} appeared while saving; save again")
        os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    fsync_dir(target.parent)
    return target


def _current_entry(raw: dict[str, Any], tool: str) -> Any:
    tools = raw.get("browserTools")
    return tools.get(tool) if isinstance(tools, dict) else None


class SitePlan(Protocol):
    """What writing a planned save needs to know of it, whatever kind of tool it saves."""

    @property
    def site_id(self) -> str: ...
    @property
    def tool(self) -> str: ...
    @property
    def entry(self) -> dict[str, Any]: ...
    @property
    def manifest(self) -> dict[str, Any]: ...
    @property
    def base(self) -> Literal["new", "project", "workspace"]: ...
    @property
    def base_dir(self) -> Path | None: ...
    @property
    def workspace(self) -> Path: ...


def create_workspace_site(
    plan: SitePlan,
    data: bytes,
    tools_key: str,
    *,
    before: Callable[[Path], None] | None = None,
) -> SavedTool | None:
    """Write the save of a tool whose site is new, or only in another root (then copied), as
    a workspace site assembled in a hidden folder and renamed into place: the copied site's
    version of the tool kept in the history, ``before`` (what else the save keeps, given the
    hidden folder), then the tool's file ``data`` and the manifest.

    Args:
        plan: the checked save; its ``base`` is ``"new"`` or ``"project"``.
        data: the tool's file.
        tools_key: the manifest's key of the tool's kind (``browserTools``, ``pythonTools``).
        before: writes more into the hidden folder before the tool's file goes in.

    Returns:
        What was written, or None when another save created the workspace site meanwhile
        (nothing was written: add the tool to that site).

    Raises:
        OSError: a write failed; nothing is in place.
    """
    live = plan.entry["path"]
    kept: list[ToolVersion] = []

    def fill(staging: Path) -> None:
        if plan.base == "project":
            raw = json.loads((staging / "manifest.json").read_text(encoding="utf-8"))
            tools = raw.get(tools_key)
            old = tools.get(plan.tool) if isinstance(tools, dict) else None
            previous = archive_old(staging, plan.tool, old)
            if previous is not None:
                kept.append(previous)
        if before is not None:
            before(staging)
        write_atomic(staging / live, data)
        write_atomic(staging / "manifest.json", manifest_bytes(plan.manifest))

    try:
        target = assemble_and_rename(plan.site_id, plan.workspace, plan.base_dir, fill)
    except OSError:
        if not (plan.workspace / plan.site_id / "manifest.json").is_file():
            raise
        return None  # another save created the workspace site meanwhile
    return SavedTool(
        site_id=plan.site_id,
        tool=plan.tool,
        file=target / live,
        manifest=target / "manifest.json",
        created_site=plan.base == "new",
        shadowed=plan.base == "project",
        replaced=bool(kept),
        previous_version=kept[0].version if kept else None,
        hash=content_hash(data),
    )


def write_tool(plan: ToolPlan, *, cases: GateReport | None = None) -> SavedTool:
    """Write a planned browser tool save. Call only after every check passed.

    A new site, or the workspace copy of a project site, is assembled in a hidden folder of
    the workspace and renamed into place. In a workspace site, the current version is kept in
    the history, the manifest is pointed at that kept copy when the live file name is reused,
    the live file is replaced, and then the manifest is replaced: each step is one
    ``os.replace``, and after any of them the manifest names an existing file holding the
    source that belongs to its entry.

    Holds the site's lock (:func:`~ego.learning.plan.locks.site_lock`) throughout, and reads the
    workspace site again under it, so concurrent saves of different tools all stay.

    Args:
        plan: the checked save.
        cases: what the save gate found; kept in the tool's history beside the new version
            (before its source goes live) when something is written.

    Raises:
        SiteBusyError: another save kept the site's lock too long; nothing was written.
        OSError: a write failed; the site is left consistent (see above).
    """
    data = plan.source.encode("utf-8")
    if plan.base == "project" and plan.base_dir is not None:
        unchanged = _unchanged(plan.base_dir, plan.tool, data, plan.manifest)
        if unchanged is not None:
            return unchanged  # the built-in version already is this: no copy, no workspace
    with site_lock(plan.workspace, plan.site_id):
        return replace(_write_tool(plan, data, cases), cases=cases)


def _write_tool(plan: ToolPlan, data: bytes, cases: GateReport | None) -> SavedTool:
    workspace_dir = plan.workspace / plan.site_id
    if plan.base in ("new", "project") and not workspace_dir.is_dir():

        def keep(staging: Path) -> None:
            if cases is not None:
                keep_cases(staging, plan.tool, content_hash(data), cases.as_dict())

        created = create_workspace_site(plan, data, "browserTools", before=keep)
        if created is not None:
            return created
    return _replace_in_workspace(
        workspace_dir, plan.site_id, plan.tool, data, plan.manifest, draft=plan.draft, cases=cases
    )


def _unchanged(
    site_dir: Path, tool: str, data: bytes, manifest: dict[str, Any]
) -> SavedTool | None:
    """A SavedTool saying "nothing to do" when ``site_dir`` already holds this very tool."""
    manifest_path = site_dir / "manifest.json"
    try:
        current = json.loads(manifest_path.read_text(encoding="utf-8"))
        entry = _current_entry(current, tool)
        if not isinstance(entry, dict) or current != manifest:
            return None
        file = site_dir / str(entry.get("path"))
        if file.read_bytes() != data:
            return None
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return SavedTool(
        site_id=site_dir.name,
        tool=tool,
        file=file,
        manifest=manifest_path,
        created_site=False,
        shadowed=False,
        replaced=False,
        previous_version=None,
        hash=content_hash(data),
        unchanged=True,
    )


def overlay(current: dict[str, Any], planned: dict[str, Any]) -> dict[str, Any]:
    """``current`` (as on disk now) with the site-level keys a save may change from ``planned``."""
    merged = copy.deepcopy(current)
    for key in ("name", "domains"):
        if key in planned:
            merged[key] = copy.deepcopy(planned[key])
    return merged


def _replace_in_workspace(
    site_dir: Path,
    site_id: str,
    tool: str,
    data: bytes,
    manifest: dict[str, Any],
    *,
    draft: ToolDraft | None = None,
    cases: GateReport | None = None,
) -> SavedTool:
    manifest_path = site_dir / "manifest.json"
    # Read now, not at planning time: the site may have changed while the browser checked,
    # and what the draft names is merged into the entry as it is now.
    current = json.loads(manifest_path.read_text(encoding="utf-8"))
    old_entry = _current_entry(current, tool)
    new_entry = manifest["browserTools"][tool]
    if draft is not None:
        new_entry = merge_entry(old_entry, draft)
    live = new_entry["path"]
    merged = overlay(current, manifest)
    tools = dict(merged.get("browserTools") or {})
    tools[tool] = new_entry
    merged["browserTools"] = tools
    if merged != manifest:
        validate_candidate(site_id, tool, merged)
    if merged == current:
        unchanged = _unchanged(site_dir, tool, data, merged)
        if unchanged is not None:
            return unchanged
    previous = archive_old(site_dir, tool, old_entry)
    if previous is not None and isinstance(old_entry, dict) and old_entry.get("path") == live:
        # Point the manifest at the kept copy, so that replacing the live file below never
        # leaves the old entry naming the new source.
        pinned = copy.deepcopy(current)
        pinned_tools = dict(pinned["browserTools"])
        pinned_tools[tool] = {**old_entry, "path": previous.file.relative_to(site_dir).as_posix()}
        pinned["browserTools"] = pinned_tools
        write_atomic(manifest_path, manifest_bytes(pinned))
    if cases is not None:
        keep_cases(site_dir, tool, content_hash(data), cases.as_dict())
    write_atomic(site_dir / live, data)
    write_atomic(manifest_path, manifest_bytes(merged))
    return SavedTool(
        site_id=site_id,
        tool=tool,
        file=site_dir / live,
        manifest=manifest_path,
        created_site=False,
        shadowed=False,
        replaced=previous is not None or isinstance(old_entry, dict),
        previous_version=previous.version if previous is not None else None,
        hash=content_hash(data),
    )


def restore_tool(learnings: Learnings, site_id: str, tool: str, version: str) -> SavedTool:
    """Bring back a kept version of a tool; the current one is kept as a new version.

    The kept source and manifest entry are written back (the entry's path becomes
    ``browser-tools/<tool>.js``, a Python tool's ``tools/<tool>.py``) with the same atomic
    steps as a save.

    Args:
        learnings: the roots; the site must be in their workspace root.
        site_id, tool: the tool.
        version: a version id from ``ego history`` (or a unique prefix of an id or hash).

    Raises:
        WorkspaceRequiredError: no workspace root.
        UnknownVersionError: no such kept version (the message lists them).
        InvalidManifestError: the workspace site's manifest is broken (fix it first).
        SaveRefusedError: the restored manifest would be invalid.
        SiteBusyError: another save kept the site's lock too long; nothing was written.
        OSError: the write failed (the site stays consistent).
    """
    root = workspace_root(learnings)
    check_site_id(site_id, name=tool)
    check_tool_name(site_id, tool)
    site_dir = root / site_id
    python = tool_kind(site_dir, tool) == "python"
    with site_lock(root, site_id):
        kept = load_version(Learnings(roots=[root]), site_id, tool, version)
        data = kept.file.read_bytes()
        load_manifest(site_dir)  # a broken manifest is reported, not overwritten
        raw = json.loads((site_dir / "manifest.json").read_text(encoding="utf-8"))
        if python:
            from .python_tool import python_path, replace_in_site  # it writes through here

            entry = {**kept.entry, "path": python_path(tool)}
            return replace_in_site(site_dir, site_id, tool, data, raw, entry)
        entry = {**kept.entry, "path": live_path(tool)}
        tools = dict(raw.get("browserTools") or {})
        tools[tool] = entry
        raw["browserTools"] = tools
        validate_candidate(site_id, tool, raw)
        return _replace_in_workspace(site_dir, site_id, tool, data, raw)
