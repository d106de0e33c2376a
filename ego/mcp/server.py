"""``ego mcp``: ego's learnings and the browser's verbs as MCP tools over stdio.

The server holds no logic of its own: every tool calls what an agent script would call. It
starts Chrome on first use (or attaches to ``--endpoint``) and ends it when the client goes
away. Every tool answers with structured content and one text block (:mod:`.results`);
errors come back as MCP tool errors whose text is the recovery the error contract names, in
an MCP caller's words (:mod:`.wording`). docs/mcp.md lists the tools.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from ..learning.catalog.manifest import ToolSpec
from ..learning.catalog.matching import domain_of, match_domain
from ..learning.catalog.registry import Learnings
from ..learning.describe.context import summarize_site
from ..page.dialogs import DialogPolicy
from ..page.storage_state import StateSource
from ..skills import catalog_for
from .browser_tools import add_browser_tools
from .catalog_tools import add_catalog_tools
from .ego_server import EgoServer
from .holder import DESTRUCTIVE, LOCAL_ONLY, BrowserHolder, call
from .learning_tools import add_context_tools, add_learning_tools
from .limits import ServerLimits
from .loop_tools import add_loop_tools
from .page_tools import add_page_tools
from .results import bounded, tool_result
from .save_tools import add_save_tools
from .sdk import CallToolResult, Context, TextContent, ToolError, client_roots
from .storage_tools import add_storage_tools
from .trace_tools import add_trace_tools

__all__ = ["build_server", "serve"]

INSTRUCTIONS = (
    "Browser tools that run inside a real Chrome on the user's own sessions. Call "
    "learn_context with the page's URL first: it lists the site tools learned for it, each "
    "also its own MCP tool <site>__<tool> that takes the tool's args directly. Explore a page "
    "with navigate, take_snapshot, click, type, evaluate and list_network_requests (each "
    "action answers what it changed on the page, so one snapshot per page is enough); keep what "
    "worked with save_browser_tool. NEEDS_LOGIN means a person must log in by hand; "
    "SKILL_BROKEN means the tool needs a new version. Irreversible tools run only with "
    "confirm: true."
)


def build_server(holder: BrowserHolder) -> EgoServer:
    """An MCP server whose tools run on ``holder``'s browser, serving the tools its limits
    allow (``holder.limits``: the groups chosen, read-only or not)."""
    server = EgoServer(
        name="ego", instructions=INSTRUCTIONS, limits=holder.limits, on_close=holder.close
    )
    server.matching_sites = lambda: _sites_on(holder)
    add_context_tools(server, holder)  # learn_context first: the tool an agent starts with

    @server.tool(group="learnings", in_read_only=True, annotations=LOCAL_ONLY)
    async def list_sites() -> CallToolResult:
        """Every site ego has learnings for, valid or not: [{site_id, name, domains, valid,
        problems, mcp_tools, ...}]."""
        names = server.learning_tool_names()
        listed = []
        for summary in (summarize_site(entry) for entry in holder.learnings.sites()):
            data = summary.model_dump(mode="json")
            tools = [*summary.browser_tools, *summary.python_tools]
            data["mcp_tools"] = {
                tool: names[(summary.site_id, tool)]
                for tool in tools
                if (summary.site_id, tool) in names
            }
            listed.append(data)
        return tool_result(listed)

    @server.tool(group="learnings", in_read_only=True, annotations=DESTRUCTIVE)
    async def run_browser_tool(
        site_id: str,
        tool: str,
        args: dict[str, Any] | None = None,
        confirm: Annotated[bool, Field(description="Run an irreversible tool.")] = False,
    ) -> CallToolResult:
        """Run a site's tool by name, as its own <site>__<tool> MCP tool does."""
        if holder.limits.read_only:
            _, spec = await call(lambda: _known(holder, site_id, tool))
            if spec.side_effect != "read":
                raise ToolError(
                    _READ_ONLY.format(what=f"{site_id}/{tool}", effect=spec.side_effect)
                )
        browser = await holder.browser()
        # The agent's current tab when it shows the site (a copy on another port it went to).
        tab = browser.site.showing(site_id, holder.current())
        result = await call(
            lambda: browser.site.run_tool(site_id, tool, args or {}, confirm=confirm, tab=tab)
        )
        return tool_result(result)

    @server.tool(group="learnings", in_read_only=True, annotations=DESTRUCTIVE)
    async def run_skill(
        skill_id: Annotated[str, Field(description="<domain>/<task>")],
        params: dict[str, Any] | None = None,
        confirm: Annotated[bool, Field(description="Run an irreversible skill.")] = False,
    ) -> CallToolResult:
        """Run a SKILL.md skill (learn_context lists them) and check its result."""
        browser = await holder.browser()
        if holder.limits.read_only:
            skill = await call(lambda: _skill(browser.site, skill_id))
            if skill.side_effect != "read":
                raise ToolError(_READ_ONLY.format(what=skill_id, effect=skill.side_effect))
        result = await call(lambda: browser.site.run_skill(skill_id, params or {}, confirm=confirm))
        return tool_result(result)

    @server.tool(group="learnings", in_read_only=True, annotations=LOCAL_ONLY)
    async def set_start_url(
        site_id: str,
        url: str,
    ) -> CallToolResult:
        """Open a site's tools at this URL (a local copy, a staging host) from now on."""
        await call(lambda: _known_site(holder, site_id))
        holder.set_start_url(site_id, url)
        return tool_result({"site_id": site_id, "url": url})

    add_browser_tools(server, holder)
    add_page_tools(server, holder)
    add_learning_tools(server, holder)
    add_catalog_tools(server, holder)
    add_save_tools(server, holder)
    add_loop_tools(server, holder)
    add_storage_tools(server, holder)
    add_trace_tools(server, holder)

    async def ask_for_roots(name: str, context: Context[Any, Any] | None) -> None:
        # Only where the client's roots are folders of this machine (see .files).
        if server.uses_files(name) and holder.files.takes_client_roots:
            roots = await client_roots(context)
            if roots is not None:
                holder.files.set_client_roots(roots)

    def tell_what_changed(
        name: str, arguments: dict[str, Any], result: CallToolResult
    ) -> CallToolResult:
        notice = holder.take_notice()
        if notice is None:
            return result
        # The one text block says it first; the structured content carries it as "notice".
        content = [
            TextContent(type="text", text=f"{notice}\n{part.text}")
            if isinstance(part, TextContent)
            else part
            for part in result.content
        ]
        structured = {**(result.structured_content or {}), "notice": notice}
        return result.model_copy(update={"content": content, "structured_content": structured})

    async def keep_bounds(name: str, context: Context[Any, Any] | None) -> None:
        await holder.keep_bounds()

    server.before_call.append(keep_bounds)
    server.before_call.append(ask_for_roots)
    server.after_call.append(bounded)
    server.after_call.append(tell_what_changed)
    return server


