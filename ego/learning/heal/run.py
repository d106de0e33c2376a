"""``ego heal``: turn a tool's failure into a tested candidate version, judged by its old cases.

1. :func:`heal` runs the tool's offline cases with its current version, then the tool live
   in a recorded tab on the site, and compares the exchanges its first case recorded with
   the live ones (:mod:`.compare`), and its selectors with the live page (:mod:`.selectors`).
   For a drafted API tool (``ego suggest``) whose endpoint moved it proposes the new one: the
   live answer whose shape is nearest the recorded one. For a tool drafted from page actions
   whose step's selector went, the step acts on the nearest element's selector first and the
   recorded one after (:mod:`.action_candidate`), and the candidate runs live once, recorded:
   that recording is the new case's. It writes the report and a candidate (:mod:`.candidate`).
2. :func:`check_candidate` runs the old cases and a new case built from the live recording
   against the candidate. An old case the candidate answers differently is a **changed**
   case.
3. :func:`promote` saves the candidate through the save gate (a Python tool's: written once
   the check passed, :mod:`ego.learning.save.python_tool`), refusing changed cases not
   accepted by name; the new case (its ``expect`` the candidate's result) joins the site's
   cases, accepted cases get the candidate's result as their ``expect``, and the tool's
   history keeps the provenance (:func:`ego.learning.plan.history.keep_provenance`).

Running a call is the site's: the site passes the runners in (``Site.heal_tool``).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ...errors import (
    BrowserClosedError,
    CaseRegressionError,
    EgoError,
    InvalidCasesError,
    LearningError,
)
from ...replay.har import Har
from ...replay.recorder import Recorder
from ..cases.format import CASES_FILE, LearningCase, load_cases
from ..cases.judge import error_kind
from ..cases.result import CaseResult
from ..catalog.registry import Learnings
from ..plan.draft import FrontEnd, ToolDraft
from ..plan.history import content_hash, keep_provenance
from ..plan.save_plan import ToolPlan, plan_browser_tool, workspace_root
from ..save.python_tool import PythonPlan, plan_python_tool, write_python_tool
from ..suggest.drafts import install_cases
from ..suggest.safe_paths import REASON as PATH_LEAVES_ORIGIN
from ..suggest.safe_paths import path_problem
from ..suggest.source import read_constants, with_constants
from ..suggest.traffic import STATIC_EXTENSIONS
from .action_candidate import heal_steps
from .candidate import (
    CANDIDATE_JS,
    CANDIDATE_PY,
    CaseOutcome,
    HealCheck,
    HealReport,
    heal_folder,
    read_json,
    remove_heal,
)
from .candidate import write_json as _write
from .compare import Change, ExchangeView, compare_answers, login_like, shape_score, view_of
from .selectors import check_selectors
from .steps import StepWatch

if TYPE_CHECKING:
    from ...page.browser import TabHost
    from ...page.tab import Tab
    from ..save.store import SavedTool

__all__ = ["MIN_SHAPE_SCORE", "Promoted", "check_candidate", "heal", "promote"]

#: The least shape match (:func:`.compare.shape_score`) a live answer needs to be proposed
#: as where a recorded endpoint moved.
MIN_SHAPE_SCORE: Final = 0.5
#: Seconds of network silence that end the live run's recording (after the load, the tool).
_SETTLE: Final = 0.5

RunCases = Callable[[Sequence[LearningCase]], Awaitable[list[CaseResult]]]
LiveRun = Callable[["Tab", dict[str, Any]], Awaitable[Any]]
#: Runs a Python candidate live in a tab: the tab, the args, its file and source.
LiveCandidate = Callable[["Tab", dict[str, Any], Path, str], Awaitable[Any]]
Runner = Callable[
    [Sequence[LearningCase], ToolPlan | PythonPlan | None], Awaitable[list[CaseResult]]
]
Save = Callable[[ToolDraft, set[str]], Awaitable["SavedTool"]]


def _outcome(result: CaseResult) -> CaseOutcome:
    if result.passed:
        return CaseOutcome(result.name, True)
    if result.error is not None:
        kind = result.error
    elif result.unmatched and not result.reason.startswith("result"):
        kind = "unmatched request"
    else:
        kind = "changed result"
    return CaseOutcome(result.name, False, kind, result.reason)


def _api_views(har: Har, indexes: Sequence[int]) -> list[ExchangeView]:
    views = []
    for index in indexes:
        if 0 <= index < len(har.entries):
            view = view_of(har.entries[index])
            if not view.path.lower().endswith(STATIC_EXTENSIONS):
                views.append(view)
    return views


def _live_views(har: Har, start: int) -> tuple[list[ExchangeView], list[ExchangeView]]:
    """The live recording's API answers: the tool's (from ``start``) and all of them."""
    views = [view_of(entry) for entry in har.entries]
    api = [
        v
        for v, entry in zip(views, har.entries, strict=True)
        if (entry.resource_type or "").lower() in ("fetch", "xhr", "")
        and not v.path.lower().endswith(STATIC_EXTENSIONS)
    ]
    return [v for v in views[start:] if v in api], api


def _origin(url: str) -> str:
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0]}"


def _compare(
    recorded: list[ExchangeView], tool_live: list[ExchangeView], all_live: list[ExchangeView]
) -> tuple[list[Change], dict[str, Any] | None]:
    changes: list[Change] = []
    proposal: dict[str, Any] | None = None
    for old in recorded:
        live = next(
            (v for v in tool_live if v.method == old.method and v.path == old.path),
            None,
        )
        if live is None:
            changes.append(Change("not reached", old.label, "the live run never asked it"))
            continue
        if live.status in (401, 403) or (live.redirect and login_like(live.redirect)):
            changes.append(Change("login asked", old.label, f"answered {live.status} live"))
            continue
        if 300 <= live.status < 400 and live.redirect:
            detail = f"now redirects ({live.status}) to {live.redirect}"
            changes.append(Change("redirected", old.label, detail, new=live.redirect))
        elif live.status in (404, 410) or (old.json is not None and live.json is None):
            kind = "endpoint gone" if live.status in (404, 410) else "endpoint refused"
            changes.append(
                Change(kind, old.label, f"answered {live.status} ({live.content_type}) live")
            )
        elif live.status != old.status and live.status >= 400:
            changes.append(
                Change("endpoint refused", old.label, f"answered {live.status}, not {old.status}")
            )
        elif old.json is not None and live.json is not None:
            changes += compare_answers(old.label, old.json, live.json)
            continue
        if old.json is None:
            continue
        found = _nearest(old, all_live)
        if found is not None and proposal is None:
            score, moved = found
            proposal = {"from": old.label, "to": moved.label, "url": moved.url, "score": score}
            changes.append(
                Change(
                    "endpoint moved",
                    old.label,
                    f"the live page gets an answer of the same shape from {moved.label} "
                    f"({score:.0%} alike)",
                    old=old.path,
                    new=moved.path,
                )
            )
            changes += compare_answers(moved.label, old.json, moved.json)
    return changes, proposal


def _nearest(old: ExchangeView, live: list[ExchangeView]) -> tuple[float, ExchangeView] | None:
    best: tuple[float, ExchangeView] | None = None
    for view in live:
        if view.json is None or not 200 <= view.status < 300 or view.method != old.method:
            continue
        if view.path == old.path or _origin(view.url) != _origin(old.url):
            continue
        if path_problem(view.path) is not None:
            continue  # never proposed: the tool would leave the page's origin (heal notes it)
        score = shape_score(old.json, view.json)
        if score >= MIN_SHAPE_SCORE and (best is None or score > best[0]):
            best = (score, view)
    return best


def _template(path: str, args: dict[str, Any]) -> str:
    """``path`` with each segment equal to an arg's value put back as ``{arg}``."""
    segments = path.split("/")
    for name, value in args.items():
        text = str(value)
        segments = ["{" + name + "}" if s == text and text else s for s in segments]
    return "/".join(segments)


