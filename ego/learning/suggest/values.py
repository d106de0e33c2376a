"""What an endpoint's calls vary in: its args (typed, with the values seen as examples), the
fields that never changed (constants), and the JSON Schema of what it answered.

A field is a path arg, a query parameter, a field of the request body (a top-level JSON
field, a form or multipart field) or a GraphQL variable. Over two or more recorded calls, a
field with one value in all of them is a constant of the tool and a field whose value
changed is an arg (required when every call had it). A single recorded call cannot tell
them apart: each of its fields is then an arg that defaults to the value seen. A query or
form field sent several times in one call (``?tag=a&tag=b``) is an array arg, sent again as
that many fields. Values the recording redacted (``REDACTED``) stay args without an example,
except a CSRF token, which the tool reads from the page (:mod:`.auth`). A GraphQL
operation's document and name are constants whatever the calls: only its variables vary.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from ...replay.secrets import REDACTED
from ..catalog.schemas import json_type
from .endpoints import Endpoint
from .traffic import Exchange

__all__ = ["MAX_EXAMPLES", "Field", "args_of", "infer_fields", "schema_of"]

#: Examples kept per arg.
MAX_EXAMPLES: Final = 3
#: How deep a ``returns`` schema describes nested values.
MAX_DEPTH: Final = 8
#: The longest arg name drafted (a longer field name is cut).
MAX_ARG_NAME: Final = 40

Where = Literal["path", "query", "body", "variables"]
#: The JSON body field of a GraphQL request that holds its variables.
VARIABLES: Final = "variables"

_ABSENT: Final[Any] = object()


def _text_type(values: list[str]) -> str:
    """The type a query or form field's recorded texts share."""
    if all(re.fullmatch(r"-?(0|[1-9]\d{0,15})", v) for v in values):
        return "integer"
    if all(v in ("true", "false") for v in values):
        return "boolean"
    return "string"


def _typed(text: str, kind: str) -> Any:
    if text == REDACTED:
        return text
    if kind == "integer":
        return int(text)
    if kind == "boolean":
        return text == "true"
    return text


@dataclass
class Field:
    """One field of an endpoint's calls.

    Attributes:
        name: its name in the request (the path placeholder, the query parameter, the body
            key, the GraphQL variable).
        where: ``"path"``, ``"query"``, ``"body"`` or ``"variables"``.
        arg: the arg that gives it (None for a constant).
        kind: its JSON Schema type (an array arg's item type); ``"any"`` when calls gave it
            values of several types.
        values: the value each recorded call gave it, typed (absent calls left out).
        required: every call had it (for an arg).
        constant: the value of a constant field.
        default: the value an arg takes when not given (a single recorded call's), or
            absent.
        secret: the recording redacted its value.
        csrf: it carries the page's CSRF token (read at run time, neither arg nor constant).
        repeated: a query or form field a call sent several times: an array arg.
        nullable: a call gave it ``null``.
    """

    name: str
    where: Where
    arg: str | None
    kind: str
    values: list[Any] = field(default_factory=list)
    required: bool = True
    constant: Any = None
    default: Any = _ABSENT
    secret: bool = False
    csrf: bool = False
    repeated: bool = False
    nullable: bool = False

    def spec(self) -> dict[str, Any]:
        """How the tool's source builds it: ``{"arg": name}`` (with ``default``) or
        ``{"const": value}``."""
        if self.arg is None:
            return {"const": self.constant}
        spec: dict[str, Any] = {"arg": self.arg}
        if self.default is not _ABSENT:
            spec["default"] = self.default
        return spec

    def arg_schema(self) -> dict[str, Any]:
        """Its entry in the tool's compact ``args`` map."""
        where = {
            "path": "path segment",
            "query": "query parameter",
            "body": "body field",
            "variables": "GraphQL variable",
        }
        described = f"the {where[self.where]} {self.name!r}"
        if self.repeated:
            described += ", sent once per item"
        if self.secret:
            described += " (a secret the recording redacted: give the real value)"
        schema: dict[str, Any] = {}
        if self.repeated:
            items = {"type": self.kind} if self.kind != "any" else {}
            schema = {"type": "array", "items": items}
        elif self.kind != "any":
            schema = {"type": [self.kind, "null"] if self.nullable else self.kind}
        schema["required"] = self.required and self.default is _ABSENT
        schema["description"] = described
        examples: dict[str, Any] = {}
        for value in self.values:
            if value != REDACTED and not (isinstance(value, list) and REDACTED in value):
                examples.setdefault(_key(value), value)
        if examples and not self.secret:
            schema["examples"] = list(examples.values())[:MAX_EXAMPLES]
        return schema


