"""Reading a tool's JavaScript without a browser: a lexer, snapshot-only refs, the source check.

A saved tool runs again tomorrow on a freshly loaded page, so a source that finds elements by
references from one snapshot of the page (``[ref=e12]``) or by pixel coordinates is refused
before anything else happens. :func:`find_snapshot_refs` lists such references; the lexer
behind it tells code from strings, comments and regex literals, so a word in a comment or a
look-alike name is not taken for one. :func:`check_source` is the whole text-only check of a
tool's source.
"""

from __future__ import annotations

import bisect
import re

from ...errors import SnapshotReferenceError
from .naming import refuse
from .tool_source import normalize_source

__all__ = ["NOT_A_FUNCTION", "check_source", "find_snapshot_refs", "function_expression"]

_CODE, _STRING, _COMMENT, _REGEX = "c", "s", "m", "r"
_REGEX_AFTER_WORDS = {
    "return",
    "typeof",
    "instanceof",
    "case",
    "do",
    "else",
    "in",
    "of",
    "new",
    "delete",
    "void",
    "throw",
    "yield",
    "await",
}
_REGEX_AFTER_CHARS = set("(,=:[!&|?{};+-*%<>~^")


def _previous_code(source: str, kinds: list[str], index: int) -> str:
    """The code token before ``index``: a punctuation character, a word, or ``""``."""
    i = index - 1
    while i >= 0 and (kinds[i] == _COMMENT or (kinds[i] == _CODE and source[i].isspace())):
        i -= 1
    if i < 0:
        return ""
    if kinds[i] != _CODE:
        return '"'  # a string, template or regex literal: a slash after it divides
    if source[i].isalnum() or source[i] in "_$":
        end = i + 1
        while i >= 0 and kinds[i] == _CODE and (source[i].isalnum() or source[i] in "_$"):
            i -= 1
        return source[i + 1 : end]
    return source[i]


def _classify(source: str) -> list[str]:
    """Mark each character of JavaScript source as code, string, comment or regex.

    A lexer good enough to tell a selector in a string from a word in a comment: it follows
    quotes, template literals with nested ``${...}``, comments, and regex literals (a ``/``
    where an expression may start).
    """
    n = len(source)
    kinds = [_CODE] * n
    templates: list[int] = []  # brace depth at each open ``${``
    depth = 0
    i = 0
    in_template = False
    while i < n:
        ch = source[i]
        if in_template:
            kinds[i] = _STRING
            if ch == "\\":
                if i + 1 < n:
                    kinds[i + 1] = _STRING
                i += 2
                continue
            if ch == "`":
                in_template = False
            elif ch == "$" and i + 1 < n and source[i + 1] == "{":
                kinds[i] = kinds[i + 1] = _CODE
                templates.append(depth)
                depth += 1
                in_template = False
                i += 2
                continue
            i += 1
            continue
        if ch in "'\"":
            j = i + 1
            while j < n and source[j] != ch and source[j] != "\n":
                j += 2 if source[j] == "\\" else 1
            end = min(j + 1, n)
            kinds[i:end] = [_STRING] * (end - i)
            i = end
        elif ch == "`":
            kinds[i] = _STRING
            in_template = True
            i += 1
        elif ch == "/" and i + 1 < n and source[i + 1] == "/":
            end = source.find("\n", i)
            end = n if end < 0 else end
            kinds[i:end] = [_COMMENT] * (end - i)
            i = end
        elif ch == "/" and i + 1 < n and source[i + 1] == "*":
            end = source.find("*/", i + 2)
            end = n if end < 0 else end + 2
            kinds[i:end] = [_COMMENT] * (end - i)
            i = end
        elif ch == "/":
            before = _previous_code(source, kinds, i)
            if before == "" or before in _REGEX_AFTER_CHARS or before in _REGEX_AFTER_WORDS:
                j, in_class = i + 1, False
                while j < n and source[j] != "\n":
                    if source[j] == "\\":
                        j += 2
                        continue
                    if source[j] == "[":
                        in_class = True
                    elif source[j] == "]":
                        in_class = False
                    elif source[j] == "/" and not in_class:
                        break
                    j += 1
                if j < n and source[j] == "/":
                    j += 1
                    while j < n and (source[j].isalnum() or source[j] in "_$"):
                        j += 1  # flags
                    kinds[i:j] = [_REGEX] * (j - i)
                    i = j
                    continue
            i += 1
        elif ch == "{":
            depth += 1
            i += 1
        elif ch == "}":
            depth -= 1
            if templates and depth == templates[-1]:
                templates.pop()
                in_template = True
            i += 1
        else:
            i += 1
    return kinds


