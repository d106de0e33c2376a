"""What a recording must not carry: cookies, credentials, and values named like secrets.

A HAR is meant to be shared and committed next to a learning; a session in it would let
anyone who reads it act as the person. So, by default, recordings lose:

- every ``Cookie``, ``Set-Cookie``, ``Authorization`` and ``Proxy-Authorization`` header,
  and every header named like a secret (:func:`is_secret_header`), CORS headers aside;
- the HAR ``cookies`` arrays of requests and responses;
- the *values* (never the names) of secret-named query parameters, form, multipart and JSON
  fields of requests, and JSON or form fields of responses (:func:`is_secret_name`,
  :mod:`ego.replay.redaction`): they become ``REDACTED``. The same goes for the URLs in
  ``Referer``, ``Location`` and ``Content-Location`` headers, ``redirectURL`` and page titles.

Redacted values keep the request's shape, and the matcher takes a recorded ``REDACTED`` as
any value, so a redacted recording still replays. HTML, scripts and other bodies are not
rewritten by name: a token a page writes only into its own markup stays.

Then every value redacted by name is redacted wherever else it appears in the recording, by
value (:mod:`ego.replay.secret_values`): a session cookie used as a URL path segment, a token
echoed in another answer or in a page's markup.

What was dropped is named, never its value: an entry that lost headers or cookies carries
``_redacted`` (:data:`REDACTED_FIELD`), ``{"requestHeaders": [...], "requestCookies": [...],
"responseHeaders": [...], "responseCookies": [...], "values": {where: [names]}}`` with the
names, so that a reader of the recording (``ego suggest``) can still tell that a request sent
a session cookie or a CSRF header, and which one.
"""

from __future__ import annotations

from typing import Any, Final

from .har import Entry, Har, Header, header_value
from .redaction import redact_content, redact_pairs, redact_post_data, redact_url
from .secret_names import REDACTED, is_secret_header, is_secret_name
from .secret_values import SecretValues, strip_values

__all__ = [
    "REDACTED",
    "REDACTED_FIELD",
    "is_secret_header",
    "is_secret_name",
    "strip_entry",
    "strip_har",
]

#: The entry field naming what recording dropped from it (names only).
REDACTED_FIELD: Final = "_redacted"

# Headers whose value is a URL (or a path with its query) that may carry a secret parameter.
_URL_HEADERS: Final = frozenset({"referer", ":path", "location", "content-location"})


def _keep(headers: list[Header]) -> list[Header]:
    kept = []
    for header in headers:
        if is_secret_header(header.name):
            continue
        if header.name.lower() in _URL_HEADERS:
            header.value = redact_url(header.value)
        kept.append(header)
    return kept


def _dropped(headers: list[Header]) -> list[str]:
    return sorted({header.name for header in headers if is_secret_header(header.name)})


def _cookie_names(cookies: list[Any], headers: list[Header], header: str) -> list[str]:
    """The names of the cookies an entry's HAR ``cookies`` and its ``Cookie`` or
    ``Set-Cookie`` headers carry."""
    names = {str(c.get("name")) for c in cookies if isinstance(c, dict) and c.get("name")}
    for pair in headers:
        if pair.name.lower() != header:
            continue
        # Set-Cookie: one cookie a line (its attributes after ';'); Cookie: many, by ';'.
        parts = pair.value.splitlines() if header == "set-cookie" else pair.value.split(";")
        for part in parts:
            name = part.split(";", 1)[0].split("=", 1)[0].strip()
            if name and "=" in part:
                names.add(name)
    return sorted(names)


def strip_entry(entry: Entry) -> Entry:
    """Remove secret headers and cookies from ``entry`` and redact secret values, by name and
    then by value within the entry, in place (:func:`strip_har` looks for each value in the
    whole recording).

    Returns:
        ``entry``.
    """
    values = SecretValues()
    values.collect(entry)
    _strip_by_name(entry)
    values.redact(entry)
    return entry


def _strip_by_name(entry: Entry) -> None:
    request, response = entry.request, entry.response
    dropped = {
        "requestHeaders": _dropped(request.headers),
        "requestCookies": _cookie_names(request.cookies, request.headers, "cookie"),
        "responseHeaders": _dropped(response.headers),
        "responseCookies": _cookie_names(response.cookies, response.headers, "set-cookie"),
    }
    dropped = {key: names for key, names in dropped.items() if names}
    if dropped:
        entry.extra[REDACTED_FIELD] = dropped
    request.headers = _keep(request.headers)
    request.cookies = []
    request.url = redact_url(request.url)
    redact_pairs(request.query_string)
    if request.post_data is not None and redact_post_data(request.post_data):
        request.body_size = len(request.post_data.body())
    response.headers = _keep(response.headers)
    response.cookies = []
    response.redirect_url = redact_url(response.redirect_url)
    content_type = header_value(response.headers, "content-type")
    if redact_content(response.content, content_type) and response.body_size >= 0:
        response.body_size = response.content.size


def strip_har(har: Har) -> Har:
    """Strip every entry of ``har`` by name (as :func:`strip_entry`), and page titles that are
    URLs; then redact each value that was redacted by name wherever else it appears in the
    recording (:mod:`ego.replay.secret_values`), in place.

    Returns:
        ``har``.
    """
    # Every value redacted by name is looked for in the whole recording: a token one answer
    # set as a cookie may be a later request's path segment.
    values = SecretValues()
    for entry in har.entries:
        values.collect(entry)
    for entry in har.entries:
        _strip_by_name(entry)
    for page in har.pages:
        # The recorder names a page by its URL, which may hold a token.
        if page.title.startswith(("http://", "https://")):
            page.title = redact_url(page.title)
    strip_values(har, values)
    return har
