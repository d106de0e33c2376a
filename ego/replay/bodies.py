"""Reading request and response bodies by kind: JSON, URL-encoded form, multipart form.

Shared by redaction (which rewrites values in place, leaving the rest of a body as it was)
and matching (which compares bodies as data). Nothing here knows about secrets or HAR.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import unquote_plus

__all__ = [
    "FormPart",
    "boundary_of",
    "is_form",
    "is_json",
    "mime_of",
    "multipart_fields",
    "multipart_parts",
    "parse_json",
    "rewrite_form",
    "rewrite_multipart",
]

_BOUNDARY: Final = re.compile(r'boundary=(?:"([^"]+)"|([^;\s]+))', re.IGNORECASE)
_PART_NAME: Final = re.compile(r'\bname="([^"]*)"', re.IGNORECASE)
_PART_FILE: Final = re.compile(r"\bfilename\*?=", re.IGNORECASE)
# Anti-hijacking prefixes some APIs put before JSON (Google's, Facebook's).
_JSON_PREFIXES: Final = (")]}'", "for(;;);", "for (;;);", "while(1);")


def mime_of(content_type: str | None) -> str:
    """The bare media type of a Content-Type, lower-cased (``application/json``)."""
    return (content_type or "").split(";", 1)[0].strip().lower()


def is_json(content_type: str | None) -> bool:
    """True for ``application/json``, ``text/json`` and ``+json`` types."""
    return mime_of(content_type).endswith("json")


def is_form(content_type: str | None) -> bool:
    """True for ``application/x-www-form-urlencoded``."""
    return mime_of(content_type) == "application/x-www-form-urlencoded"


def parse_json(text: str) -> tuple[str, Any] | None:
    """``(prefix, data)`` when ``text`` is JSON, maybe after an anti-hijacking prefix line
    such as ``)]}'``; None when it is not JSON."""
    prefix = ""
    stripped = text.lstrip()
    for marker in _JSON_PREFIXES:
        if stripped.startswith(marker):
            start = len(text) - len(stripped) + len(marker)
            if marker == ")]}'":
                # Google's prefix is a line of its own (``)]}'`` or ``)]}',``).
                newline = text.find("\n", start)
                start = newline + 1 if newline >= 0 else len(text)
            prefix, text = text[:start], text[start:]
            break
    try:
        return prefix, json.loads(text)
    except ValueError:
        return None


def rewrite_form(text: str, value: Callable[[str], str | None]) -> str:
    """``text`` (``a=1&b=2``) with the value of each field for which ``value(name)`` gives a
    string replaced by that string (URL-encoded as given); every other byte is kept."""
    pieces = text.split("&")
    for index, piece in enumerate(pieces):
        raw_name, equals, _ = piece.partition("=")
        if not equals:
            continue
        replacement = value(unquote_plus(raw_name))
        if replacement is not None:
            pieces[index] = f"{raw_name}={replacement}"
    return "&".join(pieces)


def boundary_of(content_type: str | None) -> str | None:
    """The ``boundary`` of a ``multipart/*`` Content-Type, or None."""
    if not mime_of(content_type).startswith("multipart/"):
        return None
    found = _BOUNDARY.search(content_type or "")
    if found is None:
        return None
    return found.group(1) or found.group(2)


@dataclass(frozen=True)
class FormPart:
    """One part of a multipart body.

    Attributes:
        head: the part's header lines, as written.
        name: its ``Content-Disposition`` name ("" when it has none).
        is_file: True when it carries a ``filename``.
        content: the part's body, without the line break that ends it.
    """

    head: str
    name: str
    is_file: bool
    content: str


def multipart_parts(text: str, boundary: str) -> list[FormPart] | None:
    """The parts of a multipart body, or None when ``text`` is not one with ``boundary``."""
    chunks = text.split(f"--{boundary}")
    if len(chunks) < 3:
        return None
    parts = []
    for chunk in chunks[1:-1]:
        body = chunk[2:] if chunk.startswith("\r\n") else chunk.lstrip("\n")
        head, separator, content = body.partition("\r\n\r\n")
        if not separator:
            return None
        name = _PART_NAME.search(head)
        parts.append(
            FormPart(
                head=head,
                name=name.group(1) if name else "",
                is_file=_PART_FILE.search(head) is not None,
                content=content.removesuffix("\r\n"),
            )
        )
    return parts


def multipart_fields(body: bytes, content_type: str | None) -> tuple[tuple[str, str], ...] | None:
    """A multipart body as sorted ``(name, content)`` pairs (the boundary, which the browser
    picks anew for every request, left out); None when it is not multipart."""
    boundary = boundary_of(content_type)
    if boundary is None:
        return None
    parts = multipart_parts(body.decode("utf-8", "surrogateescape"), boundary)
    if parts is None:
        return None
    return tuple(sorted((part.name, part.content) for part in parts))


def rewrite_multipart(
    text: str, boundary: str, value: Callable[[FormPart], str | None]
) -> str | None:
    """``text`` with the content of each part for which ``value(part)`` gives a string
    replaced by it; None when ``text`` is not multipart with ``boundary``. Other bytes stay."""
    delimiter = f"--{boundary}"
    chunks = text.split(delimiter)
    parts = multipart_parts(text, boundary)
    if parts is None:
        return None
    for index, part in enumerate(parts, start=1):
        replacement = value(part)
        if replacement is None:
            continue
        chunk = chunks[index]
        start = chunk.index("\r\n\r\n") + 4
        ending = "\r\n" if chunk.endswith("\r\n") else ""
        chunks[index] = chunk[:start] + replacement + ending
    return delimiter.join(chunks)
