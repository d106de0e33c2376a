"""The browser that stays up: ``ego launch`` keeps a Chrome, later commands attach to it,
``ego close`` ends it; a stale record is ignored.

Every command runs as a real subprocess with its own state folder and profiles (``ego_env``),
so no test sees another's kept browser; every Chrome a test starts is waited out at its end.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import pty
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

import ego
from ego.cli import state
from ego.cli.common import Settings
from ego.demo import DemoServer
from ego.errors import ProfileInUseError
from tests.helpers.commands import (
    background,
    ego_async,
    ego_env,
    free_port,
    read_json_line,
    state_file,
)
from tests.helpers.paths import PYTHON_EGO, ROOT
from tests.helpers.processes import alive, profile_pids, wait_gone, with_descendants

# Tests that start Chrome are marked `chrome` one by one (or through a browser fixture);
# the rest need none and run in the fast tier.

MARK = "from the kept browser"
CACHE_KEY = "ego:demo-shop:get_product"


@pytest.fixture(scope="module")
def shop() -> Iterator[DemoServer]:
    with DemoServer() as server:
        yield server


async def end_detached(env: dict[str, str]) -> None:
    """After a test with ``--detach``: whatever it left running (launcher and Chrome) ends."""
    path = state_file(env)
    with contextlib.suppress(OSError, ValueError):
        record = json.loads(path.read_text())
        processes = []
        for pid in (record["owner"], record["pid"]):
            with contextlib.suppress(psutil.Error):
                processes.append(psutil.Process(pid))
        everything = with_descendants(processes)
        for process in everything:
            with contextlib.suppress(psutil.Error):
                process.kill()
        await wait_gone(everything, timeout=15)


async def mark_the_shop_tab(endpoint: str, shop: DemoServer) -> None:
    """Make the shop tab's JSON responses carry the mark, after checking that the first run
    stored the tool in this browser: only a run in this very tab returns the mark."""
    async with ego.connect(endpoint) as browser:
        tab = next(t for t in await browser.tabs() if t.url.startswith(shop.url))
        source = await tab.evaluate(f"localStorage.getItem({json.dumps(CACHE_KEY)})")
        assert isinstance(source, str), "the first run did not store the tool in this browser"
        await tab.evaluate(
            "{ const json = Response.prototype.json; Response.prototype.json = async function "
            f"() {{ const data = await json.call(this); data.name = {json.dumps(MARK)}; "
            "return data; }; }"
        )


async def ego_on_a_terminal(*args: str, env: dict[str, str], cwd: Path) -> tuple[int, Any, str]:
    """Run ``ego ARGS`` with stdout piped and stderr on a pseudo-terminal: (code, JSON, stderr)."""
    leader, follower = pty.openpty()
    try:
        process = await asyncio.create_subprocess_exec(
            *PYTHON_EGO,
            *args,
            env=env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=follower,
        )
        os.close(follower)
        out, _ = await asyncio.wait_for(process.communicate(), 60)
        err = await asyncio.to_thread(_read_all, leader)
    finally:
        os.close(leader)
    assert process.returncode is not None
    return process.returncode, json.loads(out), err


def _read_all(fd: int) -> str:
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the other side is closed and everything was read
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks).decode(errors="replace")


@pytest.mark.chrome
async def test_launch_then_runs_attach_to_it_then_close_ends_it(
    tmp_path: Path, shop: DemoServer
) -> None:
    env = ego_env(tmp_path)
    profile_dir = tmp_path / "kept"
    async with background("launch", "--profile", "kept", env=env, cwd=tmp_path) as launcher:
        assert launcher.stdout is not None
        assert launcher.stderr is not None
        info = await read_json_line(launcher.stdout, timeout=60)
        record = json.loads(state_file(env).read_text())
        assert record["pid"] == info["pid"]
        assert record["endpoint"] == info["endpoint"]
        assert record["profile"] == "kept"
        assert record["owner"] == launcher.pid
        chromes = with_descendants([psutil.Process(info["pid"]), *profile_pids(profile_dir)])

        # The first run opens the shop in the kept browser and stores the tool there.
        first = await ego_async(
            "run",
            "demo-shop",
            "get_product",
            "--arg",
            "id=1",
            "--url",
            shop.url,
            env=env,
            cwd=tmp_path,
        )
        assert first.returncode == 0, first
        assert first.json()["id"] == 1
        assert first.json()["name"] != MARK

        # The second run is a call in the same browser and tab (the shop's port is not the
        # one the manifest's start URL names: --start-url says which copy of the shop to use).
        await mark_the_shop_tab(info["endpoint"], shop)
        code, second, stderr = await ego_on_a_terminal(
            "run", "demo-shop", "get_product", "--arg", "id=1",
            "--start-url", f"demo-shop={shop.url}", env=env, cwd=tmp_path,
        )  # fmt: skip
        assert code == 0, stderr
        assert second["id"] == 1
        assert second["name"] == MARK
        assert "using the browser `ego launch` keeps" in stderr
        assert f"pid {info['pid']}" in stderr

        # --new-browser does not attach: a fresh Chrome has no shop tab and no cached tool.
        fresh = await ego_async(
            "run",
            "demo-shop",
            "get_product",
            "--arg",
            "id=1",
            "--url",
            shop.url,
            "--new-browser",
            env=env,
            cwd=tmp_path,
        )
        assert fresh.returncode == 0, fresh
        assert fresh.json()["name"] != MARK
        # --endpoint wins over the kept browser.
        dead = f"http://127.0.0.1:{free_port()}"
        elsewhere = await ego_async("tabs", "--endpoint", dead, env=env, cwd=tmp_path)
        assert elsewhere.returncode == 4, elsewhere
        # A second keeper is refused while this one runs.
        again = await ego_async("launch", "--profile", "other", env=env, cwd=tmp_path)
        assert again.returncode == 4, again
        assert "already keeps a browser" in again.error_line()

        closed = await ego_async("close", env=env, cwd=tmp_path)
        assert closed.returncode == 0, closed
        assert closed.json()["closed"] is True
        assert closed.json()["pid"] == info["pid"]
        code = await asyncio.wait_for(launcher.wait(), 30)
        stderr_text = (await launcher.stderr.read()).decode()
    assert code == 0, stderr_text
    assert "Traceback" not in stderr_text
    assert not state_file(env).exists()
    assert await wait_gone(chromes, timeout=15) == []
    assert profile_pids(profile_dir) == []

    nothing = await ego_async("close", env=env, cwd=tmp_path)
    assert nothing.returncode == 0, nothing
    assert nothing.json() == {"closed": False, "reason": "no browser is kept"}


@pytest.mark.chrome
async def test_launch_detach_returns_and_keeps_chrome_running(
    tmp_path: Path, shop: DemoServer
) -> None:
    env = ego_env(tmp_path)
    try:
        started = await ego_async("launch", "--detach", "--profile", "bg", env=env, cwd=tmp_path)
        assert started.returncode == 0, started
        info = started.json()
        record = json.loads(state_file(env).read_text())
        assert record["pid"] == info["pid"]
        owner = psutil.Process(record["owner"])
        chromes = with_descendants([psutil.Process(info["pid"]), owner])
        assert alive([owner])
        assert owner.pid != os.getpid()

        # The same request again answers with the running one; another profile is refused.
        same = await ego_async("launch", "--detach", "--profile", "bg", env=env, cwd=tmp_path)
        assert same.returncode == 0, same
        assert same.json()["pid"] == info["pid"]
        assert same.json()["already"] is True

        ran = await ego_async(
            "run",
            "demo-shop",
            "get_product",
            "--arg",
            "id=2",
            "--url",
            shop.url,
            env=env,
            cwd=tmp_path,
        )
        assert ran.returncode == 0, ran
        listed = await ego_async("tabs", env=env, cwd=tmp_path)
        assert listed.returncode == 0, listed
        assert any(row["url"].startswith(shop.url) for row in listed.json()), listed

        closed = await ego_async("close", env=env, cwd=tmp_path)
        assert closed.returncode == 0, closed
        assert closed.json()["closed"] is True
        assert await wait_gone(chromes, timeout=15) == []
        assert not state_file(env).exists()
    finally:
        await end_detached(env)


@pytest.mark.chrome
async def test_a_stale_record_is_ignored_and_removed(tmp_path: Path, shop: DemoServer) -> None:
    env = ego_env(tmp_path)
    gone = subprocess.Popen(["true"])
    gone.wait()
    stale = {
        "endpoint": "http://127.0.0.1:9",
        "websocket": "ws://127.0.0.1:9/devtools/browser/x",
        "profile": "default",
        "profile_dir": str(tmp_path / "default"),
        "pid": gone.pid,
        "started": 1.0,
        "owner": gone.pid,
        "headless": True,
    }
    path = state_file(env)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(stale))

    ran = await ego_async(
        "run",
        "demo-shop",
        "get_product",
        "--arg",
        "id=3",
        "--url",
        shop.url,
        env=env,
        cwd=tmp_path,
    )
    assert ran.returncode == 0, ran
    assert ran.json()["id"] == 3
    assert ran.stderr == ""
    assert not path.exists()

    # An unreadable record is no record either.
    path.write_text("{not json")
    nothing = await ego_async("close", env=env, cwd=tmp_path)
    assert nothing.returncode == 0, nothing
    assert nothing.json()["closed"] is False
    assert not path.exists()


def test_which_commands_attach_to_the_kept_browser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The choice, without Chrome: a record naming this (live) process stands for a kept one."""
    monkeypatch.setenv("EGO_STATE_DIR", str(tmp_path))
    me = psutil.Process()
    kept = state.KeptBrowser(
        endpoint="http://127.0.0.1:9",
        websocket="ws://127.0.0.1:9/devtools/browser/x",
        profile="work",
        profile_dir=str(tmp_path / "work"),
        pid=me.pid,
        started=me.create_time(),
        owner=me.pid,
        headless=True,
    )
    state.record(kept)
    assert state.kept() == kept
    assert Settings().kept_browser() == kept
    assert Settings().kept_browser(profile="work") == kept
    # Another profile gets a Chrome of its own; --endpoint and --new-browser never attach.
    assert Settings().kept_browser(profile="other") is None
    assert Settings(endpoint="http://127.0.0.1:1").kept_browser() is None
    assert Settings(new_browser=True).kept_browser() is None
    # A window on the kept headless profile cannot be had: the error says how to get one.
    with pytest.raises(ProfileInUseError, match="ego close"):
        Settings().kept_browser(profile="work", headless=False)
    # A record that names a process started at another time (a reused pid) is stale.
    state.record(dataclasses.replace(kept, started=kept.started - 100))
    assert state.kept() is None
    assert not state.state_path().exists()


