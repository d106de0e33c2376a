"""A pool of browsers: many tool calls at once over local Chromes or a browserless fleet.

``ego.pool(...)`` gives a :class:`BrowserPool`. Each of its browsers is launched locally or
attached to an endpoint (a browserless host gives every websocket connection its own Chrome,
so one endpoint may hold several pool browsers). Calls are spread over the browsers, one tab
per concurrent slot on each, and tabs are reused from call to call.

When a browser dies, the pool replaces it (relaunches or reconnects) and retries the calls it
was running on another browser, bounded by ``retries``, as far as the tool's side effect
allows: ``read`` tools are retried; ``write`` and ``irreversible`` tools that were already
sent are not, they fail with :class:`~ego.errors.NotRetriedError` (the tool may or may not
have run, and only the caller can check).

Example::

    async with ego.pool(launch=2) as pool:
        pool.set_start_url("demo-shop", server.url)
        async for item in pool.map("demo-shop", "get_product", [{"id": i} for i in ids]):
            print(item.index, item.result if item.ok else item.error)
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import time
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    AsyncIterator,
    Awaitable,
    Callable,
    Generator,
    Iterable,
    Mapping,
    Sequence,
)
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from .browser import Browser
from .errors import (
    BrowserClosedError,
    ConfirmationRequiredError,
    ContextDestroyedError,
    NoTabError,
    NotRetriedError,
    PoolExhaustedError,
    TabClosedError,
)
from .learning.manifest import Manifest, ToolSpec
from .learning.matching import match_domain
from .learning.registry import Learnings
from .site import Site
from .tab import Tab

__all__ = [
    "BrowserPool",
    "Endpoint",
    "MemberInfo",
    "PoolMap",
    "PoolResult",
    "PoolStats",
    "pool",
]

logger = logging.getLogger("ego.pool")

MemberState = Literal["starting", "ready", "replacing", "failed", "closed"]

# Seconds to wait between attempts to replace a dead browser: a fleet host that restarts
# needs a moment, a local Chrome does not (the first attempt is immediate).
_REPLACE_BACKOFF = (0.0, 0.5, 2.0, 5.0)
_TAB_CLOSE_TIMEOUT = 5.0


@dataclass(frozen=True)
class Endpoint:
    """A CDP endpoint for pool browsers to attach to.

    Attributes:
        url: ``ws://`` / ``wss://`` (a browserless URL with ``?token=...``) or ``http://``.
        headers: extra handshake headers (auth for a fleet behind a proxy); the pool's
            ``headers`` when None.
        browsers: how many pool browsers attach here; each is its own websocket (and on
            browserless its own Chrome).
    """

    url: str
    headers: Mapping[str, str] | None = None
    browsers: int = 1


@dataclass
class PoolStats:
    """Counters over the pool's life.

    Attributes:
        calls: calls finished (either way).
        succeeded: calls that returned a result.
        failed: calls that raised.
        retried: attempts repeated because a browser or tab died under a read call.
        not_retried: write/irreversible calls cut short and reported, not repeated.
        replaced: dead browsers replaced by a new one.
    """

    calls: int = 0
    succeeded: int = 0
    failed: int = 0
    retried: int = 0
    not_retried: int = 0
    replaced: int = 0


@dataclass(frozen=True)
class MemberInfo:
    """A snapshot of one pool browser, for monitoring and tests.

    Attributes:
        index: its position in the pool.
        source: ``"launch"`` or the endpoint URL (token hidden).
        state: ``starting``, ``ready``, ``replacing``, ``failed`` (gave up) or ``closed``.
        generation: 1 for the first browser, +1 for every replacement.
        in_flight: calls running on it now.
        calls: calls finished on it (over all generations).
        pid: the Chrome process when ego launched it, else None.
        browser: the live :class:`~ego.browser.Browser`, or None while it is being replaced.
        last_error: why the last start or replacement attempt failed, or ``""``.
    """

    index: int
    source: str
    state: MemberState
    generation: int
    in_flight: int
    calls: int
    pid: int | None
    browser: Browser | None
    last_error: str


@dataclass(frozen=True)
class PoolResult:
    """The outcome of one input of :meth:`BrowserPool.map`; errors are captured, not raised.

    Attributes:
        index: the input's position (0-based).
        args: the input as given.
        ok: True when the tool returned.
        result: what the tool returned (None when not ok).
        error: the exception when not ok.
        ms: wall time of the call in milliseconds, retries included.
        attempts: 1, or more when the call was retried after a browser died.
        browser: the index of the pool browser that ran the last attempt (-1 if none did).
    """

    index: int
    args: Any
    ok: bool
    result: Any = None
    error: BaseException | None = None
    ms: float = 0.0
    attempts: int = 0
    browser: int = -1


@dataclass
class _Member:
    index: int
    source: str
    factory: Callable[[], Awaitable[Browser]]
    capacity: int
    state: MemberState = "starting"
    browser: Browser | None = None
    site: Site | None = None
    generation: int = 0
    in_flight: int = 0
    calls: int = 0
    free_tabs: list[Tab] = field(default_factory=list)
    last_error: BaseException | None = None
    task: asyncio.Task[None] | None = None


class _Lease:
    __slots__ = ("discard", "generation", "member", "tab")

    def __init__(self, member: _Member, generation: int) -> None:
        self.member = member
        self.generation = generation
        self.tab: Tab | None = None
        # Set when the call ended in a way that leaves the tab in an unknown state (cancelled,
        # or failed while being navigated): the tab is closed instead of being reused.
        self.discard = False


def pool(
    *,
    launch: int = 0,
    endpoints: Sequence[str | Endpoint] = (),
    headers: Mapping[str, str] | None = None,
    browsers_per_endpoint: int = 1,
    per_browser: int = 4,
    concurrency: int | None = None,
    retries: int = 2,
    replace_attempts: int = 3,
    profiles: Sequence[str] | None = None,
    headless: bool = True,
    executable: str | None = None,
    args: Sequence[str] = (),
    launch_timeout: float = 30.0,
    connect_timeout: float = 10.0,
    default_timeout: float = 30.0,
    workspace: str | os.PathLike[str] | None = None,
    learnings: Learnings | None = None,
) -> BrowserPool:
    """A pool of browsers; use it with ``async with`` (browsers start on entry).

    Args:
        launch: how many local Chromes to start (headless by default, each with a throwaway
            profile unless ``profiles`` names one per Chrome).
        endpoints: endpoints to attach to: URLs or :class:`Endpoint` (with its own headers
            and browser count). Local and attached browsers may be mixed.
        headers: handshake headers for every endpoint without its own.
        browsers_per_endpoint: browsers per endpoint given as a plain URL.
        per_browser: calls in flight on one browser at most; each gets its own tab.
        concurrency: calls in flight over the whole pool at most (default: every browser's
            ``per_browser`` added up).
        retries: how many times a read call is repeated after the browser or tab under it
            died (0 = never).
        replace_attempts: attempts to replace a dead browser before it is given up.
        profiles: persistent profile names, one per launched Chrome (their sessions and
            logins are used); the default is a throwaway profile each.
        headless, executable, args: as for :func:`ego.launch`, for every launched Chrome.
        launch_timeout: seconds a Chrome may take to start.
        connect_timeout: seconds an endpoint may take to accept a connection.
        default_timeout: seconds a CDP command may take unless a call says otherwise.
        workspace, learnings: where sites are found, as for :func:`ego.launch`; every browser
            shares the same :class:`~ego.learning.Learnings`.

    Raises:
        ValueError: no browser asked for, a count below 1, or ``profiles`` not matching
            ``launch``.
    """
    if learnings is None:
        learnings = Learnings(workspace=workspace) if workspace is not None else Learnings()
    if launch < 0 or browsers_per_endpoint < 1 or per_browser < 1 or retries < 0:
        raise ValueError("launch, retries must be >= 0; browsers_per_endpoint, per_browser >= 1")
    if replace_attempts < 0:
        raise ValueError("replace_attempts must be >= 0")
    if profiles is not None and len(profiles) != launch:
        raise ValueError(f"profiles names {len(profiles)} profiles for launch={launch} Chromes")
    specs: list[tuple[str, Callable[[], Awaitable[Browser]]]] = []
    for number in range(launch):
        profile = profiles[number] if profiles is not None else None
        specs.append(
            (
                "launch",
                _launcher(
                    profile=profile,
                    headless=headless,
                    executable=executable,
                    args=tuple(args),
                    timeout=launch_timeout,
                    default_timeout=default_timeout,
                ),
            )
        )
    for item in endpoints:
        endpoint = (
            item if isinstance(item, Endpoint) else Endpoint(item, None, browsers_per_endpoint)
        )
        if endpoint.browsers < 1:
            raise ValueError(f"Endpoint({redact_url(endpoint.url)!r}).browsers must be >= 1")
        endpoint_headers = endpoint.headers if endpoint.headers is not None else headers
        for _ in range(endpoint.browsers):
            specs.append(
                (
                    redact_url(endpoint.url),
                    _connector(
                        endpoint.url,
                        headers=endpoint_headers,
                        timeout=connect_timeout,
                        default_timeout=default_timeout,
                    ),
                )
            )
    if not specs:
        raise ValueError("a pool needs browsers: pass launch=N or endpoints=[...]")
    if concurrency is not None and concurrency < 1:
        raise ValueError("concurrency must be >= 1")
    return BrowserPool(
        specs,
        learnings=learnings,
        per_browser=per_browser,
        concurrency=concurrency,
        retries=retries,
        replace_attempts=replace_attempts,
    )


def _launcher(
    *,
    profile: str | None,
    headless: bool,
    executable: str | None,
    args: tuple[str, ...],
    timeout: float,
    default_timeout: float,
) -> Callable[[], Awaitable[Browser]]:
    async def start() -> Browser:
        return await Browser.launch(
            profile=profile,
            headless=headless,
            executable=executable,
            args=args,
            timeout=timeout,
            default_timeout=default_timeout,
        )

    return start


def _connector(
    url: str, *, headers: Mapping[str, str] | None, timeout: float, default_timeout: float
) -> Callable[[], Awaitable[Browser]]:
    async def start() -> Browser:
        return await Browser.connect(
            url, headers=headers, timeout=timeout, default_timeout=default_timeout
        )

    return start


class BrowserPool:
    """Browsers that share the tool calls given to the pool. Make one with :func:`pool`.

    ``async with`` starts every browser (at once) and closes them all at the end, however the
    block ends. Calls may come from any number of tasks at once: each waits for a free slot
    (``per_browser`` on a browser, ``concurrency`` in total), runs in that slot's tab, and
    frees the slot. Cancelling a call frees its slot at once; JavaScript already sent may
    keep running in the page, so that tab is closed (in the background) rather than reused.
    """

    def __init__(
        self,
        specs: Sequence[tuple[str, Callable[[], Awaitable[Browser]]]],
        *,
        learnings: Learnings,
        per_browser: int,
        concurrency: int | None,
        retries: int,
        replace_attempts: int,
    ) -> None:
        self.learnings = learnings
        self.retries = retries
        self.replace_attempts = replace_attempts
        self.per_browser = per_browser
        self._members = [
            _Member(index, source, factory, per_browser)
            for index, (source, factory) in enumerate(specs)
        ]
        self.concurrency = concurrency or per_browser * len(self._members)
        self.stats = PoolStats()
        self._start_urls: dict[str, str] = {}
        self._slots: asyncio.Semaphore | None = None
        # Set (and replaced by a fresh one) whenever a browser or slot changes state. An
        # event rather than a condition: waiters hold no lock, so cancelling one is safe.
        self._changed: asyncio.Event | None = None
        self._rotation = itertools.count()
        self._started = False
        self._closing = False
        # Background closes of discarded tabs, awaited by close().
        self._closers: set[asyncio.Task[None]] = set()

    # -- life cycle ------------------------------------------------------------------------

    async def __aenter__(self) -> BrowserPool:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    async def start(self) -> None:
        """Start (launch or attach) every browser at once.

        A browser that fails to start is retried in the background like a dead one, as long
        as at least one browser started.

        Raises:
            The first browser's error (ConnectionFailedError for a refused token,
            ChromeLaunchError, ...) when none started; nothing is left running then.
            RuntimeError: the pool was started before.
        """
        if self._started:
            raise RuntimeError("this pool was started already; make a new one with ego.pool()")
        self._started = True
        self._slots = asyncio.Semaphore(self.concurrency)
        self._changed = asyncio.Event()
        try:
            outcomes = await asyncio.gather(
                *(self._open(member) for member in self._members), return_exceptions=True
            )
        except BaseException:
            # Cancelled while starting (Ctrl+C): `async with` will not call close(), so the
            # browsers that did start are closed here.
            await self.close()
            raise
        errors = [outcome for outcome in outcomes if isinstance(outcome, BaseException)]
        if len(errors) == len(self._members):
            await self.close()
            raise errors[0]
        for member, outcome in zip(self._members, outcomes, strict=True):
            if isinstance(outcome, BaseException):
                if not isinstance(outcome, Exception):
                    await self.close()
                    raise outcome
                logger.warning("pool browser %d did not start: %s", member.index, outcome)
                member.last_error = outcome
                self._schedule_replacement(member)

    async def _open(self, member: _Member) -> None:
        browser = await member.factory()
        self._attach(member, browser)

    def _attach(self, member: _Member, browser: Browser) -> None:
        site = Site(browser, self.learnings)
        for site_id, url in self._start_urls.items():
            site.set_start_url(site_id, url)
        browser.site = site
        member.generation += 1
        member.browser, member.site = browser, site
        member.free_tabs = []
        member.state = "ready"
        member.last_error = None
        generation = member.generation
        # Noticed at once, even with no call in flight: a dead browser is replaced before the
        # next call needs it.
        browser.connection.on_close(lambda: self._on_closed(member, generation))
        self._notify()

    def _on_closed(self, member: _Member, generation: int) -> None:
        if self._closing or member.generation != generation or member.state != "ready":
            return
        logger.warning("pool browser %d (%s) went away; replacing it", member.index, member.source)
        self._schedule_replacement(member)

    def _schedule_replacement(self, member: _Member) -> None:
        member.state = "replacing"
        member.free_tabs = []
        member.task = asyncio.get_running_loop().create_task(self._replace(member))
        self._notify()

    async def _replace(self, member: _Member) -> None:
        old, member.browser, member.site = member.browser, None, None
        if old is not None:
            try:
                # Ends what is left of a launched Chrome's process tree, removes its temporary
                # profile and stops its watchdog; only disconnects from an attached one.
                await old.close()
            except Exception:
                logger.exception("closing dead pool browser %d failed", member.index)
        for attempt in range(self.replace_attempts):
            delay = _REPLACE_BACKOFF[min(attempt, len(_REPLACE_BACKOFF) - 1)]
            if delay:
                await asyncio.sleep(delay)
            if self._closing:
                return
            try:
                browser = await member.factory()
            except Exception as exc:
                member.last_error = exc
                logger.warning(
                    "replacing pool browser %d, attempt %d of %d: %s",
                    member.index,
                    attempt + 1,
                    self.replace_attempts,
                    exc,
                )
                continue
            if self._closing:
                await browser.close()
                return
            self._attach(member, browser)
            self.stats.replaced += 1
            return
        member.state = "failed"
        logger.error("pool browser %d given up: %s", member.index, member.last_error)
        self._notify()

    def _notify(self) -> None:
        changed = self._changed
        if changed is not None:
            self._changed = asyncio.Event()
            changed.set()

    async def close(self) -> None:
        """Close every browser (a launched Chrome ends; an attached one is disconnected).

        Calls still running fail with BrowserClosedError and are not retried. Idempotent.
        """
        if self._closing:
            return
        self._closing = True
        # Callers waiting for a browser see the pool closing now, even if this is cancelled.
        self._notify()
        tasks = [member.task for member in self._members if member.task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, *self._closers, return_exceptions=True)
        browsers = [member.browser for member in self._members if member.browser is not None]
        for member in self._members:
            member.state = "closed"
            member.browser = member.site = None
            member.free_tabs = []
        results = await asyncio.gather(
            *(browser.close() for browser in browsers), return_exceptions=True
        )
        for result in results:
            if isinstance(result, Exception):
                logger.warning("closing a pool browser failed: %s", result)
        self._notify()

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._closing

    async def wait_ready(self, timeout: float | None = None) -> None:
        """Wait until no browser is starting or being replaced (each is ready or given up).

        Raises:
            TimeoutError: still not settled after ``timeout`` seconds.
            RuntimeError: the pool was not started.
        """
        if self._changed is None:
            raise RuntimeError("start the pool first: async with ego.pool(...) as pool:")

        async def wait() -> None:
            while any(m.state in ("starting", "replacing") for m in self._members):
                assert self._changed is not None
                await self._changed.wait()

        await asyncio.wait_for(wait(), timeout)

    # -- configuration and monitoring ------------------------------------------------------

    def set_start_url(self, site_id: str, url: str) -> None:
        """Open ``url`` instead of the manifest's ``startUrl`` for ``site_id``, on every
        browser, including browsers that replace dead ones later."""
        self._start_urls[site_id] = url
        for member in self._members:
            if member.site is not None:
                member.site.set_start_url(site_id, url)

    @property
    def members(self) -> list[MemberInfo]:
        """A snapshot of every pool browser."""
        return [
            MemberInfo(
                index=member.index,
                source=member.source,
                state=member.state,
                generation=member.generation,
                in_flight=member.in_flight,
                calls=member.calls,
                pid=(
                    member.browser.process.pid
                    if member.browser is not None and member.browser.process is not None
                    else None
                ),
                browser=member.browser,
                last_error=str(member.last_error or ""),
            )
            for member in self._members
        ]

    @property
    def size(self) -> int:
        """How many browsers the pool holds (alive or not)."""
        return len(self._members)

    # -- calls -----------------------------------------------------------------------------

    async def run_browser_tool(
        self,
        site_id: str,
        tool: str,
        args: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        confirm: bool = False,
        check_returns: bool = False,
        cache: bool = True,
    ) -> Any:
        """Run a browser tool on a free slot of the pool and return its result.

        As :meth:`ego.site.Site.run_browser_tool`, in a tab of the pool's choosing (one on the
        site's domains, opened at the start URL when the slot's tab is elsewhere). A read
        call whose browser or tab dies is retried on another browser (up to ``retries``).

        Raises:
            NotRetriedError: a write or irreversible call was cut short by a dying browser or
                tab after it was sent; it is not repeated.
            PoolExhaustedError: no browser is left and none could be replaced.
            BrowserClosedError: the pool is closed, or a read call's browser died more often
                than ``retries`` allows.
            Everything :meth:`ego.site.Site.run_browser_tool` raises (unknown site or tool,
            bad args and ConfirmationRequiredError before anything is sent).
        """
        value, _, _ = await self._call(
            site_id,
            tool,
            args,
            browser_only=True,
            timeout=timeout,
            confirm=confirm,
            check_returns=check_returns,
            cache=cache,
        )
        return value

    async def run_tool(
        self,
        site_id: str,
        tool: str,
        args: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        confirm: bool = False,
        check_returns: bool = False,
        cache: bool = True,
    ) -> Any:
        """Run any declared tool (browser or Python) on a free slot; see :meth:`run_browser_tool`.

        A Python tool's ``ctx.tab`` is the slot's tab; its side effect (from the manifest)
        decides retries the same way.
        """
        value, _, _ = await self._call(
            site_id,
            tool,
            args,
            browser_only=False,
            timeout=timeout,
            confirm=confirm,
            check_returns=check_returns,
            cache=cache,
        )
        return value

    def map(
        self,
        site_id: str,
        tool: str,
        inputs: Iterable[Mapping[str, Any] | None] | AsyncIterable[Mapping[str, Any] | None],
        *,
        ordered: bool = True,
        timeout: float | None = None,
        confirm: bool = False,
        check_returns: bool = False,
        cache: bool = True,
        on_send: Callable[[int], None] | None = None,
    ) -> PoolMap:
        """Run ``tool`` once per input over the whole pool; one :class:`PoolResult` each.

        ``async for item in pool.map(...)`` yields results as they are ready, or
        ``results = await pool.map(...)`` gives the list. Inputs are read lazily (an iterator
        of a million lines is fine), at most ``concurrency`` calls run at once, and every
        per-item error is captured in its result.

        Args:
            site_id, tool: the tool to run (browser or Python).
            inputs: an iterable or async iterable of args objects.
            ordered: yield in input order (a slow item holds back later ones, at most a
                window of ``4 * concurrency`` ahead); False yields in completion order.
            timeout, confirm, check_returns, cache: as for :meth:`run_browser_tool`.
            on_send: called with an input's index right before its tool is sent to a browser
                (after validation and tab preparation); a batch journals write tools here.

        Raises:
            UnknownSiteError, UnknownToolError, InvalidManifestError,
                ConfirmationRequiredError: when iteration starts, once for all inputs.
            PoolExhaustedError: while iterating, when no browser is left; the results not
                yet yielded are lost (a batch run resumes them).
            Whatever ``inputs`` raises while being read.

        Leaving the ``async for`` early (or cancelling it) cancels the calls still running.
        """
        return PoolMap(
            self,
            site_id,
            tool,
            inputs,
            ordered=ordered,
            options={
                "timeout": timeout,
                "confirm": confirm,
                "check_returns": check_returns,
                "cache": cache,
            },
            on_send=on_send,
        )

    async def _call(
        self,
        site_id: str,
        tool: str,
        args: Mapping[str, Any] | None,
        *,
        browser_only: bool,
        timeout: float | None,
        confirm: bool,
        check_returns: bool,
        cache: bool,
        on_send: Callable[[], None] | None = None,
        attempts_out: list[int] | None = None,
    ) -> tuple[Any, int, int]:
        """Run one call with retries; returns (value, attempts, browser index)."""
        # Everything that can be refused is refused here, before a slot is taken.
        entry, spec = self.learnings.tool(site_id, tool)
        manifest = entry.require()
        checked = self.learnings.check_args(site_id, spec, dict(args) if args else None)
        if spec.side_effect == "irreversible" and not confirm:
            raise ConfirmationRequiredError(
                f"{site_id}/{tool} is irreversible (it publishes or sends for real): "
                "call it again with confirm=True if that is what you want"
            )
        attempts = 0
        avoid: set[tuple[int, int]] = set()
        while True:
            attempts += 1
            if attempts_out is not None:
                attempts_out[0] = attempts
            lease = await self._acquire(avoid)
            member = lease.member
            sent = False
            try:
                tab = await self._tab(lease, manifest)
                site = member.site
                if site is None or member.generation != lease.generation:
                    raise BrowserClosedError(f"pool browser {member.index} went away")
                if on_send is not None:
                    on_send()
                # From here on the tool may run: a write cut short now is never repeated.
                sent = True
                run = site.run_browser_tool if browser_only else site.run_tool
                value = await run(
                    site_id,
                    tool,
                    checked,
                    tab=tab,
                    timeout=timeout,
                    confirm=confirm,
                    check_returns=check_returns,
                    cache=cache,
                )
            except (BrowserClosedError, TabClosedError, ContextDestroyedError) as exc:
                if isinstance(exc, TabClosedError):
                    lease.tab = None  # gone; Browser marks it closed a moment later
                if self._closing:
                    self._count(ok=False)
                    raise BrowserClosedError(
                        f"{site_id}/{tool} stopped: the pool was closed while it ran"
                    ) from exc
                if isinstance(exc, ContextDestroyedError) and spec.side_effect != "read":
                    # A write tool that navigates its own page (a form post) ends up here;
                    # the browser is fine and the error says what happened.
                    self._count(ok=False)
                    raise
                if sent and spec.side_effect != "read":
                    self.stats.not_retried += 1
                    self._count(ok=False)
                    raise _not_retried(site_id, tool, spec, exc) from exc
                if attempts > self.retries:
                    self._count(ok=False)
                    raise type(exc)(
                        f"{site_id}/{tool} gave up after {attempts} attempts "
                        f"(retries={self.retries}): {exc}"
                    ) from exc
                self.stats.retried += 1
                avoid.add((member.index, lease.generation))
                logger.info(
                    "retrying %s/%s (attempt %d) after pool browser %d failed: %s",
                    site_id,
                    tool,
                    attempts + 1,
                    member.index,
                    exc,
                )
                continue
            except asyncio.CancelledError:
                # The tool may still be running in the page: that tab is not reused.
                lease.discard = True
                self._count(ok=False)
                raise
            except BaseException:
                self._count(ok=False)
                raise
            finally:
                self._release(lease)
            member.calls += 1
            self._count(ok=True)
            return value, attempts, member.index

    def _count(self, *, ok: bool) -> None:
        self.stats.calls += 1
        if ok:
            self.stats.succeeded += 1
        else:
            self.stats.failed += 1

    async def _acquire(self, avoid: set[tuple[int, int]]) -> _Lease:
        if not self._started:
            raise RuntimeError("start the pool first: async with ego.pool(...) as pool:")
        assert self._slots is not None
        await self._slots.acquire()
        try:
            while True:
                if self._closing:
                    raise BrowserClosedError("the pool is closed")
                member = self._pick(avoid)
                if member is not None:
                    member.in_flight += 1
                    return _Lease(member, member.generation)
                if all(m.state == "failed" for m in self._members):
                    raise self._exhausted()
                assert self._changed is not None
                await self._changed.wait()
        except BaseException:
            self._slots.release()
            raise

    def _pick(self, avoid: set[tuple[int, int]]) -> _Member | None:
        ready = [m for m in self._members if m.state == "ready" and m.in_flight < m.capacity]
        if not ready:
            return None
        # Prefer a browser other than the one that just failed this call; when only that one
        # is left (a one-browser pool after a replacement), its new generation is fine.
        preferred = [m for m in ready if (m.index, m.generation) not in avoid] or ready
        # Least loaded first; the rotating offset spreads ties over every browser.
        offset = next(self._rotation)
        count = len(self._members)
        return min(preferred, key=lambda m: (m.in_flight, (m.index - offset) % count))

    def _exhausted(self) -> PoolExhaustedError:
        reasons = "; ".join(
            f"browser {m.index} ({m.source}): {m.last_error}" for m in self._members
        )
        return PoolExhaustedError(
            f"all {len(self._members)} browsers of the pool are gone and could not be "
            f"replaced after {self.replace_attempts} attempts each: {reasons}"
        )

    async def _tab(self, lease: _Lease, manifest: Manifest) -> Tab:
        member = lease.member
        browser = member.browser
        if browser is None or member.generation != lease.generation:
            raise BrowserClosedError(f"pool browser {member.index} went away")
        if lease.tab is None:
            lease.tab = member.free_tabs.pop() if member.free_tabs else await browser.new_tab()
        tab = lease.tab
        if match_domain(tab.url, manifest.domains) is None:
            start = self._start_urls.get(manifest.id) or manifest.start_url
            if not start:
                raise NoTabError(
                    f"site {manifest.id!r} has no startUrl for the pool to open: call "
                    f"pool.set_start_url({manifest.id!r}, url)"
                )
            try:
                await tab.navigate(start)
            except BaseException:
                # A navigation cut short may still land later and abort the next one.
                lease.discard = True
                raise
        return tab

    def _release(self, lease: _Lease) -> None:
        member = lease.member
        member.in_flight -= 1
        tab = lease.tab
        if tab is not None and not tab.closed:
            if lease.discard:
                self._close_later(tab)
            elif member.state == "ready" and member.generation == lease.generation:
                member.free_tabs.append(tab)
        assert self._slots is not None
        self._slots.release()
        self._notify()

    def _close_later(self, tab: Tab) -> None:
        if self._closing:
            return  # its browser is being closed or disconnected anyway

        async def close() -> None:
            try:
                await asyncio.wait_for(tab.close(), _TAB_CLOSE_TIMEOUT)
            except Exception as exc:
                logger.info("closing a discarded pool tab failed: %s", exc)

        # _release runs in finally blocks, also of cancelled calls: it cannot await.
        task = asyncio.get_running_loop().create_task(close())
        self._closers.add(task)
        task.add_done_callback(self._closers.discard)


def _not_retried(site_id: str, tool: str, spec: ToolSpec, exc: BaseException) -> NotRetriedError:
    what = "its tab closed" if isinstance(exc, TabClosedError) else "the browser died"
    return NotRetriedError(
        f"not retried: {site_id}/{tool} is a{'n' if spec.side_effect == 'irreversible' else ''} "
        f"{spec.side_effect} tool and {what} mid-call; it may or may not have run (check "
        "before running it again)",
        site_id=site_id,
        tool=tool,
        side_effect=spec.side_effect,
    )


class PoolMap:
    """What :meth:`BrowserPool.map` returns: ``async for`` it, or ``await`` it for a list.

    Iterate it once. ``await pool.map(...)`` always gives the results in input order.
    ``aclose()`` (or ``async with``) stops it early and cancels the calls still running.
    """

    def __init__(
        self,
        pool: BrowserPool,
        site_id: str,
        tool: str,
        inputs: Iterable[Mapping[str, Any] | None] | AsyncIterable[Mapping[str, Any] | None],
        *,
        ordered: bool,
        options: dict[str, Any],
        on_send: Callable[[int], None] | None,
    ) -> None:
        self._pool = pool
        self._site_id = site_id
        self._tool = tool
        self._inputs = inputs
        self._ordered = ordered
        self._options = options
        self._on_send = on_send
        self._iterator: AsyncIterator[PoolResult] | None = None
        # The calls running now; aclose() cancels them even if the iterator cannot be closed.
        self._tasks: set[asyncio.Task[PoolResult]] = set()
        self._reading: asyncio.Task[Any] | None = None
        self._stopped = False

    def __aiter__(self) -> AsyncIterator[PoolResult]:
        if self._iterator is not None:
            raise RuntimeError("a pool.map() result can be iterated once")
        self._iterator = self._run()
        return self._iterator

    def __await__(self) -> Generator[Any, None, list[PoolResult]]:
        return self._collect().__await__()

    async def _collect(self) -> list[PoolResult]:
        self._ordered = True
        return [item async for item in self]

    async def __aenter__(self) -> PoolMap:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop: cancel the calls still running. Idempotent."""
        self._stopped = True
        close = getattr(self._iterator, "aclose", None)
        try:
            if close is not None:
                await close()
        except RuntimeError:
            # Another task is inside the iteration right now: the generator cannot be
            # closed from here, but its calls can be cancelled, which ends that iteration.
            pass
        finally:
            await self._stop_tasks()

    async def _stop_tasks(self) -> None:
        tasks: list[asyncio.Task[Any]] = list(self._tasks)
        self._tasks.clear()
        if self._reading is not None:
            tasks.append(self._reading)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _one(self, index: int, args: Any) -> PoolResult:
        started = time.perf_counter()
        attempts = [0]
        on_send = self._on_send
        try:
            value, count, browser = await self._pool._call(
                self._site_id,
                self._tool,
                args,
                browser_only=False,
                on_send=(lambda: on_send(index)) if on_send is not None else None,
                attempts_out=attempts,
                **self._options,
            )
        except PoolExhaustedError:
            raise
        except Exception as exc:
            if self._pool.closed:
                raise
            return PoolResult(
                index,
                args,
                False,
                error=exc,
                ms=(time.perf_counter() - started) * 1000,
                attempts=attempts[0],
            )
        return PoolResult(
            index,
            args,
            True,
            result=value,
            ms=(time.perf_counter() - started) * 1000,
            attempts=count,
            browser=browser,
        )

    async def _run(self) -> AsyncIterator[PoolResult]:
        owner = self._pool
        if not owner._started:
            raise RuntimeError("start the pool first: async with ego.pool(...) as pool:")
        # What would fail every input fails once, here, instead of once per input.
        _, spec = owner.learnings.tool(self._site_id, self._tool)
        if spec.side_effect == "irreversible" and not self._options.get("confirm"):
            raise ConfirmationRequiredError(
                f"{self._site_id}/{self._tool} is irreversible (it publishes or sends for "
                "real): pass confirm=True to run it for every input"
            )
        # One task per call and one for reading the next input, all owned by this generator
        # and waited on together. There is no lock or condition shared between tasks: a
        # cancelled waiter that must re-acquire a shared asyncio lock is how an early exit
        # used to deadlock.
        loop = asyncio.get_running_loop()
        source = _as_async_iterator(self._inputs)
        ordered = self._ordered
        limit = owner.concurrency
        window = 4 * limit
        calls = self._tasks
        exhausted = False
        issued = next_out = 0
        buffer: dict[int, PoolResult] = {}
        try:
            while True:
                # Bounded reorder buffer: an ordered map does not run far ahead of a slow item.
                room = not ordered or issued - next_out < window
                reading = self._reading
                if reading is None and not exhausted and len(calls) < limit and room:
                    reading = self._reading = loop.create_task(_next_input(source))
                pending: set[asyncio.Task[Any]] = set(calls)
                if reading is not None:
                    pending.add(reading)
                if not pending:
                    break
                done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                if self._stopped:
                    return  # aclose() from another task while this one waited
                finished: list[PoolResult] = []
                fatal: BaseException | None = None
                for task in done - {reading}:
                    calls.discard(task)
                    if task.cancelled():
                        continue  # stopped by aclose() from another task
                    error = task.exception()
                    if error is not None:
                        fatal = fatal or error
                    else:
                        finished.append(task.result())
                if reading is not None and reading in done:
                    self._reading = None
                    # An error reading the inputs comes after the results that finished
                    # with it, as a failing call does. (Only aclose() cancels this task,
                    # and then the loop has returned above.)
                    error = reading.exception()
                    if error is not None:
                        fatal = fatal or error
                    elif reading.result() is _END:
                        exhausted = True
                    elif fatal is None:
                        calls.add(loop.create_task(self._one(issued, reading.result())))
                        issued += 1
                if not ordered:
                    for result in finished:
                        yield result
                else:
                    for result in finished:
                        buffer[result.index] = result
                    while next_out in buffer:
                        yield buffer.pop(next_out)
                        next_out += 1
                if fatal is not None:
                    raise fatal
        finally:
            await self._stop_tasks()
            with contextlib.suppress(Exception):
                await source.aclose()


_END = object()


async def _next_input(source: AsyncGenerator[Any, None]) -> Any:
    try:
        return await source.__anext__()
    except StopAsyncIteration:
        # A sentinel, not the exception: StopAsyncIteration re-raised inside the map's own
        # async generator would turn into a RuntimeError (PEP 525).
        return _END


async def _as_async_iterator(
    inputs: Iterable[Mapping[str, Any] | None] | AsyncIterable[Mapping[str, Any] | None],
) -> AsyncGenerator[Mapping[str, Any] | None, None]:
    if isinstance(inputs, AsyncIterable):
        async for item in inputs:
            yield item
    else:
        for item in inputs:
            yield item


def redact_url(url: str) -> str:
    """``url`` with the value of a ``token``/``apikey``/``key`` query parameter hidden."""
    parts = urlsplit(url)
    if not parts.query:
        return url
    query = [
        (key, "***" if key.lower() in {"token", "apikey", "key"} else value)
        for key, value in parse_qsl(parts.query, keep_blank_values=True)
    ]
    return urlunsplit((*parts[:3], urlencode(query, safe="*"), parts.fragment))