def _candidate(
    source: str, changes: list[Change], proposal: dict[str, Any] | None, args: Any
) -> str | None:
    """The drafted tool's source with the proposal applied, or None when it cannot be."""
    constants = read_constants(source)
    if constants is None:
        return None
    renamed = {c.new: c.old for c in changes if c.kind == "field renamed" and c.new and c.old}
    paths = list(constants["PATHS"])
    if proposal is not None:
        moved = next(c for c in changes if c.kind == "endpoint moved")
        assert moved.new is not None
        new = _template(moved.new, args if isinstance(args, dict) else {})
        if path_problem(new) is not None:
            return None
        # The old path first: the old recordings still answer it, and the site that moved
        # answers it 404, on which the tool moves on to the new one.
        if new not in paths:
            paths.append(new)
    if not renamed and paths == constants["PATHS"]:
        return None
    return with_constants(source, PATHS=paths, RENAMED={**constants["RENAMED"], **renamed})


async def _live_run(
    browser: TabHost,
    url: str,
    args: dict[str, Any],
    live: LiveRun,
    run_tool: bool,
    source: str,
    steps: str | None = None,
) -> tuple[dict[str, Any], Har, int, list[Change]]:
    tab = await browser.new_tab()
    info: dict[str, Any] = {"url": url, "ran": run_tool, "ok": False}
    selectors: list[Change] = []
    try:
        recorder = Recorder(tab)
        async with recorder:
            await tab.navigate(url)
            await recorder.wait_idle(quiet=_SETTLE)
            if login_like(tab.url):
                info["redirected_to_login"] = tab.url
            start = len(recorder.har.entries)
            selectors = await check_selectors(tab, source)
            if run_tool:
                # A tool drafted from page actions: which of its steps fails (.steps).
                watch = StepWatch(tab, steps) if steps is not None else None
                try:
                    info["result"] = await live(tab, args)
                    info["ok"] = True
                except BrowserClosedError:
                    raise
                except EgoError as exc:
                    info["error_kind"] = error_kind(exc)
                    info["error"] = str(exc)
                finally:
                    if watch is not None:
                        watch.stop()
                if watch is not None:
                    selectors += await watch.changes()
                await recorder.wait_idle(quiet=_SETTLE)
        return info, recorder.har, start, selectors
    finally:
        with contextlib.suppress(EgoError):
            await tab.close()


