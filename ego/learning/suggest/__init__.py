"""``ego suggest``: browser tools drafted from what a page did, one per JSON endpoint.

An agent (or a person) works on a site while a recording runs (``ego record --session``,
``tab.record_har``, MCP ``start_recording``); :func:`suggest` reads the recordings and drafts
a tool for each endpoint of the site's JSON API the page called, with offline cases built
from the recorded calls. Drafts are written beside the site's tools, never live
(:mod:`.drafts`); ``Site.save_draft`` keeps one through the save gate.

- :mod:`.traffic`: which recorded requests are API calls, and why the others are not;
- :mod:`.graphql`: a GraphQL request's operation (one endpoint per operation name);
- :mod:`.endpoints`: calls of one endpoint, and its path as a template;
- :mod:`.values`: args, constants and the ``returns`` schema;
- :mod:`.auth`: the session, the header tokens the page keeps, and the CSRF token;
- :mod:`.source`: the tool's JavaScript;
- :mod:`.drafting`: the drafts and their cases; :mod:`.drafts`: on disk;
- :mod:`.flow`, :mod:`.actions` and :mod:`.action_source`: Python tools drafted from recorded
  page actions (:func:`suggest_actions`, ``ego suggest SITE --actions FILE``).
"""

from __future__ import annotations

import os

from ...replay.har_bounds import HarBounds, ProgressCallback, reading_hars
from ..catalog.registry import Learnings
from .actions import ActionsReport, suggest_actions
from .drafting import CaseDraft, DraftedTool, SuggestReport, suggest_from
from .drafts import Draft, SiteSoFar, list_drafts, load_draft, write_drafts

__all__ = [
    "ActionsReport",
    "CaseDraft",
    "Draft",
    "DraftedTool",
    "SuggestReport",
    "list_drafts",
    "load_draft",
    "suggest",
    "suggest_actions",
]


def suggest(
    site_id: str,
    har_paths: list[str | os.PathLike[str]] | str | os.PathLike[str],
    *,
    learnings: Learnings | None = None,
    workspace: str | os.PathLike[str] | None = None,
    write: bool = True,
    bounds: HarBounds | None = None,
    progress: ProgressCallback | None = None,
) -> SuggestReport:
    """Draft browser tools for ``site_id`` from recordings of the page at work.

    ::

        report = ego.suggest("shop", ["session.har"], workspace="~/agent")
        print(report.format())      # what was found, what was skipped and why

    Args:
        site_id: the site the tools are for. A site with no learning yet gets a manifest
            drafted from the recordings' host.
        har_paths: one recording or several (two sessions that differ in ids and values
            tell args from constants).
        learnings: the roots (the site's domains and tools are read there; drafts go to
            their workspace). By default the workspace's (``workspace`` or
            ``EGO_WORKSPACE``) and the project's.
        workspace: the agent workspace, when ``learnings`` is not given.
        write: write the drafts (the default); False only reports.
        bounds: the most a recording may hold (``HarBounds(max_entries=50_000,
            max_bytes=256 MiB)`` by default), checked before it is read whole.
        progress: told how the reading of a large recording goes
            (:class:`~ego.replay.har_bounds.HarProgress`).

    Returns:
        The drafts, what was skipped and why, and where the drafts were written.

    Raises:
        HarTooLargeError: a recording is over ``bounds``; nothing was drafted.
        HarFormatError: a recording cannot be read.
        WorkspaceRequiredError: ``write`` and no workspace.
        ValueError: no recording given.
    """
    known = SiteSoFar.of(site_id, learnings, workspace)
    paths = [har_paths] if isinstance(har_paths, str | os.PathLike) else list(har_paths)
    with reading_hars(bounds, progress):
        report = suggest_from(
            site_id, paths, domains=known.domains, existing_tools=set(known.tools)
        )
    if write:
        write_drafts(known.learnings, report)
    return report
