"""Which browser and tab run the next call: slots bounded per browser and in total.

A call takes a slot (:meth:`Scheduler.acquire`) on the least loaded ready browser, gets a tab
of it on the tool's site (:meth:`Scheduler.tab`), and gives both back
(:meth:`Scheduler.release`): the tab is kept for the next calls on that browser unless a
call left it in an unknown state.

A browser keeps at most ``per_browser`` tabs, and each tab runs at most ``per_tab`` calls at
once, all of one site: a call joins a tab of its site that has room, else takes an idle tab
(navigating it when it shows another site), else opens a tab, else waits for one.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections import deque
from collections.abc import Set as AbstractSet

from ..errors import BrowserClosedError, PoolExhaustedError
from ..learning.catalog.manifest import Manifest
from ..page.tab import Tab
from ..site import Site
from .members import Member, Members, PoolTab

__all__ = ["Lease", "Scheduler"]

_NOT_STARTED = "start the pool first: async with ego.BrowserPool(...) as pool:"


class Lease:
    """One call's slot on one browser generation, and the tab it runs in."""

    __slots__ = ("discard", "generation", "gone", "member", "place")

    def __init__(self, member: Member, generation: int) -> None:
        self.member = member
        self.generation = generation
        self.place: PoolTab | None = None
        # Set when the call ended in a way that leaves the tab in an unknown state (cancelled,
        # or failed while being navigated): the tab is closed instead of being reused.
        self.discard = False
        # Set when the tab closed under the call: it is dropped, with nothing to close.
        self.gone = False


class _Slots:
    """The pool-wide bound on calls in flight: a counting semaphore that hands a freed slot
    straight to the longest waiter, with a synchronous :meth:`take` for the common case.

    ``asyncio.Semaphore`` would do, but its ``acquire`` looks over its waiters on every call;
    this runs twice per tool call.
    """

    def __init__(self, count: int) -> None:
        self._free = count
        self._waiters: deque[asyncio.Future[None]] = deque()

    def take(self) -> bool:
        """Take a slot at once if one is free and nobody waits for one."""
        if self._free and not self._waiters:
            self._free -= 1
            return True
        return False

    async def acquire(self) -> None:
        """Wait for a slot. Cancelling the wait takes none (one handed over meanwhile is
        passed on to the next waiter)."""
        if self.take():
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()
            else:
                with contextlib.suppress(ValueError):
                    self._waiters.remove(waiter)
            raise

    def release(self) -> None:
        """Give a slot back: to the longest waiter, else to the free ones."""
        waiters = self._waiters
        while waiters:
            waiter = waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        self._free += 1


