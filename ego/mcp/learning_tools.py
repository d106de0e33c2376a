"""One MCP tool per learning tool, named ``<site>__<tool>``, annotated by its side effect."""

from __future__ import annotations

import re
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

from ..learning.manifest import ToolSpec
from .holder import BrowserHolder, call

__all__ = ["add_learning_tool", "add_learning_tools", "mcp_name"]


def mcp_name(site_id: str, tool: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", f"{site_id}__{tool}")[:128]


def _annotations(spec: ToolSpec) -> ToolAnnotations:
    if spec.side_effect == "read":
        return ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=True)
    return ToolAnnotations(
        read_only_hint=False,
        destructive_hint=spec.side_effect == "irreversible",
        open_world_hint=True,
    )


def add_learning_tools(server: MCPServer[Any], holder: BrowserHolder) -> None:
    """One MCP tool per learning tool, with its own annotations, named ``site__tool``."""
    for entry in holder.learnings.sites():
        if entry.manifest is None:
            continue
        manifest = entry.manifest
        specs: list[ToolSpec] = [*manifest.browser_tools.values(), *manifest.python_tools.values()]
        for spec in specs:
            add_learning_tool(server, holder, manifest.id, spec)


def add_learning_tool(
    server: MCPServer[Any], holder: BrowserHolder, site_id: str, spec: ToolSpec
) -> None:
    irreversible = spec.side_effect == "irreversible"

    async def run(args: dict[str, Any] | None = None, confirm: bool = False) -> Any:
        browser = await holder.browser()
        return await call(
            lambda: browser.site.run_tool(site_id, spec.name, args or {}, confirm=confirm)
        )

    note = " Irreversible: runs only with confirm=true." if irreversible else ""
    server.add_tool(
        run,
        name=mcp_name(site_id, spec.name),
        description=f"[{site_id}] {spec.description}{note} Args: {spec.args}",
        annotations=_annotations(spec),
    )
