"""Errors thrown by JavaScript running in a page, a learning's tools included."""

from __future__ import annotations

from typing import Any

from .base import EgoError

__all__ = ["BrowserToolError", "JavaScriptError"]


class JavaScriptError(EgoError):
    """JavaScript running in the page threw.

    Attributes:
        name: the JS error class, e.g. ``TypeError`` (``"Error"`` for a thrown non-Error).
        js_message: the JS error's message.
        stack: the JS stack as the page formats it, or ``""``.
        url: the script URL of the throwing frame (a tool's ``sourceURL`` when it has one).
        line: 1-based line of the throwing frame, or ``None``.
        column: 1-based column, or ``None``.
        value: the thrown value when it was not an Error object (``throw "x"``).
    """

    def __init__(
        self,
        message: str,
        *,
        name: str = "Error",
        js_message: str = "",
        stack: str = "",
        url: str = "",
        line: int | None = None,
        column: int | None = None,
        value: Any = None,
    ) -> None:
        super().__init__(message)
        self.name = name
        self.js_message = js_message
        self.stack = stack
        self.url = url
        self.line = line
        self.column = column
        self.value = value


class BrowserToolError(JavaScriptError):
    """A learning's browser tool threw in the page.

    The message names the site, the tool, the tool file and the line in that file. The JS
    details (``name``, ``js_message``, ``stack``, ``line``) are as in :class:`JavaScriptError`.
    """

    def __init__(self, message: str, *, site_id: str, tool: str, file: str, **details: Any) -> None:
        super().__init__(message, **details)
        self.site_id = site_id
        self.tool = tool
        self.file = file
