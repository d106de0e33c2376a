"""Which recorded exchanges call the same endpoint, and its path as a template.

A path segment that is a number, a hex string of 8 or more digits or a UUID is a value, not
a name: ``/api/products/3`` and ``/api/products/7`` are one endpoint,
``/api/products/{product_id}``. Two endpoints whose paths differ in one other segment only
(``/api/users/ada`` and ``/api/users/grace``) are one too when their responses have the same
shape: that segment becomes an arg as well. ``/api/products`` and ``/api/categories`` stay
two, since what they answer differs. A GraphQL endpoint is one endpoint per operation name
(:mod:`.graphql`).

The words that name an endpoint's tool are read from its path decoded, letters and digits
only, a few short words at most: a hostile path (percent-escapes, dot segments, a long
random segment) gives a short name or ``root``, never its escapes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import unquote

from ...replay.secrets import REDACTED
from .graphql import Operation
from .traffic import Exchange

__all__ = ["Endpoint", "group_endpoints", "segment_value", "shape_of", "singular"]

_NUMBER: Final = re.compile(r"^-?\d+$")
_HEX: Final = re.compile(r"^[0-9a-fA-F]{8,}$")
_UUID: Final = re.compile(
    r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
)
#: Segments that say nothing of what an endpoint is (``/api/v2/...``).
_NOISE: Final = re.compile(r"^(api|rest|v\d+(\.\d+)?|json|ajax|_?internal)$", re.IGNORECASE)
#: The words of a tool's name: how many (the last ones of the path), how long each.
MAX_WORDS: Final = 4
MAX_WORD: Final = 20


def segment_value(segment: str) -> str | None:
    """The kind of value a path segment is (``"integer"``, ``"hex"``, ``"uuid"``, or
    ``"string"`` for a secret the recording redacted by value), or None for a name."""
    if segment == REDACTED:
        return "string"
    if _NUMBER.match(segment):
        return "integer"
    if _UUID.match(segment):
        return "uuid"
    if _HEX.match(segment) and any(c.isdigit() for c in segment):
        return "hex"
    return None


def singular(word: str) -> str:
    """``products`` -> ``product``, ``categories`` -> ``category`` (English plurals only)."""
    lower = word.lower()
    if lower.endswith("ies") and len(lower) > 4:
        return word[:-3] + "y"
    if lower.endswith(("ses", "xes", "zes", "ches", "shes")):
        return word[:-2]
    if lower.endswith("s") and not lower.endswith("ss") and len(lower) > 3:
        return word[:-1]
    return word


def _identifier(text: str) -> str:
    """An arg's name from a path segment's words (the last few; ``value`` when none)."""
    name = "_".join(name_words(text)[-MAX_WORDS:]) or "value"
    return f"p_{name}" if name[0].isdigit() else name


def name_words(text: str) -> list[str]:
    """The words a path segment or an operation name gives a tool's name: decoded, split at
    anything not a letter or digit and at camelCase humps, lower-case; words without a
    letter, and words longer than :data:`MAX_WORD` (random ids), left out."""
    decoded = unquote(unquote(text))
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", decoded)
    words = [w.lower() for w in re.split(r"[^A-Za-z0-9]+", spaced) if w]
    return [w for w in words if re.search(r"[a-z]", w) and len(w) <= MAX_WORD and w.isascii()]


def shape_of(value: Any, depth: int = 3) -> Any:
    """A JSON value's shape, hashable: the keys of its objects and the shape of each value
    (a list's by its first item), ``depth`` levels down; a scalar by its JSON type."""
    if isinstance(value, dict):
        if depth <= 0:
            return ("object",)
        return ("object", frozenset((k, shape_of(v, depth - 1)) for k, v in value.items()))
    if isinstance(value, list):
        return ("array", shape_of(value[0], depth - 1) if value and depth > 0 else None)
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return "null" if value is None else "string"


@dataclass
class Endpoint:
    """One endpoint of the site's API: a method and a path template, and its exchanges.

    Attributes:
        method: the request method.
        origin: ``scheme://host[:port]`` of its first exchange.
        segments: the path's segments; an arg is ``{name}``.
        kinds: for each arg segment, the kind of value it holds (``integer``, ``hex``,
            ``uuid``, ``string``).
        exchanges: every recorded exchange of it, in order.
        operation: the GraphQL operation it runs, or None.
    """

    method: str
    origin: str
    segments: list[str]
    kinds: dict[str, str] = field(default_factory=dict)
    exchanges: list[Exchange] = field(default_factory=list)
    operation: Operation | None = None

    @property
    def template(self) -> str:
        """The path as a template: ``/api/products/{product_id}``."""
        return "/" + "/".join(self.segments)

    @property
    def label(self) -> str:
        """``METHOD /template``, and a GraphQL operation's kind and name after it."""
        operation = self.operation
        if operation is None:
            return f"{self.method} {self.template}"
        return f"{self.method} {self.template} {operation.kind or 'operation'} {operation.name}"

    def path_args(self, exchange: Exchange) -> dict[str, str]:
        """The values ``exchange``'s path gives the template's args."""
        values = {}
        for template, actual in zip(self.segments, _segments(exchange.path), strict=False):
            if template.startswith("{") and template.endswith("}"):
                values[template[1:-1]] = actual
        return values

    def words(self) -> list[str]:
        """The words that name it (at most :data:`MAX_WORDS`, the path's last): a GraphQL
        operation's name, else its named segments, ``api`` and versions left out, a segment
        followed by an arg in the singular (``/products/{id}`` -> ``product``)."""
        if self.operation is not None:
            return name_words(self.operation.name)[-MAX_WORDS:]
        found: list[str] = []
        for position, segment in enumerate(self.segments):
            if segment.startswith("{") or _NOISE.match(segment) or not segment:
                continue
            following = self.segments[position + 1 : position + 2]
            words = name_words(segment)
            if words and following and following[0].startswith("{"):
                words[-1] = singular(words[-1])
            found += words
        return found[-MAX_WORDS:]


def _segments(path: str) -> list[str]:
    return [part for part in path.split("/") if part != ""] or [""]


def _templated(exchange: Exchange) -> tuple[list[str], dict[str, str]]:
    segments = _segments(exchange.path)
    kinds: dict[str, str] = {}
    out = []
    for position, segment in enumerate(segments):
        kind = segment_value(segment)
        if kind is None:
            out.append(segment)
            continue
        before = segments[position - 1] if position else ""
        base = singular(before) if before and segment_value(before) is None else "value"
        name = _identifier(f"{base}_id") if kind != "string" else _identifier(base)
        while name in kinds:
            name = f"{name}_{position}"
        kinds[name] = kind
        out.append("{" + name + "}")
    return out, kinds


def _merge_varying(endpoints: list[Endpoint]) -> list[Endpoint]:
    """Join endpoints that differ in one named segment and answer the same shape."""
    merged: list[Endpoint] = []
    for endpoint in endpoints:
        partner = next((other for other in merged if _one_apart(other, endpoint)), None)
        if partner is None:
            merged.append(endpoint)
            continue
        position = next(
            i
            for i, (a, b) in enumerate(zip(partner.segments, endpoint.segments, strict=True))
            if a != b
        )
        if not partner.segments[position].startswith("{"):
            before = partner.segments[position - 1] if position else "value"
            name = _identifier(singular(before) if not before.startswith("{") else "value")
            while name in partner.kinds:
                name = f"{name}_{position}"
            partner.segments[position] = "{" + name + "}"
            partner.kinds[name] = "string"
        partner.exchanges.extend(endpoint.exchanges)
    return merged


def _one_apart(a: Endpoint, b: Endpoint) -> bool:
    if a.method != b.method or a.origin != b.origin or len(a.segments) != len(b.segments):
        return False
    if a.operation is not None or b.operation is not None:
        return False
    differing = [(x, y) for x, y in zip(a.segments, b.segments, strict=True) if x != y]
    if len(differing) != 1 or differing[0][1].startswith("{"):
        return False
    # A named segment differs: only answers of the same shape make it an arg.
    shapes_a = {shape_of(e.response) for e in a.exchanges if e.response is not None}
    shapes_b = {shape_of(e.response) for e in b.exchanges if e.response is not None}
    return len(shapes_a) == 1 and shapes_a == shapes_b


def group_endpoints(exchanges: Iterable[Exchange]) -> list[Endpoint]:
    """The endpoints ``exchanges`` call, in the order each was first seen."""
    by_key: dict[tuple[str, str, str, str], Endpoint] = {}
    for exchange in exchanges:
        segments, kinds = _templated(exchange)
        operation = exchange.operation
        key = (
            exchange.method,
            exchange.origin,
            "/".join(segments),
            operation.name if operation else "",
        )
        endpoint = by_key.get(key)
        if endpoint is None:
            endpoint = Endpoint(exchange.method, exchange.origin, segments, kinds)
            endpoint.operation = operation
            by_key[key] = endpoint
        endpoint.exchanges.append(exchange)
    return _merge_varying(list(by_key.values()))