async def heal(
    learnings: Learnings,
    browser: TabHost,
    site_id: str,
    tool: str,
    *,
    run_cases: RunCases,
    live: LiveRun,
    url: str | None = None,
    confirm: bool = False,
    live_candidate: LiveCandidate | None = None,
) -> HealReport:
    """Diagnose ``site_id``/``tool`` and open a candidate version (see the module doc).

    Args:
        learnings: the roots.
        browser: where the live run happens (a tab of the browser's own profile).
        site_id, tool: the tool.
        run_cases: runs cases with the tool's current version.
        live: runs the tool live in a tab with args.
        url: the page for the live run (default: the first case's, else the start URL).
        confirm: run an irreversible tool live.
        live_candidate: runs a Python tool's candidate live (a tool drafted from page
            actions); without it the candidate is written but not run.

    Raises:
        UnknownSiteError, UnknownToolError: no such tool.
        WorkspaceRequiredError: no workspace to keep the candidate in.
    """
    entry, spec = learnings.tool(site_id, tool)
    manifest = entry.require()
    folder = heal_folder(learnings, site_id, tool)
    browser_tool = tool in manifest.browser_tools
    source = (entry.directory / spec.path).read_text(encoding="utf-8") if browser_tool else ""
    report = HealReport(site_id, tool, content_hash(source.encode()) if source else "")
    report.folder = str(folder)
    try:
        cases = [c for c in load_cases(entry) if c.tool == tool]
    except InvalidCasesError as exc:
        cases = []
        report.notes.append(f"the cases could not be read: {exc}")
    results = await run_cases(cases) if cases else []
    report.cases = [_outcome(r) for r in results]
    if not cases:
        report.notes.append("the tool has no offline cases: nothing recorded to compare with")
    first = cases[0] if cases else None
    page = url or (first.url if first else None) or manifest.start_url
    args = dict(first.args) if first else {}
    run_tool = spec.side_effect != "irreversible" or confirm
    if not run_tool:
        report.notes.append("the live run loaded the page only: the tool is irreversible (confirm)")
    folder.mkdir(parents=True, exist_ok=True)
    changes: list[Change] = []
    proposal = None
    # A Python tool's steps are watched, their comments naming the elements recorded.
    steps = (
        (entry.directory / spec.path).read_text(encoding="utf-8")
        if tool in manifest.python_tools
        else None
    )
    if page is None:
        report.notes.append("no page to run it on live: give --url")
    else:
        info, har, start, selectors = await _live_run(
            browser, page, args, live, run_tool, source, steps=steps
        )
        har.save(folder / "live.har")
        tool_live, all_live = _live_views(har, start)
        info["requests"] = [f"{v.method} {v.url} -> {v.status}" for v in tool_live]
        report.notes += [
            f"not proposed as an endpoint: {v.label}: {PATH_LEAVES_ORIGIN}: {problem}"
            for v in all_live
            if (problem := path_problem(v.path)) is not None
        ]
        report.live = info
        if info.get("redirected_to_login") or info.get("error_kind") == "NEEDS_LOGIN":
            changes.append(Change("login asked", page, "the live site asks for a login"))
        if first is not None and results:
            recorded = _api_views(Har.load(first.har), results[0].tool_entries)
            found, proposal = _compare(recorded, tool_live, all_live)
            changes += found
        changes += selectors
        _write(folder / "new-case.json", _new_case(tool, page, args, spec.returns))
    report.changes = [c.as_dict() for c in changes]
    report.proposal = proposal
    if steps is not None:
        await _heal_steps(report, folder, steps, changes, page, args, browser, live_candidate)
    elif not browser_tool:
        report.candidate = "none"
    else:
        proposed = _candidate(source, changes, proposal, args)
        report.candidate = "proposed" if proposed is not None else "copy"
        (folder / CANDIDATE_JS).write_text(proposed or source, encoding="utf-8")
        if proposed is None and (proposal or changes):
            report.notes.append(
                "not a drafted API tool (or nothing to apply): candidate.js is the current "
                "source; edit it with the changes above"
            )
    _write(folder / "report.json", report.as_dict())
    return report


