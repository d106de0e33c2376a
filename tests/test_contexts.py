"""Browser contexts that live until closed, each with its own tabs, cookies, storage, dialogs,
downloads and origin limits, and saved logins (storage states) loaded into a fresh one."""

from __future__ import annotations

import asyncio
import json
import stat
from pathlib import Path

import pytest

import ego
from ego.learning.catalog.registry import Learnings
from ego.page.storage_state import read_storage_state
from tests.helpers.learnings import make_site, tool
from tests.helpers.page_server import PageServer

pytestmark = pytest.mark.chrome

WHO = "[localStorage.getItem('who'), document.cookie]"


def login_page(server: PageServer, user: str) -> str:
    """A page that logs ``user`` in: a cookie from the server, localStorage from its script."""
    return server.route(
        f"/ctx/login/{user}",
        f"<title>{user}</title><script>localStorage.setItem('who', '{user}')</script>",
        headers={"Set-Cookie": f"user={user}; Path=/; Max-Age=3600"},
    )


async def test_a_context_lives_until_closed_with_tabs_of_its_own(
    browser: ego.Browser, server: PageServer
) -> None:
    url = server.route("/ctx/page", "<title>ctx</title>")
    context = await browser.new_context()
    other = await browser.new_context()
    try:
        assert isinstance(context, ego.BrowserContext)
        first = await context.new_tab(url)
        second = await context.new_tab(url + "?two")
        elsewhere = await other.new_tab(url)
        # Each context lists its own tabs; the browser lists none of them.
        assert {t.target_id for t in await context.tabs()} == {first.target_id, second.target_id}
        assert [t.target_id for t in await other.tabs()] == [elsewhere.target_id]
        browser_ids = {t.target_id for t in await browser.tabs()}
        assert not browser_ids & {first.target_id, second.target_id, elsewhere.target_id}
        assert await context.find_tab(url=url + "?two") is second
        assert await context.find_tab(url=url) is first
        assert await other.find_tab(url=url + "?two") is None
        assert await context.tab(first.target_id) is first
        # Another context's tab id is unknown here, and never answered with its tab.
        with pytest.raises(ego.UnknownTabError, match="another context") as refused:
            await context.tab(elsewhere.target_id)
        assert refused.value.tab_id == elsewhere.target_id
        with pytest.raises(ego.UnknownTabError):
            await browser.tab(first.target_id)
        # A popup a context's page opens is the context's.
        opened = browser.connection.expect(
            "Target.targetCreated",
            predicate=lambda params: params["targetInfo"].get("openerId") == first.target_id,
        )
        await first.send(
            "Runtime.evaluate",
            {"expression": "window.open(location.href + '?popup'); 1", "userGesture": True},
        )
        popup_id = (await asyncio.wait_for(opened, 10))["targetInfo"]["targetId"]
        popup = await context.tab(popup_id)
        assert [t.target_id for t in await other.tabs()] == [elsewhere.target_id]
    finally:
        await context.close()
        await other.close()
    assert first.closed
    assert second.closed
    assert popup.closed
    assert context.closed
    listed = await browser.connection.send("Target.getBrowserContexts")
    assert context.context_id not in listed["browserContextIds"]
    assert other.context_id not in listed["browserContextIds"]
    with pytest.raises(ego.TabClosedError, match="closed"):
        await context.new_tab()
    await context.close()  # idempotent


async def test_contexts_share_no_cookies_or_storage(
    browser: ego.Browser, server: PageServer
) -> None:
    async with (
        await browser.new_context() as alice,
        await browser.new_context() as bob,
    ):
        a = await alice.new_tab(login_page(server, "alice"))
        b = await bob.new_tab(login_page(server, "bob"))
        assert await a.evaluate(WHO) == ["alice", "user=alice"]
        assert await b.evaluate(WHO) == ["bob", "user=bob"]
        # A second tab of alice's context is logged in as alice; the browser's own is not.
        again = await alice.new_tab(server.url("/ctx/login/nobody"))
        assert await again.evaluate(WHO) == ["alice", "user=alice"]
    assert a.closed
    assert b.closed


async def test_dialog_policy_downloads_and_limits_are_the_contexts(
    browser: ego.Browser, server: PageServer, tmp_path: Path
) -> None:
    page = server.route(
        "/ctx/tools",
        '<a id="get" href="/ctx/report.csv">get</a>'
        '<button id="ask" onclick="window.answer = confirm(\'Sure?\')">ask</button>',
    )
    server.route(
        "/ctx/report.csv",
        "a,b\n1,2\n",
        content_type="text/csv",
        headers={"Content-Disposition": 'attachment; filename="report.csv"'},
    )
    folder = tmp_path / "downloads"
    # A Chrome of the test's own: origin limits watch every page of the browser once asked.
    async with (
        ego.launch(downloads=tmp_path / "browser-downloads") as own,
        await own.new_context(
            dialogs="accept", downloads=folder, allowed_origins=[f"127.0.0.1:{server.port}"]
        ) as context,
    ):
        tab = await context.new_tab(page)
        await tab.click("#ask")
        assert await tab.evaluate("window.answer") is True  # accepted: the context's policy
        default = await own.new_tab(page)
        await default.click("#ask")
        assert await default.evaluate("window.answer") is False  # the browser's: auto
        # The browser's own pages may go elsewhere; the context's may not, nor its frames.
        await default.navigate(f"http://localhost:{server.port}/ctx/tools")
        with pytest.raises(ego.OriginBlockedError):
            await tab.navigate(f"http://localhost:{server.port}/ctx/tools")
        async with tab.expect_download() as download:
            await tab.click("#get")
        assert download.path == folder / "report.csv"
        assert download.path.read_text() == "a,b\n1,2\n"
        assert [d.path for d in context.downloads()] == [folder / "report.csv"]
        assert own.downloads() == []
        # The page's own move to a refused origin ends on Chrome's error page, unsent.
        asked = len(server.requests)
        blocked = (await tab.attach()).expect(
            "Page.frameNavigated",
            lambda params: params["frame"]["url"].startswith("chrome-error:"),
        )
        await tab.evaluate(f"location.href = 'http://localhost:{server.port}/ctx/tools'; 1")
        await asyncio.wait_for(blocked, 10)
        hosts = [r[2].get("Host", "") for r in server.requests[asked:]]
        assert not [host for host in hosts if host.startswith("localhost")]


