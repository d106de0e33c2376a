"""The learning loop on the command line, against the demo shop: ``ego record --session`` while
a script works in the tab until a URL, ``ego suggest`` and ``--save``, then, once the shop's
API changed, ``ego heal``, ``--check`` and ``--promote``, and the provenance in ``ego
history``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import ego
from ego.demo import DemoServer
from tests.helpers.browsers import websocket_url
from tests.helpers.commands import background, ego_async, ego_env, http_endpoint
from tests.helpers.paths import ROOT

pytestmark = pytest.mark.chrome

STDERR_LINE_SECONDS = 60.0


@pytest.fixture
def shop() -> Iterator[DemoServer]:
    server = DemoServer(port=0).start()
    yield server
    server.close()


async def test_a_recorded_session_is_suggested_saved_healed_and_promoted(
    ported_browser: ego.Browser, shop: DemoServer, tmp_path: Path
) -> None:
    endpoint = http_endpoint(websocket_url(ported_browser))
    env = ego_env(tmp_path / "profiles", workspace=tmp_path / "ws")
    har = tmp_path / "session.har"
    args = ["record", "--session", "shop", "--har", str(har), shop.url, "--no-json"]
    args += ["--until-url", "*/search?q=desk*", "--endpoint", endpoint]
    async with background(*args, env=env, cwd=ROOT) as process:
        assert process.stderr is not None
        line = ""
        while "recording a session" not in line:
            raw = await asyncio.wait_for(process.stderr.readline(), STDERR_LINE_SECONDS)
            assert raw, "ego record --session ended before it said it was recording"
            line = raw.decode()
        tab_id = line.split(" in tab ", 1)[1].split(";", 1)[0]
        tab = next(t for t in await ported_browser.tabs() if t.target_id == tab_id)
        for words in ("lamp", "desk"):  # the script's work; the second search ends it
            await tab.navigate(shop.url_for(f"/search?q={words}"))
            await tab.wait_for(selector='[data-testid="related-item"]')
        out, err = await asyncio.wait_for(process.communicate(), STDERR_LINE_SECONDS)
        assert process.returncode == 0, err.decode()
    assert "ended: url" in out.decode()
    urls = [e["request"]["url"] for e in json.loads(har.read_text())["log"]["entries"]]
    assert any("/api/products?q=desk" in url for url in urls)

    suggested = await ego_async("suggest", "shop", "--har", str(har), env=env)
    assert suggested.returncode == 0, suggested
    found = {d["endpoint"]: d["tool"] for d in suggested.json()["found"]}
    assert found["GET /api/products"] == "get_products"
    assert suggested.json()["skipped_counts"]["static asset"] > 0
    saved = await ego_async(
        "suggest", "shop", "--save", "get_products", "--endpoint", endpoint, env=env
    )
    assert saved.returncode == 0, saved
    assert saved.json()[0]["tool"] == "get_products"

    shop.api_changed = True
    healed = await ego_async("heal", "shop", "get_products", "--endpoint", endpoint, env=env)
    assert healed.returncode == 0, healed
    report = healed.json()
    assert report["proposal"]["to"] == "GET /api/catalog/search"
    assert any(c["kind"] == "field renamed" for c in report["changes"])
    checked = await ego_async(
        "heal", "shop", "get_products", "--check", "--endpoint", endpoint, env=env
    )
    assert checked.returncode == 0, checked
    assert checked.json()["passed"] is True
    promoted = await ego_async(
        "heal", "shop", "get_products", "--promote", "--endpoint", endpoint, env=env
    )
    assert promoted.returncode == 0, promoted
    history = await ego_async("history", "shop", "get_products", "--json", env=env)
    current = history.json()[0]
    assert current["provenance"]["proposal"]["to"] == "GET /api/catalog/search"
    run = await ego_async(
        "run", "shop", "get_products", "--arg", "q=lamp", "--endpoint", endpoint, env=env
    )
    assert run.returncode == 0, run
    assert run.json()["products"][0]["name"]
