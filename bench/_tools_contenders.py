"""The contenders of ``bench_tools.py`` and the interleaved rounds that time them.

:class:`Bench` holds everything a call needs and gives every call a fresh ``n``; its methods
are the contenders (ego's hot call, ego's evaluate, the raw loops over a websocket and over a
pipe, Playwright) and the steps of
the breakdown. :func:`run_rounds` times :class:`Entry` objects taking turns call by call.
"""

from __future__ import annotations

import gc
import itertools
import statistics
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from _common import Call, RawCDP, RawPipeCDP, latency_stats, rotated, split, spread
from _tools_site import SITE_ID, TOOLS

import ego
from ego.learning.catalog.registry import LoadedSource
from ego.runtime.cache import cache_key, call_snippet, hot_snippet, store_snippet
from ego.runtime.js import embed_json, wrap

if TYPE_CHECKING:
    from playwright.async_api import Page

__all__ = ["Bench", "CallWith", "Entry", "check", "run_rounds", "take_turns"]


@dataclass
class Entry:
    tool: str  # "small" or "padded"
    contender: str
    call: Call
    latencies_ns: list[int] = field(default_factory=list)
    cpu_ns: list[int] = field(default_factory=list)  # CPU time of this Python process
    round_medians_us: list[float] = field(default_factory=list)  # one per timed round

    def stats(self) -> dict[str, Any]:
        stats: dict[str, Any] = dict(latency_stats(self.latencies_ns))
        stats["python_cpu_median_us"] = statistics.median(self.cpu_ns) / 1000
        rounds = spread(self.round_medians_us)
        stats["round_median_us"] = rounds["median"]
        stats["round_min_us"] = rounds["min"]
        stats["round_max_us"] = rounds["max"]
        stats["round_medians_us"] = list(self.round_medians_us)
        return stats


@dataclass
class Bench:
    """Everything the calls need, and a counter that gives every call a fresh ``n``.

    Every call method takes the tool kind and an optional ``n`` (default: the next count)
    and answers what the page answered, ``n + 1`` when all is well.
    """

    browser: ego.Browser
    site: ego.Site
    tab: ego.Tab
    raw: RawCDP
    page: Page | None
    sources: dict[str, LoadedSource]
    # ego's site and the same tab through a second browser attached over the websocket.
    ws_site: ego.Site | None = None
    ws_tab: ego.Tab | None = None
    # The raw pipe loop, on a Chromium of its own at the same page.
    raw_pipe: RawPipeCDP | None = None
    counter: Iterator[int] = field(default_factory=lambda: itertools.count(100))
    not_cached: int = 0

    def _n(self, n: int | None) -> int:
        return next(self.counter) if n is None else n

    def wrapped(self, kind: str, n: int) -> str:
        """The plain wrap of the tool with ``{"n": n}``: what raw and Playwright send."""
        loaded = self.sources[kind]
        return wrap(loaded.expression, {"n": n}, url=loaded.url)

    def hot_call(self, kind: str, n: int) -> str:
        """ego's hot Call for ``{"n": n}``, as the cache layer builds it (what a hot call
        sends to a document that already ran the tool)."""
        loaded = self.sources[kind]
        key = cache_key(loaded.site_id, loaded.tool)
        return hot_snippet(key, loaded.version, embed_json({"n": n}))

    # The contenders (sections 1 and 2).

    async def ego_hot(self, kind: str, n: int | None = None) -> Any:
        return await self._hot(self.site, self.tab, kind, n)

    async def ego_hot_bare(self, kind: str, n: int | None = None) -> Any:
        """ego's hot call and nothing around it: section 5 checks that it stayed hot by the
        commands it sent (one each), outside the timing, rather than reading last_run."""
        return await self.site.run_browser_tool(
            SITE_ID, TOOLS[kind], {"n": self._n(n)}, tab=self.tab
        )

    async def ego_hot_ws(self, kind: str, n: int | None = None) -> Any:
        """ego's hot call over the websocket, on the same tab."""
        assert self.ws_site is not None
        assert self.ws_tab is not None
        return await self._hot(self.ws_site, self.ws_tab, kind, n)

    async def _hot(self, site: ego.Site, tab: ego.Tab, kind: str, n: int | None) -> Any:
        result = await site.run_browser_tool(SITE_ID, TOOLS[kind], {"n": self._n(n)}, tab=tab)
        last = site.last_run
        if last is None or last.mode != "cached" or last.evaluations != 1:
            self.not_cached += 1
        return result

    async def raw_call(self, kind: str, n: int | None = None) -> Any:
        return await self.raw.evaluate(self.wrapped(kind, self._n(n)), await_promise=True)

    async def raw_pipe_call(self, kind: str, n: int | None = None) -> Any:
        """The raw pipe loop: ego's hot Call, on its own Chromium over the debugging pipe.

        The same JavaScript ego's hot call sends (its page was primed by
        :meth:`prime_raw_pipe`), so the page does the same work and the difference is ego's.
        """
        assert self.raw_pipe is not None
        return await self.raw_pipe.evaluate(self.hot_call(kind, self._n(n)), await_promise=True)

    async def prime_raw_pipe(self) -> None:
        """Store every tool in the raw pipe loop's page and install the loader there (the
        Store and the full Call, once), so that its hot Calls find them."""
        assert self.raw_pipe is not None
        for kind, loaded in self.sources.items():
            key = cache_key(loaded.site_id, loaded.tool)
            stored = await self.raw_pipe.evaluate(
                store_snippet(key, loaded.version, loaded.expression, loaded.url)
            )
            value = await self.raw_pipe.evaluate(
                call_snippet(key, loaded.version, embed_json({"n": 1})), await_promise=True
            )
            if stored != "stored" or value != 2:
                raise SystemExit(f"raw pipe loop, {kind}: priming gave {stored!r}, {value!r}")

    async def ego_eval(self, kind: str, n: int | None = None) -> Any:
        """ego's ``Tab.evaluate`` of the plain wrap: ego's transport without the Site layer."""
        return await self.tab.evaluate(self.wrapped(kind, self._n(n)))

    async def ego_eval_ws(self, kind: str, n: int | None = None) -> Any:
        """``ego_eval`` over the websocket, on the same tab."""
        assert self.ws_tab is not None
        return await self.ws_tab.evaluate(self.wrapped(kind, self._n(n)))

    async def raw_concurrent(self, kind: str, n: int | None = None) -> Any:
        """The raw loop for calls in flight (its reader task must be running)."""
        return await self.raw.evaluate_concurrent(
            self.wrapped(kind, self._n(n)), await_promise=True
        )

    async def playwright_call(self, kind: str, n: int | None = None) -> Any:
        assert self.page is not None
        return await self.page.evaluate(self.wrapped(kind, self._n(n)))

    # The steps of the breakdown (section 3).

    async def ego_evaluate_snippet(self, kind: str, n: int | None = None) -> Any:
        return await self.tab.evaluate(self.hot_call(kind, self._n(n)))

    async def raw_snippet(self, kind: str, n: int | None = None) -> Any:
        return await self.raw.evaluate(self.hot_call(kind, self._n(n)), await_promise=True)

    async def ego_plain(self, kind: str, n: int | None = None) -> Any:
        """run_browser_tool with the cache off: the plain wrap through all of ego."""
        return await self.site.run_browser_tool(
            SITE_ID, TOOLS[kind], {"n": self._n(n)}, tab=self.tab, cache=False
        )


