"""The exchanges of a recording that can become API tools, and why every other one cannot.

A recording (HAR) holds everything a page loaded: its documents, scripts, styles, images,
requests to other hosts, and the calls its own scripts made to the site's JSON API. Only the
last are drafted into tools: a request on one of the site's domains whose response is JSON
or whose body is JSON (a form or multipart body answered with JSON counts too, and so does
a write answered ``204 No Content``). Every other entry is kept out with a reason
(:class:`Skipped`), so that nothing is dropped without a word; so is a call whose answer the
recording does not hold whole (the page moved on first), and a multipart body that sends a
file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal
from urllib.parse import parse_qsl, urlsplit

from ...replay.bodies import boundary_of, is_form, multipart_parts
from ...replay.har import Entry, Har, PostData, header_value
from ...replay.secrets import REDACTED_FIELD
from ...replay.token_places import TOKEN_PLACES_FIELD
from ..catalog.matching import match_domain
from .graphql import Operation, operation_of
from .safe_paths import REASON as PATH_LEAVES_ORIGIN
from .safe_paths import path_problem

__all__ = [
    "STATIC_EXTENSIONS",
    "Encoding",
    "Exchange",
    "Skipped",
    "is_json_type",
    "read_exchanges",
]

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
#: Statuses whose answer has no body by definition.
_NO_CONTENT: Final = frozenset({204, 205})
#: How a request body was sent: JSON, a URL-encoded form, a multipart form.
Encoding = Literal["json", "form", "multipart"]


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
        body: the request body: parsed JSON, or for a form or multipart body a dict of its
            fields (a field sent several times: a list of its values); None when it had
            none, or one of another kind.
        encoding: how the body was sent (None without a body).
        body_type: the request's Content-Type for a JSON body (``application/vnd.api+json``).
        status: the response status.
        response: the response body parsed as JSON (None when not JSON).
        response_type: the response's Content-Type.
        redirect: where a redirect pointed (``redirectURL``), or "".
        request_headers: the request's headers that the recording kept, lower-case names.
        redacted: what recording dropped from the entry, names only (see
            :data:`ego.replay.secrets.REDACTED_FIELD`).
        page: the document the page showed when the request was made, or "".
        token_places: where the page keeps the tokens the request sent in headers
            (:mod:`ego.replay.token_places`; names and places, never values).
        operation: the GraphQL operation the request ran, or None.
        form: a form or multipart body's fields in order, repeats kept.
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
    encoding: Encoding | None = None
    body_type: str = ""
    token_places: tuple[dict[str, Any], ...] = ()
    operation: Operation | None = None
    form: tuple[tuple[str, str], ...] = ()

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
            host"``, ``"not JSON"``, ``"failed request"``, ``"not http(s)"``,
            ``"path leaves the origin"`` (:mod:`.safe_paths`),
            ``"incomplete response"`` (the page moved on before the answer was recorded
            whole), ``"file upload"`` (a multipart body with a file: a browser tool cannot
            read one from disk).
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


def _pairs_dict(pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """Fields by name: one value as it is, a name sent several times as the list of them."""
    found: dict[str, Any] = {}
    for name, value in pairs:
        if name in found:
            seen = found[name]
            found[name] = [*seen, value] if isinstance(seen, list) else [seen, value]
        else:
            found[name] = value
    return found


def _json(text: bytes) -> Any:
    try:
        return json.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None


def _form_fields(
    post: PostData, sent_type: str | None
) -> tuple[Encoding, list[tuple[str, str]]] | str | None:
    """A form or multipart body's kind and fields; the file field's name for a multipart body
    that sends a file; None for a body of another kind."""
    content_type = sent_type or post.mime_type
    if is_form(content_type) or is_form(post.mime_type):
        text = post.body().decode("utf-8", "replace")
        return "form", parse_qsl(text, keep_blank_values=True)
    boundary = boundary_of(content_type) or boundary_of(post.mime_type)
    if boundary is None:
        return None
    parts = multipart_parts(post.body().decode("utf-8", "surrogateescape"), boundary)
    if parts is None:
        return None
    for part in parts:
        if part.is_file:
            return part.name or "(unnamed)"
    return "multipart", [(part.name, part.content) for part in parts]


def _incomplete(entry: Entry, json_answer: bool) -> str:
    """Why the recording does not hold the whole answer, or ""."""
    status = entry.response.status
    if status == 0 and entry.failed in ("not finished", "net::ERR_ABORTED"):
        return f"no answer was recorded ({entry.failed}): the page moved on first"
    if entry.response.extra.get("_bodyTruncated"):
        return "the answer was larger than the recording keeps"
    empty = not entry.response.content.text
    if json_answer and empty and 200 <= status < 300 and status not in _NO_CONTENT:
        return f"HTTP {status} with an empty body: the page moved on before it was read"
    return ""


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
        path_refused = path_problem(parts.path or "/")
        if path_refused is not None:
            skip(PATH_LEAVES_ORIGIN, path_refused)
            continue
        if _is_static(entry, parts.path):
            skip("static asset", entry.resource_type or parts.path.rsplit(".", 1)[-1])
            continue
        json_answer = is_json_type(content_type)
        incomplete = _incomplete(entry, json_answer)
        if incomplete:
            skip("incomplete response", incomplete)
            continue
        if entry.failed is not None:
            skip("failed request", entry.failed)
            continue
        post = request.post_data
        body: Any = None
        encoding: Encoding | None = None
        form: list[tuple[str, str]] = []
        sent_type = header_value(request.headers, "content-type")
        if post is not None and (post.text or post.params):
            if is_json_type(post.mime_type) or is_json_type(sent_type):
                body = _json(post.body())
                encoding = "json" if body is not None else None
            else:
                fields = _form_fields(post, sent_type)
                if isinstance(fields, str):
                    skip(
                        "file upload",
                        f"multipart field {fields!r} sends a file, which a browser tool "
                        "cannot read from disk: upload it through the page's file input",
                    )
                    continue
                if fields is not None:
                    encoding, form = fields
                    body = _pairs_dict(form)
                elif isinstance(unlabelled := _json(post.body()), dict | list):
                    # fetch sends a string body as text/plain: JSON all the same.
                    body, encoding = unlabelled, "json"
        answer = _json(response.body()) if json_answer else None
        written = method not in ("GET", "HEAD") and response.status in _NO_CONTENT
        if not json_answer and encoding != "json" and not written:
            skip("not JSON", content_type or f"HTTP {response.status}, no content type")
            continue
        redacted = entry.extra.get(REDACTED_FIELD)
        places = entry.extra.get(TOKEN_PLACES_FIELD)
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
                encoding=encoding,
                body_type=(sent_type or post.mime_type if post is not None else "")
                if encoding == "json"
                else "",
                token_places=tuple(p for p in places if isinstance(p, dict))
                if isinstance(places, list)
                else (),
                operation=operation_of(body, method) if encoding == "json" else None,
                form=tuple(form),
            )
        )
    return exchanges, skipped, pages
