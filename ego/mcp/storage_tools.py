"""The MCP tools for saved logins: ``save_storage_state`` writes the cookies and every origin's
localStorage of this server's browser (of this session's context, over HTTP) to a file;
``load_storage_state`` loads one. Both stay inside the operator's file limits
(:class:`~ego.mcp.files.FileAccess`), and neither answers a cookie or a stored value: the
file holds session secrets, the answer only what it holds.
"""

from __future__ import annotations

import asyncio
from typing import Annotated

from pydantic import Field

from ..api import outside_learnings
from ..page.storage_state import describe_state, state_bytes
from .ego_server import EgoServer
from .holder import CHANGES_PAGE, BrowserHolder, call, check
from .results import tool_result
from .sdk import CallToolResult

__all__ = ["add_storage_tools"]

Path = Annotated[str, Field(description="A .json file in the server's folders.")]


def add_storage_tools(server: EgoServer, holder: BrowserHolder) -> None:
    """Register ``save_storage_state`` and ``load_storage_state`` on ``server``."""

    @server.tool(group="pages", annotations=CHANGES_PAGE, files=True)
    async def save_storage_state(path: Path) -> CallToolResult:
        """Save this browser's login (cookies, each site's localStorage) to a file readable
        by its owner only, for load_storage_state or ego run --storage-state. Returns counts
        and names, no values."""
        target = check(lambda: holder.files.for_writing(path))
        check(lambda: outside_learnings(target, holder.learnings))
        browser = await holder.browser()
        state = await call(browser.storage_state)
        data = state_bytes(state)
        target = await call(lambda: asyncio.to_thread(holder.files.write, target, data))
        return tool_result({"path": str(target), **describe_state(state)})

    @server.tool(group="pages", annotations=CHANGES_PAGE, files=True)
    async def load_storage_state(path: Path) -> CallToolResult:
        """Load a saved login (save_storage_state, ego login --save-state, Playwright's
        storageState) into this browser; reload open pages to use it. "skipped" says which
        sites' localStorage could not be written."""
        source = check(lambda: holder.files.for_reading(path))
        state = check(lambda: holder.limits.read_storage_state(source))
        browser = await holder.browser()
        skipped = await call(lambda: browser.set_storage_state(state))
        return tool_result({"path": str(source), **describe_state(state), "skipped": skipped})
