"""Record what a live tab loads into a HAR 1.2 file, secrets stripped.

The recorder listens to the Network domain (``requestWillBeSent``, ``responseReceived``,
``loadingFinished`` / ``loadingFailed`` and their ``ExtraInfo`` twins, which carry the raw
headers) and reads each body with ``Network.getResponseBody`` as soon as it finished loading,
before the page can evict it. The page's own ``fetch`` and XHR calls are recorded like
everything else until the recording stops.

It works on a CDP session of its own on the tab's target, so its ``Network.enable``,
cache bypass and ``Network.disable`` never touch what the tab's main session (or anything
else using it) has set up.

Each event kind is delivered by its own subscription task, so a request's
``loadingFinished`` may be handled before its ``responseReceived``. The recorder therefore
files every event under its request id as it comes and puts the entries together only when
the HAR is built; nothing depends on the order in which handlers run.

By default the recording keeps no session: see :mod:`ego.replay.secrets`.
"""

from __future__ import annotations

import asyncio
import base64
import fnmatch
import logging
import os
import time
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from ..browser import Browser
from ..errors import BrowserClosedError, EgoError, TabClosedError
from .har import Content, Entry, Har, HarRequest, HarResponse, Header, Page, PostData
from .replayer import DEFAULT_IGNORE, _connection_of
from .secrets import strip_har

if TYPE_CHECKING:
    from ..tab import Tab, WaitUntil
    from ..transport import Connection, Subscription

__all__ = ["Recorder", "record"]

logger = logging.getLogger("ego.replay")


@dataclass
class _Hop:
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
class _Outcome:
    """How a request id ended, whatever order its events were handled in."""

    response: dict[str, Any] | None = None
    response_type: str | None = None
    finished: float | None = None
    error: str | None = None
    body: bytes | None = None
    truncated: bool = False
    post_data: bytes | None = None


