"""The two ends of the learning loop on a browser: keeping a drafted tool (``ego suggest``)
and healing a tool that stopped working (``ego heal``). The analysis is the learning layer's
(:mod:`ego.learning.suggest`, :mod:`ego.learning.heal`); running cases, live calls and saves
through the one call path is the site's, so it lives here."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..calls import CallOptions, case_call
from .saving import Saving

if TYPE_CHECKING:
    from ..learning.cases.format import LearningCase
    from ..learning.cases.result import CaseResult
    from ..learning.cases.verdict import GateReport
    from ..learning.catalog.registry import LoadedSource
    from ..learning.heal import HealCheck, HealReport, Promoted
    from ..learning.plan.draft import FrontEnd
    from ..learning.plan.save_plan import ToolPlan
    from ..learning.save import store as _store
    from ..learning.save.python_tool import PythonPlan
    from ..learning.suggest import Draft
    from ..page.tab import Tab

__all__ = ["Loop"]


def _draft_source(draft: Draft, plan: ToolPlan) -> LoadedSource:
    """The draft's source as its cases run it: named by the draft's own file (the tool's
    file in the site does not exist until it is saved), so an error names where it is."""
    from dataclasses import replace

    from ..learning.cases.gate import candidate_source

    return replace(candidate_source(plan), file=draft.folder / f"{draft.tool}.js")


class Loop(Saving):
    """Drafts kept and tools healed: a base of :class:`ego.site.Site`, which documents it."""

    async def run_cases(
        self,
        cases: Sequence[LearningCase],
        plan: ToolPlan | None = None,
        source: LoadedSource | None = None,
    ) -> list[CaseResult]:
        """Run offline cases, each in a tab of its own on its recording.

        Args:
            cases: the cases.
            plan: a planned save whose new source the cases run (with ``source``); None runs
                each case's tool as it is now.
            source: the planned save's source (:func:`~ego.learning.cases.gate.candidate_source`).

        Returns:
            How each case went (not recorded in the tool's health).
        """
        from ..learning.cases.replayed import DEFAULT_TOOL_TIMEOUT, run_replayed
        from ..learning.health.origin import unrecorded

        results = []
        candidate = (plan, source) if plan is not None and source is not None else None
        with unrecorded():
            for case in cases:
                timeout = case.timeout or DEFAULT_TOOL_TIMEOUT

                async def invoke(tab: Tab, seconds: float, case: LearningCase = case) -> Any:
                    call = case_call(self.learnings, case, seconds, candidate)
                    return await self.run_call(call, tab)

                results.append(await run_replayed(self.browser, case, invoke, tool_timeout=timeout))
        return results

    # -- drafts -------------------------------------------------------------------------------

    def _draft_plan(
        self,
        draft: Draft,
        *,
        description: str | None,
        side_effect: Literal["read", "write", "irreversible"] | None,
        name: str | None,
        front_end: FrontEnd,
    ) -> tuple[Any, ToolPlan]:
        from ..learning.plan.save_plan import plan_browser_tool

        tool_draft = draft.tool_draft(
            description=description, side_effect=side_effect, name=name, front_end=front_end
        )
        return tool_draft, plan_browser_tool(self.learnings, tool_draft, page_url=draft.start_url)

    async def check_draft(self, site_id: str, tool: str) -> list[CaseResult]:
        """Run a drafted tool's offline cases against its source, without saving it.

        Raises:
            LearningError: no such draft.
            SaveRefusedError: the draft would not save (bad source, schemas).
        """
        from ..learning.suggest import load_draft

        draft = load_draft(self.learnings, site_id, tool)
        if draft.kind == "python":  # drafted from page actions (ego.site.python_drafts)
            from .python_drafts import check_python_draft

            return await check_python_draft(self, draft)
        _, plan = self._draft_plan(
            draft, description=None, side_effect=None, name=None, front_end="python"
        )
        return await self.run_cases(draft.learning_cases(), plan, _draft_source(draft, plan))

    async def save_draft(
        self,
        site_id: str,
        tool: str,
        *,
        description: str | None = None,
        side_effect: Literal["read", "write", "irreversible"] | None = None,
        name: str | None = None,
        front_end: FrontEnd = "python",
    ) -> _store.SavedTool:
        """Keep a tool ``ego suggest`` drafted: through the save gate, with its cases (a
        Python tool drafted from page actions: :mod:`ego.site.python_drafts`).

        The save is :meth:`save_tool`'s (every check, the site's own cases of the tool); the
        gate also runs the draft's offline cases against its source, and one that fails
        refuses the save. Once kept, the cases and their HARs go to the site's ``tests/``
        (``ego test`` runs them) and the draft is removed. A site with no learning yet is
        created from the drafted manifest.

        Args:
            site_id, tool: the draft (``ego suggest`` lists them).
            description: a better description than the drafted one.
            side_effect: ``"write"`` for a call that changes state but can be undone (a
                drafted write is ``"irreversible"`` until said otherwise), or ``"read"``.
            name: a new site's display name.
            front_end: whose words a refusal uses.

        Raises:
            LearningError: no such draft.
            SaveRefusedError: a check failed, or a draft case fails (reason ``"cases"``);
                nothing was written.
            ForeignRequestError: a case sent a request to another origin than its page.
            CaseRegressionError: the tool existed and the draft breaks its cases.
            BrowserError: the browser failed during the checks.
        """
        from ..learning.cases.gate import check_origins
        from ..learning.cases.verdict import CaseCheck, GateReport
        from ..learning.catalog.naming import refuse
        from ..learning.save import tool as _save
        from ..learning.suggest import load_draft
        from ..learning.suggest.drafts import install_cases, remove_draft

        draft = load_draft(self.learnings, site_id, tool)
        if draft.kind == "python":  # drafted from page actions (ego.site.python_drafts)
            from .python_drafts import save_python_draft

            return await save_python_draft(
                self,
                draft,
                description=description,
                side_effect=side_effect,
                name=name,
                front_end=front_end,
            )
        tool_draft, _ = self._draft_plan(
            draft, description=description, side_effect=side_effect, name=name, front_end=front_end
        )
        cases = draft.learning_cases()

        async def gate(plan: ToolPlan) -> GateReport | None:
            own = await self._gate(plan)
            results = await self.run_cases(cases, plan, _draft_source(draft, plan))
            check_origins(site_id, tool, results, front_end)
            failed = [r for r in results if not r.passed]
            if failed:
                raise refuse(
                    site_id,
                    tool,
                    "cases",
                    [f"draft case {r.name!r} fails: {r.reason}" for r in failed],
                )
            checks = tuple(own.cases) if own is not None else ()
            checks += tuple(CaseCheck(r.name, True) for r in results)
            return GateReport(checks, forced=False, problem=own.problem if own else "")

        saved = await _save.save_browser_tool(
            self.learnings,
            self.browser,
            tool_draft,
            profile=self.profile_description,
            gate=gate,
            page_url=draft.start_url,
        )
        folder = draft.folder / "tests"
        install_cases(
            self.learnings, site_id, [(case, folder / str(case["har"])) for case in draft.cases]
        )
        remove_draft(draft)
        return saved

    # -- healing ------------------------------------------------------------------------------

    async def heal_tool(
        self, site_id: str, tool: str, *, confirm: bool = False, url: str | None = None
    ) -> HealReport:
        """Find out why a tool fails and open a candidate version (``ego heal SITE TOOL``).

        Runs the tool's offline cases, then the tool live in a recorded tab on the site (on
        the first case's page, or ``url``), and compares what the tool asked and got then
        with what its cases recorded: an endpoint now 404 or redirected, JSON fields
        renamed, added or gone, a selector that no longer matches, a login now asked. For an
        API tool whose endpoint moved it proposes the new one, found by the shape of the
        recorded answer in the live recording. The report and the candidate are kept beside
        the site's drafts (:mod:`ego.learning.heal`).

        Args:
            site_id, tool: the tool.
            confirm: allow the live run of an irreversible tool.
            url: the page to run it on live (default: its first case's, else the start URL).

        Raises:
            UnknownSiteError, UnknownToolError: no such tool.
            WorkspaceRequiredError: no workspace to keep the candidate in.
        """
        from ..learning.heal import heal

        async def live(tab: Tab, args: dict[str, Any]) -> Any:
            options = CallOptions(confirm=confirm)
            return await self.run_call(self.prepare(site_id, tool, args, options), tab)

        async def live_candidate(tab: Tab, args: dict[str, Any], file: Path, source: str) -> Any:
            from ..learning.health.origin import unrecorded
            from ..learning.plan.draft import ToolDraft
            from ..learning.save.python_tool import plan_python_tool
            from .python_drafts import load_run, planned_call

            draft = ToolDraft(site_id=site_id, tool=tool, source=source)
            plan = plan_python_tool(self.learnings, draft)
            function = load_run(site_id, tool, file, source)
            options = CallOptions(confirm=confirm, check_returns=True)
            with unrecorded():  # the candidate is no version of the tool: no health of it
                return await self.run_call(planned_call(self, plan, function, args, options), tab)

        return await heal(
            self.learnings,
            self.browser,
            site_id,
            tool,
            run_cases=self.run_cases,
            live=live,
            url=url,
            confirm=confirm,
            live_candidate=live_candidate,
        )

    async def check_candidate(self, site_id: str, tool: str) -> HealCheck:
        """Run the tool's old cases and the new case of the live recording against the
        candidate ``heal_tool`` opened (``ego heal SITE TOOL --check``).

        Raises:
            LearningError: no candidate is open for the tool.
            SaveRefusedError: the candidate would not save.
        """
        from ..learning.heal import check_candidate

        return await check_candidate(self.learnings, site_id, tool, self._candidate_runner)

    async def promote_candidate(
        self,
        site_id: str,
        tool: str,
        *,
        accept_changed_cases: Sequence[str] = (),
        front_end: FrontEnd = "python",
    ) -> Promoted:
        """Save the candidate through the gate (``ego heal SITE TOOL --promote``), with what
        failed, what changed and which cases passed kept in the tool's history; the new
        case joins the site's cases. ``restore_tool`` still rolls back.

        Args:
            site_id, tool: the tool.
            accept_changed_cases: old cases whose expected result the candidate may change
                (their ``expect`` becomes the candidate's result); any other changed one
                refuses the promotion.
            front_end: whose words a refusal uses.

        Raises:
            LearningError: no candidate is open.
            CaseRegressionError: the candidate changes cases not accepted, or fails one.
            SaveRefusedError, BrowserError: as :meth:`save_tool`.
        """
        from ..learning.heal import promote

        async def save(draft: Any, accepted: set[str]) -> _store.SavedTool:
            from ..learning.cases.verdict import refusal
            from ..learning.save import tool as _save

            async def gate(plan: ToolPlan) -> GateReport | None:
                report = await self._gate(plan)
                if report is not None and {c.name for c in report.broken} - accepted:
                    raise refusal(report, draft)
                return report

            return await _save.save_browser_tool(
                self.learnings, self.browser, draft, profile=self.profile_description, gate=gate
            )

        return await promote(
            self.learnings,
            site_id,
            tool,
            runner=self._candidate_runner,
            save=save,
            accept_changed_cases=accept_changed_cases,
            front_end=front_end,
        )

    async def _candidate_runner(
        self, cases: Sequence[LearningCase], plan: ToolPlan | PythonPlan | None
    ) -> list[CaseResult]:
        from ..learning.cases.gate import candidate_source
        from ..learning.save.python_tool import PythonPlan

        if isinstance(plan, PythonPlan):  # a tool drafted from page actions
            from ..learning.heal import CANDIDATE_PY, heal_folder
            from .python_drafts import load_run, run_python_cases

            file = heal_folder(self.learnings, plan.site_id, plan.tool) / CANDIDATE_PY
            function = load_run(plan.site_id, plan.tool, file, plan.source)
            return await run_python_cases(self, plan, function, cases)
        source = candidate_source(plan) if plan is not None else None
        return await self.run_cases(cases, plan, source)
