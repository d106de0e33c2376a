"""Where a browser's pages may go: origin patterns, local schemes, and the guard that holds
every frame (and every popup) to them, prefetches included, and closes a page it cannot hold
rather than let it run without the limits."""

from __future__ import annotations

import asyncio

import pytest

import ego
from ego.page.policy import NavigationPolicy, OriginPattern
from tests.helpers.fake_cdp import FakeCDP, Forwarder
from tests.helpers.page_server import PageServer, Site
from tests.helpers.real_page import real_page


@pytest.mark.parametrize(
    ("pattern", "url", "matches"),
    [
        ("https://shop.example", "https://shop.example/cart", True),
        ("https://shop.example", "https://shop.example:443/", True),
        ("https://shop.example", "http://shop.example/", False),
        ("https://shop.example", "https://shop.example:8443/", False),
        ("shop.example", "http://shop.example:8765/", True),
        ("shop.example", "https://SHOP.example./x", True),
        ("shop.example", "https://other.example/", False),
        ("shop.example:8765", "http://shop.example:8765/", True),
        ("shop.example:8765", "http://shop.example:8766/", False),
        ("*.shop.example", "https://a.b.shop.example/", True),
        ("*.shop.example", "https://shop.example/", False),
        ("http://127.0.0.1:8765", "http://127.0.0.1:8765/x", True),
        ("*", "https://anything.example/", True),
        # IPv6 literals, with and without brackets, and with a port.
        ("[::1]", "http://[::1]:18083/", True),
        ("::1", "http://[::1]:18083/", True),
        ("[0:0:0:0:0:0:0:1]", "http://[::1]/", True),
        ("http://[::1]:18083", "http://[::1]:18083/x", True),
        ("http://[::1]:18083", "http://[::1]:18084/x", False),
        ("[::1]:18083", "https://[::1]:18083/", True),
        ("[::1]", "http://[::2]/", False),
        # IPv4 addresses however the URL spells them.
        ("127.0.0.2", "http://127.0.0.2:9/", True),
        ("127.0.0.2", "http://2130706434:9/", True),
        ("127.0.0.2", "http://0x7f.0.0.2/", True),
        ("127.0.0.2", "http://127.0.0.3/", False),
        ("0x7f.1", "http://127.0.0.1/", True),
        # A scheme or port with the wildcard host is honoured.
        ("http://*", "https://anything.example/", False),
        ("*:8765", "http://a.example:8765/", True),
        ("*:8765", "http://a.example:8766/", False),
        # International names as Chrome writes them.
        ("bücher.example", "https://xn--bcher-kva.example/", True),
        ("*.Shop.Example.", "https://a.shop.example/", True),
    ],
)
def test_origin_patterns(pattern: str, url: str, matches: bool) -> None:
    policy = NavigationPolicy.of([pattern])
    assert (policy.refusal(url) is None) is matches


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        ("https://shop.example/path", "holds a path"),
        ("ftp://shop.example", "only http and https"),
        ("shop.example:99999", "not a port"),
        ("shop.example:0", "not a port"),
        (":80", "has no host"),
        ("", "is empty"),
        ("127.0.0.*", "stands alone"),
        ("*127.0.0.2", "stands alone"),
        ("a*b.example", "stands alone"),
        ("*.127.0.0.1", "no subdomains"),
        ("*.[::1]", "no subdomains"),
        ("[::1", "never closes"),
        ("[::1]8080", "follows the IPv6 address"),
        ("[shop.example]", "not an IPv6 address"),
        ("1.2.3.4.5", "not an IPv4 address"),
        ("256.0.0.1", "not an IPv4 address"),
        ("user@shop.example", "user info"),
        ("shop example", "not a host name"),
    ],
)
def test_patterns_that_would_never_match_are_refused_with_the_reason(bad: str, why: str) -> None:
    with pytest.raises(ValueError, match="origin pattern") as raised:
        OriginPattern.parse(bad)
    assert why in str(raised.value)
    assert repr(bad) in str(raised.value)  # as the operator wrote it


