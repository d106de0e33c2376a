"""Ends a Chrome when the Python process that started it is gone.

Both halves of the watchdog live here. The owner's half, :func:`start_watchdog`, runs this
file as a script, ``python path/to/_watchdog.py CHROME_PID OWNER_PID [PATH ...]`` (a script,
so that the ego package and its dependencies are not imported), with stdin the read end of a
pipe whose write end only the owner holds. The script's half, :func:`main`, waits until

- the pipe reports end-of-file: the owner closed it, or died (the kernel closes it then, even
  after SIGKILL); or
- the owner is no longer its parent (checked every :data:`OWNER_CHECK_SECONDS`): a write end
  that leaked into another process where the fork hook below cannot reach it (a fork made
  from C, ``pass_fds``, a descriptor reopened through ``/proc``) no longer keeps Chrome alive;

then it ends the Chrome tree and removes each PATH (a temporary profile, Chrome's log file).
Pid reuse is ruled out by comparing Chrome's start time taken at startup.

Forks: a child made by ``os.fork()`` (multiprocessing's default start method on Linux)
inherits the write end; a hook registered with :func:`os.register_at_fork` closes the child's
copy at once, so Chrome's life stays tied to the launching process alone. A process started
with exec (``subprocess``, even with ``close_fds=False``) never gets it: the pipe is
close-on-exec.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import subprocess
import sys
import weakref
from collections.abc import Sequence
from pathlib import Path

import psutil

try:
    from ._proctree import kill_tree
except ImportError:  # run as a script: the folder of this file is on sys.path
    from _proctree import kill_tree  # type: ignore[import-not-found,no-redef]

__all__ = ["OWNER_CHECK_SECONDS", "Watchdog", "main", "start_watchdog"]

#: How often the watchdog checks that its owner is still its parent, in seconds.
OWNER_CHECK_SECONDS = 0.5


class _WriteEnd:
    """The write end of one watchdog pipe, closed in every forked child."""

    def __init__(self, fd: int) -> None:
        self.fd: int | None = fd
        self.owner = os.getpid()
        _WRITE_ENDS.add(self)

    def close(self) -> None:
        fd, self.fd = self.fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)

    def __del__(self) -> None:
        # Dropping the owner's object ends Chrome like closing it does (the watchdog reads
        # end-of-file); a forked child's copy was closed by the fork hook already.
        self.close()


_WRITE_ENDS: weakref.WeakSet[_WriteEnd] = weakref.WeakSet()


def _close_inherited_write_ends() -> None:
    # Runs in the child right after os.fork(), with only the forking thread left, so nothing
    # else touches these objects. Without it the child would hold the pipe open and the
    # parent's Chrome would live as long as the child, whatever happened to the parent.
    for write_end in list(_WRITE_ENDS):
        write_end.close()


if hasattr(os, "register_at_fork"):  # absent on Windows, which has no fork
    os.register_at_fork(after_in_child=_close_inherited_write_ends)


class Watchdog:
    """The owner's side of one running watchdog: its process and the pipe's write end."""

    def __init__(self, process: subprocess.Popen[bytes], write_end: _WriteEnd) -> None:
        self.process = process
        self._write_end = write_end

    @property
    def owned(self) -> bool:
        """True in the process that started the watchdog, False in a forked child."""
        return self._write_end.owner == os.getpid()

    def stop(self) -> None:
        """Let the watchdog end (it ends Chrome and removes its paths on the way) and reap it.

        Does nothing in a forked child: the watchdog belongs to the process that started it.
        """
        if not self.owned:
            return
        self._write_end.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def start_watchdog(chrome_pid: int, remove: Sequence[Path] = ()) -> Watchdog:
    """Start a watchdog that ends ``chrome_pid``'s tree and removes ``remove`` when we go.

    Args:
        chrome_pid: the Chrome main process.
        remove: files or folders to delete once Chrome is ended.

    Raises:
        OSError: the watchdog process could not be started.
    """
    # Both ends are close-on-exec (os.pipe makes them non-inheritable), and the write end is
    # registered before anything can fork, so the fork hook always sees it.
    read_fd, write_fd = os.pipe()
    write_end = _WriteEnd(write_fd)
    # Run as a script, not with -m: -m would import the whole ego package (pydantic,
    # websockets, ...) and that start-up would compete with Chrome's for the CPU.
    command = [sys.executable, str(Path(__file__)), str(chrome_pid), str(os.getpid())]
    command += [str(path) for path in remove]
    try:
        process = subprocess.Popen(
            command,
            stdin=read_fd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            # Its own session: a signal sent to our process group must not take it down too.
            start_new_session=True,
        )
    except BaseException:
        write_end.close()
        raise
    finally:
        os.close(read_fd)
    return Watchdog(process, write_end)


def _wait_for_owner_to_go(owner: int) -> None:
    stdin = sys.stdin.fileno()
    # When the owner dies the kernel re-parents us at once (before the owner is even reaped),
    # so a changed parent pid means the owner is gone, with no pid-reuse question.
    while os.getppid() == owner:
        readable, _, _ = select.select([stdin], [], [], OWNER_CHECK_SECONDS)
        if readable and not os.read(stdin, 65536):
            return


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            os.unlink(path)


def main(argv: list[str]) -> int:
    """The watchdog script: ``CHROME_PID OWNER_PID [PATH ...]``, stdin the owner's pipe."""
    # The owner's terminal may send SIGINT/SIGHUP to everything; only the owner's end ends us.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    pid, owner, paths = int(argv[0]), int(argv[1]), argv[2:]
    try:
        create_time: float | None = psutil.Process(pid).create_time()
    except psutil.Error:
        create_time = None
    _wait_for_owner_to_go(owner)
    if create_time is not None:
        kill_tree(pid, create_time=create_time)
    for path in paths:
        _remove(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
