"""Errors of the browser, its process, the connection to it and its pages."""

from __future__ import annotations

from .base import EgoError

__all__ = [
    "BrowserClosedError",
    "BrowserError",
    "ChromeLaunchError",
    "ChromeNotFoundError",
    "CommandTimeoutError",
    "CommandTooLargeError",
    "ConnectionFailedError",
    "ContextDestroyedError",
    "DialogOpenError",
    "DownloadFailedError",
    "ElementNotActionableError",
    "ElementNotFoundError",
    "FrameDetachedError",
    "FrameNotFoundError",
    "InvalidSelectorError",
    "NavigationError",
    "NoSelectorError",
    "NotRetriedError",
    "OriginBlockedError",
    "OriginLimitsError",
    "PoolExhaustedError",
    "ProfileInUseError",
    "ProtocolError",
    "ResendRefusedError",
    "SiteUnreachableError",
    "StaleRefError",
    "TabClosedError",
    "TabLimitError",
    "TargetCrashedError",
    "UnknownTabError",
    "WorkerEndedError",
    "WrongElementError",
]


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


class OriginBlockedError(NavigationError):
    """A navigation was refused by the browser's limits: an origin outside the allowed ones,
    a blocked one, or a local URL (``file:``, ``chrome:``) where those are not allowed.

    Attributes:
        url: the URL refused.
    """

    def __init__(self, message: str, *, url: str) -> None:
        super().__init__(message)
        self.url = url


class OriginLimitsError(BrowserError):
    """The origin limits could not be set up on a page (Chrome refused to let ego hold its
    document requests): ego closed the page rather than let it run without them.

    Attributes:
        target_id: the page's CDP target id.
    """

    def __init__(self, message: str, *, target_id: str) -> None:
        super().__init__(message)
        self.target_id = target_id


class SiteUnreachableError(NavigationError):
    """The site's server could not be reached: a navigation to it, or a request a tool made
    to it, failed at the network level (connection refused, name not resolved, reset, timed
    out). It says nothing about the tool, and is recorded as such (``SITE_UNREACHABLE``).

    Attributes:
        url: the URL that could not be reached.
        reason: Chrome's error (``net::ERR_CONNECTION_REFUSED``).
    """

    def __init__(self, message: str, *, url: str, reason: str) -> None:
        super().__init__(message)
        self.url = url
        self.reason = reason


class ResendRefusedError(NavigationError):
    """A reload was refused because it would send a form again: the page is the answer to a
    POST (or another request that changes something), and reloading it repeats that request.

    Attributes:
        url: the page's URL.
        method: the HTTP method of the request the page came from.
    """

    def __init__(self, message: str, *, url: str, method: str) -> None:
        super().__init__(message)
        self.url = url
        self.method = method


class ContextDestroyedError(BrowserError):
    """The page's JavaScript context went away (usually a navigation) during an evaluate."""


class FrameDetachedError(BrowserError):
    """A frame was removed from its page before or while a call used it."""


class WorkerEndedError(BrowserError):
    """A worker ended (terminated, closed, or gone with its page) before or while a call
    used it; ``tab.workers()`` lists the ones running now."""


class FrameNotFoundError(BrowserError):
    """No frame of the tab matches what ``tab.frame()`` asked for within its timeout."""


class DownloadFailedError(BrowserError):
    """A download was cancelled or failed (by the page, the server, or the browser closing)."""


class TargetCrashedError(BrowserError):
    """The tab's renderer process crashed (or was killed).

    Pending and later calls on that tab fail with this until it is reloaded
    (:meth:`ego.Tab.reload` or a navigation) or closed; other tabs are untouched.
    """


class DialogOpenError(BrowserError):
    """A JavaScript dialog (``alert``, ``confirm``, ``prompt``, ``beforeunload``) blocks the tab.

    While it is open the page runs nothing: pending and new calls on the tab fail with this
    at once instead of waiting for their timeout. Handle it (``tab.handle_dialog``) or let the
    launch's dialog policy answer it.

    Attributes:
        dialog_type: ``"alert"``, ``"confirm"``, ``"prompt"`` or ``"beforeunload"``.
        dialog_message: the text the page showed.
        url: the page that opened it.
    """

    def __init__(self, message: str, *, dialog_type: str, dialog_message: str, url: str) -> None:
        super().__init__(message)
        self.dialog_type = dialog_type
        self.dialog_message = dialog_message
        self.url = url


class CommandTooLargeError(BrowserError, ValueError):
    """A command is larger than Chrome accepts on its DevTools socket; it was not sent.

    Attributes:
        size: the command's size in bytes.
        limit: the largest command ego sends.
    """

    def __init__(self, message: str, *, size: int, limit: int) -> None:
        super().__init__(message)
        self.size = size
        self.limit = limit


class ElementNotFoundError(BrowserError):
    """No element on the page matches the selector given to ``click`` or ``type``."""

    def __init__(self, message: str, *, selector: str) -> None:
        super().__init__(message)
        self.selector = selector