def _mask(source: str, kinds: list[str], hide: set[str]) -> str:
    return "".join(
        (" " if c != "\n" else c) if k in hide else c for c, k in zip(source, kinds, strict=True)
    )


def _string_spans(kinds: list[str]) -> list[tuple[int, int]]:
    spans = []
    i, n = 0, len(kinds)
    while i < n:
        if kinds[i] == _STRING:
            j = i
            while j < n and kinds[j] == _STRING:
                j += 1
            spans.append((i, j))
            i = j
        else:
            i += 1
    return spans


_REF_ATTRIBUTE = re.compile(r"(?<![\w?&$-])ref\s*=\s*[\"']?e\d+\b")
_ARIA_REF = re.compile(r"\baria-ref\b")
_BARE_REF = re.compile(r"^#?e\d+$")
_SELECTOR_CALL = re.compile(
    r"(?:\bquerySelector(?:All)?|\bclosest|\bmatches|\blocator|(?<![\w$])\$\$?)\s*\(\s*$"
)
_REF_KEY = re.compile(r"(?:(?<![\w$])ref|[\"']ref[\"'])\s*:\s*$")
_FROM_POINT = re.compile(
    r"\b(elementsFromPoint|elementFromPoint|caretPositionFromPoint|caretRangeFromPoint)\s*\("
)
_CDP_INPUT = re.compile(r"\bInput\.(dispatchMouseEvent|dispatchTouchEvent|synthesizeTapGesture)\b")
_COORD_LITERAL = re.compile(
    r"[\"']?\b(clientX|clientY|pageX|pageY|screenX|screenY|offsetX|offsetY)\b[\"']?"
    r"\s*:\s*(-?\d+(?:\.\d+)?)(?![\w.])"
)
_XY_PAIR = re.compile(
    r"[\"']?\bx\b[\"']?\s*:\s*(\d+(?:\.\d+)?)\s*,\s*[\"']?\by\b[\"']?\s*:\s*(\d+(?:\.\d+)?)(?![\w.])"
)
_POINTER_WORDS = re.compile(r"(?i)mouse|pointer|click|touch|\btap\b")


