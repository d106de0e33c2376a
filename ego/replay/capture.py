"""What a recording heard, filed per request id, and how it becomes HAR entries.

Each CDP Network event kind reaches the recorder through its own subscription task, so a
request's ``loadingFinished`` may arrive before its ``responseReceived``. :class:`Capture`
files every event under its request id as it comes and only puts the entries together in
:meth:`Capture.entries`, so nothing depends on the order in which handlers ran. A request id
that redirects covers several hops; each hop becomes one entry.
"""

from __future__ import annotations

import base64
import fnmatch
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .har import Content, Entry, HarRequest, HarResponse, Header, PostData

__all__ = ["Capture", "Hop", "Outcome", "iso_time", "response_body"]


@dataclass
class Hop:
    """One request on the wire; a request id covers several hops when it redirects."""

    request_id: str
    index: int  # 0 for the first request of the id, then one more per redirect
    order: int  # position among all hops, in the order the page made them
    request: dict[str, Any]
    resource_type: str
    wall_time: float
    timestamp: float
    redirect_response: dict[str, Any] | None = None  # set when the next hop's event came
    redirected_at: float | None = None


@dataclass
class Outcome:
    """How a request id ended, whatever order its events were handled in."""

    response: dict[str, Any] | None = None
    response_type: str | None = None
    finished: float | None = None
    error: str | None = None
    body: bytes | None = None
    truncated: bool = False
    omitted: bool = False  # left out to stay within the recording's bounds
    post_data: bytes | None = None


@dataclass
class Capture:
    """Every event heard so far, by request id.

    Attributes:
        hops: the requests of each id, first hop first.
        outcomes: how each id ended (response, end, error, body).
        extra_requests: ``requestWillBeSentExtraInfo`` of each id, one per hop.
        extra_responses: ``responseReceivedExtraInfo`` of each id, one per hop.
    """

    hops: dict[str, list[Hop]] = field(default_factory=dict)
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    extra_requests: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    extra_responses: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    _order: int = field(default=0, init=False)

    def add_request(self, params: dict[str, Any]) -> Hop | None:
        """File a ``requestWillBeSent``; the new hop, or None for a URL that is not http(s)."""
        request = params.get("request") or {}
        url = str(request.get("url", ""))
        if not url.startswith(("http://", "https://")):
            return None  # data:, blob:, chrome-extension: never go to the network
        request_id = str(params.get("requestId", ""))
        hops = self.hops.setdefault(request_id, [])
        redirect = params.get("redirectResponse")
        if hops and isinstance(redirect, dict):
            # The same id again: the previous hop ended in this redirect. (One subscription
            # delivers these in order, so hops of one id never swap.)
            hops[-1].redirect_response = redirect
            hops[-1].redirected_at = float(params.get("timestamp", hops[-1].timestamp))
        self._order += 1
        hop = Hop(
            request_id=request_id,
            index=len(hops),
            order=self._order,
            request=request,
            resource_type=str(params.get("type", "Other")),
            wall_time=float(params.get("wallTime", time.time())),
            timestamp=float(params.get("timestamp", 0.0)),
        )
        hops.append(hop)
        return hop

    def outcome(self, request_id: str) -> Outcome:
        """The outcome of ``request_id``, made empty on first use."""
        return self.outcomes.setdefault(request_id, Outcome())

    def add_extra_request(self, params: dict[str, Any]) -> None:
        """File a ``requestWillBeSentExtraInfo`` (the headers that went over the wire)."""
        self.extra_requests.setdefault(str(params.get("requestId", "")), []).append(params)

    def add_extra_response(self, params: dict[str, Any]) -> None:
        """File a ``responseReceivedExtraInfo`` (the headers that came over the wire)."""
        self.extra_responses.setdefault(str(params.get("requestId", "")), []).append(params)

    def add_response(self, params: dict[str, Any]) -> None:
        """File a ``responseReceived``."""
        outcome = self.outcome(str(params.get("requestId", "")))
        outcome.response = params.get("response") or {}
        outcome.response_type = str(params.get("type", "")) or None

    def add_failure(self, params: dict[str, Any]) -> None:
        """File a ``loadingFailed`` (a cancelled load as ``net::ERR_ABORTED``)."""
        outcome = self.outcome(str(params.get("requestId", "")))
        outcome.finished = float(params.get("timestamp", 0.0))
        outcome.error = (
            "net::ERR_ABORTED"
            if params.get("canceled")
            else str(params.get("errorText") or "failed")
        )

    def open_ids(self, ignore: Sequence[str]) -> list[str]:
        """The request ids not finished or failed yet, those whose URL matches ``ignore`` aside."""
        found = []
        for request_id, hops in self.hops.items():
            outcome = self.outcomes.get(request_id)
            if outcome is not None and (outcome.finished is not None or outcome.error):
                continue
            url = str(hops[-1].request.get("url", "")).split("?", 1)[0]
            if not any(fnmatch.fnmatchcase(url, pattern) for pattern in ignore):
                found.append(request_id)
        return found

    def entries(self, page_id: str) -> list[Entry]:
        """One entry per hop, in the order the page made the requests."""
        hops = sorted((hop for hops in self.hops.values() for hop in hops), key=lambda h: h.order)
        return [self._entry(hop, page_id) for hop in hops]

    def entries_of(self, request_id: str, page_id: str) -> list[Entry]:
        """The entries of one request id (one per hop: a redirect and what followed), as
        :meth:`entries` makes them: for a reader that takes requests as each one ends."""
        return [self._entry(hop, page_id) for hop in self.hops.get(request_id, [])]

    def ended(self, request_id: str) -> bool:
        """True once ``request_id`` finished or failed."""
        outcome = self.outcomes.get(request_id)
        return outcome is not None and (outcome.finished is not None or bool(outcome.error))

    def _entry(self, hop: Hop, page_id: str) -> Entry:
        last = hop.index == len(self.hops[hop.request_id]) - 1
        outcome = self.outcomes.get(hop.request_id) or Outcome()
        request = hop.request
        # Redirect hops end with the response that redirected; the last hop with the final one.
        response = (outcome.response if last else hop.redirect_response) or {}
        extra_requests = self.extra_requests.get(hop.request_id, [])
        extra_responses = self.extra_responses.get(hop.request_id, [])
        request_extra = extra_requests[hop.index] if hop.index < len(extra_requests) else {}
        response_extra = extra_responses[hop.index] if hop.index < len(extra_responses) else {}
        # ExtraInfo headers are what went over the wire (Cookie included); the plain event's
        # are what the page asked for. The raw ones win when Chrome sent them.
        request_headers = request_extra.get("headers") or request.get("headers") or {}
        response_headers = response_extra.get("headers") or response.get("headers") or {}
        post = _post_data(outcome.post_data if hop.index == 0 else None, request)
        body = (outcome.body or b"") if last else b""
        mime = str(response.get("mimeType", ""))
        content_type = next(
            (str(v) for k, v in response_headers.items() if k.lower() == "content-type"), mime
        )
        har_response = HarResponse(
            status=int(response.get("status", 0)),
            status_text=str(response.get("statusText", "")),
            http_version=_protocol(response),
            headers=_headers(response_headers),
            content=Content.from_body(body, content_type or mime),
            redirect_url=next(
                (str(v) for k, v in response_headers.items() if k.lower() == "location"), ""
            ),
            body_size=len(body),
        )
        if not response:
            har_response.extra["_error"] = (last and outcome.error) or "not finished"
        if last and outcome.truncated:
            har_response.extra["_bodyTruncated"] = True
        if last and outcome.omitted:
            har_response.extra["_bodyOmitted"] = True
        ended = outcome.finished if last else hop.redirected_at
        elapsed = max(0.0, ((ended or hop.timestamp) - hop.timestamp) * 1000)
        return Entry(
            request=HarRequest(
                method=str(request.get("method", "GET")),
                url=str(request.get("url", "")) + str(request.get("urlFragment", "")),
                http_version=_protocol(response),
                headers=_headers(request_headers),
                post_data=post,
                body_size=len(post.body()) if post is not None else 0,
            ),
            response=har_response,
            started_date_time=iso_time(hop.wall_time),
            time=round(elapsed, 3),
            # Only the total is known per hop; HAR wants the phases, so it all counts as wait.
            timings={"send": 0, "wait": round(elapsed, 3), "receive": 0},
            pageref=page_id,
            server_ip_address=str(response["remoteIPAddress"])
            if response.get("remoteIPAddress")
            else None,
            resource_type=((last and outcome.response_type) or hop.resource_type).lower(),
        )


