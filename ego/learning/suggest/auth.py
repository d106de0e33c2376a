"""How the page authenticates its API calls, read from the recording: the session cookie it
sends, the header tokens it keeps in storage (a bearer token), and the CSRF token it adds to
a write, and where the page keeps each.

A token the page sends in a header (``Authorization: Bearer ...``, ``X-Api-Key``) is found
where the page keeps it while recording (:mod:`ego.replay.token_places`: the storage, the
key, the path inside a stored JSON value, the scheme before it); the draft reads it there at
run time (:class:`TokenPlace`), and a header the recording saw sent but whose place it did
not find is named in the draft's notes.

A drafted tool never carries a secret: it runs in the logged-in page with a same-origin
``fetch`` (the browser adds the cookies), and reads a CSRF token at run time from where the
page keeps it:

- ``header``: a response the page received earlier carried a header of the same name
  (``X-CSRF-Token``); the tool asks that URL again and reads the header;
- ``meta``: a ``<meta name="csrf-token" content="...">`` of the page;
- ``cookie``: a cookie the page's script can read (``csrftoken``, ``XSRF-TOKEN``).

A recording keeps names, not values (:mod:`ego.replay.secrets`), so the source is told by
name: a response header of the request header's name, then a CSRF cookie the request
carried (the double-submit pattern), then a meta tag, then a CSRF cookie a response set; a
recording made with secrets kept is matched by value first.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Final, Literal
from urllib.parse import urlsplit

from ...replay.har import Har, header_value
from ...replay.secrets import REDACTED_FIELD, is_secret_header
from .safe_paths import path_problem
from .traffic import Exchange

__all__ = ["Csrf", "TokenPlace", "find_csrf", "is_csrf_name", "token_places", "unplaced_headers"]

_CSRF: Final = re.compile(r"csrf|xsrf", re.IGNORECASE)
_META: Final = re.compile(
    r"<meta\b[^>]*\bname\s*=\s*[\"']([^\"']*(?:csrf|xsrf)[^\"']*)[\"'][^>]*>", re.IGNORECASE
)
_CONTENT: Final = re.compile(r"\bcontent\s*=\s*[\"']([^\"']*)[\"']", re.IGNORECASE)

Source = Literal["header", "meta", "cookie"]
Store = Literal["localStorage", "sessionStorage", "cookie"]

_HEADER_NAME: Final = re.compile(r"[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}")
_PREFIX: Final = re.compile(r"(?:[A-Za-z][\w.-]{0,30} +)?")
_STORES: Final = ("localStorage", "sessionStorage", "cookie")


def is_csrf_name(name: str) -> bool:
    """Whether a header, cookie or field name carries a CSRF token."""
    return bool(_CSRF.search(name))


@dataclass(frozen=True)
class Csrf:
    """Where a tool reads the page's CSRF token, and where it sends it.

    Attributes:
        source: ``"header"``, ``"meta"`` or ``"cookie"`` (see the module doc).
        name: the response header, the meta tag's name or the cookie's name.
        url: for ``header``: the path (with its query) of the response that carries it.
        header: the request header the token goes in, or None.
        field: the JSON body field the token goes in, or None.
        guessed: no trace of where the page keeps it was found (the tool reads a meta tag,
            and the draft says so).
    """

    source: Source
    name: str
    url: str | None = None
    header: str | None = None
    field: str | None = None
    guessed: bool = False

    def spec(self) -> dict[str, Any]:
        """What the tool's source reads (its ``CSRF`` constant)."""
        spec: dict[str, Any] = {"from": self.source, "name": self.name}
        for key in ("url", "header", "field"):
            value = getattr(self, key)
            if value is not None:
                spec[key] = value
        return spec

    def describe(self) -> str:
        """One line for the draft's description."""
        where = {
            "header": f"the {self.name} header of {self.url}",
            "meta": f'the page\'s <meta name="{self.name}">',
            "cookie": f"the {self.name} cookie",
        }[self.source]
        goes = " and ".join(
            part
            for part in (
                f"the {self.header} header" if self.header else "",
                f"the body field {self.field!r}" if self.field else "",
            )
            if part
        )
        guessed = " (guessed: the recording shows no other place; check it)" if self.guessed else ""
        return f"CSRF token read from {where} at run time, sent in {goes}{guessed}"


