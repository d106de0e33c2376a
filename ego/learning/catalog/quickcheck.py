"""A fast yes for args that plainly fit a simple schema, so the hot path skips jsonschema.

Most tools declare flat args: named properties with a type and perhaps a numeric range,
some required, no others allowed (the compact manifest form compiles to exactly that). For
such a schema :func:`quick_check` returns a predicate that answers True only when the args
are valid under JSON Schema's own rules; False means "not sure", and the caller asks
jsonschema, which stays the authority and writes the error message. Any other schema gets
None: always ask jsonschema.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["quick_check"]

# Keywords that only annotate; they never make an instance invalid.
_ANNOTATIONS = frozenset({"description", "title", "examples", "default", "deprecated"})
_PROPERTY_KEYWORDS = _ANNOTATIONS | {"type", "minimum", "maximum"}
_OBJECT_KEYWORDS = _ANNOTATIONS | {"type", "properties", "required", "additionalProperties"}


def _is_integer(value: object) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


# The checks of the jsonschema library's default type checker, type by type.
_TYPES: dict[str, Callable[[object], bool]] = {
    "string": lambda value: isinstance(value, str),
    "integer": _is_integer,
    "number": _is_number,
    "boolean": lambda value: isinstance(value, bool),
    "null": lambda value: value is None,
    "object": lambda value: isinstance(value, dict),
    "array": lambda value: isinstance(value, list),
}


def _property_check(schema: object) -> Callable[[object], bool] | None:
    if not isinstance(schema, Mapping) or not set(schema) <= _PROPERTY_KEYWORDS:
        return None
    kind = schema.get("type")
    type_check = _TYPES.get(kind) if isinstance(kind, str) else None
    if type_check is None:
        return None
    low, high = schema.get("minimum"), schema.get("maximum")
    for bound in (low, high):
        if bound is not None and not _is_number(bound):
            return None
    if low is None and high is None:
        return type_check

    def check(value: object) -> bool:
        if not type_check(value):
            return False
        if not _is_number(value):
            return True
        number: float = value  # type: ignore[assignment]
        return (low is None or number >= low) and (high is None or number <= high)

    return check


def quick_check(schema: Mapping[str, Any]) -> Callable[[dict[str, Any]], bool] | None:
    """A predicate that is True only for args ``schema`` accepts, or None for a schema
    outside the simple shape (then only jsonschema can tell)."""
    if "$schema" in schema or schema.get("type") != "object" or not set(schema) <= _OBJECT_KEYWORDS:
        return None
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    extra = schema.get("additionalProperties", True)
    if not isinstance(properties, Mapping) or not isinstance(required, list):
        return None
    if not isinstance(extra, bool) or not all(isinstance(name, str) for name in required):
        return None
    checks: dict[str, Callable[[object], bool]] = {}
    for name, part in properties.items():
        check = _property_check(part)
        if check is None:
            return None
        checks[name] = check
    needed = tuple(required)

    def valid(args: dict[str, Any]) -> bool:
        for name in needed:
            if name not in args:
                return False
        for name, value in args.items():
            check = checks.get(name)
            if check is None:
                if not extra:
                    return False
            elif not check(value):
                return False
        return True

    return valid
