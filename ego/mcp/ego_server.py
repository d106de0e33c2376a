"""The server behind ``ego mcp``: each tool registered with its group, the operator's limits
deciding which tools are served, learning tools with names of their own, and one call path
that checks a call's arguments and runs the hooks around it.

Every call takes :meth:`EgoServer.call_tool`, which is also the one place where a failure
becomes what the agent reads: an ego error in an MCP caller's words, anything else (a bug, a
system error) as one bounded line, with one short line on the ``ego.mcp`` logger and never a
traceback (the SDK would log one per crash, and a deep one, a ``RecursionError``'s, takes
minutes to print while the server answers nothing).

A tool's group (``ego mcp --tools``), and whether it reads or writes files the agent names
(``files=True``: the client's roots are asked for before it runs, where they count), are
declared where the tool is registered: ``@server.tool(group="pages", ...)`` for a tool of a
Python signature,
:meth:`EgoServer.put_schema_tool` for a learning tool (whose input schema is its manifest's).
A tool not served (its group not chosen, or a ``--read-only`` server and a tool not kept
there) is never handed to the SDK, so it is neither listed nor callable. The SDK itself is
reached through :mod:`.sdk` only.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from ..errors import EgoError
from .arguments import argument_problem
from .definitions import compact_description, compact_schema
from .limits import GROUPS, ServerLimits, ToolGroup
from .sdk import (
    CallResult,
    CallToolResult,
    Context,
    HttpSession,
    MCPTool,
    SchemaTool,
    SdkServer,
    ToolAnnotations,
    ToolError,
    UnexpectedToolError,
    tools_changed,
)
from .wording import failure_message, one_line

__all__ = ["MAX_TOOL_NAME", "EgoServer"]

logger = logging.getLogger("ego.mcp")

#: The longest tool name MCP allows.
MAX_TOOL_NAME = 128

F = TypeVar("F", bound=Callable[..., Any])


class EgoServer:
    """ego's MCP server: tools in groups, served as ``limits`` say.

    Args:
        name, instructions: what the server says of itself in the handshake.
        limits: which groups are served, and whether the server is read-only.
        on_close: awaited when the client goes away.
    """

    def __init__(
        self,
        *,
        name: str,
        instructions: str,
        limits: ServerLimits,
        on_close: Callable[[], Awaitable[None]],
    ) -> None:
        self.limits = limits
        self._sdk = SdkServer(
            name=name,
            instructions=instructions,
            route=self.call_tool,
            on_close=on_close,
            listing=self._listing,
        )
        #: Every tool registered with :meth:`tool`, served or not, and its group.
        self._declared: dict[str, ToolGroup] = {}
        #: The tools served, and each one's group.
        self._served: dict[str, ToolGroup] = {}
        #: The tools that read or write a file the agent names (``files=True``).
        self._file_tools: set[str] = set()
        #: Run before every call (with the tool's name and the request's context).
        self.before_call: list[Callable[[str, Context[Any, Any] | None], Awaitable[None]]] = []
        #: Applied to every successful result, in order, with the tool's name and arguments.
        self.after_call: list[Callable[[str, dict[str, Any], CallToolResult], CallToolResult]] = []
        #: The name each learning tool is served under, and the tool of each such name.
        self._names: dict[tuple[str, str], str] = {}
        self._owners: dict[str, tuple[str, str]] = {}
        #: With ``site_tools="matching"``: the ids of the sites on the current tab's origin.
        self.matching_sites: Callable[[], frozenset[str]] = frozenset
        #: The sites whose tools the client was last shown (or told of by list_changed).
        self._shown_sites: frozenset[str] = frozenset()

    def serves(self, group: ToolGroup, *, in_read_only: bool) -> bool:
        """Whether a tool of ``group`` is served: its group is chosen, and the server is not
        read-only or the tool is one a read-only server keeps."""
        return group in self.limits.groups and (in_read_only or not self.limits.read_only)

    def tool(
        self,
        *,
        group: ToolGroup,
        annotations: ToolAnnotations,
        in_read_only: bool = False,
        files: bool = False,
        name: str | None = None,
    ) -> Callable[[F], F]:
        """Register the decorated function as a tool of ``group``, served when
        :meth:`serves` says so; its input schema is derived from its signature.

        Args:
            group: the tool's group (``ego mcp --tools``), one of :data:`~.limits.GROUPS`.
            annotations: the hints the client sees.
            in_read_only: a ``--read-only`` server serves it too (navigation and reading).
            files: it reads or writes a file the agent names (:meth:`uses_files`).
            name: the tool's name; by default the function's.

        Raises:
            ValueError: ``group`` is not a group, or a tool of that name is registered.
        """
        _check_group(group)

        def register(fn: F) -> F:
            tool_name = name or fn.__name__
            if tool_name in self._declared:
                raise ValueError(f"a tool named {tool_name!r} is registered already")
            self._declared[tool_name] = group
            if files:
                self._file_tools.add(tool_name)
            if self.serves(group, in_read_only=in_read_only):
                self._sdk.add_sdk_tool(fn, name=tool_name, annotations=annotations)
                self._served[tool_name] = group
            return fn

        return register

    def put_schema_tool(self, tool: SchemaTool, *, group: ToolGroup, in_read_only: bool) -> None:
        """Add ``tool`` to ``group``, or replace the schema tool of the same name; served when
        :meth:`serves` says so.

        Raises:
            ValueError: ``group`` is not a group, or a tool registered with :meth:`tool` has
                the name.
        """
        _check_group(group)
        if tool.name in self._declared:
            raise ValueError(f"a tool named {tool.name!r} is registered already")
        if self.serves(group, in_read_only=in_read_only):
            self._sdk.put_schema_tool(tool)
            self._served[tool.name] = group

    def uses_files(self, name: str) -> bool:
        """Whether the tool ``name`` reads or writes a file the agent names (registered with
        ``files=True``)."""
        return name in self._file_tools

    def tool_groups(self) -> dict[str, ToolGroup]:
        """Every tool served, and its group."""
        return dict(self._served)

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
        """Every tool listed, as ``tools/list`` answers (no file is read for it)."""
        return await self._sdk.list_tools()

    def listed_sites(self) -> frozenset[str] | None:
        """The sites whose tools ``tools/list`` holds now; None for every site."""
        mode = self.limits.site_tools
        if mode == "all":
            return None
        return self.matching_sites() if mode == "matching" else frozenset()

    def _listing(self, tools: list[MCPTool]) -> list[MCPTool]:
        """What ``tools/list`` answers: each definition pressed (:mod:`.definitions`), and
        site tools left out as ``limits.site_tools`` says. Nothing in it changes between
        calls, so a client's cache of it holds until a learning is saved or restored."""
        sites = self.listed_sites()
        if sites is not None:
            self._shown_sites = sites
        listed = []
        for tool in tools:
            update: dict[str, Any] = {"description": compact_description(tool.description)}
            owner = self._owners.get(tool.name)
            if owner is not None and self._sdk.schema_tool(tool.name) is not None:
                if sites is not None and owner[0] not in sites:
                    continue
            else:  # a manifest's schema is the site's own; a built one is pressed
                update["input_schema"] = compact_schema(tool.input_schema)
            listed.append(tool.model_copy(update=update))
        return listed

    async def _tell_if_sites_changed(self, context: Context[Any, Any] | None) -> None:
        """With ``site_tools="matching"``: send list_changed when the current tab's sites
        are not the ones the client was last shown."""
        if self.limits.site_tools != "matching":
            return
        now = self.matching_sites()
        if now != self._shown_sites:
            self._shown_sites = now
            await tools_changed(context)

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallResult:
        """Call a tool: its arguments checked first (an SDK tool's unknown ones refused, bad
        ones answered in one line), the :attr:`before_call` hooks run, and the
        :attr:`after_call` hooks applied to a successful result.

        Raises:
            ToolError: unknown or bad arguments, the tool's own refusal, or any other
                failure, as one line (see the module docstring).
        """
        tool = self._sdk.schema_tool(name)
        schema = await self._sdk.sdk_tool_schema(name) if tool is None else None
        if schema is not None:
            problem = argument_problem(name, schema, arguments)
            if problem is not None:
                raise ToolError(one_line(problem))
        try:
            for hook in self.before_call:
                await hook(name, context)
            if tool is None:
                result = await self._sdk.call_sdk_tool(name, arguments, context)
            else:
                result = await tool.handler(dict(arguments))
        except Exception as exc:
            raise ToolError(_failure(name, exc)) from None
        finally:  # a call that failed may have moved the tab all the same
            await self._tell_if_sites_changed(context)
        if isinstance(result, CallToolResult) and not result.is_error:
            for change in self.after_call:
                result = change(name, arguments, result)
        return result

    async def run_stdio_async(self) -> None:
        """Serve over stdio until the client goes away, advertising ``tools.listChanged``."""
        await self._sdk.run_stdio()

    def http_session(self, session_id: str) -> HttpSession:
        """One streamable HTTP session served by this server (``ego mcp --http`` gives each
        MCP session a server, and a browser context, of its own)."""
        return HttpSession(self._sdk, session_id)


def _failure(name: str, exc: Exception) -> str:
    """The one line a failed call of ``name`` answers; a failure that is not a refusal (a
    crash the SDK caught, or anything a schema tool raised) is also logged, in one line."""
    cause: BaseException = exc
    if isinstance(exc, UnexpectedToolError) and exc.__cause__ is not None:
        cause = exc.__cause__  # the SDK kept the crash's own text on the server
    elif isinstance(exc, ToolError):
        return one_line(str(exc))  # a refusal, already in the caller's words
    message = failure_message(name, cause)
    if not isinstance(cause, ToolError | EgoError):
        logger.warning("tool %s failed: %s", name, one_line(message, 300))
    return message


def _check_group(group: str) -> None:
    if group not in GROUPS:
        raise ValueError(f"tool group {group!r} is not one of {', '.join(GROUPS)}")
