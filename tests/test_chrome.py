"""Finding, launching and ending a local Chrome, checked on the real processes with psutil."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import stat
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

import ego
import ego.protocol.chrome
from ego.protocol.chrome import find_chrome
from tests.conftest import ROOT, PageServer
from tests.test_tab import HANG

# Tests that start Chrome are marked `chrome` one by one (or through a browser fixture);
# the rest need none and run in the fast tier.

CHROMIUM = "/usr/bin/chromium"
linux_only = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")


def live(processes: list[psutil.Process]) -> list[psutil.Process]:
    """Those of ``processes`` still running (a zombie has ended; it only awaits reaping)."""
    running = []
    for process in processes:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                running.append(process)
        except psutil.NoSuchProcess:
            pass
    return running


def tree(pid: int) -> list[psutil.Process]:
    root = psutil.Process(pid)
    return [root, *root.children(recursive=True)]


def processes_mentioning(text: str) -> list[psutil.Process]:
    """Live processes whose command line contains ``text`` (a profile folder, a pid)."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        try:
            if text in " ".join(process.info["cmdline"] or []):
                found.append(process)
        except psutil.Error:
            continue
    return live(found)


def launched_process(browser: ego.Browser) -> ego.protocol.chrome.ChromeProcess:
    assert browser.process is not None
    return browser.process


# --- find_chrome ----------------------------------------------------------------------------


def test_find_chrome_prefers_ego_chrome(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    custom = tmp_path / "my-chrome"
    custom.write_text('#!/bin/sh\nexec /usr/bin/chromium "$@"\n')
    custom.chmod(0o755)
    monkeypatch.setenv("EGO_CHROME", str(custom))
    assert find_chrome() == str(custom)


def test_find_chrome_rejects_a_missing_ego_chrome(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "no-such-chrome"
    monkeypatch.setenv("EGO_CHROME", str(missing))
    with pytest.raises(ego.ChromeNotFoundError, match="EGO_CHROME") as caught:
        find_chrome()
    assert str(missing) in str(caught.value)


async def test_nothing_on_path_gives_the_install_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EGO_CHROME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ego.ChromeNotFoundError) as caught:
        find_chrome()
    message = str(caught.value)
    assert "apt-get install -y chromium" in message
    assert "EGO_CHROME" in message
    # ego.launch says the same before starting anything.
    with pytest.raises(ego.ChromeNotFoundError, match="apt-get install"):
        await ego.launch()


def test_find_chrome_searches_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EGO_CHROME", raising=False)
    monkeypatch.setenv("PATH", str(Path(CHROMIUM).parent))
    assert find_chrome() == CHROMIUM


# --- launch: flags, endpoint, stderr --------------------------------------------------------


async def test_launch_is_headless_by_default(browser: ego.Browser) -> None:
    cmdline = psutil.Process(launched_process(browser).pid).cmdline()
    assert "--headless" in cmdline
    assert "HeadlessChrome" in (await browser.version())["userAgent"]


async def test_no_sandbox_only_when_root(browser: ego.Browser) -> None:
    cmdline = psutil.Process(launched_process(browser).pid).cmdline()
    assert ("--no-sandbox" in cmdline) == (os.geteuid() == 0)


@pytest.mark.chrome
async def test_launch_without_the_root_flag_leaves_no_sandbox_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ego.protocol.chrome, "_running_as_root", lambda: False)
    if os.geteuid() == 0:
        # As root, Chrome refuses to run without --no-sandbox: the flag really was left out,
        # and the launch fails with Chrome's own reason instead of hanging.
        with pytest.raises(ego.ChromeLaunchError, match="no-sandbox"):
            await asyncio.wait_for(ego.launch(), HANG)
    else:
        async with ego.launch() as launched:
            assert "--no-sandbox" not in psutil.Process(launched_process(launched).pid).cmdline()


async def test_endpoint_is_local_with_a_port_chosen_by_chrome(browser: ego.Browser) -> None:
    process = launched_process(browser)
    match = re.fullmatch(r"ws://127\.0\.0\.1:(\d+)/devtools/browser/[\w-]+", browser.endpoint)
    assert match is not None, browser.endpoint
    port = int(match[1])
    cmdline = psutil.Process(process.pid).cmdline()
    assert "--remote-debugging-port=0" in cmdline
    assert "--remote-debugging-address=127.0.0.1" in cmdline
    # Chrome wrote the port it picked, and listens there on loopback only.
    assert (process.user_data_dir / "DevToolsActivePort").read_text().splitlines()[0] == str(port)
    listening = [
        conn.laddr
        for conn in psutil.Process(process.pid).net_connections(kind="tcp")
        if conn.status == psutil.CONN_LISTEN and conn.laddr.port == port
    ]
    assert [(address.ip, address.port) for address in listening] == [("127.0.0.1", port)]


@linux_only
async def test_chrome_output_goes_to_a_file_not_a_pipe(browser: ego.Browser) -> None:
    process = launched_process(browser)
    for fd in (1, 2):
        target = f"/proc/{process.pid}/fd/{fd}"
        mode = os.stat(target).st_mode
        assert stat.S_ISREG(mode), f"fd {fd} is not a regular file"
        assert not stat.S_ISFIFO(mode)
        assert os.readlink(target) == str(process.log_path)


