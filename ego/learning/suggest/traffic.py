"""The exchanges of a recording that can become API tools, and why every other one cannot.

A recording (HAR) holds everything a page loaded: its documents, scripts, styles, images,
requests to other hosts, and the calls its own scripts made to the site's JSON API. Only the
last are drafted into tools: a request on one of the site's domains whose response is JSON
or whose body is JSON. Every other entry is kept out with a reason (:class:`Skipped`), so
that nothing is dropped without a word.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final
from urllib.parse import parse_qsl, urlsplit

from ...replay.har import Entry, Har, header_value
from ...replay.secrets import REDACTED_FIELD
from ..catalog.matching import match_domain

__all__ = ["STATIC_EXTENSIONS", "Exchange", "Skipped", "is_json_type", "read_exchanges"]

#: Path endings that name a static file, whatever its type says.
STATIC_EXTENSIONS: Final = (
    ".js",
    ".mjs",
    ".css",
    ".map",
    ".png",
    ".jpg",
    ".jpeg",
    ".gif",
    ".webp",
    ".avif",
    ".svg",
    ".ico",
    ".woff",
    ".woff2",
    ".ttf",
    ".otf",
    ".eot",
    ".mp4",
    ".webm",
    ".mp3",
    ".wasm",
)
#: Chrome's resource types of static files.
_STATIC_TYPES: Final = frozenset(
    {"script", "stylesheet", "image", "font", "media", "manifest", "texttrack"}
)


def is_json_type(content_type: str | None) -> bool:
    """Whether a Content-Type names JSON (``application/json``, ``application/ld+json``...)."""
    if not content_type:
        return False
    essence = content_type.split(";", 1)[0].strip().lower()
    return essence.endswith("/json") or essence.endswith("+json")


@dataclass(frozen=True)
class Exchange:
    """One request of a recording to the site's JSON API, and its answer.

    Attributes:
        har: the recording it comes from.
        index: its entry's index in that recording.
        method: the request method, upper case.
        url: the full request URL.
        origin: ``scheme://host[:port]``.
        path: the URL's path.
        query: the query parameters, in order.
        body: the request body parsed as JSON (None when it had none, or not JSON).
        status: the response status.
        response: the response body parsed as JSON (None when not JSON).
        response_type: the response's Content-Type.
        redirect: where a redirect pointed (``redirectURL``), or "".
        request_headers: the request's headers that the recording kept, lower-case names.
        redacted: what recording dropped from the entry, names only (see
            :data:`ego.replay.secrets.REDACTED_FIELD`).
        page: the document the page showed when the request was made, or "".
    """

    har: Path
    index: int
    method: str
    url: str
    origin: str
    path: str
    query: tuple[tuple[str, str], ...]
    body: Any
    status: int
    response: Any
    response_type: str
    redirect: str = ""
    request_headers: dict[str, str] = field(default_factory=dict)
    redacted: dict[str, list[str]] = field(default_factory=dict)
    page: str = ""

    @property
    def label(self) -> str:
        """``METHOD /path?query`` as recorded."""
        query = urlsplit(self.url).query
        return f"{self.method} {self.path}{'?' + query if query else ''}"

    @property
    def sends_cookies(self) -> bool:
        """The request carried cookies (a session, most likely)."""
        return bool(self.redacted.get("requestCookies")) or "cookie" in self.request_headers


@dataclass(frozen=True)
class Skipped:
    """A recorded request that is no tool, and why.

    Attributes:
        har: the recording.
        method, url: the request.
        reason: one of ``"static asset"``, ``"page (HTML document)"``, ``"third-party
            host"``, ``"not JSON"``, ``"failed request"``, ``"not http(s)"``.
        detail: what was seen (the host, the content type, the error).
    """

    har: Path
    method: str
    url: str
    reason: str
    detail: str = ""

    def as_dict(self) -> dict[str, str]:
        """JSON-ready form."""
        return {
            "har": self.har.name,
            "request": f"{self.method} {self.url}",
            "reason": self.reason,
            "detail": self.detail,
        }


def _json(text: bytes) -> Any:
    try:
        return json.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None


def _is_static(entry: Entry, path: str) -> bool:
    kind = (entry.resource_type or "").lower()
    return kind in _STATIC_TYPES or path.lower().endswith(STATIC_EXTENSIONS)


def _is_document(entry: Entry, content_type: str) -> bool:
    kind = (entry.resource_type or "").lower()
    if kind == "document":
        return True
    return not kind and content_type.split(";", 1)[0].strip().lower() == "text/html"


def read_exchanges(
    har: Har, source: Path, domains: list[str]
) -> tuple[list[Exchange], list[Skipped], list[str]]:
    """The API exchanges of one recording on ``domains``, what was skipped, and the pages.

    Args:
        har: the recording.
        source: its file (named in what is returned).
        domains: the site's domains (exact hosts, ``*.suffix``, ``host:port``).

    Returns:
        ``(exchanges, skipped, pages)``: the JSON exchanges in recorded order; every other
        entry with its reason; the URLs of the site's documents, in order.
    """
    exchanges: list[Exchange] = []
    skipped: list[Skipped] = []
    pages: list[str] = []
    page = ""
    for index, entry in enumerate(har.entries):
        request, response = entry.request, entry.response
        method, url = request.method.upper(), request.url
        parts = urlsplit(url)

        def skip(reason: str, detail: str = "") -> None:
            skipped.append(Skipped(source, method, url, reason, detail))  # noqa: B023

        if parts.scheme not in ("http", "https"):
            skip("not http(s)", parts.scheme)
            continue
        content_type = header_value(response.headers, "content-type") or ""
        content_type = content_type or response.content.mime_type
        on_site = match_domain(url, domains) is not None
        if _is_document(entry, content_type) and method == "GET":
            if on_site and response.status < 300:
                page = url
                pages.append(url)
            skip("page (HTML document)", content_type or "document")
            continue
        if not on_site:
            skip("third-party host", parts.netloc)
            continue
        if entry.failed is not None:
            skip("failed request", entry.failed)
            continue
        if _is_static(entry, parts.path):
            skip("static asset", entry.resource_type or parts.path.rsplit(".", 1)[-1])
            continue
        post = request.post_data
        body = None
        sent_type = header_value(request.headers, "content-type")
        if (
            post is not None
            and (post.text or post.params)
            and (is_json_type(post.mime_type) or is_json_type(sent_type))
        ):
            body = _json(post.body())
        json_answer = is_json_type(content_type)
        answer = _json(response.body()) if json_answer else None
        # A JSON answer whose body the recording missed (the page moved on) is still a call.
        if not json_answer and body is None:
            skip("not JSON", content_type or f"HTTP {response.status}, no content type")
            continue
        redacted = entry.extra.get(REDACTED_FIELD)
        exchanges.append(
            Exchange(
                har=source,
                index=index,
                method=method,
                url=url,
                origin=f"{parts.scheme}://{parts.netloc}",
                path=parts.path or "/",
                query=tuple(parse_qsl(parts.query, keep_blank_values=True)),
                body=body,
                status=response.status,
                response=answer,
                response_type=content_type,
                redirect=response.redirect_url,
                request_headers={h.name.lower(): h.value for h in request.headers},
                redacted=dict(redacted) if isinstance(redacted, dict) else {},
                page=page,
            )
        )
    return exchanges, skipped, pages
