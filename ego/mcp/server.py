"""``ego mcp``: ego's learnings and the browser's verbs as MCP tools over stdio.

The server holds no logic of its own: every tool calls what an agent script would call. It
starts Chrome on first use (or attaches to ``--endpoint``) and ends it when the client goes
away. Every tool answers with structured content and one text block (:mod:`.results`);
errors come back as MCP tool errors whose text is the recovery the error contract names, in
an MCP caller's words (:mod:`.wording`). docs/mcp.md lists the tools.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult
from pydantic import Field

from ..learning.context import LearnContext, ToolInfo, example_args
from ..learning.registry import Learnings
from ..page.dialogs import DialogPolicy
from .browser_tools import add_browser_tools
from .ego_server import EgoServer
from .holder import DESTRUCTIVE, LOCAL_ONLY, BrowserHolder, call
from .learning_tools import add_learning_tools, confirm_key_for, mcp_name
from .page_tools import add_page_tools
from .results import tool_result
from .save_tools import add_save_tools

__all__ = ["build_server", "mcp_example", "serve"]

INSTRUCTIONS = (
    "Browser tools that run inside a real Chrome on the user's own sessions. Call "
    "learn_context with the page's URL first: it lists the site tools learned for it, each "
    "also its own MCP tool <site>__<tool> that takes the tool's args directly. Explore a page "
    "with navigate, take_snapshot, click, type, evaluate and list_network_requests; keep what "
    "worked with save_browser_tool. NEEDS_LOGIN means a person must log in by hand; "
    "SKILL_BROKEN means the tool needs a new version. Irreversible tools run only with "
    "confirm: true."
)


def mcp_example(info: ToolInfo, name: str | None = None) -> str:
    """How an MCP client calls a tool ``learn_context`` lists (its Python example reworded).

    Args:
        info: the tool.
        name: its MCP tool name (by default its plain ``<site>__<tool>``).
    """
    key = confirm_key_for(info.side_effect, info.args)
    args = example_args(info.args) if isinstance(info.args, dict) else {}
    if info.kind == "skill":
        call_args: dict[str, Any] = {"skill_id": f"{info.site_id}/{info.tool_name}"}
        if args:
            call_args["params"] = args
        if key:
            call_args["confirm"] = True
        return f"run_skill {json.dumps(call_args)}"
    if key:
        args = {**args, key: True}
    return f"{name or mcp_name(info.site_id, info.tool_name)} {json.dumps(args)}"


def _for_mcp(context: LearnContext, names: dict[tuple[str, str], str]) -> dict[str, Any]:
    """``learn_context``'s answer: each runnable tool with ``mcp_tool``, the MCP tool that
    runs it (from ``names``, the server's), and an ``example`` call of it."""
    data: dict[str, Any] = context.model_dump(mode="json")
    for key in ("tools", "skills"):
        for info, dumped in zip(getattr(context, key), data.get(key, []), strict=True):
            if not info.runnable or info.kind not in ("browser", "python", "skill"):
                continue
            name = names.get((info.site_id, info.tool_name))
            if info.kind != "skill" and name is not None:
                dumped["mcp_tool"] = name
            dumped["example"] = mcp_example(info, name)
    return data


def build_server(holder: BrowserHolder) -> EgoServer:
    """An MCP server whose tools run on ``holder``'s browser."""

    @contextlib.asynccontextmanager
    async def lifespan(_: MCPServer[Any]) -> AsyncIterator[None]:
        try:
            yield None
        finally:
            await holder.close()

    server = EgoServer(name="ego", instructions=INSTRUCTIONS, lifespan=lifespan)

    @server.tool(annotations=LOCAL_ONLY)
    async def learn_context(
        url: Annotated[str, Field(description="The page's URL (or just its address).")],
    ) -> CallToolResult:
        """What ego has learned for a URL: the matching sites, their notes and their tools.

        Call it first on a new page. Each tool comes with its args schema, side effect, its
        own MCP tool ("mcp_tool", usually <site>__<tool>) and an "example" MCP call (of that
        tool, or run_skill). Returns {url, matched, sites, tools, notes, skills}.
        """
        browser = await holder.browser()
        context = await call(lambda: browser.site.learn_context(url))
        return tool_result(_for_mcp(context, server.learning_tool_names()))

    @server.tool(annotations=LOCAL_ONLY)
    async def list_sites() -> CallToolResult:
        """Every site ego has learnings for, valid or not (invalid ones list their problems).

        Returns a list of {site_id, name, domains, valid, problems, mcp_tools, ...};
        mcp_tools maps each of the site's tools to the MCP tool that runs it.
        """
        browser = await holder.browser()
        names = server.learning_tool_names()
        listed = []
        for summary in browser.site.sites():
            data = summary.model_dump(mode="json")
            tools = [*summary.browser_tools, *summary.python_tools]
            data["mcp_tools"] = {
                tool: names[(summary.site_id, tool)]
                for tool in tools
                if (summary.site_id, tool) in names
            }
            listed.append(data)
        return tool_result(listed)

    @server.tool(annotations=DESTRUCTIVE)
    async def run_browser_tool(
        site_id: Annotated[str, Field(description="The site's id (from learn_context).")],
        tool: Annotated[str, Field(description="The tool's name on that site.")],
        args: Annotated[
            dict[str, Any] | None, Field(description="The tool's args, as its schema says.")
        ] = None,
        confirm: Annotated[
            bool, Field(description="true runs an irreversible tool for real.")
        ] = False,
    ) -> CallToolResult:
        """Run a site's tool by name (browser or Python) in a tab on that site.

        The same as calling its own <site>__<tool> MCP tool; use it for a tool saved by
        another client. Irreversible tools (posting, sending) run only with confirm: true.
        Returns the tool's JSON result (an object as is, anything else under "result").
        """
        browser = await holder.browser()
        result = await call(
            lambda: browser.site.run_tool(site_id, tool, args or {}, confirm=confirm)
        )
        return tool_result(result)

    @server.tool(annotations=DESTRUCTIVE)
    async def run_skill(
        skill_id: Annotated[str, Field(description='The skill\'s id, "<domain>/<task>".')],
        params: Annotated[
            dict[str, Any] | None, Field(description="The skill's params, as its schema says.")
        ] = None,
        confirm: Annotated[
            bool, Field(description="true runs an irreversible skill for real.")
        ] = False,
    ) -> CallToolResult:
        """Run a SKILL.md skill (learn_context lists them under skills) and check its result.

        Irreversible skills run only with confirm: true. Returns the skill's JSON result.
        """
        browser = await holder.browser()
        result = await call(lambda: browser.site.run_skill(skill_id, params or {}, confirm=confirm))
        return tool_result(result)

    add_browser_tools(server, holder)
    add_page_tools(server, holder)
    add_learning_tools(server, holder)
    add_save_tools(server, holder)
    return server


async def serve(
    *,
    endpoint: str | None = None,
    profile: str | None = None,
    headless: bool = True,
    learnings: Learnings | None = None,
    dialogs: DialogPolicy = "manual",
) -> None:
    """Serve MCP over stdio until the client disconnects, then close the browser.

    Args:
        endpoint, profile, headless: which Chrome (attach to ``endpoint``, else launch).
        learnings: the learnings served; by default the workspace's and the project's.
        dialogs: how page dialogs are answered; ``"manual"`` leaves each one open for the
            agent's ``handle_dialog`` (see :data:`ego.page.dialogs.DialogPolicy`).
    """
    holder = BrowserHolder(
        endpoint=endpoint,
        profile=profile,
        headless=headless,
        learnings=learnings if learnings is not None else Learnings(),
        dialogs=dialogs,
    )
    server = build_server(holder)
    try:
        await server.run_stdio_async()
    finally:
        await holder.close()
