"""Replay and record against a real headless Chromium, with no network at all.

The replayed sites use https origins that do not exist (``*.replay.test``): if a request
escaped to the network it would fail on DNS, so a passing test proves the HAR answered it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

import ego
from ego.errors import NavigationError, UnmatchedRequestError
from ego.learning.catalog.registry import Learnings
from ego.replay import Har, Recorder, build_entry, record, replay
from ego.replay.matching import Matcher
from ego.site import Site
from tests.helpers.learnings import make_site, tool
from tests.helpers.loop_sites import NotesServer
from tests.helpers.page_server import PageServer

CSP = "script-src 'self'; object-src 'none'"

PAGE = """<!doctype html><title>Shop</title>
<ul id="items"><li>kettle</li><li>lamp</li></ul>
<script>window.inlineRan = true;</script>
<script src="/app.js"></script>
"""

APP_JS = "window.appRan = true;\n"

# Reads the page and the origin's storage; cached in localStorage by the Site layer.
READ_ITEMS = """async function (args) {
  localStorage.setItem("probe", "1");
  return {
    origin: location.origin,
    secure: isSecureContext,
    storage: localStorage.getItem("probe"),
    items: [...document.querySelectorAll("#items li")].map((li) => li.textContent),
    inline: window.inlineRan === true,
    app: window.appRan === true,
  };
}
"""


def shop_har(origin: str) -> Har:
    return Har(
        entries=[
            build_entry(
                f"{origin}/",
                PAGE,
                headers={
                    "content-type": "text/html; charset=utf-8",
                    "Content-Security-Policy": CSP,
                },
            ),
            build_entry(f"{origin}/app.js", APP_JS, headers={"content-type": "text/javascript"}),
        ]
    )


@contextlib.asynccontextmanager
async def isolated_tab(browser: ego.Browser) -> AsyncIterator[ego.Tab]:
    """A tab in a browser context of its own, closed (and the context disposed) after."""
    async with browser.isolated_context() as context:
        yield await context.new_tab()


@pytest.fixture
async def fresh_tab(browser: ego.Browser) -> AsyncIterator[ego.Tab]:
    """A tab in its own browser context: empty localStorage, cookies and cache."""
    async with isolated_tab(browser) as tab:
        yield tab


async def test_https_origin_offline_storage_cache_and_csp(
    browser: ego.Browser, fresh_tab: ego.Tab, tmp_path: Path
) -> None:
    origin = "https://shop.replay.test"
    make_site(
        tmp_path,
        "replay-shop",
        domains=["shop.replay.test"],
        browser_tools={"read_items": tool(READ_ITEMS)},
    )
    site = Site(browser, Learnings(roots=[tmp_path]))

    async with replay(fresh_tab, shop_har(origin)) as replayer:
        await fresh_tab.navigate(f"{origin}/")
        first = await site.run_browser_tool("replay-shop", "read_items", tab=fresh_tab)
        first_mode = site.last_run.mode if site.last_run else None
        second = await site.run_browser_tool("replay-shop", "read_items", tab=fresh_tab)
        second_mode = site.last_run.mode if site.last_run else None

    # The extractor cache works at the replayed origin: stored once, then served from it.
    assert (first_mode, second_mode) == ("stored", "cached")

    assert (
        first
        == second
        == {
            "origin": origin,
            "secure": True,
            "storage": "1",
            "items": ["kettle", "lamp"],
            # The recorded CSP header is enforced: the inline script was blocked, /app.js ran.
            "inline": False,
            "app": True,
        }
    )
    assert [r.outcome for r in replayer.requests if not r.url.endswith("/favicon.ico")] == [
        "fulfilled",
        "fulfilled",
    ]


async def test_unmatched_request_fails_like_a_network_error(fresh_tab: ego.Tab) -> None:
    origin = "https://fail.replay.test"
    replayer = await replay(fresh_tab, shop_har(origin), mode="fail")
    try:
        await fresh_tab.navigate(f"{origin}/")
        outcome = await fresh_tab.evaluate(
            "fetch('/missing').then(() => 'answered', (e) => e.name + ': ' + e.message)"
        )
        assert outcome == "TypeError: Failed to fetch"
        with pytest.raises(NavigationError, match="ERR_INTERNET_DISCONNECTED"):
            await fresh_tab.navigate(f"{origin}/nowhere")
    finally:
        await replayer.stop()  # fail mode: unmatched requests are not an error
    missing = [(r.method, r.url, r.outcome) for r in replayer.unmatched]
    assert missing == [
        ("GET", f"{origin}/missing", "unmatched"),
        ("GET", f"{origin}/nowhere", "unmatched"),
    ]


async def test_fail_reason_is_configurable(fresh_tab: ego.Tab) -> None:
    async with replay(
        fresh_tab, shop_har("https://dns.replay.test"), mode="fail", fail_reason="NameNotResolved"
    ):
        with pytest.raises(NavigationError, match="ERR_NAME_NOT_RESOLVED"):
            await fresh_tab.navigate("https://dns.replay.test/nowhere")


async def test_passthrough_sends_unmatched_requests_to_the_network(
    fresh_tab: ego.Tab, server: PageServer
) -> None:
    # The page itself comes from the HAR (the server has no such route); its fetch of
    # /live-data is not in the HAR and reaches the local server.
    server.route("/live-data", '{"live": true}', content_type="application/json")
    page = "<!doctype html><title>mixed</title><p id=p>replayed page</p>"
    har = Har(entries=[build_entry(server.url("/replayed-only"), page)])
    before = len(server.requests)

    async with replay(fresh_tab, har, mode="passthrough") as replayer:
        await fresh_tab.navigate(server.url("/replayed-only"))
        text = await fresh_tab.evaluate("document.getElementById('p').textContent")
        live = await fresh_tab.evaluate("fetch('/live-data').then((r) => r.json())")

    assert text == "replayed page"
    assert live == {"live": True}
    paths = [path for _, path, _, _ in server.requests[before:]]
    assert "/live-data" in paths
    assert "/replayed-only" not in paths
    assert [r.url for r in replayer.unmatched if r.outcome == "passed"] == [
        server.url("/live-data")
    ]


async def test_strict_mode_names_the_unmatched_request(fresh_tab: ego.Tab) -> None:
    origin = "https://strict.replay.test"

    async def visit() -> None:
        async with replay(fresh_tab, shop_har(origin)):
            await fresh_tab.navigate(f"{origin}/")
            await fresh_tab.evaluate(
                "fetch('/api/missing?id=7', {method: 'POST', body: '{}'}).catch(() => null)"
            )

    with pytest.raises(UnmatchedRequestError) as caught:
        await visit()
    assert f"POST {origin}/api/missing?id=7" in str(caught.value)
    assert caught.value.requests == [("POST", f"{origin}/api/missing?id=7")]


JSON = {"content-type": "application/json"}


async def test_requests_are_matched_by_body_and_served_in_order(fresh_tab: ego.Tab) -> None:
    origin = "https://api.replay.test"
    har = Har(
        entries=[
            build_entry(f"{origin}/", "<!doctype html><title>api</title>"),
            build_entry(f"{origin}/poll", '"pending"', headers=JSON),
            build_entry(f"{origin}/poll", '"done"', headers=JSON),
            build_entry(
                f"{origin}/gql",
                '"for a=1"',
                method="POST",
                post_data='{"a":1}',
                headers=JSON,
            ),
            build_entry(
                f"{origin}/gql",
                '"for a=2"',
                method="POST",
                post_data='{"a":2}',
                headers=JSON,
            ),
        ]
    )
    script = """(async () => {
      const get = async (path, init) => (await fetch(path, init)).json();
      const post = (body) =>
        get('/gql', {method: 'POST', headers: {'content-type': 'application/json'}, body});
      return [await get('/poll'), await get('/poll'), await get('/poll'),
              await post('{"a": 2}'), await post('{"a":1}')];
    })()"""
    async with replay(fresh_tab, har):
        await fresh_tab.navigate(f"{origin}/")
        answers = await fresh_tab.evaluate(script)
    assert answers == ["pending", "done", "done", "for a=2", "for a=1"]


async def test_a_failing_answer_fails_the_request_instead_of_hanging(
    fresh_tab: ego.Tab, monkeypatch: pytest.MonkeyPatch
) -> None:
    origin = "https://broken.replay.test"
    har = shop_har(origin)
    # An entry whose body cannot be decoded, and a matcher that blows up on one URL.
    broken = build_entry(f"{origin}/bad-body", "x")
    broken.response.content.encoding = "base64"
    broken.response.content.text = "%%% not base64 %%%"
    har.add(broken)
    original = Matcher.match

    def match(self: Matcher, method: str, url: str, *args: Any) -> Any:
        if url.endswith("/explode"):
            raise RuntimeError("matcher bug")
        return original(self, method, url, *args)

    monkeypatch.setattr(Matcher, "match", match)
    async with replay(fresh_tab, har, mode="fail", timeout=5) as replayer:
        await fresh_tab.navigate(f"{origin}/")
        outcomes = await asyncio.wait_for(
            fresh_tab.evaluate(
                """Promise.all(['/bad-body', '/explode'].map((p) =>
                     fetch(p).then((r) => r.text(), (e) => 'rejected: ' + e.message)))"""
            ),
            10,
        )
    assert outcomes == ["rejected: Failed to fetch", "rejected: Failed to fetch"]
    assert [r.outcome for r in replayer.requests if r.url.endswith("/explode")] == ["error"]


LIVE_PAGE = """<!doctype html><title>Live</title>
<ul id="out"></ul>
<script src="/app.js"></script>
"""
LIVE_APP = """fetch('/api/items?lang=en').then((r) => r.json()).then((data) => {
  for (const item of data.items) {
    const li = document.createElement('li');
    li.textContent = item.name + ': ' + item.price;
    document.getElementById('out').appendChild(li);
  }
  document.body.dataset.ready = '1';
});
"""
READ_OUT = """async function (args) {
  // The page renders after its own fetch: wait for that (at most 10 s), as a tool would.
  await new Promise((resolve) => {
    if (document.body.dataset.ready === '1') return resolve();
    const observer = new MutationObserver(() => {
      if (document.body.dataset.ready === '1') { observer.disconnect(); resolve(); }
    });
    observer.observe(document.body, {attributes: true});
    setTimeout(resolve, 10000);
  });
  const api = await (await fetch('/api/items?lang=en')).json();
  return {rendered: [...document.querySelectorAll('#out li')].map((li) => li.textContent),
          fetched: api.items.length, title: document.title};
}
"""


async def test_record_then_replay_with_the_server_stopped(
    browser: ego.Browser, tmp_path: Path
) -> None:
    live = PageServer()
    try:
        live.route("/", LIVE_PAGE)
        live.route("/app.js", LIVE_APP, content_type="text/javascript")
        items = {"items": [{"name": "kettle", "price": 30}, {"name": "lamp", "price": 12}]}
        live.route("/api/items", json.dumps(items), content_type="application/json")
        make_site(
            tmp_path / "learnings",
            "live-shop",
            domains=["127.0.0.1"],
            browser_tools={"read_out": tool(READ_OUT)},
        )
        site = Site(browser, Learnings(roots=[tmp_path / "learnings"]))

        async with isolated_tab(browser) as tab:
            har = await record(
                tab, live.url("/"), tmp_path / "live.har", wait_until="networkidle", settle=0.3
            )
            expected = await site.run_browser_tool("live-shop", "read_out", tab=tab, cache=False)
        recorded = [(e.request.method, e.request.url) for e in har.entries]
        assert ("GET", live.url("/api/items?lang=en")) in recorded
        assert expected["rendered"] == ["kettle: 30", "lamp: 12"]
    finally:
        live.close()

    # The server is gone: only the HAR can answer now.
    async with isolated_tab(browser) as tab, replay(tab, tmp_path / "live.har") as replayer:
        await tab.navigate(live.url("/"))
        replayed = await site.run_browser_tool("live-shop", "read_out", tab=tab, cache=False)
    assert replayed == expected
    assert not replayer.unmatched


SECRET_PAGE = """<!doctype html><title>Account</title>
<script src="/session.js"></script>
"""
# The token only ever travels in headers: the cookie the server set, read back and sent
# as a bearer token and a CSRF header, so a HAR that holds it must have kept a header.
SESSION_JS = """const token = (document.cookie.match(/(?:^|; )tok=([^;]+)/) || [])[1];
fetch('/api/me', {credentials: 'include', headers: {
  'Authorization': 'Bearer ' + token, 'X-CSRF-Token': token, 'X-Api-Key': token}})
  .then((r) => r.json()).then((me) => { document.title = 'hi ' + me.name; });
