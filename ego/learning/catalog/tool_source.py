"""A browser tool's file as the page runs it: one JavaScript expression, and the URL it names.

Pure text work, done where a tool is loaded (:mod:`.loading`), checked (:mod:`.jslint`) and
planned for a save; the wrapper that calls the expression in the page is
:mod:`ego.runtime.js`'s.
"""

from __future__ import annotations

import re

__all__ = ["normalize_source", "source_url"]

_EXPORT_DEFAULT = re.compile(r"^([ \t]*)export\s+default\s+", re.MULTILINE)
_EXPORT_OTHER = re.compile(r"^([ \t]*)export\s+(?=(?:async\s+)?function|const|let|class)", re.M)
_TRAILING = re.compile(r"[\s;]+\Z")


def normalize_source(source: str) -> str:
    """Turn a tool file's text into one JavaScript expression that evaluates to the function.

    Accepted shapes: a bare function expression (``async function (args) {...}``), an arrow
    function (``async (args) => {...}``), or a module whose ``export default`` is a function
    (other top-level helpers and ``export`` keywords are kept as plain declarations).

    The result keeps the file's line numbers: line N of the expression is line N of the file,
    so a JS stack points at the right line. It ends with a newline so that a trailing ``//``
    comment cannot swallow code placed after it.

    Raises:
        ValueError: the text is empty.
    """
    body = source.lstrip("\ufeff")
    if not body.strip():
        raise ValueError("the tool source is empty")
    if _EXPORT_DEFAULT.search(body):
        # A module: run its top level in a function scope and hand back the default export.
        # The prefix goes on the first line so that line numbers stay put.
        body = _EXPORT_DEFAULT.sub(r"\1const __ego_default = ", body, count=1)
        body = _EXPORT_OTHER.sub(r"\1", body)
        return "(() => { " + body.rstrip() + "\n;return __ego_default; })()\n"
    return _TRAILING.sub("", body) + "\n"


def source_url(site_id: str, path: str) -> str:
    """The ``sourceURL`` a tool runs under, so that a JS stack names its file."""
    return f"ego-learnings/{site_id}/{path}"
