"""Chrome and its files never outlive the process that launched it: forks, leaks and kills.

Each test runs the launching program as a subprocess with a private TMPDIR, kills it, and
watches the real processes and files with psutil, polling against a deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

import ego
import ego.protocol.chrome
from ego.protocol.chrome import LaunchOptions
from ego.protocol.launcher import launch_chrome
from tests.helpers.paths import ROOT
from tests.helpers.processes import live, processes_mentioning, still_alive_after, tree

# Tests that start Chrome are marked `chrome` one by one (or through a browser fixture);
# the rest need none and run in the fast tier.

linux_only = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")

#: Seconds Chrome and its files may take to go once their owner is killed.
GONE_WITHIN = 20.0


def wait_until(condition: Callable[[], bool], timeout: float = GONE_WITHIN) -> bool:
    """Poll ``condition()`` until it is true or ``timeout`` seconds pass; its last answer."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() >= deadline:
            return bool(condition())
        time.sleep(0.05)
    return True


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def pipe_of(pid: int, fd: int) -> str:
    """What ``pid``'s descriptor ``fd`` points at, e.g. ``pipe:[1234]``."""
    return os.readlink(f"/proc/{pid}/fd/{fd}")


def holds(pid: int, target: str) -> bool:
    """True when process ``pid`` has a descriptor on ``target`` (as ``pipe_of`` names it)."""
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):
            if os.readlink(f"/proc/{pid}/fd/{fd}") == target:
                return True
    return False


def logs_in(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.glob("ego-chrome-*.log"))


@pytest.fixture
def private_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """An environment with a TMPDIR of the test's own, so no other test's launch sweeps it.

    The folder is directly under the system temp folder: Chrome puts a unix socket in TMPDIR,
    and a path under pytest's tmp_path is longer than a socket path may be (108 bytes).
    """
    tmpdir = tempfile.mkdtemp(prefix="ego-t-")
    try:
        yield {**os.environ, "TMPDIR": tmpdir, "EGO_PROFILES_DIR": str(tmp_path / "profiles")}
    finally:
        # Whatever a failed test left running (the owner's Chrome, a forked child) inherited
        # this TMPDIR: end it before the folder goes, or Chrome would write into it again.
        end_all(processes_with_tmpdir(tmpdir))
        shutil.rmtree(tmpdir, ignore_errors=True)


def processes_with_tmpdir(tmpdir: str) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if process.environ().get("TMPDIR") == tmpdir:
                found.append(process)
    return found


