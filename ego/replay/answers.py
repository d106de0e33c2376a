"""How the replayer answers: a HAR entry as ``Fetch.fulfillRequest`` parameters, a recorded
failure as a ``Fetch.failRequest`` reason, and the body of a paused request for matching.
"""

from __future__ import annotations

import base64
import http
from typing import Any, Final

from .har import Entry, Header

__all__ = ["failure_reason", "fulfill_params", "request_body"]

# Hop-by-hop headers describe one connection, not the resource. Content-Encoding and
# Content-Length describe the bytes on the wire, but a HAR keeps the decoded body: sent
# along, they would make Chrome try to gunzip plain text or cut the body short.
_DROPPED: Final = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-connection",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
        "content-encoding",
        "content-length",
    }
)

# Chrome's HAR error text (``_error``) for a recorded failure, mapped to a failRequest reason.
_RECORDED_ERRORS: Final = {
    "net::ERR_NAME_NOT_RESOLVED": "NameNotResolved",
    "net::ERR_INTERNET_DISCONNECTED": "InternetDisconnected",
    "net::ERR_CONNECTION_REFUSED": "ConnectionRefused",
    "net::ERR_CONNECTION_RESET": "ConnectionReset",
    "net::ERR_CONNECTION_CLOSED": "ConnectionClosed",
    "net::ERR_TIMED_OUT": "TimedOut",
    "net::ERR_ABORTED": "Aborted",
    "net::ERR_BLOCKED_BY_CLIENT": "BlockedByClient",
    "net::ERR_BLOCKED_BY_RESPONSE": "BlockedByResponse",
    "net::ERR_ACCESS_DENIED": "AccessDenied",
}


def fulfill_params(entry: Entry) -> dict[str, Any]:
    """The ``Fetch.fulfillRequest`` parameters (all but ``requestId``) that replay ``entry``.

    Raises:
        HarFormatError: the entry's body is not decodable.
    """
    response = entry.response
    headers = [
        {"name": name, "value": value}
        for header in response.headers
        for name, value in _header_lines(header)
        if not name.startswith(":") and name.lower() not in _DROPPED
    ]
    names = {h["name"].lower() for h in headers}
    if "content-type" not in names and response.content.mime_type:
        headers.append({"name": "Content-Type", "value": response.content.mime_type})
    if 300 <= response.status < 400 and "location" not in names and response.redirect_url:
        headers.append({"name": "Location", "value": response.redirect_url})
    params: dict[str, Any] = {
        "responseCode": response.status,
        "responseHeaders": headers,
        "body": base64.b64encode(response.body()).decode("ascii"),
    }
    phrase = _phrase(response.status, response.status_text)
    if phrase:
        params["responsePhrase"] = phrase
    return params


def _header_lines(header: Header) -> list[tuple[str, str]]:
    # Chrome joins repeated headers (Set-Cookie) with newlines in one value; a newline in a
    # header value is refused by fulfillRequest, so they become separate headers again.
    return [(header.name, line) for line in header.value.split("\n") if line.strip()]


def _phrase(status: int, recorded: str) -> str:
    if recorded and recorded.isascii() and recorded.isprintable():
        return recorded
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return ""


def request_body(request: dict[str, Any]) -> bytes | None:
    entries = request.get("postDataEntries")
    if isinstance(entries, list) and entries:
        chunks = [
            base64.b64decode(e["bytes"]) for e in entries if isinstance(e, dict) and "bytes" in e
        ]
        if chunks:
            return b"".join(chunks)
    text = request.get("postData")
    if isinstance(text, str):
        return text.encode("utf-8")
    return None


def failure_reason(error: str) -> str:
    """The ``Fetch.failRequest`` reason that fails a request the way the HAR recorded
    (``_error: "net::ERR_NAME_NOT_RESOLVED"`` gives ``NameNotResolved``; else ``Failed``)."""
    return _RECORDED_ERRORS.get(error.split(" ")[0], "Failed")
