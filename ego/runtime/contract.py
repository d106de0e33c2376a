"""The error contract: NEEDS_LOGIN and SKILL_BROKEN, thrown or returned, become exceptions.

A tool signals by throwing an Error whose message starts with the signal, or by returning
``{"error": "SIGNAL: ..."}``. NEEDS_STORE never reaches here: the cache layer handles it.
Any other error a tool returns is data for the caller and passes through untouched.

Beside the three signals, a thrown Error's class name is data too: a tool that throws one
named in :data:`TYPED_TOOL_ERRORS` (drafted tools do) raises that ego exception, a kind of
:class:`~ego.errors.BrowserToolError`, instead of the plain one.
"""

from __future__ import annotations

from typing import Any, Final

from ..errors import (
    BrowserToolError,
    CrossOriginRequestError,
    JavaScriptError,
    LearningError,
    NeedsLoginError,
    SkillBrokenError,
    TokenRejectedError,
)

__all__ = [
    "NEEDS_LOGIN",
    "SKILL_BROKEN",
    "TYPED_TOOL_ERRORS",
    "signal_error",
    "signal_in_exception",
    "signal_in_result",
    "tool_error_type",
]

NEEDS_LOGIN: Final = "NEEDS_LOGIN"
SKILL_BROKEN: Final = "SKILL_BROKEN"

#: The JS Error class names a tool may throw to raise a typed ego exception (the class of
#: the thrown object: ``class TokenRejectedError extends Error {}``).
TYPED_TOOL_ERRORS: Final[dict[str, type[BrowserToolError]]] = {
    "TokenRejectedError": TokenRejectedError,
    "CrossOriginRequestError": CrossOriginRequestError,
}


def tool_error_type(exc: JavaScriptError) -> type[BrowserToolError]:
    """The exception a tool's throw of ``exc`` becomes: the typed one its class names, else
    :class:`~ego.errors.BrowserToolError`."""
    return TYPED_TOOL_ERRORS.get(exc.name, BrowserToolError)


def _detail(text: str, signal: str) -> str:
    return text[len(signal) :].lstrip(" :-\u2014") or "no detail given"


def _says_how_to_log_in(detail: str) -> bool:
    lowered = detail.lower()
    return any(words in lowered for words in ("log in", "login", "sign in", "then retry"))


def signal_error(
    text: str, *, site_id: str, tool: str, profile: str, login: str | None = None
) -> LearningError | None:
    """The exception for a signal at the start of ``text``, or None if it holds none.

    Args:
        text: an error message or an ``error`` field.
        site_id, tool: what was running (for the message).
        profile: how to name the browser profile in the login instruction.
        login: the command that opens a window on that profile to log in
            (``ego login SITE --profile NAME``), or None when there is none.
    """
    stripped = text.lstrip()
    if stripped.startswith(NEEDS_LOGIN):
        detail = _detail(stripped, NEEDS_LOGIN)
        # A tool that already says how to log in is not told again; only where.
        if _says_how_to_log_in(detail):
            advice = f"the login belongs in {profile}"
        else:
            advice = f"log in to the site by hand in {profile}, then retry"
        if login:
            advice += f": `{login}` opens a window for it"
        return NeedsLoginError(
            f"NEEDS_LOGIN from {site_id}/{tool}: {detail}; {advice}; do not automate the "
            "login or relearn the tool",
            site_id=site_id,
            tool=tool,
            detail=detail,
        )
    if stripped.startswith(SKILL_BROKEN):
        detail = _detail(stripped, SKILL_BROKEN)
        return SkillBrokenError(
            f"SKILL_BROKEN from {site_id}/{tool}: {detail}; the site changed and the tool "
            f"needs a new version (retrying will not help): `site.heal_tool({site_id!r}, "
            f"{tool!r})` finds what changed and drafts one",
            site_id=site_id,
            tool=tool,
            detail=detail,
        )
    return None


def signal_in_result(
    result: Any, *, site_id: str, tool: str, profile: str, login: str | None = None
) -> None:
    """Raise the signal a result carries as ``{"error": "SIGNAL: ..."}``; else do nothing.

    Raises:
        NeedsLoginError, SkillBrokenError: the result carries that signal.
    """
    if isinstance(result, dict):
        error = result.get("error")
        if isinstance(error, str):
            exc = signal_error(error, site_id=site_id, tool=tool, profile=profile, login=login)
            if exc is not None:
                raise exc


def signal_in_exception(
    exc: JavaScriptError, *, site_id: str, tool: str, profile: str, login: str | None = None
) -> LearningError | None:
    """The signal exception for a JS error whose message starts with a signal, or None."""
    return signal_error(exc.js_message, site_id=site_id, tool=tool, profile=profile, login=login)
