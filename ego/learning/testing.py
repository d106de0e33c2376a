"""Learning tests: run a site's tools against recorded pages, offline, and report per case.

A site folder may carry ``tests/``: one or more HAR files and ``tests/cases.json``. Each
case loads its HAR into a fresh, isolated tab (its own browser context: no cookies, storage or
cache shared with other cases) with replay in strict mode, navigates to the case's URL (the
real one, e.g. ``https://x.com/home``), runs the tool and compares what it returns. Nothing
reaches the network, so irreversible tools run with ``confirm=True``: the "post" lands in a
recorded page, not on the site.

``cases.json``::

    {
      "defaults": {"har": "x-home.har", "url": "https://x.com/home"},   // optional
      "cases": [
        {
          "name": "home timeline: first three posts",     // unique within the site
          "har": "x-home.har",                            // in tests/
          "url": "https://x.com/home",                    // what the tab loads first
          "tool": "get_timeline_posts",                   // a declared tool (browser or Python)
          "args": {"max_posts": 3, "scroll": false},
          "expect": {...},            // the exact JSON result, or
          "expect_subset": {...},     // these keys (recursively) must be equal, and/or
          "expect_schema": {...},     // a JSON Schema the result must satisfy, or
          "expect_error": "SKILL_BROKEN",   // or NEEDS_LOGIN, or TOOL_ERROR (the tool threw)
          "error_contains": "primaryColumn",  // optional, with expect_error
          "cookies": [{"name": "ct0", "value": "test", "domain": ".x.com", "secure": true}],
          "setup": "document.querySelector('#q').focus()",  // JS run after the page loaded
          "mode": "strict",           // or "fail": unmatched requests fail without failing the case
          "ignore_params": ["hl"],    // query parameters matching ignores (locale, cache-busters)
          "timeout": 20,              // seconds for the tool (default: the manifest's, else 30)
          "wait_until": "load",       // the navigation's lifecycle point
          "check_returns": true       // also check the manifest's returns schema (default)
        }
      ]
    }

Only ``name``, ``har``, ``url`` and ``tool`` are required (``har`` and ``url`` may come from
``defaults``). A case with no ``expect*`` passes when the tool returns without an error.
A case fails on a wrong result, an unexpected error (the reason starts with the signal:
``SKILL_BROKEN ...``), a navigation that fails, a request the HAR lacks (strict mode), or a
timeout; every step is bounded, so a broken site never hangs the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import time
from collections.abc import AsyncIterator, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import jsonschema

from ..errors import (
    BrowserClosedError,
    CommandTimeoutError,
    EgoError,
    HarFormatError,
    InvalidCasesError,
    JavaScriptError,
    NeedsLoginError,
    ProtocolError,
    SkillBrokenError,
    TabClosedError,
    UnsafePathError,
)
from ..replay import Har, Replayer
from ..tab import Tab
from .paths import resolve_inside
from .registry import Learnings, SiteEntry

if TYPE_CHECKING:
    from ..browser import Browser
    from ..site import Site

__all__ = [
    "CASES_FILE",
    "CASES_SCHEMA",
    "CaseResult",
    "LearningCase",
    "LearningTestReport",
    "isolated_tab",
    "load_cases",
    "run_case",
    "run_learning_tests",
]

#: Where a site keeps its cases, relative to the site folder.
CASES_FILE: Final = "tests/cases.json"

#: The error kinds ``expect_error`` may name.
ERROR_KINDS: Final = ("SKILL_BROKEN", "NEEDS_LOGIN", "TOOL_ERROR")

_CASE_PROPERTIES: dict[str, Any] = {
    "name": {"type": "string", "minLength": 1},
    "har": {"type": "string", "minLength": 1},
    "url": {"type": "string", "pattern": "^https?://"},
    "tool": {"type": "string", "minLength": 1},
    "args": {"type": "object"},
    "expect": {},
    "expect_subset": {},
    "expect_schema": {"type": ["object", "boolean"]},
    "expect_error": {"enum": list(ERROR_KINDS)},
    "error_contains": {"type": "string"},
    "cookies": {
        "type": "array",
        "items": {
            "type": "object",
            "required": ["name", "value"],
            "properties": {"name": {"type": "string"}, "value": {"type": "string"}},
        },
    },
    "setup": {"type": "string"},
    "mode": {"enum": ["strict", "fail"]},
    "ignore_params": {"type": "array", "items": {"type": "string"}},
    "timeout": {"type": "number", "exclusiveMinimum": 0, "maximum": 600},
    "wait_until": {"enum": ["commit", "domcontentloaded", "load", "networkidle"]},
    "check_returns": {"type": "boolean"},
    "description": {"type": "string"},
}

#: The JSON Schema of ``tests/cases.json``.
CASES_SCHEMA: Final[dict[str, Any]] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["cases"],
    "additionalProperties": False,
    "properties": {
        "$schema": {"type": "string"},
        "description": {"type": "string"},
        "defaults": {
            "type": "object",
            "properties": _CASE_PROPERTIES,
            "additionalProperties": False,
        },
        "cases": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "tool"],
                "properties": _CASE_PROPERTIES,
                "additionalProperties": False,
                "not": {"required": ["expect_error", "expect"]},
            },
        },
    },
}

_MISSING: Final[Any] = object()
_NAVIGATION_TIMEOUT: Final = 15.0
_DEFAULT_TOOL_TIMEOUT: Final = 30.0


@dataclass(frozen=True)
class LearningCase:
    """One case of a site's ``tests/cases.json``, with its HAR path resolved."""

    site_id: str
    name: str
    har: Path
    url: str
    tool: str
    args: dict[str, Any] = field(default_factory=dict)
    expect: Any = _MISSING
    expect_subset: Any = _MISSING
    expect_schema: Any = _MISSING
    expect_error: str | None = None
    error_contains: str | None = None
    cookies: tuple[dict[str, Any], ...] = ()
    setup: str | None = None
    mode: str = "strict"
    ignore_params: tuple[str, ...] = ()
    timeout: float | None = None
    wait_until: str = "load"
    check_returns: bool = True

    @property
    def label(self) -> str:
        """``site/name``."""
        return f"{self.site_id}/{self.name}"