async def _heal_steps(
    report: HealReport,
    folder: Path,
    source: str,
    changes: list[Change],
    page: str | None,
    args: dict[str, Any],
    browser: TabHost,
    live_candidate: LiveCandidate | None,
) -> None:
    """A tool drafted from page actions: its candidate (the broken step's selector healed,
    :mod:`.action_candidate`) written and run live once, recorded; that recording replaces
    the failed run's as the new case's."""
    report.file = CANDIDATE_PY
    healed = heal_steps(source, changes)
    report.notes += [f"not healed: {why}" for why in healed.left]
    proposed = healed.source
    if proposed is None:
        report.candidate = "none"
        if changes:
            report.notes.append("no step could be healed: edit the tool's file")
        return
    report.candidate = "proposed"
    file = folder / CANDIDATE_PY
    file.write_text(proposed, encoding="utf-8")
    if page is None or live_candidate is None or not report.live.get("ran"):
        report.notes.append("the candidate did not run live: --check judges it by its old cases")
        (folder / "new-case.json").unlink(missing_ok=True)
        return

    async def run(tab: Tab, given: dict[str, Any]) -> Any:
        return await live_candidate(tab, given, file, proposed)

    info, har, _, _ = await _live_run(browser, page, args, run, True, "")
    har.save(folder / "live.har")
    report.candidate_live = info
    if not info.get("ok"):
        report.notes.append(
            "the candidate failed live too; --check and --promote will say so (or edit "
            f"{CANDIDATE_PY})"
        )


