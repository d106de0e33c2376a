"""The per-site lock: one read-modify-write of a site folder at a time, across processes.

Saves, notes, restores and skill imports each read a manifest (or folder), change it and
write it back. Without a lock two of them running at once both succeed and the later write
drops what the earlier one added. The lock is a ``filelock`` file in a hidden folder of the
learnings root (hidden folders are never taken for sites), so it also covers a site that does
not exist yet. It is held only around the disk work, never while a browser checks a tool.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from ...errors import SiteBusyError

__all__ = ["LOCK_DIR", "LOCK_TIMEOUT", "site_lock"]

#: The folder of a learnings (or skills) root that holds the lock files.
LOCK_DIR = ".ego-locks"

#: Seconds a save waits for another one on the same site before giving up.
LOCK_TIMEOUT = 30.0


@contextmanager
def site_lock(root: Path, name: str, *, timeout: float = LOCK_TIMEOUT) -> Iterator[Path]:
    """Hold the lock of ``root / name`` for the ``with`` block.

    Args:
        root: the learnings (or skills) root the folder is in.
        name: the site id (or a skill's ``site/name``), already checked to be a plain name.
        timeout: seconds to wait for the lock.

    Yields:
        The lock file's path.

    Raises:
        SiteBusyError: another thread or process held the lock for ``timeout`` seconds.

    The lock is not reentrant: a block holding it must not ask for it again. Threads and
    processes alike wait for each other (flock locks belong to an open file, not a process).
    """
    folder = root / LOCK_DIR
    folder.mkdir(parents=True, exist_ok=True)
    lock_file = folder / (name.replace("/", "__") + ".lock")
    lock = FileLock(lock_file, timeout=timeout, thread_local=False)
    try:
        lock.acquire()
    except Timeout:
        raise SiteBusyError(
            f"{name} in {root} is being changed by another save that has held its lock for "
            f"{timeout:g} s; try again (if no ego process is running, remove {lock_file})",
            lock_file=str(lock_file),
        ) from None
    try:
        yield lock_file
    finally:
        lock.release()