"""


async def test_recording_strips_cookies_and_credentials(
    browser: ego.Browser, server: PageServer, tmp_path: Path
) -> None:
    secret = "S3CRET-7f3a9c"
    server.route("/account", SECRET_PAGE, headers={"Set-Cookie": f"tok={secret}; Path=/"})
    server.route("/session.js", SESSION_JS, content_type="text/javascript")
    server.route(
        "/api/me",
        '{"name": "ada"}',
        content_type="application/json",
        headers={"Set-Cookie": f"sid={secret}-2; Path=/; HttpOnly"},
    )
    before = len(server.requests)
    path = tmp_path / "account.har"
    async with isolated_tab(browser) as tab, Recorder(tab, path) as recorder:
        await tab.navigate(server.url("/account"))
        # Bounded generously: on a loaded machine a request can take seconds to report its end.
        assert await recorder.wait_idle(quiet=0.3, timeout=30), recorder.pending()
    har = recorder.har  # also written to `path` when the block ended

    # The secret really was sent: the page used it.
    sent = {route: headers for _, route, headers, _ in server.requests[before:]}
    assert sent["/api/me"]["Authorization"] == f"Bearer {secret}"
    assert secret in sent["/api/me"]["Cookie"]

    text = path.read_text(encoding="utf-8")
    assert secret not in text
    urls = [e.request.url for e in har.entries]
    assert server.url("/api/me") in urls
    for entry in har.entries:
        assert entry.request.cookies == [] == entry.response.cookies
        names = {h.name.lower() for h in entry.request.headers + entry.response.headers}
        assert not names & {"cookie", "set-cookie", "authorization", "x-csrf-token", "x-api-key"}


async def test_an_answer_whose_body_the_page_never_reads_does_not_hold_the_network_busy(
    browser: ego.Browser, tmp_path: Path
) -> None:
    """Chrome never ends the load of a body the page leaves unread (the notes list asks
    ``/v1/private`` and reads its status alone): such an answer is recorded, and once it shows
    no life for the quiet time it no longer holds wait_idle, which would otherwise wait out its
    whole timeout and report the network busy."""
    notes = NotesServer()
    try:
        async with isolated_tab(browser) as tab, Recorder(tab, tmp_path / "list.har") as recorder:
            await tab.navigate(notes.url("/?page=1"))
            await tab.wait_for(selector="body[data-ready]")
            assert await recorder.wait_idle(quiet=0.3, timeout=8), recorder.pending()
        private = [e for e in recorder.har.entries if e.request.url == notes.url("/v1/private")]
        assert [entry.response.status for entry in private] == [401]
    finally:
        notes.close()