def find_snapshot_refs(source: str) -> list[str]:
    """The snapshot-only references in a tool's source, one line each (empty when clean).

    A saved tool runs again tomorrow on a freshly loaded page, so it must find elements by
    stable selectors or use the site's own API. Refused, with the line they are on:

    - ephemeral element refs from an accessibility snapshot: ``ref=e12`` or ``[ref="e5"]``
      in a string, anything with ``aria-ref``, a bare ``e123`` (or ``#e123``) given to
      ``querySelector``/``closest``/``matches``/``$``/``locator``, or ``ref: "e12"``;
    - pixel coordinates: ``elementFromPoint(`` (and its relatives), CDP's
      ``Input.dispatchMouseEvent``/``dispatchTouchEvent``, a non-zero number literal for
      ``clientX``/``clientY``/``pageX``/``screenX``/``offsetX`` (and Y), and ``x: 120, y: 48``
      literals in code that clicks, taps or sends mouse, pointer or touch events.

    Comments are not looked at, nor are names that merely look alike (``event.clientX``,
    ``data-ref``, ``?ref=e5`` in a URL, ``{x: 0, y: 0}``, a variable ``e1``).
    """
    kinds = _classify(source)
    no_comments = _mask(source, kinds, {_COMMENT})
    code_only = _mask(source, kinds, {_COMMENT, _STRING, _REGEX})
    line_starts = [0] + [i + 1 for i, ch in enumerate(source) if ch == "\n"]

    def line(pos: int) -> int:
        return bisect.bisect_right(line_starts, pos)

    found: list[tuple[int, str]] = []
    for start, end in _string_spans(kinds):
        text = source[start:end]
        for match in _REF_ATTRIBUTE.finditer(text):
            found.append(
                (
                    start + match.start(),
                    f"ephemeral element ref {match.group(0)!r} from a page snapshot",
                )
            )
        for match in _ARIA_REF.finditer(text):
            found.append((start + match.start(), "an 'aria-ref' selector from a page snapshot"))
        inner = text.strip("'\"`").strip()
        if _BARE_REF.match(inner):
            before = no_comments[max(0, start - 200) : start]
            if _SELECTOR_CALL.search(before) or _REF_KEY.search(before):
                found.append(
                    (start, f"snapshot ref {inner!r} used as an element reference or selector")
                )
    for match in _FROM_POINT.finditer(code_only):
        found.append((match.start(), f"pixel coordinates: {match.group(1)}("))
    for match in _CDP_INPUT.finditer(no_comments):
        found.append((match.start(), f"pixel coordinates: Input.{match.group(1)}"))
    for match in _COORD_LITERAL.finditer(no_comments):
        if float(match.group(2)) != 0:
            found.append(
                (match.start(), f"pixel coordinate literal {match.group(1)}: {match.group(2)}")
            )
    if _POINTER_WORDS.search(code_only):
        for match in _XY_PAIR.finditer(no_comments):
            if kinds[match.start()] == _CODE and (
                float(match.group(1)) != 0 or float(match.group(2)) != 0
            ):
                found.append(
                    (
                        match.start(),
                        f"click coordinates x: {match.group(1)}, y: {match.group(2)}",
                    )
                )
    found.sort()
    return [f"line {line(pos)}: {what}" for pos, what in found]


_FUNCTION_START = re.compile(
    r"^\s*(?:async\s+)?(?:function\b|\(|[A-Za-z_$][\w$]*\s*=>)|^\(\(\) => \{ ", re.S
)


def _leading_comments_stripped(expression: str) -> str:
    kinds = _classify(expression)
    i = 0
    while i < len(expression) and (kinds[i] == _COMMENT or expression[i].isspace()):
        i += 1
    return expression[i:]


#: Why a source that normalises but is not a function is refused (saving, loading, validate).
NOT_A_FUNCTION = (
    "the source is not a function: give an async function expression "
    "(async (args) => {...}), a function (async function (args) {...}) or a module "
    "with export default async function name(args) {...}"
)


def function_expression(source: str) -> str:
    """A tool file's text as one expression that evaluates to its function.

    The one shape check every path applies: saving (:func:`check_source`), loading a tool
    to run it, and ``ego validate``.

    Raises:
        ValueError: the text is empty, or is not a function expression, an arrow function
            or a module with an ``export default`` function.
    """
    expression = normalize_source(source)
    if not _FUNCTION_START.match(_leading_comments_stripped(expression)):
        raise ValueError(NOT_A_FUNCTION)
    return expression


def check_source(site_id: str, tool: str, source: str) -> str:
    """Check a tool's source without a browser and return it normalised (one expression).

    Raises:
        SaveRefusedError: the source is empty or not a function (reason ``"source"``).
        SnapshotReferenceError: it holds snapshot-only references (reason
            ``"snapshot refs"``); ``problems`` lists each with its line.
    """
    if not isinstance(source, str) or not source.strip():
        raise refuse(site_id, tool, "source", ["the tool source is empty"])
    try:
        expression = function_expression(source)
    except ValueError as exc:
        raise refuse(site_id, tool, "source", [str(exc)]) from None
    findings = find_snapshot_refs(source)
    if findings:
        raise SnapshotReferenceError(
            f"not saved {site_id}/{tool}: the source holds references that only exist in one "
            f"snapshot of the page ({'; '.join(findings)}); a saved tool must find elements by "
            "stable selectors (ids, names, data-* or aria attributes, text) or use the site's "
            "own API; nothing was written",
            site_id=site_id,
            name=tool,
            reason="snapshot refs",
            problems=findings,
        )
    return expression
