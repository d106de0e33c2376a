"""What a tab's page wrote to its console, and its uncaught exceptions, in a bounded buffer.

The log listens to ``Runtime.consoleAPICalled`` and ``Runtime.exceptionThrown`` from the
moment the tab attaches (the tab enables the Runtime domain for it). It spans navigations and
keeps the newest :data:`MAX_MESSAGES`; older ones are dropped and counted.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from ..protocol.session import Session
    from ..protocol.transport import Subscription

__all__ = ["MAX_MESSAGES", "ConsoleLog", "ConsoleMessage", "format_args"]

#: Messages a tab keeps; past it the oldest go first (:attr:`ConsoleLog.dropped` counts them).
MAX_MESSAGES: Final = 1000

#: Characters of one message's text kept (a page may log megabytes).
_MAX_TEXT: Final = 10_000

_FORMAT = re.compile(r"%[sdifoOc%]")


@dataclass(frozen=True)
class ConsoleMessage:
    """One console message, or one uncaught exception, of the page.

    Attributes:
        level: Chrome's console call type: ``"log"``, ``"info"``, ``"debug"``, ``"warning"``,
            ``"error"``, ``"assert"``, ``"trace"``, ``"dir"``, ``"table"``, ...; ``"error"``
            for an uncaught exception.
        text: the message as the console shows it (format specifiers such as ``%s`` applied,
            objects shortened to their preview); for an exception, ``Uncaught`` and its
            description (``Uncaught Error: boom``).
        url: the script or page that logged it, or ``""``.
        line: its 1-based line, or None when Chrome gave none.
        column: its 1-based column, or None.
        timestamp: when, in milliseconds since the epoch.
        exception: True for an uncaught exception (or unhandled rejection).
        stack: the exception's stack (or the console call's frames), or ``""``.
    """

    level: str
    text: str
    url: str = ""
    line: int | None = None
    column: int | None = None
    timestamp: float = 0.0
    exception: bool = False
    stack: str = ""

    def as_dict(self) -> dict[str, Any]:
        """The message as a JSON-ready dict."""
        return {
            "level": self.level,
            "text": self.text,
            "url": self.url,
            "line": self.line,
            "column": self.column,
            "timestamp": self.timestamp,
            "exception": self.exception,
            "stack": self.stack,
        }


class ConsoleLog:
    """The newest :data:`MAX_MESSAGES` console messages of one tab, since it attached.

    Events reach it through a subscription whose handler runs in its own task, so
    :meth:`messages` first lets queued events through.
    """

    def __init__(self, max_messages: int = MAX_MESSAGES) -> None:
        self._messages: deque[ConsoleMessage] = deque(maxlen=max_messages)
        self._subscription: Subscription | None = None
        #: Messages dropped because the buffer was full, since attach (or the last clear).
        self.dropped = 0

    def attach(self, session: Session) -> None:
        """Start listening on ``session`` (the subscription is the session's: it ends when the
        session does). Call before ``Runtime.enable``."""
        handlers = {
            "Runtime.consoleAPICalled": self._on_console,
            "Runtime.exceptionThrown": self._on_exception,
        }
        self.close()
        self._subscription = session.subscribe_each(handlers)

    def close(self) -> None:
        """Stop listening; the messages stay readable."""
        if self._subscription is not None:
            self._subscription.close()
            self._subscription = None

    async def messages(self, *, clear: bool = False) -> list[ConsoleMessage]:
        """The messages kept, oldest first; ``clear`` empties the buffer (and the counter)."""
        if self._subscription is not None:
            await self._subscription.drain()
        kept = list(self._messages)
        if clear:
            self._messages.clear()
            self.dropped = 0
        return kept

    def _add(self, message: ConsoleMessage) -> None:
        if len(self._messages) == self._messages.maxlen:
            self.dropped += 1
        self._messages.append(message)

    def _on_console(self, params: dict[str, Any]) -> None:
        frames = (params.get("stackTrace") or {}).get("callFrames") or []
        top = frames[0] if frames else {}
        self._add(
            ConsoleMessage(
                level=str(params.get("type", "log")),
                text=_clip(format_args(params.get("args") or [])),
                url=str(top.get("url", "")),
                line=_one_based(top.get("lineNumber")),
                column=_one_based(top.get("columnNumber")),
                timestamp=float(params.get("timestamp", 0.0)),
                stack=_frames_text(frames) if params.get("type") in ("trace", "error") else "",
            )
        )

    def _on_exception(self, params: dict[str, Any]) -> None:
        details = params.get("exceptionDetails") or {}
        exception = details.get("exception") or {}
        description = str(exception.get("description") or _show(exception) or "")
        head = str(details.get("text") or "Uncaught")
        first_line = description.split("\n", 1)[0]
        text = f"{head} {first_line}".strip() if first_line and first_line not in head else head
        frames = (details.get("stackTrace") or {}).get("callFrames") or []
        self._add(
            ConsoleMessage(
                level="error",
                text=_clip(text),
                url=str(details.get("url") or (frames[0].get("url", "") if frames else "")),
                line=_one_based(details.get("lineNumber")),
                column=_one_based(details.get("columnNumber")),
                timestamp=float(params.get("timestamp", 0.0)),
                exception=True,
                stack=_clip(description if "\n" in description else _frames_text(frames)),
            )
        )


def format_args(args: list[dict[str, Any]]) -> str:
    """A console call's arguments (CDP RemoteObjects) as the console shows them.

    A first string argument's ``%s``, ``%d``/``%i``, ``%f``, ``%o``/``%O`` take the next
    arguments; ``%c`` (CSS) takes one and shows nothing; the rest are joined by spaces.
    """
    if not args:
        return ""
    rest = list(args)
    parts: list[str] = []
    first = rest[0]
    if first.get("type") == "string" and "%" in str(first.get("value", "")):
        rest.pop(0)

        def substitute(match: re.Match[str]) -> str:
            spec = match.group(0)
            if spec == "%%":
                return "%"
            if not rest:
                return spec
            arg = rest.pop(0)
            if spec == "%c":
                return ""
            if spec in ("%d", "%i") and isinstance(arg.get("value"), int | float):
                return str(int(arg["value"]))
            return _show(arg)

        parts.append(_FORMAT.sub(substitute, str(first.get("value", ""))))
    parts.extend(_show(arg) for arg in rest)
    return " ".join(parts)


def _show(arg: dict[str, Any]) -> str:
    """One RemoteObject as short text: strings raw, primitives as JavaScript writes them,
    objects by their preview or description."""
    kind = arg.get("type")
    if kind == "string":
        return str(arg.get("value", ""))
    if kind == "undefined":
        return "undefined"
    if "unserializableValue" in arg:
        return str(arg["unserializableValue"])
    if kind in ("number", "boolean"):
        value = arg.get("value")
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, float) and value.is_integer():
            return str(int(value))
        return str(value)
    if kind == "object" and arg.get("subtype") == "null":
        return "null"
    preview = arg.get("preview")
    if kind == "object" and preview and arg.get("subtype") not in ("error", "node", "regexp"):
        return _preview_text(preview)
    return str(arg.get("description") or kind or "")


def _preview_text(preview: dict[str, Any]) -> str:
    properties = preview.get("properties") or []
    more = ", …" if preview.get("overflow") else ""
    if preview.get("subtype") == "array":
        items = ", ".join(_property_value(p) for p in properties)
        return f"[{items}{more}]"
    items = ", ".join(f"{p.get('name')}: {_property_value(p)}" for p in properties)
    return f"{{{items}{more}}}"


def _property_value(prop: dict[str, Any]) -> str:
    value = str(prop.get("value", ""))
    return repr(value) if prop.get("type") == "string" else value


def _frames_text(frames: list[dict[str, Any]]) -> str:
    lines = []
    for frame in frames:
        name = frame.get("functionName") or "<anonymous>"
        line = _one_based(frame.get("lineNumber"))
        column = _one_based(frame.get("columnNumber"))
        lines.append(f"    at {name} ({frame.get('url', '')}:{line}:{column})")
    return "\n".join(lines)


def _one_based(number: Any) -> int | None:
    return number + 1 if isinstance(number, int) else None


def _clip(text: str) -> str:
    return text if len(text) <= _MAX_TEXT else text[:_MAX_TEXT] + "…"