@dataclass
class CaseResult:
    """How one case went.

    Attributes:
        site_id: the site.
        name: the case's name.
        tool: the tool it ran.
        passed: True when every expectation held.
        reason: why it failed (starts with the signal for SKILL_BROKEN / NEEDS_LOGIN), or "".
        seconds: how long the case took, setup and cleanup included.
        result: what the tool returned, when it returned.
        error: the error kind the tool ended with (SKILL_BROKEN, NEEDS_LOGIN, TOOL_ERROR,
            ...), or None.
        unmatched: ``"METHOD URL"`` of every request the HAR could not answer.
    """

    site_id: str
    name: str
    tool: str
    passed: bool
    reason: str = ""
    seconds: float = 0.0
    result: Any = None
    error: str | None = None
    unmatched: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (for ``ego test --json``)."""
        return {
            "site": self.site_id,
            "case": self.name,
            "tool": self.tool,
            "status": "passed" if self.passed else "failed",
            "reason": self.reason,
            "seconds": round(self.seconds, 3),
            "error": self.error,
            "unmatched": self.unmatched,
        }


@dataclass
class LearningTestReport:
    """Every case's result, plus what had no tests at all.

    Attributes:
        results: one per case, in site then file order.
        untested: valid sites that carry no ``tests/cases.json``.
        uncovered: per site with cases, the declared tools no case runs.
        seconds: the whole run.
    """

    results: list[CaseResult] = field(default_factory=list)
    untested: list[str] = field(default_factory=list)
    uncovered: dict[str, list[str]] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        """True when there was at least one case and every case passed."""
        return bool(self.results) and all(result.passed for result in self.results)

    @property
    def failures(self) -> list[CaseResult]:
        """The cases that failed."""
        return [result for result in self.results if not result.passed]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (for ``ego test --json``)."""
        return {
            "passed": self.passed,
            "total": len(self.results),
            "failed": len(self.failures),
            "seconds": round(self.seconds, 3),
            "results": [result.to_dict() for result in self.results],
            "untested": self.untested,
            "uncovered": self.uncovered,
        }

    def format(self) -> str:
        """A human summary: one line per case, then the totals."""
        lines = []
        for result in self.results:
            mark = "PASS" if result.passed else "FAIL"
            line = f"{mark} {result.site_id}/{result.name} ({result.tool}, {result.seconds:.2f} s)"
            if not result.passed:
                line += f"\n     {result.reason}"
            lines.append(line)
        for site_id, tools in self.uncovered.items():
            lines.append(f"NOTE {site_id}: no case runs {', '.join(tools)}")
        if self.untested:
            lines.append(f"NOTE no tests/cases.json in: {', '.join(self.untested)}")
        failed = len(self.failures)
        lines.append(
            f"{len(self.results) - failed} passed, {failed} failed in {self.seconds:.1f} s"
        )
        return "\n".join(lines)


