"""ego.pool: calls spread over several real headless Chromes, one of them killed mid-run.

The demo shop (``ego.demo.DemoServer``) answers the read tools; the ``pool-test`` site in
``tests/pool_learnings`` has tools that POST to ``/hold`` on a small server of this module,
which records the request and holds the answer until the test lets it go: so a write call is
known to be in flight (the server saw it) when its browser is killed.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import psutil
import pytest

from ego.demo import DemoServer
from ego.errors import (
    ChromeNotFoundError,
    ConfirmationRequiredError,
    InvalidArgsError,
    NotRetriedError,
    PoolExhaustedError,
    UnknownToolError,
)
from ego.learning.catalog.registry import Learnings, project_learnings_dir
from ego.pool import BrowserPool, MemberInfo, PoolResult
from tests.helpers.paths import POOL_LEARNINGS
from tests.helpers.pool import HoldServer

pytestmark = pytest.mark.chrome  # these tests launch pools of real Chromes


def pool_learnings() -> Learnings:
    """The test site first, then the project's learnings (demo-shop)."""
    return Learnings(roots=[POOL_LEARNINGS, project_learnings_dir()])


@pytest.fixture(scope="module")
def shop() -> Iterator[DemoServer]:
    with DemoServer(port=0) as server:
        yield server


@pytest.fixture
def holder() -> Iterator[HoldServer]:
    server = HoldServer()
    yield server
    server.close()


@contextlib.asynccontextmanager
async def started_pool(**options: Any) -> AsyncIterator[BrowserPool]:
    async with BrowserPool(learnings=pool_learnings(), **options) as browsers:
        yield browsers


def kill_chrome(pid: int) -> list[psutil.Process]:
    """SIGKILL a Chrome and its whole process tree, as a crash or the OOM killer would."""
    root = psutil.Process(pid)
    tree = [root, *root.children(recursive=True)]
    for process in tree:
        with contextlib.suppress(psutil.Error):
            process.kill()
    return tree


def alive(processes: list[psutil.Process]) -> list[psutil.Process]:
    return [p for p in processes if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]


def expected_product(shop: DemoServer, product_id: int) -> dict[str, Any]:
    product = shop.state.products[product_id]
    return {"id": product_id, "name": product["name"], "price": product["price"]}


def member_running(browsers: BrowserPool) -> MemberInfo:
    busy = [member for member in browsers.members if member.in_flight]
    assert len(busy) == 1, busy
    return busy[0]


