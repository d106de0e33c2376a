"""Where a page keeps the tokens it sends in headers, found while recording, never written.

A single-page app often logs in once, keeps the token it got in ``localStorage``,
``sessionStorage`` or a cookie its script can read, and sends it with each API call
(``Authorization: Bearer <token>``, ``X-Api-Key: <token>``). A recording drops those
headers (:mod:`ego.replay.secrets`), so a reader of the HAR (``ego suggest``) would know
that the page sent ``Authorization`` but not where the value came from.

While the recording runs, each new value of such a header is looked up, once, in the page
that sent it: in its ``localStorage``, its ``sessionStorage`` and the cookies its script can
read, whole or as a string inside a stored JSON value, and with or without a one-word scheme
before it (``Bearer``). What is found is written to the entry's ``_tokenPlaces``
(:data:`TOKEN_PLACES_FIELD`) as *where*, never the value::

    "_tokenPlaces": [{"header": "Authorization", "from": "localStorage", "key": "auth",
                      "path": ["access_token"], "prefix": "Bearer "}]

``path`` is None for a value stored as it is, and the keys leading to it in a stored JSON
value otherwise (``[]`` for a JSON string). The values themselves live only in memory, as
SHA-256 digests, for the recording's lifetime. CSRF headers and ``Cookie`` are left to the
rules that already find them (a meta tag, a cookie the browser sends).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any, Final

from ..errors import EgoError
from .har import Entry
from .secret_names import is_secret_header

__all__ = ["FIND_PLACES", "TOKEN_PLACES_FIELD", "TokenPlaces"]

logger = logging.getLogger("ego.replay")

#: The entry field naming where the page keeps the tokens the request sent.
TOKEN_PLACES_FIELD: Final = "_tokenPlaces"

# Headers whose value is never looked up: the browser adds cookies itself, and CSRF tokens
# are found by their own rules (a meta tag, a response header, a cookie).
_NOT_TOKENS: Final = frozenset({"cookie", "cookie2", "set-cookie", "set-cookie2"})
# A stored value shorter than this is not taken for a token (``"1"``, ``"dark"``).
_MIN_TOKEN: Final = 8

#: In the page: for each header value, where it (or its part after a one-word scheme) is
#: kept, or null.
FIND_PLACES: Final = r"""(values) => {
  const stores = [];
  for (const from of ["localStorage", "sessionStorage"]) {
    try {
      const store = window[from];
      for (let i = 0; i < store.length; i++) {
        const key = store.key(i);
        stores.push([from, key, store.getItem(key)]);
      }
    } catch (e) {}
  }
  try {
    for (const part of document.cookie.split(";")) {
      const [name, ...rest] = part.trim().split("=");
      let value = rest.join("=");
      try { value = decodeURIComponent(value); } catch (e) {}
      if (name) stores.push(["cookie", name, value]);
    }
  } catch (e) {}
  const inside = (value, want, path, depth) => {
    if (typeof value === "string") return value === want ? path : null;
    if (depth > 6 || !value || typeof value !== "object") return null;
    for (const [key, inner] of Object.entries(value)) {
      const found = inside(inner, want, path.concat([key]), depth + 1);
      if (found) return found;
    }
    return null;
  };
  return values.map((header) => {
    const tries = [[header, ""]];
    const scheme = /^([A-Za-z][\w.-]{0,30}) +(\S.*)$/.exec(header);
    if (scheme) tries.push([scheme[2], header.slice(0, header.length - scheme[2].length)]);
    for (const [token, prefix] of tries) {
      if (token.length < MIN) continue;
      for (const [from, key, raw] of stores) {
        if (raw === token) return {from, key, path: null, prefix};
      }
      for (const [from, key, raw] of stores) {
        if (!raw || raw.length > 1000000 || !raw.includes(token)) continue;
        let parsed;
        try { parsed = JSON.parse(raw); } catch (e) { continue; }
        const path = inside(parsed, token, [], 0);
        if (path) return {from, key, path, prefix};
      }
    }
    return null;
  });
}""".replace("MIN", str(_MIN_TOKEN))

Send = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


def _digest(name: str, value: str) -> str:
    return hashlib.sha256(f"{name.lower()}\0{value}".encode()).hexdigest()


def _token_headers(headers: Any) -> list[tuple[str, str]]:
    """The ``(name, value)`` of each header in ``headers`` (a CDP headers object or HAR
    header list) whose value may be a token the page keeps."""
    pairs: list[tuple[str, str]] = []
    if isinstance(headers, dict):
        pairs = [(str(n), str(v)) for n, v in headers.items()]
    elif isinstance(headers, list):
        pairs = [(h.name, h.value) for h in headers]
    return [
        (name, value)
        for name, value in pairs
        if value
        and is_secret_header(name)
        and name.lower().lstrip(":") not in _NOT_TOKENS
        and "csrf" not in name.lower()
        and "xsrf" not in name.lower()
    ]


_FROM: Final = frozenset({"localStorage", "sessionStorage", "cookie"})
_PREFIX: Final = re.compile(r"(?:[A-Za-z][\w.-]{0,30} +)?")


def _checked(place: Any) -> dict[str, Any] | None:
    """A place as the page answered it, if it has the shape the script gives (the page's
    own code could have changed what the script calls)."""
    if not isinstance(place, dict) or place.get("from") not in _FROM:
        return None
    key, path, prefix = place.get("key"), place.get("path"), place.get("prefix")
    if not isinstance(key, str) or not key or len(key) > 200:
        return None
    if path is not None and not (
        isinstance(path, list)
        and len(path) <= 8
        and all(isinstance(part, str) and len(part) <= 100 for part in path)
    ):
        return None
    if not isinstance(prefix, str) or not _PREFIX.fullmatch(prefix):
        return None
    return {"from": place["from"], "key": key, "path": path, "prefix": prefix}


class TokenPlaces:
    """The places of the token values a recording has seen, by digest (in memory only)."""

    def __init__(self) -> None:
        self._places: dict[str, dict[str, Any] | None] = {}
        self._asked: set[str] = set()

    def wanted(self, headers: Any) -> list[tuple[str, str]]:
        """The token headers of a request that were not looked up yet (and marks them)."""
        new = []
        for name, value in _token_headers(headers):
            digest = _digest(name, value)
            if digest not in self._asked:
                self._asked.add(digest)
                new.append((name, value))
        return new

    async def look_up(self, send: Send, headers: list[tuple[str, str]]) -> None:
        """Find where the page keeps each of ``headers``' values (``send`` evaluates in it).

        A page that cannot answer (it navigated, a dialog holds it) leaves them unknown.
        """
        expression = f"({FIND_PLACES})({json.dumps([value for _, value in headers])})"
        try:
            answer = await send(
                "Runtime.evaluate", {"expression": expression, "returnByValue": True}
            )
        except EgoError as exc:  # it navigated, closed, or a dialog holds it: unknown
            logger.debug("record: could not look up where the page keeps a token: %s", exc)
            return
        found = (answer.get("result") or {}).get("value")
        if not isinstance(found, list) or len(found) != len(headers):
            return
        for (name, value), place in zip(headers, found, strict=True):
            checked = _checked(place)
            if checked is not None:
                self._places[_digest(name, value)] = {"header": name, **checked}

    def annotate(self, entry: Entry) -> None:
        """Write where the page keeps the tokens ``entry``'s request sent (its headers still
        hold the values: call this before stripping secrets)."""
        places = []
        for name, value in _token_headers(entry.request.headers):
            place = self._places.get(_digest(name, value))
            if place is not None and place not in places:
                places.append(place)
        if places:
            entry.extra[TOKEN_PLACES_FIELD] = places