def _new_case(
    tool: str, url: str, args: dict[str, Any], returns: dict[str, Any] | bool | None
) -> dict[str, Any]:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    case: dict[str, Any] = {
        "name": f"{tool}: live recording {stamp}",
        "har": f"heal-{tool}-{stamp}.har",
        "url": url,
        "tool": tool,
        "args": args,
        "mode": "fail",
    }
    if isinstance(returns, dict):
        case["expect_schema"] = returns
    return case


def _case_of(site_id: str, data: dict[str, Any], har: Path) -> LearningCase:
    return LearningCase(
        site_id=site_id,
        name=str(data["name"]),
        har=har,
        url=str(data["url"]),
        tool=str(data["tool"]),
        args=dict(data.get("args") or {}),
        expect_schema=data.get("expect_schema", {}),
        mode=str(data.get("mode", "strict")),
    )


def _plan(
    learnings: Learnings, site_id: str, tool: str, source: str, front_end: FrontEnd, file: str
) -> tuple[ToolDraft, ToolPlan | PythonPlan]:
    draft = ToolDraft(site_id=site_id, tool=tool, source=source, front_end=front_end)
    if file == CANDIDATE_PY:
        return draft, plan_python_tool(learnings, draft)
    return draft, plan_browser_tool(learnings, draft)


def _candidate_source(folder: Path, report: HealReport, site_id: str, tool: str) -> str:
    """The candidate's source.

    Raises:
        LearningError: the heal wrote none (nothing to edit: see its report).
    """
    try:
        return (folder / report.file).read_text(encoding="utf-8")
    except OSError:
        raise LearningError(
            f"no candidate for {site_id}/{tool} ({report.file} missing): the heal found "
            "nothing to change; edit the tool's file (see its report)"
        ) from None


async def check_candidate(
    learnings: Learnings, site_id: str, tool: str, runner: Runner, front_end: FrontEnd = "python"
) -> HealCheck:
    """Run the old cases and the new one against the candidate (see the module doc).

    Raises:
        LearningError: no candidate is open for the tool.
        SaveRefusedError: the candidate would not save.
    """
    folder = heal_folder(learnings, site_id, tool)
    report = HealReport.from_dict(read_json(folder / "report.json", site_id, tool))
    source = _candidate_source(folder, report, site_id, tool)
    _, plan = _plan(learnings, site_id, tool, source, front_end, report.file)
    entry = learnings.find(site_id)
    old = [c for c in load_cases(entry) if c.tool == tool]
    cases = list(old)
    new_data = None
    if (folder / "new-case.json").is_file() and (folder / "live.har").is_file():
        new_data = read_json(folder / "new-case.json", site_id, tool)
        cases.append(_case_of(site_id, new_data, folder / "live.har"))
    results = await runner(cases, plan)
    check = HealCheck(site_id, tool)
    for case, result in zip(cases, results, strict=True):
        outcome = _outcome(result)
        if result.error is None:
            check.results[case.name] = result.result
        if new_data is not None and case.name == new_data["name"]:
            check.new = outcome
        else:
            check.old.append(outcome)
            if outcome.kind == "changed result":
                check.changed.append(case.name)
    _write(folder / "check.json", check.as_dict())
    return check


@dataclass(frozen=True)
class Promoted:
    """What ``ego heal --promote`` did.

    Attributes:
        saved: the save (file, hash, the replaced version's history id, cases the gate ran).
        provenance: what the tool's history keeps of the heal.
        cases_file: the site's cases file, with the new case (and accepted changes).
    """

    saved: SavedTool
    provenance: dict[str, Any]
    cases_file: Path

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "saved": self.saved.as_dict(),
            "provenance": self.provenance,
            "cases_file": str(self.cases_file),
        }


