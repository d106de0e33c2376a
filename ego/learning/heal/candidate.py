"""What ``ego heal`` keeps between its steps, in the workspace's ``learnings/.heal/<site>/<tool>/``
(a dot folder: never a site, never live)::

    report.json      the heal report (:class:`HealReport`)
    candidate.js     the candidate version: proposed by heal, or a copy for the agent to edit
    candidate.py     a tool drafted from page actions: the candidate with its broken step
                     healed (:mod:`.action_candidate`), when heal found the element to use
    live.har         the live run's recording (the candidate's, for a candidate.py)
    new-case.json    the case built from it (``har`` names ``live.har``)
    check.json       the last ``--check`` (:class:`HealCheck`)

``--promote`` saves the candidate and removes the folder.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final

from ...errors import LearningError
from ..catalog.naming import check_site_id, check_tool_name
from ..catalog.registry import Learnings
from ..plan.history import write_atomic
from ..plan.save_plan import workspace_root

__all__ = [
    "CANDIDATE_JS",
    "CANDIDATE_PY",
    "HEAL_DIR",
    "CaseOutcome",
    "HealCheck",
    "HealReport",
    "heal_folder",
    "read_json",
    "remove_heal",
    "write_json",
]

#: Where the workspace keeps heal reports and candidates, relative to its learnings root.
HEAL_DIR: Final = ".heal"
#: The candidate of a browser tool, and of a Python tool (drafted from page actions).
CANDIDATE_JS: Final = "candidate.js"
CANDIDATE_PY: Final = "candidate.py"


def heal_folder(learnings: Learnings, site_id: str, tool: str) -> Path:
    """``<workspace>/learnings/.heal/<site_id>/<tool>``.

    Raises:
        WorkspaceRequiredError: no workspace.
        SaveRefusedError: the site id or tool name is not valid.
    """
    check_site_id(site_id, name=tool)
    check_tool_name(site_id, tool)
    return workspace_root(learnings) / HEAL_DIR / site_id / tool


def write_json(path: Path, value: Any) -> None:
    """Write ``value`` as indented JSON, atomically."""
    write_atomic(path, (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode())


def read_json(path: Path, site_id: str, tool: str) -> Any:
    """Read a file of the heal folder.

    Raises:
        LearningError: it is missing (no heal was run) or unreadable.
    """
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise LearningError(
            f"no heal candidate for {site_id}/{tool} ({path.name} missing): run "
            f"`ego heal {site_id} {tool}` first"
        ) from None


def remove_heal(folder: Path) -> None:
    """Remove a heal folder (after a promotion)."""
    shutil.rmtree(folder, ignore_errors=True)
    parent = folder.parent
    if parent.is_dir() and not any(parent.iterdir()):
        parent.rmdir()


@dataclass
class CaseOutcome:
    """How one case went, as a heal step reports it.

    Attributes:
        name: the case.
        passed: it passed.
        kind: why not: the error kind (``SKILL_BROKEN``, ``NEEDS_LOGIN``, ``TOOL_ERROR``,
            ``TIMEOUT``...), ``"changed result"`` (the tool returned something else) or
            ``"unmatched request"``; "" when it passed.
        reason: the case's own reason.
    """

    name: str
    passed: bool
    kind: str = ""
    reason: str = ""


@dataclass
class HealReport:
    """What ``ego heal`` found for one tool.

    Attributes:
        site_id, tool: the tool.
        version: its current version's hash.
        cases: its offline cases, run with the current version.
        live: the live run: ``url``, ``ran`` (False for an irreversible tool without
            confirmation), ``ok``, ``error_kind``, ``error``, ``requests`` (the tool's).
        changes: what changed between the recorded exchanges and the live ones.
        proposal: for an API tool whose endpoint moved, the endpoint proposed (``from``,
            ``to``, ``score``), else None.
        candidate: ``"proposed"`` (heal rewrote the tool), ``"copy"`` (the current source,
            for the agent to edit) or ``"none"`` (a Python tool heal found nothing to change
            in: edit its file).
        file: the candidate's file name in ``folder``.
        candidate_live: a Python candidate's live run (``url``, ``ok``, ``result``,
            ``error_kind``, ``error``), when it ran.
        folder: where the report, the candidate and the live recording are.
        notes: what a reader should know (cases missing, a live run skipped).
    """

    site_id: str
    tool: str
    version: str = ""
    cases: list[CaseOutcome] = field(default_factory=list)
    live: dict[str, Any] = field(default_factory=dict)
    changes: list[dict[str, Any]] = field(default_factory=list)
    proposal: dict[str, Any] | None = None
    candidate: str = "copy"
    file: str = CANDIDATE_JS
    candidate_live: dict[str, Any] = field(default_factory=dict)
    folder: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def failing(self) -> list[CaseOutcome]:
        """The offline cases the current version fails."""
        return [case for case in self.cases if not case.passed]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HealReport:
        """A report read back from ``report.json``."""
        cases = [CaseOutcome(**case) for case in data.get("cases", [])]
        return cls(**{**data, "cases": cases})

    def format(self) -> str:
        """A few lines for a person."""
        lines = [f"heal {self.site_id}/{self.tool} (version {self.version}):"]
        passed = sum(case.passed for case in self.cases)
        lines.append(f"  offline cases: {passed} of {len(self.cases)} pass")
        lines += [f"    failing: {c.name} ({c.kind}): {c.reason}" for c in self.failing]
        live = self.live
        if live.get("ran"):
            outcome = "ok" if live.get("ok") else f"{live.get('error_kind')}: {live.get('error')}"
            lines.append(f"  live run on {live.get('url')}: {outcome}")
        lines += [f"  changed: {c['kind']}: {c['detail']}" for c in self.changes]
        if self.proposal:
            lines.append(
                f"  proposed endpoint: {self.proposal['to']} for {self.proposal['from']} "
                f"(shape match {self.proposal['score']:.0%})"
            )
        if self.candidate == "none":
            lines.append("  no candidate: edit the tool's file")
        else:
            what = {
                "proposed": "a candidate with the proposal applied",
                "copy": "a copy of the current source to edit",
            }[self.candidate]
            lines.append(f"  {what}: {self.folder}/{self.file}")
        tried = self.candidate_live
        if tried:
            outcome = (
                "ok" if tried.get("ok") else f"{tried.get('error_kind')}: {tried.get('error')}"
            )
            lines.append(f"  the candidate's live run on {tried.get('url')}: {outcome}")
        lines += [f"  note: {note}" for note in self.notes]
        if self.candidate != "none":
            lines.append(f"  next: `ego heal {self.site_id} {self.tool} --check`, then --promote")
        return "\n".join(lines)


@dataclass
class HealCheck:
    """A candidate run against the tool's old cases and the live recording's new case.

    Attributes:
        site_id, tool: the tool.
        old: each old case.
        new: the new case (None when the heal had no live recording to build it from).
        changed: old cases whose result the candidate changes (it returned something else).
        results: the candidate's result per case name, where it returned one.
    """

    site_id: str
    tool: str
    old: list[CaseOutcome] = field(default_factory=list)
    new: CaseOutcome | None = None
    changed: list[str] = field(default_factory=list)
    results: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        """Every old case and the new one pass."""
        return all(c.passed for c in self.old) and (self.new is None or self.new.passed)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (results left out: they may be large)."""
        data = asdict(self)
        data.pop("results")
        data["passed"] = self.passed
        return data

    def format(self) -> str:
        """A few lines for a person."""
        lines = [f"candidate of {self.site_id}/{self.tool}:"]
        for case in self.old:
            mark = "pass" if case.passed else f"FAIL ({case.kind})"
            lines.append(
                f"  old case {case.name}: {mark}{'' if case.passed else ': ' + case.reason}"
            )
        if self.new is not None:
            mark = "pass" if self.new.passed else f"FAIL ({self.new.kind}): {self.new.reason}"
            lines.append(f"  new case {self.new.name}: {mark}")
        if self.changed:
            lines.append(
                "  changes the expected result of: "
                + ", ".join(self.changed)
                + " (promote refuses unless --accept-changed-cases names them)"
            )
        lines.append("  all pass: promote with --promote" if self.passed else "  not all pass")
        return "\n".join(lines)