def load_cases(entry: SiteEntry) -> list[LearningCase]:
    """Read and check a site's ``tests/cases.json``; ``[]`` when the site has none.

    Args:
        entry: the site (from :meth:`ego.learning.Learnings.find`).

    Raises:
        InvalidCasesError: the file is not JSON or fails :data:`CASES_SCHEMA`, two cases share
            a name, a case lacks ``har`` or ``url`` (after ``defaults``), or a HAR path leaves
            the site folder or does not exist. ``problems`` lists them all.
    """
    file = entry.directory / CASES_FILE
    if not file.is_file():
        return []
    site_id = entry.site_id
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _invalid(site_id, file, [f"cannot read it as JSON: {exc}"]) from None
    validator = jsonschema.validators.validator_for(CASES_SCHEMA)(CASES_SCHEMA)
    problems = [
        f"{'/'.join(str(p) for p in error.absolute_path) or '(top level)'}: {error.message}"
        for error in sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    ]
    if problems:
        raise _invalid(site_id, file, problems)
    defaults: dict[str, Any] = data.get("defaults", {})
    cases: list[LearningCase] = []
    seen: set[str] = set()
    for index, raw in enumerate(data["cases"]):
        merged = {**defaults, **raw}
        where = f"cases/{index} ({merged['name']!r})"
        if merged["name"] in seen:
            problems.append(f"{where}: another case has the same name")
        seen.add(merged["name"])
        for key in ("har", "url"):
            if key not in merged:
                problems.append(f"{where}: no {key!r} (give it in the case or in defaults)")
        if "har" not in merged or "url" not in merged:
            continue
        try:
            har = resolve_inside(entry.directory, f"tests/{merged['har']}", what=where)
        except UnsafePathError as exc:
            problems.append(str(exc))
            continue
        if not har.is_file():
            problems.append(f"{where}: HAR file tests/{merged['har']} does not exist")
            continue
        cases.append(
            LearningCase(
                site_id=site_id,
                name=merged["name"],
                har=har,
                url=merged["url"],
                tool=merged["tool"],
                args=dict(merged.get("args", {})),
                expect=merged.get("expect", _MISSING),
                expect_subset=merged.get("expect_subset", _MISSING),
                expect_schema=merged.get("expect_schema", _MISSING),
                expect_error=merged.get("expect_error"),
                error_contains=merged.get("error_contains"),
                cookies=tuple(dict(c) for c in merged.get("cookies", ())),
                setup=merged.get("setup"),
                mode=merged.get("mode", "strict"),
                ignore_params=tuple(merged.get("ignore_params", ())),
                timeout=merged.get("timeout"),
                wait_until=merged.get("wait_until", "load"),
                check_returns=merged.get("check_returns", True),
            )
        )
    if problems:
        raise _invalid(site_id, file, problems)
    return cases


