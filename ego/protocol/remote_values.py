"""Turning CDP ``RemoteObject`` results and exceptions into Python values and errors."""

from __future__ import annotations

import math
import re
from typing import Any

from ..errors import JavaScriptError

__all__ = ["javascript_error", "python_value"]

_UNSERIALIZABLE: dict[str, float] = {
    "NaN": math.nan,
    "Infinity": math.inf,
    "-Infinity": -math.inf,
    "-0": -0.0,
}


def python_value(remote: dict[str, Any]) -> Any:
    """Convert a ``RemoteObject`` returned by value into a Python value.

    JSON values map as ``json.loads`` would; ``undefined`` becomes ``None``; NaN, ±Infinity
    and -0 become floats; a BigInt becomes an ``int``. Values nested inside objects come back
    as JSON serialises them (NaN becomes ``None``), which is the browser's choice.
    """
    unserializable = remote.get("unserializableValue")
    if unserializable is not None:
        if unserializable.endswith("n"):
            return int(unserializable[:-1])
        return _UNSERIALIZABLE[unserializable]
    return remote.get("value")


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
        # A thrown primitive (throw "x", throw 42): no stack of its own.
        value = python_value(exception) if exception else None
        js_message = str(value) if value is not None else details.get("text", "")
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
