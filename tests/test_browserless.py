"""ego against a real browserless server, started here with ``scripts/browserless start``.

Skipped when browserless is not installed (``scripts/browserless install``; ``.ci/run`` runs
it). The server, its node process and every Chrome it started must be gone at the end: the
module fixture checks that itself, because the session-wide leak check only knows the
Chromes ego launches.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

import ego
from ego.demo import DemoServer
from ego.errors import ConnectionFailedError
from ego.pool import BrowserPool
from tests.helpers.batches import (
    check_complete,
    count_lines,
    product_inputs,
    run_batch_cli,
    start_batch,
    wait_for_lines,
    write_jsonl,
)
from tests.helpers.processes import still_alive_after

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "browserless"
INSTALL_DIR = Path(os.environ.get("EGO_BROWSERLESS_DIR") or ROOT / ".browserless")
INSTALLED = (INSTALL_DIR / "node_modules" / "@browserless.io" / "browserless").is_dir()

pytestmark = [
    pytest.mark.chrome,  # browserless runs real Chromes
    pytest.mark.skipif(
        not INSTALLED,
        reason=f"browserless is not installed in {INSTALL_DIR}: run scripts/browserless install",
    ),
]


@dataclass
class Browserless:
    port: int
    token: str
    process: subprocess.Popen[bytes]
    data_dir: Path
    log: Path

    def url(self, token: str | None = None) -> str:
        return f"ws://127.0.0.1:{self.port}?token={token or self.token}"

    def chromes(self) -> list[psutil.Process]:
        """Chrome main processes this server started (one per open connection)."""
        return [
            p for p in self.processes() if "--type=" not in " ".join(_cmdline(p)) and _is_chrome(p)
        ]

    def processes(self) -> list[psutil.Process]:
        """Every process of the server: its session, and anything using its data folder."""
        marker = str(self.data_dir) + "/"
        found = []
        for process in psutil.process_iter():
            try:
                if process.status() == psutil.STATUS_ZOMBIE:
                    continue
                in_session = os.getsid(process.pid) == self.process.pid
                cmdline = " ".join(process.cmdline())
            except (psutil.Error, OSError):
                continue
            if in_session or marker in cmdline:
                found.append(process)
        return found


def _cmdline(process: psutil.Process) -> list[str]:
    try:
        return process.cmdline()
    except psutil.Error:
        return []


def _is_chrome(process: psutil.Process) -> bool:
    return any("chrom" in part.lower() for part in _cmdline(process)[:1])


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _ready(port: int, token: str) -> bool:
    try:
        with urllib.request.urlopen(
            f"http://127.0.0.1:{port}/active?token={token}", timeout=2
        ) as response:
            return bool(response.status == 204)
    except (urllib.error.URLError, OSError):
        return False


@pytest.fixture(scope="module")
def browserless(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browserless]:
    port, token = _free_port(), secrets.token_hex(12)
    log = tmp_path_factory.mktemp("browserless") / "server.log"
    with open(log, "wb") as handle:
        process = subprocess.Popen(
            [str(SCRIPT), "start", "--port", str(port), "--token", token],
            stdin=subprocess.DEVNULL,
            stdout=handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own group: the teardown signals all of it
        )
    server = Browserless(port, token, process, INSTALL_DIR / "data" / str(port), log)
    try:
        deadline = time.monotonic() + 90
        while not _ready(port, token):
            if process.poll() is not None or time.monotonic() > deadline:
                tail = log.read_text(errors="replace")[-2000:]
                pytest.fail(f"browserless did not come up on port {port}: {tail}")
            time.sleep(0.1)  # polling /active: readiness is the server's answer
        yield server
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)
        leftovers = still_alive_after(server.processes(), 15)
        for leftover in leftovers:
            with contextlib.suppress(psutil.Error):
                leftover.kill()
        assert not leftovers, f"browserless left processes behind: {leftovers}"


@pytest.fixture(scope="module")
def shop() -> Iterator[DemoServer]:
    with DemoServer(port=0) as server:
        yield server


async def test_connect_and_pool_through_browserless(
    browserless: Browserless, shop: DemoServer
) -> None:
    async with ego.connect(browserless.url()) as browser:
        browser.site.set_start_url("demo-shop", shop.url)
        product = await browser.site.run_browser_tool("demo-shop", "get_product", {"id": 3})
        assert product["name"] == shop.state.products[3]["name"]
        assert len(browserless.chromes()) == 1

    # Two pool browsers on one endpoint: browserless gives each connection its own Chrome.
    async with BrowserPool(endpoints=[browserless.url()], browsers_per_endpoint=2) as browsers:
        browsers.set_start_url("demo-shop", shop.url)
        assert len(browserless.chromes()) == 2
        inputs = product_inputs(shop, 40)
        results = await browsers.map("demo-shop", "get_product", inputs)
        assert all(item.ok for item in results)
        assert [item.result["id"] for item in results] == [i["id"] for i in inputs]
        assert {item.browser for item in results} == {0, 1}
    # Disconnecting ends those Chromes on the server.
    assert not still_alive_after(browserless.chromes(), 30)

    with pytest.raises(ConnectionFailedError, match=r"HTTP 401: check the token") as caught:
        await ego.connect(browserless.url("wrong"))
    assert "wrong" not in str(caught.value)  # the token is never printed


def test_batch_through_browserless_killed_then_resumed(
    browserless: Browserless, shop: DemoServer, tmp_path: Path
) -> None:
    inputs = product_inputs(shop, 200)
    source, output = tmp_path / "items.jsonl", tmp_path / "results.jsonl"
    write_jsonl(source, inputs)
    args = [
        "demo-shop",
        "get_product",
        "--input",
        str(source),
        "--output",
        str(output),
        "--url",
        shop.url,
        "--endpoint",
        browserless.url(),
        "--browsers",
        "2",
        "--concurrency",
        "8",
    ]
    first = start_batch(args)
    wait_for_lines(output, 100, first)
    remote = browserless.chromes()
    assert len(remote) == 2
    first.send_signal(signal.SIGKILL)
    first.communicate()
    kept = count_lines(output)
    assert kept < 200
    # The killed client's websockets closed, so browserless ends its Chromes.
    assert not still_alive_after(remote, 30)

    code, out, err = run_batch_cli(args)
    assert code == 0, err
    summary = json.loads(out)
    assert summary["skipped"] == kept
    assert summary["ran"] == 200 - kept
    check_complete(shop, output, inputs)
    assert not still_alive_after(browserless.chromes(), 30)


def test_batch_with_a_wrong_token_says_so_in_one_line(
    browserless: Browserless, shop: DemoServer, tmp_path: Path
) -> None:
    source = tmp_path / "items.jsonl"
    write_jsonl(source, product_inputs(shop, 3))
    base = ["demo-shop", "get_product", "--input", str(source), "--url", shop.url]
    wrong = browserless.url("not-the-token")

    code, out, err = run_batch_cli(
        [*base, "--output", str(tmp_path / "a.jsonl"), "--endpoint", wrong, "--no-json"]
    )
    assert code == 4
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("ego: ConnectionFailedError: ")
    assert "HTTP 401" in lines[0]
    assert "token" in lines[0]
    assert "not-the-token" not in err

    code, _, err = run_batch_cli(
        [*base, "--output", str(tmp_path / "b.jsonl"), "--endpoint", wrong]
    )
    assert code == 4
    assert json.loads(err)["type"] == "ConnectionFailedError"
    assert not browserless.chromes()
