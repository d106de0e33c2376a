"""GraphQL-style calls: one endpoint (``POST /graphql``) that many operations share.

A request whose JSON body carries a GraphQL document (``{"query": "query Books($tag:
String) {...}", "variables": {...}, "operationName": "Books"}``), or a persisted query's
``extensions`` with an ``operationName``, is an *operation*: each operation name is an
endpoint of its own (one draft each), its ``variables`` are the args, and its kind says the
side effect (``query`` reads, ``mutation`` writes).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final, Literal

__all__ = ["Operation", "operation_of"]

Kind = Literal["query", "mutation", "subscription"]

_NAMED: Final = re.compile(r"\b(query|mutation|subscription)\s+([_A-Za-z][_0-9A-Za-z]*)")
_DOCUMENT: Final = re.compile(r"^\s*(#[^\n]*\n\s*)*(query|mutation|subscription|fragment|\{)")
_NAME: Final = re.compile(r"[_A-Za-z][_0-9A-Za-z]{0,100}")
_FIRST_FIELD: Final = re.compile(r"\{\s*(?:[_A-Za-z][_0-9A-Za-z]*\s*:\s*)?([_A-Za-z][_0-9A-Za-z]*)")


@dataclass(frozen=True)
class Operation:
    """One GraphQL operation a request ran.

    Attributes:
        kind: ``"query"``, ``"mutation"`` or ``"subscription"``; None for a persisted query
            sent with POST, whose document the recording does not hold (sent with GET it is
            a ``"query"``: GraphQL over HTTP runs no mutation from a GET).
        name: its ``operationName``, the name in its document, or for an anonymous one the
            first field it selects.
    """

    kind: Kind | None
    name: str


_KINDS: Final[dict[str, Kind]] = {
    "query": "query",
    "mutation": "mutation",
    "subscription": "subscription",
}


def _kind_of(document: str, name: str | None) -> Operation | None:
    named = [(_KINDS[m.group(1)], m.group(2)) for m in _NAMED.finditer(document)]
    for kind, found in named:
        if name is None or found == name:
            return Operation(kind, found)
    if document.lstrip().startswith("{"):
        # The shorthand form is a query; anonymous, it is named by the field it selects.
        field = _FIRST_FIELD.search(document)
        return Operation("query", name or (field.group(1) if field else "query"))
    return None


def operation_of(body: Any, method: str) -> Operation | None:
    """The GraphQL operation a JSON request body runs, or None when it is not one.

    Args:
        body: the request's JSON body (a GET's operation comes from its query string,
            given here as a dict of its parameters).
        method: the request method.
    """
    if not isinstance(body, dict):
        return None
    document = body.get("query")
    name = body.get("operationName")
    name = name if isinstance(name, str) and _NAME.fullmatch(name) else None
    if isinstance(document, str) and _DOCUMENT.match(document):
        return _kind_of(document, name)
    extensions = body.get("extensions")
    if name is not None and isinstance(extensions, dict) and "persistedQuery" in extensions:
        return Operation("query" if method in ("GET", "HEAD") else None, name)
    return None
