"""Python values as JavaScript literals: the JSON that ego splices into code it runs in a page.

Everything here is pure string work; the page verbs and the tool wrapper both build on it.
"""

from __future__ import annotations

import math
from typing import Any, Final

import orjson

__all__ = ["MAX_JSON_DEPTH", "embed_json"]

#: The deepest JSON ego embeds in the page: containers nested this many levels, the outermost
#: object or array being level 1 (so a tool's args object may hold 253 more levels). It is
#: orjson's limit; the tests hold it to that. A tool's result can come back a little deeper
#: (Chrome returns about 300 levels).
MAX_JSON_DEPTH: Final = 254

# orjson's message when a value nests deeper than it writes.
_TOO_DEEP: Final = "Recursion limit reached"


def embed_json(value: Any) -> str:
    """``value`` as a JSON literal that is safe to splice into JavaScript source.

    Any JSON value round-trips exactly. U+2028 and U+2029 are escaped (they end a line in
    older engines and in some tools that show the source), and so is ``</`` so that a snippet
    pasted into an HTML ``<script>`` cannot close it. A value holding a ``"__proto__"`` key is
    embedded as ``JSON.parse("...")`` instead of a literal: in an object literal that key sets
    the prototype rather than making a property, so the key would be lost.

    Raises:
        TypeError: ``value`` is not JSON (NaN, a set, an integer beyond 64 bits, a string with
            a lone surrogate, a cycle, ...) or nests deeper than :data:`MAX_JSON_DEPTH`.
    """
    try:
        text = orjson.dumps(value).decode()
    except orjson.JSONEncodeError as exc:
        if str(exc) != _TOO_DEEP:
            raise TypeError(f"not a JSON value: {exc}") from None
        depth = _json_depth(value)
        if depth is None:
            raise TypeError("not a JSON value: it contains itself (a cycle)") from None
        raise TypeError(
            f"nested {depth} levels deep, more than the {MAX_JSON_DEPTH} levels ego embeds "
            "(the outermost object is level 1)"
        ) from None
    if "null" in text and _has_non_finite(value):  # orjson writes NaN and ±Infinity as null
        raise TypeError("not a JSON value: NaN and Infinity have no JSON form")
    if '"__proto__":' in text:
        text = orjson.dumps(text).decode()
        return "JSON.parse(" + _escape(text) + ")"
    # Most args hold none of the three: three scans, and no call.
    if "\u2028" in text or "\u2029" in text or "</" in text:
        return _escape(text)
    return text


def _json_depth(value: Any) -> int | None:
    """How many levels of dicts and lists ``value`` nests (0 for a scalar); None for a cycle.

    Walks without recursion, so any depth is measured, and enters a shared container again
    only at a deeper level than before, so that sharing cannot make the walk explode.
    """
    deepest = 0
    on_path: set[int] = set()
    entered: dict[int, int] = {}
    # (item, its level, leaving): an item stays on the path until its leaving marker pops,
    # which is after all of its children.
    stack: list[tuple[Any, int, bool]] = [(value, 1, False)]
    while stack:
        item, level, leaving = stack.pop()
        if leaving:
            on_path.discard(id(item))
            continue
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if id(item) in on_path:
            return None
        if entered.get(id(item), 0) >= level:
            continue
        entered[id(item)] = level
        on_path.add(id(item))
        deepest = max(deepest, level)
        stack.append((item, level, True))
        stack.extend((child, level + 1, False) for child in children)
    return deepest


def _has_non_finite(value: Any) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, dict):
        return any(_has_non_finite(item) for item in value.values())
    if isinstance(value, (list, tuple)):
        return any(_has_non_finite(item) for item in value)
    return False


def _escape(text: str) -> str:
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029").replace("</", "<\\/")
