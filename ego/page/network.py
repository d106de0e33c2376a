"""The requests a tab's page made since it loaded, recorded from CDP Network events.

Besides the list, the log knows which requests are still in flight (for a wait on network
idle) and fetches a finished request's response body from Chrome.

The log is a ring: it keeps the latest :data:`MAX_REQUESTS` requests and drops the oldest
(counting them in :attr:`NetworkLog.dropped`), so a tab reused for many calls without
navigating (a pool's tabs) does not grow without bound.
"""

from __future__ import annotations

import asyncio
import base64
import re
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from ..errors import CommandTimeoutError, ProtocolError

if TYPE_CHECKING:
    from ..protocol.session import Session
    from ..protocol.transport import Subscription

__all__ = ["MAX_REQUESTS", "SAFE_METHODS", "UNREACHABLE", "NetworkLog", "Request", "unreachable"]

#: The most requests a tab's log keeps; past it the oldest is dropped for each new one.
#: Requests dropped from the list still count for a wait on network idle while in flight.
MAX_REQUESTS: Final = 1000

#: How many documents' methods the log remembers (a reload asks for the current one's).
_DOCUMENT_METHODS: Final = 64

#: Methods that a repeat does not change anything by (a reload may send them again).
SAFE_METHODS: Final = frozenset({"GET", "HEAD", "OPTIONS"})

#: Chrome's network errors that mean the server could not be reached at all (nothing about
#: the page or what asked for it): no connection, no name, no network.
UNREACHABLE: Final = frozenset(
    {
        "ERR_ADDRESS_UNREACHABLE",
        "ERR_CONNECTION_ABORTED",
        "ERR_CONNECTION_CLOSED",
        "ERR_CONNECTION_FAILED",
        "ERR_CONNECTION_REFUSED",
        "ERR_CONNECTION_RESET",
        "ERR_CONNECTION_TIMED_OUT",
        "ERR_EMPTY_RESPONSE",
        "ERR_INTERNET_DISCONNECTED",
        "ERR_NAME_NOT_RESOLVED",
        "ERR_NAME_RESOLUTION_FAILED",
        "ERR_NETWORK_CHANGED",
        "ERR_PROXY_CONNECTION_FAILED",
        "ERR_TIMED_OUT",
        "ERR_TUNNEL_CONNECTION_FAILED",
    }
)

_NET_ERROR: Final = re.compile(r"\bnet::(ERR_[A-Z_]+)")


def unreachable(error_text: str) -> str | None:
    """The ``net::ERR_...`` in ``error_text`` when it says the server could not be reached
    (:data:`UNREACHABLE`), else None."""
    found = _NET_ERROR.search(error_text)
    return found.group(0) if found is not None and found.group(1) in UNREACHABLE else None


@dataclass
class Request:
    """One request the page made.

    Attributes:
        method: HTTP method.
        url: the request URL.
        type: Chrome's resource type (Document, Script, Fetch, XHR, Image, ...).
        status: the HTTP status, or None while pending or when it failed.
        mime_type: the response's MIME type, or "".
        failed: Chrome's error text when the request failed (``net::ERR_...``), or "".
        from_cache: served from the memory or disk cache.
        sent_at: when it was sent, in seconds since the epoch (Chrome's clock), or 0.
    """

    request_id: str
    method: str
    url: str
    type: str
    loader_id: str
    status: int | None = None
    mime_type: str = ""
    failed: str = ""
    from_cache: bool = False
    sent_at: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "request_id": self.request_id,
            "method": self.method,
            "url": self.url,
            "type": self.type,
            "status": self.status,
            "mime_type": self.mime_type,
            "failed": self.failed,
            "from_cache": self.from_cache,
        }


