"""Finding, starting and ending a local Chrome.

:class:`ChromeProcess` owns one Chrome that ego started: its process tree, its profile folder
and its watchdog. Nothing here speaks CDP beyond reading the endpoint Chrome writes to disk.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

from ..errors import ChromeLaunchError, ChromeNotFoundError, ProfileInUseError
from ._proctree import kill_tree

__all__ = [
    "CHROME_ENV",
    "PROFILES_ENV",
    "ChromeProcess",
    "LaunchOptions",
    "find_chrome",
    "kill_tree",
    "profile_dir",
]

#: Environment variable naming the Chrome binary; it wins over the PATH search.
CHROME_ENV = "EGO_CHROME"
#: Environment variable naming the folder that holds persistent profiles.
PROFILES_ENV = "EGO_PROFILES_DIR"


@dataclass(frozen=True)
class LaunchOptions:
    """How to start a local Chrome, decided once and passed down whole.

    Attributes:
        profile: a persistent profile under ``chrome_profiles/<profile>`` (or
            ``$EGO_PROFILES_DIR``); a throwaway one when neither this nor ``user_data_dir``.
        user_data_dir: an explicit profile folder (wins over ``profile``).
        headless: run without a window.
        executable: the Chrome binary; :func:`find_chrome` decides when None.
        args: extra command-line flags.
        timeout: seconds Chrome may take to start and accept the connection.
        default_timeout: seconds every CDP command may take unless a call says otherwise.
    """

    profile: str | None = None
    user_data_dir: str | os.PathLike[str] | None = None
    headless: bool = True
    executable: str | None = None
    args: tuple[str, ...] = ()
    timeout: float = 30.0
    default_timeout: float = 30.0


_CANDIDATES = (
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
    "chrome",
)

_INSTALL_HINT = (
    f"install one (Debian/Ubuntu: apt-get install -y chromium) or set {CHROME_ENV}=/path/to/chrome"
)

# Flags for a quiet, deterministic Chrome: no first-run UI, no background traffic (this
# machine has no network, and Chrome would otherwise retry Google's hosts at every start).
_BASE_FLAGS = (
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--disable-default-apps",
    "--disable-breakpad",
    "--disable-dev-shm-usage",
    "--disable-features=Translate,MediaRouter,OptimizationHints",
    "--password-store=basic",
    "--use-mock-keychain",
    # ego drives tabs that are not in front: without these, Chrome delays every timer in a
    # hidden tab to about once a second (five 10 ms timeouts take 4 to 5 s) and backgrounds
    # its renderer.
    "--disable-background-timer-throttling",
    "--disable-renderer-backgrounding",
    "--disable-backgrounding-occluded-windows",
    "--remote-debugging-port=0",
    "--remote-debugging-address=127.0.0.1",
)


def find_chrome() -> str:
    """Return the path of the Chrome binary to use.

    Looks at ``$EGO_CHROME`` first, then for chromium, google-chrome and chrome on PATH.

    Raises:
        ChromeNotFoundError: ``$EGO_CHROME`` names a missing file, or nothing is on PATH.
    """
    configured = os.environ.get(CHROME_ENV)
    if configured:
        path = shutil.which(configured)
        if path is None:
            raise ChromeNotFoundError(
                f"{CHROME_ENV}={configured} is not an executable file: fix the path or unset it"
            )
        return path
    for name in _CANDIDATES:
        path = shutil.which(name)
        if path is not None:
            return path
    raise ChromeNotFoundError(f"no Chrome or Chromium found on PATH: {_INSTALL_HINT}")


def _checked_executable(executable: str) -> str:
    path = shutil.which(executable)
    if path is None:
        raise ChromeNotFoundError(
            f"executable={executable!r} is not an executable file: fix the path or leave it "
            f"out to use {CHROME_ENV} or PATH"
        )
    return path


def profiles_root() -> Path:
    """The folder that holds persistent profiles: ``$EGO_PROFILES_DIR`` or ./chrome_profiles."""
    configured = os.environ.get(PROFILES_ENV)
    return Path(configured) if configured else Path.cwd() / "chrome_profiles"


def profile_dir(name: str) -> Path:
    """The folder of the persistent profile ``name``.

    Raises:
        ValueError: ``name`` is empty or not a plain folder name.
    """
    if not name or name in {".", ".."} or "/" in name or "\\" in name:
        raise ValueError(f"profile name {name!r} must be a plain folder name like 'work'")
    return profiles_root() / name


def _lock_owner(user_data_dir: Path) -> int | None:
    """Return the pid of a live Chrome holding ``user_data_dir``, if any.

    Chrome's singleton lock is a symlink whose target is ``<hostname>-<pid>``. A dangling lock
    from a crashed Chrome names a dead pid (or another host) and does not count: Chrome itself
    takes such a lock over.
    """
    lock = user_data_dir / "SingletonLock"
    try:
        target = os.readlink(lock)
    except OSError:
        return None
    host, _, pid_text = target.rpartition("-")
    if host != socket.gethostname() or not pid_text.isdigit():
        return None
    pid = int(pid_text)
    try:
        process = psutil.Process(pid)
        if process.status() == psutil.STATUS_ZOMBIE:
            return None
    except psutil.Error:
        return None
    return pid


class ChromeProcess:
    """A Chrome started by ego, with its profile folder and watchdog.

    The watchdog is a small separate process that holds the read end of a pipe whose write end
    only this Python process holds. However this process ends (return, exception, Ctrl+C,
    SIGKILL), the kernel closes the write end, the watchdog reads end-of-file, and it ends the
    Chrome process tree and removes a temporary profile. So Chrome never outlives its owner.

    Use :meth:`start` to create one.
    """

    def __init__(
        self,
        process: subprocess.Popen[bytes],
        *,
        user_data_dir: Path,
        temporary: bool,
        ws_url: str,
        watchdog: subprocess.Popen[bytes],
        log_path: Path,
    ) -> None:
        self.process = process
        self.pid = process.pid
        self.user_data_dir = user_data_dir
        self.temporary = temporary
        self.ws_url = ws_url
        self.log_path = log_path
        self._watchdog = watchdog
        self._create_time = psutil.Process(process.pid).create_time()

    @classmethod
    async def start(cls, options: LaunchOptions | None = None) -> ChromeProcess:
        """Start Chrome and wait until its debugging endpoint is up.

        Args:
            options: how to start it (the defaults: headless, a throwaway profile).

        Raises:
            ChromeNotFoundError: no binary.
            ProfileInUseError: a running Chrome holds the profile folder.
            ChromeLaunchError: Chrome exited early or did not offer an endpoint in time.
        """
        options = options if options is not None else LaunchOptions()
        executable, profile, user_data_dir = (
            options.executable,
            options.profile,
            options.user_data_dir,
        )
        headless, args, timeout = options.headless, options.args, options.timeout
        binary = find_chrome() if executable is None else _checked_executable(executable)
        if user_data_dir is not None:
            data_dir, temporary = Path(user_data_dir).absolute(), False
        elif profile is not None:
            data_dir, temporary = profile_dir(profile).absolute(), False
        else:
            data_dir, temporary = Path(tempfile.mkdtemp(prefix="ego-chrome-")), True
        data_dir.mkdir(parents=True, exist_ok=True)
        owner = _lock_owner(data_dir)
        if owner is not None:
            raise ProfileInUseError(
                f"profile {data_dir} is in use by Chrome (pid {owner}): close that Chrome, "
                "attach to it with ego.connect(), or use another profile",
                profile_dir=str(data_dir),
                pid=owner,
            )
        port_file = data_dir / "DevToolsActivePort"
        port_file.unlink(missing_ok=True)  # a stale file from an earlier run names a dead port

        log_dir = data_dir if temporary else Path(tempfile.gettempdir())
        log_path = log_dir / f"ego-chrome-{os.getpid()}-{time.monotonic_ns()}.log"
        command = [binary, *_BASE_FLAGS, f"--user-data-dir={data_dir}"]
        if headless:
            command += ["--headless", "--disable-gpu", "--hide-scrollbars", "--mute-audio"]
        if _running_as_root():
            command.append("--no-sandbox")  # Chrome refuses to start as root without it
        command += [*args, "about:blank"]

        # stderr goes to a file: a pipe nobody reads fills at 64 KB and freezes Chrome.
        with open(log_path, "wb") as log:
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,  # Ctrl+C in a terminal reaches Python, not Chrome
            )
        watchdog = _start_watchdog(process.pid, data_dir if temporary else None)
        try:
            ws_url = await _wait_for_endpoint(process, port_file, log_path, timeout)
        except BaseException:
            kill_tree(process.pid)
            _stop_watchdog(watchdog)
            if temporary:
                shutil.rmtree(data_dir, ignore_errors=True)
            owner = _lock_owner(data_dir)
            if owner is not None and owner != process.pid:
                raise ProfileInUseError(
                    f"profile {data_dir} was taken by another Chrome (pid {owner}) while this "
                    "one started: close that Chrome or use another profile",
                    profile_dir=str(data_dir),
                    pid=owner,
                ) from None
            raise
        return cls(
            process,
            user_data_dir=data_dir,
            temporary=temporary,
            ws_url=ws_url,
            watchdog=watchdog,
            log_path=log_path,
        )

    @property
    def running(self) -> bool:
        """True while the Chrome main process is alive."""
        return self.process.poll() is None

    async def wait_exit(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for Chrome to exit by itself; True if it did."""
        deadline = time.monotonic() + timeout
        while self.process.poll() is None:
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(0.02)
        return True

    async def terminate(self) -> None:
        """End the whole process tree, remove a temporary profile, stop the watchdog.

        Idempotent. Descendants that outlived the main process (a renderer, the zygote) are
        found by psutil and ended too.
        """
        await asyncio.to_thread(self._terminate_sync)

    def _terminate_sync(self) -> None:
        # Collect children first: once the main process is gone they are re-parented and
        # can no longer be found through it.
        try:
            root = psutil.Process(self.pid)
            leftovers = root.children(recursive=True)
        except psutil.Error:
            leftovers = []
        kill_tree(self.pid, create_time=self._create_time)
        for child in leftovers:
            with contextlib.suppress(psutil.Error):
                child.kill()
        psutil.wait_procs(leftovers, timeout=2)
        self.process.poll()
        if self.temporary:
            shutil.rmtree(self.user_data_dir, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                self.log_path.unlink()
        _stop_watchdog(self._watchdog)

    def log_tail(self, lines: int = 20) -> str:
        """The last lines Chrome wrote to stdout and stderr (for error messages)."""
        return _tail(self.log_path, lines)


def _running_as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _start_watchdog(chrome_pid: int, remove_dir: Path | None) -> subprocess.Popen[bytes]:
    # Run as a script, not with -m: -m would import the whole ego package (pydantic,
    # websockets, ...) and that start-up would compete with Chrome's for the CPU.
    command = [sys.executable, str(Path(__file__).with_name("_watchdog.py")), str(chrome_pid)]
    if remove_dir is not None:
        command.append(str(remove_dir))
    return subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        # Its own session: a signal sent to our process group must not take it down with us.
        start_new_session=True,
    )


