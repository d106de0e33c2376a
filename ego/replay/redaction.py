"""Redacting secret values in URLs and bodies, keeping their names and the bodies' shape.

A value whose name is secret (:func:`~ego.replay.secret_names.is_secret_name`) becomes
:data:`~ego.replay.secret_names.REDACTED`; everything else stays byte for byte, so the
matcher (which treats a recorded ``REDACTED`` as "any value") still finds the entry:

- URLs: each ``name=value`` of the query, and of a fragment that holds parameters
  (``#access_token=...``, ``#/route?code=...``).
- Form bodies (``application/x-www-form-urlencoded``): each field, the rest of the text kept.
- Multipart bodies: the content of each non-file part, boundary and part headers kept.
- JSON bodies (also unlabelled ones that parse as JSON, as ``fetch`` sends a string body as
  ``text/plain``): every string or number under a secret key, however deep, is replaced; the
  body is written back compactly only when something was replaced.
- Response bodies: JSON and form bodies, by their declared type only, strings only (a number
  may be a status the page checks), with the response rule (``key``, ``code`` are not secret).
"""

from __future__ import annotations

import json
from typing import Any

from .bodies import (
    FormPart,
    boundary_of,
    is_form,
    is_json,
    parse_json,
    rewrite_form,
    rewrite_multipart,
)
from .har import Content, Header, PostData
from .secret_names import REDACTED, is_secret_name

__all__ = [
    "redact_body",
    "redact_content",
    "redact_json",
    "redact_pairs",
    "redact_post_data",
    "redact_url",
]


def _request_value(name: str) -> str | None:
    return REDACTED if is_secret_name(name) else None


def _response_value(name: str) -> str | None:
    return REDACTED if is_secret_name(name, request=False) else None


def redact_url(url: str) -> str:
    """``url`` with the values of its secret query (and fragment) parameters redacted.

    Works on absolute and relative URLs (``/a?token=1``) alike; other bytes are kept.
    """
    base, hashed, fragment = url.partition("#")
    path, question, query = base.partition("?")
    if question:
        base = f"{path}?{rewrite_form(query, _request_value)}"
    if not hashed:
        return base
    if "?" in fragment:
        route, _, params = fragment.partition("?")
        fragment = f"{route}?{rewrite_form(params, _request_value)}"
    elif "=" in fragment:
        fragment = rewrite_form(fragment, _request_value)
    return f"{base}#{fragment}"


def redact_pairs(pairs: list[Header]) -> bool:
    """Redact, in place, the values of secret-named pairs (a HAR ``queryString``); True if any."""
    changed = False
    for pair in pairs:
        if is_secret_name(pair.name) and pair.value != REDACTED:
            pair.value = REDACTED
            changed = True
    return changed


def redact_json(data: Any, *, request: bool = True) -> tuple[Any, bool]:
    """``(data, changed)``: a copy of ``data`` with every value under a secret key redacted.

    Args:
        data: parsed JSON.
        request: True for a request body (strings and numbers redacted, the request rule);
            False for a response body (strings only, the response rule).
    """
    return _walk(data, request, False)


def _walk(value: Any, request: bool, secret: bool) -> tuple[Any, bool]:
    if isinstance(value, dict):
        changed = False
        copy = {}
        for key, item in value.items():
            inner = secret or is_secret_name(str(key), request=request)
            copy[key], item_changed = _walk(item, request, inner)
            changed = changed or item_changed
        return copy, changed
    if isinstance(value, list):
        walked = [_walk(item, request, secret) for item in value]
        return [item for item, _ in walked], any(changed for _, changed in walked)
    scalar = isinstance(value, str) or (
        request and isinstance(value, int | float) and not isinstance(value, bool)
    )
    if secret and scalar and value != REDACTED:
        return REDACTED, True
    return value, False


def redact_body(text: str, content_type: str | None, *, request: bool = True) -> str | None:
    """The body ``text`` with its secret values redacted, or None when nothing changed.

    Args:
        text: the body as text.
        content_type: its Content-Type (tells form, multipart and JSON apart).
        request: True for a request body: JSON is also recognised by its first character
            when the type does not say so. False for a response body (see the module).
    """
    value = _request_value if request else _response_value
    if is_form(content_type):
        rewritten = rewrite_form(text, value)
        return rewritten if rewritten != text else None
    boundary = boundary_of(content_type)
    if boundary is not None:

        def part_value(part: FormPart) -> str | None:
            """The redacted content of a secret text field, None for every other part."""
            if part.is_file or part.content == REDACTED:
                return None
            return value(part.name)

        rewritten_parts = rewrite_multipart(text, boundary, part_value)
        return rewritten_parts if rewritten_parts not in (None, text) else None
    sniffed = request and text.lstrip()[:1] in ("{", "[")
    if not (is_json(content_type) or sniffed):
        return None
    parsed = parse_json(text)
    if parsed is None:
        return None
    prefix, data = parsed
    redacted, changed = redact_json(data, request=request)
    if not changed:
        return None
    return prefix + json.dumps(redacted, ensure_ascii=False, separators=(",", ":"))


def redact_post_data(post: PostData) -> bool:
    """Redact a request body in place (its ``text`` and form ``params``); True if changed."""
    changed = False
    for param in post.params:
        if is_secret_name(str(param.get("name", ""))) and param.get("value") not in (
            None,
            REDACTED,
        ):
            param["value"] = REDACTED
            changed = True
    if post.text is not None:
        rewritten = redact_body(post.text, post.mime_type, request=True)
        if rewritten is not None:
            post.text = rewritten
            changed = True
    return changed


def redact_content(content: Content, content_type: str | None) -> bool:
    """Redact a JSON or form response body in place; True if changed.

    Bodies stored as base64 and bodies of other types (HTML, scripts) are left as they are.

    Args:
        content: the response's content.
        content_type: the response's Content-Type header (else ``content.mime_type``).
    """
    if content.text is None or (content.encoding or "").lower() == "base64":
        return False
    declared = content_type or content.mime_type
    if not (is_json(declared) or is_form(declared)):
        return False
    rewritten = redact_body(content.text, declared, request=False)
    if rewritten is None:
        return False
    content.text = rewritten
    content.size = len(rewritten.encode("utf-8"))
    return True
