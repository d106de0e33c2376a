"""Finding, launching and ending a local Chrome, checked on the real processes with psutil."""

from __future__ import annotations

import asyncio
import contextlib
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
from ego.protocol._proctree import wait_ended
from ego.protocol.chrome import find_chrome
from ego.protocol.pipe import PipeWire
from tests.helpers.browsers import HANG, websocket_url
from tests.helpers.commands import free_port
from tests.helpers.page_server import PageServer
from tests.helpers.paths import ROOT
from tests.helpers.processes import live, processes_mentioning, tree, wait_gone

# Tests that start Chrome are marked `chrome` one by one (or through a browser fixture);
# the rest need none and run in the fast tier.

CHROMIUM = "/usr/bin/chromium"
linux_only = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")


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


def listening_ports(pid: int) -> list[tuple[str, int]]:
    """The TCP addresses any process of Chrome ``pid``'s tree listens on."""
    found = []
    for process in tree(pid):
        with contextlib.suppress(psutil.NoSuchProcess):
            for conn in process.net_connections(kind="tcp"):
                if conn.status == psutil.CONN_LISTEN:
                    found.append((conn.laddr.ip, conn.laddr.port))
    return found


def pipe_ends(browser: ego.Browser) -> tuple[int, int]:
    """The descriptors of ego's ends of ``browser``'s debugging pipe: (read, write)."""
    wire = browser.connection._wire
    assert isinstance(wire, PipeWire)
    assert wire._reader is not None
    assert wire._writer is not None
    reader, writer = wire._reader.get_extra_info("pipe"), wire._writer.get_extra_info("pipe")
    return reader.fileno(), writer.fileno()


@linux_only
async def test_a_launched_browser_opens_no_port_and_talks_over_a_pipe(
    browser: ego.Browser,
) -> None:
    process = launched_process(browser)
    cmdline = psutil.Process(process.pid).cmdline()
    assert "--remote-debugging-pipe" in cmdline
    assert not [flag for flag in cmdline if flag.startswith("--remote-debugging-port")]
    assert browser.endpoint is None
    assert not (process.user_data_dir / "DevToolsActivePort").exists()
    assert listening_ports(process.pid) == []
    # Chrome reads on its descriptor 3 and writes on 4: the other ends of ego's two pipes.
    read_fd, write_fd = pipe_ends(browser)
    chrome_reads = os.stat(f"/proc/{process.pid}/fd/3")
    chrome_writes = os.stat(f"/proc/{process.pid}/fd/4")
    assert stat.S_ISFIFO(chrome_reads.st_mode)
    assert stat.S_ISFIFO(chrome_writes.st_mode)
    assert chrome_reads.st_ino == os.fstat(write_fd).st_ino
    assert chrome_writes.st_ino == os.fstat(read_fd).st_ino
    # Only the browser process holds them: its end closing (an exit, a crash, a kill) is the
    # end of file that fails every pending call, whatever its children do.
    holders = {
        each.pid
        for each in tree(process.pid)
        for fd in _descriptors(each.pid)
        if fd in (chrome_reads.st_ino, chrome_writes.st_ino)
    }
    assert holders == {process.pid}
    assert (await browser.version())["product"].startswith(("Chrome/", "HeadlessChrome/"))


def _descriptors(pid: int) -> list[int]:
    """The inodes of process ``pid``'s open descriptors."""
    inodes = []
    with contextlib.suppress(OSError):
        for name in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                inodes.append(os.stat(f"/proc/{pid}/fd/{name}").st_ino)
    return inodes


@linux_only
async def test_the_pipe_is_not_inherited_by_other_children(browser: ego.Browser) -> None:
    pipes = {os.fstat(fd).st_ino for fd in pipe_ends(browser)}
    # close_fds=False: only close-on-exec keeps the pipe out of this child.
    child = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-c", _LIST_FDS],
        capture_output=True,
        text=True,
        check=True,
        close_fds=False,
        timeout=HANG,
    )
    inherited = {int(inode) for inode in child.stdout.split()}
    assert inherited  # the child saw its own descriptors at least
    assert not pipes & inherited


_LIST_FDS = """
import os
for name in os.listdir('/proc/self/fd'):
    try:
        print(os.stat(f'/proc/self/fd/{name}').st_ino)
    except OSError:
        pass
"""


