"""Tool definitions as few characters as they can say the same: what ``tools/list`` sends.

An agent pays for every tool definition on every turn, and a prompt cache keyed on them
breaks when one changes. So the listing holds nothing that changes between calls (health,
counts, times live in ``learn_context``, ``describe_tool`` and ``ego health``), and each
definition is pressed before it is sent:

- a description's docstring indentation and line breaks become single spaces (a blank line
  stays a line break);
- the input schema loses what pydantic adds for people, not models: each ``title``, an
  optional argument's ``anyOf: [X, null]`` (an argument left out is the same as null) and
  its ``default: null``, a boolean's ``default: false`` (what leaving it out means anyway)
  and an object's ``additionalProperties: true`` (JSON Schema's own default).

The schema a call is checked against is not pressed: a client that sends ``null`` for an
optional argument is still understood.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

__all__ = ["compact_description", "compact_schema"]

_SPACES = re.compile(r"[ \t]*\n[ \t]*")


def compact_description(text: str | None) -> str | None:
    """``text`` with its docstring layout undone: indentation gone, the lines of a paragraph
    joined with spaces, paragraphs one line each."""
    if not text:
        return text
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n".join(_SPACES.sub(" ", paragraph).strip() for paragraph in paragraphs)


def compact_schema(schema: Any) -> Any:
    """A JSON Schema with pydantic's titles and nullable wrappers of optional arguments
    taken out; every other keyword kept as it is.

    Args:
        schema: an input schema (any JSON value; non-objects come back unchanged).
    """
    if not isinstance(schema, dict):
        return schema
    shaped: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "additionalProperties" and value is True:
            continue
        if key == "default" and value is False and schema.get("type") == "boolean":
            continue
        if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            shaped[key] = {name: compact_schema(item) for name, item in value.items()}
        elif key in ("items", "additionalProperties", "not", "contains"):
            shaped[key] = compact_schema(value)
        elif key in ("anyOf", "oneOf", "allOf", "prefixItems") and isinstance(value, list):
            shaped[key] = [compact_schema(item) for item in value]
        else:
            shaped[key] = value
    return _unwrap_nullable(shaped)


def _unwrap_nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``{anyOf: [X, {type: null}], default: null, ...}`` as ``{...X, ...}``."""
    options = schema.get("anyOf")
    if not isinstance(options, list) or schema.get("default") is not None:
        return schema
    kept = [option for option in options if option != {"type": "null"}]
    if len(kept) != 1 or len(kept) == len(options) or not isinstance(kept[0], dict):
        return schema
    merged = {key: value for key, value in schema.items() if key not in ("anyOf", "default")}
    return {**kept[0], **merged}