def test_refusals_print_origins_as_written() -> None:
    allowed = NavigationPolicy.of(["http://[::1]:18083"])
    assert allowed.refusal("http://[::1]:18083/x") is None
    reason = allowed.refusal("http://[::1]:18084/x") or ""
    assert reason == (
        "the origin http://[::1]:18084 is not among the allowed origins (http://[::1]:18083)"
    )
    blocked = NavigationPolicy.of(blocked=["127.0.0.1"])
    # User info never reaches a message or a log; the origin is the host and port.
    assert blocked.refusal("http://user:secret@127.0.0.1:9/") == (
        "the origin http://127.0.0.1:9 is blocked (127.0.0.1)"
    )


def test_script_urls_are_refused_only_where_asked() -> None:
    strict = NavigationPolicy.of(allow_script_urls=False)
    for url in ("javascript:document.title='x'", " JavaScript:void 0", "data:text/html,<b>x"):
        with pytest.raises(ego.OriginBlockedError, match="run script"):
            strict.check(url)
    strict.check("https://shop.example/")
    NavigationPolicy.of().check("javascript:void 0")
    # The pages' own document requests are not concerned (data: frames load).
    assert strict.refusal("data:text/html,<b>x") is None


def test_blocked_wins_and_local_schemes_follow_allow_local() -> None:
    policy = NavigationPolicy.of(["*.example"], ["evil.example"], allow_local=False)
    assert policy.refusal("https://good.example/") is None
    assert "blocked (evil.example)" in (policy.refusal("https://evil.example/") or "")
    assert "not among the allowed origins" in (policy.refusal("https://other.test/") or "")
    for local in (
        "file:///etc/hostname",
        "chrome://version",
        "view-source:https://x.example/",
        "devtools://devtools/bundled/inspector.html",
    ):
        assert "not allowed" in (policy.refusal(local) or ""), local
    # URLs with no origin a pattern can name are left to the page.
    assert policy.refusal("about:blank") is None
    assert policy.refusal("data:text/html,hi") is None
    assert NavigationPolicy.of().refusal("file:///etc/hostname") is None
    assert not NavigationPolicy.of().active
    with pytest.raises(ego.OriginBlockedError, match="refused"):
        policy.check("file:///etc/hostname")


@pytest.mark.chrome  # launches a Chrome of its own
async def test_every_frame_and_popup_is_held_to_the_allowed_origins(
    server: PageServer,
) -> None:
    allowed = f"127.0.0.1:{server.port}"
    async with ego.launch(allowed_origins=[allowed], allow_file_urls=False) as browser:
        tab = await browser.new_tab(real_page(server, "guarded"))
        cross = await tab.frame(name="cross", timeout=10)
        await cross.wait_for(text="blocked", timeout=10)  # Chrome's page, not the site's
        assert "Cross-site text" not in await tab.snapshot()
        same = await tab.frame(name="same")
        assert await same.evaluate("document.title") == "Same"  # an allowed frame loads

        refused = f"http://localhost:{server.port}/real/guarded/cross"
        with pytest.raises(ego.OriginBlockedError, match="not among the allowed origins"):
            await tab.navigate(refused)
        with pytest.raises(ego.OriginBlockedError, match="file: URLs"):
            await tab.navigate("file:///etc/hostname")
        with pytest.raises(ego.OriginBlockedError):
            await browser.new_tab("chrome://version")
        assert tab.url.startswith(f"http://{allowed}/")

        # A popup the page opens to a refused origin is held the same way.
        attached = browser.connection.expect(
            "Target.attachedToTarget",
            predicate=lambda params: params.get("targetInfo", {}).get("type") == "page",
        )
        await tab.evaluate(f"window.open({refused!r}); 0", user_gesture=True)
        info = (await asyncio.wait_for(attached, 10))["targetInfo"]
        popup = next(t for t in await browser.tabs() if t.target_id == info["targetId"])
        await popup.wait_for(text="blocked", timeout=10)
        assert "Cross-site text" not in await popup.evaluate("document.body.innerText")
        await popup.close()