async def serve_shop(port: int, env: dict[str, str], cwd: Path) -> Any:
    """``ego demo --serve --port PORT`` in the background, once it serves; stopping the
    process ends every connection to it (a shop whose server stopped)."""
    process = await asyncio.create_subprocess_exec(
        *PYTHON_EGO, "demo", "--serve", "--port", str(port),
        env=env, cwd=cwd, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    assert process.stdout is not None
    await read_json_line(process.stdout, timeout=60)
    return process


async def stop(process: Any) -> None:
    if process.returncode is None:
        process.kill()
        await process.wait()


@pytest.mark.chrome
async def test_a_dead_shop_tab_is_passed_over_and_a_stopped_shop_is_unreachable(
    tmp_path: Path,
) -> None:
    """``ego launch &``, ``ego demo``, then runs: the demo leaves no tab on its shop, a tab on
    the shop's host at another port (a shop that stopped) is not taken, and three runs with
    the shop stopped leave the tool ok, the site said to be unreachable."""
    workspace = tmp_path / "ws"
    env = ego_env(tmp_path, workspace=workspace)
    live_port, dead_port = free_port(), free_port()
    start = f"http://shop.localhost:{live_port}/"
    # The demo shop's learning, started at a port of the test's.
    site = workspace / "learnings" / "demo-shop"
    shutil.copytree(ROOT / "learnings" / "demo-shop", site)
    manifest = json.loads((site / "manifest.json").read_text())
    manifest["startUrl"] = start
    (site / "manifest.json").write_text(json.dumps(manifest))
    shops: list[Any] = []
    async with background("launch", env=env, cwd=tmp_path) as launcher:
        assert launcher.stdout is not None
        info = await read_json_line(launcher.stdout, timeout=60)
        try:
            demo = await ego_async("demo", env=env, cwd=tmp_path)
            assert demo.returncode == 0, demo
            listed = await ego_async("tabs", env=env, cwd=tmp_path)
            assert not [row for row in listed.json() if "shop.localhost" in row["url"]], listed

            # A tab left on a shop whose server stopped, on the shop's host, another port.
            shops.append(await serve_shop(dead_port, env, tmp_path))
            async with ego.connect(info["endpoint"]) as browser:
                await browser.new_tab(f"http://shop.localhost:{dead_port}/")
            await stop(shops[-1])
            # Passed over, it is named as the way to use that copy when the start URL fails.
            refused = await ego_async("run", "demo-shop", "get_cart", env=env, cwd=tmp_path)
            error = json.loads(refused.error_line())
            assert error["type"] == "SiteUnreachableError", refused
            assert error["error"].startswith(
                f"site 'demo-shop' is unreachable: navigation to {start}"
            )
            assert (
                f"pass --start-url demo-shop=http://shop.localhost:{dead_port}/" in error["error"]
            )
            shops.append(await serve_shop(live_port, env, tmp_path))
            ran = await ego_async("run", "demo-shop", "get_cart", env=env, cwd=tmp_path)
            assert ran.returncode == 0, ran
            assert ran.json()["items"] == []
            await stop(shops[-1])

            # The shop stopped: three runs fail for the site's sake, not the tool's.
            for _ in range(3):
                failed = await ego_async("run", "demo-shop", "get_cart", env=env, cwd=tmp_path)
                assert failed.returncode != 0, failed
                error = json.loads(failed.error_line())
                assert error["type"] == "SiteUnreachableError"
                assert error["error"].startswith("demo-shop/get_cart could not reach the site")
                assert "net::ERR_CONNECTION_REFUSED" in error["error"]
            tools = await ego_async("tools", start, "--no-json", env=env, cwd=tmp_path)
            assert tools.returncode == 0, tools
            assert "get_cart() read, site unreachable: " in tools.stdout
            health = await ego_async(
                "health", "demo-shop/get_cart", "--json", env=env, cwd=tmp_path
            )
            [current] = [row for row in health.json() if row["version"] == "current"]
            assert current["health"]["suspect"] is False
            assert current["health"]["unreachable"] is True
            # ok: the demo's run and the one on the live shop.
            assert (current["health"]["ok"], current["health"]["site_failures"]) == (2, 4)
            table = await ego_async(
                "health", "demo-shop/get_cart", "--no-json", env=env, cwd=tmp_path
            )
            assert "site unreachable at" in table.stdout
            assert "SUSPECT" not in table.stdout
        finally:
            for shop in shops:
                await stop(shop)
            closed = await ego_async("close", env=env, cwd=tmp_path)
            assert closed.returncode == 0, closed
            await asyncio.wait_for(launcher.wait(), 30)
