"""What the health report says, as data: read from the run record (:mod:`ego.learning.health`),
each tool's history (:mod:`ego.learning.plan.history`) and the index of kept traces
(:mod:`ego.trace.index`).

For each tool of every valid site, each version ``ego health`` lists: its health (runs, ok,
failures, NEEDS_LOGIN, suspect), its runs per day (from the runs the record keeps: the
latest :data:`~ego.learning.health.store.KEEP_RUNS` that count and as many that do not, per
version), the provenance of a version ``ego heal`` promoted; for each tool its last failures
(:data:`LAST_FAILURES`), each with the trace that holds it when one was kept. Tools with a
suspect version come first, and so do suspect versions within a tool.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Final

from pydantic import BaseModel, Field

from ..learning.catalog.registry import Learnings
from ..learning.health.outcomes import NEEDS_LOGIN, OK, counted
from ..learning.health.store import KEEP_RUNS
from ..learning.health.view import RunInfo, ToolHealth, VersionHealth, health_table
from ..learning.plan.history import list_versions
from ..trace.index import MATCH_SECONDS, KeptFailure, kept

__all__ = ["LAST_FAILURES", "DayCounts", "FailureInfo", "HealthReport", "ToolReport",
           "VersionReport", "report_data"]  # fmt: skip

#: The most failures of one tool the report lists, newest first.
LAST_FAILURES: Final = 5


class DayCounts(BaseModel):
    """One day of a version's runs (UTC)."""

    day: str = Field(description="YYYY-MM-DD, UTC.")
    runs: int = Field(default=0, description="Runs that count: ok plus failures.")
    failures: int = 0
    needs_login: int = 0


class VersionReport(BaseModel):
    """One version of a tool."""

    version: str = Field(description='"current", or the history id restore takes.')
    hash: str = Field(description="The source's short hash, as ego history shows it.")
    version_hash: str = Field(description="The hash its runs are recorded under.")
    health: ToolHealth
    days: list[DayCounts] = Field(default_factory=list)
    promoted: dict[str, Any] | None = Field(
        default=None, description="For a version ego heal promoted: its provenance."
    )
    saved_at: str | None = None


class FailureInfo(BaseModel):
    """One failing run."""

    version: str
    at: str
    outcome: str
    message: str
    trace: str | None = Field(
        default=None, description="The trace that holds it, when one was kept."
    )


class ToolReport(BaseModel):
    """One tool: its versions and its last failures."""

    site_id: str
    tool: str
    kind: str
    suspect: bool
    versions: list[VersionReport]
    failures: list[FailureInfo] = Field(default_factory=list)


class HealthReport(BaseModel):
    """The whole report."""

    generated: str
    tools: list[ToolReport]

    @property
    def suspect(self) -> list[ToolReport]:
        """The tools with a suspect version."""
        return [tool for tool in self.tools if tool.suspect]


def _day(at: str) -> str:
    return at[:10]


def _days(recent: Sequence[RunInfo]) -> list[DayCounts]:
    by_day: dict[str, DayCounts] = {}
    for run in recent:
        day = by_day.setdefault(_day(run.at), DayCounts(day=_day(run.at)))
        if run.outcome == NEEDS_LOGIN:
            day.needs_login += 1
        elif counted(run.outcome):
            day.runs += 1
            if run.outcome != OK:
                day.failures += 1
    return sorted(by_day.values(), key=lambda day: day.day)


def _seconds(at: str) -> float:
    return datetime.strptime(at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()


def _trace_of(
    failures: Sequence[KeptFailure], site_id: str, tool: str, version: str, at: str
) -> str | None:
    when = _seconds(at)
    for failure in reversed(failures):
        same = (failure.site_id, failure.tool, failure.version) == (site_id, tool, version)
        if same and abs(failure.at - when) <= MATCH_SECONDS:
            return failure.path
    return None


def report_data(learnings: Learnings, site_id: str | None = None) -> HealthReport:
    """The report of every tool (of ``site_id`` only, when given).

    Raises:
        UnknownSiteError, InvalidManifestError: ``site_id`` is not a usable site.
    """
    rows = health_table(learnings, site_id, recent=2 * KEEP_RUNS)
    traces = kept()
    grouped: dict[tuple[str, str], list[VersionHealth]] = {}
    for row in rows:
        grouped.setdefault((row.site_id, row.tool), []).append(row)
    tools = []
    for (site, name), versions in grouped.items():
        history = {}
        if versions[0].kind == "browser":
            history = {v.version: v for v in list_versions(learnings, site, name)}
        reports = []
        failures = []
        for row in versions:
            kept_version = history.get(row.version)
            reports.append(
                VersionReport(
                    version=row.version,
                    hash=row.hash,
                    version_hash=row.health.version,
                    health=row.health,
                    days=_days(row.recent),
                    promoted=kept_version.provenance if kept_version is not None else None,
                    saved_at=kept_version.saved_at if kept_version is not None else None,
                )
            )
            for run in row.recent:
                if run.outcome == OK or not counted(run.outcome):
                    continue
                failures.append(
                    FailureInfo(
                        version=row.version,
                        at=run.at,
                        outcome=run.outcome,
                        message=run.message,
                        trace=_trace_of(traces, site, name, row.health.version, run.at),
                    )
                )
        failures.sort(key=lambda failure: failure.at, reverse=True)
        reports.sort(key=lambda version: not version.health.suspect)  # stable: suspect first
        tools.append(
            ToolReport(
                site_id=site,
                tool=name,
                kind=versions[0].kind,
                suspect=any(version.health.suspect for version in reports),
                versions=reports,
                failures=failures[:LAST_FAILURES],
            )
        )
    tools.sort(key=lambda tool: (not tool.suspect, tool.site_id, tool.tool))
    generated = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return HealthReport(generated=generated, tools=tools)