@pytest.mark.chrome  # launches a Chrome of its own, with a port to attach to
async def test_an_attached_browser_is_held_to_the_limits_while_connected(
    server: PageServer,
) -> None:
    allowed = f"127.0.0.1:{server.port}"
    refused = f"http://localhost:{server.port}/real/attached/cross"
    async with ego.launch(port=0) as owner:
        assert owner.endpoint is not None
        async with ego.connect(
            owner.endpoint, allowed_origins=[allowed], allow_file_urls=False
        ) as attached:
            tab = await attached.new_tab(real_page(server, "attached"))
            cross = await tab.frame(name="cross", timeout=10)
            await cross.wait_for(text="blocked", timeout=10)
            with pytest.raises(ego.OriginBlockedError, match="not among the allowed origins"):
                await tab.navigate(refused)
            with pytest.raises(ego.OriginBlockedError, match="file: URLs"):
                await tab.navigate("file:///etc/hostname")
        # Disconnected, the limits go with the connection: the owner's tab loads anything.
        tab = await owner.new_tab(refused)
        assert "Cross-site text" in await tab.evaluate("document.body.innerText")


# -- failing closed, and what else a page asks for --------------------------------------------


async def test_a_page_the_limits_cannot_be_set_up_on_is_closed_never_run(
    ported_browser: ego.Browser, server: PageServer
) -> None:
    """Chrome refuses ``Fetch.enable`` (a proxy in front of the real browser fails it, for a
    live tab and for a new one): each page is closed, none runs without the limits."""
    assert ported_browser.endpoint is not None
    allowed = f"127.0.0.1:{server.port}"
    before = {tab.target_id for tab in await ported_browser.tabs()}
    live = await ported_browser.new_tab(server.route("/guard/live", "<title>Live</title>"))
    new_url = server.route("/guard/new", "<title>New</title>")
    failing = True

    def fails(method: str, target: str | None) -> bool:
        # The live tab's, and while failing, any new page's (Chrome attaches a new page
        # before it answers Target.createTarget): never another test's.
        doomed = target == live.target_id or (failing and target not in before)
        return method == "Fetch.enable" and target is not None and doomed

    fault = Forwarder(ported_browser.endpoint, fails)
    try:
        async with (
            FakeCDP(on_command=fault) as proxy,
            ego.connect(proxy.ws_url, allowed_origins=[allowed]) as attached,
        ):
            # The tab open before: closed while the limits were set up.
            open_now = {tab.target_id for tab in await ported_browser.tabs()}
            assert live.target_id not in open_now
            with pytest.raises(ego.OriginLimitsError) as caught:
                await asyncio.wait_for(attached.new_tab(new_url), 30)
            assert "Fetch.enable" in str(caught.value)
            assert "was closed before it loaded anything" in str(caught.value)
            open_now = {tab.target_id for tab in await ported_browser.tabs()}
            assert caught.value.target_id not in open_now
            assert not [r for r in server.requests if r[1] == "/guard/new"]
            assert {m["method"] for m in fault.failed} == {"Fetch.enable"}
            # A tab the limits hold opens as before.
            failing = False
            held = await attached.new_tab(new_url)
            assert await held.evaluate("document.title") == "New"
            await held.close()
    finally:
        await fault.aclose()
        if not live.closed:
            await live.close()


HINTS = """<!doctype html><title>Hints</title>
<link rel="prefetch" href="{evil}/prefetched">
<link rel="preload" as="image" href="{evil}/preloaded">
<script>
window.settled = Promise.all([...document.querySelectorAll('link[href]')].map((link) =>
  new Promise((resolve) => {{
    link.onload = () => resolve([link.rel, 'load']);
    link.onerror = () => resolve([link.rel, 'error']);
  }})));
</script>"""


async def test_a_prefetch_to_a_refused_origin_sends_no_request(
    ported_browser: ego.Browser, server: PageServer
) -> None:
    """``<link rel=prefetch>`` to a refused origin is failed before it leaves the browser;
    ``<link rel=preload>`` is requested as the image it preloads, which the limits do not hold
    (docs/mcp.md says so)."""
    assert ported_browser.endpoint is not None
    evil = Site()
    try:
        page = server.route("/guard/hints", HINTS.format(evil=evil.origin))
        allowed = [f"127.0.0.1:{server.port}"]
        async with ego.connect(ported_browser.endpoint, allowed_origins=allowed) as attached:
            tab = await attached.new_tab(page)
            settled = await asyncio.wait_for(tab.evaluate("settled"), 30)
            await tab.close()
        # Settled either way (the image is no image): sent is what counts.
        assert [link for link, _ in settled] == ["prefetch", "preload"]
        assert settled[0] == ["prefetch", "error"]
        assert [path for _, path, _ in evil.requests] == ["/preloaded"]
    finally:
        evil.close()
