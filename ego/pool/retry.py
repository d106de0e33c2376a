"""Running one prepared call on the pool, with the retry rules.

When the browser or tab under a call dies, a ``read`` call runs again on another browser (up
to ``retries`` times); a ``write`` or ``irreversible`` call that was already sent is not
repeated and fails with :class:`~ego.errors.NotRetriedError`, because it may or may not have
run and only the caller can check.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from typing import Any

from ..calls import ToolCall
from ..errors import (
    BrowserClosedError,
    ContextDestroyedError,
    NotRetriedError,
    TabClosedError,
    TargetCrashedError,
)
from ..learning.catalog.manifest import ToolSpec
from ..learning.health.origin import front_end
from .scheduling import Scheduler
from .types import PoolStats

__all__ = ["Runner", "not_retried"]

logger = logging.getLogger("ego.pool")

_NONE: frozenset[tuple[int, int]] = frozenset()


class Runner:
    """Runs prepared calls in the scheduler's slots and applies the retry rules.

    Args:
        scheduler: where calls get their browser and tab.
        retries: how many times a read call is repeated after its browser or tab died.
        stats: the pool's counters.
    """

    def __init__(self, scheduler: Scheduler, *, retries: int, stats: PoolStats) -> None:
        self.scheduler = scheduler
        self.retries = retries
        self.stats = stats

    @property
    def concurrency(self) -> int:
        """Calls in flight over the whole pool at most."""
        return self.scheduler.concurrency

    @property
    def closing(self) -> bool:
        """True once the pool is closing."""
        return self.scheduler.members.closing

    async def run(
        self,
        call: ToolCall,
        *,
        on_send: Callable[[], None] | None = None,
        attempts_out: list[int] | None = None,
    ) -> tuple[Any, int, int]:
        """Run ``call`` with retries; return (value, attempts, index of the browser).

        Args:
            call: a prepared call (every browser-free check passed).
            on_send: called right before the tool is sent to a browser, each attempt.
            attempts_out: its first item is kept equal to the attempts made so far (the
                count survives an exception).

        Raises:
            NotRetriedError: a write or irreversible call cut short after it was sent.
            BrowserClosedError: the pool closed while the call ran, or a read call's browser
                died more often than ``retries`` allows.
            PoolExhaustedError: no browser is left and none could be replaced.
            Everything :meth:`ego.site.Site.run_call` raises.
        """
        # The runs are the pool's in the tools' health, unless a batch (or another front
        # end) drives the pool.
        with front_end("pool", unless_named=True):
            return await self._run(call, on_send, attempts_out)

    async def _run(
        self,
        call: ToolCall,
        on_send: Callable[[], None] | None,
        attempts_out: list[int] | None,
    ) -> tuple[Any, int, int]:
        scheduler = self.scheduler
        ref = call.ref
        site_id, tool, spec, manifest = ref.site_id, ref.tool, ref.spec, ref.manifest
        attempts = 0
        avoid: AbstractSet[tuple[int, int]] = _NONE  # made on the first retry: most have none
        while True:
            attempts += 1
            if attempts_out is not None:
                attempts_out[0] = attempts
            lease = scheduler.take(avoid) or await scheduler.acquire(avoid)
            member = lease.member
            sent = False
            try:
                # A hot pool has a tab ready on the site: no await, no navigation.
                ready = scheduler.tab_now(lease, manifest)
                site, tab = ready if ready is not None else await scheduler.tab(lease, manifest)
                if on_send is not None:
                    on_send()
                # From here on the tool may run: a write cut short now is never repeated.
                sent = True
                value = await site.run_call(call, tab)
            except (
                BrowserClosedError,
                TabClosedError,
                TargetCrashedError,
                ContextDestroyedError,
            ) as exc:
                if isinstance(exc, TabClosedError):
                    lease.gone = True  # Browser marks it closed a moment later
                if isinstance(exc, TargetCrashedError):
                    lease.discard = True  # the renderer died: the tab is closed, not reused
                if self.closing:
                    self.stats.count(ok=False)
                    raise BrowserClosedError(
                        f"{site_id}/{tool} stopped: the pool was closed while it ran"
                    ) from exc
                if isinstance(exc, ContextDestroyedError) and spec.side_effect != "read":
                    # A write tool that navigates its own page (a form post) ends up here;
                    # the browser is fine and the error says what happened.
                    self.stats.count(ok=False)
                    raise
                if sent and spec.side_effect != "read":
                    self.stats.not_retried += 1
                    self.stats.count(ok=False)
                    raise not_retried(site_id, tool, spec, exc) from exc
                if attempts > self.retries:
                    self.stats.count(ok=False)
                    raise type(exc)(
                        f"{site_id}/{tool} gave up after {attempts} attempts "
                        f"(retries={self.retries}): {exc}"
                    ) from exc
                self.stats.retried += 1
                if not isinstance(exc, TargetCrashedError):
                    # One renderer crashed, not the browser: its other tabs are fine.
                    avoid = {*avoid, (member.index, lease.generation)}
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
                self.stats.count(ok=False)
                raise
            except BaseException:
                self.stats.count(ok=False)
                raise
            finally:
                scheduler.release(lease)
            member.calls += 1
            self.stats.count(ok=True)
            return value, attempts, member.index


def not_retried(site_id: str, tool: str, spec: ToolSpec, exc: BaseException) -> NotRetriedError:
    """The error for a write or irreversible call cut short by ``exc`` after it was sent."""
    if isinstance(exc, TargetCrashedError):
        what = "its tab crashed"
    elif isinstance(exc, TabClosedError):
        what = "its tab closed"
    else:
        what = "the browser died"
    return NotRetriedError(
        f"not retried: {site_id}/{tool} is a{'n' if spec.side_effect == 'irreversible' else ''} "
        f"{spec.side_effect} tool and {what} mid-call; it may or may not have run (check "
        "before running it again)",
        site_id=site_id,
        tool=tool,
        side_effect=spec.side_effect,
    )