def _invalid(site_id: str, file: Path, problems: list[str]) -> InvalidCasesError:
    more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
    return InvalidCasesError(
        f"site {site_id!r}: {file} is invalid: {problems[0]}{more}",
        site_id=site_id,
        problems=problems,
    )


@contextlib.asynccontextmanager
async def isolated_tab(browser: Browser, *, timeout: float = 10.0) -> AsyncIterator[Tab]:
    """A new tab in a browser context of its own, closed (and the context disposed) after.

    Its cookies, localStorage and HTTP cache are its own, so one case cannot leak a session
    or a cached response into the next. Where the browser refuses new contexts (some remote
    endpoints do), a plain new tab is used instead.

    Raises:
        BrowserClosedError, CommandTimeoutError: the browser did not open the tab.
    """
    connection = browser.connection
    context_id: str | None = None

    async def dispose(context: str) -> None:
        await _quietly(
            connection.send(
                "Target.disposeBrowserContext", {"browserContextId": context}, timeout=timeout
            )
        )

    try:
        created = await connection.send(
            "Target.createBrowserContext", {"disposeOnDetach": True}, timeout=timeout
        )
        context_id = str(created["browserContextId"])
        target = await connection.send(
            "Target.createTarget",
            {"url": "about:blank", "browserContextId": context_id},
            timeout=timeout,
        )
        tab = Tab(
            connection,
            str(target["targetId"]),
            url="about:blank",
            default_timeout=browser.default_timeout,
        )
    except ProtocolError:
        if context_id is not None:
            await dispose(context_id)
        context_id = None
        tab = await browser.new_tab()
    try:
        yield tab
    finally:
        await _quietly(asyncio.wait_for(tab.close(), timeout))
        if context_id is not None:
            await dispose(context_id)


