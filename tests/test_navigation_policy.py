"""Where a browser's pages may go: origin patterns, local schemes, and the guard that holds
every frame (and every popup) to them."""

from __future__ import annotations

import asyncio

import pytest

import ego
from ego.page.policy import NavigationPolicy, OriginPattern
from tests.conftest import PageServer
from tests.test_real_pages import real_page


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
    ],
)
def test_origin_patterns(pattern: str, url: str, matches: bool) -> None:
    policy = NavigationPolicy.of([pattern])
    assert (policy.refusal(url) is None) is matches


@pytest.mark.parametrize(
    "bad", ["https://shop.example/path", "ftp://shop.example", "shop.example:99999", ":80", ""]
)
def test_malformed_patterns_are_refused_with_the_reason(bad: str) -> None:
    with pytest.raises(ValueError, match="origin pattern"):
        OriginPattern.parse(bad)


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
