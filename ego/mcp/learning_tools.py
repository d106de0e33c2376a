"""One MCP tool per learning tool, named ``<site>__<tool>``, annotated by its side effect.

Two tools whose names read the same (site ``a__b`` with tool ``c``, site ``a`` with tool
``b__c``) get different names: the first in ``(site, tool)`` order keeps it, the other gets
a hash suffix, and its description, ``learn_context`` and a logged warning say which is which.

Its input schema is the tool's own args schema from the manifest (the compact form compiled
to JSON Schema): a client calls ``demo-shop__search_products`` with ``{"query": "desk"}``.
An ``irreversible`` tool also takes ``confirm`` (boolean); no other tool does. When an
irreversible tool's own args already have an arg named ``confirm``, that arg keeps its name
and is passed to the tool, and ego's confirmation is ``ego_confirm`` instead (the schema and
the description say so).
"""

from __future__ import annotations

import copy
import json
import re
from typing import Annotated, Any, Literal

from pydantic import Field

from ..errors import InvalidArgsError, LearningError
from ..learning.catalog.manifest import ToolSpec
from ..learning.describe.compact import CompactContext, CompactTool, compact
from ..learning.describe.context import LearnContext, NoteInfo, ToolInfo, example_args
from ..learning.describe.context import read_note as read_site_note
from ..site import context_for
from ..site import describe_tool as describe_site_tool
from .ego_server import MAX_TOOL_NAME, EgoServer
from .holder import LOCAL_ONLY, BrowserHolder, call
from .limits import SiteTools
from .results import tool_result
from .sdk import CallToolResult, Context, SchemaTool, ToolAnnotations, ToolError, tools_changed

__all__ = [
    "add_context_tools",
    "add_learning_tool",
    "add_learning_tools",
    "confirm_key",
    "confirm_key_for",
    "context_text",
    "describe",
    "input_schema",
    "mcp_example",
    "mcp_name",
    "saved_tool_result",
]

_SIDE_EFFECTS = {
    "read": "Read-only.",
    "write": "Changes data on the site (reversibly).",
    "irreversible": "Irreversible (publishes, sends or pays for real): runs only with {key}: true.",
}


def mcp_name(site_id: str, tool: str) -> str:
    """The plain MCP tool name of a learning tool: ``<site>__<tool>``, in MCP's name
    alphabet, at most 128 characters. Two tools can have the same plain name; the server
    keeps names unique (:meth:`EgoServer.learning_tool_name`)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", f"{site_id}__{tool}")[:MAX_TOOL_NAME]


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


def confirm_key(spec: ToolSpec) -> str | None:
    """The argument that confirms an irreversible tool (None for other tools).

    ``confirm``, unless the tool's own args use that name: then ``ego_confirm``.
    """
    return confirm_key_for(spec.side_effect, spec.args)


def confirm_key_for(side_effect: str, args: dict[str, Any]) -> str | None:
    """:func:`confirm_key` from a tool's side effect and args schema."""
    if side_effect != "irreversible":
        return None
    properties = args.get("properties")
    taken = set(properties) if isinstance(properties, dict) else set()
    key = "confirm"
    while key in taken:
        key = f"ego_{key}"
    return key


def input_schema(spec: ToolSpec) -> dict[str, Any]:
    """The MCP input schema: the manifest's args schema, plus the confirm flag when
    irreversible."""
    schema = copy.deepcopy(spec.args)
    # MCP requires an object schema at the top; a manifest's full schema may leave it implicit.
    schema.setdefault("type", "object")
    key = confirm_key(spec)
    if key is not None:
        properties = schema.setdefault("properties", {})
        properties[key] = {
            "type": "boolean",
            "default": False,
            "description": "true runs this irreversible tool for real; without it the call "
            "is refused and nothing is sent.",
        }
    return schema


def _annotations(spec: ToolSpec) -> ToolAnnotations:
    if spec.side_effect == "read":
        return ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=True)
    return ToolAnnotations(
        read_only_hint=False,
        destructive_hint=spec.side_effect == "irreversible",
        open_world_hint=True,
    )


def _returns(spec: ToolSpec) -> str:
    returns = spec.returns
    if isinstance(returns, dict):
        properties = returns.get("properties")
        if returns.get("type") == "object" and isinstance(properties, dict) and properties:
            return "Returns an object with " + ", ".join(properties) + "."
        if returns.get("type") == "array":
            return 'Returns a list (under "result").'
    return 'Returns the tool\'s JSON result (an object as is, anything else under "result").'