async def _quietly(awaitable: Any) -> None:
    # Cleanup after a case must never replace the case's own outcome with a cleanup error.
    with contextlib.suppress(EgoError, TimeoutError):
        await awaitable


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

    Never raises for a failing case: the failure is in the result. Only a closed browser
    (BrowserClosedError) propagates, since no later case could run either.
    """
    started = time.monotonic()
    result = CaseResult(case.site_id, case.name, case.tool, passed=False)
    try:
        _, spec = site.learnings.tool(case.site_id, case.tool)
        har = Har.load(case.har)
    except (EgoError, HarFormatError) as exc:
        result.reason = str(exc)
        result.seconds = time.monotonic() - started
        return result
    tool_timeout = case.timeout or spec.timeout or _DEFAULT_TOOL_TIMEOUT
    # The hard bound of the whole case: each step has its own timeout, this catches the rest.
    bound = navigation_timeout + tool_timeout + 15.0
    try:
        async with isolated_tab(site.browser) as tab:
            replayer = Replayer(
                tab,
                har,
                mode="strict" if case.mode == "strict" else "fail",
                ignore_params=case.ignore_params,
            )
            try:
                await asyncio.wait_for(
                    _run_in_tab(
                        site, case, tab, replayer, result, navigation_timeout, tool_timeout
                    ),
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
    except BrowserClosedError:
        raise
    except EgoError as exc:  # the tab itself could not be opened
        result.passed = False
        result.reason = f"could not open a tab for the case: {exc}"
    result.seconds = time.monotonic() - started
    return result


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
        kind = _error_kind(exc)
        result.error = kind
        message = str(exc)
        if case.expect_error is None:
            result.reason = message if message.startswith(kind) else f"{kind}: {message}"
            return
        if kind != case.expect_error:
            result.reason = f"expected {case.expect_error}, got {kind}: {message}"
            return
        if case.error_contains and case.error_contains not in message:
            result.reason = (
                f"{kind} as expected, but its message lacks {case.error_contains!r}: {message}"
            )
            return
        result.passed = True
        return
    result.result = value
    if case.expect_error is not None:
        result.reason = f"expected {case.expect_error}, but the tool returned {_short(value)}"
        return
    problem = judge(case, value)
    if problem:
        result.reason = problem
        return
    result.passed = True


def judge(case: LearningCase, value: Any) -> str:
    """Check a tool's result against the case's ``expect*``; "" when it passes."""
    if case.expect is not _MISSING:
        difference = _difference(case.expect, value, exact=True)
        if difference:
            return f"result differs from expect {difference}"
    if case.expect_subset is not _MISSING:
        difference = _difference(case.expect_subset, value, exact=False)
        if difference:
            return f"result differs from expect_subset {difference}"
    if case.expect_schema is not _MISSING:
        validator = jsonschema.validators.validator_for(case.expect_schema)(case.expect_schema)
        error = jsonschema.exceptions.best_match(validator.iter_errors(value))
        if error is not None:
            where = "/".join(str(part) for part in error.absolute_path) or "(result)"
            return f"result fails expect_schema at {where}: {error.message}"
    return ""


def _difference(expected: Any, actual: Any, *, exact: bool, path: str = "") -> str:
    """Where ``actual`` first departs from ``expected`` as JSON ("" when it does not).

    With ``exact`` False, objects may hold keys that ``expected`` does not name.
    """
    where = path or "(result)"
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"at {where}: expected an object, got {_short(actual)}"
        for key, value in expected.items():
            if key not in actual:
                return f"at {where}: missing key {key!r}"
            found = _difference(value, actual[key], exact=exact, path=f"{path}/{key}")
            if found:
                return found
        if exact:
            extra = sorted(set(actual) - set(expected))
            if extra:
                return f"at {where}: unexpected key(s) {', '.join(map(repr, extra))}"
        return ""
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return f"at {where}: expected an array, got {_short(actual)}"
        if len(actual) != len(expected):
            return f"at {where}: expected {len(expected)} items, got {len(actual)}"
        for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
            found = _difference(want, got, exact=exact, path=f"{path}/{index}")
            if found:
                return found
        return ""
    if not _same_scalar(expected, actual):
        return f"at {where}: expected {_short(expected)}, got {_short(actual)}"
    return ""


def _same_scalar(expected: Any, actual: Any) -> bool:
    # JSON semantics: true is not 1, and 2 equals 2.0.
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, int | float) and isinstance(actual, int | float):
        return bool(expected == actual or (math.isnan(expected) and math.isnan(actual)))
    return type(expected) is type(actual) and bool(expected == actual)


def _short(value: Any, limit: int = 160) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _error_kind(exc: EgoError) -> str:
    if isinstance(exc, SkillBrokenError):
        return "SKILL_BROKEN"
    if isinstance(exc, NeedsLoginError):
        return "NEEDS_LOGIN"
    if isinstance(exc, JavaScriptError):
        return "TOOL_ERROR"
    if isinstance(exc, CommandTimeoutError):
        return "TIMEOUT"
    return type(exc).__name__


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
    from ..site import Site  # site sits above learning; imported here to keep layers apart

    started = time.monotonic()
    if learnings is None:
        existing = getattr(browser, "site", None)
        learnings = existing.learnings if existing is not None else Learnings()
    site = Site(browser, learnings)
    report = LearningTestReport()
    selected: list[LearningCase] = []
    if site_ids is None:
        entries = learnings.sites()
    else:
        entries = []
        for site_id in site_ids:
            try:
                entries.append(learnings.find(site_id))
            except EgoError as exc:
                report.results.append(CaseResult(site_id, "(site)", "", False, str(exc)))
    for entry in entries:
        if entry.manifest is None:
            if (entry.directory / CASES_FILE).is_file():
                reason = f"the manifest is broken: {'; '.join(entry.problems)}"
                report.results.append(CaseResult(entry.site_id, "(manifest)", "", False, reason))
            continue
        try:
            cases = load_cases(entry)
        except InvalidCasesError as exc:
            reason = f"{exc}" + ("".join(f"\n       - {p}" for p in exc.problems[1:]))
            report.results.append(CaseResult(entry.site_id, "(cases.json)", "", False, reason))
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