class Recorder:
    """Records a tab's traffic into a :class:`~ego.replay.har.Har` while a script acts.

    ::

        async with Recorder(tab, "example.har") as recorder:
            await tab.navigate("https://example.org/")
            await tab.evaluate("document.querySelector('button').click()")
            await recorder.wait_idle()
        # example.har is written; recorder.har holds the same

    Args:
        tab: the tab to record.
        har_path: where :meth:`stop` (and so the end of ``async with``) writes the HAR;
            nothing is written when None (use :attr:`har` or :meth:`save`).
        strip_secrets: drop cookies, ``Cookie``/``Set-Cookie``, ``Authorization`` and headers
            named like tokens (see :mod:`ego.replay.secrets`). Keep the default unless the
            HAR never leaves this machine.
        max_body_size: bodies larger than this many bytes are recorded empty (with
            ``_bodyTruncated``) rather than kept in memory.
        ignore: URL patterns (``fnmatch``, without the query) whose requests do not hold up
            :meth:`wait_idle`: the browser asks for the favicon on its own, and that request
            sometimes never reports its end. They are still recorded when they finish.
        timeout: seconds each CDP command of the recorder may take.
    """

    def __init__(
        self,
        tab: Tab,
        har_path: str | os.PathLike[str] | None = None,
        *,
        strip_secrets: bool = True,
        max_body_size: int = 50 * 1024 * 1024,
        ignore: Sequence[str] = DEFAULT_IGNORE,
        timeout: float = 10.0,
    ) -> None:
        self.tab = tab
        self.har_path = Path(har_path) if har_path is not None else None
        self.ignore = tuple(ignore)
        self.strip_secrets = strip_secrets
        self.max_body_size = max_body_size
        self.timeout = timeout
        self._connection: Connection | None = None
        self._session_id: str | None = None
        self._subscriptions: list[Subscription] = []
        self._hops: dict[str, list[_Hop]] = {}
        self._outcomes: dict[str, _Outcome] = {}
        self._extra_requests: dict[str, list[dict[str, Any]]] = {}
        self._extra_responses: dict[str, list[dict[str, Any]]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._activity = asyncio.Event()
        self._order = 0
        self._running = False
        self._har: Har | None = None
        self._started_at = ""

    @property
    def running(self) -> bool:
        """True between :meth:`start` and :meth:`stop`."""
        return self._running

    @property
    def in_flight(self) -> int:
        """Requests started and not yet finished (body read) or failed, ``ignore``d ones aside."""
        return len(self._open_ids()) + len(self._tasks)

    def _open_ids(self) -> list[str]:
        found = []
        for request_id, hops in self._hops.items():
            outcome = self._outcomes.get(request_id)
            if outcome is not None and (outcome.finished is not None or outcome.error):
                continue
            url = str(hops[-1].request.get("url", "")).split("?", 1)[0]
            if not any(fnmatch.fnmatchcase(url, pattern) for pattern in self.ignore):
                found.append(request_id)
        return found

    def pending(self) -> list[str]:
        """``"METHOD URL"`` of the requests still in flight (started, not finished or failed)."""
        found = []
        for request_id in self._open_ids():
            request = self._hops[request_id][-1].request
            found.append(f"{request.get('method', 'GET')} {request.get('url', '')}")
        return found + [f"(reading the {task.get_name()})" for task in self._tasks]

    @property
    def har(self) -> Har:
        """The recording: final after :meth:`stop`, a snapshot of what finished before that."""
        if self._har is not None:
            return self._har
        return self._build()

    def __await__(self) -> Generator[Any, None, Recorder]:
        return self.start().__await__()

    async def __aenter__(self) -> Recorder:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.stop()

    async def start(self) -> Recorder:
        """Start recording. Idempotent.

        Raises:
            TabClosedError, BrowserClosedError, CommandTimeoutError, ProtocolError: the tab
                could not be attached or its Network domain enabled.
        """
        if self._running:
            return self
        await self.tab.session()  # fails early, with the tab's own message, if it is closed
        connection = _connection_of(self.tab)
        # A session of our own: Network.enable/disable and the cache bypass stay ours.
        attached = await connection.send(
            "Target.attachToTarget",
            {"targetId": self.tab.target_id, "flatten": True},
            timeout=self.timeout,
        )
        session_id = str(attached["sessionId"])
        handlers = {
            "Network.requestWillBeSent": self._on_request,
            "Network.requestWillBeSentExtraInfo": self._on_request_extra,
            "Network.responseReceived": self._on_response,
            "Network.responseReceivedExtraInfo": self._on_response_extra,
            "Network.loadingFinished": self._on_finished,
            "Network.loadingFailed": self._on_failed,
        }
        self._subscriptions = [
            connection.subscribe(method, handler, session_id=session_id)
            for method, handler in handlers.items()
        ]
        self._connection = connection
        self._session_id = session_id
        try:
            await self._send(
                "Network.enable",
                {
                    "maxTotalBufferSize": 256 * 1024 * 1024,
                    "maxResourceBufferSize": 64 * 1024 * 1024,
                },
            )
            # Without this a resource in the memory cache loads with no request at all, and
            # the recording would miss it.
            await self._send("Network.setCacheDisabled", {"cacheDisabled": True})
        except BaseException:
            self._close_subscriptions()
            raise
        self._started_at = _iso(time.time())
        self._running = True
        return self

    async def stop(self) -> Har:
        """Stop recording and return the HAR. Idempotent.

        Bodies still being read get up to ``timeout`` seconds; a request that had not ended is
        written with what was known (with no response at all: status 0 and ``_error: "not
        finished"``). The HAR is saved to ``har_path`` when one was given.

        Raises:
            OSError: ``har_path`` cannot be written.
        """
        if self._har is not None:
            return self._har
        if self._running:
            self._running = False
            if self._tasks:
                _, pending = await asyncio.wait(set(self._tasks), timeout=self.timeout)
                for task in pending:
                    task.cancel()
            try:
                await self._send("Network.disable", None)
            except (TabClosedError, BrowserClosedError):
                pass  # the tab is gone, and its session with it
            except EgoError as exc:
                logger.debug("record: Network.disable failed while stopping: %s", exc)
            self._close_subscriptions()
            # The private session stays attached (idle, nothing enabled) until the tab closes:
            # ego.Browser treats any Target.detachedFromTarget of the tab's target as the tab
            # closing, so detaching it here would mark the tab closed.
        self._har = self._build()
        if self.har_path is not None:
            self._har.save(self.har_path)
        return self._har

    async def wait_idle(self, quiet: float = 0.5, timeout: float = 10.0) -> bool:
        """Wait until no request has been in flight for ``quiet`` seconds.

        Args:
            quiet: seconds of silence that count as idle (a page that fetches after a timer
                needs more).
            timeout: the most this may take.

        Returns:
            True when the network went quiet, False when ``timeout`` came first.
        """
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            self._activity.clear()
            if self.in_flight == 0:
                try:
                    await asyncio.wait_for(self._activity.wait(), min(quiet, remaining))
                except TimeoutError:
                    if self.in_flight == 0:
                        return True
                continue
            try:
                await asyncio.wait_for(self._activity.wait(), remaining)
            except TimeoutError:
                logger.debug("record: still in flight after %g s: %s", timeout, self.pending())
                return False

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write :attr:`har` to ``path`` and return the path."""
        return self.har.save(path)

    # -- events ------------------------------------------------------------------------------

    def _touch(self) -> None:
        self._activity.set()

    def _on_request(self, params: dict[str, Any]) -> None:
        request = params.get("request") or {}
        url = str(request.get("url", ""))
        if not url.startswith(("http://", "https://")):
            return  # data:, blob:, chrome-extension: never go to the network
        request_id = str(params.get("requestId", ""))
        hops = self._hops.setdefault(request_id, [])
        redirect = params.get("redirectResponse")
        if hops and isinstance(redirect, dict):
            # The same id again: the previous hop ended in this redirect. (One subscription
            # delivers these in order, so hops of one id never swap.)
            hops[-1].redirect_response = redirect
            hops[-1].redirected_at = float(params.get("timestamp", hops[-1].timestamp))
        self._order += 1
        hops.append(
            _Hop(
                request_id=request_id,
                index=len(hops),
                order=self._order,
                request=request,
                resource_type=str(params.get("type", "Other")),
                wall_time=float(params.get("wallTime", time.time())),
                timestamp=float(params.get("timestamp", 0.0)),
            )
        )
        if request.get("hasPostData") and "postData" not in request:
            self._spawn(self._read_post_data(request_id), f"post data of {url}")
        self._touch()

    def _outcome(self, params: dict[str, Any]) -> _Outcome:
        return self._outcomes.setdefault(str(params.get("requestId", "")), _Outcome())

    def _on_request_extra(self, params: dict[str, Any]) -> None:
        self._extra_requests.setdefault(str(params.get("requestId", "")), []).append(params)

    def _on_response_extra(self, params: dict[str, Any]) -> None:
        self._extra_responses.setdefault(str(params.get("requestId", "")), []).append(params)

    def _on_response(self, params: dict[str, Any]) -> None:
        outcome = self._outcome(params)
        outcome.response = params.get("response") or {}
        outcome.response_type = str(params.get("type", "")) or None
        self._touch()

    def _on_finished(self, params: dict[str, Any]) -> None:
        outcome = self._outcome(params)
        outcome.finished = float(params.get("timestamp", 0.0))
        size = params.get("encodedDataLength")
        if isinstance(size, int | float) and size > self.max_body_size:
            outcome.truncated = True
        else:
            # Read it now: once the page navigates, Chrome may drop the body.
            request_id = str(params.get("requestId", ""))
            self._spawn(self._read_body(request_id), f"body of request {request_id}")
        self._touch()

    def _on_failed(self, params: dict[str, Any]) -> None:
        outcome = self._outcome(params)
        outcome.finished = float(params.get("timestamp", 0.0))
        outcome.error = (
            "net::ERR_ABORTED"
            if params.get("canceled")
            else str(params.get("errorText") or "failed")
        )
        self._touch()

    def _spawn(self, coroutine: Any, name: str) -> None:
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(coroutine, name=name)
        self._tasks.add(task)

        def done(finished: asyncio.Task[None]) -> None:
            """Forget the task and wake wait_idle, which counts it as in flight."""
            self._tasks.discard(finished)
            self._touch()

        task.add_done_callback(done)

    async def _send(self, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
        assert self._connection is not None
        return await self._connection.send(
            method, params, session_id=self._session_id, timeout=self.timeout
        )

    async def _read_body(self, request_id: str) -> None:
        try:
            result = await self._send("Network.getResponseBody", {"requestId": request_id})
        except EgoError as exc:
            # Redirects, 204s and some cached or aborted loads have no body to give.
            logger.debug("record: no body for request %s: %s", request_id, exc)
            return
        body = str(result.get("body", ""))
        data = base64.b64decode(body) if result.get("base64Encoded") else body.encode("utf-8")
        self._outcomes.setdefault(request_id, _Outcome()).body = data

    async def _read_post_data(self, request_id: str) -> None:
        try:
            result = await self._send("Network.getRequestPostData", {"requestId": request_id})
        except EgoError as exc:
            logger.debug("record: no post data for request %s: %s", request_id, exc)
            return
        post = str(result.get("postData", "")).encode("utf-8")
        self._outcomes.setdefault(request_id, _Outcome()).post_data = post

    def _close_subscriptions(self) -> None:
        for subscription in self._subscriptions:
            subscription.close()
        self._subscriptions = []

    # -- building the HAR --------------------------------------------------------------------

    def _build(self) -> Har:
        page_id = "page_1"
        har = Har(
            pages=[Page(id=page_id, title=self.tab.url, started_date_time=self._started_at)],
            comment="recorded by ego" + (" (secrets stripped)" if self.strip_secrets else ""),
        )
        hops = sorted((hop for hops in self._hops.values() for hop in hops), key=lambda h: h.order)
        for hop in hops:
            har.entries.append(self._entry(hop, page_id))
        if self.strip_secrets:
            strip_har(har)
        return har

    def _entry(self, hop: _Hop, page_id: str) -> Entry:
        last = hop.index == len(self._hops[hop.request_id]) - 1
        outcome = self._outcomes.get(hop.request_id) or _Outcome()
        request = hop.request
        # Redirect hops end with the response that redirected; the last hop with the final one.
        response = (outcome.response if last else hop.redirect_response) or {}
        extra_requests = self._extra_requests.get(hop.request_id, [])
        extra_responses = self._extra_responses.get(hop.request_id, [])
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
            started_date_time=_iso(hop.wall_time),
            time=round(elapsed, 3),
            # Only the total is known per hop; HAR wants the phases, so it all counts as wait.
            timings={"send": 0, "wait": round(elapsed, 3), "receive": 0},
            pageref=page_id,
            server_ip_address=str(response["remoteIPAddress"])
            if response.get("remoteIPAddress")
            else None,
            resource_type=((last and outcome.response_type) or hop.resource_type).lower(),
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


def _iso(seconds: float) -> str:
    return (
        datetime.fromtimestamp(seconds, UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


async def record(
    target: Tab | Browser,
    url: str,
    har_path: str | os.PathLike[str] | None = None,
    *,
    strip_secrets: bool = True,
    wait_until: WaitUntil = "load",
    settle: float = 1.0,
    timeout: float = 30.0,
) -> Har:
    """Load ``url`` in a live tab, record everything it loads, and write a HAR.

    The page is loaded, then given time to finish what it does after load (in-page
    ``fetch``/XHR): the recording stops once no request has been in flight for ``settle``
    seconds, or when ``timeout`` runs out, whichever comes first.

    Args:
        target: a tab to record in, or a browser (a new tab is opened and closed again).
        url: the page to load.
        har_path: where to write the HAR; nothing is written when None.
        strip_secrets: remove cookies and credential headers (see :mod:`ego.replay.secrets`).
        wait_until: the navigation's lifecycle point (as :meth:`ego.Tab.navigate`).
        settle: seconds of network silence after that which end the recording.
        timeout: seconds for the navigation, and again at most for settling.

    Returns:
        The recorded HAR (also written to ``har_path`` when given).

    Raises:
        NavigationError: the page did not load (the HAR is not written).
        OSError: ``har_path`` cannot be written.
        CommandTimeoutError: the page did not reach ``wait_until`` in time.
        TabClosedError, BrowserClosedError: the tab or browser went away.
    """
    own_tab = isinstance(target, Browser)
    tab = await target.new_tab() if isinstance(target, Browser) else target
    try:
        recorder = Recorder(tab, strip_secrets=strip_secrets)
        async with recorder:
            await tab.navigate(url, wait_until=wait_until, timeout=timeout)
            await recorder.wait_idle(quiet=settle, timeout=timeout)
        har = recorder.har
        # Written only after a successful load: a failed navigation leaves no half HAR.
        if har_path is not None:
            har.save(har_path)
        return har
    finally:
        if own_tab:
            await tab.close()
