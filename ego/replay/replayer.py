"""Serve a tab from a HAR file through CDP's Fetch domain, at the real URLs, with no network.

Every request the tab makes is paused at the Request stage (``Fetch.enable`` with the
pattern ``*``) before DNS or any connection, and answered with ``Fetch.fulfillRequest`` from
the matching HAR entry: the recorded status, headers and body. Because the answer arrives at
the real URL, the page's origin is the real one: ``https://x.com/home`` has origin
``https://x.com``, is a secure context, has its own localStorage, and its recorded
Content-Security-Policy header is enforced.

A request with no entry fails the way a real network failure does (``Fetch.failRequest``,
by default ``InternetDisconnected``: a navigation gets ``net::ERR_INTERNET_DISCONNECTED``,
``fetch()`` rejects with ``TypeError: Failed to fetch``), or goes to the network in
``passthrough`` mode. In ``strict`` mode it also counts as an error that :meth:`Replayer.check`
and :meth:`Replayer.stop` raise as :class:`~ego.errors.UnmatchedRequestError`.

The replayer never leaves a request hanging: if answering one fails for any reason (a broken
entry, a header Chrome refuses), that request is failed instead and the problem logged.
"""

from __future__ import annotations

import asyncio
import fnmatch
import logging
import os
from collections.abc import Collection, Coroutine, Generator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, Literal

from ..errors import (
    BrowserClosedError,
    CommandTimeoutError,
    EgoError,
    ProtocolError,
    TabClosedError,
    TargetCrashedError,
    UnmatchedRequestError,
)
from .answers import failure_reason, fulfill_params, request_body
from .har import Entry, Har
from .matching import Matcher, QueryMode, request_content_type

if TYPE_CHECKING:
    from ..page.tab import Tab
    from ..protocol.session import Session
    from ..protocol.transport import Subscription

__all__ = [
    "DEFAULT_IGNORE",
    "ERROR_REASONS",
    "Outcome",
    "ReplayMode",
    "ReplayedRequest",
    "Replayer",
    "fulfill_params",
    "replay",
]

logger = logging.getLogger("ego.replay")

ReplayMode = Literal["strict", "fail", "passthrough"]
Outcome = Literal["fulfilled", "failed", "unmatched", "passed", "ignored", "error"]

#: Chrome's ``Network.ErrorReason`` values that ``Fetch.failRequest`` accepts.
ERROR_REASONS: Final = frozenset(
    {
        "Failed",
        "Aborted",
        "TimedOut",
        "AccessDenied",
        "ConnectionClosed",
        "ConnectionReset",
        "ConnectionRefused",
        "ConnectionAborted",
        "ConnectionFailed",
        "NameNotResolved",
        "InternetDisconnected",
        "AddressUnreachable",
        "BlockedByClient",
        "BlockedByResponse",
    }
)

#: URLs that an unmatched request may have without counting as an error in strict mode: the
#: browser asks for a favicon on its own, so no page can be blamed for it.
DEFAULT_IGNORE: Final = ("*/favicon.ico",)

# Chrome's answers to an answer that came too late: the request is no longer paused.
_GONE: Final = ("Invalid InterceptionId", "Invalid state", "Fetch domain is not enabled")


@dataclass(frozen=True)
class ReplayedRequest:
    """A request the tab made while the replayer ran, and what it got.

    Attributes:
        method: the request method.
        url: the request URL.
        resource_type: Chrome's resource type (Document, Script, Fetch, XHR, Image, Other...).
        outcome: ``fulfilled`` from an entry; ``failed`` as the entry recorded a failure;
            ``unmatched`` (no entry, failed like a network error); ``passed`` (no entry, sent
            to the network in passthrough mode); ``ignored`` (no entry, but its URL is in
            ``ignore``); ``error`` (answering it failed, so it was failed; see the log).
        status: the status served, when fulfilled.
        entry: the index of the HAR entry that answered, if any.
    """

    method: str
    url: str
    resource_type: str
    outcome: Outcome
    status: int | None = None
    entry: int | None = None

    def __str__(self) -> str:
        return f"{self.method} {self.url} ({self.resource_type})"


