"""Finding, starting and ending a local Chrome.

:class:`ChromeProcess` owns one Chrome that ego started: its process tree, its profile folder,
its watchdog and our ends of its debugging pipe. Nothing here speaks CDP;
:mod:`ego.protocol.launcher` opens the connection. Beside it: making the process and its pipe
(:mod:`~ego.protocol._spawn`), its debugging port (:mod:`~ego.protocol._ports`) and its log
file (:mod:`~ego.protocol._chrome_log`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import psutil

from ..errors import BrowserError, ChromeNotFoundError, ProfileInUseError
from ..places import PROFILES_ENV, expand, profiles_dir
from ._chrome_log import new_log_path, remove_stale_logs, tail
from ._ports import check_port_free, listening_ports, wait_for_endpoint
from ._preferences import turn_off_preloading
from ._proctree import kill_tree, still_running
from ._spawn import close_fds, spawn
from ._watchdog import Watchdog, start_watchdog

__all__ = [
    "CHROME_ENV",
    "PIPE_SUPPORTED",
    "PROFILES_ENV",
    "ChromeProcess",
    "LaunchOptions",
    "find_chrome",
    "kill_tree",
    "profile_dir",
    "still_running",
]

#: Environment variable naming the Chrome binary; it wins over the PATH search.
CHROME_ENV = "EGO_CHROME"

#: Whether ego talks to a Chrome it starts over ``--remote-debugging-pipe``. The pipe's ends
#: must be Chrome's descriptors 3 and 4, which only POSIX systems can arrange at start (on
#: Windows, Chrome takes handles that ``subprocess`` cannot place); there, ego opens a port
#: on 127.0.0.1 for its own connection instead.
PIPE_SUPPORTED: Final = os.name == "posix"


@dataclass(frozen=True)
class LaunchOptions:
    """How to start a local Chrome, decided once and passed down whole.

    Attributes:
        profile: a persistent profile in the profiles folder (``$EGO_PROFILES_DIR``, else
            ``chrome_profiles/`` in ego's home: see :mod:`ego.places`); a throwaway one when
            neither this nor ``user_data_dir``.
        user_data_dir: an explicit profile folder (wins over ``profile``; ``~`` expanded).
        headless: run without a window.
        executable: the Chrome binary; :func:`find_chrome` decides when None.
        args: extra command-line flags.
        timeout: seconds Chrome may take to start and accept the connection.
        default_timeout: seconds every CDP command may take unless a call says otherwise.
        port: a TCP port on 127.0.0.1 for other processes to attach to (``ego.connect``):
            ``0`` lets Chrome choose a free one, ``N`` asks for N. None (the default) opens
            none: ego talks to Chrome over a pipe only it holds. Chrome asks nothing of a
            client on its port, so any local process or user can then drive the browser and
            its logged-in sessions.
        preload_pages: let pages preload other pages (speculation rules, prefetch and
            prerender). Off by default: a preloaded document is fetched without a request
            that ego's origin limits can see (see :mod:`ego.protocol._preferences`).
        max_js_heap_mb: the most megabytes of JavaScript heap (V8's old space) each renderer
            may take, as ``--js-flags=--max-old-space-size``; a page past it crashes its tab
            instead of taking the machine's memory. None: Chrome's own limit.

    Raises:
        ValueError: ``port`` is not None and not between 0 and 65535, or ``max_js_heap_mb``
            is not a positive number.
    """

    profile: str | None = None
    user_data_dir: str | os.PathLike[str] | None = None
    headless: bool = True
    executable: str | None = None
    args: tuple[str, ...] = ()
    timeout: float = 30.0
    default_timeout: float = 30.0
    port: int | None = None
    preload_pages: bool = False
    max_js_heap_mb: int | None = None

    def __post_init__(self) -> None:
        heap = self.max_js_heap_mb
        if heap is not None and (isinstance(heap, bool) or not isinstance(heap, int) or heap < 1):
            raise ValueError(f"max_js_heap_mb={heap!r} must be None or a positive number of MB")
        port = self.port
        if port is not None and (
            isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535
        ):
            raise ValueError(
                f"port={port!r} must be None (no port), 0 (Chrome picks a free one) or a port "
                "number up to 65535"
            )


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
)


def _with_heap_limit(args: tuple[str, ...], megabytes: int | None) -> list[str]:
    """``args`` with V8's old-space limit added to their ``--js-flags`` (Chrome keeps only
    the last ``--js-flags`` it is given, so one that ``args`` holds takes the limit in)."""
    if megabytes is None:
        return list(args)
    limit = f"--max-old-space-size={megabytes}"
    given = [arg for arg in args if arg.startswith("--js-flags=")]
    rest = [arg for arg in args if not arg.startswith("--js-flags=")]
    flags = " ".join([*(arg.partition("=")[2] for arg in given), limit])
    return [*rest, f"--js-flags={flags}"]


def find_chrome() -> str:
    """Return the path of the Chrome binary to use.

    Looks at ``$EGO_CHROME`` first, then for chromium, google-chrome and chrome on PATH.

    Raises:
        ChromeNotFoundError: ``$EGO_CHROME`` names a missing file, or nothing is on PATH.
    """
    configured = os.environ.get(CHROME_ENV)
    if configured:
        path = shutil.which(os.path.expanduser(configured))
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
    path = shutil.which(os.path.expanduser(executable))
    if path is None:
        raise ChromeNotFoundError(
            f"executable={executable!r} is not an executable file: fix the path or leave it "
            f"out to use {CHROME_ENV} or PATH"
        )
    return path


def profiles_root() -> Path:
    """The folder that holds persistent profiles, the same from any current directory.

    ``$EGO_PROFILES_DIR``, else ``chrome_profiles/`` in ego's home: see
    :func:`ego.places.profiles_dir`.
    """
    return profiles_dir()


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
    """A Chrome started by ego, with its profile folder, log file and watchdog.

    The process that called :meth:`start` owns this Chrome. The watchdog is a small separate
    process that holds the read end of a pipe whose write end only the owner holds. However
    the owner ends (return, exception, Ctrl+C, SIGTERM, SIGKILL), the kernel closes the write
    end, the watchdog reads end-of-file, and it ends the Chrome process tree and removes the
    temporary profile and Chrome's log file. So neither Chrome nor its files outlive the owner.
    A log file left by a watchdog that was itself killed is removed by the next launch, once
    the process named in the file's name is gone.

    Forks: a child made by ``os.fork()`` (multiprocessing's default start method on Linux)
    does not own Chrome. Its copy of the pipe's write end is closed right after the fork, so
    Chrome still ends when the owner does, while the child lives on; in the child,
    :meth:`terminate` ends nothing and :attr:`running` asks the system instead of waiting on a
    process that is not its own. Processes started with exec never inherit the pipe. Should a
    write end leak anyway (a fork made from C), the watchdog also notices within about half a
    second that the owner is no longer its parent.

    The debugging pipe (:data:`PIPE_SUPPORTED`): Chrome reads CDP on its descriptor 3 and
    writes on 4; the other ends stay here, close-on-exec, so no other child process inherits
    them, until :meth:`take_pipe` hands them to the connection. Chrome quits when the command
    pipe closes, so it also ends with its owner by that path.

    Use :meth:`start` to create one.
    """

    def __init__(
        self,
        process: subprocess.Popen[bytes],
        *,
        user_data_dir: Path,
        temporary: bool,
        ws_url: str | None,
        watchdog: Watchdog,
        log_path: Path,
        pipe: tuple[int, int] | None = None,
    ) -> None:
        self.process = process
        self.pid = process.pid
        self.user_data_dir = user_data_dir
        self.temporary = temporary
        #: The browser's websocket URL when Chrome was started with a port, else None.
        self.ws_url = ws_url
        self.log_path = log_path
        self._watchdog = watchdog
        self._pipe = pipe
        self._create_time = psutil.Process(process.pid).create_time()

    @classmethod
    async def start(cls, options: LaunchOptions | None = None) -> ChromeProcess:
        """Start Chrome; with a port, wait until its debugging endpoint is up.

        Over the pipe there is nothing to wait for here: Chrome reads the commands queued in
        the pipe once it is ready, and the first answer tells (see
        :func:`ego.protocol.launcher.launch_chrome`).

        Args:
            options: how to start it (the defaults: headless, a throwaway profile, no port).

        Raises:
            ChromeNotFoundError: no binary.
            ProfileInUseError: a running Chrome holds the profile folder.
            ChromeLaunchError: Chrome exited early or did not offer its endpoint in time, or
                the fixed port asked for is taken.

        Cancelling it ends the Chrome being started.
        """
        options = options if options is not None else LaunchOptions()
        executable, profile, user_data_dir = (
            options.executable,
            options.profile,
            options.user_data_dir,
        )
        headless, args, timeout = options.headless, options.args, options.timeout
        binary = find_chrome() if executable is None else _checked_executable(executable)
        port = options.port if PIPE_SUPPORTED or options.port is not None else 0
        if port:
            check_port_free(port)
        if user_data_dir is not None:
            data_dir, temporary = expand(user_data_dir).absolute(), False
        elif profile is not None:
            data_dir, temporary = profile_dir(profile).absolute(), False
        else:
            data_dir, temporary = Path(tempfile.mkdtemp(prefix="ego-chrome-")), True
        data_dir.mkdir(parents=True, exist_ok=True)
        log_dir = data_dir if temporary else Path(tempfile.gettempdir())
        remove_stale_logs(Path(tempfile.gettempdir()))
        owner = _lock_owner(data_dir)
        if owner is not None:
            raise ProfileInUseError(
                f"profile {data_dir} is in use by Chrome (pid {owner}): {_attach_hint(owner)}",
                profile_dir=str(data_dir),
                pid=owner,
            )
        if not options.preload_pages:
            turn_off_preloading(data_dir)
        port_file = data_dir / "DevToolsActivePort"
        port_file.unlink(missing_ok=True)  # a stale file from an earlier run names a dead port

        log_path = new_log_path(log_dir)
        command = [binary, *_BASE_FLAGS, f"--user-data-dir={data_dir}"]
        if PIPE_SUPPORTED:
            command.append("--remote-debugging-pipe")
        if port is not None:
            command += [f"--remote-debugging-port={port}", "--remote-debugging-address=127.0.0.1"]
        if headless:
            command += ["--headless", "--disable-gpu", "--hide-scrollbars", "--mute-audio"]
        if _running_as_root():
            command.append("--no-sandbox")  # Chrome refuses to start as root without it
        command += [*_with_heap_limit(args, options.max_js_heap_mb), "about:blank"]

        try:
            process, pipe = spawn(command, log_path, pipe=PIPE_SUPPORTED)
        except BaseException:
            _remove_files(data_dir, temporary, log_path)
            raise
        try:
            watchdog = start_watchdog(process.pid, [data_dir if temporary else log_path])
        except BaseException:
            close_fds(pipe)
            kill_tree(process.pid)
            _remove_files(data_dir, temporary, log_path)
            raise
        chrome = cls(
            process,
            user_data_dir=data_dir,
            temporary=temporary,
            ws_url=None,
            watchdog=watchdog,
            log_path=log_path,
            pipe=pipe,
        )
        if port is not None:
            try:
                chrome.ws_url = await wait_for_endpoint(process, port_file, log_path, timeout, port)
            except BaseException:
                await asyncio.to_thread(chrome.abandon)
                raise
        return chrome

    def take_pipe(self) -> tuple[int, int]:
        """Hand over our ends of the debugging pipe: ``(read_fd, write_fd)``, once.

        The caller owns them from here on (closing the write end makes Chrome quit).

        Raises:
            BrowserError: Chrome was started without a pipe, or its ends were taken already.
        """
        pipe, self._pipe = self._pipe, None
        if pipe is None:
            raise BrowserError(
                f"Chrome (pid {self.pid}) has no debugging pipe to hand over: it was started "
                "without one, or the connection took it already"
            )
        return pipe

    def abandon(self) -> None:
        """End a Chrome that did not become usable: its tree, its files, its watchdog.

        Blocks for as long as the tree takes to end (a few seconds at most: run it in a
        thread from async code); meant for the failure path of a start, where Chrome has no
        open pages to save.

        Raises:
            ProfileInUseError: another Chrome took the profile folder meanwhile (it started
                at the same time and won the lock), which is why this one failed.
        """
        close_fds(self._pipe)
        self._pipe = None
        kill_tree(self.pid)
        self._watchdog.stop()
        # The caller's error message already quotes the log's tail.
        _remove_files(self.user_data_dir, self.temporary, self.log_path)
        owner = _lock_owner(self.user_data_dir)
        if owner is not None and owner != self.pid:
            raise ProfileInUseError(
                f"profile {self.user_data_dir} was taken by another Chrome (pid {owner}) while "
                "this one started: close that Chrome or use another profile",
                profile_dir=str(self.user_data_dir),
                pid=owner,
            ) from None

    @property
    def running(self) -> bool:
        """True while the Chrome main process is alive."""
        if self._watchdog.owned:
            return self.process.poll() is None
        # In a forked child Chrome is not our child: waitpid would fail, and Popen would then
        # call it exited.
        return still_running(self.pid, self._create_time)

    def log_tail(self, lines: int = 20) -> str:
        """The last lines Chrome wrote to stdout and stderr (for a launch's error message)."""
        return tail(self.log_path, lines)

    async def wait_exit(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for Chrome to exit by itself; True if it did."""
        deadline = time.monotonic() + timeout
        while self.running:
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(0.02)
        return True

    async def terminate(self) -> None:
        """End the whole process tree, remove a temporary profile and the log, stop the watchdog.

        Idempotent. Descendants that outlived the main process (a renderer, the zygote) are
        found by psutil and ended too. In a forked child, which does not own this Chrome, it
        ends nothing.
        """
        await asyncio.to_thread(self._terminate_sync)

    def _terminate_sync(self) -> None:
        if not self._watchdog.owned:
            return
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
        close_fds(self._pipe)
        self._pipe = None
        _remove_files(self.user_data_dir, self.temporary, self.log_path)
        self._watchdog.stop()


def _running_as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _remove_files(data_dir: Path, temporary: bool, log_path: Path) -> None:
    if temporary:
        shutil.rmtree(data_dir, ignore_errors=True)  # the log is inside
    else:
        with contextlib.suppress(OSError):
            log_path.unlink()


def _attach_hint(pid: int) -> str:
    """What to do about the Chrome ``pid`` that holds a profile: attach through its debugging
    port on 127.0.0.1 when it has one, else close it."""
    ports = sorted(listening_ports(pid))
    if ports:
        return (
            f"attach to it with ego.connect('http://127.0.0.1:{ports[0]}'), close it, or use "
            "another profile"
        )
    return "close that Chrome or use another profile (it has no debugging port to attach to)"
