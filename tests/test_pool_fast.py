"""ego.pool without Chrome: the pool's rules over mock browsers (tests/helpers/cdp_mock.py).

Every pool browser here is a real :class:`ego.api.Browser` on a :class:`MockChannel`, so the
whole call path runs (slots, tabs, navigation, the site layer, the error contract) and only
the page is Python. The ``pool-test`` site's tools are answered by :class:`Fleet`: an id
starting with ``h`` is held in flight until the test releases it, ``boom`` throws, anything
else answers at once. Nothing waits on the clock: tests wait for what the mock saw.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import inspect
import json
import shutil
import types
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, cast

import pytest

import ego
import ego.site.placement as placement_module
from ego.errors import (
    BrowserClosedError,
    BrowserToolError,
    ConfirmationRequiredError,
    ConnectionFailedError,
    InvalidArgsError,
    NotRetriedError,
    PoolExhaustedError,
    UnknownToolError,
)
from ego.learning.catalog.registry import Learnings
from ego.pool import BrowserPool, PoolResult
from ego.pool.scheduling import _Slots
from ego.pool.sources import member_specs
from ego.protocol.chrome import LaunchOptions
from ego.protocol.wire import redact
from tests.helpers.cdp_mock import Evaluation, MockChannel
from tests.helpers.paths import POOL_LEARNINGS
from tests.helpers.pool import START, WAIT, Fleet, hold, product


@pytest.fixture
def fleet() -> Iterator[Fleet]:
    made = Fleet()
    yield made
    made.release_all()


# -- the package and its constructor -------------------------------------------------------


def test_import_ego_pool_gives_the_module() -> None:
    module = importlib.import_module("ego.pool")
    assert isinstance(module, types.ModuleType)
    assert ego.pool is module
    assert module.BrowserPool is ego.BrowserPool
    assert not hasattr(module, "pool")
    assert "pool" not in ego.__all__


def test_the_constructor_turns_keywords_into_one_launch_options_and_endpoints() -> None:
    made = BrowserPool(
        launch=2,
        profiles=["a", "b"],
        headless=False,
        args=["--x"],
        endpoints=["ws://fleet:3000/?token=SECRET", ego.Endpoint("http://h:9222", {"A": "1"}, 2)],
        launch_timeout=7.0,
        default_timeout=9.0,
        per_browser=3,
    )
    assert [member.source for member in made.members] == [
        "launch",
        "launch",
        "ws://fleet:3000/?token=***",
        "http://h:9222",
        "http://h:9222",
    ]
    assert made.size == 5
    assert made.concurrency == 15
    assert all(member.state == "starting" for member in made.members)

    base = LaunchOptions(headless=False, args=("--x",), timeout=7.0, default_timeout=9.0)
    specs = member_specs(
        launch=2,
        endpoints=["ws://e/?token=T"],
        headers={"H": "v"},
        browsers_per_endpoint=1,
        profiles=["a", "b"],
        options=base,
        connect_timeout=4.0,
    ).specs
    launched = [factory.args[0] for _, factory in specs[:2]]  # type: ignore[attr-defined]
    assert launched == [dataclasses.replace(base, profile=name) for name in ("a", "b")]
    _, connect = specs[2]
    assert connect.args == ("ws://e/?token=T",)  # type: ignore[attr-defined]
    assert connect.keywords == {  # type: ignore[attr-defined]
        "headers": {"H": "v"},
        "timeout": 4.0,
        "default_timeout": 9.0,
    }


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({}, "a pool needs browsers"),
        ({"launch": 1, "profiles": ["a", "b"]}, "profiles names 2 profiles for launch=1"),
        ({"launch": 1, "per_browser": 0}, "per_browser must be >= 1"),
        ({"launch": 1, "concurrency": 0}, "concurrency must be >= 1"),
        ({"launch": -1}, "launch must be >= 0"),
        ({"endpoints": [ego.Endpoint("ws://x/?key=K", browsers=0)]}, r"ws://x/\?key=\*\*\*"),
    ],
)
def test_the_constructor_refuses_what_cannot_work(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        BrowserPool(**options)


def test_redact_hides_credentials_and_keeps_the_rest() -> None:
    assert redact("wss://h/x?a=1&token=T&ApiKey=K&key=&b=2#frag") == (
        "wss://h/x?a=1&token=***&ApiKey=***&key=***&b=2#frag"
    )
    assert redact("ws://h:1/devtools/browser/abc") == "ws://h:1/devtools/browser/abc"


async def test_a_pool_must_be_started_before_calls() -> None:
    made = Fleet().pool(1)
    with pytest.raises(RuntimeError, match="start the pool first"):
        made.map("pool-test", "echo", [{}])
    with pytest.raises(RuntimeError, match="start the pool first"):
        await made.run_browser_tool("pool-test", "echo", {})
    async with made:
        with pytest.raises(RuntimeError, match="started already"):
            await made.start()
    assert made.closed
    assert [member.state for member in made.members] == ["closed"]


# -- scheduling ----------------------------------------------------------------------------


async def test_calls_go_to_the_least_loaded_browser_and_reuse_its_tabs(fleet: Fleet) -> None:
    async with fleet.pool(3, per_browser=3) as pool:
        calls: dict[str, asyncio.Task[Any]] = {}
        for number in range(6):
            key = f"h{number}"
            calls[key] = hold(pool, key)
            await fleet.arrived(key)
            loads = [member.in_flight for member in pool.members]
            assert max(loads) - min(loads) <= 1, loads
        assert [member.in_flight for member in pool.members] == [2, 2, 2]

        # Free browser 1: the next two calls go there, in the tabs it already has.
        on_one = [key for key in calls if fleet.member_of[fleet.where(key)] == 1]
        assert len(on_one) == 2
        for key in on_one:
            fleet.release(key)
            assert await calls.pop(key) == product(key)
        assert pool.members[1].in_flight == 0
        channel = fleet.channel_of(pool.members[1])
        tabs = set(channel.targets)
        for key in ("h6", "h7"):
            calls[key] = hold(pool, key)
            await fleet.arrived(key)
            assert fleet.where(key) is channel
        assert set(channel.targets) == tabs
        assert [member.in_flight for member in pool.members] == [2, 2, 2]

        fleet.release_all()
        for key, task in calls.items():
            assert await task == product(key)
        assert pool.stats.calls == pool.stats.succeeded == 8
        assert sum(member.calls for member in pool.members) == 8


@pytest.mark.parametrize(("concurrency", "peak"), [(None, 6), (4, 4)])
async def test_per_browser_and_concurrency_bound_the_calls_in_flight(
    fleet: Fleet, concurrency: int | None, peak: int
) -> None:
    async with fleet.pool(3, per_browser=2, concurrency=concurrency) as pool:
        assert pool.concurrency == peak
        inputs = [{"id": f"h{number}"} for number in range(20)]
        results = asyncio.create_task(collect(pool.map("pool-test", "hold_read", inputs)))
        await fleet.until(lambda: fleet.total_running == peak)
        loads = [member.in_flight for member in pool.members]
        assert sum(loads) == peak
        assert max(loads) <= 2
        fleet.release_all()
        done = await results
        assert [item.result for item in done] == [product(f"h{n}") for n in range(20)]
    # Never more than the bounds at any moment of the run, as the pages saw it.
    assert fleet.peak_total == peak
    assert fleet.peak_member == 2


async def test_a_browser_never_runs_more_than_per_browser(fleet: Fleet) -> None:
    async with fleet.pool(2, per_browser=2) as pool:
        # Browser 0 dies and its replacement is slow: meanwhile browser 1 alone takes calls,
        # and no more than its own two.
        fleet.starts = asyncio.Event()
        fleet.channel_of(pool.members[0]).kill()
        inputs = [{"id": f"h{number}"} for number in range(6)]
        results = asyncio.create_task(collect(pool.map("pool-test", "hold_read", inputs)))
        await fleet.until(lambda: fleet.total_running == 2)
        assert [member.in_flight for member in pool.members] == [0, 2]
        fleet.starts.set()
        await fleet.until(lambda: fleet.total_running == 4)
        assert [member.in_flight for member in pool.members] == [2, 2]
        fleet.release_all()
        assert all(item.ok for item in await results)
    assert fleet.peak_member == 2
    assert fleet.peak_total == 4


def tool_tab(evaluation: Evaluation) -> str:
    """The target (tab) a tool call ran in."""
    return evaluation.target.target_id


def tool_evaluations(channel: MockChannel) -> list[Evaluation]:
    return [e for e in channel.evaluations if e.tool_url is not None]


async def test_per_tab_runs_that_many_calls_in_each_of_per_browser_tabs(fleet: Fleet) -> None:
    async with fleet.pool(1, per_browser=2, per_tab=3) as pool:
        assert (pool.per_tab, pool.concurrency) == (3, 6)
        inputs = [{"id": f"h{number}"} for number in range(8)]
        results = asyncio.create_task(collect(pool.map("pool-test", "hold_read", inputs)))
        await fleet.until(lambda: fleet.total_running == 6)
        channel = fleet.channel_of(pool.members[0])
        per_tab = Counter(tool_tab(e) for e in tool_evaluations(channel))
        assert sorted(per_tab.values()) == [3, 3]  # two tabs, three calls in each
        assert {key for key, _ in fleet.arrivals} == {f"h{number}" for number in range(6)}
        fleet.release_all()
        assert [item.result for item in await results] == [product(f"h{n}") for n in range(8)]
        # The last two ran in the same two tabs: no third tab was opened.
        assert set(Counter(tool_tab(e) for e in tool_evaluations(channel))) == set(per_tab)
    assert fleet.peak_member == 6


def other_site(root: Path) -> Path:
    """A second site, on another host than ``pool-test``, with the same holding tool."""
    site = root / "other-site"
    (site / "browser-tools").mkdir(parents=True)
    shutil.copy(POOL_LEARNINGS / "pool-test" / "browser-tools" / "hold.js", site / "browser-tools")
    manifest = {
        "id": "other-site",
        "name": "Another site",
        "domains": ["localhost:1"],
        "browserTools": {
            "hold_read": {
                "description": "As pool-test's hold_read.",
                "path": "browser-tools/hold.js",
                "args": {"id": {"type": "string", "required": True}},
                "sideEffect": "read",
            }
        },
    }
    (site / "manifest.json").write_text(json.dumps(manifest))
    return root


async def test_a_shared_tab_runs_the_calls_of_one_site_at_a_time(
    fleet: Fleet, tmp_path: Path
) -> None:
    log: list[str] = []
    page = fleet.evaluate

    async def logged(evaluation: Evaluation) -> Any:
        key = evaluation.tool_args["id"]
        log.append(f"start {key}")
        try:
            return await page(evaluation)
        finally:
            log.append(f"end {key}")

    fleet.evaluate = logged  # type: ignore[method-assign]
    specs = [("mock://0", fleet.factory(0))]
    learnings = Learnings(roots=[POOL_LEARNINGS, other_site(tmp_path)])
    pool = BrowserPool.from_factories(specs, learnings=learnings, per_browser=1, per_tab=4)
    pool.set_start_url("pool-test", START)
    pool.set_start_url("other-site", "http://localhost:1/other")
    async with pool:
        first = hold(pool, "h-a")
        await fleet.arrived("h-a")
        second = asyncio.create_task(
            pool.run_browser_tool("other-site", "hold_read", {"id": "h-b"})
        )
        also = hold(pool, "h-c")  # the same site as the tab's: it joins
        await fleet.arrived("h-c")
        # The other site's call holds a slot and waits: the only tab runs pool-test's calls.
        assert pool.members[0].in_flight == 3
        fleet.release("h-a")
        assert await first == product("h-a")
        fleet.release("h-c")
        assert await also == product("h-c")
        await fleet.arrived("h-b")
        fleet.release("h-b")
        assert await second == product("h-b")
        assert log == ["start h-a", "start h-c", "end h-a", "end h-c", "start h-b", "end h-b"]
        channel = fleet.channel_of(pool.members[0])
        tabs = {tool_tab(e) for e in tool_evaluations(channel)}
        assert len(tabs) == 1  # the one tab, navigated to the other site once it was idle
        assert channel.targets[tabs.pop()].url == "http://localhost:1/other"


async def test_a_cancelled_call_in_a_shared_tab_closes_it_after_the_others(fleet: Fleet) -> None:
    async with fleet.pool(1, per_browser=1, per_tab=2) as pool:
        cancelled, kept = hold(pool, "h-x"), hold(pool, "h-y")
        await fleet.arrived("h-x")
        await fleet.arrived("h-y")
        channel = fleet.channel_of(pool.members[0])
        shared = tool_tab(tool_evaluations(channel)[0])
        cancelled.cancel()
        with pytest.raises(asyncio.CancelledError):
            await cancelled
        # Its tab takes no more calls, but the other call in it runs on: no close of it was
        # even started.
        await asyncio.gather(*pool._members._closers)
        later = hold(pool, "h-z")
        assert not any(c["method"] == "Target.closeTarget" for c in channel.commands)
        assert fleet.counts["h-z"] == 0
        fleet.release("h-y")
        assert await kept == product("h-y")
        assert fleet.counts["h-y"] == 1  # it ran on in that tab: not cut short, not retried
        assert pool.stats.retried == 0
        # Once it ended, the tab is closed and the waiting call gets a new one.
        await fleet.arrived("h-z")
        closed = [c for c in channel.commands if c["method"] == "Target.closeTarget"]
        assert [c["params"]["targetId"] for c in closed] == [shared]
        fleet.release_all()
        assert await later == product("h-z")
        assert fleet.where("h-z") is channel
        assert tool_tab(tool_evaluations(channel)[-1]) != shared
        assert pool.members[0].in_flight == 0


async def test_a_tab_closed_while_idle_is_not_given_to_the_next_call(fleet: Fleet) -> None:
    async with fleet.pool(1, per_browser=1) as pool:
        assert await pool.run_browser_tool("pool-test", "echo", {}) is not None
        browser = pool.members[0].browser
        assert browser is not None
        [idle] = [tab for tab in await browser.tabs() if tab.url == START]
        await idle.close()  # by someone else than the pool
        # A write must not be sent to a closed tab: it would fail after "sending" and could
        # not be retried.
        write = await pool.run_browser_tool("pool-test", "hold_write", {"id": "w-after"})
        assert write == product("w-after")
        assert fleet.counts["w-after"] == 1
        channel = fleet.channel_of(pool.members[0])
        assert tool_tab(tool_evaluations(channel)[-1]) != idle.target_id


async def test_a_slot_handed_to_a_cancelled_waiter_goes_to_the_next() -> None:
    slots = _Slots(1)
    assert slots.take()
    assert not slots.take()
    first, second = slots.acquire(), slots.acquire()
    # Both wait (driven by hand: each runs to its first suspension).
    first.send(None)
    second.send(None)
    slots.release()  # handed to the first waiter, which is cancelled before it resumes
    with pytest.raises(asyncio.CancelledError):
        first.throw(asyncio.CancelledError())
    with pytest.raises(StopIteration):
        second.send(None)  # it got the slot the first one passed on
    assert not slots.take()
    slots.release()
    assert slots.take()


def test_a_start_url_names_the_sites_domain_for_visit_and_the_pool(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    learnings = Learnings(roots=[POOL_LEARNINGS])
    manifest = learnings.site("pool-test")
    site = ego.Site(cast(ego.Browser, None), learnings)
    tab = cast(ego.Tab, types.SimpleNamespace(url="http://127.0.0.1:1/page"))
    assert site.domains(manifest) == manifest.domains == ("127.0.0.1",)
    assert site.on_site(tab, manifest)
    parsed: list[str | None] = []
    monkeypatch.setattr(placement_module, "domain_of", lambda url: parsed.append(url) or "x:1")
    site.set_start_url("pool-test", "http://x:1/")
    # Parsed once, when set: the pool asks for every call.
    for _ in range(3):
        assert site.domains(manifest) == ("x:1",)
        assert not site.on_site(tab, manifest)
    assert parsed == ["http://x:1/"]
    monkeypatch.undo()
    site.set_start_url("pool-test", "about:blank")  # no host: the manifest's domains again
    assert site.domains(manifest) == ("127.0.0.1",)


def test_pool_result_takes_the_fields_it_declares() -> None:
    # PoolResult writes its __init__ out (for speed): it must take exactly its fields.
    fields = dataclasses.fields(PoolResult)
    parameters = list(inspect.signature(PoolResult.__init__).parameters.values())[1:]
    assert [p.name for p in parameters] == [f.name for f in fields]
    assert [p.default for p in parameters] == [
        inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default for f in fields
    ]
    item = PoolResult(3, {"a": 1}, False, error=ValueError("x"), ms=2.5, attempts=2, browser=1)
    assert dataclasses.asdict(dataclasses.replace(item, error=None)) == {
        "index": 3,
        "args": {"a": 1},
        "ok": False,
        "result": None,
        "error": None,
        "ms": 2.5,
        "attempts": 2,
        "browser": 1,
    }
    with pytest.raises(dataclasses.FrozenInstanceError):
        item.ok = True  # type: ignore[misc]


# -- retries -------------------------------------------------------------------------------


async def test_a_read_is_retried_on_another_browser_after_a_kill(fleet: Fleet) -> None:
    async with fleet.pool(2, per_browser=2) as pool:
        call = hold(pool, "h1")
        await fleet.arrived("h1")
        first = fleet.where("h1")
        first.kill()
        await fleet.arrived("h1", 2)
        second = fleet.where("h1")
        assert second is not first
        assert not second.closed
        fleet.release_all()
        assert await call == product("h1")
        assert pool.stats.retried == 1
        assert pool.stats.succeeded == 1


async def test_a_write_cut_short_is_not_retried(fleet: Fleet) -> None:
    async with fleet.pool(2) as pool:
        with pytest.raises(ConfirmationRequiredError):
            await pool.run_browser_tool("pool-test", "hold_irreversible", {"id": "h-i"})
        assert fleet.counts["h-i"] == 0

        # The browser dies under a write.
        call = hold(pool, "h-w1", "hold_write")
        await fleet.arrived("h-w1")
        fleet.where("h-w1").kill()
        with pytest.raises(NotRetriedError) as caught:
            await call
        assert str(caught.value).startswith(
            "not retried: pool-test/hold_write is a write tool and the browser died mid-call"
        )
        assert caught.value.side_effect == "write"

        # The tab closes under an irreversible call.
        call = hold(pool, "h-i2", "hold_irreversible", confirm=True)
        await fleet.arrived("h-i2")
        evaluation = next(
            e for e in fleet.where("h-i2").evaluations if e.tool_args == {"id": "h-i2"}
        )
        evaluation.channel.close_target(evaluation.target.target_id)
        with pytest.raises(NotRetriedError, match="is an irreversible tool and its tab closed"):
            await call

        assert fleet.counts["h-w1"] == fleet.counts["h-i2"] == 1
        assert pool.stats.not_retried == 2
        assert pool.stats.retried == 0


@pytest.mark.parametrize("retries", [0, 2])
async def test_retries_bound_the_attempts_of_a_read(fleet: Fleet, retries: int) -> None:
    async with fleet.pool(2, retries=retries) as pool:
        call = hold(pool, "h-r")
        for attempt in range(1, retries + 2):
            await fleet.arrived("h-r", attempt)
            fleet.where("h-r").kill()
        with pytest.raises(
            BrowserClosedError, match=rf"gave up after {retries + 1} attempts \(retries={retries}\)"
        ):
            await call
        assert fleet.counts["h-r"] == retries + 1
        assert pool.stats.retried == retries
        assert pool.stats.failed == 1


# -- replacement ---------------------------------------------------------------------------


async def test_a_killed_browser_is_replaced(fleet: Fleet) -> None:
    async with fleet.pool(2) as pool:
        before = pool.members[0]
        fleet.channel_of(before).kill()
        assert pool.members[0].state == "replacing"  # noticed at once, no call in flight
        await pool.wait_ready(timeout=WAIT)
        after = pool.members[0]
        assert after.state == "ready"
        assert after.generation == 2
        assert after.browser is not before.browser
        assert pool.stats.replaced == 1
        assert len(fleet.channels) == 3
        echo = await pool.run_browser_tool("pool-test", "echo", {"n": 1})
        assert echo == {"args": {"n": 1}, "origin": "http://127.0.0.1:1"}
    assert all(channel.closed for channel in fleet.channels)


async def test_a_browser_that_cannot_be_replaced_is_given_up(fleet: Fleet) -> None:
    async with fleet.pool(1, replace_attempts=1) as pool:
        fleet.refuse = True
        fleet.channel_of(pool.members[0]).kill()
        with pytest.raises(PoolExhaustedError, match="all 1 browsers of the pool are gone"):
            await pool.run_browser_tool("pool-test", "echo", {})
        member = pool.members[0]
        assert member.state == "failed"
        assert "refused to start" in member.last_error

    # No browser starts at all: start() raises the first error and leaves nothing behind.
    with pytest.raises(ConnectionFailedError, match="refused to start"):
        async with fleet.pool(2):
            pass


@pytest.mark.parametrize(
    ("options", "waits"),
    [({}, [0.5, 2.0]), ({"replace_attempts": 5}, [0.5, 2.0, 5.0, 5.0])],
    ids=["default", "five-attempts"],
)
async def test_replacement_attempts_wait_0_then_half_a_second_2_then_5_s(
    fleet: Fleet, monkeypatch: pytest.MonkeyPatch, options: dict[str, Any], waits: list[float]
) -> None:
    # A patched clock: each wait is noted and passes at once (docs/fleet.md gives these).
    real_sleep, waited = asyncio.sleep, []

    async def noted(delay: float, result: Any = None) -> Any:
        waited.append(delay)
        return await real_sleep(0, result)

    monkeypatch.setattr(asyncio, "sleep", noted)
    async with fleet.pool(1, **options) as pool:
        fleet.refuse = True
        fleet.channel_of(pool.members[0]).kill()
        with pytest.raises(PoolExhaustedError):
            await pool.run_browser_tool("pool-test", "echo", {})
    assert [delay for delay in waited if delay] == waits  # the first attempt does not wait


# -- map -----------------------------------------------------------------------------------


async def collect(results: Any) -> list[PoolResult]:
    return [item async for item in results]


async def test_map_yields_in_input_order_or_as_calls_finish(fleet: Fleet) -> None:
    async with fleet.pool(3, per_browser=4) as pool:
        inputs = [{"id": f"h{number}"} for number in range(10)]
        ordered = asyncio.create_task(collect(pool.map("pool-test", "hold_read", inputs)))
        await fleet.until(lambda: fleet.total_running == 10)
        for number in reversed(range(10)):  # the last input finishes first
            fleet.release(f"h{number}")
            await fleet.finished(f"h{number}")
        results = await ordered
        assert fleet.completed == [f"h{number}" for number in reversed(range(10))]
        assert [item.index for item in results] == list(range(10))
        assert [item.args for item in results] == inputs
        assert [item.result for item in results] == [product(f"h{n}") for n in range(10)]
        assert all(item.ok and item.attempts == 1 and item.browser >= 0 for item in results)

        inputs = [{"id": f"h1{number}"} for number in range(5)]
        seen: list[int] = []

        async def consume() -> None:
            async for item in pool.map("pool-test", "hold_read", inputs, ordered=False):
                seen.append(item.index)
                if item.index:
                    fleet.release(f"h1{item.index - 1}")

        consumer = asyncio.create_task(consume())
        await fleet.until(lambda: fleet.total_running == 5)
        fleet.release("h14")
        await asyncio.wait_for(consumer, WAIT)
        assert seen == [4, 3, 2, 1, 0]


async def test_an_ordered_map_runs_at_most_its_window_ahead(fleet: Fleet) -> None:
    # Two slots, so a window of 8: while input 0 is held, inputs 1..7 finish and nothing
    # after them is read.
    async with fleet.pool(2, per_browser=1) as pool:
        received = 0
        reads: list[tuple[int, int]] = []

        def inputs() -> Iterator[dict[str, str]]:
            for number in range(30):
                reads.append((number, received))
                yield {"id": "h0" if number == 0 else f"q{number}"}

        async def consume() -> list[PoolResult]:
            nonlocal received
            results = []
            async for item in pool.map("pool-test", "hold_read", inputs()):
                received += 1
                results.append(item)
            return results

        consumer = asyncio.create_task(consume())
        await fleet.finished("q7")
        assert len(reads) == 8
        assert received == 0
        fleet.release("h0")
        results = await asyncio.wait_for(consumer, WAIT)
        assert [item.index for item in results] == list(range(30))
        assert all(number - seen < 8 for number, seen in reads), reads


async def test_awaiting_a_map_runs_past_a_slow_item_and_gives_input_order(fleet: Fleet) -> None:
    # Two slots: the window an ordered stream keeps would stop the calls at q7 while h0 is
    # held; awaiting the whole list has nothing to gain from that and runs them all.
    async with fleet.pool(2, per_browser=1) as pool:
        inputs = [{"id": "h0"}, *({"id": f"q{number}"} for number in range(1, 20))]
        results = asyncio.ensure_future(pool.map("pool-test", "hold_read", inputs))
        await fleet.finished("q19")
        assert not results.done()
        fleet.release("h0")
        done = await asyncio.wait_for(results, WAIT)
        assert [item.index for item in done] == list(range(20))
        assert [item.args for item in done] == inputs
        assert fleet.completed[-1] == "h0"


async def test_an_unordered_map_runs_at_most_its_window_ahead_of_its_consumer(
    fleet: Fleet,
) -> None:
    # One slot, so a window of 4: a consumer that stops taking results holds back the calls.
    async with fleet.pool(1, per_browser=1) as pool:
        received = 0
        reads: list[tuple[int, int]] = []

        def inputs() -> Iterator[dict[str, str]]:
            for number in range(20):
                reads.append((number, received))
                yield {"id": f"q{number}"}

        go = asyncio.Event()

        async def consume() -> list[int]:
            nonlocal received
            seen: list[int] = []
            async for group in pool.map("pool-test", "hold_read", inputs(), ordered=False).groups():
                assert group
                seen += [item.index for item in group]
                received += len(group)
                await go.wait()
            return seen

        consumer = asyncio.create_task(consume())
        await fleet.until(lambda: received > 0 and len(fleet.completed) == received + 4)
        assert len(reads) == received + 4
        go.set()
        assert sorted(await asyncio.wait_for(consumer, WAIT)) == list(range(20))
        assert all(number - seen < 4 for number, seen in reads), reads


async def test_groups_give_every_result_once_in_order_and_the_map_iterates_once(
    fleet: Fleet,
) -> None:
    async with fleet.pool(2, per_browser=2) as pool:
        results = pool.map("pool-test", "hold_read", [{"id": f"g{n}"} for n in range(30)])
        groups = [group async for group in results.groups()]
        assert all(groups)
        assert [item.index for group in groups for item in group] == list(range(30))
        assert all(item.ok for group in groups for item in group)
        with pytest.raises(RuntimeError, match="iterated once"):
            results.groups()
        with pytest.raises(RuntimeError, match="iterated once"):
            aiter(results)


async def test_async_inputs_are_read_one_at_a_time_by_many_workers(fleet: Fleet) -> None:
    async with fleet.pool(2, per_browser=2) as pool:
        reading = asyncio.Event()
        gate = asyncio.Event()

        async def inputs() -> AsyncIterator[dict[str, str]]:
            for number in range(4):
                yield {"id": f"h{number}"}
            # A slow read while every worker is done with its call and wants the next input:
            # an async generator refuses a second __anext__ meanwhile.
            reading.set()
            await gate.wait()
            for number in range(4, 10):
                yield {"id": f"q{number}"}

        results = asyncio.create_task(collect(pool.map("pool-test", "hold_read", inputs())))
        await fleet.until(lambda: fleet.total_running == 4)
        fleet.release("h0")
        await asyncio.wait_for(reading.wait(), WAIT)
        for number in range(1, 4):
            fleet.release(f"h{number}")
            await fleet.finished(f"h{number}")
        gate.set()
        done = await asyncio.wait_for(results, WAIT)
        assert [item.index for item in done] == list(range(10))
        assert all(item.ok for item in done), [item.error for item in done]


async def test_leaving_a_map_early_cancels_its_calls(fleet: Fleet) -> None:
    async with fleet.pool(2, per_browser=2) as pool:
        read = 0

        def inputs() -> Iterator[dict[str, str]]:
            nonlocal read
            while True:
                yield {"id": f"h{read}"}
                read += 1

        results = pool.map("pool-test", "hold_read", inputs())

        async def first() -> PoolResult:
            async with results:
                async for item in results:
                    return item
            raise AssertionError("the map ended")

        consumer = asyncio.create_task(first())
        await fleet.until(lambda: fleet.total_running == pool.concurrency)
        fleet.release("h0")
        item = await asyncio.wait_for(consumer, WAIT)
        assert (item.index, item.result) == (0, product("h0"))
        # The calls still held were cancelled: their tabs, where the tool may still run,
        # are closed rather than reused, which ends them in the page too.
        await fleet.until(lambda: fleet.total_running == 0)
        cancelled = len(fleet.arrivals) - 1
        assert cancelled >= pool.concurrency - 1
        assert read <= pool.concurrency + 1
        assert fleet.completed == ["h0"]
        assert all(member.in_flight == 0 for member in pool.members)
        assert pool.stats.failed == pool.stats.calls - 1
        closed = [
            command
            for channel in fleet.channels
            for command in channel.commands
            if command["method"] == "Target.closeTarget"
        ]
        assert len(closed) >= cancelled
        # The pool is still usable.
        echo = await pool.run_browser_tool("pool-test", "echo", {"after": True})
        assert echo["args"] == {"after": True}


async def test_closing_a_map_while_it_reads_an_input_ends_cleanly(fleet: Fleet) -> None:
    async with fleet.pool(1) as pool:
        asked, never = asyncio.Event(), asyncio.Event()
        ended: list[str] = []

        async def inputs() -> AsyncIterator[dict[str, str]]:
            try:
                yield {"id": "a"}
                asked.set()
                await never.wait()  # the next input never comes
                yield {"id": "b"}
            except asyncio.CancelledError:
                ended.append("cancelled")
                raise

        results = pool.map("pool-test", "hold_read", inputs(), ordered=False)
        iterator = aiter(results)
        first = await asyncio.wait_for(anext(iterator), WAIT)
        await asyncio.wait_for(asked.wait(), WAIT)
        await results.aclose()  # the read in progress is stopped; closing raises nothing
        assert first.result == product("a")
        assert ended == ["cancelled"]


async def test_a_key_that_is_not_a_string_is_invalid_args_and_never_sent(fleet: Fleet) -> None:
    async with fleet.pool(1) as pool:
        with pytest.raises(InvalidArgsError, match=r"args key 1 \(int\) is not a string"):
            await pool.run_browser_tool("pool-test", "hold_read", {"id": "a", 1: "x"})
        inputs: list[dict[Any, Any]] = [{"id": "a"}, {"id": "b", None: "x"}]
        results = await pool.map("pool-test", "hold_read", inputs)
        assert [item.ok for item in results] == [True, False]
        assert isinstance(results[1].error, InvalidArgsError)
        assert "args key None (NoneType) is not a string" in str(results[1].error)
        assert (results[1].attempts, results[1].browser) == (0, -1)  # never sent
        assert [key for key, _ in fleet.arrivals] == ["a"]


async def test_map_captures_errors_per_item(fleet: Fleet) -> None:
    async with fleet.pool(2) as pool:
        with pytest.raises(UnknownToolError):
            pool.map("pool-test", "no_such_tool", [])
        inputs: list[dict[str, Any] | None] = [{"id": "a"}, {"id": 5}, {"id": "boom"}, {"id": "b"}]
        results = await pool.map("pool-test", "hold_read", inputs)
        assert [item.index for item in results] == [0, 1, 2, 3]
        assert [item.ok for item in results] == [True, False, False, True]
        assert results[0].result == product("a")
        assert isinstance(results[1].error, InvalidArgsError)
        assert (results[1].attempts, results[1].browser) == (0, -1)  # never sent
        error = results[2].error
        assert isinstance(error, BrowserToolError)
        assert "threw TypeError: the page broke" in str(error)
        assert results[2].attempts == 1
        assert results[3].result == product("b")
        assert fleet.counts["boom"] == 1  # a tool error is not a dead browser: no retry
        assert pool.stats.retried == 0
