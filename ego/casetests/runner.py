"""Running learning-test cases: each in a tab of its own browser context, against its HAR
replayed in strict mode, through the site layer's one call path.

How one case runs (replay, navigation, judging) is :func:`ego.learning.cases.replayed.run_replayed`;
this module gives it the site's call of the case's tool and gathers the report. Each case's
run is recorded in the tool's health with its judged outcome (front end ``test``): ``OK``
when the case passed, even where the tool signalled the SKILL_BROKEN the case expects.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Collection, Sequence
from time import perf_counter
from typing import Any

from ..calls import ToolCall, case_call
from ..errors import EgoError, InvalidCasesError
from ..learning.cases.format import CASES_FILE, LearningCase, load_cases
from ..learning.cases.replayed import DEFAULT_TOOL_TIMEOUT, NAVIGATION_TIMEOUT, run_replayed
from ..learning.cases.result import CaseResult
from ..learning.catalog.registry import Learnings
from ..learning.health.origin import unrecorded
from ..learning.health.outcomes import judged
from ..learning.health.recorder import record_judged
from ..page.browser import Browser
from ..page.tab import Tab
from ..site import Site
from .report import LearningTestReport

__all__ = ["run_case", "run_learning_tests"]


async def run_case(
    site: Site,
    case: LearningCase,
    *,
    navigation_timeout: float = NAVIGATION_TIMEOUT,
) -> CaseResult:
    """Run one case in an isolated tab with strict replay and judge the result.

    Args:
        site: the facade whose learnings hold the case's site (and whose browser runs it).
        case: the case.
        navigation_timeout: seconds the case's URL may take to reach ``wait_until``.

    Returns:
        How the case went: a failing case is a result with ``passed`` False, not an error.

    Raises:
        BrowserClosedError: the browser went away (no later case could run either).
    """
    try:
        _, spec = site.learnings.tool(case.site_id, case.tool)
    except EgoError as exc:
        return CaseResult(
            site_id=case.site_id, name=case.name, tool=case.tool, passed=False, reason=str(exc)
        )
    tool_timeout = case.timeout or spec.timeout or DEFAULT_TOOL_TIMEOUT
    ran: list[tuple[ToolCall, float, float, BaseException | None]] = []

    async def invoke(tab: Tab, timeout: float) -> Any:
        call = case_call(site.learnings, case, timeout)
        started = perf_counter()
        try:
            # The raw outcome is not the case's: a SKILL_BROKEN the case expects is a pass.
            with unrecorded():
                value = await site.run_call(call, tab)
        except Exception as exc:
            ran.append((call, started, perf_counter(), exc))
            raise
        ran.append((call, started, perf_counter(), None))
        return value

    result = await run_replayed(
        site.browser,
        case,
        invoke,
        tool_timeout=tool_timeout,
        navigation_timeout=navigation_timeout,
    )
    for call, started, ended, raised in ran:
        outcome, message = judged(result.passed, raised, result.reason)
        record_judged(call, started, ended, outcome, message, front_end="test")
    return result


async def run_learning_tests(
    browser: Browser,
    learnings: Learnings | None = None,
    site_ids: Sequence[str] | None = None,
    *,
    names: Collection[str] | None = None,
    navigation_timeout: float = NAVIGATION_TIMEOUT,
    concurrency: int = 1,
) -> LearningTestReport:
    """Run the cases of every site (or of ``site_ids``) and report pass/fail per case.

    Each case runs in its own isolated tab with strict replay, so no case reaches the network
    and none sees another's cookies or storage; by default one after another.

    Args:
        browser: the browser to run in (it is not closed).
        learnings: where the sites are; by default ``browser.site``'s learnings, else the
            usual roots (workspace, then project).
        site_ids: only these sites (an unknown id is reported as a failed case).
        names: only the cases with these names.
        navigation_timeout: seconds each case's page may take to load.
        concurrency: how many cases may run at once (each in its own tab and context).

    Returns:
        The report; :attr:`LearningTestReport.passed` tells whether everything passed.
        A broken ``cases.json`` or manifest shows up as a failed case named
        ``(cases.json)`` / ``(manifest)``.

    Raises:
        BrowserClosedError: the browser went away during the run.
    """
    started = time.monotonic()
    if learnings is None:
        existing = getattr(browser, "site", None)
        learnings = existing.learnings if existing is not None else Learnings()
    site = Site(browser, learnings)
    report = LearningTestReport()

    def failed(site_id: str, name: str, reason: str) -> None:
        """Report what broke before any case could run as a failed case called ``name``."""
        report.results.append(
            CaseResult(site_id=site_id, name=name, tool="", passed=False, reason=reason)
        )

    selected: list[LearningCase] = []
    if site_ids is None:
        entries = learnings.sites()
    else:
        entries = []
        for site_id in site_ids:
            try:
                entries.append(learnings.find(site_id))
            except EgoError as exc:
                failed(site_id, "(site)", str(exc))
    for entry in entries:
        if entry.manifest is None:
            if (entry.directory / CASES_FILE).is_file():
                failed(
                    entry.site_id,
                    "(manifest)",
                    f"the manifest is broken: {'; '.join(entry.problems)}",
                )
            continue
        try:
            cases = load_cases(entry)
        except InvalidCasesError as exc:
            reason = f"{exc}" + ("".join(f"\n       - {p}" for p in exc.problems[1:]))
            failed(entry.site_id, "(cases.json)", reason)
            continue
        if not cases:
            report.untested.append(entry.site_id)
            continue
        declared = [*entry.manifest.browser_tools, *entry.manifest.python_tools]
        covered = {case.tool for case in cases}
        missing = sorted(tool for tool in declared if tool not in covered)
        if missing:
            report.uncovered[entry.site_id] = missing
        selected.extend(case for case in cases if names is None or case.name in names)
    # Cases are isolated from each other (own browser context each), so they may overlap;
    # results keep file order whatever order they finish in.
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(case: LearningCase) -> CaseResult:
        """Run ``case`` once a slot is free."""
        async with gate:
            return await run_case(site, case, navigation_timeout=navigation_timeout)

    report.results.extend(await asyncio.gather(*(one(case) for case in selected)))
    report.seconds = time.monotonic() - started
    return report
