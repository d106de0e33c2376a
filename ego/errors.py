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
    ├── JavaScriptError               code in the page threw
    │   └── BrowserToolError          ... inside a learning's browser tool (names site, tool, file)
    └── LearningError                 a learning (site, tool, skill) cannot be used as asked
        ├── UnknownSiteError          no site with that id in any learnings root
        ├── InvalidManifestError      the site's manifest is broken; the site is unusable
        ├── UnknownToolError          the manifest declares no such tool
        ├── UnsafePathError           a path in the manifest leaves the site folder
        ├── InvalidArgsError          args fail the tool's schema
        ├── ToolLoadError             a tool file is missing or cannot be loaded
        ├── NoTabError                no tab to run a tool in, and none can be opened
        ├── ConfirmationRequiredError an irreversible tool was called without confirm=True
        ├── NeedsLoginError           NEEDS_LOGIN: the tool found no usable session
        ├── SkillBrokenError          SKILL_BROKEN: the site no longer matches the tool
        └── ReturnsMismatchError      a result fails the tool's ``returns`` schema
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "BrowserClosedError",
    "BrowserError",
    "BrowserToolError",
    "ChromeLaunchError",
    "ChromeNotFoundError",
    "CommandTimeoutError",
    "ConfirmationRequiredError",
    "ConnectionFailedError",
    "ContextDestroyedError",
    "EgoError",
    "InvalidArgsError",
    "InvalidManifestError",
    "JavaScriptError",
    "LearningError",
    "NavigationError",
    "NeedsLoginError",
    "NoTabError",
    "ProfileInUseError",
    "ProtocolError",
    "ReturnsMismatchError",
    "SkillBrokenError",
    "TabClosedError",
    "ToolLoadError",
    "UnknownSiteError",
    "UnknownToolError",
    "UnsafePathError",
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


class LearningError(EgoError):
    """A learning (site, tool or skill) cannot be used as asked."""


class UnknownSiteError(LearningError):
    """No learnings root holds a site with this id."""


class InvalidManifestError(LearningError):
    """A site's manifest is broken (bad JSON, wrong schema, id not matching its folder)."""

    def __init__(self, message: str, *, site_id: str, problems: list[str]) -> None:
        super().__init__(message)
        self.site_id = site_id
        self.problems = problems


class UnknownToolError(LearningError):
    """The site's manifest does not declare the tool asked for."""


class UnsafePathError(LearningError):
    """A manifest path is absolute, holds ``..`` or a backslash, or resolves outside the site."""


class InvalidArgsError(LearningError, ValueError):
    """Args fail the tool's schema; nothing was sent to the browser."""

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.field = field


class ToolLoadError(LearningError):
    """A tool's file is missing, unreadable, or (for Python tools) fails to import."""


class NoTabError(LearningError):
    """No open tab matches the site, and the manifest gives no start URL to open one."""


class ReturnsMismatchError(LearningError):
    """A tool's result does not match the ``returns`` schema its manifest declares."""


class ConfirmationRequiredError(LearningError):
    """An ``irreversible`` tool (it posts, sends, pays) was called without ``confirm=True``."""


class NeedsLoginError(LearningError):
    """NEEDS_LOGIN: a tool that rides on the session found none.

    Recovery: a person logs in by hand in that browser profile, then the call is retried.
    Never automate the login and never relearn the tool.
    """

    def __init__(self, message: str, *, site_id: str, tool: str, detail: str) -> None:
        super().__init__(message)
        self.site_id = site_id
        self.tool = tool
        self.detail = detail


class SkillBrokenError(LearningError):
    """SKILL_BROKEN: the site no longer matches the tool (a selector or an API is gone).

    Recovery: the tool needs a new version; retrying will not help.
    """

    def __init__(self, message: str, *, site_id: str, tool: str, detail: str) -> None:
        super().__init__(message)
        self.site_id = site_id
        self.tool = tool
        self.detail = detail
