"""What the save gate found: the tool's offline cases, run against a new source before it is
kept, and the refusal when the new source breaks one that the current version passes.

The gate's runs happen in :mod:`.gate`; this module holds only the results, which the save
(:mod:`ego.learning.save.tool`) refuses with, the writer keeps beside the version
(:mod:`ego.learning.plan.history`) and every front end prints.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ...errors import CaseRegressionError
from ..plan.draft import ToolDraft, words_for

if TYPE_CHECKING:
    from ..plan.save_plan import ToolPlan

__all__ = ["CaseCheck", "GateReport", "SaveGate", "refusal"]

#: How the current version did on a case: ``"not run"`` when the new source passed it (the
#: current version's result could not change the verdict).
Before = Literal["passed", "failed", "not run"]


@dataclass(frozen=True)
class CaseCheck:
    """One offline case of the tool, as the gate ran it.

    Attributes:
        name: the case's name in ``tests/cases.json``.
        passed: the new source passed it.
        reason: why the new source failed it ("" when it passed).
        before: how the current version did, run only when the new source failed.
    """

    name: str
    passed: bool
    reason: str = ""
    before: Before = "not run"

    @property
    def broken(self) -> bool:
        """The new source fails a case the current version passes."""
        return not self.passed and self.before == "passed"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "name": self.name,
            "passed": self.passed,
            "reason": self.reason,
            "before": self.before,
            "broken": self.broken,
        }


@dataclass(frozen=True)
class GateReport:
    """The cases the gate ran for one save, and whether the save went past broken ones.

    Attributes:
        cases: each of the tool's cases, in file order.
        forced: the save was asked to go ahead even if cases broke.
        problem: why the cases could not be run (a broken ``cases.json``), else "".
    """

    cases: tuple[CaseCheck, ...] = ()
    forced: bool = False
    problem: str = ""

    @property
    def broken(self) -> tuple[CaseCheck, ...]:
        """The cases the new source breaks."""
        return tuple(case for case in self.cases if case.broken)

    def summary(self) -> str:
        """One line: how many cases ran and passed, and any the save broke."""
        if self.problem:
            return f"cases not run: {self.problem}"
        passed = sum(case.passed for case in self.cases)
        line = f"{len(self.cases)} offline case(s) run, {passed} passed"
        if self.broken:
            names = ", ".join(f"{case.name!r} ({case.reason})" for case in self.broken)
            line += f"; saved anyway (forced), breaking {names}"
        return line

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form: the save result's and the history entry's ``cases``."""
        return {
            "ran": [case.as_dict() for case in self.cases],
            "broken": [case.name for case in self.broken],
            "forced": self.forced,
            "problem": self.problem,
        }


#: Runs the offline cases of a planned save's tool against its new source; None when the
#: site has no case for the tool.
SaveGate = Callable[["ToolPlan"], Awaitable[GateReport | None]]


def refusal(report: GateReport, draft: ToolDraft) -> CaseRegressionError:
    """The error that refuses a save whose new source breaks ``report``'s broken cases.

    The fix is worded for the front end that built ``draft`` (``force=True``, ``--force``,
    ``force: true``).
    """
    broken = report.broken
    problems = [
        f"case {case.name!r} passes with the current version and fails with the new source: "
        f"{case.reason}"
        for case in broken
    ]
    listed = "; ".join(f"{case.name!r}: {case.reason}" for case in broken)
    return CaseRegressionError(
        f"not saved {draft.site_id}/{draft.tool}: the new source breaks {len(broken)} offline "
        f"case(s) of tests/cases.json that pass with the current version ({listed}); fix the "
        f"source, or save it anyway with {words_for(draft.front_end).force}; nothing was "
        "written",
        site_id=draft.site_id,
        name=draft.tool,
        problems=problems,
        cases=[case.name for case in broken],
    )
