"""The save gate: a tool's offline cases, run against a new source before it is kept.

When the site carries cases for the tool (``tests/cases.json``), each runs on its recording,
offline (:mod:`.replayed`), with the new source. A case the new source fails runs again with
the current version: a case that passed there and fails now is **broken**, and the save is
refused (:func:`~.verdict.refusal`) unless it was forced. The site layer runs this before it
hands the save to :func:`ego.learning.save.tool.save_browser_tool` as its ``gate``: running a
call is the site's, and this layer only orders the runs and judges them.

None of these runs is recorded in the tool's health: the new version has not run for real
yet (its record starts at zero once saved), and the current version's replayed runs say
nothing new about it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from ...errors import EgoError, InvalidCasesError
from ...page.browser import TabHost
from ...page.tab import Tab
from ..catalog.registry import Learnings, LoadedSource, version_of
from ..health.origin import unrecorded
from ..plan.save_plan import ToolPlan
from .format import LearningCase, load_cases
from .replayed import DEFAULT_TOOL_TIMEOUT, run_replayed
from .result import CaseResult
from .verdict import CaseCheck, GateReport

__all__ = ["GateInvoke", "candidate_source", "run_gate"]

#: Runs ``case``'s tool in the tab within the seconds given: ``source`` when given (the new
#: version, not written yet), else the tool as it is now.
GateInvoke = Callable[[LearningCase, Tab, float, LoadedSource | None], Awaitable[Any]]


def candidate_source(plan: ToolPlan) -> LoadedSource:
    """The planned tool's new source as a call runs it, before it is written.

    It carries the version hash the saved file will have, under the path it will have.
    """
    file = plan.workspace / plan.site_id / plan.entry["path"]
    version = version_of(plan.url, plan.expression)
    return LoadedSource(plan.site_id, plan.tool, file, plan.url, plan.expression, version)


async def run_gate(
    browser: TabHost, learnings: Learnings, plan: ToolPlan, invoke: GateInvoke
) -> GateReport | None:
    """Run the offline cases of ``plan``'s tool against its new source (and, for a case it
    fails, against the current version).

    Args:
        browser: where each case gets a tab of its own browser context.
        learnings: the roots; the cases are those of the site as it is now.
        plan: the planned save.
        invoke: runs a case's call in a tab (see :data:`GateInvoke`).

    Returns:
        Each case's verdict; None when the site is new or has no case for the tool. A broken
        ``cases.json`` gives a report whose ``problem`` says so (the save is not refused for
        it: the cases cannot tell anything).

    Raises:
        BrowserClosedError: the browser went away.
    """
    try:
        entry = learnings.find(plan.site_id)
        cases = [case for case in load_cases(entry) if case.tool == plan.tool]
    except InvalidCasesError as exc:
        return GateReport(problem=str(exc))
    except EgoError:
        return None
    if not cases:
        return None
    spec = plan.parsed.browser_tools[plan.tool]
    source = candidate_source(plan)
    checks = []
    with unrecorded():
        for case in cases:
            timeout = case.timeout or spec.timeout or DEFAULT_TOOL_TIMEOUT
            now = await _run(browser, case, invoke, timeout, source)
            if now.passed:
                checks.append(CaseCheck(case.name, True))
                continue
            before = await _run(browser, case, invoke, timeout, None)
            checks.append(
                CaseCheck(case.name, False, now.reason, "passed" if before.passed else "failed")
            )
    forced = plan.draft.force if plan.draft is not None else False
    return GateReport(tuple(checks), forced=forced)


async def _run(
    browser: TabHost,
    case: LearningCase,
    invoke: GateInvoke,
    timeout: float,
    source: LoadedSource | None,
) -> CaseResult:
    async def call(tab: Tab, seconds: float) -> Any:
        return await invoke(case, tab, seconds, source)

    return await run_replayed(browser, case, call, tool_timeout=timeout)