class Replayer:
    """Answers a tab's requests from a HAR until stopped.

    Use it as an async context manager, or ``await`` it to start it and call :meth:`stop`::

        async with Replayer(tab, "x-home.har") as replayer:
            await tab.navigate("https://x.com/home")
            ...
        # strict mode: leaving the block raised UnmatchedRequestError if anything was missing

    Start it before navigating: requests made before it starts go to the network.

    Args:
        tab: the tab to serve. Its own CDP session gets ``Fetch.enable``.
        har: a :class:`~ego.replay.har.Har`, or the path of a ``.har`` file.
        mode: ``"strict"`` (default): an unmatched request fails like a network error and is
            reported by :meth:`check` / :meth:`stop`; ``"fail"``: it only fails;
            ``"passthrough"``: it goes to the real network (``Fetch.continueRequest``).
        fail_reason: the network error an unmatched request gets, one of
            :data:`ERROR_REASONS` (``"InternetDisconnected"``, ``"NameNotResolved"``...).
        ignore: URL patterns (``fnmatch`` style, matched against the URL without its query)
            whose unmatched requests are failed quietly even in strict mode.
        query: ``"exact"`` or ``"best"`` query matching (see :mod:`ego.replay.matching`).
        ignore_params: query parameters left out of matching (cache-busters).
        disable_cache: bypass Chrome's HTTP cache while replaying, so that every request
            reaches the replayer (a cached response would skip the HAR).
        timeout: seconds each CDP command of the replayer may take.

    Raises:
        ValueError: an unknown ``mode``, ``fail_reason`` or ``query``.
        HarFormatError: ``har`` is a path and the file is not a usable HAR.
    """

    def __init__(
        self,
        tab: Tab,
        har: Har | str | os.PathLike[str],
        *,
        mode: ReplayMode = "strict",
        fail_reason: str = "InternetDisconnected",
        ignore: Sequence[str] = DEFAULT_IGNORE,
        query: QueryMode = "exact",
        ignore_params: Collection[str] = (),
        disable_cache: bool = True,
        timeout: float = 10.0,
    ) -> None:
        if mode not in ("strict", "fail", "passthrough"):
            raise ValueError(f"mode={mode!r}: use 'strict', 'fail' or 'passthrough'")
        if fail_reason not in ERROR_REASONS:
            raise ValueError(
                f"fail_reason={fail_reason!r}: use one of {', '.join(sorted(ERROR_REASONS))}"
            )
        self.tab = tab
        self.har = har if isinstance(har, Har) else Har.load(har)
        self.mode: ReplayMode = mode
        self.fail_reason = fail_reason
        self.ignore = tuple(ignore)
        self.disable_cache = disable_cache
        self.timeout = timeout
        self._matcher = Matcher(self.har.entries, query=query, ignore_params=ignore_params)
        self._requests: list[ReplayedRequest] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._subscription: Subscription | None = None
        self._session: Session | None = None
        self._running = False

    def __repr__(self) -> str:
        source = self.har.source.name if self.har.source else f"{len(self.har.entries)} entries"
        return f"<Replayer {source} mode={self.mode} {'running' if self._running else 'stopped'}>"

    @property
    def running(self) -> bool:
        """True between :meth:`start` and :meth:`stop`."""
        return self._running

    @property
    def requests(self) -> list[ReplayedRequest]:
        """Every request seen so far, in the order the tab made them."""
        return list(self._requests)

    @property
    def unmatched(self) -> list[ReplayedRequest]:
        """The requests no entry answered (failed, or passed to the network), ignored ones aside."""
        return [r for r in self._requests if r.outcome in ("unmatched", "passed")]

    def __await__(self) -> Generator[Any, None, Replayer]:
        return self.start().__await__()

    async def __aenter__(self) -> Replayer:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        # An error already on its way out says more than a list of unmatched requests.
        await self.stop(check=exc_type is None)

    async def start(self) -> Replayer:
        """Begin answering the tab's requests from the HAR. Idempotent.

        Raises:
            TabClosedError, BrowserClosedError, CommandTimeoutError, ProtocolError: Fetch
                could not be enabled on the tab.
        """
        if self._running:
            return self
        session = await self.tab.attach()
        # Known before the first event can arrive: answers are sent on it.
        self._session = session
        # Subscribe before enabling, so the first paused request cannot slip by.
        subscription = session.subscribe("Fetch.requestPaused", self._on_paused)
        try:
            await self.tab.send(
                "Fetch.enable",
                {"patterns": [{"urlPattern": "*", "requestStage": "Request"}]},
                timeout=self.timeout,
            )
            if self.disable_cache:
                await self.tab.send(
                    "Network.setCacheDisabled", {"cacheDisabled": True}, timeout=self.timeout
                )
        except BaseException:
            subscription.close()
            raise
        self._subscription = subscription
        self._running = True
        return self

    async def stop(self, *, check: bool = True) -> None:
        """Stop answering; later requests go to the network again. Idempotent.

        Waits (up to ``timeout``) for answers already being sent.

        Args:
            check: in strict mode, raise for unmatched requests (see :meth:`check`).

        Raises:
            UnmatchedRequestError: strict mode, ``check`` and some request had no entry.
        """
        if self._running:
            self._running = False
            # Answers already decided go out first; then Chrome stops pausing requests.
            await self.settle()
            commands: list[tuple[str, dict[str, Any] | None]] = [("Fetch.disable", None)]
            if self.disable_cache:
                commands.append(("Network.setCacheDisabled", {"cacheDisabled": False}))
            for method, params in commands:
                try:
                    await self.tab.send(method, params, timeout=self.timeout)
                except (TabClosedError, BrowserClosedError):
                    break  # the tab's interception went with it
                except TargetCrashedError:
                    continue  # a crashed tab takes only Fetch.* and a reload; the rest waits
                except (ProtocolError, CommandTimeoutError) as exc:
                    logger.warning("replay: %s failed while stopping: %s", method, exc)
            await self.settle()
            if self._subscription is not None:
                self._subscription.close()
                self._subscription = None
        if check:
            self.check()

    async def settle(self, timeout: float | None = None) -> None:
        """Wait until every answer being sent has been sent (at most ``timeout`` seconds).

        Answers still pending after that are abandoned; Chrome fails their requests when the
        interception ends.
        """
        tasks = set(self._tasks)
        if not tasks:
            return
        _, pending = await asyncio.wait(tasks, timeout=self.timeout if timeout is None else timeout)
        for task in pending:
            task.cancel()

    def check(self) -> None:
        """Raise if strict mode saw requests the HAR could not answer.

        Raises:
            UnmatchedRequestError: names each unmatched request (method, URL, type).
        """
        if self.mode != "strict":
            return
        missing = [r for r in self._requests if r.outcome == "unmatched"]
        if not missing:
            return
        source = str(self.har.source) if self.har.source else "the HAR"
        listed = "; ".join(str(r) for r in missing[:5])
        more = f" (+{len(missing) - 5} more)" if len(missing) > 5 else ""
        raise UnmatchedRequestError(
            f"strict replay from {source}: {len(missing)} request(s) had no entry and failed "
            f"as a network error: {listed}{more}; record the page again or add the entries",
            requests=[(r.method, r.url) for r in missing],
        )

    # -- answering ---------------------------------------------------------------------------

    def _on_paused(self, params: dict[str, Any]) -> None:
        # Runs in the subscription's task, one event at a time in arrival order: matching
        # happens here, synchronously, so "recorded order" follows the page's request order.
        # Answers are sent from their own tasks so one slow command never delays the others.
        request_id = str(params.get("requestId", ""))
        request = params.get("request") or {}
        method = str(request.get("method", "GET"))
        url = str(request.get("url", ""))
        kind = str(params.get("resourceType", "Other"))
        try:
            body = request_body(request)
            found = self._matcher.match(
                method, url, body, request_content_type(request.get("headers") or {})
            )
        except Exception:
            logger.exception("replay: matching %s %s failed; failing the request", method, url)
            self._record(method, url, kind, "error")
            self._spawn(self._fail(request_id, "Failed"))
            return
        if found is not None:
            index, entry = found
            recorded_error = entry.failed
            if recorded_error is not None:
                self._record(method, url, kind, "failed", entry=index)
                reason = failure_reason(recorded_error)
                self._spawn(self._fail(request_id, reason))
                return
            self._record(method, url, kind, "fulfilled", status=entry.response.status, entry=index)
            self._spawn(self._fulfill(request_id, entry, method, url))
            return
        if self._ignored(url):
            self._record(method, url, kind, "ignored")
            self._spawn(self._fail(request_id, self.fail_reason))
        elif self.mode == "passthrough":
            self._record(method, url, kind, "passed")
            self._spawn(self._continue(request_id))
        else:
            logger.debug("replay: no entry for %s %s", method, url)
            self._record(method, url, kind, "unmatched")
            self._spawn(self._fail(request_id, self.fail_reason))

    def _record(
        self,
        method: str,
        url: str,
        kind: str,
        outcome: Outcome,
        *,
        status: int | None = None,
        entry: int | None = None,
    ) -> None:
        self._requests.append(ReplayedRequest(method, url, kind, outcome, status, entry))

    def _ignored(self, url: str) -> bool:
        bare = url.split("?", 1)[0].split("#", 1)[0]
        return any(fnmatch.fnmatchcase(bare, pattern) for pattern in self.ignore)

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _fulfill(self, request_id: str, entry: Entry, method: str, url: str) -> None:
        try:
            params = fulfill_params(entry)
        except Exception as exc:
            logger.warning(
                "replay: the entry for %s %s is unusable (%s); failing it", method, url, exc
            )
            await self._fail(request_id, "Failed")
            return
        params["requestId"] = request_id
        if not await self._send("Fetch.fulfillRequest", params):
            await self._fail(request_id, "Failed")

    async def _continue(self, request_id: str) -> None:
        if not await self._send("Fetch.continueRequest", {"requestId": request_id}):
            await self._fail(request_id, "Failed")

    async def _fail(self, request_id: str, reason: str) -> None:
        await self._send("Fetch.failRequest", {"requestId": request_id, "errorReason": reason})

    async def _send(self, method: str, params: dict[str, Any]) -> bool:
        """Send an answer; False when it failed in a way that leaves the request paused."""
        if self._session is None:
            return True
        try:
            await self._session.send(method, params, timeout=self.timeout)
        except (TabClosedError, BrowserClosedError):
            return True  # nothing left to answer
        except ProtocolError as exc:
            text = str(exc)
            if any(gone in text for gone in _GONE):
                # The page gave the request up (navigated, aborted), or the replayer stopped
                # meanwhile and Chrome released it: nothing waits for this answer.
                logger.debug("replay: %s for a request that is gone: %s", method, exc)
                return True
            logger.warning("replay: %s failed: %s", method, exc)
            return False
        except (CommandTimeoutError, EgoError) as exc:
            logger.warning("replay: %s failed: %s", method, exc)
            return False
        return True


