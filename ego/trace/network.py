"""The requests of a traced tab: heard on the tab's own session, put together as a recording
puts them (:class:`ego.replay.capture.Capture`), each taken once it ended.

The tab's session has the Network domain on already; the trace only listens, and reads the
body of each document, fetch and XHR answer (and each request's sent body) as soon as it
finished loading, before the page can lose it (redacted whole, then cut to ``max_body``
bytes). Scripts, styles,
images and fonts keep their status, timing and headers, not their bodies. Requests of a
cross-site frame, which has a session of its own, are not heard.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any, Final

from ..errors import EgoError
from ..replay.capture import Capture, response_body
from ..replay.har import Entry

if TYPE_CHECKING:
    from ..page.tab import Tab
    from ..protocol.session import Session
    from ..protocol.transport import Subscription

__all__ = ["BODY_TYPES", "REDACT_WHOLE", "TabNetwork"]

logger = logging.getLogger("ego.trace")

#: The resource types whose answers' bodies a trace keeps (up to ``max_body``).
BODY_TYPES: Final = frozenset({"Document", "XHR", "Fetch", "EventSource", "Other"})
#: Seconds a body may take to be read.
BODY_SECONDS: Final = 5.0
#: The longest body held to be redacted whole before it is cut to ``max_body`` (a JSON
#: body cut first would no longer parse, and its secret-named fields would stay); a longer
#: one is not kept, and its record says so.
REDACT_WHOLE: Final = 2 * 1024 * 1024


class TabNetwork:
    """What one tab's page requested, each request taken once it ended.

    Args:
        tab: the traced tab.
        max_body: the most of each body kept, in bytes.
    """

    def __init__(self, tab: Tab, max_body: int) -> None:
        self.tab = tab
        self.max_body = max_body
        self.capture = Capture()
        self._taken: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._subscription: Subscription | None = None
        self._session: Session | None = None
        #: Bodies longer than :data:`REDACT_WHOLE`, not kept: how long each was, by id.
        self.dropped: dict[str, int] = {}

    def attach(self, session: Session) -> None:
        """Listen on the tab's session (the subscription ends with it)."""
        self._session = session
        self._subscription = session.subscribe_each(
            {
                "Network.requestWillBeSent": self._on_request,
                "Network.requestWillBeSentExtraInfo": self.capture.add_extra_request,
                "Network.responseReceived": self.capture.add_response,
                "Network.responseReceivedExtraInfo": self.capture.add_extra_response,
                "Network.loadingFinished": self._on_finished,
                "Network.loadingFailed": self.capture.add_failure,
            }
        )

    async def ended(self, *, everything: bool = False) -> list[tuple[Entry, str | None]]:
        """The requests that ended since last asked, in the order they started (one entry
        per hop of a redirect); with ``everything``, also those still loading (marked
        ``not finished``). Each comes with a note when its answer's body was not kept (its
        type's bodies are not, or it was too long to redact: :data:`REDACT_WHOLE`). Bodies
        still being read get :data:`BODY_SECONDS`."""
        if self._subscription is not None:
            await self._subscription.drain()
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=BODY_SECONDS)
        capture = self.capture
        ready = [
            request_id
            for request_id in capture.hops
            if request_id not in self._taken and (everything or capture.ended(request_id))
        ]
        entries: list[tuple[Entry, str | None]] = []
        for request_id in ready:
            self._taken.add(request_id)
            note = self._body_note(request_id)
            entries += [(entry, note) for entry in capture.entries_of(request_id, "1")]
        entries.sort(key=lambda pair: pair[0].started_date_time)
        return entries

    def _body_note(self, request_id: str) -> str | None:
        """Why the answer's body of ``request_id`` is not in the trace, if it is not."""
        if request_id in self.dropped:
            return f"not kept: {self.dropped[request_id]:,} bytes, too long to redact"
        outcome = self.capture.outcomes.get(request_id)
        if outcome is None or outcome.body is not None or outcome.error:
            return None
        kind = outcome.response_type or self.capture.hops[request_id][-1].resource_type
        return None if kind in BODY_TYPES and self.max_body else f"not kept ({kind.lower()})"

    def close(self) -> None:
        """Stop listening; bodies still being read are let go."""
        if self._subscription is not None:
            self._subscription.close()
            self._subscription = None
        for task in self._tasks:
            task.cancel()

    # -- events ----------------------------------------------------------------------------

    def _on_request(self, params: dict[str, Any]) -> None:
        hop = self.capture.add_request(params)
        if hop is not None and hop.request.get("hasPostData") and "postData" not in hop.request:
            self._spawn(self._read_post_data(hop.request_id))

    def _on_finished(self, params: dict[str, Any]) -> None:
        request_id = str(params.get("requestId", ""))
        if request_id not in self.capture.hops:
            return
        outcome = self.capture.outcome(request_id)
        outcome.finished = float(params.get("timestamp", 0.0))
        kind = outcome.response_type or self.capture.hops[request_id][-1].resource_type
        if self.max_body and kind in BODY_TYPES:
            self._spawn(self._read_body(request_id))

    def _spawn(self, coroutine: Any) -> None:
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _send(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self._session is not None
        return await self._session.send(method, params, timeout=BODY_SECONDS)

    async def _read_body(self, request_id: str) -> None:
        try:
            result = await self._send("Network.getResponseBody", {"requestId": request_id})
        except EgoError as exc:
            logger.debug("trace: no body for request %s: %s", request_id, exc)
            return
        data = response_body(result)
        if len(data) > REDACT_WHOLE:
            self.dropped[request_id] = len(data)
            return
        self.capture.outcome(request_id).body = data

    async def _read_post_data(self, request_id: str) -> None:
        with contextlib.suppress(EgoError):
            result = await self._send("Network.getRequestPostData", {"requestId": request_id})
            post = str(result.get("postData", "")).encode("utf-8")
            if len(post) <= REDACT_WHOLE:
                self.capture.outcome(request_id).post_data = post