async def promote(
    learnings: Learnings,
    site_id: str,
    tool: str,
    *,
    runner: Runner,
    save: Save,
    accept_changed_cases: Sequence[str] = (),
    front_end: FrontEnd = "python",
) -> Promoted:
    """Check the candidate, save it through the gate, and keep its provenance.

    Raises:
        LearningError: no candidate is open.
        CaseRegressionError: the candidate fails an old case, changes one not accepted, or
            fails the new case; nothing was written.
        SaveRefusedError, BrowserError: as the save.
    """
    folder = heal_folder(learnings, site_id, tool)
    report = HealReport.from_dict(read_json(folder / "report.json", site_id, tool))
    check = await check_candidate(learnings, site_id, tool, runner, front_end)
    accepted = set(accept_changed_cases)
    _refuse_unless_fit(site_id, tool, check, accepted, front_end)
    source = _candidate_source(folder, report, site_id, tool)
    draft, plan = _plan(learnings, site_id, tool, source, front_end, report.file)
    taken = accepted & set(check.changed)
    if isinstance(plan, PythonPlan):
        # Its gate is the check above: every old case and the live one ran on its file.
        saved = write_python_tool(plan)
    else:
        saved = await save(replace(draft, force=bool(taken)), taken)
    installs: list[tuple[dict[str, Any], Path]] = []
    new_name = None
    if check.new is not None:
        new_case = read_json(folder / "new-case.json", site_id, tool)
        new_case.pop("expect_schema", None)
        new_case["expect"] = check.results.get(new_case["name"])
        new_name = new_case["name"]
        installs.append((new_case, folder / "live.har"))
    cases_file = workspace_root(learnings) / site_id / CASES_FILE
    if taken:
        _accept(cases_file, taken, check.results)
    if installs:
        cases_file = install_cases(learnings, site_id, installs)
    provenance = {
        "healed_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "replaced_version": saved.previous_version,
        "replaced_hash": report.version,
        "failed": {
            "cases": [vars(c) for c in report.failing],
            "live": {k: v for k, v in report.live.items() if k != "result"},
        },
        "changed": report.changes,
        "proposal": report.proposal,
        "cases_passed": [c.name for c in check.old if c.passed]
        + ([check.new.name] if check.new is not None and check.new.passed else []),
        "accepted_changed_cases": sorted(taken),
        "new_case": new_name,
    }
    kind = "python" if isinstance(plan, PythonPlan) else "browser"
    keep_provenance(workspace_root(learnings) / site_id, tool, saved.hash, provenance, kind)
    remove_heal(folder)
    return Promoted(saved, provenance, cases_file)


def _refuse_unless_fit(
    site_id: str, tool: str, check: HealCheck, accepted: set[str], front_end: FrontEnd
) -> None:
    flag = {"cli": "--accept-changed-cases", "mcp": "accept_changed_cases"}.get(
        front_end, "accept_changed_cases="
    )
    problems = []
    for case in check.old:
        if case.passed:
            continue
        if case.kind == "changed result" and case.name in accepted:
            continue
        if case.kind == "changed result":
            problems.append(
                f"the candidate changes the expected result of old case {case.name!r} "
                f"({case.reason}); accept it by name with {flag}"
            )
        else:
            problems.append(
                f"the candidate fails old case {case.name!r}: {case.kind}: {case.reason}"
            )
    if check.new is not None and not check.new.passed:
        problems.append(f"the candidate fails the live recording's case: {check.new.reason}")
    if problems:
        raise CaseRegressionError(
            f"not promoted {site_id}/{tool}: {problems[0]}"
            + (f" (+{len(problems) - 1} more)" if len(problems) > 1 else "")
            + "; nothing was written",
            site_id=site_id,
            name=tool,
            problems=problems,
            cases=[c.name for c in check.old if not c.passed],
        )


def _accept(cases_file: Path, names: set[str], results: dict[str, Any]) -> None:
    data = json.loads(cases_file.read_text(encoding="utf-8"))
    for case in data.get("cases", []):
        if case.get("name") in names:
            for key in ("expect_subset", "expect_schema"):
                case.pop(key, None)
            case["expect"] = results.get(case["name"])
    _write(cases_file, data)
