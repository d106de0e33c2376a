"""Turning CDP ``RemoteObject`` results and exceptions into Python values and errors."""

from __future__ import annotations

import math
import re
from typing import Any

from ..errors import JavaScriptError, ProtocolError

__all__ = ["javascript_error", "python_value", "unreturnable_error"]

_UNSERIALIZABLE: dict[str, float] = {
    "NaN": math.nan,
    "Infinity": math.inf,
    "-Infinity": -math.inf,
    "-0": -0.0,
}


def python_value(remote: dict[str, Any]) -> Any:
    """Convert a ``RemoteObject`` returned by value into a Python value.

    JSON values map as ``json.loads`` would; ``undefined`` becomes ``None``; NaN, ±Infinity
    and -0 become floats; a BigInt becomes an ``int``, or its decimal string (``"-123..."``)
    when it has more digits than Python turns into an int (``sys.get_int_max_str_digits()``,
    4,300 by default). Values nested inside objects come back as JSON serialises them (NaN
    becomes ``None``), which is the browser's choice.
    """
    unserializable = remote.get("unserializableValue")
    if unserializable is not None:
        if unserializable.endswith("n"):
            digits = unserializable[:-1]
            try:
                return int(digits)
            except ValueError:  # beyond Python's int-string limit: keep the digits
                return digits
        return _UNSERIALIZABLE[unserializable]
    return remote.get("value")


# Chrome's answers when a value (or a rejection's reason) cannot be sent back by value, each
# with what in the value causes it.
_UNRETURNABLE: dict[str, str] = {
    "Object couldn't be returned by value": "a Symbol, or a BigInt inside an object or array",
    "Object reference chain is too long": "a cycle, or nesting deeper than about 300 levels",
    "stack limit exceeded": "nesting deeper than about 300 levels",
    "Internal error": "a getter or Proxy that throws when read",
}


def unreturnable_error(exc: ProtocolError) -> JavaScriptError | None:
    """The :class:`JavaScriptError` for an evaluate whose value could not come back by value.

    Chrome answers such an evaluate with a protocol error, whether the code returned the
    value or rejected with it; this names the likely cause and the fix. None when ``exc`` is
    another protocol error.
    """
    text = str(exc)
    for marker, cause in _UNRETURNABLE.items():
        if marker in text:
            js_message = (
                f"the value it returned or threw cannot be sent back by value ({marker}): it "
                f"holds {cause}; return and throw only JSON data (JSON.stringify shows what fails)"
            )
            return JavaScriptError(
                f"TypeError: {js_message}", name="TypeError", js_message=js_message
            )
    return None


_FRAME = re.compile(r"\(?(?P<url>[^\s()]+):(?P<line>\d+):(?P<column>\d+)\)?\s*$")


def javascript_error(details: dict[str, Any], *, context: str = "") -> JavaScriptError:
    """Build a :class:`JavaScriptError` from CDP ``exceptionDetails``.

    ``context`` prefixes the message (a tool's name, say). The line and column are 1-based
    and come from the first stack frame, which is where the throw happened.
    """
    exception: dict[str, Any] = details.get("exception") or {}
    description: str = exception.get("description") or ""
    name = exception.get("className") or "Error"
    value: Any = None
    if exception.get("type") == "object" and description:
        head = description.split("\n    at ", 1)[0]
        prefix = f"{name}: "
        js_message = head[len(prefix) :] if head.startswith(prefix) else head
        stack = description
    else:
        # A thrown primitive (throw "x", throw 42, throw null): no stack of its own.
        value = python_value(exception) if exception else None
        js_message = str(value) if value is not None else _primitive_text(exception, details)
        name = "Error"
        stack = ""
    url, line, column = _throw_site(details, stack)
    where = f" at {url or '<anonymous>'}:{line}" if line is not None else ""
    lead = f"{context}: " if context else ""
    message = f"{lead}{name}: {js_message}{where}".replace("\n", " ")
    return JavaScriptError(
        message,
        name=name,
        js_message=js_message,
        stack=stack,
        url=url,
        line=line,
        column=column,
        value=value,
    )


def _primitive_text(exception: dict[str, Any], details: dict[str, Any]) -> str:
    # What the page would print for a thrown value that has no JSON form of its own.
    if exception.get("type") == "undefined":
        return "undefined"
    if exception.get("subtype") == "null":
        return "null"
    return str(exception.get("description") or details.get("text", ""))


def _throw_site(details: dict[str, Any], stack: str) -> tuple[str, int | None, int | None]:
    # Best source first: a captured stack trace, then the top frame of the formatted stack,
    # then the position CDP reports for the whole evaluation (useless for async throws).
    frames = (details.get("stackTrace") or {}).get("callFrames") or []
    if frames:
        top = frames[0]
        return top.get("url", ""), int(top["lineNumber"]) + 1, int(top["columnNumber"]) + 1
    for frame in stack.split("\n")[1:]:
        match = _FRAME.search(frame)
        if match:
            return match["url"], int(match["line"]), int(match["column"])
    if "lineNumber" in details:
        return (
            details.get("url", ""),
            int(details["lineNumber"]) + 1,
            int(details.get("columnNumber", 0)) + 1,
        )
    return details.get("url", ""), None, None
