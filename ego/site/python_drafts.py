"""Keeping a Python tool drafted from page actions (``ego suggest --actions``) through the
save gate: its offline cases run against the draft's own file, each in a tab of its own on
its recording (the tool drives the tab; every request, the pages' too, is answered by the
HAR), and one that fails refuses the save. :meth:`ego.site.Site.save_draft` and
:meth:`~ego.site.Site.check_draft` come here for a draft whose ``kind`` is ``"python"``;
healing such a tool (:class:`ego.site.loop.Loop`) runs its candidate the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..calls import CallOptions, ToolCall, ToolRef
from ..learning.catalog.loading import compile_tool_module, run_of
from ..learning.catalog.sites import SiteEntry

if TYPE_CHECKING:
    from ..learning.cases.format import LearningCase
    from ..learning.cases.result import CaseResult
    from ..learning.plan.draft import FrontEnd
    from ..learning.save import store as _store
    from ..learning.save.python_tool import PythonPlan
    from ..learning.suggest import Draft
    from ..page.tab import Tab
    from .loop import Loop

__all__ = [
    "check_python_draft",
    "load_run",
    "planned_call",
    "run_python_cases",
    "save_python_draft",
]


def _plan(
    site: Loop,
    draft: Draft,
    *,
    description: str | None,
    side_effect: Literal["read", "write", "irreversible"] | None,
    name: str | None,
    front_end: FrontEnd,
) -> PythonPlan:
    from ..learning.save.python_tool import plan_python_tool

    tool_draft = draft.tool_draft(
        description=description, side_effect=side_effect, name=name, front_end=front_end
    )
    return plan_python_tool(site.learnings, tool_draft, page_url=draft.start_url)


def load_run(site_id: str, tool: str, file: Path, source: str) -> Callable[..., Any]:
    """The ``run`` of a Python tool not saved yet (a draft, a heal candidate), compiled from
    ``source`` as the file ``file`` (so an error names it).

    Raises:
        ToolLoadError: it fails to import, or defines no ``run``.
    """
    module = compile_tool_module("ego_drafts", site_id, tool, file, source)
    return run_of(module, f"{site_id}/{tool}", file)


def planned_call(
    site: Loop, plan: PythonPlan, function: Callable[..., Any], args: Any, options: CallOptions
) -> ToolCall:
    """A call of the planned Python tool's ``function`` (not saved yet) with ``args``.

    Raises:
        ToolArgsError: ``args`` do not fit its schema.
    """
    spec = plan.parsed.python_tools[plan.tool]
    entry = (
        SiteEntry(plan.site_id, plan.workspace, plan.workspace / plan.site_id, plan.parsed, None)
        if plan.base == "new"
        else site.learnings.find(plan.site_id)
    )
    ref = ToolRef(plan.site_id, plan.tool, entry, plan.parsed, spec, options)
    checked, embedded = site.learnings.checked_args(plan.site_id, spec, args)
    return ToolCall(ref, checked, None, function, embedded)


async def run_python_cases(
    site: Loop, plan: PythonPlan, function: Callable[..., Any], cases: Sequence[LearningCase]
) -> list[CaseResult]:
    """Run offline cases against a planned Python tool's ``function``, each in a tab of its
    own on its recording (not recorded in the tool's health)."""
    from ..learning.cases.replayed import DEFAULT_TOOL_TIMEOUT, run_replayed
    from ..learning.health.origin import unrecorded

    results = []
    with unrecorded():
        for case in cases:
            timeout = case.timeout or DEFAULT_TOOL_TIMEOUT

            async def invoke(tab: Tab, seconds: float, case: LearningCase = case) -> Any:
                options = CallOptions(
                    seconds, True, case.check_returns and case.expect_error is None
                )
                call = planned_call(site, plan, function, case.args, options)
                return await site.run_call(call, tab)

            results.append(await run_replayed(site.browser, case, invoke, tool_timeout=timeout))
    return results


def _draft_run(draft: Draft) -> Callable[..., Any]:
    return load_run(draft.site_id, draft.tool, draft.source_file, draft.source)


async def check_python_draft(site: Loop, draft: Draft) -> list[CaseResult]:
    """Run a drafted Python tool's offline cases against its file, without saving it.

    Raises:
        SaveRefusedError: the draft would not save (source, schemas, manifest).
        ToolLoadError: its file fails to import.
    """
    plan = _plan(site, draft, description=None, side_effect=None, name=None, front_end="python")
    return await run_python_cases(site, plan, _draft_run(draft), draft.learning_cases())


async def save_python_draft(
    site: Loop,
    draft: Draft,
    *,
    description: str | None,
    side_effect: Literal["read", "write", "irreversible"] | None,
    name: str | None,
    front_end: FrontEnd,
) -> _store.SavedTool:
    """Keep a drafted Python tool: checked, its cases run against its file (one that fails
    refuses the save), written, its cases and HARs into the site's ``tests/``, the draft
    removed.

    Raises:
        SaveRefusedError: a check failed, or a case fails (reason ``"cases"``); nothing was
            written.
        ForeignRequestError: a case sent a request to another origin than its page.
        ToolLoadError: its file fails to import.
    """
    from dataclasses import replace

    from ..learning.cases.gate import check_origins
    from ..learning.cases.verdict import CaseCheck, GateReport
    from ..learning.catalog.naming import refuse
    from ..learning.save.python_tool import write_python_tool
    from ..learning.suggest.drafts import install_cases, remove_draft

    plan = _plan(
        site,
        draft,
        description=description,
        side_effect=side_effect,
        name=name,
        front_end=front_end,
    )
    results = await run_python_cases(site, plan, _draft_run(draft), draft.learning_cases())
    check_origins(draft.site_id, draft.tool, results, front_end)
    failed = [r for r in results if not r.passed]
    if failed:
        raise refuse(
            draft.site_id,
            draft.tool,
            "cases",
            [f"draft case {r.name!r} fails: {r.reason}" for r in failed],
        )
    saved = write_python_tool(plan)
    folder = draft.folder / "tests"
    install_cases(
        site.learnings,
        draft.site_id,
        [(case, folder / str(case["har"])) for case in draft.cases],
    )
    remove_draft(draft)
    report = GateReport(tuple(CaseCheck(r.name, True) for r in results))
    return replace(saved, cases=report)