async def test_three_browsers_300_calls_one_killed_half_way(shop: DemoServer) -> None:
    holds = [f"h{i}" for i in range(6)]
    # The write and the h* reads are held until released; the 300 reads answer after 50 ms.
    holder = HoldServer(hold_only={"w1", *holds}, delay=0.05)
    try:
        async with started_pool(launch=3, per_browser=4) as browsers:
            assert [m.state for m in browsers.members] == ["ready"] * 3
            browsers.set_start_url("demo-shop", shop.url)
            browsers.set_start_url("pool-test", holder.url())

            # A write call, in flight on one browser (the server saw it) before any read.
            write = asyncio.create_task(
                browsers.run_browser_tool("pool-test", "hold_write", {"id": "w1"})
            )
            assert await asyncio.to_thread(holder.wait_arrived, "w1")
            victim = member_running(browsers)
            assert victim.pid is not None

            # Held reads until one is on the victim: the pool picks the least loaded browser,
            # so the victim gets one at the latest once the others hold two each.
            held: dict[str, asyncio.Task[Any]] = {}
            cut_read = ""
            for key in holds:
                held[key] = asyncio.create_task(
                    browsers.run_browser_tool("pool-test", "hold_read", {"id": key})
                )
                assert await asyncio.to_thread(holder.wait_arrived, key)
                if browsers.members[victim.index].in_flight == 2:
                    cut_read = key
                    break
            assert cut_read, [m.in_flight for m in browsers.members]

            inputs = [{"id": f"r{i}"} for i in range(300)]
            results: list[PoolResult] = []
            killed: list[psutil.Process] = []
            async for item in browsers.map("pool-test", "hold_read", inputs, ordered=False):
                results.append(item)
                if not killed and len(results) >= 150:
                    killed = kill_chrome(victim.pid)  # half-way through the map

            assert killed
            assert len(results) == 300
            assert sorted(item.index for item in results) == list(range(300))
            for item in results:
                assert item.ok, item.error
                assert item.result == {"id": f"r{item.index}", "status": 200, "body": "released"}

            # The held read on the victim ran again on another browser and answers now.
            holder.release()
            for key, task in held.items():
                assert await task == {"id": key, "status": 200, "body": "released"}
                assert holder.counts[key] == (2 if key == cut_read else 1)
            # Reads of the map the kill cut short were retried too; the stats count each.
            repeated = sum(item.attempts - 1 for item in results)
            assert browsers.stats.retried == repeated + 1

            with pytest.raises(NotRetriedError) as caught:
                await write
            message = str(caught.value)
            assert message.startswith(
                "not retried: pool-test/hold_write is a write tool and the browser died mid-call"
            )
            assert "may or may not have run" in message
            assert caught.value.side_effect == "write"
            assert browsers.stats.not_retried == 1

            # The dead browser was replaced by a new Chrome, and the old tree is gone.
            await browsers.wait_ready(timeout=60)
            replaced = browsers.members[victim.index]
            assert replaced.state == "ready"
            assert replaced.generation == 2
            assert replaced.pid not in (None, victim.pid)
            assert browsers.stats.replaced == 1
            assert not alive(killed)
            # The pool works on a site it has not used yet (with its start URL override).
            ids = sorted(shop.state.products)
            again = await browsers.run_browser_tool("demo-shop", "get_product", {"id": ids[0]})
            assert again == {**again, **expected_product(shop, ids[0])}

        # The write could have answered once released; nobody sent it again.
        assert holder.counts["w1"] == 1
    finally:
        holder.close()


async def test_per_tab_puts_several_calls_in_flight_in_each_tab(holder: HoldServer) -> None:
    async with started_pool(launch=1, per_browser=2, per_tab=3) as browsers:
        browsers.set_start_url("pool-test", holder.url())
        inputs = [{"id": f"t{number}"} for number in range(9)]
        results = asyncio.ensure_future(browsers.map("pool-test", "hold_read", inputs))
        # Six requests held by the server at once, sent from two tabs.
        for number in range(6):
            assert await asyncio.to_thread(holder.wait_arrived, f"t{number}")
        assert browsers.members[0].in_flight == 6
        assert holder.counts["t6"] == 0
        holder.release()
        done = await results
        assert [item.result for item in done] == [
            {"id": f"t{number}", "status": 200, "body": "released"} for number in range(9)
        ]
        assert holder.pages == 2
        browser = browsers.members[0].browser
        assert browser is not None
        on_site = [tab for tab in await browser.tabs() if tab.url == holder.url()]
        assert len(on_site) == 2


async def test_irreversible_needs_confirm_and_is_not_retried_on_a_one_browser_pool(
    holder: HoldServer,
) -> None:
    async with started_pool(launch=1, per_browser=2) as browsers:
        browsers.set_start_url("pool-test", holder.url())
        with pytest.raises(ConfirmationRequiredError):
            await browsers.run_browser_tool("pool-test", "hold_irreversible", {"id": "i0"})
        assert holder.counts["i0"] == 0

        call = asyncio.create_task(
            browsers.run_browser_tool("pool-test", "hold_irreversible", {"id": "i1"}, confirm=True)
        )
        assert await asyncio.to_thread(holder.wait_arrived, "i1")
        # A read held on the same browser: it is retried once the browser is replaced.
        read = asyncio.create_task(
            browsers.run_browser_tool("pool-test", "hold_read", {"id": "r1"})
        )
        assert await asyncio.to_thread(holder.wait_arrived, "r1")
        first = browsers.members[0]
        assert first.in_flight == 2
        assert first.pid is not None
        kill_chrome(first.pid)

        with pytest.raises(NotRetriedError, match=r"is an irreversible tool and the browser died"):
            await call
        holder.release()
        result = await read  # waited for the replacement, then ran again there
        assert result == {"id": "r1", "status": 200, "body": "released"}
        assert browsers.members[0].generation == 2
        assert holder.counts["i1"] == 1
        assert holder.counts["r1"] == 2


