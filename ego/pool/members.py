"""The life of the pool's browsers: start them, notice one dying, replace it, close them all.

:class:`Members` owns the browsers and the one signal every waiter in the pool listens to
(:meth:`Members.notify`): a browser became ready, was given up, or a slot was freed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from ..learning.catalog.registry import Learnings
from ..page.tab import Tab
from ..site import Site
from .sources import MemberFactory, MemberSpec
from .types import MemberInfo, MemberState, PoolStats, Worker

__all__ = ["Member", "Members"]

logger = logging.getLogger("ego.pool")

# Seconds to wait between attempts to replace a dead browser: a fleet host that restarts
# needs a moment, a local Chrome does not (the first attempt is immediate).
_REPLACE_BACKOFF: Final = (0.0, 0.5, 2.0, 5.0)
_TAB_CLOSE_TIMEOUT: Final = 5.0


class PoolTab:
    """A tab of a pool browser and the calls running in it, all of one site.

    Attributes:
        tab: the tab, None while it is being opened.
        site: the site whose calls it runs (the last one, when idle).
        calls: calls running in it now.
        ready: opened and on ``site``; False while the call that took it opens or navigates
            it, when no other call may join.
        retired: takes no more calls, and is closed once ``calls`` is 0: a call in it was
            cancelled, its navigation was cut short, or its renderer crashed.
        gone: the tab closed by itself (or from elsewhere): nothing to close.
    """

    __slots__ = ("calls", "gone", "ready", "retired", "site", "tab")

    def __init__(self) -> None:
        self.tab: Tab | None = None
        self.site = ""
        self.calls = 0
        self.ready = False
        self.retired = False
        self.gone = False


@dataclass
class Member:
    """One pool browser over its generations (each replacement is a new generation).

    ``tabs`` holds at most ``tab_limit`` tabs of the current generation, each running at
    most ``per_tab`` calls; ``capacity`` (their product) bounds ``in_flight``.
    """

    index: int
    source: str
    factory: MemberFactory
    tab_limit: int
    per_tab: int
    state: MemberState = "starting"
    browser: Worker | None = None
    site: Site | None = None
    generation: int = 0
    in_flight: int = 0
    calls: int = 0
    tabs: list[PoolTab] = field(default_factory=list)
    last_error: BaseException | None = None
    task: asyncio.Task[None] | None = None

    @property
    def capacity(self) -> int:
        """Calls in flight on this browser at most."""
        return self.tab_limit * self.per_tab


class Members:
    """The pool's browsers and their states.

    Args:
        specs: one (source, factory) per browser.
        learnings: what every browser's :class:`~ego.site.Site` runs.
        tabs: tabs of one browser at most.
        per_tab: calls in flight in one tab at most.
        replace_attempts: attempts to replace a dead browser before it is given up.
        stats: the pool's counters (``replaced`` is counted here).
    """

    def __init__(
        self,
        specs: Sequence[MemberSpec],
        *,
        learnings: Learnings,
        tabs: int,
        per_tab: int,
        replace_attempts: int,
        stats: PoolStats,
    ) -> None:
        self.learnings = learnings
        self.replace_attempts = replace_attempts
        self.stats = stats
        self.all = [
            Member(index, source, factory, tabs, per_tab)
            for index, (source, factory) in enumerate(specs)
        ]
        self.start_urls: dict[str, str] = {}
        self.closing = False
        # Set (and replaced by a fresh one) whenever a browser or slot changes state. An
        # event rather than a condition: waiters hold no lock, so cancelling one is safe.
        self._changed: asyncio.Event | None = None
        # Tasks in changed() now: with none, notify() has nobody to wake and costs nothing
        # (it runs after every call).
        self._waiting = 0
        # Background closes of discarded tabs, awaited by close().
        self._closers: set[asyncio.Task[None]] = set()

    @property
    def started(self) -> bool:
        """True once :meth:`start` was called."""
        return self._changed is not None

    async def start(self) -> None:
        """Start every browser at once; one that fails is replaced in the background.

        Raises:
            The first browser's error when none started; nothing is left running then.
        """
        self._changed = asyncio.Event()
        try:
            outcomes = await asyncio.gather(
                *(self._open(member) for member in self.all), return_exceptions=True
            )
        except BaseException:
            # Cancelled while starting (Ctrl+C): `async with` will not call close(), so the
            # browsers that did start are closed here.
            await self.close()
            raise
        errors = [outcome for outcome in outcomes if isinstance(outcome, BaseException)]
        if len(errors) == len(self.all):
            await self.close()
            raise errors[0]
        for member, outcome in zip(self.all, outcomes, strict=True):
            if isinstance(outcome, BaseException):
                if not isinstance(outcome, Exception):
                    await self.close()
                    raise outcome
                logger.warning("pool browser %d did not start: %s", member.index, outcome)
                member.last_error = outcome
                self._schedule_replacement(member)

    async def _open(self, member: Member) -> None:
        browser = await member.factory()
        self._attach(member, browser)

    def _attach(self, member: Member, browser: Worker) -> None:
        site = Site(browser, self.learnings)
        for site_id, url in self.start_urls.items():
            site.set_start_url(site_id, url)
        browser.site = site
        member.generation += 1
        member.browser, member.site = browser, site
        member.tabs = []
        member.state = "ready"
        member.last_error = None
        generation = member.generation
        # Noticed at once, even with no call in flight: a dead browser is replaced before the
        # next call needs it.
        browser.connection.on_close(lambda: self._on_closed(member, generation))
        self.notify()

    def _on_closed(self, member: Member, generation: int) -> None:
        if self.closing or member.generation != generation or member.state != "ready":
            return
        logger.warning("pool browser %d (%s) went away; replacing it", member.index, member.source)
        self._schedule_replacement(member)

    def _schedule_replacement(self, member: Member) -> None:
        member.state = "replacing"
        member.tabs = []
        member.task = asyncio.get_running_loop().create_task(self._replace(member))
        self.notify()

    async def _replace(self, member: Member) -> None:
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
            if self.closing:
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
            if self.closing:
                await browser.close()
                return
            self._attach(member, browser)
            self.stats.replaced += 1
            return
        member.state = "failed"
        logger.error("pool browser %d given up: %s", member.index, member.last_error)
        self.notify()

    def notify(self) -> None:
        """Wake every task waiting in :meth:`changed`."""
        changed = self._changed
        if changed is not None and self._waiting:
            self._changed = asyncio.Event()
            changed.set()

    async def changed(self) -> None:
        """Wait for the next :meth:`notify`. Cancelling the wait is safe (no lock is held)."""
        assert self._changed is not None
        self._waiting += 1
        try:
            await self._changed.wait()
        finally:
            self._waiting -= 1

    def close_tab_later(self, tab: Tab) -> None:
        """Close ``tab`` in the background (its state is unknown, so it is not reused)."""
        if self.closing:
            return  # its browser is being closed or disconnected anyway

        async def close() -> None:
            try:
                await asyncio.wait_for(tab.close(), _TAB_CLOSE_TIMEOUT)
            except Exception as exc:
                logger.info("closing a discarded pool tab failed: %s", exc)

        # Called from finally blocks, also of cancelled calls: it cannot await.
        task = asyncio.get_running_loop().create_task(close())
        self._closers.add(task)
        task.add_done_callback(self._closers.discard)

    async def close(self) -> None:
        """Close every browser; stop replacing. Idempotent."""
        if self.closing:
            return
        self.closing = True
        # Callers waiting for a browser see the pool closing now, even if this is cancelled.
        self.notify()
        tasks = [member.task for member in self.all if member.task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, *self._closers, return_exceptions=True)
        browsers = [member.browser for member in self.all if member.browser is not None]
        for member in self.all:
            member.state = "closed"
            member.browser = member.site = None
            member.tabs = []
        results = await asyncio.gather(
            *(browser.close() for browser in browsers), return_exceptions=True
        )
        for result in results:
            if isinstance(result, Exception):
                logger.warning("closing a pool browser failed: %s", result)
        self.notify()

    async def wait_ready(self) -> None:
        """Wait until no browser is starting or being replaced."""
        while any(m.state in ("starting", "replacing") for m in self.all):
            await self.changed()

    def set_start_url(self, site_id: str, url: str) -> None:
        """Use ``url`` as ``site_id``'s start URL on every browser, present and future."""
        self.start_urls[site_id] = url
        for member in self.all:
            if member.site is not None:
                member.site.set_start_url(site_id, url)

    def info(self) -> list[MemberInfo]:
        """A snapshot of every browser."""
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
            for member in self.all
        ]
