"""The MCP SDK (the ``mcp`` package and its wire types, ``mcp_types``) behind one door: no other
ego module imports it (tests/test_mcp_adapter.py checks), so a release of the SDK that moves
or changes something is met in this file.

Everything here is the SDK's public API as its VERSIONING.md defines it (the names in the
``__all__`` of ``mcp`` and ``mcp_types``, documented import paths and signatures), except three
things the SDK offers no public way to do, each marked ``Private:`` below. They were checked
against mcp 2.3.0, and pyproject.toml allows only the 2.3 line because the SDK keeps
underscore names out of its promise: a minor release may change them.

1. Advertising ``tools.listChanged`` on stdio: :meth:`MCPServer.run_stdio_async` passes no
   notification options, and MCPServer gives no public handle on its low-level ``Server``,
   whose ``create_initialization_options`` and ``run`` take them.
2. Telling that low-level server the input schema of a tool MCPServer did not build (the
   lookup it makes for ``Mcp-Param`` headers on streamable HTTP).
3. Writing a message pydantic refuses to serialise: the stdio writer calls
   ``model_dump_json`` on each message, and :class:`_LenientMessage` stands in for it.

Logging: MCPServer installs a rich handler on the root logger at its ``log_level``, which
prints a line (wrapped over several) for every request and every refused call, and renders
a crash's traceback in full. :class:`SdkServer` asks for warnings only, and writes each log
record as one plain line on stderr (:func:`_plain_log_lines`).

``ego mcp --http`` serves each MCP session with a server of its own (its own browser context),
so it drives the SDK's streamable HTTP transport (:class:`StreamableHTTPServerTransport`, one
per session) itself instead of the SDK's session manager, which serves every session from one
server; uvicorn (the SDK's own HTTP server) listens. :class:`HttpSession` and
:func:`serve_asgi` are that part.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import sys
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any, Self

import uvicorn
from mcp.server.lowlevel import NotificationOptions
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER, StreamableHTTPServerTransport
from mcp.server.transport_security import (
    DEFAULT_MAX_REQUEST_BODY_SIZE,
    RequestBodyLimitMiddleware,
    TransportSecuritySettings,
)
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.shared.message import SessionMessage
from mcp.types import (
    CallToolResult,
    ImageContent,
    InputRequiredResult,
    TextContent,
    ToolAnnotations,
)
from mcp.types import Tool as MCPTool
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from pydantic_core import PydanticSerializationError

from ..protocol.jsontext import json_text

__all__ = [
    "HANDSHAKE_PROTOCOL_VERSIONS",
    "MCP_PROTOCOL_VERSION_HEADER",
    "MCP_SESSION_ID_HEADER",
    "Asgi",
    "CallResult",
    "CallToolResult",
    "Context",
    "HttpSession",
    "ImageContent",
    "Listing",
    "MCPTool",
    "SchemaTool",
    "SdkServer",
    "TextContent",
    "ToolAnnotations",
    "ToolError",
    "UnexpectedToolError",
    "client_roots",
    "serve_asgi",
    "tools_changed",
]

logger = logging.getLogger("ego.mcp")

#: What a tool call answers: a result, or (SDK tools only) a request for more input.
CallResult = CallToolResult | InputRequiredResult

#: Decides every ``tools/call``: the tool's name, its arguments as sent, and the request's
#: context (None when called from Python).
CallRoute = Callable[[str, dict[str, Any], "Context[Any, Any] | None"], Awaitable[CallResult]]

#: Shapes every ``tools/list`` answer: gets the tools served, answers the ones listed.
Listing = Callable[[list[MCPTool]], list[MCPTool]]


@dataclass(frozen=True)
class SchemaTool:
    """A tool listed with ``input_schema`` as given; ``handler`` gets the arguments as sent.

    MCPServer derives every tool's input schema from a Python signature; a learning tool's
    input is its manifest's JSON Schema, known only at run time, so it is one of these. The
    handler checks the arguments itself and raises ``ToolError`` for a bad call.
    """

    name: str
    description: str
    input_schema: dict[str, Any]
    annotations: ToolAnnotations
    handler: Callable[[dict[str, Any]], Awaitable[CallToolResult]]

    def listing(self) -> MCPTool:
        return MCPTool(
            name=self.name,
            description=self.description,
            input_schema=self.input_schema,
            annotations=self.annotations,
        )


class SdkServer(MCPServer[Any]):
    """The SDK's :class:`MCPServer`, serving :class:`SchemaTool` tools beside its own and
    sending every ``tools/call`` through ``route``.

    Args:
        name, instructions: what the server says of itself in the handshake.
        route: decides each call (:meth:`call_sdk_tool` and :meth:`schema_tool` are its means).
        on_close: awaited when the client goes away.
        listing: shapes what ``tools/list`` answers (by default every tool as built).
    """

    def __init__(
        self,
        *,
        name: str,
        instructions: str,
        route: CallRoute,
        on_close: Callable[[], Awaitable[None]],
        listing: Listing | None = None,
    ) -> None:
        @contextlib.asynccontextmanager
        async def lifespan(_: MCPServer[Any]) -> AsyncIterator[None]:
            try:
                yield None
            finally:
                await on_close()

        super().__init__(
            name=name, instructions=instructions, lifespan=lifespan, log_level="WARNING"
        )
        _plain_log_lines()
        self._route = route
        self._listing = listing
        self._schema_tools: dict[str, SchemaTool] = {}
        self._sdk_schemas: dict[str, dict[str, Any]] | None = None
        # Private (2 above): the low-level server asks this for a tool's input schema; the
        # SDK's own lookup knows only the tools it built, so ours asks it for the others.
        lowlevel = self._lowlevel_server
        sdk_lookup = lowlevel.get_tool_input_schema

        def input_schema(name: str) -> Any:
            tool = self._schema_tools.get(name)
            if tool is not None:
                return tool.input_schema
            return sdk_lookup(name) if sdk_lookup is not None else None

        lowlevel.get_tool_input_schema = input_schema

    def add_sdk_tool(
        self, fn: Callable[..., Any], *, name: str, annotations: ToolAnnotations
    ) -> None:
        """Serve ``fn`` as a tool whose input schema the SDK derives from its signature."""
        self.add_tool(fn, name=name, annotations=annotations)
        self._sdk_schemas = None

    def put_schema_tool(self, tool: SchemaTool) -> None:
        """Serve ``tool``, or replace the one of the same name."""
        self._schema_tools[tool.name] = tool

    def schema_tool(self, name: str) -> SchemaTool | None:
        """The schema tool called ``name``, if one is served."""
        return self._schema_tools.get(name)

    async def sdk_tool_schema(self, name: str) -> dict[str, Any] | None:
        """The input schema of the SDK tool called ``name`` (None when there is none)."""
        if self._sdk_schemas is None:
            listed = await MCPServer.list_tools(self)
            self._sdk_schemas = {tool.name: tool.input_schema for tool in listed}
        return self._sdk_schemas.get(name)

    async def call_sdk_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None
    ) -> CallResult:
        """Call the SDK tool ``name`` as MCPServer does (its arguments validated by pydantic).

        Raises:
            ToolError: an unknown tool, bad arguments, or the tool's own refusal.
        """
        return await MCPServer.call_tool(self, name, arguments, context)

    async def list_tools(self) -> list[MCPTool]:
        listed = await super().list_tools()
        tools = [*listed, *(tool.listing() for tool in self._schema_tools.values())]
        return self._listing(tools) if self._listing is not None else tools

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallResult:
        return await self._route(name, arguments, context)

    async def run_stdio(self) -> None:
        """Serve over stdio, advertising ``tools.listChanged: true``.

        The SDK's own ``run_stdio_async`` passes no notification options, so the handshake
        would say the list never changes and clients that cache it would miss saved tools.
        """
        # Private (1 above): no public handle on the low-level server takes the options.
        lowlevel = self._lowlevel_server
        options = lowlevel.create_initialization_options(NotificationOptions(tools_changed=True))
        async with stdio_server() as (read_stream, write_stream):
            await lowlevel.run(read_stream, _LenientWrites(write_stream), options)


def _plain_log_lines() -> None:
    """Make the handlers MCPServer put on the root logger write one plain line a record:
    the level, the logger's name and the message (the ``ego.mcp`` logger's messages are one
    line each)."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        if type(handler).__module__.startswith("rich"):
            root.removeHandler(handler)
            plain = logging.StreamHandler(sys.stderr)
            plain.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
            root.addHandler(plain)


