"""JavaScript run in the page by the page verbs (snapshot, click, type, waits, ...)."""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources
from typing import Final

__all__ = ["DEFAULT_TEST_ID_ATTRIBUTE", "page_script", "set_test_id_attribute", "testid_attribute"]

#: The attribute ``testid=`` selectors read unless :func:`set_test_id_attribute` named another.
DEFAULT_TEST_ID_ATTRIBUTE: Final = "data-testid"

_ATTRIBUTE_NAME: Final = re.compile(r"[A-Za-z_:][-A-Za-z0-9_:.]*")
_test_id = [DEFAULT_TEST_ID_ATTRIBUTE]


def set_test_id_attribute(name: str) -> None:
    """Make ``testid=`` selectors (and ``selector_for``) read the attribute ``name``
    (``"data-qa"``, ``"data-test"``) instead of ``data-testid``, in every page from now on.

    Raises:
        ValueError: ``name`` is no attribute name.
    """
    if not isinstance(name, str) or not _ATTRIBUTE_NAME.fullmatch(name):
        raise ValueError(
            f"set_test_id_attribute({name!r}): give an attribute name, such as 'data-qa'"
        )
    if name != _test_id[0]:
        _test_id[0] = name
        page_script.cache_clear()


def testid_attribute() -> str:
    """The attribute ``testid=`` selectors read."""
    return _test_id[0]


#: Placeholders a script may hold: the shared DOM helpers (``dom.js``), replaced by a call of
#: them, and the statements that watch for a condition (``watch.js``).
_DOM = "__DOM__"
_WATCH = "__WATCH__"
_FIELD = "__FIELD__"
_ROLES = "__ROLES__"
_LOCATORS = "__LOCATORS__"
_TESTID = "__TESTID__"


@cache
def page_script(name: str) -> str:
    """The source of ``page/scripts/<name>.js``: one function expression, comments stripped
    from its head so that it can be called in place, with ``__DOM__`` replaced by the shared
    DOM helpers (``dom.js``: selectors that pierce open shadow roots, ``role=`` selectors
    from ``roles.js``, ``text=``, ``label=``, ... from ``locators.js`` with the test id
    attribute in use, ``>>`` chains, the shown text, a selector for an element),
    ``__WATCH__`` by the statements that wait for a condition (``watch.js``) and
    ``__FIELD__`` by the function that readies a focused field for typing
    (``focused_field.js``)."""
    text = _read(name)
    if _FIELD in text:
        text = text.replace(_FIELD, _read("focused_field"))
    if _WATCH in text:
        text = text.replace(_WATCH, _read("watch"))
    if _DOM in text:
        text = text.replace(_DOM, f"({_read('dom')})()")
    if _ROLES in text:
        text = text.replace(_ROLES, f"({_read('roles')})")
    if _LOCATORS in text:
        text = text.replace(_LOCATORS, f"({_read('locators')})")
    if _TESTID in text:
        text = text.replace(_TESTID, json.dumps(_test_id[0]))
    return text


def _read(name: str) -> str:
    text = resources.files(__package__).joinpath(f"{name}.js").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if not line.startswith("//")]
    return "\n".join(lines).strip().rstrip(";")
