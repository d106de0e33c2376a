"""When a record read from a file may be trusted without reading the file again.

A file's stamp (:func:`file_stamp`) tells a changed file from an unchanged one by its stat; a
:class:`Fresh` lets a record skip even that while the process's watcher (:mod:`.watch`) saw
nothing change, for at most :data:`~.watch.REVALIDATE_SECONDS`. The registry
(:mod:`.registry`) keeps one with each site it found and each tool source it loaded.
"""

from __future__ import annotations

import os
from pathlib import Path

from .watch import REVALIDATE_SECONDS
from .watch import epoch as watcher_epoch

__all__ = ["FileStamp", "Fresh", "file_stamp", "nearest_folder", "source_watch_paths"]

FileStamp = tuple[int, int, int, int]


def file_stamp(path: str | os.PathLike[str]) -> FileStamp:
    """What tells a changed file from an unchanged one, without reading it.

    Modification time alone misses a same-size rewrite within one timestamp tick; the inode
    and change time catch an atomic replace (a new inode) and any write.
    """
    try:
        stat = os.stat(path)
    except OSError:
        return (-1, -1, -1, -1)
    return (stat.st_mtime_ns, stat.st_size, stat.st_ino, stat.st_ctime_ns)


class Fresh:
    """When a record checked by stat may be trusted without one (see :mod:`.watch`).

    Trusted while nothing watched changed since the last stat (the watcher's generation is
    the one recorded) and for at most :data:`~.watch.REVALIDATE_SECONDS`; a record whose
    paths are not all watched (by this process's watcher) never is: it is stat-checked on
    every call. A new record is not trusted before its first renewal: its stat was taken
    before the watches existed.
    """

    __slots__ = ("epoch", "generation", "until")

    def __init__(self, epoch: int) -> None:
        self.epoch = epoch
        self.generation = -2
        self.until = 0.0

    def renew(self, generation: int, now: float) -> None:
        """The stat just found the record current, with the watcher at ``generation``."""
        if generation >= 0 and self.epoch >= 0 and self.epoch == watcher_epoch():
            self.generation = generation
            self.until = now + REVALIDATE_SECONDS


def nearest_folder(path: Path) -> str:
    """``path`` if it is a folder, else its nearest ancestor that is (where it would appear)."""
    for candidate in (path, *path.parents):
        if candidate.is_dir():
            return str(candidate)
    return str(path.anchor or ".")


def source_watch_paths(directory: Path, declared: str, file: Path) -> list[str]:
    """What a browser tool's freshness depends on: the file as declared and as resolved,
    every folder from the site's down to it, and the resolved file's folder."""
    paths = [str(directory)]
    folder = directory
    for part in Path(declared).parts[:-1]:
        folder = folder / part
        paths.append(str(folder))
    paths += [str(directory / declared), str(file), str(file.parent)]
    return paths