#: An ASGI application: ``app(scope, receive, send)``.
Asgi = Callable[
    [MutableMapping[str, Any], Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]],
    Awaitable[None],
]


class HttpSession:
    """One MCP session over streamable HTTP: the SDK's transport for it, and ``server``
    serving the session's messages until the transport ends (the client's DELETE, or
    :meth:`terminate`).

    The ``Host`` and ``Origin`` of each request are checked before it reaches the session
    (``ego.mcp.hosts``, on every address the server may be bound to), so the SDK's own check,
    made only for the loopback spellings it lists, is off here.

    Args:
        server: the session's own server.
        session_id: the ``Mcp-Session-Id`` the client will send.
    """

    def __init__(self, server: SdkServer, session_id: str) -> None:
        self.session_id = session_id
        self._server = server
        self._transport = StreamableHTTPServerTransport(
            mcp_session_id=session_id,
            security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        self._connected = asyncio.Event()

    @property
    def terminated(self) -> bool:
        """True once the session ended."""
        return self._transport.is_terminated

    async def run(self) -> None:
        """Serve the session until its transport ends; the server's lifespan (its
        ``on_close``) ends with it."""
        lowlevel = self._server._lowlevel_server  # Private (1 above), as for stdio
        options = lowlevel.create_initialization_options(NotificationOptions(tools_changed=True))
        async with self._transport.connect() as (read_stream, write_stream):
            self._connected.set()
            await lowlevel.run(read_stream, _CheckedWrites(write_stream), options)

    async def handle(
        self,
        scope: MutableMapping[str, Any],
        receive: Callable[[], Awaitable[Any]],
        send: Callable[[Any], Awaitable[None]],
    ) -> int | None:
        """Answer one HTTP request of the session; the status it answered (None: none)."""
        await self._connected.wait()
        status: int | None = None

        async def watched(message: Any) -> None:
            nonlocal status
            if message.get("type") == "http.response.start":
                status = int(message["status"])
            await send(message)

        await self._transport.handle_request(scope, receive, watched)
        return status

    async def terminate(self) -> None:
        """End the session: its open streams close and :meth:`run` returns."""
        if not self._transport.is_terminated:
            await self._transport.terminate()


class _WriteStream:
    """A transport's write stream with :meth:`send` of its own: the rest is the inner one's."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    async def __aenter__(self) -> Self:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> Any:
        return await self._inner.__aexit__(*exc_info)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _CheckedWrites(_WriteStream):
    """The HTTP transport's write stream, each message checked to serialise: one pydantic
    refuses (a string holding a lone UTF-16 surrogate) is rebuilt with each such surrogate
    made U+FFFD, as :class:`_LenientMessage` does on stdio (the HTTP transport routes
    messages by their type, so they cannot be wrapped)."""

    async def send(self, item: SessionMessage) -> None:
        message: Any = item.message
        try:
            message.model_dump_json(by_alias=True, exclude_unset=True)
        except PydanticSerializationError as exc:
            if "surrogates" not in str(exc):
                raise
            fixed = _replaced(message.model_dump(mode="json", by_alias=True, exclude_unset=True))
            item = SessionMessage(type(message).model_validate(fixed), item.metadata)
        await self._inner.send(item)


async def serve_asgi(
    app: Asgi,
    sock: socket.socket,
    stop: asyncio.Event,
    *,
    before_shutdown: Callable[[], Awaitable[None]],
) -> None:
    """Serve ``app`` with uvicorn on the bound socket ``sock`` until ``stop`` is set (request
    bodies over the SDK's limit, 4 MiB, are refused with 413), then await
    ``before_shutdown`` (which ends the sessions and so their open streams) and stop. ego
    handles the signals itself, so that every session is closed before the server goes."""
    config = uvicorn.Config(
        RequestBodyLimitMiddleware(app, DEFAULT_MAX_REQUEST_BODY_SIZE),
        lifespan="off",
        log_level="warning",
        timeout_graceful_shutdown=5,
    )
    server = uvicorn.Server(config)
    config.load()
    server.lifespan = config.lifespan_class(config)
    await server.startup(sockets=[sock])
    try:
        await stop.wait()
    finally:
        server.should_exit = True
        await before_shutdown()
        await server.shutdown(sockets=[sock])


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


async def client_roots(context: Context[Any, Any] | None) -> list[str] | None:
    """The URIs of the roots the client of the current request declares, or None when it
    declares none or cannot list them (then the roots known before stay)."""
    if context is None:
        return None
    # A client that cannot list its roots keeps the ones it had: a failure here can only
    # leave fewer folders open, never more.
    with contextlib.suppress(Exception):
        capabilities = context.client_capabilities
        if capabilities is None or capabilities.roots is None:
            return None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # roots are deprecated in new protocol versions
            listed = await context.session.list_roots()
        return [str(root.uri) for root in listed.roots]
    return None


class _LenientMessage:
    """A JSON-RPC message that serialises whatever string it holds.

    The SDK writes each message with pydantic, which refuses a string holding an unpaired
    UTF-16 surrogate (text a page cut in the middle of an emoji): the message would be lost
    and the server stop. Such a message is written instead with each lone surrogate replaced
    by U+FFFD: a ``\\ud83d`` escape would be valid JSON, but the SDK's own client (pydantic)
    refuses to read it, so the replacement character is what every MCP client can take.
    Private (3 above): it relies on the stdio writer calling ``model_dump_json`` on it.
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


class _LenientWrites(_WriteStream):
    """The stdio transport's write stream, each message made :class:`_LenientMessage`."""

    async def send(self, item: SessionMessage) -> None:
        await self._inner.send(SessionMessage(_LenientMessage(item.message), item.metadata))  # type: ignore[arg-type]
