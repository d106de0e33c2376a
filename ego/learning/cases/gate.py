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

A new source whose case runs send a request to another origin than the case's page is
refused outright (:func:`check_origins`, :class:`~ego.errors.ForeignRequestError`), forced or
not: a learning runs with the person's session, and may call only the page's own origin.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from ...errors import EgoError, ForeignRequestError, InvalidCasesError
from ...page.browser import TabHost
from ...page.tab import Tab
from ..catalog.registry import Learnings, LoadedSource, version_of
from ..health.origin import unrecorded
from ..plan.save_plan import ToolPlan
from .format import LearningCase, load_cases
from .replayed import DEFAULT_TOOL_TIMEOUT, run_replayed
from .result import CaseResult
from .verdict import CaseCheck, GateReport

__all__ = ["GateInvoke", "candidate_source", "check_origins", "run_gate"]

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
        ForeignRequestError: a case's run with the new source sent a request to another
            origin than the case's page.
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
            check_origins(plan.site_id, plan.tool, [now], _front_end(plan))
            if now.passed:
                checks.append(CaseCheck(case.name, True))
                continue
            before = await _run(browser, case, invoke, timeout, None)
            checks.append(
                CaseCheck(case.name, False, now.reason, "passed" if before.passed else "failed")
            )
    forced = plan.draft.force if plan.draft is not None else False
    return GateReport(tuple(checks), forced=forced)


def check_origins(
    site_id: str, tool: str, results: Sequence[CaseResult], front_end: str = "python"
) -> None:
    """Refuse a tool whose case runs sent requests to another origin than the case's page.

    Args:
        site_id, tool: the tool being saved.
        results: its cases, run with the new source.
        front_end: whose words the refusal uses.

    Raises:
        ForeignRequestError: a case's run sent one (no ``force`` goes past it).
    """
    found = [(r.name, request) for r in results for request in r.foreign_requests]
    if not found:
        return
    listed = "; ".join(f"{request} (case {name!r})" for name, request in found[:5])
    more = f" and {len(found) - 5} more" if len(found) > 5 else ""
    raise ForeignRequestError(
        f"not saved {site_id}/{tool}: its offline cases sent {len(found)} request(s) to "
        f"another origin than the page's: {listed}{more}; a learning runs in the page with the "
        "person's session and may call only the page's own origin: make the request "
        "same-origin; nothing was written",
        site_id=site_id,
        name=tool,
        problems=[f"case {name!r} sent {request} to another origin" for name, request in found],
        requests=[request for _, request in found],
        cases=list(dict.fromkeys(name for name, _ in found)),
    )


def _front_end(plan: ToolPlan) -> str:
    return plan.draft.front_end if plan.draft is not None else "python"


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
