"""What a run ended with, by the type of what it raised: ``OK``, a failure kind, or a run that
is recorded apart and never counts against the tool.

A failure's kind tells an agent whether a new version is needed (``SKILL_BROKEN``,
``RETURNS_MISMATCH``, ``JS_ERROR``) or the run was cut short around the tool (``TIMEOUT``,
``CONTEXT_DESTROYED``, ``BROWSER_GONE``). ``NEEDS_LOGIN`` (a person must log in) and
``CONFIRMATION_REQUIRED`` (an irreversible tool called without confirming) say nothing about
whether the tool works, so they are kept apart (:data:`UNCOUNTED`), as are calls that never
reached the tool for a reason of the caller's: a tab of another site (``SITE_MISMATCH``) or
no tab to run in (``NO_TAB``); and runs that failed for what the site, the network or the
tab did (:data:`SITE_FAILURES`): the site's server did not answer (``SITE_UNREACHABLE``: a
navigation refused, a tool's ``fetch`` that found no server), its page did not load
(``NAVIGATION``), the tab closed under the call (``TAB_CLOSED``).
"""

from __future__ import annotations

from typing import Final

from ...errors import (
    BrowserClosedError,
    CommandTimeoutError,
    ConfirmationRequiredError,
    ContextDestroyedError,
    DialogOpenError,
    JavaScriptError,
    NavigationError,
    NeedsLoginError,
    NoTabError,
    ReturnsMismatchError,
    SiteMismatchError,
    SiteUnreachableError,
    SkillBrokenError,
    TabClosedError,
    TargetCrashedError,
)

__all__ = [
    "CASE_FAILED",
    "CONFIRMATION_REQUIRED",
    "FAILURE_KINDS",
    "MESSAGE_LIMIT",
    "NEEDS_LOGIN",
    "NOT_RUN",
    "OK",
    "SITE_FAILURES",
    "SITE_UNREACHABLE",
    "UNCOUNTED",
    "classify",
    "counted",
    "judged",
]

#: The outcome of a run that returned (and passed the ``returns`` check when asked).
OK: Final = "OK"

#: A run that signalled NEEDS_LOGIN: a person must log in; the tool may well work.
NEEDS_LOGIN: Final = "NEEDS_LOGIN"
#: A call of an irreversible tool refused for want of a confirmation; the tool never ran.
CONFIRMATION_REQUIRED: Final = "CONFIRMATION_REQUIRED"
#: Calls that never reached the tool: a tab of another site, or no tab and no start URL.
NOT_RUN: Final = frozenset({"SITE_MISMATCH", "NO_TAB"})
#: The site's server did not answer: a navigation to it, or a request the tool made to it,
#: found no server (connection refused, no such name, no network).
SITE_UNREACHABLE: Final = "SITE_UNREACHABLE"
#: Runs that failed for what the site, the network or the tab did, not the tool: the site
#: unreachable, its page not loaded, the tab closed under the call.
SITE_FAILURES: Final = frozenset({SITE_UNREACHABLE, "NAVIGATION", "TAB_CLOSED"})
#: Outcomes recorded apart: they never count against the tool, nor make it suspect.
UNCOUNTED: Final = frozenset({NEEDS_LOGIN, CONFIRMATION_REQUIRED, *NOT_RUN, *SITE_FAILURES})

#: The failure kinds, most specific type first (a BrowserToolError is a JavaScriptError).
_KINDS: Final[tuple[tuple[type[BaseException], str], ...]] = (
    (NeedsLoginError, NEEDS_LOGIN),
    (ConfirmationRequiredError, CONFIRMATION_REQUIRED),
    (SiteMismatchError, "SITE_MISMATCH"),
    (NoTabError, "NO_TAB"),
    (SiteUnreachableError, SITE_UNREACHABLE),
    (SkillBrokenError, "SKILL_BROKEN"),
    (ReturnsMismatchError, "RETURNS_MISMATCH"),
    (JavaScriptError, "JS_ERROR"),
    (CommandTimeoutError, "TIMEOUT"),
    (ContextDestroyedError, "CONTEXT_DESTROYED"),
    (BrowserClosedError, "BROWSER_GONE"),
    (TargetCrashedError, "BROWSER_GONE"),
    (TabClosedError, "TAB_CLOSED"),
    (DialogOpenError, "DIALOG_OPEN"),
    (NavigationError, "NAVIGATION"),
)

#: An offline case (``ego test``) whose tool returned, but not what the case expects.
CASE_FAILED: Final = "CASE_FAILED"

#: Every failure kind counted against a tool, ``ERROR`` being anything else a tool raised.
FAILURE_KINDS: Final = (
    *(kind for kind in dict.fromkeys(kind for _, kind in _KINDS) if kind not in UNCOUNTED),
    CASE_FAILED,
    "ERROR",
)

#: The longest message kept with a run (a message is for a person to read, not a log).
MESSAGE_LIMIT: Final = 300


def classify(exc: BaseException) -> tuple[str, str]:
    """The outcome ``exc`` ends a run with, and the message kept with it.

    A JavaScript error keeps the page's own message (``TypeError: x is undefined``); any
    other failure keeps the error's one line. Anything ego does not know is ``ERROR`` with
    the exception's type in its message.
    """
    for kind, outcome in _KINDS:
        if isinstance(exc, kind):
            if isinstance(exc, JavaScriptError) and exc.js_message:
                message = f"{exc.name}: {exc.js_message}"
            else:
                message = str(exc)
            return outcome, _short(message)
    return "ERROR", _short(f"{type(exc).__name__}: {exc}")


def judged(passed: bool, exc: BaseException | None, reason: str) -> tuple[str, str]:
    """An offline case's run as the record keeps it, and its message.

    ``OK`` when the case passed: a tool that signals SKILL_BROKEN where its case expects it
    works as tested. Else the kind of the error the tool ended with, or
    :data:`CASE_FAILED` (with the case's reason) when it returned something the case does
    not expect.
    """
    if passed:
        return OK, ""
    if exc is not None:
        return classify(exc)
    return CASE_FAILED, _short(reason)


def counted(outcome: str) -> bool:
    """True for an outcome that counts for or against the tool."""
    return outcome not in UNCOUNTED


def _short(message: str) -> str:
    line = " ".join(message.split())
    return line if len(line) <= MESSAGE_LIMIT else line[: MESSAGE_LIMIT - 3] + "..."