CallWith = Callable[[str, int | None], Awaitable[Any]]


async def check(bench: Bench, kind: str, calls: dict[str, CallWith]) -> None:
    """Every call must really compute n + 1; ego's hot call must send the Call snippet only."""
    for n in (7, 8):
        for name, call in calls.items():
            not_cached = bench.not_cached
            value = await call(kind, n)
            if value != n + 1:
                raise SystemExit(f"{name}, {TOOLS[kind]}: n={n} gave {value!r}, not {n + 1}")
            if bench.not_cached != not_cached:
                raise SystemExit(f"{name}, {TOOLS[kind]}: the hot call was not cached")


async def take_turns(entries: list[Entry], count: int, record: bool) -> None:
    """``count`` calls of each entry, the entries taking turns call by call (order rotating)."""
    clock, cpu_clock = time.perf_counter_ns, time.process_time_ns
    for index in range(count):
        for entry in rotated(entries, index):
            cpu = cpu_clock()
            start = clock()
            await entry.call()
            elapsed = clock() - start
            if record:
                entry.cpu_ns.append(cpu_clock() - cpu)
                entry.latencies_ns.append(elapsed)


async def run_rounds(entries: list[Entry], calls: int, warmup: int, rounds: int) -> None:
    """Warm up, then ``calls`` timed calls per entry in ``rounds`` rounds.

    In a round each tool's entries take turns call by call, so that a burst of load from
    other programs hits them alike; the tools go in turn, their order rotating per round.
    """
    tools = list(dict.fromkeys(entry.tool for entry in entries))
    groups = {tool: [entry for entry in entries if entry.tool == tool] for tool in tools}
    for tool in tools:
        await take_turns(groups[tool], warmup, record=False)
    for index, chunk in enumerate(split(calls, rounds)):
        for tool in rotated(tools, index):
            gc.collect()
            await take_turns(groups[tool], chunk, record=True)
            for entry in groups[tool]:
                entry.round_medians_us.append(statistics.median(entry.latencies_ns[-chunk:]) / 1000)
