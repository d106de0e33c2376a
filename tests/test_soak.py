"""A long-lived process leaks nothing: tabs and frames that come and go leave no task, no
session and no subscription behind.

``ego mcp``, a pool, a batch and the browser ``ego launch`` keeps open and close tabs for
hours. Each tab, each cross-site frame and each worker is a CDP session that owns
subscriptions (each with a task), listeners and waiters; when Chrome detaches it, all of that
must go. This drives a
browser with origin limits on (the guard attaches a session of its own to every page and
frame) through a few hundred tabs and frames and checks that the process is back where it
started. ``bench/bench_soak.py`` runs the full 1,000 tabs and 400 frames and reports memory.
"""

from __future__ import annotations

import asyncio

import pytest

import ego
from tests.helpers.page_server import PageServer

pytestmark = pytest.mark.chrome

TABS = 60
FRAMES = 40
#: Bounds every wait of the test; a leak shows as counts, never as time.
HANG = 60.0


def _serve(server: PageServer) -> tuple[str, str]:
    cross = f"http://localhost:{server.port}/soak/cross"
    server.route("/soak/cross", "<title>Cross</title><p>cross-site frame</p>")
    server.route("/soak/same", "<title>Same</title><p>same-origin frame</p>")
    server.route(
        "/soak/page",
        "<title>Soak</title><p>page</p>"
        "<iframe name=same src='/soak/same'></iframe>"
        f"<iframe name=cross src='{cross}'></iframe>"
        "<script>const w = new Worker(URL.createObjectURL(new Blob(['postMessage(42)'])));"
        "window.done = new Promise(r => w.onmessage = e => r(e.data));</script>",
    )
    return server.url("/soak/page"), cross


async def _settled(before: set[asyncio.Task[object]]) -> set[asyncio.Task[object]]:
    """The tasks started since ``before`` that are still running once every one that is
    ending has ended (bounded)."""
    current = asyncio.current_task()
    started = {task for task in asyncio.all_tasks() if task not in before and task is not current}
    if started:
        await asyncio.wait(started, timeout=5)
    return {task for task in started if not task.done()}


async def test_tabs_and_frames_that_come_and_go_leave_nothing_behind(server: PageServer) -> None:
    page, cross = _serve(server)
    host = f"http://127.0.0.1:{server.port}"
    async with await ego.launch(
        allowed_origins=[host, f"http://localhost:{server.port}"]
    ) as browser:
        # Warm up: the first tab pays for what the browser keeps for good.
        warm = await browser.new_tab(page)
        await warm.close()
        connection = browser.connection
        before_tasks = set(asyncio.all_tasks())
        before = connection.resources()

        async def one_tab(index: int) -> None:
            tab = await browser.new_tab(page)
            frame = await tab.frame(name="cross", timeout=10)
            assert await frame.evaluate("document.title") == "Cross"
            assert await tab.evaluate(f"{index} + 1") == index + 1
            assert await tab.evaluate("window.done") == 42
            [worker] = await tab.workers()
            assert await worker.evaluate(f"{index} * 2") == index * 2
            await tab.close()

        for start in range(0, TABS, 10):
            await asyncio.wait_for(
                asyncio.gather(*(one_tab(index) for index in range(start, start + 10))), HANG
            )

        # Frames attached and removed in one tab, every other one cross-site.
        tab = await browser.new_tab(server.url("/soak/same"))
        for index in range(FRAMES):
            source = cross if index % 2 else "/soak/same"
            await tab.evaluate(
                f"new Promise(r => {{ const f = document.createElement('iframe');"
                f" f.name = 'f{index}'; f.onload = r; f.src = '{source}';"
                " document.body.append(f); })"
            )
            frame = await tab.frame(name=f"f{index}", timeout=10)
            assert await frame.evaluate("1 + 1") == 2
            await tab.evaluate(f"document.querySelector('iframe[name=f{index}]').remove()")
        assert [frame.name for frame in await tab.frames()] == [""]
        await tab.close()

        leftover = await _settled(before_tasks)
        after = connection.resources()
        assert len(leftover) <= 2, sorted(repr(task) for task in leftover)[:10]
        assert after == before, (before, after)
