"""Keeping what an agent learned: browser tools (gated by their offline cases), notes, and a
tool's kept versions. The work is the learning layer's; this is the Site's door to it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from ..calls import case_call
from .running import Running

if TYPE_CHECKING:
    # Saving's modules are imported where they are used: a tool call (and a command that
    # makes one) does not pay for them.
    from ..learning.cases.format import LearningCase
    from ..learning.cases.verdict import GateReport
    from ..learning.catalog.registry import LoadedSource
    from ..learning.plan.draft import ToolDraft
    from ..learning.plan.history import ToolVersion
    from ..learning.plan.save_plan import ToolPlan
    from ..learning.save import notes as _notes
    from ..learning.save import store as _store
    from ..page.tab import Tab

__all__ = ["Saving"]


class Saving(Running):
    """Saving, notes and tool history: the base of :class:`ego.site.Site`, which documents it."""

    async def save_browser_tool(
        self,
        site_id: str,
        tool: str,
        source: str,
        description: str | None = None,
        args: dict[str, Any] | None = None,
        returns: dict[str, Any] | bool | None = None,
        side_effect: Literal["read", "write", "irreversible"] | None = None,
        *,
        auth: Literal["none", "session"] | None = None,
        domains: Sequence[str] | None = None,
        tab: Tab | None = None,
        try_args: dict[str, Any] | None = None,
        name: str | None = None,
        clear: Sequence[str] = (),
        force: bool = False,
    ) -> _store.SavedTool:
        """Keep a browser tool that worked, in the agent workspace's learnings.

        Nothing is written unless every check passes: valid site id and tool name, no
        snapshot-only references in the source, valid args/returns schemas and manifest, the
        source parses in the browser (compiled, not run, in a fresh about:blank tab), and with
        ``try_args`` one plain run in the page that neither throws nor signals. A site that
        is new gets a folder and manifest (domains from the tab's host, with its port, unless
        given); a site that exists only in the project is copied into the workspace first
        (the copy shadows it; the project is never modified). A replaced tool's previous
        version is kept (see :meth:`tool_history`). :meth:`learn_context` lists the tool at
        once, and its next run stores the new source in the page's localStorage (its content
        hash changed).

        When the site carries offline cases for the tool (``tests/cases.json``), they run
        against the new source on their recordings first; a case that passes with the
        current version and fails with the new one refuses the save (``force`` saves
        anyway). The result's ``cases`` says which ran and how they went.

        Saving a tool the site already has changes only what is given: every argument left
        at None keeps the tool's current value (and keys this call cannot name, such as
        ``timeout``, stay); ``clear`` removes a field explicitly.

        Args:
            site_id: the site's id (its folder name), e.g. ``"x-com"``.
            tool: the tool's name, an identifier.
            source: the JavaScript: ``async (args) => {...}``, ``async function (args)
                {...}``, or a module with ``export default async function``.
            description: what the tool does; required for a new tool, None keeps an
                existing tool's.
            args: compact ``{name: {type, required, description}}`` or a full JSON Schema;
                None keeps the tool's args (a new tool takes none).
            returns: a JSON Schema for the result; None keeps the tool's (a new tool has
                none).
            side_effect: ``"read"``, ``"write"`` or ``"irreversible"``; None keeps the tool's
                (a new tool is ``"read"``).
            auth: ``"session"`` when the tool needs the logged-in session; None keeps the
                tool's (a new tool is ``"none"``).
            domains: the site's domains (a new site defaults to the tab's host, with its
                port when the URL names one). A bare ``localhost``, ``127.0.0.1`` or
                ``[::1]`` without a port is refused as too broad.
            tab: the tab the tool was found in; ``try_args`` runs there. By default an open
                tab on the site's domains.
            try_args: run the tool once with these args before keeping it.
            name: the site's display name (a new site defaults to its id).
            clear: fields to remove from the tool's entry: ``"args"`` (then it takes no
                args), ``"returns"``, ``"timeout"``.
            force: save even if the new source breaks offline cases of the tool that pass
                with its current version (``cases.broken`` in the result names them).

        Returns:
            What was written (file, whether the site was created or shadowed, the history id
            of the replaced version, what changed, the try run's result, the offline cases
            run).

        Raises:
            WorkspaceRequiredError: no workspace (set EGO_WORKSPACE or pass workspace=).
            SaveRefusedError: a check failed; nothing was written (``reason``, ``problems``).
            SnapshotReferenceError: the source uses snapshot refs or pixel coordinates.
            CaseRegressionError: the new source fails offline cases that pass with the
                current version (``cases`` names them); nothing was written.
            BrowserError: the browser failed during the checks; nothing was written.
            OSError: the write failed; the site stays consistent.
        """
        from ..learning.plan.draft import ToolDraft

        draft = ToolDraft(
            site_id=site_id,
            tool=tool,
            source=source,
            description=description,
            args=args,
            returns=returns,
            side_effect=side_effect,
            auth=auth,
            domains=domains,
            try_args=try_args,
            name=name,
            clear=tuple(clear) if not isinstance(clear, str) else (clear,),
            force=force,
        )
        return await self.save_tool(draft, tab=tab)

    async def save_tool(self, draft: ToolDraft, *, tab: Tab | None = None) -> _store.SavedTool:
        """Keep a browser tool described by a ready :class:`~ego.learning.plan.draft.ToolDraft`.

        The same save as :meth:`save_browser_tool`, for a front end that built the draft,
        gated by the tool's offline cases the same way (``draft.force`` goes past them).

        Args:
            draft: what to save.
            tab: the tab the tool was found in; ``draft.try_args`` runs there. By default an
                open tab on the site's domains.

        Returns:
            What was written.

        Raises:
            WorkspaceRequiredError: no workspace (set EGO_WORKSPACE or pass workspace=).
            SaveRefusedError: a check failed; nothing was written (``reason``, ``problems``).
            SnapshotReferenceError: the source uses snapshot refs or pixel coordinates.
            CaseRegressionError: the new source breaks offline cases; nothing was written.
            BrowserError: the browser failed during the checks; nothing was written.
            OSError: the write failed; the site stays consistent.
        """
        from ..learning.save import tool as _save

        return await _save.save_browser_tool(
            self.learnings,
            self.browser,
            draft,
            tab=tab,
            profile=self.profile_description,
            gate=self._gate,
        )

    async def _gate(self, plan: ToolPlan) -> GateReport | None:
        """The save gate: the planned tool's offline cases, run through :meth:`run_call`
        with its new source (and with the current version where the new one fails)."""
        # Imported here: the replay layer it brings is needed by a save, not by a call.
        from ..learning.cases.gate import run_gate

        async def invoke(
            case: LearningCase, tab: Tab, timeout: float, source: LoadedSource | None
        ) -> Any:
            candidate = (plan, source) if source is not None else None
            return await self.run_call(case_call(self.learnings, case, timeout, candidate), tab)

        return await run_gate(self.browser, self.learnings, plan, invoke)

    async def save_note(
        self,
        site_id: str,
        name: str,
        text: str,
        *,
        domains: Sequence[str] | None = None,
        tab: Tab | None = None,
        site_name: str | None = None,
    ) -> _notes.SavedNote:
        """Keep a note (markdown for agents) as ``notes/<name>.md`` in the workspace's site.

        Args:
            site_id: the site's id.
            name: the note's name (letters, digits, ``_``, ``-``).
            text: the markdown; its first ``# Title`` line names it.
            domains: the domains of a new site.
            tab: a tab on the site: gives a new site its domain and start URL.
            site_name: a new site's display name (defaults to its id).

        Raises:
            WorkspaceRequiredError: no workspace (set EGO_WORKSPACE or pass workspace=).
            SaveRefusedError: invalid id or name, empty text, a new site without domains, or
                a broken manifest; nothing was written.
            OSError: the write failed; the site stays consistent.
        """
        from ..learning.save import notes as _notes
        from ..learning.save import tool as _save

        url = await _save.current_url(tab)
        return _notes.save_note(
            self.learnings,
            site_id,
            name,
            text,
            domains=domains,
            page_url=url,
            site_name=site_name,
        )

    def tool_history(self, site_id: str, tool: str) -> list[ToolVersion]:
        """A browser tool's versions: the current one first, then the kept ones, newest first.

        Empty when the site or tool does not exist.
        """
        from ..learning.plan.history import list_versions

        return list_versions(self.learnings, site_id, tool)

    def restore_tool(self, site_id: str, tool: str, version: str) -> _store.SavedTool:
        """Bring back a kept version of a tool (from :meth:`tool_history`); keep the current.

        Raises:
            WorkspaceRequiredError: no workspace.
            UnknownVersionError: no such kept version (the message lists them).
            SaveRefusedError: the restored manifest would be invalid.
            OSError: the write failed; the site stays consistent.
        """
        from ..learning.save import store as _store

        return _store.restore_tool(self.learnings, site_id, tool, version)
