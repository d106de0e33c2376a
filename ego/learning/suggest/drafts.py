"""Drafted tools on disk, beside the site's tools but never live: the workspace's
``learnings/.drafts/<site>/``.

A folder whose name starts with a dot is no site (no manifest is read from it), so a draft
is never listed by ``learn_context`` nor run until it is saved. Each draft has a folder of
its own, written whole and renamed into place (a new suggestion of the same tool replaces
it)::

    .drafts/<site>/manifest.json        a site with no learning yet: the drafted manifest
    .drafts/<site>/<tool>/draft.json    the manifest entry and the evidence (endpoint, calls)
    .drafts/<site>/<tool>/<tool>.js     the source (<tool>.py for a tool drafted from page actions)
    .drafts/<site>/<tool>/tests/cases.json  its offline cases, as a site keeps them
    .drafts/<site>/<tool>/tests/*.har   the HAR each case replays

Saving a draft (``Site.save_draft``) puts its cases and HARs into the site's ``tests/``
(:func:`install_cases`) once the tool is kept, and removes the draft.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, Literal

from ...errors import LearningError
from ..cases.format import CASES_FILE, LearningCase, load_cases
from ..catalog.naming import check_site_id, check_tool_name
from ..catalog.registry import Learnings, SiteEntry
from ..plan.draft import FrontEnd, ToolDraft
from ..plan.history import write_atomic
from ..plan.locks import site_lock
from ..plan.save_plan import workspace_root
from .drafting import SuggestReport

__all__ = [
    "DRAFTS_DIR",
    "Draft",
    "SiteSoFar",
    "drafts_folder",
    "install_cases",
    "list_drafts",
    "load_draft",
    "remove_draft",
    "write_drafts",
]

#: Where the workspace keeps drafts, relative to its learnings root.
DRAFTS_DIR: Final = ".drafts"


def drafts_folder(learnings: Learnings, site_id: str) -> Path:
    """``<workspace>/learnings/.drafts/<site_id>``.

    Raises:
        WorkspaceRequiredError: no workspace.
    """
    return workspace_root(learnings) / DRAFTS_DIR / site_id


def _json_bytes(value: Any) -> bytes:
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def write_drafts(learnings: Learnings, report: SuggestReport) -> Path:
    """Write every draft of ``report`` (and a new site's manifest) under the site's drafts
    folder; a draft of the same tool is replaced. Sets ``report.drafts_dir``.

    Raises:
        WorkspaceRequiredError: no workspace.
        OSError: a write failed (a draft is written whole or not at all).
    """
    folder = drafts_folder(learnings, report.site_id)
    folder.mkdir(parents=True, exist_ok=True)
    if report.manifest is not None:
        write_atomic(folder / "manifest.json", _json_bytes(report.manifest))
    now = datetime.now(UTC).isoformat(timespec="seconds")
    for draft in report.drafts:
        staging = Path(tempfile.mkdtemp(prefix=f".{draft.tool}-", dir=folder))
        try:
            record = {
                "tool": draft.tool,
                "kind": draft.kind,
                "drafted_at": now,
                "entry": draft.entry(),
                "evidence": draft.as_dict(),
                "hars": [str(p) for p in report.hars],
            }
            (staging / "draft.json").write_bytes(_json_bytes(record))
            (staging / draft.file_name).write_text(draft.source, encoding="utf-8")
            (staging / "tests").mkdir()
            for case in draft.cases:
                case.har.save(staging / "tests" / case.har_name)
            cases = {"cases": [case.case for case in draft.cases]}
            (staging / CASES_FILE).write_bytes(_json_bytes(cases))
            target = folder / draft.tool
            if target.exists():
                shutil.rmtree(target)
            staging.rename(target)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    report.drafts_dir = folder
    return folder


@dataclass(frozen=True)
class Draft:
    """A drafted tool read back from disk.

    Attributes:
        site_id, tool: what it would be saved as.
        folder: its folder.
        entry: the manifest entry it proposes (description, args, returns, side effect,
            auth).
        source: its JavaScript.
        cases: its offline cases, as ``cases.json`` holds them (``har`` names a file of
            its ``tests/``).
        manifest: the drafted manifest of a site that has no learning yet, else None.
        evidence: what it was drafted from (endpoint, calls, constants, notes).
        kind: ``"browser"``, or ``"python"`` for a tool drafted from page actions (its
            source is ``<tool>.py``).
    """

    site_id: str
    tool: str
    folder: Path
    entry: dict[str, Any]
    source: str
    cases: list[dict[str, Any]] = field(default_factory=list)
    manifest: dict[str, Any] | None = None
    evidence: dict[str, Any] = field(default_factory=dict)
    kind: str = "browser"

    @property
    def source_file(self) -> Path:
        """Its source file in the draft's folder."""
        return self.folder / f"{self.tool}{'.py' if self.kind == 'python' else '.js'}"

    def tool_draft(
        self,
        *,
        description: str | None = None,
        side_effect: Literal["read", "write", "irreversible"] | None = None,
        name: str | None = None,
        front_end: FrontEnd = "python",
    ) -> ToolDraft:
        """What a save of this draft names: its entry, with ``description``, ``side_effect``
        and a new site's ``name`` given instead of the drafted ones, and for a site that has
        no learning yet the drafted domains and name."""
        entry = self.entry
        manifest = self.manifest
        return ToolDraft(
            site_id=self.site_id,
            tool=self.tool,
            source=self.source,
            description=description or entry.get("description"),
            args=entry.get("args") or {},
            returns=entry.get("returns"),
            side_effect=side_effect or entry.get("sideEffect"),
            auth=entry.get("auth"),
            domains=list(manifest["domains"]) if manifest else None,
            name=name or (manifest.get("name") if manifest else None),
            front_end=front_end,
        )

    @property
    def start_url(self) -> str | None:
        """A new site's drafted start URL (None when the site has a learning already)."""
        return self.manifest.get("startUrl") if self.manifest else None

    def learning_cases(self) -> list[LearningCase]:
        """Its cases, ready to run (each HAR path resolved inside the draft's folder)."""
        return load_cases(SiteEntry(self.site_id, self.folder.parent, self.folder, None, None))

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready summary."""
        return {
            "site_id": self.site_id,
            "tool": self.tool,
            "folder": str(self.folder),
            "entry": self.entry,
            "cases": [case.get("name") for case in self.cases],
            "new_site": self.manifest is not None,
            "kind": self.kind,
            "evidence": self.evidence,
        }


def load_draft(learnings: Learnings, site_id: str, tool: str) -> Draft:
    """The draft of ``tool`` for ``site_id``.

    Raises:
        SaveRefusedError: the site id or tool name is not valid.
        WorkspaceRequiredError: no workspace.
        LearningError: there is no such draft (the message lists the site's drafts).
    """
    check_site_id(site_id, name=tool)
    check_tool_name(site_id, tool)
    folder = drafts_folder(learnings, site_id)
    record_file = folder / tool / "draft.json"
    try:
        record = json.loads(record_file.read_text(encoding="utf-8"))
        kind = "python" if record.get("kind") == "python" else "browser"
        suffix = ".py" if kind == "python" else ".js"
        source = (folder / tool / f"{tool}{suffix}").read_text(encoding="utf-8")
        cases = json.loads((folder / tool / CASES_FILE).read_text(encoding="utf-8"))["cases"]
    except (OSError, ValueError, KeyError, TypeError):
        listed = ", ".join(d.tool for d in list_drafts(learnings, site_id)) or "none"
        raise LearningError(
            f"no draft {tool!r} for site {site_id!r} (drafts: {listed}); "
            f"`ego suggest {site_id} --har FILE` drafts tools from a recording"
        ) from None
    manifest = None
    if (folder / "manifest.json").is_file():
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    return Draft(
        site_id,
        tool,
        folder / tool,
        dict(record.get("entry") or {}),
        source,
        list(cases),
        manifest,
        dict(record.get("evidence") or {}),
        kind,
    )


def list_drafts(learnings: Learnings, site_id: str) -> list[Draft]:
    """Every draft of ``site_id``, by tool name (unreadable ones left out)."""
    try:
        folder = drafts_folder(learnings, site_id)
    except LearningError:
        return []
    found = []
    for child in sorted(folder.iterdir()) if folder.is_dir() else []:
        if child.is_dir() and not child.name.startswith(".") and (child / "draft.json").is_file():
            try:
                found.append(load_draft(learnings, site_id, child.name))
            except LearningError:
                continue
    return found


def remove_draft(draft: Draft) -> None:
    """Delete a draft (after its save); a new site's drafted manifest goes with the last."""
    shutil.rmtree(draft.folder, ignore_errors=True)
    site_folder = draft.folder.parent
    if not any(child.is_dir() for child in site_folder.iterdir()):
        shutil.rmtree(site_folder, ignore_errors=True)


def install_cases(
    learnings: Learnings, site_id: str, cases: list[tuple[dict[str, Any], Path]]
) -> Path:
    """Add ``cases`` to the workspace site's ``tests/cases.json``, each with its HAR copied
    into ``tests/``; a case of the same name is replaced.

    Args:
        learnings: the roots (the site is the workspace's).
        site_id: the site.
        cases: each case (``har`` naming its file in ``tests/``) and the HAR file to copy.

    Returns:
        The cases file.

    Raises:
        OSError: a write failed.
        ValueError: the site's ``cases.json`` is not a JSON object with ``cases``.
    """
    site_dir = workspace_root(learnings) / site_id
    file = site_dir / CASES_FILE
    with site_lock(site_dir.parent, site_id):
        data: dict[str, Any] = {"cases": []}
        if file.is_file():
            data = json.loads(file.read_text(encoding="utf-8"))
            if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
                raise ValueError(f"{file}: not a cases file (an object with 'cases')")
        for case, har in cases:
            target = file.parent / str(case["har"])
            if not target.exists() or target.read_bytes() != har.read_bytes():
                write_atomic(target, har.read_bytes())
            data["cases"] = [c for c in data["cases"] if c.get("name") != case["name"]]
            data["cases"].append(case)
        write_atomic(file, _json_bytes(data))
    return file


@dataclass(frozen=True)
class SiteSoFar:
    """What drafting for a site needs to know of it: where to write, the site's domains
    (None for a site with no learning yet: a manifest is drafted) and the names its tools
    already take."""

    learnings: Learnings
    domains: list[str] | None
    tools: frozenset[str]

    @classmethod
    def of(
        cls,
        site_id: str,
        learnings: Learnings | None,
        workspace: str | os.PathLike[str] | None,
    ) -> SiteSoFar:
        """The site as ``learnings`` (by default the workspace's and the project's) has it."""
        if learnings is None:
            learnings = Learnings(workspace=Path(workspace).expanduser() if workspace else None)
        try:
            manifest = learnings.site(site_id)
        except LearningError:
            return cls(learnings, None, frozenset())
        tools = frozenset(manifest.browser_tools) | frozenset(manifest.python_tools)
        return cls(learnings, list(manifest.domains), tools)
