"""What an endpoint's calls vary in: its args (typed, with the values seen as examples), the
fields that never changed (constants), and the JSON Schema of what it answered.

A field is a path arg, a query parameter or a top-level field of a JSON body. Over two or
more recorded calls, a field with one value in all of them is a constant of the tool and a
field whose value changed is an arg (required when every call had it). A single recorded
call cannot tell them apart: each of its fields is then an arg that defaults to the value
seen. Values the recording redacted (``REDACTED``) stay args without an example, except a
CSRF token, which the tool reads from the page (:mod:`.auth`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from ...replay.secrets import REDACTED
from ..catalog.schemas import json_type
from .endpoints import Endpoint

__all__ = ["MAX_EXAMPLES", "Field", "infer_fields", "schema_of"]

#: Examples kept per arg.
MAX_EXAMPLES: Final = 3
#: How deep a ``returns`` schema describes nested values.
MAX_DEPTH: Final = 8

Where = Literal["path", "query", "body"]


def _text_type(values: list[str]) -> str:
    """The type a query parameter's recorded texts share."""
    if all(re.fullmatch(r"-?(0|[1-9]\d{0,15})", v) for v in values):
        return "integer"
    if all(v in ("true", "false") for v in values):
        return "boolean"
    return "string"


def _typed(text: str, kind: str) -> Any:
    if kind == "integer":
        return int(text)
    if kind == "boolean":
        return text == "true"
    return text


_ABSENT: Final[Any] = object()


@dataclass
class Field:
    """One field of an endpoint's calls.

    Attributes:
        name: its name in the request (the path placeholder, the query parameter, the body
            key).
        where: ``"path"``, ``"query"`` or ``"body"``.
        arg: the arg that gives it (None for a constant).
        kind: its JSON Schema type.
        values: the value each recorded call gave it, typed (absent calls left out).
        required: every call had it (for an arg).
        constant: the value of a constant field.
        default: the value an arg takes when not given (a single recorded call's).
        secret: the recording redacted its value.
        csrf: it carries the page's CSRF token (read at run time, neither arg nor constant).
    """

    name: str
    where: Where
    arg: str | None
    kind: str
    values: list[Any] = field(default_factory=list)
    required: bool = True
    constant: Any = None
    default: Any = None
    secret: bool = False
    csrf: bool = False

    def spec(self) -> dict[str, Any]:
        """How the tool's source builds it: ``{"arg": name}`` (with ``default``) or
        ``{"const": value}``."""
        if self.arg is None:
            return {"const": self.constant}
        spec: dict[str, Any] = {"arg": self.arg}
        if self.default is not None:
            spec["default"] = self.default
        return spec

    def arg_schema(self) -> dict[str, Any]:
        """Its entry in the tool's compact ``args`` map."""
        where = {"path": "path segment", "query": "query parameter", "body": "body field"}
        described = f"the {where[self.where]} {self.name!r}"
        if self.secret:
            described += " (a secret the recording redacted: give the real value)"
        schema: dict[str, Any] = {
            "type": self.kind,
            "required": self.required and self.default is None,
            "description": described,
        }
        examples: dict[str, Any] = {}
        for value in self.values:
            if value != REDACTED:
                examples.setdefault(_key(value), value)
        if examples and not self.secret:
            schema["examples"] = list(examples.values())[:MAX_EXAMPLES]
        return schema


def _key(value: Any) -> str:
    """A value's identity as JSON (so that ``1`` and ``True`` stay two values)."""
    return json.dumps(value, sort_keys=True)


def _arg_name(name: str, taken: set[str], where: Where) -> str:
    base = re.sub(r"[^A-Za-z0-9_]+", "_", name).strip("_") or "value"
    if base[0].isdigit():
        base = f"{where}_{base}"
    candidate = base if base not in taken else f"{where}_{base}"
    while candidate in taken:
        candidate += "_"
    taken.add(candidate)
    return candidate


