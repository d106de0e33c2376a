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
from typing import Any

from ..errors import InvalidArgsError
from ..learning.context import ToolInfo, example_args
from ..learning.manifest import ToolSpec
from .ego_server import MAX_TOOL_NAME, EgoServer
from .holder import BrowserHolder, call
from .results import tool_result
from .sdk import CallToolResult, SchemaTool, ToolAnnotations, ToolError

__all__ = [
    "add_learning_tool",
    "add_learning_tools",
    "confirm_key",
    "confirm_key_for",
    "describe",
    "input_schema",
    "mcp_example",
    "mcp_name",
]

_SIDE_EFFECTS = {
    "read": "Read-only: safe to call any time.",
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
        + " Runs in an open tab on the site, else opens its start page.",
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
        try:
            result = await call(
                lambda: browser.site.run_tool(site_id, spec.name, arguments, confirm=confirm),
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