def response_body(result: dict[str, Any]) -> bytes:
    """The bytes of a ``Network.getResponseBody`` answer (base64 decoded when it says so)."""
    body = str(result.get("body", ""))
    return base64.b64decode(body) if result.get("base64Encoded") else body.encode("utf-8")


def iso_time(seconds: float) -> str:
    """A Unix time as HAR writes dates: ISO 8601 in UTC, milliseconds, ``Z``."""
    return (
        datetime.fromtimestamp(seconds, UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


def _headers(raw: Any) -> list[Header]:
    if not isinstance(raw, dict):
        return []
    found = []
    for name, value in raw.items():
        # Chrome joins repeated headers with "\n"; HAR lists each one.
        for line in str(value).split("\n"):
            found.append(Header(str(name), line))
    return found


def _post_data(read: bytes | None, request: dict[str, Any]) -> PostData | None:
    raw = read
    if raw is None:
        entries = request.get("postDataEntries")
        if isinstance(entries, list) and entries:
            raw = b"".join(
                base64.b64decode(e["bytes"])
                for e in entries
                if isinstance(e, dict) and "bytes" in e
            )
        elif isinstance(request.get("postData"), str):
            raw = str(request["postData"]).encode("utf-8")
    if raw is None:
        return None
    headers = request.get("headers") or {}
    mime = next((str(v) for k, v in headers.items() if k.lower() == "content-type"), "")
    return PostData(mime_type=mime, text=raw.decode("utf-8", "surrogateescape"))


def _protocol(response: dict[str, Any] | None) -> str:
    protocol = str((response or {}).get("protocol", "")).lower()
    return {"h2": "HTTP/2", "h3": "HTTP/3", "http/1.0": "HTTP/1.0"}.get(protocol, "HTTP/1.1")
