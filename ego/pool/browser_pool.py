""":class:`BrowserPool`, the pool's front: what the caller configures, starts, calls and closes.

The work is done by the other modules of :mod:`ego.pool`: :mod:`~ego.pool.sources` turns the
keywords into browser factories, :mod:`~ego.pool.members` keeps the browsers alive,
:mod:`~ego.pool.scheduling` hands out slots and tabs, :mod:`~ego.pool.retry` runs a call with
the retry rules and :mod:`~ego.pool.map` runs many.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterable, Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any

from ..api import SharedBrowser
from ..calls import CallOptions, ToolCall, bind, prepare, resolve
from ..learning.catalog.registry import Learnings
from ..page.storage_state import StateSource, StorageState, read_storage_state
from ..protocol.chrome import LaunchOptions
from .map import PoolMap
from .members import Members
from .retry import Runner
from .scheduling import Scheduler
from .sources import MemberSpec, member_specs
from .types import Endpoint, MemberInfo, PoolStats

logger = logging.getLogger("ego.pool")

#: A saved login for every pool member, or one per member (None: logged out).
StorageStates = StateSource | Sequence[StateSource | None]

__all__ = ["BrowserPool"]


class BrowserPool:
    """Browsers that share the tool calls given to the pool.

    ``async with`` starts every browser (at once) and closes them all at the end, however the
    block ends. Calls may come from any number of tasks at once: each waits for a free slot
    (``per_browser * per_tab`` on a browser, ``concurrency`` in total), runs in a tab of its
    browser on the tool's site, and frees the slot. Cancelling a call frees its slot at once;
    JavaScript already sent may keep running in the page, so that tab takes no more calls
    and is closed (in the background) once the calls still running in it ended.

    ::

        async with ego.BrowserPool(launch=2) as pool:
            results = await pool.map("demo-shop", "get_product", inputs)

    Args:
        launch: how many local Chromes to start (headless by default, each with a throwaway
            profile unless ``profiles`` names one per Chrome).
        endpoints: endpoints to attach to: URLs or :class:`Endpoint` (with its own headers
            and browser count). Local and attached browsers may be mixed.
        headers: handshake headers for every endpoint without its own.
        browsers_per_endpoint: browsers per endpoint given as a plain URL.
        per_browser: tabs of one browser at most; with ``per_tab=1`` (the default), each
            call in flight on the browser has a tab of its own.
        per_tab: calls in flight in one tab at most, all of one site. Tools that mostly wait
            (on the network, on the page) gain from several; the client process also does
            less work per call with more calls in flight.
        concurrency: calls in flight over the whole pool at most (default: every browser's
            ``per_browser * per_tab`` added up).
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
        contexts: each pool browser a browser context of its own instead of a whole Chrome:
            the ``launch`` members share one Chrome, an endpoint's members one connection;
            each context has its own cookies and storage (one account each).
        storage_state: a saved login each member's context starts from (with ``contexts``):
            one for all, or a list with one per member (None for one logged out).

    Raises:
        ValueError: no browser asked for, a count below 1, ``profiles`` not matching
            ``launch``, ``storage_state`` without ``contexts`` or not one per member.
        StorageStateError: a storage state is not one (before anything starts).

    Attributes:
        learnings: what every browser's site facade runs.
        per_browser, per_tab, concurrency, retries, replace_attempts: as given
            (``concurrency`` resolved).
        stats: counters over the pool's life.
    """

    def __init__(
        self,
        *,
        launch: int = 0,
        endpoints: Sequence[str | Endpoint] = (),
        headers: Mapping[str, str] | None = None,
        browsers_per_endpoint: int = 1,
        per_browser: int = 4,
        per_tab: int = 1,
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
        contexts: bool = False,
        storage_state: StorageStates | None = None,
    ) -> None:
        if launch < 0 or browsers_per_endpoint < 1:
            raise ValueError("launch must be >= 0 and browsers_per_endpoint >= 1")
        if learnings is None:
            learnings = Learnings(workspace=workspace) if workspace is not None else Learnings()
        options = LaunchOptions(
            headless=headless,
            executable=executable,
            args=tuple(args),
            timeout=launch_timeout,
            default_timeout=default_timeout,
        )
        sources = member_specs(
            launch=launch,
            endpoints=endpoints,
            headers=headers,
            browsers_per_endpoint=browsers_per_endpoint,
            profiles=profiles,
            options=options,
            connect_timeout=connect_timeout,
            contexts=contexts,
        )
        sources.states = _states(storage_state, contexts, len(sources.specs))
        self._shared: list[SharedBrowser] = sources.shared
        self._setup(
            sources.specs,
            learnings=learnings,
            per_browser=per_browser,
            per_tab=per_tab,
            concurrency=concurrency,
            retries=retries,
            replace_attempts=replace_attempts,
        )

    @classmethod
    def from_factories(
        cls,
        specs: Sequence[MemberSpec],
        *,
        learnings: Learnings,
        per_browser: int = 4,
        per_tab: int = 1,
        concurrency: int | None = None,
        retries: int = 2,
        replace_attempts: int = 3,
    ) -> BrowserPool:
        """A pool whose browsers come from ready factories (tests, custom transports).

        Args:
            specs: one ``(source, factory)`` per pool browser: ``source`` labels it in
                :attr:`members`; ``factory()`` gives a connected :class:`ego.api.Browser`
                and is called again to replace it when it dies.
            learnings, per_browser, per_tab, concurrency, retries, replace_attempts: as for
                the constructor.

        Raises:
            ValueError: no specs, or a count out of range.
        """
        pool = cls.__new__(cls)
        pool._shared = []
        pool._setup(
            specs,
            learnings=learnings,
            per_browser=per_browser,
            per_tab=per_tab,
            concurrency=concurrency,
            retries=retries,
            replace_attempts=replace_attempts,
        )
        return pool

    def _setup(
        self,
        specs: Sequence[MemberSpec],
        *,
        learnings: Learnings,
        per_browser: int,
        per_tab: int,
        concurrency: int | None,
        retries: int,
        replace_attempts: int,
    ) -> None:
        if per_browser < 1 or retries < 0:
            raise ValueError("per_browser must be >= 1 and retries >= 0")
        if per_tab < 1:
            raise ValueError("per_tab must be >= 1")
        if replace_attempts < 0:
            raise ValueError("replace_attempts must be >= 0")
        if not specs:
            raise ValueError("a pool needs browsers: pass launch=N or endpoints=[...]")
        if concurrency is not None and concurrency < 1:
            raise ValueError("concurrency must be >= 1")
        self.learnings = learnings
        self.per_browser = per_browser
        self.per_tab = per_tab
        self.concurrency = concurrency or per_browser * per_tab * len(specs)
        self.retries = retries
        self.replace_attempts = replace_attempts
        self.stats = PoolStats()
        # Nothing here touches the event loop: a pool may be made before asyncio.run().
        self._members = Members(
            specs,
            learnings=learnings,
            tabs=per_browser,
            per_tab=per_tab,
            replace_attempts=replace_attempts,
            stats=self.stats,
        )
        self._scheduler = Scheduler(self._members, self.concurrency)
        self._runner = Runner(self._scheduler, retries=retries, stats=self.stats)

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
        if self._scheduler.started:
            raise RuntimeError("this pool was started already; make a new ego.BrowserPool()")
        self._scheduler.open()
        await self._members.start()

    async def close(self) -> None:
        """Close every browser (a launched Chrome ends; an attached one is disconnected).

        Calls still running fail with BrowserClosedError and are not retried. Idempotent.
        """
        await self._members.close()
        for chrome in self._shared:  # what the context members shared, once they are closed
            try:
                await chrome.close()
            except Exception as exc:
                logger.warning("closing a pool's shared browser failed: %s", exc)

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._members.closing

    async def wait_ready(self, timeout: float | None = None) -> None:
        """Wait until no browser is starting or being replaced (each is ready or given up).

        Raises:
            TimeoutError: still not settled after ``timeout`` seconds.
            RuntimeError: the pool was not started.
        """
        self._scheduler.check_started()
        await asyncio.wait_for(self._members.wait_ready(), timeout)

    # -- configuration and monitoring ------------------------------------------------------

    def set_start_url(self, site_id: str, url: str) -> None:
        """Open ``url`` instead of the manifest's ``startUrl`` for ``site_id``, on every
        browser, including browsers that replace dead ones later."""
        self._members.set_start_url(site_id, url)

    @property
    def members(self) -> list[MemberInfo]:
        """A snapshot of every pool browser."""
        return self._members.info()

    @property
    def size(self) -> int:
        """How many browsers the pool holds (alive or not)."""
        return len(self._members.all)

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
        options = CallOptions(timeout, confirm, check_returns, cache)
        call = prepare(self.learnings, site_id, tool, args, options, browser_only=True)
        value, _, _ = await self._runner.run(call)
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
        options = CallOptions(timeout, confirm, check_returns, cache)
        value, _, _ = await self._runner.run(prepare(self.learnings, site_id, tool, args, options))
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
        ``results = await pool.map(...)`` gives the list (in input order; a slow item holds
        back no other call then, since every result is kept until the end anyway). Inputs
        are read lazily (an iterator of a million lines is fine), at most ``concurrency``
        calls run at once, and every per-item error is captured in its result.

        Args:
            site_id, tool: the tool to run (browser or Python).
            inputs: an iterable or async iterable of args objects.
            ordered: yield in input order (a slow item holds back later ones, at most a
                window of ``4 * concurrency`` ahead); False yields in completion order. Either
                way the calls run at most that window ahead of the results the caller took.
            timeout, confirm, check_returns, cache: as for :meth:`run_browser_tool`.
            on_send: called with an input's index right before its tool is sent to a browser
                (after validation and tab preparation); a batch journals write tools here.

        Raises:
            UnknownSiteError, UnknownToolError, InvalidManifestError,
                ConfirmationRequiredError: here, once for all inputs.
            RuntimeError: the pool was not started.
            PoolExhaustedError: while iterating, when no browser is left; the results not
                yet yielded are lost (a batch run resumes them).
            Whatever ``inputs`` raises while being read.

        Leaving the ``async for`` early (or cancelling it) cancels the calls still running.
        The calls run in at most ``concurrency`` worker tasks of the map, each taking the next
        input when its call ended; ``PoolMap.groups()`` gives the results that finished
        together as one list.
        """
        self._scheduler.check_started()
        # What would fail every input fails once, here, instead of once per input.
        ref = resolve(
            self.learnings, site_id, tool, CallOptions(timeout, confirm, check_returns, cache)
        )
        learnings = self.learnings
        return PoolMap(
            self._runner,
            inputs,
            lambda args: bind(learnings, ref, args),
            ordered=ordered,
            on_send=on_send,
        )

    def map_calls(
        self,
        calls: Iterable[ToolCall] | AsyncIterable[ToolCall],
        *,
        ordered: bool = True,
        on_send: Callable[[int], None] | None = None,
    ) -> PoolMap:
        """:meth:`map` over calls prepared already (:func:`ego.calls.prepare`), as a batch does.

        Each result's ``args`` is the call's checked args.

        Raises:
            RuntimeError: the pool was not started.
        """
        self._scheduler.check_started()
        return PoolMap(self._runner, calls, _prepared, ordered=ordered, on_send=on_send)


def _prepared(call: ToolCall) -> ToolCall:
    return call


def _states(given: StorageStates | None, contexts: bool, members: int) -> list[StorageState | None]:
    """One storage state per member (read and checked now), or none.

    Raises:
        ValueError: states without ``contexts``, or a list not one per member.
        StorageStateError: a state is not one.
    """
    if given is None:
        return []
    if not contexts:
        raise ValueError(
            "storage_state needs contexts=True: each member's login lives in a context of its own"
        )
    if isinstance(given, str | os.PathLike | Mapping):
        state = read_storage_state(given)
        return [state] * members
    if len(given) != members:
        raise ValueError(
            f"storage_state names {len(given)} states for a pool of {members} members: give "
            "one for all, or one per member"
        )
    return [read_storage_state(each) if each is not None else None for each in given]