def _key(value: Any) -> str:
    """A value's identity as JSON (so that ``1`` and ``True`` stay two values)."""
    return json.dumps(value, sort_keys=True)


def _arg_name(name: str, taken: set[str], where: Where) -> str:
    base = re.sub(r"[^A-Za-z0-9_]+", "_", name).strip("_")[:MAX_ARG_NAME].strip("_") or "value"
    if base[0].isdigit():
        base = f"{where}_{base}"
    candidate = base if base not in taken else f"{where}_{base}"
    while candidate in taken:
        candidate += "_"
    taken.add(candidate)
    return candidate


def _grouped(pairs: tuple[tuple[str, str], ...]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for name, value in pairs:
        grouped.setdefault(name, []).append(value)
    return grouped


def _graphql(endpoint: Endpoint) -> bool:
    return endpoint.operation is not None


def infer_fields(endpoint: Endpoint, is_csrf: Callable[[str], bool] | None = None) -> list[Field]:
    """Every field of ``endpoint``'s calls: path args, then query, then body (or GraphQL
    variables).

    Args:
        endpoint: the endpoint and its recorded exchanges.
        is_csrf: tells whether a field name carries the CSRF token (it is then marked
            ``csrf`` and left to the page).
    """
    exchanges = endpoint.exchanges
    taken: set[str] = set()
    fields: list[Field] = []
    for name, kind in endpoint.kinds.items():
        values = [endpoint.path_args(e).get(name) for e in exchanges]
        typed = [int(v) if kind == "integer" and v is not None else v for v in values]
        arg = _arg_name(name, taken, "path")
        kind_ = "integer" if kind == "integer" else "string"
        fields.append(Field(name, "path", arg, kind_, typed, secret=REDACTED in values))
    fields += _pair_fields("query", [_grouped(e.query) for e in exchanges], taken, is_csrf)
    writes = [e for e in exchanges if e.body is not None or e.method not in ("GET", "HEAD")]
    if any(e.encoding in ("form", "multipart") for e in writes):
        fields += _pair_fields("body", [_grouped(e.form) for e in writes], taken, is_csrf)
        return fields
    bodies = [e.body for e in writes]
    objects = [b if isinstance(b, dict) else {} for b in bodies]
    if _graphql(endpoint):
        # The document and the operation's name are what the tool is: never args.
        for name in dict.fromkeys(n for b in objects for n in b if n != VARIABLES):
            first = next(b[name] for b in objects if name in b)
            fields.append(Field(name, "body", None, json_type(first), [first], constant=first))
        variables: list[dict[str, Any]] = []
        for b in objects:
            given = b.get(VARIABLES)
            variables.append(given if isinstance(given, dict) else {})
        fields += _value_fields("variables", variables, taken, is_csrf)
        return fields
    if any(b is not None and not isinstance(b, dict) for b in bodies):
        fields.append(Field("", "body", _arg_name("body", taken, "body"), "array", list(bodies)))
    else:
        fields += _value_fields("body", objects, taken, is_csrf)
    return fields


def _pair_fields(
    where: Where,
    calls: list[dict[str, list[str]]],
    taken: set[str],
    is_csrf: Callable[[str], bool] | None,
) -> list[Field]:
    """Fields sent as ``name=text`` (a query string, a form): typed from their texts, an
    array when a call sent one several times."""
    found = []
    for name in dict.fromkeys(name for call in calls for name in call):
        sent = [call[name] for call in calls if name in call]
        repeated = any(len(texts) > 1 for texts in sent)
        kind = _text_type([t for texts in sent for t in texts if t != REDACTED] or ["x"])
        values = [
            [_typed(t, kind) for t in texts] if repeated else _typed(texts[-1], kind)
            for texts in sent
        ]
        found.append(_field(where, name, values, len(calls), taken, is_csrf, kind, repeated))
    return found


def _value_fields(
    where: Where,
    calls: list[dict[str, Any]],
    taken: set[str],
    is_csrf: Callable[[str], bool] | None,
) -> list[Field]:
    """Fields of JSON objects: typed from their values."""
    found = []
    for name in dict.fromkeys(name for call in calls for name in call):
        values = [call[name] for call in calls if name in call]
        kinds = {json_type(v) for v in values if v != REDACTED and v is not None}
        if "integer" in kinds and "number" in kinds:
            kinds.discard("integer")
        kind = kinds.pop() if len(kinds) == 1 else ("any" if kinds else "string")
        field_ = _field(where, name, values, len(calls), taken, is_csrf, kind)
        field_.nullable = any(v is None for v in values)
        found.append(field_)
    return found


def _field(
    where: Where,
    name: str,
    present: list[Any],
    calls: int,
    taken: set[str],
    is_csrf: Callable[[str], bool] | None,
    kind: str,
    repeated: bool = False,
) -> Field:
    """A field seen in ``present`` (one value per call that had it) of ``calls`` calls: a
    constant, an arg, or the CSRF token."""
    secret = any(v == REDACTED or (isinstance(v, list) and REDACTED in v) for v in present)
    if secret and is_csrf is not None and is_csrf(name):
        return Field(name, where, None, kind, present, csrf=True, secret=True, repeated=repeated)
    every_call = len(present) == calls
    distinct = {_key(v) for v in present}
    if calls > 1 and every_call and len(distinct) == 1 and not secret:
        return Field(name, where, None, kind, present, constant=present[0], repeated=repeated)
    arg = _arg_name(name, taken, where)
    default = present[0] if calls == 1 and not secret else _ABSENT
    return Field(
        name,
        where,
        arg,
        kind,
        present,
        every_call,
        default=default,
        secret=secret,
        repeated=repeated,
    )


def args_of(exchange: Exchange, endpoint: Endpoint, fields: list[Field]) -> dict[str, Any]:
    """The args a call of the tool needs to send what ``exchange`` sent."""
    path = endpoint.path_args(exchange)
    sources: dict[str, dict[str, Any]] = {"path": {}, "query": {}, "body": {}, "variables": {}}
    body = exchange.body if isinstance(exchange.body, dict) else {}
    for name, texts in _grouped(exchange.query).items():
        sources["query"][name] = texts
    if exchange.encoding in ("form", "multipart"):
        sources["body"] = dict(_grouped(exchange.form))
    else:
        sources["body"] = body
        variables = body.get(VARIABLES)
        sources["variables"] = variables if isinstance(variables, dict) else {}
    args: dict[str, Any] = {}
    for field_ in fields:
        if field_.arg is None:
            continue
        if field_.where == "path":
            raw: Any = path.get(field_.name)
            args[field_.arg] = int(raw) if field_.kind == "integer" and raw else raw
        elif field_.where == "body" and field_.name == "":
            args[field_.arg] = exchange.body
        elif field_.name in sources[field_.where]:
            value = sources[field_.where][field_.name]
            if isinstance(value, list) and (field_.where == "query" or exchange.form):
                # Texts of a query or form field: typed, all of them for an array arg.
                typed = [_typed(text, field_.kind) for text in value]
                value = typed if field_.repeated else typed[-1]
            args[field_.arg] = value
    return args


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
