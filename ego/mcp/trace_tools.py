"""Tracing an agent's session: ``start_trace`` and ``stop_trace``.

Served when the operator asks for them (``ego mcp --trace-tools``). A trace follows every
tab of the server's browser (of the session's context, with ``--http``): each action with a
screenshot after it, each tool run, the requests and console (see docs/tracing.md). It is
written as it goes into a private file of the server's own; ``stop_trace`` (or the client
going away) writes it to the path the agent gave, which the operator's file limits hold as
they hold a screenshot's (:mod:`.files`). Its bounds are the operator's (``ego mcp
--trace-max-size``, ``--trace-scale``, ``--trace-quality``: ``ServerLimits.trace_options``).
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from ..trace import Trace
from .ego_server import EgoServer
from .holder import READ_ONLY, BrowserHolder, call, check
from .results import tool_result
from .sdk import CallToolResult, ToolError

__all__ = ["add_trace_tools"]


class _Tracing:
    """The session's trace, while one runs."""

    def __init__(self, holder: BrowserHolder) -> None:
        self.holder = holder
        self.trace: Trace | None = None
        self.target = ""  # the path the agent gave
        self.folder: Path | None = None

    async def stop(self) -> dict[str, Any]:
        """Stop the trace and write it where the agent asked.

        Raises:
            FileAccessError: the path cannot be written (the trace is lost).
        """
        trace, folder, target = self.trace, self.folder, self.target
        self.trace, self.folder = None, None
        assert trace is not None
        assert folder is not None
        try:
            summary = await trace.stop()
            data = await asyncio.to_thread(summary.path.read_bytes)
            written = await asyncio.to_thread(self.holder.files.write, target, data)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        return {**summary.as_dict(), "trace": str(written)}


def add_trace_tools(server: EgoServer, holder: BrowserHolder) -> None:
    """Register ``start_trace`` and ``stop_trace`` when the operator serves them
    (``ego mcp --trace-tools``: ``ServerLimits.trace_tools``); a trace still running when the
    client goes away is written before the browser closes."""
    if not holder.limits.trace_tools:
        return
    tracing = _Tracing(holder)

    async def finish() -> None:
        if tracing.trace is not None:
            await tracing.stop()

    holder.closing.append(finish)

    @server.tool(group="pages", in_read_only=True, annotations=READ_ONLY, files=True)
    async def start_trace(
        path: Annotated[str | None, Field(description="Where stop_trace writes it.")] = None,
    ) -> CallToolResult:
        """Trace this session (actions with screenshots, tool runs, network, console) until
        stop_trace."""
        if tracing.trace is not None:
            raise ToolError(
                f"a trace is running already (to {tracing.target}): stop_trace writes it first"
            )
        target = path or f"trace-{time.strftime('%Y%m%dT%H%M%S')}.trace.jsonl"
        resolved = check(lambda: holder.files.for_writing(target))
        pages = await holder.browser()
        folder = Path(tempfile.mkdtemp(prefix="ego-mcp-trace-"))
        trace = Trace(
            folder / resolved.name,
            holder.limits.trace_options,
            host=pages,
            subject="an ego mcp session",
        )
        try:
            await call(trace.start)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        tracing.trace, tracing.folder, tracing.target = trace, folder, target
        return tool_result(
            {"trace": str(resolved), "running": True},
            text=f"Tracing this session; stop_trace writes it to {resolved}.",
        )

    @server.tool(group="pages", in_read_only=True, annotations=READ_ONLY, files=True)
    async def stop_trace() -> CallToolResult:
        """Stop the trace and write it: {trace, steps, failed, bytes, omitted}."""
        if tracing.trace is None:
            raise ToolError("no trace is running: start_trace starts one")
        data = await call(tracing.stop)
        return tool_result(
            data,
            text=f"Wrote the trace ({data['steps']} steps, {data['failed']} failed, "
            f"{data['bytes']:,} bytes) to {data['trace']}; a person sees it with: "
            f"ego show-trace {data['trace']} --open",
        )
