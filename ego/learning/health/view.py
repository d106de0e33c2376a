"""A tool's health, as ``learn_context``, ``ego tools``, ``ego sites``, MCP and ``ego health``
show it: the record of its current version, and whether that version is suspect.

A version is **suspect** when its latest :data:`SUSPECT_AFTER` counted runs all failed; one
``OK`` run clears it. Runs that signalled NEEDS_LOGIN or were refused for want of a
confirmation are counted apart (``needs_login``, ``confirmation_required``) and never make a
tool suspect; nor do runs that failed for the site, the network or the tab
(``site_failures``: the site unreachable, its page not loaded, the tab closed), and when the
latest run found the site unreachable the health says so (``unreachable``). A suspect
version names the earlier version (by its history id) that passed most recently, so an agent
can restore it. Each version has a record of its own: a new version starts at zero, the old
ones stay readable, and a restored version gets its record back (the record is keyed by the
version hash, see :mod:`.versions`).

Every reader here first waits for this process's writer (:func:`~.recorder.flush`), so a
run is visible as soon as the call that made it returned.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable, Sequence
from datetime import UTC, datetime
from typing import Final

from pydantic import BaseModel, Field

from ...errors import LearningError
from ..catalog.manifest import Manifest, ToolSpec
from ..catalog.registry import Learnings, SiteEntry
from ..plan.history import ToolVersion, list_versions
from .outcomes import (
    CONFIRMATION_REQUIRED,
    NEEDS_LOGIN,
    NOT_RUN,
    OK,
    SITE_FAILURES,
    SITE_UNREACHABLE,
    UNCOUNTED,
)
from .recorder import flush
from .store import Key, Run, VersionRecord, read_records, recorded_tools, store_path
from .versions import kept_version, tool_version

__all__ = [
    "READ_FLUSH_SECONDS",
    "SUSPECT_AFTER",
    "Failure",
    "RunInfo",
    "ToolHealth",
    "VersionHealth",
    "current_health",
    "health_for",
    "health_of",
    "health_table",
    "ran_tools",
    "site_health",
    "tool_health",
]

logger = logging.getLogger("ego.health")

#: Counted runs in a row that must all have failed for a version to be suspect.
SUSPECT_AFTER: Final = 3
#: Seconds a reader waits for this process's writer before it reads what is on disk: a
#: store another process keeps locked must not hold up ``learn_context`` for long.
READ_FLUSH_SECONDS: Final = 1.0


class Failure(BaseModel):
    """The latest failure of a version."""

    kind: str = Field(description="SKILL_BROKEN, RETURNS_MISMATCH, JS_ERROR, TIMEOUT, ...")
    message: str
    at: str = Field(description="When, ISO 8601 UTC.")


class RunInfo(BaseModel):
    """One recorded run (``ego health --json`` lists the latest of each version)."""

    outcome: str
    message: str
    at: str
    seconds: float
    front_end: str


class ToolHealth(BaseModel):
    """The record of one tool version.

    Attributes:
        version: the version hash the record belongs to (the cache's stamp of the source).
        runs: runs that count: ``ok + failures``.
        ok: runs that returned (and passed ``returns`` when it was checked).
        failures: runs that failed, of any kind; ``failure_kinds`` counts each kind.
        needs_login: runs that signalled NEEDS_LOGIN (not counted against the tool).
        confirmation_required: calls refused for want of a confirmation (not counted).
        not_run: calls that never reached the tool for a reason of the caller's: a tab of
            another site, or no tab to run in (not counted).
        site_failures: runs that failed for the site, the network or the tab (the site
            unreachable, its page not loaded, the tab closed; not counted).
        unreachable: the latest run found the site unreachable (its server did not answer).
        last_ok: when the last ``OK`` run ended (ISO 8601 UTC), or None.
        last_failure: the last failure's kind, message and time, or None.
        last_site_failure: the last failure of the site, the network or the tab, or None.
        suspect: the latest counted runs all failed (see :data:`SUSPECT_AFTER`).
        reason: why it is suspect ("" when it is not).
        last_passed: for a suspect version, the history id of the earlier version that
            passed most recently (``restore`` brings it back), or None.
    """

    version: str
    runs: int = 0
    ok: int = 0
    failures: int = 0
    failure_kinds: dict[str, int] = Field(default_factory=dict)
    needs_login: int = 0
    confirmation_required: int = 0
    not_run: int = 0
    site_failures: int = 0
    unreachable: bool = False
    last_ok: str | None = None
    last_failure: Failure | None = None
    last_site_failure: Failure | None = None
    suspect: bool = False
    reason: str = ""
    last_passed: str | None = None

    def line(self) -> str:
        """The health in one short line, as ``ego tools`` and ``ego sites`` print it."""
        if not self.recorded:
            return "no runs yet"
        parts = []
        if self.unreachable and self.last_site_failure is not None:
            parts.append(f"site unreachable at {self.last_site_failure.at}")
        if self.suspect:
            parts.append(f"SUSPECT: {self.reason}")
            if self.last_passed:
                parts.append(f"version {self.last_passed} last passed")
        counts = f"{self.runs} run{'s' if self.runs != 1 else ''}: {self.ok} ok"
        if self.failures:
            counts += f", {self.failures} failed"
        parts.append(counts)
        if self.needs_login:
            parts.append(f"{self.needs_login} NEEDS_LOGIN")
        if self.site_failures:
            parts.append(f"{self.site_failures} failed for the site, not counted")
        if self.last_failure is not None and not self.suspect:
            parts.append(f"last failure {self.last_failure.kind} {self.last_failure.at}")
        elif self.last_ok is not None:
            parts.append(f"last ok {self.last_ok}")
        return "; ".join(parts)

    @property
    def recorded(self) -> bool:
        """Whether any run of the version was recorded, counted or not."""
        return bool(
            self.runs
            or self.needs_login
            or self.confirmation_required
            or self.not_run
            or self.site_failures
        )


class VersionHealth(BaseModel):
    """One version of a tool in ``ego health``: which version, and its record.

    Attributes:
        site_id, tool: the tool.
        kind: ``"browser"``, ``"python"`` or ``"skill"``.
        version: ``"current"``, or the history id of a kept version (``restore`` takes it).
        hash: the source's short hash, as ``ego history`` shows it.
        health: the version's record.
        recent: its latest runs, newest first.
    """

    site_id: str
    tool: str
    kind: str
    version: str
    hash: str
    health: ToolHealth
    recent: list[RunInfo] = Field(default_factory=list)


def _iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _warned_read(keys: Iterable[Key], *, recent: int = 0) -> dict[Key, VersionRecord]:
    """The records of ``keys``; empty (and a warning logged once) when the store is unreadable."""
    flush(READ_FLUSH_SECONDS)
    try:
        return read_records(store_path(), keys, recent=recent)
    except Exception as exc:  # sqlite3.Error, OSError: health is shown, never required
        _warn_unreadable(exc)
        return {}


def ran_tools() -> set[tuple[str, str]]:
    """Every (site id, tool name) with a recorded run of any version; empty (and a warning
    logged once) when the store is unreadable. A listing asks once, so that the tools that
    never ran cost no look at their files (see :func:`site_health`)."""
    flush(READ_FLUSH_SECONDS)
    try:
        return recorded_tools(store_path())
    except Exception as exc:  # sqlite3.Error, OSError: health is shown, never required
        _warn_unreadable(exc)
        return set()


def _warn_unreadable(exc: Exception) -> None:
    global _read_warned
    if not _read_warned:
        _read_warned = True
        logger.warning(
            "ego: the run record at %s cannot be read (%s: %s); health is not shown",
            store_path(),
            type(exc).__name__,
            exc,
        )


_read_warned = False


def health_for(version: str, record: VersionRecord | None) -> ToolHealth:
    """A version's health from its record (zeros when it never ran)."""
    health = ToolHealth(version=version)
    if record is None:
        return health
    totals = record.totals
    for outcome, total in totals.items():
        if outcome == OK:
            health.ok = total.count
            health.last_ok = _iso(total.last_at)
        elif outcome == NEEDS_LOGIN:
            health.needs_login = total.count
        elif outcome == CONFIRMATION_REQUIRED:
            health.confirmation_required = total.count
        elif outcome in NOT_RUN:
            health.not_run += total.count
        elif outcome in SITE_FAILURES:
            health.site_failures += total.count
        else:
            health.failure_kinds[outcome] = total.count
            health.failures += total.count
    health.runs = health.ok + health.failures
    failed = [(o, t) for o, t in totals.items() if o != OK and o not in UNCOUNTED]
    if failed:
        kind, last = max(failed, key=lambda pair: pair[1].last_at)
        health.last_failure = Failure(kind=kind, message=last.last_message, at=_iso(last.last_at))
    around = [(o, t) for o, t in totals.items() if o in SITE_FAILURES]
    if around:
        kind, last = max(around, key=lambda pair: pair[1].last_at)
        health.last_site_failure = Failure(
            kind=kind, message=last.last_message, at=_iso(last.last_at)
        )
        latest_of_all = max(totals.items(), key=lambda pair: pair[1].last_at)[0]
        health.unreachable = latest_of_all == SITE_UNREACHABLE
    latest = record.latest[:SUSPECT_AFTER]
    if len(latest) == SUSPECT_AFTER and all(run.outcome != OK for run in latest):
        kinds = ", ".join(dict.fromkeys(run.outcome for run in latest))
        health.suspect = True
        health.reason = f"the last {SUSPECT_AFTER} runs failed ({kinds})"
    return health


def health_of(keys: Sequence[Key]) -> dict[Key, ToolHealth]:
    """The health of each tool version in ``keys`` (site, tool, version hash), e.g. skills'."""
    records = _warned_read(keys)
    return {key: health_for(key[2], records.get(key)) for key in keys}


def _run_info(run: Run) -> RunInfo:
    return RunInfo(
        outcome=run.outcome,
        message=run.message,
        at=_iso(run.at),
        seconds=round(run.seconds, 4),
        front_end=run.front_end,
    )


def _last_passed(learnings: Learnings, site_id: str, tool: str, current: str) -> str | None:
    """The history id of the kept version of ``tool`` whose last OK run is the latest."""
    kept = [
        (version.version, (site_id, tool, hashed))
        for version, hashed in _hashed_versions(learnings, site_id, tool)
        if not version.current and hashed != current
    ]
    records = _warned_read(key for _, key in kept)
    best: tuple[float, str] | None = None
    for version_id, key in kept:
        record = records.get(key)
        total = record.totals.get(OK) if record is not None else None
        if total is not None and (best is None or total.last_at > best[0]):
            best = (total.last_at, version_id)
    return best[1] if best is not None else None


def tool_health(
    learnings: Learnings, entry: SiteEntry, specs: Sequence[ToolSpec]
) -> dict[str, ToolHealth]:
    """The health of the current version of each of ``specs`` (tools of ``entry``'s site).

    A tool whose file cannot be loaded is left out. A suspect browser tool names the earlier
    version that last passed.
    """
    versions = {}
    for spec in specs:
        version = tool_version(learnings, entry, spec)
        if version is not None:
            versions[spec.name] = version
    site_id = entry.site_id
    records = _warned_read((site_id, name, version) for name, version in versions.items())
    found = {}
    for name, version in versions.items():
        health = health_for(version, records.get((site_id, name, version)))
        if health.suspect:
            health.last_passed = _last_passed(learnings, site_id, name, version)
        found[name] = health
    return found


def current_health(learnings: Learnings, site_id: str, tool: str) -> ToolHealth | None:
    """The health of ``site_id``/``tool`` as it is now (after a restore: the restored
    version's own record); None when the tool cannot be found or loaded."""
    try:
        entry, spec = learnings.tool(site_id, tool)
    except LearningError:
        return None
    return tool_health(learnings, entry, [spec]).get(tool)


def site_health(
    learnings: Learnings, entry: SiteEntry, ran: Collection[tuple[str, str]] | None = None
) -> dict[str, ToolHealth]:
    """The health of every tool of a valid site that has a record (``ego sites``).

    Args:
        learnings: the roots ``entry`` comes from.
        entry: the site.
        ran: what :func:`ran_tools` answered for the listing the site is part of: only the
            tools it names are looked at (a tool that never ran has no record to show).
    """
    manifest = entry.manifest
    if manifest is None:
        return {}
    specs = _specs(manifest)
    if ran is not None:
        specs = [spec for spec in specs if (entry.site_id, spec.name) in ran]
        if not specs:
            return {}
    every = tool_health(learnings, entry, specs)
    return {name: health for name, health in every.items() if health.recorded}


def _specs(manifest: Manifest) -> list[ToolSpec]:
    return [*manifest.browser_tools.values(), *manifest.python_tools.values()]


def health_table(
    learnings: Learnings,
    site_id: str | None = None,
    tool: str | None = None,
    *,
    recent: int = 5,
) -> list[VersionHealth]:
    """Every version of every tool asked for, each with its record (``ego health``).

    Browser tools list their current version and each kept one, newest first, as ``ego
    history`` does; Python tools their current version.

    Args:
        learnings: the roots.
        site_id: one site (else every valid site).
        tool: one tool of ``site_id``.
        recent: how many of each version's latest runs to include.

    Raises:
        UnknownSiteError, InvalidManifestError, UnknownToolError: ``site_id`` or ``tool`` is
            not a usable site or declared tool.
    """
    if site_id is not None and tool is not None:
        entry, spec = learnings.tool(site_id, tool)
        wanted = [(entry, spec)]
    elif site_id is not None:
        entry = learnings.find(site_id)
        wanted = [(entry, spec) for spec in _specs(entry.require())]
    else:
        wanted = [
            (entry, spec)
            for entry in learnings.sites()
            if entry.manifest is not None
            for spec in _specs(entry.manifest)
        ]
    rows: list[tuple[str, str, str, str, str, str]] = []
    for entry, spec in wanted:
        rows += _version_rows(learnings, entry, spec)
    records = _warned_read(
        ((site, name, version) for site, name, _, _, _, version in rows), recent=recent
    )
    table = []
    for site, name, kind, label, short, version in rows:
        record = records.get((site, name, version))
        health = health_for(version, record)
        if health.suspect and kind == "browser" and label == "current":
            health.last_passed = _last_passed(learnings, site, name, version)
        table.append(
            VersionHealth(
                site_id=site,
                tool=name,
                kind=kind,
                version=label,
                hash=short,
                health=health,
                recent=[_run_info(run) for run in record.recent] if record else [],
            )
        )
    return table


def _version_rows(
    learnings: Learnings, entry: SiteEntry, spec: ToolSpec
) -> list[tuple[str, str, str, str, str, str]]:
    """(site, tool, kind, version label, short hash, version hash) per version of ``spec``."""
    site_id = entry.site_id
    manifest = entry.require()
    if spec.name not in manifest.browser_tools:
        version = tool_version(learnings, entry, spec)
        return (
            []
            if version is None
            else [(site_id, spec.name, "python", "current", version[:12], version)]
        )
    return [
        (site_id, spec.name, "browser", kept.version, kept.hash, hashed)
        for kept, hashed in _hashed_versions(learnings, site_id, spec.name)
    ]


def _hashed_versions(
    learnings: Learnings, site_id: str, tool: str
) -> list[tuple[ToolVersion, str]]:
    """Each version of a browser tool its history lists, with the hash its runs are recorded
    under; a version whose source cannot be read (or is no tool) is left out."""
    found = []
    for version in list_versions(learnings, site_id, tool):
        try:
            text = version.file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        path = version.entry.get("path")
        hashed = kept_version(site_id, path, text) if isinstance(path, str) else None
        if hashed is not None:
            found.append((version, hashed))
    return found
