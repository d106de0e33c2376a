"""Chrome's log files: their names, their last lines, and removing those nobody owns.

A Chrome ego starts writes its stdout and stderr to ``ego-chrome-<owner pid>-<n>.log``. The
watchdog removes that file when its owner dies; :func:`remove_stale_logs` catches the logs of
owners whose watchdog died too, which the owner's pid in the name makes possible.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from pathlib import Path

import psutil

__all__ = ["new_log_path", "remove_stale_logs", "tail"]

_LOG_NAME = re.compile(r"ego-chrome-(\d+)-\d+\.log")


def new_log_path(directory: Path) -> Path:
    """A fresh log file name in ``directory`` for a Chrome this process starts.

    The owner's pid in the name lets a later launch tell a stale log from a live one.
    """
    return directory / f"ego-chrome-{os.getpid()}-{time.monotonic_ns()}.log"


def remove_stale_logs(directory: Path) -> None:
    """Delete the ``ego-chrome-<pid>-<n>.log`` files in ``directory`` whose owner is gone.

    The watchdog removes the log of a persistent-profile Chrome when its owner dies; this
    catches the logs of owners whose watchdog died too. A log whose owner still runs is kept.
    """
    with contextlib.suppress(OSError):
        for path in directory.glob("ego-chrome-*.log"):
            match = _LOG_NAME.fullmatch(path.name)
            if match is not None and not _owner_alive(int(match[1]), path):
                with contextlib.suppress(OSError):
                    path.unlink()


def _owner_alive(pid: int, log_path: Path) -> bool:
    try:
        process = psutil.Process(pid)
        if process.status() == psutil.STATUS_ZOMBIE:
            return False
        started = process.create_time()
        modified = log_path.stat().st_mtime
    except psutil.NoSuchProcess:
        return False
    except (psutil.Error, OSError):
        return True  # unsure: keep the file
    # The owner created the log, so it started before the file was last written; a process
    # with that pid started later is a stranger that reuses the pid (a second of slack for
    # clock granularity).
    return started <= modified + 1


def tail(path: Path, lines: int) -> str:
    """The last ``lines`` non-blank lines of the log at ``path``, joined by `` | ``; empty
    when it cannot be read."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    # The Debian wrapper script prints a harmless "[: ... unexpected operator" line.
    kept = [
        line for line in text.splitlines() if line.strip() and "unexpected operator" not in line
    ]
    return " | ".join(kept[-lines:])
