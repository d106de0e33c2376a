"""Judging a case: the tool's result against ``expect``/``expect_subset``/``expect_schema``,
and the error it ended with against ``expect_error``.

Each check answers with the reason the case fails, or ``""`` when it holds, worded so that the
reason alone says where the result departs from what the case expects.
"""

from __future__ import annotations

import json
import math
from typing import Any

from ...errors import (
    CommandTimeoutError,
    EgoError,
    JavaScriptError,
    NeedsLoginError,
    SkillBrokenError,
)
from ..catalog.schemas import mismatch
from .format import MISSING, LearningCase

__all__ = ["error_kind", "judge", "judge_error", "short"]


def judge(case: LearningCase, value: Any) -> str:
    """Check a tool's result against the case's ``expect*``; ``""`` when it passes.

    Args:
        case: the case, whose ``expect``, ``expect_subset`` and ``expect_schema`` apply in
            that order (the first that fails is the reason).
        value: what the tool returned.
    """
    if case.expect_error is not None:
        return f"expected {case.expect_error}, but the tool returned {short(value)}"
    if case.expect is not MISSING:
        difference = _difference(case.expect, value, exact=True)
        if difference:
            return f"result differs from expect {difference}"
    if case.expect_subset is not MISSING:
        difference = _difference(case.expect_subset, value, exact=False)
        if difference:
            return f"result differs from expect_subset {difference}"
    if case.expect_schema is not MISSING:
        problem = mismatch(case.expect_schema, value, "(result)")
        if problem:
            return f"result fails expect_schema {problem}"
    return ""


def judge_error(case: LearningCase, exc: EgoError) -> str:
    """Check the error a tool ended with against the case's ``expect_error``.

    Args:
        case: the case.
        exc: what the tool raised.

    Returns:
        ``""`` when the case expected this error (and its ``error_contains``); else the
        reason, which starts with the error kind (``SKILL_BROKEN ...``) when no error was
        expected.
    """
    kind = error_kind(exc)
    message = str(exc)
    if case.expect_error is None:
        return message if message.startswith(kind) else f"{kind}: {message}"
    if kind != case.expect_error:
        return f"expected {case.expect_error}, got {kind}: {message}"
    if case.error_contains and case.error_contains not in message:
        return f"{kind} as expected, but its message lacks {case.error_contains!r}: {message}"
    return ""


def error_kind(exc: EgoError) -> str:
    """The kind a case names an error by: SKILL_BROKEN, NEEDS_LOGIN, TOOL_ERROR (the tool
    threw), TIMEOUT, else the exception's class name."""
    if isinstance(exc, SkillBrokenError):
        return "SKILL_BROKEN"
    if isinstance(exc, NeedsLoginError):
        return "NEEDS_LOGIN"
    if isinstance(exc, JavaScriptError):
        return "TOOL_ERROR"
    if isinstance(exc, CommandTimeoutError):
        return "TIMEOUT"
    return type(exc).__name__


def short(value: Any, limit: int = 160) -> str:
    """``value`` as JSON (repr when it is not JSON), cut to ``limit`` characters."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _difference(expected: Any, actual: Any, *, exact: bool, path: str = "") -> str:
    """Where ``actual`` first departs from ``expected`` as JSON ("" when it does not).

    With ``exact`` False, objects may hold keys that ``expected`` does not name.
    """
    where = path or "(result)"
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"at {where}: expected an object, got {short(actual)}"
        for key, value in expected.items():
            if key not in actual:
                return f"at {where}: missing key {key!r}"
            found = _difference(value, actual[key], exact=exact, path=f"{path}/{key}")
            if found:
                return found
        if exact:
            extra = sorted(set(actual) - set(expected))
            if extra:
                return f"at {where}: unexpected key(s) {', '.join(map(repr, extra))}"
        return ""
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return f"at {where}: expected an array, got {short(actual)}"
        if len(actual) != len(expected):
            return f"at {where}: expected {len(expected)} items, got {len(actual)}"
        for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
            found = _difference(want, got, exact=exact, path=f"{path}/{index}")
            if found:
                return found
        return ""
    if not _same_scalar(expected, actual):
        return f"at {where}: expected {short(expected)}, got {short(actual)}"
    return ""


def _same_scalar(expected: Any, actual: Any) -> bool:
    # JSON semantics: true is not 1, and 2 equals 2.0.
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, int | float) and isinstance(actual, int | float):
        return bool(expected == actual or (math.isnan(expected) and math.isnan(actual)))
    return type(expected) is type(actual) and bool(expected == actual)