@dataclass
class NetworkLog:
    """Keeps the requests of the tab's current document, the latest ``max_requests`` of them.

    A new main-frame document (a navigation or reload) starts a new log. Events arrive
    through subscriptions whose handlers run in their own tasks, so :meth:`requests` first
    lets queued events through.

    Attributes:
        max_requests: how many requests the log keeps (:data:`MAX_REQUESTS`).
        dropped: requests dropped, oldest first, to stay within ``max_requests`` since the
            current document started.
    """

    requests_by_id: OrderedDict[str, Request] = field(default_factory=OrderedDict)
    main_loader: str | None = None
    max_requests: int = MAX_REQUESTS
    dropped: int = 0
    _subscriptions: list[Subscription] = field(default_factory=list)
    #: Requests started and neither finished nor failed, by id, with their loader.
    _in_flight: dict[str, str] = field(default_factory=dict)
    #: The document requests of the page's frames in flight, by id: the frame they load.
    _frame_documents: dict[str, str] = field(default_factory=dict)
    #: Ids whose body Chrome has in full (Network.loadingFinished seen).
    _finished: set[str] = field(default_factory=set)
    #: The method of each document's own request, by its loader (the newest few).
    _document_methods: OrderedDict[str, str] = field(default_factory=OrderedDict)
    #: Set on every start or end of a request, for waiters; replaced once they wake.
    _changed: asyncio.Event = field(default_factory=asyncio.Event)
    _session: Session | None = None

    def attach(self, session: Session) -> None:
        """Start listening on ``session`` (the subscription is the session's: it ends when the
        session does). Call before ``Network.enable``.

        One subscription for every method keeps Chrome's order: a response is never handled
        before its request, nor a request before the navigation that started its page.
        """
        handlers = {
            "Network.requestWillBeSent": self._on_request,
            "Network.responseReceived": self._on_response,
            "Network.loadingFailed": self._on_failed,
            "Network.requestServedFromCache": self._on_cached,
            "Network.loadingFinished": self._on_finished,
            "Page.frameNavigated": self._on_frame_navigated,
            "Target.attachedToTarget": self._on_frame_process,
        }
        for subscription in self._subscriptions:
            subscription.close()
        self._session = session
        self._subscriptions = [session.subscribe_each(handlers)]

    def close(self) -> None:
        for subscription in self._subscriptions:
            subscription.close()
        self._subscriptions = []
        self._in_flight.clear()
        self._changed.set()

    def _touch(self) -> None:
        self._changed.set()

    def _on_frame_navigated(self, params: dict[str, Any]) -> None:
        frame = params.get("frame", {})
        if not frame.get("parentId"):
            self.set_main_loader(frame.get("loaderId", ""))

    def _on_request(self, params: dict[str, Any]) -> None:
        request = params.get("request", {})
        kind = params.get("type", "Other")
        loader = params.get("loaderId", "")
        request_id = params["requestId"]
        if kind == "Document" and loader:
            methods = self._document_methods
            methods[loader] = request.get("method", "GET")
            methods.move_to_end(loader)
            if len(methods) > _DOCUMENT_METHODS:
                methods.popitem(last=False)
        log = self.requests_by_id
        # A redirect reuses the id: the entry is replaced, in its place.
        log[request_id] = Request(
            request_id=request_id,
            method=request.get("method", "GET"),
            url=request.get("url", ""),
            type=kind,
            loader_id=loader,
            sent_at=float(params.get("wallTime") or 0.0),
        )
        if len(log) > self.max_requests:
            oldest, _ = log.popitem(last=False)
            self._finished.discard(oldest)
            self.dropped += 1
        # A redirect is still one load in flight.
        self._in_flight[request_id] = loader
        if kind == "Document" and params.get("frameId"):
            self._frame_documents[request_id] = str(params["frameId"])
        self._finished.discard(request_id)
        self._touch()

    def _on_frame_process(self, params: dict[str, Any]) -> None:
        """A frame of the page moved into a process of its own (a cross-site iframe): its
        document's request goes on in that frame's session, which this log does not hear,
        so it no longer counts as in flight here (else the page never looks idle)."""
        info = params.get("targetInfo", {})
        if info.get("type") != "iframe":
            return
        frame_id = str(info.get("targetId", ""))
        moved = [key for key, frame in self._frame_documents.items() if frame == frame_id]
        for key in moved:
            del self._frame_documents[key]
            self._in_flight.pop(key, None)
        if moved:
            self._touch()

    def _on_response(self, params: dict[str, Any]) -> None:
        entry = self.requests_by_id.get(params.get("requestId", ""))
        if entry is None:
            return
        response = params.get("response", {})
        entry.status = response.get("status")
        entry.mime_type = response.get("mimeType", "")
        entry.from_cache = entry.from_cache or bool(response.get("fromDiskCache"))

    def _on_failed(self, params: dict[str, Any]) -> None:
        request_id = params.get("requestId", "")
        self._frame_documents.pop(request_id, None)
        entry = self.requests_by_id.get(request_id)
        if entry is not None:
            entry.failed = params.get("errorText", "failed")
        if self._in_flight.pop(request_id, None) is not None:
            self._touch()

    def _on_finished(self, params: dict[str, Any]) -> None:
        request_id = params.get("requestId", "")
        self._frame_documents.pop(request_id, None)
        if request_id in self.requests_by_id:
            self._finished.add(request_id)
        if self._in_flight.pop(request_id, None) is not None:
            self._touch()

    def _on_cached(self, params: dict[str, Any]) -> None:
        entry = self.requests_by_id.get(params.get("requestId", ""))
        if entry is not None:
            entry.from_cache = True

    def set_main_loader(self, loader_id: str) -> None:
        """The main frame committed a new document; older requests belong to the old page."""
        self.main_loader = loader_id
        self.requests_by_id = OrderedDict(
            (key, entry)
            for key, entry in self.requests_by_id.items()
            if entry.loader_id == loader_id
        )
        self.dropped = 0
        self._finished &= self.requests_by_id.keys()
        # The old document's loads end with it; Chrome does not always say so for each.
        stale = [key for key, loader in self._in_flight.items() if loader and loader != loader_id]
        for key in stale:
            del self._in_flight[key]
            self._frame_documents.pop(key, None)
        if stale:
            self._touch()

    async def requests(self) -> list[Request]:
        """The current document's requests in the order they started (the latest
        ``max_requests``; :attr:`dropped` counts the older ones left out)."""
        for subscription in self._subscriptions:
            await subscription.drain()
        return [
            request
            for request in self.requests_by_id.values()
            if self.main_loader is None or request.loader_id == self.main_loader
        ]

    async def document_method(self) -> str | None:
        """The HTTP method of the request the current main-frame document came from
        (``"POST"`` for the answer to a form), or None when it is not known."""
        await self._drain()
        return self._document_methods.get(self.main_loader or "")

    async def _drain(self) -> None:
        for subscription in self._subscriptions:
            await subscription.drain()

    async def _changes(self, deadline: float) -> bool:
        """Wait for the next request to start or end, until ``deadline``; False on timeout."""
        self._changed.clear()
        try:
            await asyncio.wait_for(self._changed.wait(), max(0.0, deadline - time.monotonic()))
        except TimeoutError:
            return False
        return True

    async def wait_idle(self, *, quiet: float = 0.5, timeout: float) -> None:
        """Wait until no request has been in flight for ``quiet`` seconds.

        A request that starts and ends inside the window starts it again. Event driven:
        each start or end of a request wakes the wait, nothing polls.

        Raises:
            CommandTimeoutError: the network did not go quiet within ``timeout`` seconds;
                the message names up to three requests still loading.
        """
        deadline = time.monotonic() + timeout
        await self._drain()
        while True:
            if self._in_flight:
                if not await self._changes(deadline):
                    break
                continue
            window_end = time.monotonic() + quiet
            if not await self._changes(min(window_end, deadline)):
                if window_end <= deadline:
                    return
                break
        loading = [
            self.requests_by_id[key].url if key in self.requests_by_id else key
            for key in self._in_flight
        ]
        still = f"; still loading: {', '.join(loading[:3])}" if loading else ""
        raise CommandTimeoutError(
            f"the network did not go idle ({quiet:g} s with no request in flight) within "
            f"{timeout:g} s{still}"
        )

    async def response_body(self, request_id: str, *, timeout: float) -> bytes | str:
        """The response body of the request ``request_id`` (from :meth:`requests`).

        Text comes back as ``str``, a binary body (Chrome sends it base64-encoded) as
        ``bytes``. A request still loading is waited for, up to ``timeout``.

        Raises:
            ProtocolError: Chrome no longer has the body (the page navigated since, the
                body was evicted from its buffer, or the id is unknown), or the request
                failed or was a redirect and has none.
            CommandTimeoutError: the request was still loading after ``timeout`` seconds.
        """
        session = self._session
        if session is None:
            raise ProtocolError(
                "the network log is not attached to a tab", method="Network.getResponseBody"
            )
        deadline = time.monotonic() + timeout
        await self._drain()
        while request_id in self._in_flight:
            if not await self._changes(deadline):
                raise CommandTimeoutError(
                    f"request {self._describe(request_id)} was still loading after "
                    f"{timeout:g} s; its body is not complete yet"
                )
        entry = self.requests_by_id.get(request_id)
        if entry is not None and entry.failed:
            raise ProtocolError(
                f"request {self._describe(request_id)} failed ({entry.failed}): it has no body",
                method="Network.getResponseBody",
            )
        try:
            result = await session.send(
                "Network.getResponseBody",
                {"requestId": request_id},
                timeout=max(0.001, deadline - time.monotonic()),
            )
        except ProtocolError as exc:
            raise ProtocolError(
                f"Chrome no longer has the body of request {self._describe(request_id)} "
                f"({exc}): bodies last until the page navigates (or Chrome's buffer drops "
                "them); read it right after the request, from tab.network()",
                method=exc.method,
                code=exc.code,
            ) from None
        body: str = result.get("body", "")
        if result.get("base64Encoded"):
            return base64.b64decode(body)
        return body

    def _describe(self, request_id: str) -> str:
        entry = self.requests_by_id.get(request_id)
        return f"{request_id} ({entry.method} {entry.url})" if entry else repr(request_id)
