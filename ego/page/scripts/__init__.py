"""JavaScript run in the page by the page verbs (snapshot, click, type, waits, ...)."""

from __future__ import annotations

from functools import cache
from importlib import resources

__all__ = ["page_script"]

#: Placeholders a script may hold: the shared DOM helpers (``dom.js``), replaced by a call of
#: them, and the statements that watch for a condition (``watch.js``).
_DOM = "__DOM__"
_WATCH = "__WATCH__"
_FIELD = "__FIELD__"
_ROLES = "__ROLES__"


@cache
def page_script(name: str) -> str:
    """The source of ``page/scripts/<name>.js``: one function expression, comments stripped
    from its head so that it can be called in place, with ``__DOM__`` replaced by the shared
    DOM helpers (``dom.js``: selectors that pierce open shadow roots, ``role=`` selectors
    from ``roles.js``, the shown text, a selector for an element), ``__WATCH__`` by the
    statements that wait for a condition (``watch.js``) and ``__FIELD__`` by the function
    that readies a focused field for typing (``focused_field.js``)."""
    text = _read(name)
    if _FIELD in text:
        text = text.replace(_FIELD, _read("focused_field"))
    if _WATCH in text:
        text = text.replace(_WATCH, _read("watch"))
    if _DOM in text:
        text = text.replace(_DOM, f"({_read('dom')})()")
    if _ROLES in text:
        text = text.replace(_ROLES, f"({_read('roles')})")
    return text


def _read(name: str) -> str:
    text = resources.files(__package__).joinpath(f"{name}.js").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if not line.startswith("//")]
    return "\n".join(lines).strip().rstrip(";")
