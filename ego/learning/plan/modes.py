"""The permissions saved learnings get: what the process's umask gives a plain ``open``.

``tempfile.mkstemp`` and ``mkdtemp`` create 0600 files and 0700 folders whatever the umask,
which made every saved learning private to the user who saved it. Writes go through temporary
files for atomicity, so they set the mode the umask would have given explicitly.
"""

from __future__ import annotations

import os
import threading

__all__ = ["file_mode", "folder_mode"]

_lock = threading.Lock()


def _umask() -> int:
    # Linux shows the umask in /proc without changing it; elsewhere the only way to read it
    # is to set it and put it back, which must not race another thread doing the same.
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    with _lock:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def file_mode() -> int:
    """The mode a new file gets under the current umask (0644 under the usual 022)."""
    return 0o666 & ~_umask()


def folder_mode() -> int:
    """The mode a new folder gets under the current umask (0755 under the usual 022)."""
    return 0o777 & ~_umask()