class Scheduler:
    """Hands out slots: ``capacity`` per browser (the members' own), ``concurrency`` in all.

    Args:
        members: the pool's browsers.
        concurrency: calls in flight over the whole pool at most.
    """

    def __init__(self, members: Members, concurrency: int) -> None:
        self.members = members
        self.concurrency = concurrency
        self._slots: _Slots | None = None
        self._rotation = itertools.count()

    @property
    def started(self) -> bool:
        """True once :meth:`open` was called."""
        return self._slots is not None

    def open(self) -> None:
        """Make the slots (inside the event loop that will use them)."""
        self._slots = _Slots(self.concurrency)

    def check_started(self) -> None:
        """Raise RuntimeError unless the pool was started."""
        if self._slots is None:
            raise RuntimeError(_NOT_STARTED)

    def take(self, avoid: AbstractSet[tuple[int, int]]) -> Lease | None:
        """A slot at once, when one is free and a ready browser has room (the common case of
        a busy pool); else None, and :meth:`acquire` must follow.

        Raises:
            RuntimeError: the pool was not started.
        """
        slots = self._slots
        if slots is None:
            raise RuntimeError(_NOT_STARTED)
        if self.members.closing or not slots.take():
            return None
        member = self._pick(avoid)
        if member is None:
            slots.release()
            return None
        member.in_flight += 1
        return Lease(member, member.generation)

    async def acquire(self, avoid: AbstractSet[tuple[int, int]]) -> Lease:
        """Wait for a free slot, preferring browsers (index, generation) not in ``avoid``.

        Cancelling the wait takes no slot.

        Raises:
            BrowserClosedError: the pool is closed.
            PoolExhaustedError: every browser was given up.
            RuntimeError: the pool was not started.
        """
        slots = self._slots
        if slots is None:
            raise RuntimeError(_NOT_STARTED)
        await slots.acquire()
        try:
            while True:
                if self.members.closing:
                    raise BrowserClosedError("the pool is closed")
                member = self._pick(avoid)
                if member is not None:
                    member.in_flight += 1
                    return Lease(member, member.generation)
                if all(m.state == "failed" for m in self.members.all):
                    raise self._exhausted()
                await self.members.changed()
        except BaseException:
            slots.release()
            raise

    def _pick(self, avoid: AbstractSet[tuple[int, int]]) -> Member | None:
        # One pass, no lists: this runs for every call. Least loaded first; the rotating
        # offset spreads ties over every browser. A browser in ``avoid`` (the one that just
        # failed this call) is taken only when no other is free; when it is the only one left
        # (a one-browser pool after a replacement), its new generation is fine.
        members = self.members.all
        count = len(members)
        if count == 1:
            only = members[0]
            if only.state == "ready" and only.in_flight < only.capacity:
                return only
            return None
        offset = next(self._rotation)
        best: Member | None = None
        best_key = (0, 0)
        fallback: Member | None = None
        fallback_key = (0, 0)
        for member in members:
            if member.state != "ready" or member.in_flight >= member.capacity:
                continue
            key = (member.in_flight, (member.index - offset) % count)
            if avoid and (member.index, member.generation) in avoid:
                if fallback is None or key < fallback_key:
                    fallback, fallback_key = member, key
            elif best is None or key < best_key:
                best, best_key = member, key
        return best if best is not None else fallback

    def _exhausted(self) -> PoolExhaustedError:
        members = self.members
        reasons = "; ".join(f"browser {m.index} ({m.source}): {m.last_error}" for m in members.all)
        return PoolExhaustedError(
            f"all {len(members.all)} browsers of the pool are gone and could not be "
            f"replaced after {members.replace_attempts} attempts each: {reasons}"
        )

    def tab_now(self, lease: Lease, manifest: Manifest) -> tuple[Site, Tab] | None:
        """The lease's browser's site facade and a tab of it on ``manifest``'s site, when one
        is ready at once (the common case of a hot pool); else None, and :meth:`tab` must
        follow (a tab is opened, navigated or waited for there)."""
        member = lease.member
        site = member.site
        if site is None or member.generation != lease.generation:
            return None  # tab() says why
        place = self._place(member, manifest.id)
        if place is None:
            return None
        lease.place = place
        tab = place.tab
        if place.ready and tab is not None and site.on_site(tab, manifest):
            return site, tab
        return None

    async def tab(self, lease: Lease, manifest: Manifest) -> tuple[Site, Tab]:
        """The lease's browser's site facade and a tab of it on ``manifest``'s site.

        Takes the tab :meth:`tab_now` chose, if it chose one. Waits while every tab of the
        browser is full or busy with another site's calls. Cancelling the wait leaves every
        tab as it was; a tab whose opening or navigation is cut short (by an error or a
        cancellation) takes no more calls and is closed once its calls ended.

        Raises:
            BrowserClosedError: the lease's browser generation is gone.
            Everything :meth:`ego.site.Site.visit` raises.
        """
        member = lease.member
        while True:
            browser, site = member.browser, member.site
            if browser is None or site is None or member.generation != lease.generation:
                raise BrowserClosedError(f"pool browser {member.index} went away")
            place = lease.place
            if place is None:
                place = lease.place = self._place(member, manifest.id)
            if place is not None:
                break
            # Every tab is full or busy with another site: a call that ends says so.
            await self.members.changed()
        try:
            if place.tab is None:
                place.tab = await browser.new_tab()
            await site.visit(place.tab, manifest)
        except BaseException:
            if place.tab is None:
                # Never opened: it takes no room.
                lease.place = None
                place.calls -= 1
                self._drop(member, place)
            else:
                # A navigation cut short may still land later and abort the next one.
                lease.discard = True
            raise
        if not place.ready:
            place.ready = True
            # Calls waiting for a tab of this site may join this one now.
            self.members.notify()
        return site, place.tab

    @staticmethod
    def _place(member: Member, site_id: str) -> PoolTab | None:
        """Take room in a tab for a call of ``site_id``: see the module's docstring for the
        order. None when the call has to wait."""
        while True:
            joinable: PoolTab | None = None
            idle: PoolTab | None = None
            per_tab = member.per_tab
            for place in member.tabs:
                if place.retired or not place.ready:
                    continue
                calls = place.calls
                if calls == 0:
                    if place.site == site_id:
                        joinable = place  # idle on the site: nothing better
                        break
                    if idle is None:
                        idle = place
                elif (
                    calls < per_tab
                    and place.site == site_id
                    and (joinable is None or calls < joinable.calls)
                ):
                    joinable = place
            if joinable is None or joinable.calls:
                # Before a busy tab: an idle one (navigated to the site), then a new one, so
                # that the calls spread over ``per_browser`` tabs.
                if idle is not None:
                    joinable = idle
                elif len(member.tabs) < member.tab_limit:
                    joinable = PoolTab()
                    member.tabs.append(joinable)
                elif joinable is None:
                    return None
            tab = joinable.tab
            if tab is not None and tab.closed:
                # Closed from elsewhere (another client, the page itself): never reused.
                # Looked at only for the tab chosen, which is all a call needs.
                joinable.retired = joinable.gone = True
                if not joinable.calls:
                    member.tabs.remove(joinable)
                continue
            if joinable is idle:
                joinable.ready = False  # to be navigated by this call
            joinable.site = site_id
            joinable.calls += 1
            return joinable

    def release(self, lease: Lease) -> None:
        """Give the slot back; keep the tab for reuse unless it is discarded or stale.

        A discarded tab takes no more calls, and is closed once the last call in it ended.
        """
        member = lease.member
        member.in_flight -= 1
        place = lease.place
        if place is not None:
            place.calls -= 1
            tab = place.tab
            if lease.gone or (tab is not None and tab.closed):
                place.retired = place.gone = True
            elif lease.discard or (tab is not None and tab.crashed):
                place.retired = True
            if place.retired and place.calls == 0:
                self._drop(member, place)
                if tab is not None and not place.gone and not tab.closed:
                    self.members.close_tab_later(tab)
        assert self._slots is not None
        self._slots.release()
        self.members.notify()

    def _drop(self, member: Member, place: PoolTab) -> None:
        # A tab of an earlier generation is in no list: its browser went with it.
        if place.calls == 0 and place in member.tabs:
            member.tabs.remove(place)
            self.members.notify()
