"""A tab's network log stays bounded on a tab reused for many calls (issue 16).

Pool tabs are reused without navigating, so every request a tool makes lands in the same
document's log. The log keeps the latest :data:`ego.page.network.MAX_REQUESTS` and counts the
ones it drops; waiting for network idle and reading response bodies keep working, since they
rest on the in-flight tracking, which eviction does not touch.
"""

from __future__ import annotations

from typing import Any

import pytest

import ego
from ego.page.network import MAX_REQUESTS, NetworkLog
from tests.helpers.browsers import HANG
from tests.helpers.page_server import PageServer


async def test_fifteen_hundred_requests_on_one_tab_leave_at_most_the_bound(
    tab: ego.Tab, server: PageServer
) -> None:
    server.route("/netlog/api", '{"ok": true}', content_type="application/json")
    await tab.navigate(server.route("/netlog/page", "<p>many requests</p>"))
    count = 1500
    await tab.evaluate(
        # In waves of 50, so the threaded test server is not flooded at once.
        f"(async () => {{ for (let i = 0; i < {count}; i += 50) await Promise.all("
        "Array.from({length: 50}, (_, j) => fetch('/netlog/api?i=' + (i + j))"
        ".then((r) => r.text()))) })()",
        timeout=120,
    )
    await tab.wait_for(network_idle=True, timeout=HANG)
    requests = await tab.network()
    apis = [r.url.rsplit("=", 1)[1] for r in requests if "/netlog/api" in r.url]
    assert len(requests) == MAX_REQUESTS
    # The page and the 1,500 calls (the favicon maybe too), less what is kept.
    assert tab._network.dropped >= count + 1 - MAX_REQUESTS
    # The latest are kept, in order; the oldest went first.
    assert len(apis) >= MAX_REQUESTS - 2  # the page's favicon may be among them
    assert apis == [str(i) for i in range(count - len(apis), count)]
    # The body of the newest request is still readable.
    assert await tab.response_body(requests[-1]) == '{"ok": true}'
    # A navigation starts a new log, and a new count.
    await tab.navigate(server.route("/netlog/next", "<p>next</p>"))
    assert [r.url for r in await tab.network()] == [server.url("/netlog/next")]
    assert tab._network.dropped == 0


def started(request_id: str, loader: str = "L1") -> dict[str, Any]:
    return {
        "requestId": request_id,
        "loaderId": loader,
        "type": "Fetch",
        "request": {"method": "GET", "url": f"https://shop.test/{request_id}"},
    }


async def test_a_request_dropped_from_the_list_still_holds_network_idle_while_in_flight() -> None:
    log = NetworkLog(max_requests=3)
    log.set_main_loader("L1")
    log._on_request(started("slow"))  # never finishes until the end
    for index in range(5):
        log._on_request(started(f"r{index}"))
        log._on_finished({"requestId": f"r{index}"})
    assert [r.request_id for r in await log.requests()] == ["r2", "r3", "r4"]
    assert log.dropped == 3
    assert log._finished == {"r2", "r3", "r4"}
    with pytest.raises(ego.CommandTimeoutError, match="still loading: slow"):
        await log.wait_idle(quiet=0.01, timeout=0.2)
    log._on_finished({"requestId": "slow"})
    await log.wait_idle(quiet=0.01, timeout=HANG)
    assert log._finished == {"r2", "r3", "r4"}  # a request no longer listed is not kept


async def test_a_redirect_keeps_its_place_and_does_not_count_as_a_new_request() -> None:
    log = NetworkLog(max_requests=2)
    log._on_request(started("a"))
    log._on_request(started("b"))
    redirected = started("a")
    redirected["request"]["url"] = "https://shop.test/a-moved"
    log._on_request(redirected)
    assert [r.url for r in await log.requests()] == [
        "https://shop.test/a-moved",
        "https://shop.test/b",
    ]
    assert log.dropped == 0


async def test_a_page_with_a_cross_site_frame_goes_idle(tab: ego.Tab, server: PageServer) -> None:
    # The iframe's document request starts in the tab's session and ends in the frame's own
    # (another site: another process); it must not keep the page from ever looking idle.
    cross = server.route("/netlog/cross", "<p>frame</p>").replace("127.0.0.1", "localhost")
    page = server.route("/netlog/framed", f"<p>page</p><iframe name=x src='{cross}'></iframe>")
    await tab.navigate(page)
    frame = await tab.frame(name="x", timeout=HANG)
    assert await frame.evaluate("document.body.textContent") == "frame"
    await tab.wait_for(network_idle=True, timeout=HANG)
