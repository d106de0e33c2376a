"""The MCP server class behind ``ego mcp``: tools with hand-written input schemas, and a tool
list that changes while a client is connected.

The SDK's :class:`MCPServer` derives every tool's input schema from a Python signature. A
learning tool's input is the manifest's own JSON Schema, known only at run time, so those
tools are :class:`SchemaTool` entries this server lists and calls itself. The server
advertises ``tools.listChanged`` and :func:`tools_changed` tells the client when a save,
restore or import changed the list.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from mcp.server.lowlevel import NotificationOptions
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import CallToolResult, InputRequiredResult, ToolAnnotations
from mcp.types import Tool as MCPTool
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic_core import PydanticSerializationError

from ..protocol.jsontext import json_text
from .arguments import argument_problem

__all__ = ["MAX_TOOL_NAME", "EgoServer", "SchemaTool", "tools_changed"]

logger = logging.getLogger("ego.mcp")

#: The longest tool name MCP allows.
MAX_TOOL_NAME = 128


@dataclass(frozen=True)
class SchemaTool:
    """A tool listed with ``input_schema`` as given; ``handler`` gets the arguments as sent.

    The handler checks the arguments itself and raises ``ToolError`` for a bad call.
    ``status``, when given, adds a line that is worked out each time the list is asked for
    (a learning tool's health changes with every run).
    """

    name: str
    description: str
    input_schema: dict[str, Any]
    annotations: ToolAnnotations
    handler: Callable[[dict[str, Any]], Awaitable[CallToolResult]]
    status: Callable[[], str] | None = None

    def listing(self) -> MCPTool:
        line = self.status() if self.status is not None else ""
        return MCPTool(
            name=self.name,
            description=f"{self.description}\n{line}" if line else self.description,
            input_schema=self.input_schema,
            annotations=self.annotations,
        )


class EgoServer(MCPServer[Any]):
    """An :class:`MCPServer` that also serves :class:`SchemaTool` tools and advertises
    ``tools.listChanged``."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._schema_tools: dict[str, SchemaTool] = {}
        self._keep: Callable[[SchemaTool], bool] = lambda tool: True
        #: Run before every call (with the tool's name and the request's context).
        self.before_call: list[Callable[[str, Context[Any, Any] | None], Awaitable[None]]] = []
        #: Applied to every successful result, in order.
        self.after_call: list[Callable[[CallToolResult], CallToolResult]] = []
        #: The name each learning tool is served under, and the tool of each such name.
        self._names: dict[tuple[str, str], str] = {}
        self._owners: dict[str, tuple[str, str]] = {}

    def put_schema_tool(self, tool: SchemaTool) -> None:
        """Add ``tool``, or replace the one of the same name, when :meth:`keep_schema_tools`
        keeps it."""
        if self._keep(tool):
            self._schema_tools[tool.name] = tool

    def keep_schema_tools(self, keep: Callable[[SchemaTool], bool]) -> None:
        """Serve only the schema tools ``keep`` accepts, now and when more are put."""
        self._keep = keep
        self._schema_tools = {name: t for name, t in self._schema_tools.items() if keep(t)}

    def learning_tool_name(self, site_id: str, tool: str, base: str) -> str:
        """The MCP name of learning tool ``site_id``/``tool``, whose plain name is ``base``.

        A tool keeps the name it was given first. A new one gets ``base`` unless another
        tool already has it (``a__b`` + ``c`` and ``a`` + ``b__c`` both read ``a__b__c``, and
        names cut at 128 characters can meet): then ``base`` cut to 119 characters, ``_`` and
        8 hex digits of a hash of ``site_id/tool`` (the same in every session), and a warning
        on the ``ego.mcp`` logger says which tool got which name. :func:`add_learning_tools`
        names the tools in ``(site_id, tool)`` order, so the first of them keeps ``base``.
        """
        known = self._names.get((site_id, tool))
        if known is not None:
            return known
        name, attempt = base, 0
        while name in self._owners:
            digest = hashlib.sha256(f"{site_id}/{tool}#{attempt}".encode()).hexdigest()
            name = f"{base[: MAX_TOOL_NAME - 9]}_{digest[:8]}"
            attempt += 1
        if name != base:
            other_site, other_tool = self._owners[base]
            logger.warning(
                "MCP tool name %s is taken by %s/%s: %s/%s is served as %s",
                base,
                other_site,
                other_tool,
                site_id,
                tool,
                name,
            )
        self._names[(site_id, tool)] = name
        self._owners[name] = (site_id, tool)
        return name

    def learning_tool_names(self) -> dict[tuple[str, str], str]:
        """Every learning tool's MCP name so far, by ``(site_id, tool)``."""
        return dict(self._names)

    async def list_tools(self) -> list[MCPTool]:
        listed = await super().list_tools()
        return [*listed, *(tool.listing() for tool in self._schema_tools.values())]

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        """Call a tool: its arguments checked first (an SDK tool's unknown ones refused, bad
        ones answered in one line), the :attr:`before_call` hooks run, and the
        :attr:`after_call` hooks applied to a successful result.

        Raises:
            ToolError: unknown or bad arguments, or the tool's own refusal.
        """
        tool = self._schema_tools.get(name)
        listed = self._tool_manager.get_tool(name) if tool is None else None
        if listed is not None:
            problem = argument_problem(name, listed.parameters, arguments)
            if problem is not None:
                raise ToolError(problem)
        for hook in self.before_call:
            await hook(name, context)
        if tool is None:
            result = await super().call_tool(name, arguments, context)
        else:
            result = await tool.handler(dict(arguments))
        if isinstance(result, CallToolResult) and not result.is_error:
            for change in self.after_call:
                result = change(result)
        return result

    def _tool_input_schema(self, name: str) -> dict[str, Any] | None:
        # The SDK looks schemas up here (Mcp-Param headers on HTTP); it only knows its own.
        tool = self._schema_tools.get(name)
        return tool.input_schema if tool is not None else super()._tool_input_schema(name)

    async def run_stdio_async(self) -> None:
        """Serve over stdio, advertising ``tools.listChanged: true``.

        The SDK's own ``run_stdio_async`` passes no notification options, so the handshake
        would say the list never changes and clients that cache it would miss saved tools.
        """
        lowlevel = self._lowlevel_server
        options = lowlevel.create_initialization_options(NotificationOptions(tools_changed=True))
        async with stdio_server() as (read_stream, write_stream):
            await lowlevel.run(read_stream, _LenientWrites(write_stream), options)


async def tools_changed(ctx: Context[Any, Any] | None) -> None:
    """Send ``notifications/tools/list_changed`` to the client of the request ``ctx`` serves.

    A client on a handshake protocol version gets it on its session; one on 2026-07-28 or
    later through ``subscriptions/listen``. A client that cannot take it is not an error.
    """
    if ctx is None:
        return
    try:
        request = ctx.request_context
        if request.protocol_version in MODERN_PROTOCOL_VERSIONS:
            await ctx.notify_tools_changed()
        else:
            await request.session.send_tool_list_changed()
    except Exception as exc:
        logger.debug("tools/list_changed not sent: %s", exc)


class _LenientMessage:
    """A JSON-RPC message that serialises whatever string it holds.

    The SDK writes each message with pydantic, which refuses a string holding an unpaired
    UTF-16 surrogate (text a page cut in the middle of an emoji): the message would be lost
    and the server stop. Such a message is written instead with each lone surrogate replaced
    by U+FFFD: a ``\\ud83d`` escape would be valid JSON, but the SDK's own client (pydantic)
    refuses to read it, so the replacement character is what every MCP client can take.
    """

    __slots__ = ("_message",)

    def __init__(self, message: Any) -> None:
        self._message = message

    def model_dump_json(self, **options: Any) -> str:
        try:
            return str(self._message.model_dump_json(**options))
        except PydanticSerializationError as exc:
            if "surrogates" not in str(exc):
                raise
            return json_text(_replaced(self._message.model_dump(mode="json", **options)))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._message, name)


def _replaced(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings (keys included) made U+FFFD."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, dict):
        return {_replaced(key): _replaced(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_replaced(item) for item in value]
    return value


class _LenientWrites:
    """The stdio transport's write stream, each message made :class:`_LenientMessage`."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    async def send(self, item: SessionMessage) -> None:
        await self._inner.send(SessionMessage(_LenientMessage(item.message), item.metadata))  # type: ignore[arg-type]

    async def __aenter__(self) -> _LenientWrites:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> Any:
        return await self._inner.__aexit__(*exc_info)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
