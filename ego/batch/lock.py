"""The output lock: one ``ego batch`` run per output file at a time.

Two runs on one output would each read the same finished indices and both run every input
still pending, which breaks the exactly-once promise. The first run holds ``<output>.lock``
for its whole life and writes who it is into it; a second run gives up at once and says so.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from ..errors import BatchFileError

__all__ = ["hold_output", "lock_path"]


def lock_path(output: Path) -> Path:
    """The lock file of an output: ``<output>.lock``, beside it."""
    return output.with_name(output.name + ".lock")


@contextmanager
def hold_output(output: Path) -> Iterator[None]:
    """Hold ``output``'s lock for the ``with`` block, or fail at once.

    Raises:
        BatchFileError: another run (in this or another process) holds the output; the
            message says which process and since when, as far as its lock file tells.
    """
    path = lock_path(output)
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(path, timeout=0, thread_local=False)
    try:
        lock.acquire()
    except Timeout:
        raise BatchFileError(
            f"{output} is in use by another ego batch run ({_owner(path)}); wait for it to "
            "finish or stop it, then run this command again to continue"
        ) from None
    try:
        # The lock is on the open file, not its contents: rewriting them is safe while held.
        with contextlib.suppress(OSError):
            path.write_text(
                f"pid {os.getpid()} on {socket.gethostname()} since "
                f"{time.strftime('%Y-%m-%d %H:%M:%S')}\n",
                encoding="utf-8",
            )
        yield
    finally:
        lock.release()


def _owner(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        text = ""
    return text.splitlines()[0][:200] if text else f"lock file {path}"