class ElementNotActionableError(ElementNotFoundError):
    """An element matches, but a user could not act on it: it stayed hidden, moving,
    disabled, covered by another element, or (for typing) not editable, until the wait ended.

    Attributes:
        selector: the selector (or ``ref=e12``) given.
        check: the check that failed: ``"visible"``, ``"stable"``, ``"enabled"``,
            ``"receives events"``, ``"editable"``, ``"checkable"``, ``"state changed"`` or
            ``"typed"`` (the field, read back after typing, took none of the text).
        seen: what the check saw, in words (``"covered by <div class=overlay>"``).
    """

    def __init__(self, message: str, *, selector: str, check: str, seen: str) -> None:
        super().__init__(message, selector=selector)
        self.check = check
        self.seen = seen


class WrongElementError(BrowserError, ValueError):
    """A selector or ref names an element, but not one the action takes: a link given to
    ``select``, or a select's option where the select itself is wanted. It fails at once
    and nothing is done.

    The message words the fix for Python callers; a front end words it its own way with
    :meth:`worded`.

    Attributes:
        selector: the selector (or ``ref=e12``) given.
        found: the element in words (``"a link (<a>)"``, ``"an option ('High')"``).
        wanted: what the action takes (``"a <select>"``).
        action: the verb's Python name (``"select"``).
        owner: for an option, the ``ref=e7`` of its select (what to pass instead), else None.
        choice: for an option, its value (what to choose it by).
    """

    def __init__(
        self,
        *,
        selector: str,
        found: str,
        wanted: str,
        action: str,
        owner: str | None = None,
        choice: str | None = None,
    ) -> None:
        self.selector = selector
        self.found = found
        self.wanted = wanted
        self.action = action
        self.owner = owner
        self.choice = choice
        call = f"tab.{action}"
        fix = f"{call}({owner!r}, {choice!r})" if owner is not None else f"{call}()"
        super().__init__(self.worded(repr(selector), f"{call}()", repr(owner), fix))

    def worded(self, given: str, call: str, owner: str, fix: str) -> str:
        """The message in a front end's words.

        Args:
            given: the selector or ref as the caller named it (``"'ref=e8'"``, ``"ref e8"``).
            call: the action as the caller calls it (``"tab.select()"``, ``"select_option"``).
            owner: :attr:`owner` as the caller names it.
            fix: for an option, the call that chooses it through its select.
        """
        if self.owner is not None:
            return (
                f"{given} is {self.found} of the <select> {owner}, not the <select> itself: "
                f"choose it by calling {fix}"
            )
        return (
            f"{given} is {self.found}, not {self.wanted}: {call} takes {self.wanted} (its ref "
            "or a selector for it); a dropdown built of other elements is clicked instead"
        )


class InvalidSelectorError(BrowserError, ValueError):
    """A selector is malformed (not CSS, an empty ``>>`` part, a ``ref=`` of the wrong
    shape); nothing was done in the page.

    Attributes:
        selector: the selector given.
    """

    def __init__(self, message: str, *, selector: str) -> None:
        super().__init__(message)
        self.selector = selector


class NotRetriedError(BrowserError):
    """A ``write`` or ``irreversible`` call was cut short (browser died, tab closed) mid-call.

    A pool retries ``read`` calls on another browser, never these: the tool may or may not
    have run, and only the caller can check. The message says why, for example
    ``not retried: demo-shop/add_to_cart is a write tool and the browser died mid-call ...``.

    Attributes:
        site_id, tool: the call.
        side_effect: ``"write"`` or ``"irreversible"``.
    """

    def __init__(self, message: str, *, site_id: str, tool: str, side_effect: str) -> None:
        super().__init__(message)
        self.site_id = site_id
        self.tool = tool
        self.side_effect = side_effect


class PoolExhaustedError(BrowserError):
    """Every browser of a pool died or never started, and none could be replaced."""


class StaleRefError(ElementNotFoundError):
    """A ref (``ref=e12``) no longer names a node: its frame navigated, its node was removed,
    or this tab never gave it. Take a new snapshot and use its refs."""


class UnknownTabError(BrowserError):
    """No open tab of this browser or context has the id given: it closed, or it belongs to
    another context (another agent's), whose tabs a context never reaches.

    Attributes:
        tab_id: the id asked for.
    """

    def __init__(self, message: str, *, tab_id: str) -> None:
        super().__init__(message)
        self.tab_id = tab_id


class TabLimitError(BrowserError):
    """A browser context already has as many tabs open as it may (``max_tabs``): no tab was
    opened. The message words the fix in Python; front ends word it with :meth:`worded`.

    Attributes:
        most: the bound.
    """

    def __init__(self, most: int) -> None:
        self.most = most
        super().__init__(
            self.worded(
                "close one first (tab.close()), or make the context with a larger max_tabs="
            )
        )

    def worded(self, fix: str) -> str:
        """The message with ``fix`` in the caller's words."""
        return f"{self.most} tabs are open, the most this browser context may have: {fix}"


class NoSelectorError(BrowserError):
    """No selector finds a ref's node alone, so ``selector_for`` has none to give: the node
    sits in a closed shadow root (no selector reaches into one), or every selector tried
    matches other elements too. Act on it by its ref instead."""