@dataclass(frozen=True)
class TokenPlace:
    """Where the page keeps a token it sends in a header, and how it sends it.

    Attributes:
        header: the request header (``Authorization``).
        store: ``"localStorage"``, ``"sessionStorage"`` or ``"cookie"``.
        key: the storage key or cookie name.
        path: the keys to the token inside a stored JSON value (``[]``: a JSON string), or
            None for a token stored as it is.
        prefix: what the header value has before the token (``"Bearer "``, or "").
    """

    header: str
    store: Store
    key: str
    path: tuple[str, ...] | None = None
    prefix: str = ""

    @classmethod
    def read(cls, recorded: Any) -> TokenPlace | None:
        """A place as a recording's ``_tokenPlaces`` holds it, or None when it is not one
        (a recording can be edited by hand: nothing in it is trusted)."""
        if not isinstance(recorded, dict):
            return None
        header, store, key = recorded.get("header"), recorded.get("from"), recorded.get("key")
        path, prefix = recorded.get("path"), recorded.get("prefix", "")
        if not isinstance(header, str) or not _HEADER_NAME.fullmatch(header):
            return None
        if store not in _STORES or not isinstance(key, str) or not 0 < len(key) <= 200:
            return None
        if path is not None and not (
            isinstance(path, list)
            and len(path) <= 8
            and all(isinstance(p, str) and len(p) <= 100 for p in path)
        ):
            return None
        if not isinstance(prefix, str) or not _PREFIX.fullmatch(prefix):
            return None
        return cls(header, store, key, tuple(path) if path is not None else None, prefix)

    def spec(self) -> dict[str, Any]:
        """What the tool's source reads (an item of its ``AUTH`` constant)."""
        path = list(self.path) if self.path is not None else None
        return {
            "header": self.header,
            "from": self.store,
            "key": self.key,
            "path": path,
            "prefix": self.prefix,
        }

    def placeholder(self, value: str) -> str:
        """What the page would keep for a token ``value`` (a JSON value for a ``path``)."""
        if self.path is None:
            return value
        kept: Any = value
        for key in reversed(self.path):
            kept = {key: kept}
        return json.dumps(kept)

    def describe(self) -> str:
        """One line for the draft's notes."""
        inside = f" at {'.'.join(self.path)}" if self.path else ""
        return (
            f"sends {self.header}: {self.prefix}<the token the page keeps in "
            f"{self.store}[{self.key!r}]{inside}>, read there at run time (never written here)"
        )


def token_places(exchanges: list[Exchange]) -> list[TokenPlace]:
    """Where the page kept the header tokens ``exchanges`` sent, one per header (the last
    call's place wins: a page that moved its token sends it from there now)."""
    found: dict[str, TokenPlace] = {}
    for exchange in exchanges:
        for recorded in exchange.token_places:
            place = TokenPlace.read(recorded)
            if place is not None and not is_csrf_name(place.header):
                found.pop(place.header.lower(), None)
                found[place.header.lower()] = place
    return list(found.values())


def unplaced_headers(exchanges: list[Exchange], places: list[TokenPlace]) -> list[str]:
    """Secret headers (not CSRF, not ``Cookie``) the calls sent whose place is unknown."""
    placed = {place.header.lower() for place in places}
    sent: dict[str, str] = {}
    for exchange in exchanges:
        names = list(exchange.redacted.get("requestHeaders", []))
        names += [name for name in exchange.request_headers if is_secret_header(name)]
        for name in names:
            lower = name.lower()
            if lower not in ("cookie", "cookie2") and not is_csrf_name(name):
                sent.setdefault(lower, name)
    return [name for lower, name in sent.items() if lower not in placed]


def _request_cookies(exchange: Exchange) -> dict[str, str]:
    cookies: dict[str, str] = {}
    for part in exchange.request_headers.get("cookie", "").split(";"):
        name, _, value = part.strip().partition("=")
        if name:
            cookies[name] = value
    for name in exchange.redacted.get("requestCookies", []):
        cookies.setdefault(name, "")
    return cookies


