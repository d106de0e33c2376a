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
``loadingFinished`` may be handled before its ``responseReceived``: the events are filed
per request id in a :class:`~ego.replay.capture.Capture` and put together only when the HAR
is built, so nothing depends on the order in which handlers run.

By default the recording keeps no session: see :mod:`ego.replay.secrets`. Where the page
keeps each token it sends in a header is looked up in the page while recording, and named in
the entry (:mod:`ego.replay.token_places`), never the token.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Generator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from ..errors import BrowserClosedError, EgoError, TabClosedError
from ..page.browser import Browser
from .capture import Capture, Outcome, iso_time, response_body
from .har import Har, Page
from .har_bounds import HarBounds
from .replayer import DEFAULT_IGNORE
from .secrets import strip_har
from .token_places import TokenPlaces

if TYPE_CHECKING:
    from ..page.tab import Tab, WaitUntil
    from ..protocol.session import Session
    from ..protocol.transport import Subscription

__all__ = ["OMITTED_FIELD", "Omitted", "Recorder", "record"]

logger = logging.getLogger("ego.replay")

#: The ``log`` field of a recording that went over its bounds: what was left out.
OMITTED_FIELD = "_omitted"
#: What an entry adds to a HAR file besides its bodies (headers, timings, the JSON around).
_ENTRY_OVERHEAD = 1024


