"""Saving a Python tool (a ``run(ctx, args)`` drafted from page actions): planned with the same
checks as a browser tool save where they apply, and written the same way.

:func:`plan_python_tool` checks what needs no browser (the names, the source parses and
defines ``run``, the args and returns schemas, the manifest the save would leave) and
:func:`write_python_tool` writes ``tools/<tool>.py`` and the manifest's ``pythonTools`` entry
under the site's lock: a new site (or the workspace copy of a project site) assembled in a
hidden folder and renamed into place, else the file then the manifest, each replaced
atomically. The gate between them (the draft's cases, a heal's old cases) is the site's
(:meth:`ego.site.Site.save_draft`, :meth:`~ego.site.Site.promote_candidate`). The version a
save replaces is kept in ``tools/.history/<tool>/`` first, as a browser tool's is
(:mod:`ego.learning.plan.history`; ``ego history`` lists them).
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..catalog.manifest import Manifest
from ..catalog.naming import check_site_id, check_tool_name, refuse
from ..catalog.registry import Learnings
from ..plan.draft import ToolDraft
from ..plan.history import content_hash, write_atomic
from ..plan.locks import site_lock
from ..plan.save_plan import (
    check_schemas,
    find_base,
    manifest_with_tool,
    validate_candidate,
    workspace_root,
)
from .store import SavedTool, archive_old, create_workspace_site, manifest_bytes, overlay

__all__ = [
    "PythonPlan",
    "plan_python_tool",
    "python_path",
    "replace_in_site",
    "write_python_tool",
]


def python_path(tool: str) -> str:
    """Where a saved Python tool lives in its site folder."""
    return f"tools/{tool}.py"


@dataclass(frozen=True)
class PythonPlan:
    """A Python tool save that passed every check that needs no browser.

    Attributes:
        site_id, tool: what is saved.
        source: the file's text.
        entry: the manifest entry to write.
        manifest: the whole manifest to write (raw JSON data).
        parsed: ``manifest`` parsed and validated.
        base: ``"new"``, ``"project"`` or ``"workspace"`` (as a browser tool's plan).
        base_dir: the site folder that exists now (None for a new site).
        workspace: the workspace learnings root.
    """

    site_id: str
    tool: str
    source: str
    entry: dict[str, Any]
    manifest: dict[str, Any]
    parsed: Manifest
    base: Literal["new", "project", "workspace"]
    base_dir: Path | None
    workspace: Path


def _check_source(site_id: str, tool: str, source: str) -> None:
    try:
        tree = ast.parse(source, filename=f"{tool}.py")
    except SyntaxError as exc:
        raise refuse(site_id, tool, "syntax", [f"line {exc.lineno}: {exc.msg}"]) from None
    if not any(
        isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == "run"
        for node in tree.body
    ):
        raise refuse(site_id, tool, "source", ["the source defines no run(ctx, args)"])


def plan_python_tool(
    learnings: Learnings, draft: ToolDraft, *, page_url: str | None = None
) -> PythonPlan:
    """Check a Python tool save as far as possible without a browser, and plan its writes.

    Args:
        learnings: the roots; the save goes to their workspace root.
        draft: what to save (``source`` is the Python file's text).
        page_url: a new site's start URL (and its domain when ``draft.domains`` is None).

    Raises:
        WorkspaceRequiredError: no workspace root.
        SaveRefusedError: a check failed (``reason`` says which: ``"syntax"`` or
            ``"source"`` for the file, ``"name"`` when the site has a browser tool of that
            name, as a browser tool save for the others).
    """
    site_id, tool = draft.site_id, draft.tool
    check_site_id(site_id, name=str(tool))
    check_tool_name(site_id, tool)
    _check_source(site_id, tool, draft.source)
    check_schemas(draft)
    base = find_base(learnings, site_id, tool)
    raw, _, entry = manifest_with_tool(
        base, draft, page_url=page_url, kind="python", path=python_path(tool)
    )
    parsed = validate_candidate(site_id, tool, raw)
    return PythonPlan(
        site_id=site_id,
        tool=tool,
        source=draft.source,
        entry=entry,
        manifest=raw,
        parsed=parsed,
        base=base.kind,
        base_dir=base.directory,
        workspace=workspace_root(learnings),
    )


def write_python_tool(plan: PythonPlan) -> SavedTool:
    """Write a planned Python tool save (see the module docstring). Call only after every
    check passed.

    Raises:
        SiteBusyError: another save kept the site's lock too long; nothing was written.
        SaveRefusedError: the site's manifest, as it is now, would be invalid with the tool.
        OSError: a write failed; the site is left consistent.
    """
    data = plan.source.encode("utf-8")
    site_dir = plan.workspace / plan.site_id
    with site_lock(plan.workspace, plan.site_id):
        if plan.base in ("new", "project") and not site_dir.is_dir():
            created = create_workspace_site(plan, data, "pythonTools")
            if created is not None:
                return created
        # Read now, under the lock: a save that raced this one keeps its changes.
        current = json.loads((site_dir / "manifest.json").read_text(encoding="utf-8"))
        return replace_in_site(
            site_dir, plan.site_id, plan.tool, data, overlay(current, plan.manifest), plan.entry
        )


def replace_in_site(
    site_dir: Path,
    site_id: str,
    tool: str,
    data: bytes,
    raw: dict[str, Any],
    entry: dict[str, Any],
) -> SavedTool:
    """Put ``entry`` and its source ``data`` into the workspace site's manifest ``raw`` (as it
    is now, read under the lock): validated, the current version kept in the history, then
    the file and the manifest written (a save, and a restore of a kept version:
    :func:`ego.learning.save.store.restore_tool`)."""
    tools = dict(raw.get("pythonTools") or {})
    old = tools.get(tool)
    tools[tool] = entry
    raw = {**raw, "pythonTools": tools}
    validate_candidate(site_id, tool, raw)
    previous = archive_old(site_dir, tool, old)
    write_atomic(site_dir / entry["path"], data)
    write_atomic(site_dir / "manifest.json", manifest_bytes(raw))
    return SavedTool(
        site_id=site_id,
        tool=tool,
        file=site_dir / entry["path"],
        manifest=site_dir / "manifest.json",
        created_site=False,
        shadowed=False,
        replaced=old is not None,
        previous_version=previous.version if previous is not None else None,
        hash=content_hash(data),
    )
