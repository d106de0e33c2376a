"""What a recording must not carry: cookies, credentials and anything named like a token.

A HAR is meant to be shared and committed next to a learning; a session in it would let
anyone who reads it act as the person. So, by default, recordings lose:

- every ``Cookie``, ``Set-Cookie``, ``Authorization`` and ``Proxy-Authorization`` header;
- every header whose name says it holds a secret: it contains ``token``, ``secret``,
  ``csrf``, ``xsrf``, ``api-key``/``apikey``/``api_key``, ``password``, ``session``,
  ``cookie``, ``credential`` or ``authorization``, or has ``auth`` as one of its dash-separated
  words (``x-twitter-auth-type``);
- the HAR ``cookies`` arrays of requests and responses.

CORS headers (``access-control-*``) are kept even when a word matches: they carry no secret
and replay needs them. URLs and bodies are not rewritten: a token in a query string or in a
page's HTML stays; check before sharing a recording of such a site.
"""

from __future__ import annotations

import re
from typing import Final

from .har import Entry, Har, Header

__all__ = ["is_secret_header", "strip_entry", "strip_har"]

_ALWAYS: Final = frozenset(
    {"cookie", "set-cookie", "set-cookie2", "authorization", "proxy-authorization"}
)
_FRAGMENTS: Final = re.compile(
    r"token|secret|csrf|xsrf|api[-_]?key|password|passwd|session|cookie|credential|authorization",
    re.IGNORECASE,
)
_WORDS: Final = frozenset({"auth"})


def is_secret_header(name: str) -> bool:
    """True when a header called ``name`` must not be written to a recording."""
    lower = name.lower().lstrip(":")
    if lower in _ALWAYS:
        return True
    if lower.startswith("access-control-"):
        return False
    if _FRAGMENTS.search(lower):
        return True
    return any(word in _WORDS for word in re.split(r"[-_]", lower))


def _keep(headers: list[Header]) -> list[Header]:
    return [header for header in headers if not is_secret_header(header.name)]


def strip_entry(entry: Entry) -> Entry:
    """Remove secret headers and the cookies arrays from ``entry`` in place; return it."""
    entry.request.headers = _keep(entry.request.headers)
    entry.request.cookies = []
    entry.response.headers = _keep(entry.response.headers)
    entry.response.cookies = []
    return entry


def strip_har(har: Har) -> Har:
    """:func:`strip_entry` on every entry of ``har``, in place; return it."""
    for entry in har.entries:
        strip_entry(entry)
    return har