@dataclass(frozen=True)
class Omitted:
    """What a recording left out to stay within its bounds.

    Attributes:
        entries: requests not recorded at all (past ``max_entries``).
        bodies: response or request bodies not kept (past ``max_bytes``); their entries are.
        bytes: the size of the bodies not kept.
    """

    entries: int = 0
    bodies: int = 0
    bytes: int = 0

    def __bool__(self) -> bool:
        return bool(self.entries or self.bodies)

    @classmethod
    def of(cls, har: Har) -> Omitted:
        """What ``har`` says its recording left out (``log._omitted``)."""
        found = har.extra.get(OMITTED_FIELD)
        if not isinstance(found, dict):
            return cls()
        return cls(*(int(found.get(key, 0)) for key in ("entries", "bodies", "bytes")))

    def as_dict(self) -> dict[str, int]:
        """JSON-ready form."""
        return {"entries": self.entries, "bodies": self.bodies, "bytes": self.bytes}

    def describe(self, bounds: HarBounds) -> str:
        """One line: what was left out, and the bounds that left it out."""
        parts = []
        if self.entries:
            parts.append(f"{self.entries:,} request(s) past {bounds.max_entries:,} entries")
        if self.bodies:
            parts.append(
                f"{self.bodies:,} bod{'y' if self.bodies == 1 else 'ies'} ({self.bytes:,} "
                f"bytes) past {bounds.max_bytes:,} bytes"
            )
        return "left out to stay within the recording's bounds: " + "; ".join(parts)


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
            named like tokens, and redact secret-named values in URLs and bodies (see
            :mod:`ego.replay.secrets`). Keep the default unless the HAR never leaves this
            machine.
        max_body_size: bodies larger than this many bytes are recorded empty (with
            ``_bodyTruncated``) rather than kept in memory.
        bounds: the most the recording keeps (``HarBounds(max_entries=50_000,
            max_bytes=256 MiB)`` by default, what :meth:`Har.load` reads back): requests past
            ``max_entries`` are not recorded, and bodies that would take the recording past
            ``max_bytes`` (as written, estimated) are left out (``_bodyOmitted``). What was
            left out is in :attr:`omitted`, in the HAR (``log._omitted`` and its comment) and
            logged once as a warning on the ``ego.replay`` logger.
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
        bounds: HarBounds | None = None,
        ignore: Sequence[str] = DEFAULT_IGNORE,
        timeout: float = 10.0,
    ) -> None:
        self.tab = tab
        self.bounds = bounds or HarBounds()
        self._omitted = Omitted()
        self._left_out: set[str] = set()  # request ids not recorded (past max_entries)
        self._kept = 0  # the recording's size as written, estimated
        self._hops = 0  # entries recorded so far
        self.har_path = Path(har_path) if har_path is not None else None
        self.ignore = tuple(ignore)
        self.strip_secrets = strip_secrets
        self.max_body_size = max_body_size
        self.timeout = timeout
        self._session: Session | None = None
        self._subscriptions: list[Subscription] = []
        self._capture = Capture()
        self._token_places = TokenPlaces()
        self._tasks: set[asyncio.Task[None]] = set()
        self._activity = asyncio.Event()
        # When each answered request last showed life (its response, a chunk of its body):
        # Chrome sends no loadingFinished for a body the page never reads, so such a request
        # would hold wait_idle until its timeout.
        self._answered: dict[str, float] = {}
        self._running = False
        self._har: Har | None = None
        self._started_at = ""

    @property
    def running(self) -> bool:
        """True between :meth:`start` and :meth:`stop`."""
        return self._running

    @property
    def omitted(self) -> Omitted:
        """What was left out so far to stay within :attr:`bounds` (false when nothing)."""
        return self._omitted

    @property
    def in_flight(self) -> int:
        """Requests started and not yet finished (body read) or failed, ``ignore``d ones aside."""
        return len(self._capture.open_ids(self.ignore)) + len(self._tasks)

    def pending(self) -> list[str]:
        """``"METHOD URL"`` of the requests still in flight (started, not finished or failed)."""
        found = []
        for request_id in self._capture.open_ids(self.ignore):
            request = self._capture.hops[request_id][-1].request
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
        await self.tab.attach()  # fails early, with the tab's own message, if it is closed
        connection = self.tab.connection
        # A session of our own: Network.enable/disable and the cache bypass stay ours.
        attached = await connection.send(
            "Target.attachToTarget",
            {"targetId": self.tab.target_id, "flatten": True},
            timeout=self.timeout,
        )
        session = connection.session(str(attached["sessionId"]))
        handlers = {
            "Network.requestWillBeSent": self._on_request,
            "Network.requestWillBeSentExtraInfo": self._on_request_extra,
            "Network.responseReceived": self._on_response,
            "Network.responseReceivedExtraInfo": self._on_response_extra,
            "Network.dataReceived": self._on_data,
            "Network.loadingFinished": self._on_finished,
            "Network.loadingFailed": self._on_failed,
        }
        self._subscriptions = [
            session.subscribe(method, handler) for method, handler in handlers.items()
        ]
        self._session = session
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
        self._started_at = iso_time(time.time())
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

        A request whose answer came and then showed no life for ``quiet`` seconds does not
        count: Chrome never ends the load of a body the page leaves unread (a ``fetch`` whose
        response nobody reads), and its entry is recorded all the same.

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
                logger.debug("record: still in flight after %g s: %s", timeout, self.pending())
                return False
            self._activity.clear()
            busy, settles_in = self._busy(quiet)
            if not busy:
                try:
                    await asyncio.wait_for(self._activity.wait(), min(quiet, remaining))
                except TimeoutError:
                    if not self._busy(quiet)[0]:
                        return True
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._activity.wait(), min(settles_in, remaining))

    def _busy(self, quiet: float) -> tuple[int, float]:
        """How many requests hold the network busy (answered ones quiet for ``quiet``
        seconds aside), and in how many seconds the next answered one goes quiet (infinity:
        none will by itself)."""
        now = time.monotonic()
        busy = len(self._tasks)
        settles_in = float("inf")
        for request_id in self._capture.open_ids(self.ignore):
            answered = self._answered.get(request_id)
            if answered is None:
                busy += 1
            elif now - answered < quiet:
                busy += 1
                settles_in = min(settles_in, quiet - (now - answered))
        return busy, settles_in

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write :attr:`har` to ``path`` and return the path."""
        return self.har.save(path)

    # -- events ------------------------------------------------------------------------------

    def _touch(self) -> None:
        self._activity.set()

    def _on_request(self, params: dict[str, Any]) -> None:
        request_id = str(params.get("requestId", ""))
        if request_id in self._left_out or (
            request_id not in self._capture.hops and self._hops >= self.bounds.max_entries
        ):
            self._left_out.add(request_id)
            if not isinstance(params.get("redirectResponse"), dict):
                self._leave_out(entries=1)
            return
        hop = self._capture.add_request(params)
        if hop is None:
            return
        self._hops += 1
        url = str(hop.request.get("url", ""))
        self._kept += _ENTRY_OVERHEAD + len(url) + len(str(hop.request.get("postData", "")))
        if hop.request.get("hasPostData") and "postData" not in hop.request:
            url = hop.request.get("url", "")
            self._spawn(self._read_post_data(hop.request_id), f"post data of {url}")
        tokens = self._token_places.wanted(hop.request.get("headers"))
        if tokens:
            # Where the page keeps them: asked now, while the page that sent them is there.
            self._spawn(self._token_places.look_up(self._send, tokens), "places of its tokens")
        self._touch()

    def _outcome(self, params: dict[str, Any]) -> Outcome:
        return self._capture.outcome(str(params.get("requestId", "")))

    def _on_request_extra(self, params: dict[str, Any]) -> None:
        self._capture.add_extra_request(params)

    def _on_response_extra(self, params: dict[str, Any]) -> None:
        self._capture.add_extra_response(params)

    def _on_response(self, params: dict[str, Any]) -> None:
        self._capture.add_response(params)
        self._answered[str(params.get("requestId", ""))] = time.monotonic()
        self._touch()

    def _on_data(self, params: dict[str, Any]) -> None:
        request_id = str(params.get("requestId", ""))
        if request_id in self._answered:
            self._answered[request_id] = time.monotonic()
            self._touch()

    def _on_finished(self, params: dict[str, Any]) -> None:
        if str(params.get("requestId", "")) in self._left_out:
            return
        outcome = self._outcome(params)
        outcome.finished = float(params.get("timestamp", 0.0))
        size = params.get("encodedDataLength")
        if isinstance(size, int | float) and size > self.max_body_size:
            outcome.truncated = True
        elif isinstance(size, int | float) and self._kept + size > self.bounds.max_bytes:
            outcome.omitted = True  # not even read: it cannot fit
            self._leave_out(bodies=1, size=int(size))
        else:
            # Read it now: once the page navigates, Chrome may drop the body.
            request_id = str(params.get("requestId", ""))
            self._spawn(self._read_body(request_id), f"body of request {request_id}")
        self._touch()

    def _on_failed(self, params: dict[str, Any]) -> None:
        self._capture.add_failure(params)
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
        assert self._session is not None
        return await self._session.send(method, params, timeout=self.timeout)

    async def _read_body(self, request_id: str) -> None:
        try:
            result = await self._send("Network.getResponseBody", {"requestId": request_id})
        except EgoError as exc:
            # Redirects, 204s and some cached or aborted loads have no body to give.
            logger.debug("record: no body for request %s: %s", request_id, exc)
            return
        data = response_body(result)
        outcome = self._capture.outcome(request_id)
        # About as written: a binary body as the base64 Chrome gave, text as its bytes.
        cost = len(str(result.get("body", ""))) if result.get("base64Encoded") else len(data)
        if self._kept + cost > self.bounds.max_bytes:
            outcome.omitted = True
            self._leave_out(bodies=1, size=len(data))
            return
        self._kept += cost
        outcome.body = data

    async def _read_post_data(self, request_id: str) -> None:
        try:
            result = await self._send("Network.getRequestPostData", {"requestId": request_id})
        except EgoError as exc:
            logger.debug("record: no post data for request %s: %s", request_id, exc)
            return
        post = str(result.get("postData", "")).encode("utf-8")
        self._kept += len(post)
        self._capture.outcome(request_id).post_data = post

    def _leave_out(self, *, entries: int = 0, bodies: int = 0, size: int = 0) -> None:
        if not self._omitted:
            logger.warning(
                "record: the recording reached its bounds (%s entries, %s bytes); what goes "
                "over them is left out and counted in the HAR's log._omitted",
                f"{self.bounds.max_entries:,}",
                f"{self.bounds.max_bytes:,}",
            )
        old = self._omitted
        self._omitted = replace(
            old, entries=old.entries + entries, bodies=old.bodies + bodies, bytes=old.bytes + size
        )

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
        har.entries.extend(self._capture.entries(page_id))
        for entry in har.entries:
            self._token_places.annotate(entry)
        if self.strip_secrets:
            strip_har(har)
        if self._omitted:
            har.comment = f"{har.comment}; {self._omitted.describe(self.bounds)}"
            har.extra[OMITTED_FIELD] = {
                **self._omitted.as_dict(),
                "maxEntries": self.bounds.max_entries,
                "maxBytes": self.bounds.max_bytes,
            }
        return har


async def record(
    target: Tab | Browser,
    url: str,
    har_path: str | os.PathLike[str] | None = None,
    *,
    strip_secrets: bool = True,
    wait_until: WaitUntil = "load",
    settle: float = 1.0,
    timeout: float = 30.0,
    bounds: HarBounds | None = None,
) -> Har:
    """Load ``url`` in a live tab, record everything it loads, and write a HAR.

    The page is loaded, then given time to finish what it does after load (in-page
    ``fetch``/XHR): the recording stops once no request has been in flight for ``settle``
    seconds, or when ``timeout`` runs out, whichever comes first.

    Args:
        target: a tab to record in, or a browser (a new tab is opened and closed again).
        url: the page to load.
        har_path: where to write the HAR; nothing is written when None.
        strip_secrets: remove cookies and credential headers and redact secret values in
            URLs and bodies (see :mod:`ego.replay.secrets`).
        wait_until: the navigation's lifecycle point (as :meth:`ego.Tab.navigate`).
        settle: seconds of network silence after that which end the recording.
        timeout: seconds for the navigation, and again at most for settling.
        bounds: the most the recording keeps (see :class:`Recorder`).

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
        recorder = Recorder(tab, strip_secrets=strip_secrets, bounds=bounds)
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
