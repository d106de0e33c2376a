"""Slow motion (``ego.launch(slow_mo=MS)``, ``ego.connect(slow_mo=MS)``, ``ego run --slow-mo
MS``): a pause before each input and navigation ego sends, so that a person can follow a run;
reading the page is never slowed.

A click sends its move, press and release at once; in slow motion they still go one pause
apart, so the click takes at least a pause per event (a lower bound: a busy machine only
makes it longer).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import ego
from ego.protocol.slow_motion import SlowMotion
from tests.helpers.browsers import websocket_url
from tests.helpers.commands import ego_async, ego_env, http_endpoint
from tests.helpers.page_server import PageServer

PAUSE_MS = 60

PAGE = """<!doctype html><title>slow</title>
<button id="go">go</button><input id="name">
<script>
window.seen = [];
for (const type of ["mousedown", "mouseup", "click"]) {
  document.getElementById("go").addEventListener(type, () => seen.push([type, 0]));
}
</script>"""


def test_what_is_slowed_is_what_a_person_sees_happen() -> None:
    for method in ("Input.dispatchMouseEvent", "Input.insertText", "Page.navigate", "Page.reload"):
        assert SlowMotion.slows(method), method
    for method in ("Runtime.evaluate", "Input.setIgnoreInputEvents", "DOM.getDocument"):
        assert not SlowMotion.slows(method), method
    for wrong in (-1, float("nan")):
        with pytest.raises(ValueError, match="slow_mo must be milliseconds"):
            ego.launch(slow_mo=wrong)


@pytest.mark.chrome
async def test_each_input_and_navigation_waits_and_reading_does_not(
    server: PageServer, ported_browser: ego.Browser
) -> None:
    url = server.route("/slow-motion", PAGE)
    async with ego.connect(websocket_url(ported_browser), slow_mo=PAUSE_MS) as browser:
        slow = browser.connection.slow_motion
        assert slow is not None
        tab = await browser.new_tab(url)
        try:
            opened = slow.paused
            assert opened >= 1  # the tab's navigation
            await tab.evaluate("document.title")
            await tab.snapshot()
            assert slow.paused == opened  # reading the page is not slowed
            loop = asyncio.get_running_loop()
            started = loop.time()
            await tab.click("#go")
            took = loop.time() - started
            clicked = slow.paused - opened
            assert clicked >= 3  # the move, the press and the release, each after a pause
            # One pause after another, though a click sends its events all at once.
            assert took >= clicked * PAUSE_MS / 1000, (took, clicked)
            assert [kind for kind, _ in await tab.evaluate("seen")] == [
                "mousedown",
                "mouseup",
                "click",
            ]
            await tab.type("#name", "ab")
            assert slow.paused > opened + clicked
            await tab.reload()
            assert await tab.evaluate("seen.length") == 0
        finally:
            await tab.close()


@pytest.mark.chrome
async def test_ego_run_takes_slow_mo(
    tmp_path: Path, server: PageServer, ported_browser: ego.Browser
) -> None:
    env = ego_env(tmp_path / "profiles")
    url = server.route("/slow-motion-run", PAGE)
    site = tmp_path / "learnings" / "slow"
    (site / "browser-tools").mkdir(parents=True)
    (site / "browser-tools" / "title.js").write_text("async () => document.title\n")
    (site / "manifest.json").write_text(
        '{"id": "slow", "name": "Slow", "domains": ["127.0.0.1"], "browserTools": {"title": '
        '{"description": "the title", "path": "browser-tools/title.js"}}}'
    )
    endpoint = http_endpoint(websocket_url(ported_browser))
    ran = await ego_async(
        "run", "slow", "title", "--url", url, "--slow-mo", str(PAUSE_MS), "--endpoint", endpoint,
        "--workspace", str(tmp_path), env=env, cwd=tmp_path,
    )  # fmt: skip
    assert ran.returncode == 0, ran
    assert ran.json() == "slow"
    refused = await ego_async("run", "slow", "title", "--slow-mo", "-5", env=env, cwd=tmp_path)
    assert refused.returncode == 2, refused
