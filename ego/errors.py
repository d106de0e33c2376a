"""Every exception ego raises.

All of them derive from :class:`EgoError`, so ``except ego.EgoError`` catches anything the
library raises on purpose. Each message is one line that says what happened and what to do.

The tree::

    EgoError
    ├── BrowserError                  the browser, its process or the connection to it
    │   ├── ChromeNotFoundError       no Chrome binary on this machine
    │   ├── ChromeLaunchError         Chrome started but never offered a debugging endpoint
    │   ├── ProfileInUseError         another Chrome holds the profile folder
    │   ├── ConnectionFailedError     an endpoint could not be reached or refused us
    │   ├── BrowserClosedError        the connection closed or Chrome died
    │   ├── CommandTimeoutError       a CDP command got no answer in time
    │   ├── ProtocolError             Chrome answered a command with an error
    │   ├── TabClosedError            the tab went away while a call was using it
    │   ├── NavigationError           a navigation failed or did not reach its lifecycle point
    │   └── ContextDestroyedError     the page navigated away during an evaluate
    └── JavaScriptError               code in the page threw
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "BrowserClosedError",
    "BrowserError",
    "ChromeLaunchError",
    "ChromeNotFoundError",
    "CommandTimeoutError",
    "ConnectionFailedError",
    "ContextDestroyedError",
    "EgoError",
    "JavaScriptError",
    "NavigationError",
    "ProfileInUseError",
    "ProtocolError",
    "TabClosedError",
]


class EgoError(Exception):
    """Base class of every error ego raises on purpose."""


class BrowserError(EgoError):
    """Something went wrong with the browser, its process or the connection to it."""


class ChromeNotFoundError(BrowserError):
    """No Chrome or Chromium binary was found."""


class ChromeLaunchError(BrowserError):
    """Chrome was started but did not become usable."""


class ProfileInUseError(BrowserError):
    """The profile folder is locked by a Chrome that is still running."""

    def __init__(self, message: str, *, profile_dir: str, pid: int | None) -> None:
        super().__init__(message)
        self.profile_dir = profile_dir
        self.pid = pid


class ConnectionFailedError(BrowserError):
    """An endpoint could not be reached, or it refused the connection."""


class BrowserClosedError(BrowserError):
    """The connection to the browser closed; every pending and later command fails with this."""


class CommandTimeoutError(BrowserError, TimeoutError):
    """A CDP command, a wait or an evaluate got no answer within its timeout."""


class ProtocolError(BrowserError):
    """Chrome answered a command with a protocol error."""

    def __init__(self, message: str, *, method: str, code: int | None = None) -> None:
        super().__init__(message)
        self.method = method
        self.code = code


class TabClosedError(BrowserError):
    """The tab (CDP target) closed or detached while a call was using it."""


class NavigationError(BrowserError):
    """A navigation failed (DNS, refused, aborted) before reaching its lifecycle point."""


class ContextDestroyedError(BrowserError):
    """The page's JavaScript context went away (usually a navigation) during an evaluate."""


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
