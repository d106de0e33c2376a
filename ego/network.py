"""The requests a tab's page made since it loaded, recorded from CDP Network events."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .protocol.transport import Connection, Subscription

__all__ = ["NetworkLog", "Request"]


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

    def as_dict(self) -> dict[str, Any]:
        return {
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
    """Keeps the requests of the tab's current document.

    A new main-frame document (a navigation or reload) starts a new log. Events arrive
    through subscriptions whose handlers run in their own tasks, so :meth:`requests` first
    lets queued events through.
    """

    requests_by_id: dict[str, Request] = field(default_factory=dict)
    main_loader: str | None = None
    _subscriptions: list[Subscription] = field(default_factory=list)

    def attach(self, connection: Connection, session_id: str) -> None:
        """Start listening on ``session_id``. Call before ``Network.enable``.

        One subscription for every method keeps Chrome's order: a response is never handled
        before its request, nor a request before the navigation that started its page.
        """
        handlers = {
            "Network.requestWillBeSent": self._on_request,
            "Network.responseReceived": self._on_response,
            "Network.loadingFailed": self._on_failed,
            "Network.requestServedFromCache": self._on_cached,
            "Page.frameNavigated": self._on_frame_navigated,
        }

        def handle(method: str, params: dict[str, Any]) -> None:
            handlers[method](params)

        self._subscriptions = [
            connection.subscribe_all(list(handlers), handle, session_id=session_id)
        ]

    def close(self) -> None:
        for subscription in self._subscriptions:
            subscription.close()
        self._subscriptions = []

    def _on_frame_navigated(self, params: dict[str, Any]) -> None:
        frame = params.get("frame", {})
        if not frame.get("parentId"):
            self.set_main_loader(frame.get("loaderId", ""))

    def _on_request(self, params: dict[str, Any]) -> None:
        request = params.get("request", {})
        kind = params.get("type", "Other")
        loader = params.get("loaderId", "")
        self.requests_by_id[params["requestId"]] = Request(
            request_id=params["requestId"],
            method=request.get("method", "GET"),
            url=request.get("url", ""),
            type=kind,
            loader_id=loader,
        )

    def _on_response(self, params: dict[str, Any]) -> None:
        entry = self.requests_by_id.get(params.get("requestId", ""))
        if entry is None:
            return
        response = params.get("response", {})
        entry.status = response.get("status")
        entry.mime_type = response.get("mimeType", "")
        entry.from_cache = entry.from_cache or bool(response.get("fromDiskCache"))

    def _on_failed(self, params: dict[str, Any]) -> None:
        entry = self.requests_by_id.get(params.get("requestId", ""))
        if entry is not None:
            entry.failed = params.get("errorText", "failed")

    def _on_cached(self, params: dict[str, Any]) -> None:
        entry = self.requests_by_id.get(params.get("requestId", ""))
        if entry is not None:
            entry.from_cache = True

    def set_main_loader(self, loader_id: str) -> None:
        """The main frame committed a new document; older requests belong to the old page."""
        self.main_loader = loader_id
        self.requests_by_id = {
            key: value for key, value in self.requests_by_id.items() if value.loader_id == loader_id
        }

    async def requests(self) -> list[Request]:
        """The current document's requests in the order they started."""
        for subscription in self._subscriptions:
            await subscription.drain()
        return [
            request
            for request in self.requests_by_id.values()
            if self.main_loader is None or request.loader_id == self.main_loader
        ]
