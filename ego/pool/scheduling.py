"""Which browser and tab run the next call: slots bounded per browser and in total.

A call takes a slot (:meth:`Scheduler.acquire`) on the least loaded ready browser, gets the
slot's tab on the tool's site (:meth:`Scheduler.tab`), and gives both back
(:meth:`Scheduler.release`): the tab is kept for the next call on that browser unless the
call left it in an unknown state.
"""

from __future__ import annotations

import asyncio
import itertools

from ..errors import BrowserClosedError, PoolExhaustedError
from ..learning.manifest import Manifest
from ..page.tab import Tab
from ..site import Site
from .members import Member, Members

__all__ = ["Lease", "Scheduler"]

_NOT_STARTED = "start the pool first: async with ego.BrowserPool(...) as pool:"


class Lease:
    """One call's slot on one browser generation, and the tab it runs in."""

    __slots__ = ("discard", "generation", "member", "tab")

    def __init__(self, member: Member, generation: int) -> None:
        self.member = member
        self.generation = generation
        self.tab: Tab | None = None
        # Set when the call ended in a way that leaves the tab in an unknown state (cancelled,
        # or failed while being navigated): the tab is closed instead of being reused.
        self.discard = False


class Scheduler:
    """Hands out slots: ``capacity`` per browser (the members' own), ``concurrency`` in all.

    Args:
        members: the pool's browsers.
        concurrency: calls in flight over the whole pool at most.
    """

    def __init__(self, members: Members, concurrency: int) -> None:
        self.members = members
        self.concurrency = concurrency
        self._slots: asyncio.Semaphore | None = None
        self._rotation = itertools.count()

    @property
    def started(self) -> bool:
        """True once :meth:`open` was called."""
        return self._slots is not None

    def open(self) -> None:
        """Make the slots (inside the event loop that will use them)."""
        self._slots = asyncio.Semaphore(self.concurrency)

    def check_started(self) -> None:
        """Raise RuntimeError unless the pool was started."""
        if self._slots is None:
            raise RuntimeError(_NOT_STARTED)

    async def acquire(self, avoid: set[tuple[int, int]]) -> Lease:
        """Wait for a free slot, preferring browsers (index, generation) not in ``avoid``.

        Raises:
            BrowserClosedError: the pool is closed.
            PoolExhaustedError: every browser was given up.
            RuntimeError: the pool was not started.
        """
        self.check_started()
        assert self._slots is not None
        await self._slots.acquire()
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
            self._slots.release()
            raise

    def _pick(self, avoid: set[tuple[int, int]]) -> Member | None:
        members = self.members.all
        ready = [m for m in members if m.state == "ready" and m.in_flight < m.capacity]
        if not ready:
            return None
        # Prefer a browser other than the one that just failed this call; when only that one
        # is left (a one-browser pool after a replacement), its new generation is fine.
        preferred = [m for m in ready if (m.index, m.generation) not in avoid] or ready
        # Least loaded first; the rotating offset spreads ties over every browser.
        offset = next(self._rotation)
        count = len(members)
        return min(preferred, key=lambda m: (m.in_flight, (m.index - offset) % count))

    def _exhausted(self) -> PoolExhaustedError:
        members = self.members
        reasons = "; ".join(f"browser {m.index} ({m.source}): {m.last_error}" for m in members.all)
        return PoolExhaustedError(
            f"all {len(members.all)} browsers of the pool are gone and could not be "
            f"replaced after {members.replace_attempts} attempts each: {reasons}"
        )

    async def tab(self, lease: Lease, manifest: Manifest) -> tuple[Site, Tab]:
        """The lease's browser's site facade and a tab of it on ``manifest``'s site.

        Raises:
            BrowserClosedError: the lease's browser generation is gone.
            Everything :meth:`ego.site.Site.visit` raises.
        """
        member = lease.member
        browser, site = member.browser, member.site
        if browser is None or site is None or member.generation != lease.generation:
            raise BrowserClosedError(f"pool browser {member.index} went away")
        if lease.tab is None:
            lease.tab = member.free_tabs.pop() if member.free_tabs else await browser.new_tab()
        try:
            await site.visit(lease.tab, manifest)
        except BaseException:
            # A navigation cut short may still land later and abort the next one.
            lease.discard = True
            raise
        return site, lease.tab

    def release(self, lease: Lease) -> None:
        """Give the slot back; keep the tab for reuse unless it is discarded or stale."""
        member = lease.member
        member.in_flight -= 1
        tab = lease.tab
        if tab is not None and not tab.closed:
            if lease.discard or tab.crashed:
                self.members.close_tab_later(tab)
            elif member.state == "ready" and member.generation == lease.generation:
                member.free_tabs.append(tab)
        assert self._slots is not None
        self._slots.release()
        self.members.notify()
