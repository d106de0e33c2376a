"""``ego mcp``: ego's learnings and the six browser capabilities as MCP tools over stdio.

The server holds no logic of its own: every tool calls what an agent script would call. It
starts Chrome on first use (or attaches to ``--endpoint``) and ends it when the client goes
away. Errors come back as MCP tool errors whose text is the recovery the error contract
names.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from mcp.server.mcpserver import MCPServer

from ..learning.registry import Learnings
from .holder import CHANGES_PAGE, DESTRUCTIVE, LOCAL_ONLY, READ_ONLY, BrowserHolder, call
from .learning_tools import add_learning_tools
from .save_tools import add_save_tools

__all__ = ["build_server", "serve"]


def build_server(holder: BrowserHolder) -> MCPServer[Any]:
    """An MCP server whose tools run on ``holder``'s browser."""

    @contextlib.asynccontextmanager
    async def lifespan(_: MCPServer[Any]) -> AsyncIterator[None]:
        try:
            yield None
        finally:
            await holder.close()

    server: MCPServer[Any] = MCPServer(
        name="ego",
        instructions=(
            "Browser tools that run inside a real Chrome on the user's own sessions. Call "
            "learn_context(url) first to see which site tools exist for a page, then "
            "run_browser_tool. NEEDS_LOGIN means a person must log in by hand; SKILL_BROKEN "
            "means the tool needs a new version. Irreversible tools need confirm=true."
        ),
        lifespan=lifespan,
    )

    @server.tool(annotations=LOCAL_ONLY)
    async def learn_context(url: str) -> dict[str, Any]:
        """Which sites, notes and tools the learnings offer for a URL."""
        browser = await holder.browser()
        context = await call(lambda: browser.site.learn_context(url))
        return dict(context.model_dump(mode="json"))

    @server.tool(annotations=LOCAL_ONLY)
    async def list_sites() -> list[dict[str, Any]]:
        """Every learnings site, valid or not (invalid ones list their problems)."""
        browser = await holder.browser()
        return [summary.model_dump(mode="json") for summary in browser.site.sites()]

    @server.tool(annotations=DESTRUCTIVE)
    async def run_browser_tool(
        site_id: str, tool: str, args: dict[str, Any] | None = None, confirm: bool = False
    ) -> Any:
        """Run a site's tool (browser or Python) in a tab on that site and return its result.

        Irreversible tools (posting, sending) run only with confirm=true.
        """
        browser = await holder.browser()
        return await call(lambda: browser.site.run_tool(site_id, tool, args or {}, confirm=confirm))

    @server.tool(annotations=DESTRUCTIVE)
    async def run_skill(
        skill_id: str, params: dict[str, Any] | None = None, confirm: bool = False
    ) -> Any:
        """Run a SKILL.md skill ("<domain>/<task>") and return its checked result.

        Irreversible skills run only with confirm=true.
        """
        browser = await holder.browser()
        return await call(lambda: browser.site.run_skill(skill_id, params or {}, confirm=confirm))

    @server.tool(annotations=READ_ONLY)
    async def tabs() -> list[dict[str, str]]:
        """The open tabs."""
        browser = await holder.browser()
        return [
            {"id": tab.target_id, "url": tab.url, "title": tab.title}
            for tab in await call(browser.tabs)
        ]

    @server.tool(annotations=CHANGES_PAGE)
    async def navigate(url: str, new_tab: bool = False) -> dict[str, str]:
        """Open a URL in the current tab (or a new one) and wait for it to load."""
        browser = await holder.browser()
        if new_tab:
            tab = await call(lambda: browser.new_tab(url))
        else:
            tab = await holder.tab()
            await call(lambda: tab.navigate(url))
        holder.use(tab)
        title = await call(lambda: tab.evaluate("document.title"))
        return {"id": tab.target_id, "url": url, "title": str(title)}

    @server.tool(annotations=DESTRUCTIVE)
    async def evaluate(expression: str) -> Any:
        """Evaluate JavaScript in the current tab and return its JSON value."""
        tab = await holder.tab()
        return await call(lambda: tab.evaluate(expression))

    @server.tool(annotations=READ_ONLY)
    async def snapshot() -> str:
        """A text outline of the current page with reusable CSS selectors."""
        tab = await holder.tab()
        text: str = await call(tab.snapshot)
        return text

    @server.tool(annotations=CHANGES_PAGE)
    async def click(selector: str) -> dict[str, Any]:
        """Click the element a CSS selector names in the current tab."""
        tab = await holder.tab()
        await call(lambda: tab.click(selector))
        return {"clicked": selector}

    @server.tool(name="type", annotations=CHANGES_PAGE)
    async def type_text(selector: str, text: str) -> dict[str, Any]:
        """Type text into the field a CSS selector names in the current tab."""
        tab = await holder.tab()
        await call(lambda: tab.type(selector, text))
        return {"typed": selector}

    @server.tool(annotations=READ_ONLY)
    async def network_requests() -> list[dict[str, Any]]:
        """The requests the current page made since it loaded: method, URL, status, type."""
        tab = await holder.tab()
        return [request.as_dict() for request in await call(tab.network)]

    add_learning_tools(server, holder)
    add_save_tools(server, holder)
    return server


async def serve(
    *,
    endpoint: str | None = None,
    profile: str | None = None,
    headless: bool = True,
    learnings: Learnings | None = None,
) -> None:
    """Serve MCP over stdio until the client disconnects, then close the browser."""
    holder = BrowserHolder(
        endpoint=endpoint,
        profile=profile,
        headless=headless,
        learnings=learnings if learnings is not None else Learnings(),
    )
    server = build_server(holder)
    try:
        await server.run_stdio_async()
    finally:
        await holder.close()