# --- profiles -------------------------------------------------------------------------------


@pytest.mark.chrome
async def test_persistent_profile_keeps_local_storage_and_cookies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: PageServer
) -> None:
    monkeypatch.setenv("EGO_PROFILES_DIR", str(tmp_path))
    set_url = server.route(
        "/profile/set",
        "<title>set</title>",
        headers={"Set-Cookie": "kept=from-header; Max-Age=86400; Path=/"},
    )
    read_url = server.route("/profile/read", "<title>read</title>")

    async with ego.launch(profile="keeper") as first:
        assert launched_process(first).user_data_dir == tmp_path / "keeper"
        tab = await first.new_tab(set_url)
        await tab.evaluate(
            "localStorage.setItem('note', 'remember me');"
            "document.cookie = 'js=from-script; max-age=86400; path=/'"
        )
    assert (tmp_path / "keeper").is_dir()  # a persistent profile is not removed on close

    async with ego.launch(profile="keeper") as second:
        tab = await second.new_tab(read_url)
        stored = await tab.evaluate("localStorage.getItem('note')")
        cookies = await tab.evaluate("document.cookie.split('; ').sort()")
    assert stored == "remember me"
    assert cookies == ["js=from-script", "kept=from-header"]


@pytest.mark.chrome
async def test_second_chrome_on_a_profile_in_use_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EGO_PROFILES_DIR", str(tmp_path))
    async with ego.launch(profile="busy") as first:
        with pytest.raises(ego.ProfileInUseError) as caught:
            await asyncio.wait_for(ego.launch(profile="busy"), HANG)
        assert caught.value.pid == launched_process(first).pid
        assert caught.value.profile_dir == str(tmp_path / "busy")
        assert "ego.connect" in str(caught.value)
        # The first Chrome is unharmed.
        assert launched_process(first).running
        assert "product" in await first.version()


def test_profile_names_must_be_plain(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("EGO_PROFILES_DIR", str(tmp_path))
    assert ego.protocol.chrome.profile_dir("work") == tmp_path / "work"
    for bad in ("", "..", "a/b", "a\\b"):
        with pytest.raises(ValueError, match="plain folder name"):
            ego.protocol.chrome.profile_dir(bad)


# --- ending Chrome --------------------------------------------------------------------------


@pytest.mark.chrome
async def test_close_ends_the_whole_tree_and_removes_the_temp_profile(
    server: PageServer,
) -> None:
    launched = await ego.launch()
    process = launched_process(launched)
    try:
        await launched.new_tab(server.route("/tree", "<title>renderer</title>"))
        processes = tree(process.pid)
        watchdogs = processes_mentioning(f"_watchdog.py {process.pid}")
        assert len(processes) > 2  # the browser, zygotes, a renderer, ...
        assert len(watchdogs) == 1
        assert process.user_data_dir.is_dir()
    finally:
        await launched.close()
    assert live(processes) == []
    assert live(watchdogs) == []
    assert not process.user_data_dir.exists()
    assert launched.closed
    await launched.close()  # idempotent


@pytest.mark.chrome
async def test_launch_then_close_leaves_no_process_of_that_chrome() -> None:
    async with ego.launch() as launched:
        process = launched_process(launched)
        profile = str(process.user_data_dir)
        assert processes_mentioning(profile), "the Chrome processes name their profile"
    assert processes_mentioning(profile) == []
    assert not process.running
    with pytest.raises(psutil.NoSuchProcess):
        psutil.Process(process.pid)  # reaped, not a zombie


_CHILD = """
import asyncio, ego

async def main():
    browser = await ego.launch()
    print(browser.process.pid, browser.process.user_data_dir, flush=True)
    await asyncio.Event().wait()

asyncio.run(main())
"""


@pytest.mark.chrome
async def test_sigkilled_owner_leaves_no_chrome_behind(tmp_path: Path) -> None:
    errors = tmp_path / "child.err"
    with open(errors, "wb") as stderr:
        child = subprocess.Popen(
            [sys.executable, "-c", _CHILD], stdout=subprocess.PIPE, stderr=stderr, cwd=ROOT
        )
    assert child.stdout is not None
    processes: list[psutil.Process] = []
    try:
        line = await asyncio.wait_for(asyncio.to_thread(child.stdout.readline), 60)
        assert line, f"the child printed nothing: {errors.read_text()}"
        pid_text, profile = line.decode().split(maxsplit=1)
        profile = profile.strip()
        processes = tree(int(pid_text))
        watchdogs = processes_mentioning(f"_watchdog.py {pid_text}")
        assert len(watchdogs) == 1
        assert live(processes)

        os.kill(child.pid, signal.SIGKILL)
        child.wait()

        _, alive = await asyncio.to_thread(psutil.wait_procs, processes, timeout=20)
        assert alive == [], f"Chrome outlived its owner: {alive}"
        _, alive = await asyncio.to_thread(psutil.wait_procs, watchdogs, timeout=20)
        assert alive == []
        assert not Path(profile).exists(), "the watchdog removes the temporary profile"
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()
        for process in live(processes):
            ego.protocol.chrome.kill_tree(process.pid)
