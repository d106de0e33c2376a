"""Running learning-test cases: each in a tab of its own browser context, against its HAR
replayed in strict mode, through the site layer's one call path.

Each case loads its HAR into a fresh tab in an isolated browser context (no cookies, storage
or cache shared with other cases), navigates to the case's URL (the real one, e.g.
``https://x.com/home``), runs the tool and has :mod:`ego.casetests.judge` compare what it
returns. Nothing reaches the network, so irreversible tools run with ``confirm=True``: the
"post" lands in a recorded page, not on the site.

A case fails on a wrong result, an unexpected error (the reason starts with the signal:
``SKILL_BROKEN ...``), a navigation that fails, a request the HAR lacks (strict mode), or a
timeout; every step is bounded, so a broken site never hangs the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Collection, Sequence
from typing import Any, Final

from ..errors import (
    BrowserClosedError,
    CommandTimeoutError,
    EgoError,
    HarFormatError,
    InvalidCasesError,
    TabClosedError,
)
from ..learning.registry import Learnings
from ..page.browser import Browser
from ..page.tab import Tab
from ..replay import Har, Replayer
from ..site import Site
from .cases import CASES_FILE, LearningCase, load_cases
from .judge import error_kind, judge, judge_error
from .report import CaseResult, LearningTestReport

__all__ = ["run_case", "run_learning_tests"]

_NAVIGATION_TIMEOUT: Final = 15.0
_DEFAULT_TOOL_TIMEOUT: Final = 30.0


async def run_case(
    site: Site,
    case: LearningCase,
    *,
    navigation_timeout: float = _NAVIGATION_TIMEOUT,
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
    started = time.monotonic()
    result = CaseResult(site_id=case.site_id, name=case.name, tool=case.tool, passed=False)
    try:
        _, spec = site.learnings.tool(case.site_id, case.tool)
        har = Har.load(case.har)
    except (EgoError, HarFormatError) as exc:
        result.reason = str(exc)
        result.seconds = time.monotonic() - started
        return result
    tool_timeout = case.timeout or spec.timeout or _DEFAULT_TOOL_TIMEOUT
    try:
        # Where a remote browser refuses new contexts, a plain tab still runs the case.
        async with site.browser.isolated_context(fallback=True) as context:
            tab = await context.new_tab()
            await _replay_case(site, case, tab, har, result, navigation_timeout, tool_timeout)
    except BrowserClosedError:
        raise
    except EgoError as exc:  # the tab itself could not be opened
        result.passed = False
        result.reason = f"could not open a tab for the case: {exc}"
    result.seconds = time.monotonic() - started
    return result


async def _replay_case(
    site: Site,
    case: LearningCase,
    tab: Tab,
    har: Har,
    result: CaseResult,
    navigation_timeout: float,
    tool_timeout: float,
) -> None:
    """Run ``case`` in ``tab`` with ``har`` replayed and put the outcome in ``result``."""
    replayer = Replayer(
        tab,
        har,
        mode="strict" if case.mode == "strict" else "fail",
        ignore_params=case.ignore_params,
    )
    # The hard bound of the whole case: each step has its own timeout, this catches the rest.
    bound = navigation_timeout + tool_timeout + 15.0
    try:
        await asyncio.wait_for(
            _run_in_tab(site, case, tab, replayer, result, navigation_timeout, tool_timeout),
            bound,
        )
    except BrowserClosedError:
        raise
    except TabClosedError as exc:
        result.passed = False
        result.reason = f"the tab closed during the case: {exc}"
    except CommandTimeoutError as exc:  # a step's own timeout (it is also a TimeoutError)
        result.passed = False
        result.reason = f"TIMEOUT: {exc}"
    except TimeoutError:
        result.passed = False
        result.reason = f"TIMEOUT: the case did not finish within {bound:g} s"
    except EgoError as exc:  # replay could not start, a cookie was refused, ...
        result.passed = False
        result.reason = f"{type(exc).__name__}: {exc}"
    finally:
        await _quietly(replayer.stop(check=False))
    result.unmatched = [f"{r.method} {r.url}" for r in replayer.unmatched]
    if replayer.unmatched and case.mode == "strict":
        listed = "; ".join(result.unmatched[:3])
        more = f" (+{len(result.unmatched) - 3} more)" if len(result.unmatched) > 3 else ""
        note = f"strict replay: no HAR entry for {listed}{more}"
        result.reason = f"{result.reason}; {note}" if result.reason else note
        result.passed = False


async def _quietly(awaitable: Awaitable[Any]) -> None:
    # Cleanup after a case must never replace the case's own outcome with a cleanup error.
    with contextlib.suppress(EgoError, TimeoutError):
        await awaitable


async def _run_in_tab(
    site: Site,
    case: LearningCase,
    tab: Tab,
    replayer: Replayer,
    result: CaseResult,
    navigation_timeout: float,
    tool_timeout: float,
) -> None:
    await replayer.start()
    if case.cookies:
        cookies = [
            {**cookie, **({} if "url" in cookie or "domain" in cookie else {"url": case.url})}
            for cookie in case.cookies
        ]
        await tab.send("Network.setCookies", {"cookies": cookies})
    try:
        await tab.navigate(
            case.url,
            wait_until=case.wait_until,  # type: ignore[arg-type]  # checked by CASES_SCHEMA
            timeout=navigation_timeout,
        )
    except (EgoError, TimeoutError) as exc:
        result.reason = f"could not load {case.url} from {case.har.name}: {exc}"
        return
    if case.setup:
        try:
            await tab.evaluate(case.setup, timeout=navigation_timeout)
        except (EgoError, TimeoutError) as exc:
            result.reason = f"setup script failed: {exc}"
            return
    try:
        value = await site.run_tool(
            case.site_id,
            case.tool,
            case.args,
            tab=tab,
            timeout=tool_timeout,
            confirm=True,  # safe: every request is answered by the HAR, nothing is sent out
            check_returns=case.check_returns and case.expect_error is None,
        )
    except BrowserClosedError:
        raise
    except EgoError as exc:
        result.error = error_kind(exc)
        result.reason = judge_error(case, exc)
        result.passed = not result.reason
        return
    result.result = value
    result.reason = judge(case, value)
    result.passed = not result.reason


async def run_learning_tests(
    browser: Browser,
    learnings: Learnings | None = None,
    site_ids: Sequence[str] | None = None,
    *,
    names: Collection[str] | None = None,
    navigation_timeout: float = _NAVIGATION_TIMEOUT,
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