def infer_fields(endpoint: Endpoint, is_csrf: Any = None) -> list[Field]:
    """Every field of ``endpoint``'s calls, path args first, then query, then body.

    Args:
        endpoint: the endpoint and its recorded exchanges.
        is_csrf: a callable telling whether a field name carries the CSRF token (it is
            then marked ``csrf`` and left to the page).
    """
    exchanges = endpoint.exchanges
    taken: set[str] = set()
    fields: list[Field] = []
    for name, kind in endpoint.kinds.items():
        values = [endpoint.path_args(e).get(name) for e in exchanges]
        typed = [int(v) if kind == "integer" and v is not None else v for v in values]
        arg = _arg_name(name, taken, "path")
        fields.append(Field(name, "path", arg, "integer" if kind == "integer" else "string", typed))
    query_names = list(dict.fromkeys(name for e in exchanges for name, _ in e.query))
    per_call_query = [dict(e.query) for e in exchanges]
    fields += _fields("query", query_names, per_call_query, taken, is_csrf)
    bodies = [e.body for e in exchanges if e.body is not None or e.method not in ("GET", "HEAD")]
    objects = [b if isinstance(b, dict) else {} for b in bodies]
    body_names = list(dict.fromkeys(name for b in objects for name in b))
    if any(b is not None and not isinstance(b, dict) for b in bodies):
        fields.append(Field("", "body", _arg_name("body", taken, "body"), "array", list(bodies)))
    else:
        fields += _fields("body", body_names, objects, taken, is_csrf)
    return fields


def _fields(
    where: Where,
    names: list[str],
    calls: list[dict[str, Any]],
    taken: set[str],
    is_csrf: Any,
) -> list[Field]:
    found = []
    for name in names:
        seen = [call.get(name, _ABSENT) for call in calls]
        present = [v for v in seen if v is not _ABSENT]
        if where == "query":
            kind = _text_type([str(v) for v in present if v != REDACTED] or ["x"])
            present = [v if v == REDACTED else _typed(str(v), kind) for v in present]
        else:
            kinds = {json_type(v) for v in present if v != REDACTED} or {"string"}
            kind = kinds.pop() if len(kinds) == 1 else "string"
            if kinds:  # several JSON types seen: leave the type open
                kind = "any"
        secret = any(v == REDACTED for v in present)
        if secret and is_csrf is not None and is_csrf(name):
            found.append(Field(name, where, None, kind, present, csrf=True, secret=True))
            continue
        every_call = len(present) == len(calls)
        distinct = {_key(v) for v in present}
        if len(calls) > 1 and every_call and len(distinct) == 1 and not secret:
            found.append(Field(name, where, None, kind, present, constant=present[0]))
            continue
        arg = _arg_name(name, taken, where)
        default = present[0] if len(calls) == 1 and not secret else None
        field_ = Field(name, where, arg, kind, present, every_call, default=default, secret=secret)
        found.append(field_)
    for field_ in found:
        if field_.kind == "any":
            field_.kind = "string"
    return found


def schema_of(samples: list[Any], depth: int = 0) -> dict[str, Any]:
    """A JSON Schema every one of ``samples`` satisfies: their types, an object's properties
    (required when every sample has them), an array's items, ``MAX_DEPTH`` levels down."""
    if not samples:
        return {}
    types = sorted({json_type(v) for v in samples})
    if "integer" in types and "number" in types:
        types.remove("integer")
    schema: dict[str, Any] = {"type": types[0] if len(types) == 1 else types}
    if depth >= MAX_DEPTH:
        return schema
    objects = [v for v in samples if isinstance(v, dict)]
    if objects:
        keys = list(dict.fromkeys(k for o in objects for k in o))
        schema["properties"] = {
            key: schema_of([o[key] for o in objects if key in o], depth + 1) for key in keys
        }
        required = [key for key in keys if all(key in o for o in objects)]
        if required:
            schema["required"] = required
    items = [item for v in samples if isinstance(v, list) for item in v]
    if items:
        schema["items"] = schema_of(items, depth + 1)
    return schema