def find_csrf(exchange: Exchange, har: Har, body_fields: list[str]) -> Csrf | None:
    """Where ``exchange``'s CSRF token comes from, or None when it sends none.

    Args:
        exchange: a recorded call.
        har: its recording (the responses before it are searched).
        body_fields: the names of its JSON body's fields.
    """
    headers = [n for n in exchange.request_headers if is_csrf_name(n)]
    headers += [n for n in exchange.redacted.get("requestHeaders", []) if is_csrf_name(n)]
    fields = [n for n in body_fields if is_csrf_name(n)]
    if not headers and not fields:
        return None
    header = headers[0] if headers else None
    field = fields[0] if fields else None
    value = exchange.request_headers.get(header.lower(), "") if header else ""
    if not value and field and isinstance(exchange.body, dict):
        value = str(exchange.body.get(field, ""))
    if value == "REDACTED":
        value = ""
    earlier = har.entries[: exchange.index]
    found = _by_value(value, exchange, earlier) if value else None
    if found is None:
        found = _by_name(header, exchange, earlier)
    source, name, url = found if found is not None else ("meta", "csrf-token", None)
    return Csrf(source, name, url, header, field, guessed=found is None)


def _path(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def _metas(text: str) -> list[tuple[str, str]]:
    found = []
    for tag in _META.finditer(text):
        content = _CONTENT.search(tag.group(0))
        found.append((tag.group(1), content.group(1) if content else ""))
    return found


def _html(entry: Any) -> str:
    content_type = header_value(entry.response.headers, "content-type") or ""
    if "html" not in content_type.lower():
        return ""
    try:
        return str(entry.response.body().decode("utf-8", "replace"))
    except Exception:  # a body that cannot be decoded holds no meta tag for us
        return ""


def _same_origin(entry: Any, exchange: Exchange) -> bool:
    parts = urlsplit(entry.request.url)
    # The tool asks a header's URL again: only a path that stays on the origin may be one.
    on_origin = f"{parts.scheme}://{parts.netloc}" == exchange.origin
    return on_origin and path_problem(parts.path or "/") is None


def _by_value(
    value: str, exchange: Exchange, earlier: list[Any]
) -> tuple[Source, str, str | None] | None:
    for entry in reversed(earlier):
        if not _same_origin(entry, exchange):
            continue
        for pair in entry.response.headers:
            if pair.value == value and pair.name.lower() != "set-cookie":
                return "header", pair.name, _path(entry.request.url)
        for name, content in _metas(_html(entry)):
            if content == value:
                return "meta", name, None
    for name, cookie in _request_cookies(exchange).items():
        if cookie == value:
            return "cookie", name, None
    return None


def _by_name(
    header: str | None, exchange: Exchange, earlier: list[Any]
) -> tuple[Source, str, str | None] | None:
    if header is not None:
        for entry in reversed(earlier):
            if not _same_origin(entry, exchange) or entry.request.method.upper() != "GET":
                continue
            dropped = entry.extra.get(REDACTED_FIELD) or {}
            names = [h.name for h in entry.response.headers]
            names += list(dropped.get("responseHeaders", [])) if isinstance(dropped, dict) else []
            for name in names:
                if name.lower() == header.lower():
                    return "header", name, _path(entry.request.url)
    # A CSRF cookie the request carried is the double-submit pattern: the header repeats it.
    cookies = [name for name in _request_cookies(exchange) if is_csrf_name(name)]
    if cookies:
        return "cookie", cookies[0], None
    for entry in reversed(earlier):
        if _same_origin(entry, exchange):
            metas = _metas(_html(entry))
            if metas:
                return "meta", metas[0][0], None
    for entry in earlier:
        dropped = entry.extra.get(REDACTED_FIELD) or {}
        if isinstance(dropped, dict):
            cookies += [n for n in dropped.get("responseCookies", []) if is_csrf_name(n)]
    if cookies:
        return "cookie", cookies[0], None
    return None
