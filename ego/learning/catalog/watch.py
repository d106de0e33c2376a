"""Change notification for the learnings' files, so a hot call needs no stat to stay fresh.

On Linux one inotify instance per process watches the files and folders a hot tool call
depends on (the manifest, the site folder, the tool file and the folders on its path). The
kernel queues an event while the write that changes a file is still in progress, so a
non-blocking poll at the start of a call sees every change that finished before it:
:func:`generation` answers a number that moves on when anything watched changed. A caller
keeps the generation it validated a file under and stats again only when it moved (or when
:data:`REVALIDATE_SECONDS` passed, for what no watch sees: a network filesystem written from
another machine, a folder above a root renamed). Where inotify is missing or a watch cannot
be added, :func:`watch` answers False and the caller stats on every call, as before.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import sys
import threading
from collections.abc import Iterable
from typing import Final

__all__ = ["REVALIDATE_SECONDS", "epoch", "generation", "watch"]

#: The longest a file is trusted without a stat, for changes no watch reports.
REVALIDATE_SECONDS: Final = 1.0

# Everything that changes what a path holds or where it points; not reads or opens.
_IN_MODIFY, _IN_ATTRIB, _IN_CLOSE_WRITE = 0x2, 0x4, 0x8
_IN_MOVED_FROM, _IN_MOVED_TO, _IN_CREATE, _IN_DELETE = 0x40, 0x80, 0x100, 0x200
_IN_DELETE_SELF, _IN_MOVE_SELF = 0x400, 0x800
_MASK: Final = (
    _IN_MODIFY
    | _IN_ATTRIB
    | _IN_CLOSE_WRITE
    | _IN_MOVED_FROM
    | _IN_MOVED_TO
    | _IN_CREATE
    | _IN_DELETE
    | _IN_DELETE_SELF
    | _IN_MOVE_SELF
)


class _Inotify:
    """The process's inotify instance (remade in a forked child, which must not share it)."""

    def __init__(self, start: int) -> None:
        self.start = start
        self.generation = start
        self._lock = threading.Lock()
        # The running program's own symbols hold libc's: no library search (find_library
        # would run ldconfig).
        libc = ctypes.CDLL(None, use_errno=True)
        self._add = libc.inotify_add_watch
        self._add.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        self._add.restype = ctypes.c_int
        fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        self.fd = fd
        self._poll = select.poll()
        self._poll.register(fd, select.POLLIN)
        #: Whether events wait (``poll(0)``: a list, empty when none).
        self.poll = self._poll.poll

    def add(self, path: str) -> bool:
        # The same inode answers the same watch descriptor: adding again costs nothing.
        with self._lock:
            return int(self._add(self.fd, os.fsencode(path), _MASK)) >= 0

    def changed(self) -> int:
        if self._poll.poll(0):
            with contextlib.suppress(BlockingIOError, InterruptedError):
                while os.read(self.fd, 65536):
                    pass
            self.generation += 1
        return self.generation


_instance: _Inotify | None = None
# Where the next instance's generations start: above every one a record may hold.
_next_start = 0
_unavailable = not sys.platform.startswith("linux")


def _inotify() -> _Inotify | None:
    global _instance, _unavailable
    instance = _instance
    if instance is not None:
        return instance
    if _unavailable:
        return None
    try:
        _instance = _Inotify(_next_start)
    except (OSError, AttributeError):  # no libc inotify, or too many instances for this user
        _unavailable = True
        return None
    return _instance


def watch(paths: Iterable[str]) -> int:
    """Watch every path in ``paths`` (files and folders; links are followed).

    Returns the watcher's epoch (see :func:`epoch`), or -1 when any of them cannot be watched
    (no inotify here, the path is gone, the user's watch limit is reached): the caller must
    then stat on every call.
    """
    instance = _inotify()
    if instance is None:
        return -1
    return instance.start if all([instance.add(path) for path in paths]) else -1


def epoch() -> int:
    """Which watcher this process has (a forked child gets a new one, without the parent's
    watches): a record is trusted only under the watcher that watches its paths."""
    instance = _instance
    return -1 if instance is None else instance.start


def generation() -> int:
    """A number that moves on whenever a watched path changed since the last look.

    One non-blocking poll; -1 when there is no watcher (then nothing is ever fresh by it).
    """
    instance = _instance
    if instance is None:
        return -1
    # The poll written out (every hot call asks twice): changed() only when there is news.
    if instance.poll(0):
        return instance.changed()
    return instance.generation


def _forget_in_child() -> None:
    # A forked child shares the parent's inotify queue: reading it would steal the parent's
    # events. The child makes its own on its first watch (and trusts nothing before).
    global _instance, _next_start
    if _instance is not None:
        _next_start = _instance.generation + 1
    _instance = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)
