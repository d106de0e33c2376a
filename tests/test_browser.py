"""Browsers and their tabs: list, open, find, activate, close; connect; faults under load."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import psutil
import pytest

import ego
from ego.page.browser import BrowserContext
from tests.helpers.browsers import HANG, evaluate_pending, websocket_url
from tests.helpers.commands import free_port
from tests.helpers.fake_cdp import BROWSER_PATH, FakeCDP
from tests.helpers.page_server import PageServer

# --- tabs -----------------------------------------------------------------------------------


async def test_open_list_and_close_tabs(browser: ego.Browser, server: PageServer) -> None:
    url = server.route("/tabs/one", "<title>one</title>")
    tab = await browser.new_tab(url)
    try:
        assert tab.url == url
        listed = {t.target_id: t for t in await browser.tabs()}
        assert tab.target_id in listed
        assert listed[tab.target_id] is tab
        assert listed[tab.target_id].url == url
        assert listed[tab.target_id].title == "one"
        blank = await browser.new_tab()
        assert blank.url == "about:blank"
        assert blank.session is not None
        ids = [t.target_id for t in await browser.tabs()]
        assert tab.target_id in ids
        assert blank.target_id in ids
    finally:
        await tab.close()
    assert tab.closed
    remaining = [t.target_id for t in await browser.tabs()]
    assert tab.target_id not in remaining
    assert blank.target_id in remaining
    await blank.close()
    assert blank.target_id not in [t.target_id for t in await browser.tabs()]
    with pytest.raises(ego.TabClosedError):
        await blank.evaluate("1")


async def test_tab_closed_elsewhere_is_dropped_from_the_list(browser: ego.Browser) -> None:
    tab = await browser.new_tab()
    assert tab.session is not None
    session_id = tab.session.id
    detached = browser.connection.expect(
        "Target.detachedFromTarget", predicate=lambda params: params["sessionId"] == session_id
    )
    # Closed behind this Tab's back (another client, the user); Chrome reports the detach.
    await browser.connection.send("Target.closeTarget", {"targetId": tab.target_id})
    await asyncio.wait_for(detached, HANG)
    assert tab.target_id not in [t.target_id for t in await browser.tabs()]
    assert tab.closed
    with pytest.raises(ego.TabClosedError):
        await tab.evaluate("1")


async def test_find_tab_by_url_prefix_origin_and_host(
    browser: ego.Browser, server: PageServer
) -> None:
    alpha_url = server.route("/find/alpha", "<title>alpha</title>")
    beta_url = server.route("/find/beta", "<title>beta</title>")
    server.route("/find/gamma", "<title>gamma</title>")
    gamma_url = f"http://localhost:{server.port}/find/gamma"
    alpha = await browser.new_tab(alpha_url)
    beta = await browser.new_tab(beta_url)
    gamma = await browser.new_tab(gamma_url)
    try:
        assert await browser.find_tab(url=alpha_url) is alpha
        assert await browser.find_tab(url=beta_url + "/") is beta  # a trailing slash is ignored
        assert await browser.find_tab(url=server.url("/find/b*")) is beta
        prefixed = await browser.find_tab(url=server.url("/find/*"))
        assert prefixed in (alpha, beta)
        assert await browser.find_tab(url=f"http://localhost:{server.port}/*") is gamma
        assert await browser.find_tab(origin=f"http://LOCALHOST:{server.port}/") is gamma
        assert await browser.find_tab(host="localhost") is gamma
        assert await browser.find_tab(host="127.0.0.1", url="*beta") is None  # all criteria
        assert await browser.find_tab(origin=server.origin, url=server.url("/find/b*")) is beta
        assert await browser.find_tab(host="127.0.0.1", predicate=lambda t: t.title == "beta") is (
            beta
        )
        assert await browser.find_tab(url=server.url("/find/nothing")) is None
        assert await browser.find_tab(host="example.invalid") is None
    finally:
        for tab in (alpha, beta, gamma):
            await tab.close()
    assert await browser.find_tab(url=alpha_url) is None


async def test_activate_brings_a_tab_to_the_front(browser: ego.Browser, server: PageServer) -> None:
    first = await browser.new_tab(server.route("/front/1", "<title>1</title>"))
    second = await browser.new_tab(server.route("/front/2", "<title>2</title>"))
    state = "[document.visibilityState, document.hasFocus()]"
    try:
        await first.activate()
        assert await first.evaluate(state) == ["visible", True]
        assert await second.evaluate(state) == ["hidden", False]
        await second.activate()
        assert await second.evaluate(state) == ["visible", True]
        assert await first.evaluate(state) == ["hidden", False]
    finally:
        await first.close()
        await second.close()
    with pytest.raises(ego.TabClosedError):
        await first.activate()


async def test_new_tab_that_fails_to_load_is_not_left_open(browser: ego.Browser) -> None:
    before = {t.target_id for t in await browser.tabs()}
    with pytest.raises(ego.NavigationError):
        await browser.new_tab(f"http://127.0.0.1:{free_port()}/refused")
    assert {t.target_id for t in await browser.tabs()} == before


# --- isolated contexts ----------------------------------------------------------------------

STORAGE = "[localStorage.getItem('who'), document.cookie]"


async def test_isolated_contexts_share_no_storage_and_are_disposed_after(
    browser: ego.Browser, server: PageServer
) -> None:
    url = server.route("/isolated/page", "<title>isolated</title>")
    default = await browser.new_tab(url)
    try:
        await default.evaluate("localStorage.setItem('who', 'default'); document.cookie = 'c=d'")
        async with browser.isolated_context() as first, browser.isolated_context() as second:
            assert first.isolated
            assert first.context_id != second.context_id
            one = await first.new_tab(url)
            other = await second.new_tab(url)
            assert await one.evaluate(STORAGE) == [None, ""]
            await one.evaluate("localStorage.setItem('who', 'first'); document.cookie = 'c=1'")
            # A second tab of the same context shares it; another context does not.
            same = await first.new_tab(url)
            assert await same.evaluate(STORAGE) == ["first", "c=1"]
            assert await other.evaluate(STORAGE) == [None, ""]
            assert {t.target_id for t in await first.tabs()} == {one.target_id, same.target_id}
        assert await default.evaluate(STORAGE) == ["default", "c=d"]
    finally:
        await default.close()

    # The block closed the tabs and disposed both contexts.
    assert one.closed
    assert same.closed
    assert other.closed
    assert first.disposed
    listed = await browser.connection.send("Target.getBrowserContexts")
    assert first.context_id not in listed["browserContextIds"]
    assert second.context_id not in listed["browserContextIds"]
    open_ids = {t.target_id for t in await browser.tabs()}
    assert not open_ids & {one.target_id, same.target_id, other.target_id}
    with pytest.raises(ego.TabClosedError, match="disposed"):
        await first.new_tab()


async def test_isolated_context_is_disposed_when_the_block_fails(browser: ego.Browser) -> None:
    opened: list[tuple[BrowserContext, ego.Tab]] = []

    async def fails() -> None:
        async with browser.isolated_context() as context:
            opened.append((context, await context.new_tab()))
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        await fails()
    [(context, tab)] = opened
    assert tab.closed
    listed = await browser.connection.send("Target.getBrowserContexts")
    assert context.context_id not in listed["browserContextIds"]


# --- connect --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
async def own_chrome() -> AsyncIterator[ego.Browser]:
    """A Chrome started for this module with a port (``port=0``), which its tests connect to
    a second time."""
    async with ego.launch(port=0) as launched:
        yield launched


def http_endpoint(browser: ego.Browser) -> str:
    host_port = websocket_url(browser).removeprefix("ws://").split("/", 1)[0]
    return f"http://{host_port}"


async def test_connect_over_http_finds_the_websocket(own_chrome: ego.Browser) -> None:
    async with ego.connect(http_endpoint(own_chrome)) as connected:
        assert connected.endpoint == own_chrome.endpoint
        assert connected.process is None
        tab = await connected.new_tab("data:text/html,<title>via http</title>")
        # The same Chrome: the launching connection sees the tab.
        seen = await own_chrome.find_tab(predicate=lambda t: t.target_id == tab.target_id)
        assert seen is not None
        assert await tab.evaluate("document.title") == "via http"
        await tab.close()


async def test_connect_to_the_websocket_url(own_chrome: ego.Browser) -> None:
    async with ego.connect(websocket_url(own_chrome)) as connected:
        assert (await connected.version())["product"] == (await own_chrome.version())["product"]
        tab = await connected.new_tab("data:text/html,<title>via ws</title>")
        assert await tab.evaluate("document.title") == "via ws"
        await tab.close()


async def test_closing_a_connected_browser_leaves_chrome_running(
    own_chrome: ego.Browser,
) -> None:
    connected = await ego.connect(http_endpoint(own_chrome))
    tab = await connected.new_tab("data:text/html,<title>survivor</title>")
    await connected.close()
    assert connected.closed
    assert own_chrome.process is not None
    assert own_chrome.process.running
    assert not own_chrome.closed
    survivor = await own_chrome.find_tab(predicate=lambda t: t.target_id == tab.target_id)
    assert survivor is not None
    assert await survivor.evaluate("document.title") == "survivor"
    await survivor.close()


async def test_connect_sends_headers_with_every_request() -> None:
    headers = {"Authorization": "Bearer s3cret", "X-Fleet": "blue"}
    async with FakeCDP() as fake:
        async with ego.connect(fake.http_url, headers=headers) as connected:
            # /json/version advertised an unreachable host; the one asked for was used.
            assert connected.endpoint == fake.ws_url
        async with ego.connect(fake.ws_url, headers=headers):
            pass
    seen = [
        (request.path, request.headers.get("Authorization"), request.headers.get("X-Fleet"))
        for request in fake.requests
    ]
    assert seen == [
        ("/json/version", "Bearer s3cret", "blue"),
        (BROWSER_PATH, "Bearer s3cret", "blue"),
        (BROWSER_PATH, "Bearer s3cret", "blue"),
    ]


async def test_wrong_token_gives_connection_failed_with_401() -> None:
    async with FakeCDP(reject_status=401) as fake:
        with pytest.raises(ego.ConnectionFailedError, match="401") as over_ws:
            await asyncio.wait_for(ego.connect(fake.ws_url + "?token=wrong-token"), HANG)
        assert "wrong-token" not in str(over_ws.value)  # never print a secret
        with pytest.raises(ego.ConnectionFailedError, match="401"):
            await asyncio.wait_for(
                ego.connect(fake.http_url, headers={"Authorization": "Bearer nope"}), HANG
            )


async def test_unreachable_port_gives_connection_failed() -> None:
    port = free_port()
    with pytest.raises(ego.ConnectionFailedError, match=str(port)):
        await asyncio.wait_for(ego.connect(f"http://127.0.0.1:{port}"), HANG)
    with pytest.raises(ego.ConnectionFailedError, match=str(port)):
        await asyncio.wait_for(ego.connect(f"ws://127.0.0.1:{port}/devtools/browser/x"), HANG)


async def test_connect_rejects_other_schemes() -> None:
    with pytest.raises(ego.ConnectionFailedError, match="ws://"):
        await ego.connect("ftp://127.0.0.1:9222")


# --- faults ---------------------------------------------------------------------------------


async def test_chrome_killed_mid_call_fails_it_as_the_pipe_closes() -> None:
    launched = await ego.launch()
    assert launched.process is not None
    process = launched.process
    try:
        tab = await launched.new_tab()
        # Its own timeout is far beyond the hang bound: the call can only end in time by the
        # death being noticed, never by waiting its timeout out.
        pending = await evaluate_pending(tab, timeout=4 * HANG)
        root = psutil.Process(process.pid)
        processes = [root, *root.children(recursive=True)]

        for victim in processes:
            victim.kill()
        # The pipe ego talks over reports the death (a launched browser has no websocket).
        with pytest.raises(ego.BrowserClosedError, match="closed its debugging pipe"):
            await asyncio.wait_for(pending, HANG)

        assert launched.closed
        with pytest.raises(ego.BrowserClosedError):
            await tab.evaluate("1")
        with pytest.raises(ego.BrowserClosedError):
            await launched.new_tab()
    finally:
        await launched.close()
    assert not process.running
    assert not process.user_data_dir.exists()


async def test_two_hundred_concurrent_evaluates_over_four_tabs(
    browser: ego.Browser, server: PageServer
) -> None:
    tabs = [
        await browser.new_tab(
            server.route(f"/many/{k}", f"<script>window.tag = 'tab-{k}'</script>")
        )
        for k in range(4)
    ]
    try:
        calls = [(k, index) for index in range(50) for k in range(4)]
        results = await asyncio.gather(
            *(
                tabs[k].evaluate(
                    f"(async () => {{ for (let i = 0; i < {index % 7}; i++) await null;"
                    f" return [window.tag, location.pathname, {index}, {index} * {index}]; }})()"
                )
                for k, index in calls
            )
        )
        assert len(results) == 200
        assert results == [[f"tab-{k}", f"/many/{k}", index, index * index] for k, index in calls]
    finally:
        for tab in tabs:
            await tab.close()


async def test_a_close_that_meets_a_navigation_commit_still_closes_the_tab(
    browser: ego.Browser, server: PageServer
) -> None:
    # Chrome acknowledges a close that races the commit of a navigation and drops it (a
    # page that redirects as it loads); on this Chromium a third of such closes are dropped.
    # The delays walk the close across the redirect's commit.
    start = server.route(
        "/close/redirecting",
        "<title>a</title><meta http-equiv='refresh' content='0; URL=/close/arrived'>",
    )
    server.route("/close/arrived", "<title>b</title><p>arrived</p>")
    for step in range(15):
        tab = await browser.new_tab(start)
        await asyncio.sleep(step / 1000)  # where the close lands, not a wait for anything
        await tab.close()
        targets = (await browser.connection.send("Target.getTargets"))["targetInfos"]
        assert tab.target_id not in {info["targetId"] for info in targets}, step