async def test_port_zero_opens_a_loopback_port_that_another_client_attaches_to(
    ported_browser: ego.Browser,
) -> None:
    process = launched_process(ported_browser)
    match = re.fullmatch(
        r"ws://127\.0\.0\.1:(\d+)/devtools/browser/[\w-]+", websocket_url(ported_browser)
    )
    assert match is not None, ported_browser.endpoint
    port = int(match[1])
    cmdline = psutil.Process(process.pid).cmdline()
    assert "--remote-debugging-port=0" in cmdline
    assert "--remote-debugging-address=127.0.0.1" in cmdline
    # Chrome wrote the port it picked, and listens there on loopback only.
    assert (process.user_data_dir / "DevToolsActivePort").read_text().splitlines()[0] == str(port)
    assert listening_ports(process.pid) == [("127.0.0.1", port)]
    # ego's own connection still goes over the pipe; the port is for others.
    assert isinstance(ported_browser.connection._wire, PipeWire)
    async with ego.connect(f"http://127.0.0.1:{port}") as other:
        tab = await other.new_tab("data:text/html,<title>from the other client</title>")
        try:
            seen = await ported_browser.find_tab(predicate=lambda t: t.target_id == tab.target_id)
            assert seen is not None
            assert await seen.evaluate("document.title") == "from the other client"
        finally:
            await tab.close()


@pytest.mark.chrome
async def test_a_fixed_port_is_opened_and_a_taken_one_is_refused_before_starting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    port = free_port()
    async with ego.launch(port=port) as launched:
        assert launched.endpoint is not None
        assert launched.endpoint.startswith(f"ws://127.0.0.1:{port}/devtools/browser/")
        assert listening_ports(launched_process(launched).pid) == [("127.0.0.1", port)]
        async with ego.connect(launched.endpoint) as other:
            assert (await other.version())["product"] == (await launched.version())["product"]

        def spawn(*args: object, **kwargs: object) -> None:
            pytest.fail("a Chrome was started for a port that is taken")

        monkeypatch.setattr(ego.protocol.chrome, "spawn", spawn)
        with pytest.raises(ego.ChromeLaunchError, match=f"port {port} on 127.0.0.1") as caught:
            await ego.launch(port=port)
        assert "port=0" in str(caught.value)
        monkeypatch.undo()
    # Free again once that Chrome is gone, though its closed connections still hold the port
    # in TIME_WAIT for a while.
    async with ego.launch(port=port) as again:
        assert again.endpoint is not None
        assert again.endpoint.startswith(f"ws://127.0.0.1:{port}/devtools/browser/")


@pytest.mark.parametrize("port", [-1, 65536, True, 1.5, "9222"])
def test_port_must_be_a_port_number(port: object) -> None:
    with pytest.raises(ValueError, match="port="):
        ego.launch(port=port)  # type: ignore[arg-type]


@pytest.mark.chrome
async def test_closing_the_pipe_makes_chrome_quit_by_itself() -> None:
    launched = await ego.launch()
    process = launched_process(launched)
    try:
        await launched.connection.close()
        # Nothing killed it: Chrome saw its command pipe close and quit.
        assert await process.wait_exit(HANG)
        assert process.process.returncode == 0
    finally:
        await launched.close()


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
@pytest.mark.parametrize("port", [None, 0])
async def test_second_chrome_on_a_profile_in_use_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, port: int | None
) -> None:
    monkeypatch.setenv("EGO_PROFILES_DIR", str(tmp_path))
    async with ego.launch(profile="busy", port=port) as first:
        with pytest.raises(ego.ProfileInUseError) as caught:
            await asyncio.wait_for(ego.launch(profile="busy"), HANG)
        assert caught.value.pid == launched_process(first).pid
        assert caught.value.profile_dir == str(tmp_path / "busy")
        if port is None:  # nothing can attach to it: the message does not offer that
            assert "no debugging port" in str(caught.value)
            assert "ego.connect" not in str(caught.value)
        else:  # the message names the port to attach to
            http = "http://" + websocket_url(first).split("/")[2]
            assert f"ego.connect('{http}')" in str(caught.value)
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


_UNREAPED = """
import os, sys
child = os.fork()
if child == 0:
    os._exit(0)
print(child, flush=True)
sys.stdin.read()  # never reaps its child: it stays a zombie until this ends
"""


def test_a_process_that_is_not_ours_has_ended_once_it_is_a_zombie() -> None:
    # As a detached `ego launch` is to `ego close`: its parent is init, which may reap it
    # only seconds later, and psutil's own wait takes the zombie for alive till then.
    parent = subprocess.Popen(
        [sys.executable, "-c", _UNREAPED], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert parent.stdin is not None
    assert parent.stdout is not None
    try:
        zombie = psutil.Process(int(parent.stdout.readline()))
        assert wait_ended(zombie, HANG)
        assert zombie.status() == psutil.STATUS_ZOMBIE  # ended, and still not reaped
        assert not wait_ended(psutil.Process(parent.pid), 0.05)  # a running one has not
    finally:
        parent.stdin.close()
        parent.wait(HANG)
        parent.stdout.close()


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

        alive = await wait_gone(processes, 20)
        assert alive == [], f"Chrome outlived its owner: {alive}"
        assert await wait_gone(watchdogs, 20) == []
        assert not Path(profile).exists(), "the watchdog removes the temporary profile"
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()
        for process in live(processes):
            ego.protocol.chrome.kill_tree(process.pid)
