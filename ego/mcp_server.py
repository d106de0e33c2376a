"""``ego mcp``: ego's learnings and the six browser capabilities as MCP tools over stdio.

The server holds no logic of its own: every tool calls what an agent script would call. It
starts Chrome on first use (or attaches to ``--endpoint``) and ends it when the client goes
away. Errors come back as MCP tool errors whose text is the recovery the error contract
names.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

from . import api
from .browser import Browser
from .errors import EgoError
from .learning.manifest import ToolSpec
from .learning.registry import Learnings
from .tab import Tab

__all__ = ["BrowserHolder", "build_server", "serve"]

logger = logging.getLogger("ego.mcp")

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=True)
CHANGES_PAGE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=True)
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=True)
LOCAL_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)


class BrowserHolder:
    """Starts the browser on first use and keeps one current tab for the page tools."""

    def __init__(
        self,
        *,
        endpoint: str | None,
        profile: str | None,
        headless: bool,
        learnings: Learnings,
    ) -> None:
        self.endpoint = endpoint
        self.profile = profile
        self.headless = headless
        self.learnings = learnings
        self._browser: Browser | None = None
        self._tab: Tab | None = None
        self._lock = asyncio.Lock()

    async def browser(self) -> Browser:
        async with self._lock:
            if self._browser is None or self._browser.closed:
                if self.endpoint:
                    self._browser = await api.connect(self.endpoint, learnings=self.learnings)
                else:
                    self._browser = await api.launch(
                        profile=self.profile, headless=self.headless, learnings=self.learnings
                    )
                self._tab = None
            return self._browser

    async def tab(self) -> Tab:
        """The current tab: the last one used, else the first open one, else a new one."""
        browser = await self.browser()
        if self._tab is None or self._tab.closed:
            tabs = await browser.tabs()
            self._tab = tabs[0] if tabs else await browser.new_tab()
        return self._tab

    def use(self, tab: Tab) -> None:
        self._tab = tab

    async def close(self) -> None:
        if self._browser is not None:
            await self._browser.close()
            self._browser = None


async def _call(action: Callable[[], Awaitable[Any]]) -> Any:
    try:
        return await action()
    except EgoError as exc:
        # The message already says what happened and what to do (the recovery of the
        # error contract for NEEDS_LOGIN and SKILL_BROKEN).
        raise ToolError(f"{type(exc).__name__}: {exc}") from None


def _mcp_name(site_id: str, tool: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", f"{site_id}__{tool}")[:128]


def _annotations(spec: ToolSpec) -> ToolAnnotations:
    if spec.side_effect == "read":
        return ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=True)
    return ToolAnnotations(
        read_only_hint=False,
        destructive_hint=spec.side_effect == "irreversible",
        open_world_hint=True,
    )


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
        context = await _call(lambda: browser.site.learn_context(url))
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
        return await _call(
            lambda: browser.site.run_tool(site_id, tool, args or {}, confirm=confirm)
        )

    @server.tool(annotations=DESTRUCTIVE)
    async def run_skill(
        skill_id: str, params: dict[str, Any] | None = None, confirm: bool = False
    ) -> Any:
        """Run a SKILL.md skill ("<domain>/<task>") and return its checked result.

        Irreversible skills run only with confirm=true.
        """
        browser = await holder.browser()
        return await _call(lambda: browser.site.run_skill(skill_id, params or {}, confirm=confirm))

    @server.tool(annotations=READ_ONLY)
    async def tabs() -> list[dict[str, str]]:
        """The open tabs."""
        browser = await holder.browser()
        return [
            {"id": tab.target_id, "url": tab.url, "title": tab.title}
            for tab in await _call(browser.tabs)
        ]

    @server.tool(annotations=CHANGES_PAGE)
    async def navigate(url: str, new_tab: bool = False) -> dict[str, str]:
        """Open a URL in the current tab (or a new one) and wait for it to load."""
        browser = await holder.browser()
        if new_tab:
            tab = await _call(lambda: browser.new_tab(url))
        else:
            tab = await holder.tab()
            await _call(lambda: tab.navigate(url))
        holder.use(tab)
        title = await _call(lambda: tab.evaluate("document.title"))
        return {"id": tab.target_id, "url": url, "title": str(title)}

    @server.tool(annotations=DESTRUCTIVE)
    async def evaluate(expression: str) -> Any:
        """Evaluate JavaScript in the current tab and return its JSON value."""
        tab = await holder.tab()
        return await _call(lambda: tab.evaluate(expression))

    @server.tool(annotations=READ_ONLY)
    async def snapshot() -> str:
        """A text outline of the current page with reusable CSS selectors."""
        tab = await holder.tab()
        text: str = await _call(tab.snapshot)
        return text

    @server.tool(annotations=CHANGES_PAGE)
    async def click(selector: str) -> dict[str, Any]:
        """Click the element a CSS selector names in the current tab."""
        tab = await holder.tab()
        await _call(lambda: tab.click(selector))
        return {"clicked": selector}

    @server.tool(name="type", annotations=CHANGES_PAGE)
    async def type_text(selector: str, text: str) -> dict[str, Any]:
        """Type text into the field a CSS selector names in the current tab."""
        tab = await holder.tab()
        await _call(lambda: tab.type(selector, text))
        return {"typed": selector}

    @server.tool(annotations=READ_ONLY)
    async def network_requests() -> list[dict[str, Any]]:
        """The requests the current page made since it loaded: method, URL, status, type."""
        tab = await holder.tab()
        return [request.as_dict() for request in await _call(tab.network)]

    _add_learning_tools(server, holder)
    from .mcp_save import add_save_tools  # mcp_save builds on this module

    add_save_tools(server, holder)
    return server


def _add_learning_tools(server: MCPServer[Any], holder: BrowserHolder) -> None:
    """One MCP tool per learning tool, with its own annotations, named ``site__tool``."""
    for entry in holder.learnings.sites():
        if entry.manifest is None:
            continue
        manifest = entry.manifest
        specs: list[ToolSpec] = [*manifest.browser_tools.values(), *manifest.python_tools.values()]
        for spec in specs:
            _add_learning_tool(server, holder, manifest.id, spec)


def _add_learning_tool(
    server: MCPServer[Any], holder: BrowserHolder, site_id: str, spec: ToolSpec
) -> None:
    irreversible = spec.side_effect == "irreversible"

    async def run(args: dict[str, Any] | None = None, confirm: bool = False) -> Any:
        browser = await holder.browser()
        return await _call(
            lambda: browser.site.run_tool(site_id, spec.name, args or {}, confirm=confirm)
        )

    note = " Irreversible: runs only with confirm=true." if irreversible else ""
    server.add_tool(
        run,
        name=_mcp_name(site_id, spec.name),
        description=f"[{site_id}] {spec.description}{note} Args: {spec.args}",
        annotations=_annotations(spec),
    )


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