_READ_ONLY = (
    "{what} is a {effect} tool and this server is read-only (ego mcp --read-only): only tools "
    "whose side effect is read run here"
)


def _sites_on(holder: BrowserHolder) -> frozenset[str]:
    """The sites whose pages the current tab shows: its URL on their domains, or on the host
    and port of a start URL set for them."""
    url = holder.current_url()
    if not url:
        return frozenset()
    found = {entry.site_id for entry, _ in holder.learnings.sites_for_url(url)}
    for site_id, start in holder.start_urls.items():
        own = domain_of(start)
        if own is not None and match_domain(url, [own]) is not None:
            found.add(site_id)
        elif own is not None:
            found.discard(site_id)  # a site moved elsewhere is not on its old domains here
    return frozenset(found)


async def _known(holder: BrowserHolder, site_id: str, tool: str) -> tuple[Any, ToolSpec]:
    return holder.learnings.tool(site_id, tool)


async def _known_site(holder: BrowserHolder, site_id: str) -> None:
    holder.learnings.site(site_id)


async def _skill(site: Any, skill_id: str) -> Any:
    return catalog_for(site.learnings).skill(skill_id)


async def serve(
    *,
    endpoint: str | None = None,
    profile: str | None = None,
    headless: bool = True,
    learnings: Learnings | None = None,
    dialogs: DialogPolicy = "manual",
    limits: ServerLimits | None = None,
    storage_state: StateSource | None = None,
) -> None:
    """Serve MCP over stdio until the client disconnects, then close the browser.

    Args:
        endpoint, profile, headless: which Chrome (attach to ``endpoint``, else launch).
        storage_state: a saved login (cookies, localStorage) the browser starts with.
        learnings: the learnings served; by default the workspace's and the project's.
        dialogs: how page dialogs are answered; ``"manual"`` leaves each one open for the
            agent's ``handle_dialog`` (see :data:`ego.page.dialogs.DialogPolicy`).
        limits: what the agent may reach (origins, files, tools); by default local URLs are
            refused and files stay in a folder of the server's own.

    Raises:
        ValueError: a malformed origin pattern in ``limits`` (before anything starts).
        StorageStateError: ``storage_state`` is not a storage state, or is over the bounds of
            ``limits`` (StorageStateTooLargeError).
    """
    limits = limits if limits is not None else ServerLimits()
    holder = BrowserHolder(
        endpoint=endpoint,
        profile=profile,
        headless=headless,
        learnings=learnings if learnings is not None else Learnings(),
        dialogs=dialogs,
        limits=limits,
        # Read once, within the bounds: a bad file fails here, before the client connects.
        storage_state=limits.read_storage_state(storage_state) if storage_state else None,
    )
    server = build_server(holder)
    try:
        await server.run_stdio_async()
    finally:
        await holder.close()
