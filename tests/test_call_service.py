"""``ego run`` through the call service of the browser ``ego launch`` keeps.

The calls run as real subprocesses against one kept browser (``ego launch --detach`` with a
state folder of its own). A probe around the command says whether the command imported
``ego.calls``: a call the service took did not; one it handed back did, and ran in-process.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import stat
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

import ego
from ego.demo import DemoServer
from ego.learning.catalog.registry import Learnings
from ego.learning.health.view import health_table
from tests.helpers.commands import Result, ego_async, ego_env, ego_sync, state_file
from tests.helpers.paths import PYTHON_EGO
from tests.helpers.processes import wait_gone, with_descendants

pytestmark = pytest.mark.chrome

#: ``python -c PROBE ARGS`` is ``ego ARGS`` that says on its last stderr line whether the
#: command imported the module that prepares calls in-process.
PROBE = (
    "import atexit, sys\n"
    "atexit.register(lambda: print('in-process' if 'ego.calls' in sys.modules else "
    "'through the service', file=sys.stderr))\n"
    "from ego.cli.app import main\n"
    "main()\n"
)

SPINNER_MANIFEST = {
    "id": "spinner",
    "name": "Spinner",
    "description": "A workspace site on the demo shop's host whose tool never returns.",
    "domains": ["shop.localhost"],
    "browserTools": {
        "spin": {
            "description": "Mark the URL, then keep the page's thread busy forever.",
            "path": "browser-tools/spin.js",
            "sideEffect": "read",
            "timeout": 300,
        },
        "location": {
            "description": "The page's URL.",
            "path": "browser-tools/location.js",
            "sideEffect": "read",
        },
    },
}
# No moment between the mark and the spin in which a call could slip in.
SPIN = 'async () => { history.replaceState(null, "", "#spinning"); for (;;) {} }\n'


@dataclass
class Kept:
    env: dict[str, str]
    cwd: Path
    record: dict[str, object]
    shop: DemoServer

    async def run(self, *args: str, env: dict[str, str] | None = None) -> tuple[Result, str]:
        """``ego ARGS`` under the probe: the result and how the call was made."""
        result = await ego_async(*args, env=env or self.env, cwd=self.cwd, command=[*PYTHON_PROBE])
        lines = result.stderr.strip().splitlines()
        assert lines, result
        result.stderr = "\n".join(lines[:-1])
        return result, lines[-1]


PYTHON_PROBE = [PYTHON_EGO[0], "-c", PROBE]


@pytest.fixture(scope="module")
def kept(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kept]:
    root = tmp_path_factory.mktemp("call-service")
    env = ego_env(root)
    workspace = root / "ws" / "learnings" / "spinner"
    (workspace / "browser-tools").mkdir(parents=True)
    with DemoServer() as shop:
        manifest = {**SPINNER_MANIFEST, "startUrl": shop.url}
        (workspace / "manifest.json").write_text(json.dumps(manifest))
        (workspace / "browser-tools" / "spin.js").write_text(SPIN)
        (workspace / "browser-tools" / "location.js").write_text("async () => location.href\n")
        started = ego_sync("launch", "--detach", "--profile", "svc", env=env, cwd=root)
        assert started.returncode == 0, started
        record = json.loads(state_file(env).read_text())
        processes = with_descendants([psutil.Process(record["owner"])])
        try:
            yield Kept(env, root, record, shop)
        finally:
            closed = ego_sync("close", env=env, cwd=root)
            assert closed.returncode == 0, closed
            assert asyncio.run(wait_gone(processes, timeout=15)) == []
    # The socket's folder went with the launcher.
    assert not Path(str(record["calls"])).parent.exists()


async def test_the_kept_browser_serves_ego_run_on_a_socket_only_its_user_reaches(
    kept: Kept,
) -> None:
    calls = Path(str(kept.record["calls"]))
    assert calls.is_socket()
    assert stat.S_IMODE(calls.parent.stat().st_mode) == 0o700
    ran, how = await kept.run(
        "run", "demo-shop", "get_product", "--arg", "id=2", "--url", kept.shop.url
    )
    assert ran.returncode == 0, ran
    assert ran.json()["id"] == 2
    assert how == "through the service"
    # The call ran in the kept browser: its tab is there.
    async with ego.connect(str(kept.record["websocket"])) as browser:
        assert any(tab.url.startswith(kept.shop.url) for tab in await browser.tabs())
    # Its run is in the record by the time the answer came (read at once, in this process:
    # the service's writer would otherwise write it a quarter of a second later), as the
    # command line's.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EGO_STATE_DIR", kept.env["EGO_STATE_DIR"])
        [current, *_] = health_table(Learnings(), "demo-shop", "get_product")
    assert current.version == "current"
    latest = current.recent[0]
    assert (latest.outcome, latest.front_end) == ("OK", "cli"), current


@pytest.mark.parametrize(
    "args",
    [
        ("run", "demo-shop", "nope"),
        ("run", "demo-shop", "get_product", "--arg", "id=abc"),
        ("run", "demo-shop", "post_review", "--arg", "id=1"),
        ("run", "no-such-site", "tool"),
        # Bytes the locale cannot decode reach Python as a lone surrogate.
        ("run", "demo-shop", "get_product", "--arg", "id=\udcff"),
    ],
    ids=[
        "unknown tool",
        "bad arg",
        "irreversible without --confirm",
        "unknown site",
        "undecodable arg",
    ],
)
async def test_a_refused_call_says_what_the_command_says_in_process(
    kept: Kept, args: tuple[str, ...]
) -> None:
    served, how = await kept.run(*args)
    assert how == "through the service"
    # --new-browser never asks the service; each of these fails before a Chrome starts.
    alone, how_alone = await kept.run(*args, "--new-browser")
    assert how_alone == "in-process"
    assert served.returncode == alone.returncode == 3, served
    assert served.error_line() == alone.error_line()
    assert served.stdout == alone.stdout == ""


async def test_what_the_service_does_not_take_runs_in_the_command(kept: Kept) -> None:
    # Click words a malformed command line as it always has.
    usage, how = await kept.run("run", "demo-shop", "get_product", "--args", "{x")
    assert usage.returncode == 2, usage
    assert "Invalid value for --args" in usage.stderr
    assert how == "in-process"
    # A Python tool runs in the command's own process (its folder, its environment).
    python, how = await kept.run(
        "run",
        "demo-shop",
        "cheapest_in_category",
        "--arg",
        "category=audio",
        "--url",
        kept.shop.url,
    )
    assert python.returncode == 0, python
    assert python.json()["category"] == "audio"
    assert how == "in-process"
    # Another import path could find other learning packs: not the service's to answer.
    elsewhere = {**kept.env, "PYTHONPATH": str(kept.cwd)}
    other, how = await kept.run(
        "run", "demo-shop", "get_product", "--arg", "id=1", "--url", kept.shop.url, env=elsewhere
    )
    assert other.returncode == 0, other
    assert other.json()["id"] == 1
    assert how == "in-process"


async def test_each_call_sees_its_own_workspace(kept: Kept) -> None:
    # A relative --workspace is the command's, read from its own folder.
    here, how = await kept.run(
        "run", "spinner", "location", "--workspace", "ws", "--url", kept.shop.url
    )
    assert here.returncode == 0, here
    assert here.json() == kept.shop.url
    assert how == "through the service"
    # The next command names no workspace: the service kept none for it.
    missing, how = await kept.run("run", "spinner", "location")
    assert how == "through the service"
    assert missing.returncode == 3, missing
    assert "UnknownSiteError" in missing.error_line()


async def test_ctrl_c_stops_the_call_in_the_kept_browser(kept: Kept) -> None:
    async with ego.connect(str(kept.record["websocket"])) as browser:
        spinning = browser.connection.expect(
            "Target.targetInfoChanged",
            predicate=lambda params: params["targetInfo"]["url"].endswith("#spinning"),
        )
        await browser.connection.send("Target.setDiscoverTargets", {"discover": True})
        client = await asyncio.create_subprocess_exec(
            *PYTHON_EGO,
            "run",
            "spinner",
            "spin",
            "--workspace",
            "ws",
            "--url",
            kept.shop.url,
            env=kept.env,
            cwd=kept.cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            info = await asyncio.wait_for(spinning, 60)
            client.send_signal(signal.SIGINT)
            code = await asyncio.wait_for(client.wait(), 30)
        finally:
            if client.returncode is None:
                client.kill()
                await client.wait()
    assert code == 130
    # The page's thread is free again: the spinning tab answers well within the spin's own
    # timeout (a page still spinning would time this evaluate out).
    target = info["targetInfo"]["targetId"]
    async with ego.connect(str(kept.record["websocket"])) as browser:
        tab = next(tab for tab in await browser.tabs() if tab.target_id == target)
        assert await tab.evaluate("location.hash", timeout=20) == "#spinning"


async def test_a_record_whose_service_is_gone_is_passed_over(tmp_path: Path) -> None:
    env = ego_env(tmp_path)
    me = psutil.Process()
    record = {
        "endpoint": "http://127.0.0.1:9",
        "websocket": "ws://127.0.0.1:9/devtools/browser/x",
        "profile": "default",
        "profile_dir": str(tmp_path / "default"),
        "pid": me.pid,
        "started": me.create_time(),
        "owner": me.pid,
        "headless": True,
        "calls": str(tmp_path / "gone" / "calls.sock"),
    }
    state_file(env).parent.mkdir(parents=True)
    state_file(env).write_text(json.dumps(record))
    result = await ego_async(
        "run", "demo-shop", "nope", env=env, cwd=tmp_path, command=PYTHON_PROBE
    )
    lines = result.stderr.strip().splitlines()
    assert lines[-1] == "in-process"
    assert result.returncode == 3
    assert "declares no tool 'nope'" in lines[0]
    assert os.path.exists(state_file(env))
