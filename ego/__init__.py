"""ego: drive a real Chrome over raw CDP and run site learnings inside the page."""

from __future__ import annotations

from .api import BrowserStarter, connect, launch
from .browser import Browser
from .chrome import find_chrome
from .errors import (
    BrowserClosedError,
    BrowserError,
    ChromeLaunchError,
    ChromeNotFoundError,
    CommandTimeoutError,
    ConnectionFailedError,
    ContextDestroyedError,
    EgoError,
    JavaScriptError,
    NavigationError,
    ProfileInUseError,
    ProtocolError,
    TabClosedError,
)
from .tab import Tab

__all__ = [
    "Browser",
    "BrowserClosedError",
    "BrowserError",
    "BrowserStarter",
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
    "Tab",
    "TabClosedError",
    "connect",
    "find_chrome",
    "launch",
]

__version__ = "0.1.0"
