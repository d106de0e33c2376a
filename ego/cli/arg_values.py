"""Turning a command line's ``--arg KEY=TEXT`` into the JSON value the tool's schema asks for.

On a command line every value is text. ``--arg query=123`` means the string ``"123"`` when the
tool's ``query`` is a string and the number 123 when it is an integer, so the text is read by
the type its property declares; a text that cannot be read that way is refused (an
InvalidArgsError, like any other bad arg) with a hint naming the type and an example, before
anything else runs.
"""

from __future__ import annotations

import math
import re
from typing import Any, Final

import orjson

from ..errors import InvalidArgsError
from ..learning.catalog.schemas import json_type

__all__ = ["property_schema", "value_from_text"]

_INTEGER = re.compile(r"-?\d+")

#: How a hint names each JSON type, and an example of it on the command line.
_WORDS: Final = {
    "integer": ("an integer", "3"),
    "number": ("a number", "1.5"),
    "boolean": ("true or false", "true"),
    "array": ("a JSON array", '\'["a", "b"]\''),
    "object": ("a JSON object", "'{\"k\": 1}'"),
    "null": ("null", "null"),
    "string": ("a string", "text"),
}
_ORDER: Final = ("null", "boolean", "integer", "number", "array", "object")


def property_schema(schema: Any, key: str) -> Any:
    """The subschema ``schema`` (an args object's schema) gives ``key``, or None."""
    if not isinstance(schema, dict):
        return None
    properties = schema.get("properties")
    if isinstance(properties, dict) and key in properties:
        return properties[key]
    extra = schema.get("additionalProperties")
    return extra if isinstance(extra, dict) else None


def _types(schema: Any, depth: int = 0) -> set[str]:
    """The JSON types ``schema`` allows, from ``type``, ``enum``/``const`` or its branches."""
    if not isinstance(schema, dict) or depth > 8:
        return set()
    declared = schema.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list):
        return {each for each in declared if isinstance(each, str)}
    found: set[str] = set()
    if "const" in schema:
        found.add(json_type(schema["const"]))
    if isinstance(schema.get("enum"), list):
        found.update(json_type(value) for value in schema["enum"])
    for keyword in ("anyOf", "oneOf"):
        branches = schema.get(keyword)
        if isinstance(branches, list):
            for branch in branches:
                found |= _types(branch, depth + 1)
    return found


def _read(kind: str, text: str) -> tuple[bool, Any]:
    """``(True, value)`` when ``text`` reads as a ``kind``, else ``(False, None)``."""
    if kind == "null":
        return (True, None) if text == "null" else (False, None)
    if kind == "boolean":
        lowered = text.strip().lower()
        if lowered in ("true", "false"):
            return True, lowered == "true"
        return False, None
    if kind == "integer":
        stripped = text.strip()
        return (True, int(stripped)) if _INTEGER.fullmatch(stripped) else (False, None)
    try:
        value = orjson.loads(text)
    except ValueError:
        return False, None
    if kind == "number":
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return (True, value) if ok and math.isfinite(value) else (False, None)
    if kind == "array":
        return (True, value) if isinstance(value, list) else (False, None)
    if kind == "object":
        return (True, value) if isinstance(value, dict) else (False, None)
    return False, None


def value_from_text(key: str, text: str, schema: Any) -> Any:
    """Read ``text`` (from ``--arg key=text``) as the type ``schema`` declares for it.

    A string property gets the text as it is (``"123"`` stays a string); an integer, number
    or boolean property gets the number or ``true``/``false``; an array or object property
    gets the parsed JSON. When ``schema`` says nothing about the type (no schema, an unknown
    key, a ``$ref``), the text is JSON when it parses and text otherwise.

    Args:
        key: the arg's name (for the hint).
        text: what followed ``=``.
        schema: the property's subschema (see :func:`property_schema`), or None.

    Raises:
        InvalidArgsError: the property takes no string and ``text`` does not read as any
            type it takes; the message names the type and gives an example.
    """
    kinds = _types(schema)
    if not kinds or not kinds.intersection((*_ORDER, "string")):
        try:
            return orjson.loads(text)
        except ValueError:
            return text
    for kind in _ORDER:
        if kind in kinds:
            ok, value = _read(kind, text)
            if ok:
                return value
    if "string" in kinds:
        return text
    wanted = [kind for kind in _ORDER if kind in kinds]
    words = " or ".join(_WORDS[kind][0] for kind in wanted)
    example = _WORDS[wanted[0]][1]
    raise InvalidArgsError(
        f"bad args at {key!r}: --arg {key}={text} is not {words}, which the args schema wants "
        f"(e.g. --arg {key}={example}); nothing was sent to the browser",
        field=key,
    )
