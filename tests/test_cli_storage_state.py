"""A login saved once (``ego login SITE --save-state FILE``) and used by any command after
(``ego run ... --storage-state FILE``): on another browser, with no profile; and never left
behind in a browser a command attached to (``ego mcp --storage-state FILE``)."""

from __future__ import annotations

import asyncio
import json
import stat
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

import ego
from ego.demo import SESSION_COOKIE, DemoServer
from tests.helpers.browsers import websocket_url
from tests.helpers.commands import background, ego_async, ego_env, read_json_line
from tests.helpers.mcp_client import McpClient, value_of

pytestmark = pytest.mark.chrome


@pytest.fixture(scope="module")
def shop() -> Iterator[DemoServer]:
    with DemoServer() as server:
        yield server


async def test_a_login_saved_by_ego_login_is_used_by_ego_run(
    tmp_path: Path, shop: DemoServer
) -> None:
    env = ego_env(tmp_path / "profiles")
    state = tmp_path / "logins" / "shop.json"
    login_url = shop.url_for("/login")
    # The person's browser, with a port so that the test can play the person through CDP.
    async with ego.launch(port=0) as person:
        assert person.endpoint is not None
        args = (
            "login",
            "demo-shop",
            "--headless",
            "--url",
            login_url,
            "--save-state",
            str(state),
            "--endpoint",
            person.endpoint,
        )
        async with background(*args, env=env, cwd=tmp_path) as process:
            assert process.stdout is not None
            assert process.stderr is not None
            info = await read_json_line(process.stdout, timeout=60)
            assert info["save_state"] == str(state)
            # Saved as the login page opened: not logged in yet.
            saved = json.loads(state.read_text())
            assert SESSION_COOKIE not in {cookie["name"] for cookie in saved["cookies"]}

            tab = await person.tab(info["tab"])
            session = await tab.attach()
            left_login = session.expect(
                "Page.frameNavigated",
                lambda params: (
                    not params["frame"].get("parentId")
                    and urlsplit(params["frame"]["url"]).path != "/login"
                ),
            )
            await tab.type('[data-testid="login-username"]', "demo")
            await tab.type('[data-testid="login-password"]', "demo")
            await tab.click('[data-testid="login-submit"]')
            await asyncio.wait_for(left_login, 30)
            await tab.close()  # the person is done
            code = await asyncio.wait_for(process.wait(), 60)
            stderr = (await process.stderr.read()).decode()
        assert code == 0, stderr
    assert "ego: saved the login to" in stderr
    saved = json.loads(state.read_text())
    assert stat.S_IMODE(state.stat().st_mode) == 0o600
    [session_cookie] = [c for c in saved["cookies"] if c["name"] == SESSION_COOKIE]
    # What the command printed names no secret.
    assert session_cookie["value"] not in stderr

    # A fresh Chrome with no profile runs the site's session tool logged in.
    whoami = await ego_async(
        "run",
        "demo-shop",
        "whoami",
        "--new-browser",
        "--url",
        shop.url,
        "--storage-state",
        str(state),
        env=env,
        cwd=tmp_path,
    )
    assert whoami.returncode == 0, whoami
    assert whoami.json() == {"logged_in": True, "username": "demo", "display_name": "Demo Shopper"}
    # Without it, the same command is not logged in.
    anonymous = await ego_async(
        "run", "demo-shop", "whoami", "--new-browser", "--url", shop.url, env=env, cwd=tmp_path
    )
    assert anonymous.returncode == 0, anonymous
    assert anonymous.json()["logged_in"] is False
    # A session tool run without a login names both ways to bring one.
    refused = await ego_async(
        "run", "demo-shop", "get_orders", "--new-browser", "--url", shop.url, env=env, cwd=tmp_path
    )
    assert refused.returncode == 3, refused
    line = refused.error_line()
    assert "NEEDS_LOGIN" in line
    assert "--profile NAME" in line
    assert "--storage-state FILE, a login saved by `ego login SITE --save-state FILE`" in line


async def test_ego_mcp_storage_state_leaves_no_login_in_an_attached_browser(
    tmp_path: Path, shop: DemoServer, ported_browser: ego.Browser
) -> None:
    state = tmp_path / "logins" / "shop.json"
    async with await ported_browser.new_context() as person:
        tab = await person.new_tab(shop.url_for("/login?next=/account"))
        await tab.type('[data-testid="login-username"]', "demo")
        await tab.type('[data-testid="login-password"]', "demo")
        await tab.click('[data-testid="login-submit"]')
        await tab.wait_for(url=shop.url_for("/account"), timeout=30)
        await person.storage_state(path=state)

    def shop_cookies(saved: dict[str, object]) -> list[object]:
        cookies = saved["cookies"]
        assert isinstance(cookies, list)
        return [c for c in cookies if c["name"] == SESSION_COOKIE]

    assert shop_cookies(json.loads(state.read_text()))
    args = (
        "--storage-state", str(state), "--endpoint", websocket_url(ported_browser),
        "--start-url", f"demo-shop={shop.url}",
    )  # fmt: skip
    client = McpClient(ego_env(tmp_path / "profiles"), tmp_path, tmp_path / "mcp.log", args)
    await client.start()
    try:
        whoami = value_of(
            await client.call("run_browser_tool", {"site_id": "demo-shop", "tool": "whoami"})
        )
        assert whoami["logged_in"] is True
        # The login lives in the server's own context, not in the browser it attached to.
        assert shop_cookies(dict(await ported_browser.storage_state())) == []
    finally:
        await client.close()
    assert shop_cookies(dict(await ported_browser.storage_state())) == []
    assert not [t for t in await ported_browser.tabs() if t.url.startswith(shop.url)]
