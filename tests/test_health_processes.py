"""The run record across processes: a script and the command line add up in one record, and
four processes running a tool at the same moment lose no run.

Every process is a real one, attached to the session's Chrome, and writes to one state
folder of the test's own.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

import ego
from ego.learning.catalog.registry import Learnings
from ego.learning.health.view import health_table
from tests.helpers.browsers import websocket_url
from tests.helpers.commands import ego_async, ego_env, http_endpoint
from tests.helpers.health import MOODY, close_tabs, isolated_store, mood_pages
from tests.helpers.learnings import make_site, tool
from tests.helpers.page_server import PageServer

pytestmark = pytest.mark.chrome

#: A script run as its own process: attach, open a tab, say "ready", wait for a line on
#: stdin when asked to, run the tool N times, say how many returned.
SCRIPT = """
import asyncio, sys
import ego

async def main(endpoint, root, site_id, url, times, wait):
    learnings = ego.Learnings(roots=[root])
    async with ego.connect(endpoint, learnings=learnings) as browser:
        tab = await browser.new_tab(url)
        print("ready", flush=True)
        if wait:
            sys.stdin.readline()
        ok = 0
        for _ in range(times):
            await browser.site.run_tool(site_id, "check", tab=tab)
            ok += 1
        await tab.close()
    print(f"done {ok}", flush=True)

asyncio.run(main(*sys.argv[1:5], int(sys.argv[5]), sys.argv[6] == "wait"))
"""


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    yield from isolated_store(monkeypatch, tmp_path / "state")


def moody_workspace(
    tmp_path: Path, server: PageServer, store: Path, prefix: str
) -> tuple[str, Path, dict[str, str], dict[str, str]]:
    """A workspace site with the moody tool: its id, learnings root, pages, and the
    environment of a process that records into ``store``."""
    site_id = f"{prefix}-{uuid.uuid4().hex[:8]}"
    root = tmp_path / "ws" / "learnings"
    make_site(
        root,
        site_id,
        domains=[f"127.0.0.1:{server.port}"],
        browser_tools={"check": tool(MOODY, description="Check the page")},
    )
    env = ego_env(tmp_path / "profiles", workspace=root.parent, EGO_STATE_DIR=str(store.parent))
    return site_id, root, mood_pages(server, site_id), env


async def start_script(
    env: dict[str, str], endpoint: str, root: Path, site_id: str, url: str, times: int
) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        SCRIPT,
        endpoint,
        str(root),
        site_id,
        url,
        str(times),
        "wait",
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def line_of(process: asyncio.subprocess.Process) -> str:
    assert process.stdout is not None
    raw = await asyncio.wait_for(process.stdout.readline(), 60)
    if not raw:
        assert process.stderr is not None
        error = await process.stderr.read()
        raise AssertionError(f"the script ended early: {error.decode(errors='replace')}")
    return raw.decode().strip()


async def test_runs_from_a_script_and_the_command_line_add_up_in_one_record(
    ported_browser: ego.Browser, server: PageServer, tmp_path: Path, store: Path
) -> None:
    site_id, root, pages, env = moody_workspace(tmp_path, server, store, "together")
    browser = ported_browser  # other processes attach to it

    script = await start_script(env, websocket_url(browser), root, site_id, pages["ok"], 2)
    assert await line_of(script) == "ready"
    assert script.stdin is not None
    script.stdin.write(b"go\n")
    await script.stdin.drain()
    assert await line_of(script) == "done 2"
    assert await asyncio.wait_for(script.wait(), 60) == 0

    endpoint = http_endpoint(websocket_url(browser))
    ran = await ego_async(
        "run", site_id, "check", "--url", pages["ok"], "--endpoint", endpoint, env=env
    )
    assert ran.returncode == 0, ran
    assert ran.json() == {"title": "ok"}
    broken = await ego_async(
        "run", site_id, "check", "--url", pages["broken"], "--endpoint", endpoint, env=env
    )
    assert broken.returncode == 3, broken

    await close_tabs(browser, f"/{site_id}/")
    [row] = health_table(Learnings(roots=[root]), site_id, "check", recent=10)
    assert (row.health.runs, row.health.ok, row.health.failures) == (4, 3, 1)
    assert sorted(run.front_end for run in row.recent) == ["cli", "cli", "python", "python"]
    assert row.recent[0].outcome == "SKILL_BROKEN"


async def test_four_processes_running_a_tool_at_once_lose_no_run(
    ported_browser: ego.Browser, server: PageServer, tmp_path: Path, store: Path
) -> None:
    site_id, root, pages, env = moody_workspace(tmp_path, server, store, "crowd")
    browser = ported_browser  # other processes attach to it
    times = 40
    scripts = [
        await start_script(env, websocket_url(browser), root, site_id, pages["ok"], times)
        for _ in range(4)
    ]
    # Every process is attached with its tab open before any of them runs the tool.
    assert [await line_of(script) for script in scripts] == ["ready"] * 4
    for script in scripts:
        assert script.stdin is not None
        script.stdin.write(b"go\n")
        await script.stdin.drain()
    assert [await line_of(script) for script in scripts] == [f"done {times}"] * 4
    assert [await asyncio.wait_for(script.wait(), 60) for script in scripts] == [0] * 4

    [row] = health_table(Learnings(roots=[root]), site_id, "check")
    assert (row.health.runs, row.health.ok, row.health.failures) == (4 * times, 4 * times, 0)