@contextlib.contextmanager
def running(script: str, tmp_path: Path, env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    """``python -c script`` with stdin and stdout pipes; killed, with what it left, at the end.

    Every process the script starts waits on its stdin with a bound, so closing our end of
    that pipe at the end lets them all go.
    """
    errors = tmp_path / "owner.err"
    with open(errors, "wb") as stderr:
        owner = subprocess.Popen(
            [sys.executable, "-c", script],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            cwd=ROOT,
            env=env,
        )
    try:
        yield owner
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.wait()
        assert owner.stdin is not None
        assert owner.stdout is not None
        owner.stdin.close()
        _pending.pop(owner.stdout.fileno(), None)
        owner.stdout.close()


def read_line(process: subprocess.Popen[bytes], errors: Path, timeout: float = 60) -> str:
    """The next line ``process`` prints, waiting at most ``timeout`` seconds."""
    assert process.stdout is not None
    fd = process.stdout.fileno()
    buffered = _pending.setdefault(fd, bytearray())
    deadline = time.monotonic() + timeout
    while b"\n" not in buffered:
        remaining = deadline - time.monotonic()
        ready, _, _ = select.select([fd], [], [], max(remaining, 0))
        chunk = os.read(fd, 4096) if ready else b""
        assert chunk, f"no line from the process: {errors.read_text(errors='replace')}"
        buffered += chunk
    line, _, rest = bytes(buffered).partition(b"\n")
    buffered[:] = rest
    return line.decode().strip()


#: Bytes read past a line, per descriptor (two lines may come in one read).
_pending: dict[int, bytearray] = {}


def end_all(processes: list[psutil.Process]) -> None:
    """Kill whatever of ``processes`` is still alive, and reap it (test clean-up)."""
    for process in live(processes):
        with contextlib.suppress(psutil.Error):
            process.kill()
    # Not wait_procs: a killed process that is not our child may stay a zombie until reaped.
    wait_until(lambda: live(processes) == [], timeout=5)


# --- forks ----------------------------------------------------------------------------------

# Launches Chrome, then starts a subprocess with close_fds=False and forks a child (what
# multiprocessing's fork start method does). Everybody then waits on stdin (at most 120 s).
_FORKING_OWNER = r"""
import asyncio, os, select, subprocess, sys
import ego

WAIT = "import select; select.select([0], [], [], 120)"

async def main():
    browser = await ego.launch()
    helper = subprocess.Popen([sys.executable, "-c", WAIT], close_fds=False)
    child = os.fork()
    if child == 0:
        os.write(1, f"child {os.getpid()}\n".encode())  # one write: lines must not mix
        select.select([0], [], [], 120)
        os._exit(0)
    os.write(1, f"owner {browser.process.pid} {child} {helper.pid}\n".encode())
    select.select([0], [], [], 120)

asyncio.run(main())
"""


@pytest.mark.chrome
@linux_only
def test_a_forked_child_does_not_keep_chrome_alive_after_the_owner_is_killed(
    tmp_path: Path, private_env: dict[str, str]
) -> None:
    chrome: list[psutil.Process] = []
    others: list[psutil.Process] = []
    with running(_FORKING_OWNER, tmp_path, private_env) as owner:
        try:
            # "child PID" and "owner CHROME CHILD HELPER", in either order
            said = [read_line(owner, tmp_path / "owner.err") for _ in range(2)]
            lines = dict(line.split(maxsplit=1) for line in said)
            assert set(lines) == {"child", "owner"}, said
            chrome_pid, child, helper = map(int, lines["owner"].split())
            others = [psutil.Process(child), psutil.Process(helper)]
            assert int(lines["child"]) == child
            chrome = tree(chrome_pid)
            watchdogs = processes_mentioning(f"_watchdog.py {chrome_pid}")
            assert len(watchdogs) == 1
            pipe = pipe_of(watchdogs[0].pid, 0)
            assert pipe.startswith("pipe:")
            # Only the owner holds the watchdog's pipe: the fork hook closed the child's copy,
            # and the pipe is close-on-exec, so the subprocess never had one.
            assert holds(owner.pid, pipe)
            assert not holds(child, pipe), "the forked child inherited the watchdog's pipe"
            assert not holds(helper, pipe), "a subprocess inherited the watchdog's pipe"

            os.kill(owner.pid, signal.SIGKILL)
            owner.wait()

            still = still_alive_after(chrome, GONE_WITHIN)
            assert still == [], f"Chrome outlived its owner while a forked child lives: {still}"
            assert wait_until(lambda: live(watchdogs) == [])
            assert alive(child), "the forked child lives on"
            assert alive(helper), "the subprocess lives on"
        finally:
            end_all([*others, *chrome])


# A plain owner: launches Chrome, says its pid, waits on stdin (at most 120 s).
_OWNER = """
import asyncio, select, ego

async def main():
    browser = await ego.launch()
    print(browser.process.pid, flush=True)
    select.select([0], [], [], 120)

asyncio.run(main())
"""


@pytest.mark.chrome
@linux_only
def test_a_leaked_write_end_does_not_keep_chrome_alive(
    tmp_path: Path, private_env: dict[str, str]
) -> None:
    """A write end the fork hook cannot reach (a fork made from C, ``pass_fds``) is harmless.

    The test itself takes one, by reopening the watchdog's pipe through /proc: the watchdog
    then never reads end-of-file, and only its check that the owner is still its parent ends
    Chrome.
    """
    chrome: list[psutil.Process] = []
    leaked: int | None = None
    with running(_OWNER, tmp_path, private_env) as owner:
        try:
            chrome_pid = int(read_line(owner, tmp_path / "owner.err"))
            chrome = tree(chrome_pid)
            watchdogs = processes_mentioning(f"_watchdog.py {chrome_pid}")
            assert len(watchdogs) == 1
            leaked = os.open(f"/proc/{watchdogs[0].pid}/fd/0", os.O_WRONLY | os.O_NONBLOCK)

            os.kill(owner.pid, signal.SIGKILL)
            owner.wait()

            still = still_alive_after(chrome, GONE_WITHIN)
            assert still == [], f"a leaked write end kept Chrome alive: {still}"
            assert wait_until(lambda: live(watchdogs) == [])
        finally:
            if leaked is not None:
                os.close(leaked)
            end_all(chrome)


# --- log files ------------------------------------------------------------------------------


@pytest.mark.chrome
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_killing_ego_launch_leaves_no_log_file(
    tmp_path: Path, private_env: dict[str, str], sig: signal.Signals
) -> None:
    env = private_env
    tmpdir = Path(env["TMPDIR"])
    chrome: list[psutil.Process] = []
    errors = tmp_path / "launch.err"
    with open(errors, "wb") as stderr:
        launcher = subprocess.Popen(
            [sys.executable, "-m", "ego", "launch", "--profile", "kept", "--json"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=stderr,
            cwd=ROOT,
            env=env,
        )
    try:
        line = read_line(launcher, errors)
        info = json.loads(line)
        chrome = tree(info["pid"])
        assert len(logs_in(tmpdir)) == 1, "a persistent profile's log is in the temp folder"

        launcher.send_signal(sig)
        launcher.wait()

        still = still_alive_after(chrome, GONE_WITHIN)
        assert still == []
        assert wait_until(lambda: logs_in(tmpdir) == []), f"left behind: {logs_in(tmpdir)}"
        assert (tmp_path / "profiles" / "kept").is_dir(), "the persistent profile is kept"
    finally:
        if launcher.poll() is None:
            launcher.kill()
            launcher.wait()
        assert launcher.stdout is not None
        _pending.pop(launcher.stdout.fileno(), None)
        launcher.stdout.close()
        end_all(chrome)


@pytest.fixture
def private_tempdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temp folder of this test's own, for ego's log files in this process."""
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmpdir))
    return tmpdir


def _dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


async def test_a_launch_removes_the_logs_of_gone_owners_only(
    tmp_path: Path, private_tempdir: Path
) -> None:
    own_start = psutil.Process().create_time()
    dead = private_tempdir / f"ego-chrome-{_dead_pid()}-1.log"
    mine = private_tempdir / f"ego-chrome-{os.getpid()}-2.log"
    # The pid is alive but its process started after the log was last written: pid reuse.
    reused = private_tempdir / f"ego-chrome-{os.getpid()}-3.log"
    unrelated = private_tempdir / "ego-chrome-notes.log"
    for path in (dead, mine, reused, unrelated):
        path.write_text("old output\n")
    os.utime(reused, (own_start - 3600, own_start - 3600))
    (private_tempdir / "ego-chrome-abcd1234").mkdir()  # a temporary profile: not a log

    # A Chrome that fails at once: the launch still sweeps, and removes its own log too.
    broken = tmp_path / "broken-chrome"
    broken.write_text("#!/bin/sh\necho 'cannot start here' >&2\nexit 3\n")
    broken.chmod(0o755)
    options = LaunchOptions(executable=str(broken), user_data_dir=tmp_path / "profile")
    with pytest.raises(ego.ChromeLaunchError, match=r"exited with code 3.*cannot start here"):
        await asyncio.wait_for(launch_chrome(options), 30)

    assert sorted(path.name for path in private_tempdir.iterdir()) == sorted(
        [mine.name, unrelated.name, "ego-chrome-abcd1234"]
    )


async def test_a_chrome_that_never_answers_on_its_pipe_fails_the_launch_in_time(
    tmp_path: Path,
) -> None:
    silent = tmp_path / "silent-chrome"
    silent.write_text("#!/bin/sh\necho 'up, saying nothing' >&2\nwhile :; do sleep 1; done\n")
    silent.chmod(0o755)
    profile = tmp_path / "profile"
    options = LaunchOptions(executable=str(silent), user_data_dir=profile, timeout=1)
    with pytest.raises(
        ego.ChromeLaunchError,
        match=r"did not answer on its debugging pipe within 1 s: up, saying nothing",
    ):
        await asyncio.wait_for(launch_chrome(options), 30)
    assert processes_mentioning(str(profile)) == []  # the silent one was ended


@pytest.mark.chrome
async def test_close_removes_the_log_of_a_persistent_profile(
    tmp_path: Path, private_tempdir: Path
) -> None:
    async with ego.launch(user_data_dir=tmp_path / "profile") as browser:
        assert browser.process is not None
        log = browser.process.log_path
        assert log.parent == private_tempdir
        assert log.is_file()
    assert logs_in(private_tempdir) == []


# --- fork semantics of the object itself ----------------------------------------------------


@linux_only
async def test_in_a_forked_child_the_chrome_process_ends_nothing(browser: ego.Browser) -> None:
    process = browser.process
    assert process is not None
    report_read, report_write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child, which reports through the pipe
        code = 1
        try:
            process._terminate_sync()
            code = 0 if process.running else 2
        finally:
            os.write(report_write, bytes([code]))
            os._exit(0)
    os.close(report_write)
    try:
        answer = await asyncio.wait_for(asyncio.to_thread(os.read, report_read, 1), 30)
    finally:
        os.close(report_read)
        await asyncio.to_thread(os.waitpid, child, 0)
    assert answer == bytes([0]), "the child ended Chrome or thought it gone"
    assert process.running
    assert await browser.version()
