"""``search_catalog``: an MCP client finds tools and notes across every site ego has."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from ..learning.describe.search import catalog_search
from .ego_server import EgoServer
from .holder import LOCAL_ONLY, BrowserHolder, call
from .learning_tools import mcp_example
from .results import tool_result
from .sdk import CallToolResult

__all__ = ["add_catalog_tools"]


def add_catalog_tools(server: EgoServer, holder: BrowserHolder) -> None:
    """Add ``search_catalog``, which reads only local files (no browser starts for it)."""

    @server.tool(group="learnings", in_read_only=True, annotations=LOCAL_ONLY)
    async def search_catalog(
        query: Annotated[str, Field(description="Words, as 'search products'.")],
        domain: Annotated[str | None, Field(description="Only sites on this host.")] = None,
        limit: Annotated[int, Field(ge=1)] = 10,
    ) -> CallToolResult:
        """Find tools and notes across every site ego has, when you do not know which site
        has one; each hit with an example call."""

        async def search() -> dict[str, Any]:
            found = catalog_search(holder.learnings, query, domain=domain, limit=limit)
            data: dict[str, Any] = found.model_dump(mode="json")
            for hit, dumped in zip(found.hits, data["hits"], strict=True):
                if hit.info is not None:
                    dumped["example"] = mcp_example(hit.info)
            return data

        return tool_result(await call(search))
