"""Checking an MCP tool call's arguments before the tool runs: unknown ones refused, bad ones
answered in one line of MCP words (never a pydantic dump)."""

from __future__ import annotations

from typing import Any

from ..learning.catalog.schemas import first_error, validator

__all__ = ["argument_problem"]


def argument_problem(tool: str, schema: dict[str, Any], arguments: dict[str, Any]) -> str | None:
    """What is wrong with ``arguments`` for ``tool`` under its input ``schema``, or None.

    Args:
        tool: the tool's name, for the message.
        schema: its input schema.
        arguments: what the client sent.
    """
    properties = schema.get("properties")
    known = sorted(properties) if isinstance(properties, dict) else []
    if schema.get("additionalProperties", False) is False:
        unknown = sorted(set(arguments) - set(known))
        if unknown:
            takes = ", ".join(known) if known else "no arguments"
            names = ", ".join(repr(name) for name in unknown)
            return f"{tool} does not take {names}: it takes {takes}"
    error = first_error(validator(schema), arguments)
    if error is None:
        return None
    where = ".".join(str(part) for part in error.absolute_path)
    return f"{tool}: {where + ': ' if where else ''}{error.message}"
