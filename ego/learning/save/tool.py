"""The learning loop's save: keep a browser tool that worked, checked before it is kept.

An agent that found a way to do something on a site (a stable selector, an in-page API
call) saves it with :func:`save_browser_tool`; the next run is one call. This module only
puts the steps in order; each lives in a module of its own. Everything is checked before a
single byte is written:

1. the site id and the tool name are valid, the source is not empty
   (:mod:`ego.learning.catalog.naming`);
2. the source holds no snapshot-only references (ephemeral element refs such as
   ``ref=e12``, pixel coordinates such as ``elementFromPoint(``): see
   :func:`ego.learning.catalog.jslint.find_snapshot_refs`;
3. the args and returns schemas are valid JSON Schema and the resulting manifest passes the
   same validation as loading it (:mod:`ego.learning.plan.save_plan`);
4. the source parses in the browser: ``Runtime.compileScript`` (``persistScript`` false) on
   the wrapped source and on the form the cache evals, in a fresh about:blank tab, which
   compiles without running anything (:func:`ego.learning.save.checks.compile_check`);
5. with ``try_args``, the tool runs once in the page (plain wrap, no cache) and must neither
   throw nor signal NEEDS_LOGIN or SKILL_BROKEN, and its result must fit ``returns``
   (:func:`ego.learning.save.checks.run_trial`);
6. when the caller gives a ``gate`` (the site layer always does), the tool's offline cases
   run against the new source, and a case that passes with the current version and fails
   with the new one refuses the save unless the draft says ``force``
   (:mod:`ego.learning.cases.gate`).

Saves go to the agent workspace's learnings root, never to the project's: a site that exists
only in the project is first copied to the workspace (the copy shadows it) and the copy is
changed. The writes are atomic and keep the replaced version (:mod:`ego.learning.save.store`).
Notes are saved by :func:`ego.learning.save.notes.save_note`.
"""

from __future__ import annotations

import contextlib
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ...errors import BrowserError, InvalidManifestError, JavaScriptError
from ..cases.verdict import SaveGate, refusal
from ..catalog.jslint import check_source
from ..catalog.manifest import load_manifest
from ..catalog.matching import match_domain
from ..catalog.naming import check_site_id, check_tool_name, refuse
from ..catalog.registry import Learnings
from ..plan.draft import ToolDraft
from ..plan.save_plan import ToolPlan, check_schemas, plan_browser_tool, workspace_root
from .checks import compile_check, run_trial
from .store import SavedTool, write_tool

if TYPE_CHECKING:
    from ...page.browser import TabHost
    from ...page.tab import Tab

__all__ = ["current_url", "save_browser_tool"]


async def current_url(tab: Tab | None) -> str | None:
    """The URL ``tab`` shows now (``location.href``, else its last known URL), or None."""
    if tab is None:
        return None
    with contextlib.suppress(BrowserError, JavaScriptError):
        href = await tab.evaluate("location.href", timeout=5)
        if isinstance(href, str):
            return href
    return tab.url


async def _matching_tab(browser: TabHost, learnings: Learnings, draft: ToolDraft) -> Tab | None:
    """An open tab on the draft's domains (else on the site's known domains), or None."""
    wanted = list(draft.domains or [])
    if not wanted:
        for root in learnings.roots:
            directory = root / draft.site_id
            if directory.is_dir():
                with contextlib.suppress(InvalidManifestError):
                    wanted = list(load_manifest(directory).domains)
                break
    if not wanted:
        return None
    for candidate in await browser.tabs():
        if match_domain(candidate.url, wanted):
            return candidate
    return None


async def _try_on_start_page(
    browser: TabHost, plan: ToolPlan, draft: ToolDraft, profile: str, timeout: float | None
) -> Any:
    """Run the try in a tab opened on the site's start URL, as ``ego run`` would."""
    start = plan.parsed.start_url
    if not start:
        raise refuse(
            draft.site_id,
            draft.tool,
            "try run",
            [
                "try_args needs a tab on the site: none is open and the site has no startUrl; "
                "open one (browser.new_tab(url)) and pass tab=, or --url on the command line"
            ],
        )
    tab = await browser.new_tab(start)
    try:
        assert draft.try_args is not None
        return await run_trial(tab, plan, draft.try_args, profile=profile, timeout=timeout)
    finally:
        with contextlib.suppress(BrowserError):
            await tab.close()


async def save_browser_tool(
    learnings: Learnings,
    browser: TabHost,
    draft: ToolDraft,
    *,
    tab: Tab | None = None,
    profile: str = "the browser profile",
    gate: SaveGate | None = None,
    page_url: str | None = None,
) -> SavedTool:
    """Check a browser tool and keep it in the workspace's learnings (see the module doc).

    Args:
        learnings: the roots; the tool is written under their workspace root.
        browser: the browser that checks the source (and runs ``draft.try_args``).
        draft: what to save: the site, the tool's name, source, description and schemas.
        tab: the tab the tool was found in: gives a new site its domain and start URL, and
            is where ``try_args`` runs. By default an open tab on the site's domains; when
            none is open, ``try_args`` runs in a tab opened on the site's start URL (and
            closed after).
        profile: how to name the browser profile in a NEEDS_LOGIN message.
        gate: runs the tool's offline cases against the planned save (last, once every other
            check passed); not called when the save changes nothing.
        page_url: the page the tool was found on, when no ``tab`` is given (a new site's
            start URL and, without ``draft.domains``, its domain).

    Returns:
        What was written, with the cases the gate ran.

    Raises:
        WorkspaceRequiredError: no workspace to save into (set EGO_WORKSPACE).
        SaveRefusedError: a check failed; nothing was written (``reason`` and ``problems``
            say why). SnapshotReferenceError when the source uses snapshot-only refs or
            pixel coordinates. CaseRegressionError when the new source breaks an offline
            case that passes with the current version and the draft does not force it.
        BrowserError: the browser failed during the checks (or the start URL did not load
            for the try run); nothing was written.
        OSError: the disk write failed (the site stays consistent).
    """
    site_id, tool = draft.site_id, draft.tool
    # The checks that need nothing come first, so a bad draft never waits on the browser.
    workspace_root(learnings)
    check_site_id(site_id, name=str(tool))
    check_tool_name(site_id, tool)
    check_source(site_id, tool, draft.source)
    check_schemas(draft)
    if tab is None:
        tab = await _matching_tab(browser, learnings, draft)
    url = await current_url(tab) if tab is not None else page_url
    plan = plan_browser_tool(learnings, draft, page_url=url)
    await compile_check(browser, plan)
    result: Any = None
    if draft.try_args is not None:
        timeout = plan.parsed.browser_tools[tool].timeout
        if tab is not None:
            result = await run_trial(tab, plan, draft.try_args, profile=profile, timeout=timeout)
        else:
            result = await _try_on_start_page(browser, plan, draft, profile, timeout)
    cases = await gate(plan) if gate is not None and plan.changed else None
    if cases is not None and cases.broken and not draft.force:
        raise refusal(cases, draft)
    saved = write_tool(plan, cases=cases)
    return replace(saved, try_result=result, changed=() if saved.unchanged else plan.changed)
