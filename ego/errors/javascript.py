"""Errors thrown by JavaScript running in a page, a learning's tools included."""

from __future__ import annotations

from typing import Any

from .base import EgoError

__all__ = [
    "BrowserToolError",
    "CrossOriginRequestError",
    "JavaScriptError",
    "TokenRejectedError",
]


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


class TokenRejectedError(BrowserToolError):
    """A tool sent the token the page keeps (a bearer token read from its storage) and the
    site answered 401 or 403.

    The tab has a token, so logging in by hand is not what this asks: the message names the
    header and where the token was read; it may have expired, been revoked, or lack a
    permission. The tool threw an Error of this class name (see :mod:`ego.runtime.contract`).
    """


class CrossOriginRequestError(BrowserToolError):
    """A tool built a URL that is not on the page's origin, and sent nothing.

    A drafted API tool refuses any URL it built that leaves the page's origin (a path
    template such as ``/\\other-host/x``, which the URL parser reads as another host) before
    a request goes out. The tool threw an Error of this class name (see
    :mod:`ego.runtime.contract`).
    """