def describe(site_id: str, spec: ToolSpec) -> str:
    """The tool's description for a model: what, when, what it returns, in a few lines."""
    key = confirm_key(spec) or "confirm"
    lines = [
        f"[{site_id}] {spec.description.strip() or spec.name}",
        _SIDE_EFFECTS.get(spec.side_effect, "").format(key=key)
        + " Runs in a tab on the site (opened if none).",
        _returns(spec),
    ]
    if spec.auth == "session":
        lines.append(
            "Uses the user's logged-in session: NEEDS_LOGIN means a person must log in by "
            "hand in that browser profile, then retry."
        )
    return "\n".join(line for line in lines if line)


def add_learning_tools(server: EgoServer, holder: BrowserHolder) -> None:
    """One MCP tool per learning tool, with its own annotations, named ``site__tool``.

    Tools are named in ``(site_id, tool)`` order, so when two plain names are the same the
    first in that order keeps it (see :meth:`EgoServer.learning_tool_name`).
    """
    found: list[tuple[str, ToolSpec]] = []
    for entry in holder.learnings.sites():
        if entry.manifest is None:
            continue
        manifest = entry.manifest
        specs: list[ToolSpec] = [*manifest.browser_tools.values(), *manifest.python_tools.values()]
        found.extend((manifest.id, spec) for spec in specs)
    for site_id, spec in sorted(found, key=lambda item: (item[0], item[1].name)):
        add_learning_tool(server, holder, site_id, spec)


async def saved_tool_result(
    server: EgoServer,
    holder: BrowserHolder,
    site_id: str,
    tool: str,
    data: dict[str, Any],
    ctx: Context[Any, Any] | None,
) -> CallToolResult:
    """The answer of a call that saved, promoted or restored ``site_id``'s ``tool``: ``data``
    with ``mcp_tool``, the name of the tool's own MCP tool (added or replaced here; None when
    the tool has none), once the client is told that the list changed."""
    try:
        _, spec = holder.learnings.tool(site_id, tool)
    except LearningError:
        data["mcp_tool"] = None
    else:
        data["mcp_tool"] = add_learning_tool(server, holder, site_id, spec)
    await tools_changed(ctx)
    return tool_result(data)


def add_learning_tool(
    server: EgoServer, holder: BrowserHolder, site_id: str, spec: ToolSpec
) -> str:
    """Add (or replace) the MCP tool of ``spec``, in the ``learnings`` group (a read-only
    server serves it when its side effect is ``read``); return its name (``<site_id>__<tool>``
    unless another tool has that name)."""
    key = confirm_key(spec)
    base = mcp_name(site_id, spec.name)
    name = server.learning_tool_name(site_id, spec.name, base)

    async def run(arguments: dict[str, Any]) -> CallToolResult:
        confirm = False
        if key is not None:
            value = arguments.pop(key, False)
            if not isinstance(value, bool):
                raise ToolError(f"{key} must be true or false, not {value!r}")
            confirm = value
        browser = await holder.browser()
        # The agent's current tab when it shows the site (a copy on another port it went to).
        tab = browser.site.showing(site_id, holder.current())
        try:
            result = await call(
                lambda: browser.site.run_tool(
                    site_id, spec.name, arguments, confirm=confirm, tab=tab
                ),
                confirm_key=key or "confirm",
            )
        except ToolError as exc:
            raise ToolError(_hint_nested(exc, arguments, spec)) from None
        return tool_result(result)

    description = describe(site_id, spec)
    if name != base:
        description += f"\n(Tool {spec.name!r} of site {site_id!r}: {base} names another tool.)"
    server.put_schema_tool(
        SchemaTool(
            name=name,
            description=description,
            input_schema=input_schema(spec),
            annotations=_annotations(spec),
            handler=run,
        ),
        group="learnings",
        in_read_only=spec.side_effect == "read",
    )
    return name


def _hint_nested(exc: ToolError, arguments: dict[str, Any], spec: ToolSpec) -> str:
    """A caller that nested the args under "args" (the old shape) is told to flatten them."""
    text = str(exc)
    properties = spec.args.get("properties")
    nested = "args" in arguments and not (isinstance(properties, dict) and "args" in properties)
    if nested and text.startswith(InvalidArgsError.__name__):
        text += '; pass the tool\'s args at the top level, not under "args"'
    return text


SiteId = Annotated[str, Field(description="A site id (a skill: its domain).")]