async def test_map_keeps_input_order_and_captures_item_errors(shop: DemoServer) -> None:
    async with started_pool(launch=2, per_browser=3) as browsers:
        browsers.set_start_url("demo-shop", shop.url)
        inputs: list[dict[str, Any] | None] = [{"id": 1}, {"id": "x"}, {"id": 2}, {"id": 999}]
        results = await browsers.map("demo-shop", "get_product", inputs)
        assert [item.index for item in results] == [0, 1, 2, 3]
        assert [item.ok for item in results] == [True, False, True, True]
        assert isinstance(results[1].error, InvalidArgsError)
        assert results[0].result["name"] == shop.state.products[1]["name"]
        assert results[3].result == {"error": "not found: no product with id 999"}

        # A Python tool runs through the pool too, with a pool tab as ctx.tab.
        cheapest = await browsers.run_tool(
            "demo-shop", "cheapest_in_category", {"category": "kitchen"}
        )
        assert cheapest["category"] == "kitchen"

        with pytest.raises(UnknownToolError, match="declared tools"):
            await browsers.run_browser_tool("demo-shop", "no_such_tool")

        # Leaving early cancels the rest; the pool stays usable.
        started = browsers.stats.calls
        many = browsers.map("demo-shop", "get_product", ({"id": 1} for _ in range(10_000)))
        async with many:
            async for _ in many:
                break
        assert browsers.stats.calls - started < 100
        assert all(m.in_flight == 0 for m in browsers.members)
        assert (await browsers.run_browser_tool("demo-shop", "get_product", {"id": 2}))["id"] == 2


async def test_a_pool_whose_browsers_cannot_be_replaced_says_so() -> None:
    # Chrome that cannot start: the first attempt fails for every browser, so start() raises
    # (no retrying on: the wait is a hang bound only).
    async def start_and_stop() -> None:
        async with BrowserPool(
            launch=2, executable="/nonexistent/chrome", learnings=pool_learnings()
        ):
            pass

    # (ChromeProcess.start lets Popen's FileNotFoundError through for an explicit path.)
    with pytest.raises((FileNotFoundError, ChromeNotFoundError)):
        await asyncio.wait_for(start_and_stop(), 30)

    async with started_pool(launch=1, replace_attempts=0) as browsers:
        first = browsers.members[0]
        assert first.pid is not None
        kill_chrome(first.pid)
        # Whether the call meets the dead browser or finds it given up, it ends the same way.
        with pytest.raises(PoolExhaustedError, match="all 1 browsers of the pool are gone"):
            await browsers.run_browser_tool("pool-test", "echo", {})
        assert browsers.members[0].state == "failed"


async def test_a_map_stopped_from_another_task_ends_its_iteration(shop: DemoServer) -> None:
    async with started_pool(launch=1, per_browser=3) as browsers:
        browsers.set_start_url("demo-shop", shop.url)
        many = browsers.map("demo-shop", "get_product", ({"id": 1} for _ in range(10_000)))
        five = asyncio.Event()
        seen = 0

        async def consume() -> None:
            nonlocal seen
            async for _ in many:
                seen += 1
                if seen == 5:
                    five.set()

        consumer = asyncio.create_task(consume())
        await asyncio.wait_for(five.wait(), 30)
        started = browsers.stats.calls
        # The consumer is inside the iteration: the generator cannot be closed from here,
        # but stopping cancels its calls and its loop ends without an error.
        await many.aclose()
        await asyncio.wait_for(consumer, 30)
        assert seen < 10_000
        assert browsers.stats.calls - started < 10
        assert all(m.in_flight == 0 for m in browsers.members)
        result = await browsers.run_browser_tool("demo-shop", "get_product", {"id": 2})
        assert result["id"] == 2