async def test_the_site_facade_of_a_context_runs_in_its_tabs_only(
    browser: ego.Browser, server: PageServer, tmp_path: Path
) -> None:
    whoami = "async () => ({who: localStorage.getItem('who'), cookie: document.cookie})\n"
    make_site(
        tmp_path / "learnings",
        "ctx-site",
        domains=["127.0.0.1"],
        browser_tools={"whoami": tool(whoami, description="who is logged in")},
    )
    learnings = Learnings(roots=[tmp_path / "learnings"])
    async with ego.launch(learnings=learnings) as own:
        own.site.set_start_url("ctx-site", server.url("/ctx/login/nobody"))
        # The browser's own tab is on the site, logged in as nobody.
        outside = await own.new_tab(login_page(server, "mallory"))
        context = await own.new_context()
        assert context.site.learnings is learnings
        first = await context.site.run_browser_tool("ctx-site", "whoami")
        # The context opened a tab of its own at the start URL: not the browser's tab.
        assert first == {"who": None, "cookie": ""}
        [opened] = await context.tabs()
        assert opened.target_id != outside.target_id
        await opened.navigate(login_page(server, "carol"))
        assert await context.site.run_browser_tool("ctx-site", "whoami") == {
            "who": "carol",
            "cookie": "user=carol",
        }
        assert await own.site.run_browser_tool("ctx-site", "whoami") == {
            "who": "mallory",
            "cookie": "user=mallory",
        }
        await context.close()


async def test_a_saved_login_loads_into_a_fresh_context_and_a_new_browser(
    browser: ego.Browser, server: PageServer, tmp_path: Path
) -> None:
    home = server.route("/ctx/home", "<title>home</title>")
    path = tmp_path / "state" / "dana.json"
    async with await browser.new_context() as context:
        tab = await context.new_tab(login_page(server, "dana"))
        await tab.evaluate("indexedDB.open('cart'); 1")
        # An origin no tab shows any more is saved too (through a page ego serves itself).
        elsewhere = login_page(server, "dana-too").replace("127.0.0.1", "localhost")
        other = await context.new_tab(elsewhere)
        await other.close()
        state = await context.storage_state(path=path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text()) == state
    assert {(c["domain"], c["name"], c["value"]) for c in state["cookies"]} == {
        ("127.0.0.1", "user", "dana"),
        ("localhost", "user", "dana-too"),
    }
    by_origin = {entry["origin"]: entry for entry in state["origins"]}
    assert by_origin[server.origin]["localStorage"] == [{"name": "who", "value": "dana"}]
    assert by_origin[server.origin].get("indexedDBNames") == ["cart"]
    localhost = f"http://localhost:{server.port}"
    assert by_origin[localhost]["localStorage"] == [{"name": "who", "value": "dana-too"}]

    before = len(server.requests)
    async with await browser.new_context(storage_state=path) as fresh:
        # Loading asked nothing of the site: the origins were shown by ego itself.
        # (A favicon an earlier page asked for may come late.)
        asked = [r[:2] for r in server.requests[before:] if r[1] != "/favicon.ico"]
        assert asked == []
        page = await fresh.new_tab(home)
        assert await page.evaluate(WHO) == ["dana", "user=dana"]
        assert server.requests[-1][2].get("Cookie") == "user=dana"
        there = await fresh.new_tab(f"{localhost}/ctx/home")
        assert await there.evaluate("localStorage.getItem('who')") == "dana-too"
        # Loaded and saved again, the state is the same.
        again = await fresh.storage_state()
        assert {e["origin"] for e in again["origins"]} == {server.origin, localhost}

    async with ego.launch(storage_state=path) as relaunched:
        page = await relaunched.new_tab(home)
        assert await page.evaluate(WHO) == ["dana", "user=dana"]


async def test_a_storage_state_never_goes_into_a_learning_nor_prints_its_secrets(
    browser: ego.Browser, server: PageServer, tmp_path: Path
) -> None:
    learnings_root = tmp_path / "learnings"
    make_site(learnings_root, "kept", domains=["127.0.0.1"])
    async with ego.launch(learnings=Learnings(roots=[learnings_root])) as own:
        context = await own.new_context()
        with pytest.raises(ego.StorageStateError, match="learnings folder"):
            await context.storage_state(path=learnings_root / "kept" / "login.json")
        with pytest.raises(ego.StorageStateError, match="learnings folder"):
            await own.storage_state(path=learnings_root / "state.json")
        assert not (learnings_root / "kept" / "login.json").exists()
        await context.close()
    broken = tmp_path / "broken.json"
    broken.write_text('{"cookies": [{"name": "sid", "value": "s3cr3t-value"}], "origins": 7}')
    with pytest.raises(ego.StorageStateError) as error:
        read_storage_state(broken)
    assert "s3cr3t" not in str(error.value)
    broken.write_text("s3cr3t-value not json")
    with pytest.raises(ego.StorageStateError, match="not JSON") as error:
        await browser.new_context(storage_state=broken)
    assert "s3cr3t" not in str(error.value)
    with pytest.raises(ego.StorageStateError, match="cannot read"):
        ego.launch(storage_state=tmp_path / "missing.json")
