"""MCP tools of the learning loop: save a tool or a note, list a tool's versions, restore one.

An agent in an MCP client that found a way to do something on a page keeps it, and can call
it at once in the same session: through ``run_browser_tool`` (site id and tool name), and as
its own MCP tool ``<site>__<tool>``, added (or replaced) right after the save, with a
``notifications/tools/list_changed`` (so do a restore and a skill import). Everything is
checked before it is kept (see :mod:`ego.learning.save.tool`); a refused save is an MCP tool error
that says why.

Re-saving a tool changes only what the call gives; ``tool_history`` lists a tool's versions
with their whole manifest entries and what changed between them, and ``restore_tool`` brings
one back (source and entry).

``import_skill`` brings a portable SKILL.md into the workspace. ``build_server`` adds these
tools with ``add_save_tools(server, holder)``.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from ..errors import LearningError
from ..learning.catalog.matching import match_domain
from ..learning.health.view import current_health, health_table
from ..learning.plan.draft import ToolDraft
from ..learning.plan.history import list_versions
from ..learning.plan.save_plan import check_domains
from ..learning.save.store import restore_tool as restore_kept
from ..learning.save.tool import current_url
from ..page.tab import Tab
from ..skills import import_skill as import_skill_file
from .ego_server import EgoServer
from .holder import BrowserHolder, call, check
from .learning_tools import saved_tool_result
from .results import tool_result
from .sdk import CallToolResult, Context, ToolAnnotations, ToolError, tools_changed

__all__ = ["add_save_tools"]

#: Reads the workspace's learnings only.
_READS_LEARNING = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
#: Writes only to the agent workspace; a replaced version is kept, so nothing is destroyed.
SAVES_LEARNING = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


async def _tab_for_save(
    holder: BrowserHolder, site_id: str, domains: list[str] | None
) -> Tab | None:
    """The current tab when it is on the site (or on any web page, for a new site), else None.

    With None, the save looks for an open tab on the site's domains itself.
    """
    tab = await holder.tab()
    url = await current_url(tab) or ""
    wanted = list(domains or [])
    if not wanted:
        with contextlib.suppress(LearningError):
            wanted = list(holder.learnings.site(site_id).domains)
    if wanted:
        return tab if match_domain(url, wanted) else None
    return tab if url.startswith(("http://", "https://")) else None


def add_save_tools(server: EgoServer, holder: BrowserHolder) -> None:
    """Register the learning loop's MCP tools on ``server``.

    They are ``save_browser_tool``, ``save_note``, ``tool_history``, ``tool_health``,
    ``restore_tool`` and ``import_skill``.

    Args:
        server: the server :func:`ego.mcp.build_server` builds.
        holder: its browser holder; saves go to ``holder.learnings``' workspace root.
    """

    @server.tool(group="saving", annotations=SAVES_LEARNING)
    async def save_browser_tool(
        site_id: str,
        tool: str,
        source: str,
        description: str | None = None,
        args: dict[str, Any] | None = None,
        returns: dict[str, Any] | None = None,
        side_effect: Literal["read", "write", "irreversible"] | None = None,
        auth: Literal["none", "session"] | None = None,
        domains: list[str] | None = None,
        try_args: dict[str, Any] | None = None,
        name: str | None = None,
        clear: list[Literal["args", "returns", "timeout"]] | None = None,
        force: bool = False,
        ctx: Context[Any, Any] | None = None,
    ) -> CallToolResult:
        """Keep JavaScript that worked on this site as a browser tool, at once its own MCP
        tool. source: an async function of one args object, e.g. "async ({q}) => (await
        fetch('/api/search?q=' + q)).json()"; stable selectors or the site's API (refs are
        refused). args: {name: {type, required, description}} or JSON Schema. try_args runs
        it once first. A new site takes the current tab's domain. Re-saving changes only what
        you give (clear drops one). Its cases must pass (force: true skips them)."""
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
            clear=tuple(clear or ()),
            front_end="mcp",
            force=force,
        )
        browser = await holder.browser()
        tab = await call(lambda: _tab_for_save(holder, site_id, domains))
        saved = await call(lambda: browser.site.save_tool(draft, tab=tab))
        data = saved.as_dict()
        return await saved_tool_result(server, holder, site_id, tool, data, ctx)

    @server.tool(group="saving", annotations=SAVES_LEARNING)
    async def save_note(
        site_id: str,
        name: str,
        text: str,
        domains: list[str] | None = None,
    ) -> CallToolResult:
        """Keep what you learned about a site as a markdown note for later agents, "# Title"
        first."""

        async def check() -> None:
            # Refused in the words of this tool's own "domains" parameter.
            check_domains(site_id, name, domains or [], front_end="mcp")

        await call(check)
        browser = await holder.browser()
        tab = await call(lambda: _tab_for_save(holder, site_id, domains))
        saved = await call(
            lambda: browser.site.save_note(site_id, name, text, domains=domains, tab=tab)
        )
        return tool_result(saved.as_dict())

    @server.tool(group="saving", in_read_only=True, annotations=_READS_LEARNING)
    async def tool_history(site_id: str, tool: str) -> CallToolResult:
        """A saved tool's versions, newest first, each with what changed (for
        restore_tool)."""

        async def versions() -> list[dict[str, Any]]:
            return [v.as_dict() for v in list_versions(holder.learnings, site_id, tool)]

        return tool_result(await call(versions))

    @server.tool(group="learnings", in_read_only=True, annotations=_READS_LEARNING)
    async def tool_health(site_id: str | None = None, tool: str | None = None) -> CallToolResult:
        """Whether tools still work: runs, failures and "suspect" per version (of one tool, a
        site or all); "last_passed" is for restore_tool."""

        async def table() -> list[dict[str, Any]]:
            if tool is not None and site_id is None:
                raise ToolError("tool needs site_id too")
            rows = health_table(holder.learnings, site_id, tool)
            return [row.model_dump(mode="json") for row in rows]

        return tool_result(await call(table))

    @server.tool(group="saving", annotations=SAVES_LEARNING)
    async def restore_tool(
        site_id: str, tool: str, version: str, ctx: Context[Any, Any] | None = None
    ) -> CallToolResult:
        """Bring back a version from tool_history; the one it replaces is kept."""

        async def go() -> dict[str, Any]:
            data = restore_kept(holder.learnings, site_id, tool, version).as_dict()
            health = current_health(holder.learnings, site_id, tool)
            data["health"] = health.model_dump(mode="json") if health is not None else None
            return data

        data = await call(go)
        return await saved_tool_result(server, holder, site_id, tool, data, ctx)

    @server.tool(group="saving", annotations=SAVES_LEARNING, files=True)
    async def import_skill(
        path: Annotated[str, Field(description="A SKILL.md on the server's machine.")],
        overwrite: bool = False,
        ctx: Context[Any, Any] | None = None,
    ) -> CallToolResult:
        """Bring a portable SKILL.md into the workspace, once checked, for run_skill.
        Returns {skill_id, folder}."""
        root = holder.learnings.workspace_root

        source = check(lambda: holder.files.for_reading(path))

        async def go() -> Path:
            try:
                return import_skill_file(
                    source, None if root is None else root.parent, overwrite=overwrite
                )
            except ValueError as exc:  # no workspace: ego mcp runs without --workspace
                raise ToolError(f"{exc}; start ego mcp with --workspace") from None

        folder = await call(go)
        await tools_changed(ctx)
        skill_id = f"{folder.parent.name}/{folder.name}"
        return tool_result({"skill_id": skill_id, "folder": str(folder)})