def add_context_tools(server: EgoServer, holder: BrowserHolder) -> None:
    """Register ``learn_context``, ``describe_tool`` and ``read_note``: what ego has learned
    for a page, in a few lines, and the rest of it on demand. They read local files only."""

    @server.tool(group="learnings", in_read_only=True, annotations=LOCAL_ONLY)
    async def learn_context(
        url: Annotated[str, Field(description="The page's URL or address.")],
        detail: Literal["compact", "full"] = "compact",
    ) -> CallToolResult:
        """Call first on a page: the tools ego learned for it, each its own MCP tool, and its
        notes. describe_tool, read_note or detail "full" say more."""

        async def read() -> LearnContext:
            return context_for(holder.learnings, url)

        context = await call(read)
        names = server.learning_tool_names()
        if detail == "full":
            return tool_result(full_for_mcp(context, names))
        short = compact(context)
        mode = server.limits.site_tools
        data = short.model_dump(mode="json")
        for tool in data["tools"]:
            name = names.get((tool["site_id"], tool["tool_name"]))
            if name is not None and tool["kind"] != "skill":
                tool["mcp_tool"] = name
        return tool_result(data, text=context_text(short, names, mode))

    @server.tool(group="learnings", in_read_only=True, annotations=LOCAL_ONLY)
    async def describe_tool(site_id: SiteId, tool: str) -> CallToolResult:
        """A tool in full: description, args and returns schemas, example, health record."""

        async def read() -> ToolInfo:
            return describe_site_tool(holder.learnings, site_id, tool)

        info = await call(read)
        data = info.model_dump(mode="json")
        name = server.learning_tool_names().get((info.site_id, info.tool_name))
        if info.runnable and info.kind != "node":
            if info.kind != "skill" and name is not None:
                data["mcp_tool"] = name
            data["example"] = mcp_example(info, name)
        return tool_result(data)

    @server.tool(group="learnings", in_read_only=True, annotations=LOCAL_ONLY)
    async def read_note(
        site_id: str,
        note: Annotated[str, Field(description="File name (api.md) or title.")],
    ) -> CallToolResult:
        """A site's note in full."""

        async def read() -> NoteInfo:
            return read_site_note(holder.learnings, site_id, note)

        found = await call(read)
        return tool_result(found.model_dump(mode="json"), text=found.text)


def context_text(
    context: CompactContext, names: dict[tuple[str, str], str], site_tools: SiteTools = "all"
) -> str:
    """The compact ``learn_context`` as an MCP agent reads it: each tool named as it is
    called (its own MCP tool, or through ``run_browser_tool`` when site tools are not
    listed), an irreversible tool's example with its confirmation.

    Args:
        context: the compact answer.
        names: the MCP name of each learning tool, by ``(site_id, tool)``.
        site_tools: which sites' tools the server lists (``ego mcp --site-tools``).
    """
    listed = site_tools != "none"

    def name_of(tool: CompactTool) -> str:
        served = names.get((tool.site_id, tool.tool_name))
        if not listed or served is None or served == mcp_name(tool.site_id, tool.tool_name):
            return tool.tool_name
        return served

    def example_of(tool: CompactTool) -> dict[str, Any]:
        if not listed or tool.kind == "skill":
            return tool.example
        key = confirm_key_for(tool.side_effect, {"properties": tool.args})
        return {**tool.example, key: True} if key else tool.example

    def header(site_id: str) -> str:
        how = (
            f"the MCP tool {site_id}__NAME"
            if listed
            else f'run_browser_tool {{site_id: "{site_id}", tool: NAME, args, confirm}}'
        )
        return f"tools, each {how} (* required, =example):"

    return context.text(
        tools_header=header,
        skills_header=lambda domain: (
            f'skills, each run_skill {{skill_id: "{domain}/NAME", params, confirm}}:'
        ),
        notes_header="notes (read_note):",
        call_name=name_of,
        example=example_of,
    )


def full_for_mcp(context: LearnContext, names: dict[tuple[str, str], str]) -> dict[str, Any]:
    """``learn_context``'s full answer (``detail: "full"``): each tool and note listed once
    (the sites say which are theirs by name only; skills are among the tools, kind
    ``"skill"``), each runnable tool with ``mcp_tool``, the MCP tool that runs it (from
    ``names``, the server's), and an ``example`` call of it."""
    data: dict[str, Any] = context.model_dump(mode="json")
    for info, dumped in zip(context.tools, data.get("tools", []), strict=True):
        if not info.runnable or info.kind not in ("browser", "python", "skill"):
            continue
        name = names.get((info.site_id, info.tool_name))
        if info.kind != "skill" and name is not None:
            dumped["mcp_tool"] = name
        dumped["example"] = mcp_example(info, name)
    for site in data.get("sites", []):
        site["tools"] = [tool["tool_name"] for tool in site.get("tools", [])]
        site["notes"] = [note.get("path") or note.get("title") for note in site.get("notes", [])]
    data.pop("skills", None)
    return data