def replay(
    tab: Tab,
    har: Har | str | os.PathLike[str] | Path,
    *,
    mode: ReplayMode = "strict",
    fail_reason: str = "InternetDisconnected",
    ignore: Sequence[str] = DEFAULT_IGNORE,
    query: QueryMode = "exact",
    ignore_params: Collection[str] = (),
    disable_cache: bool = True,
    timeout: float = 10.0,
) -> Replayer:
    """Serve ``tab`` from ``har``: ``await replay(...)`` starts it, ``async with`` also stops it.

    ``async with replay(tab, "x.har"):`` replays for the block (strict mode raises
    :class:`~ego.errors.UnmatchedRequestError` at its end if the page asked for something the
    HAR lacks); ``replayer = await replay(tab, "x.har")`` starts it and leaves
    :meth:`Replayer.stop` to you. The arguments are those of :class:`Replayer`.

    Raises:
        ValueError: an unknown ``mode``, ``fail_reason`` or ``query``.
        HarFormatError: ``har`` is a path and the file is not a usable HAR.
    """
    return Replayer(
        tab,
        har,
        mode=mode,
        fail_reason=fail_reason,
        ignore=ignore,
        query=query,
        ignore_params=ignore_params,
        disable_cache=disable_cache,
        timeout=timeout,
    )