def _stop_watchdog(watchdog: subprocess.Popen[bytes]) -> None:
    if watchdog.stdin is not None and not watchdog.stdin.closed:
        watchdog.stdin.close()
    try:
        watchdog.wait(timeout=5)
    except subprocess.TimeoutExpired:
        watchdog.kill()
        watchdog.wait()


async def _wait_for_endpoint(
    process: subprocess.Popen[bytes], port_file: Path, log_path: Path, timeout: float
) -> str:
    # Chrome writes the port it bound (port 0 means: pick a free one, so no race with other
    # programs) and the browser's websocket path to DevToolsActivePort once it listens.
    deadline = time.monotonic() + timeout
    while True:
        try:
            text = port_file.read_text()
        except FileNotFoundError:
            text = ""
        lines = text.splitlines()
        if len(lines) >= 2 and lines[0].isdigit():
            return f"ws://127.0.0.1:{lines[0]}{lines[1]}"
        code = process.poll()
        if code is not None:
            raise ChromeLaunchError(
                f"Chrome exited with code {code} before it was ready: "
                f"{_tail(log_path, 5) or 'it printed nothing'}"
            )
        if time.monotonic() >= deadline:
            raise ChromeLaunchError(
                f"Chrome did not open its debugging endpoint within {timeout:g} s: "
                f"{_tail(log_path, 5) or 'it printed nothing'}"
            )
        await asyncio.sleep(0.01)


def _tail(path: Path, lines: int) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    # The Debian wrapper script prints a harmless "[: ... unexpected operator" line.
    kept = [
        line for line in text.splitlines() if line.strip() and "unexpected operator" not in line
    ]
    return " | ".join(kept[-lines:])
