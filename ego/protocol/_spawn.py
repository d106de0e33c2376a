"""Starting Chrome's process, with the debugging pipe on its descriptors 3 and 4.

:mod:`ego.protocol.chrome` decides what to start (binary, flags, profile); this module only
makes the process and its descriptors.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterable
from pathlib import Path

from .pipe import grow_pipe

__all__ = ["close_fds", "spawn"]

# Starts Chrome (the arguments after the script) with the pipe it was given as stdin and
# stdout moved to descriptors 3 and 4, where --remote-debugging-pipe expects them, stdin read
# from /dev/null and stdout joined to stderr (the log). Popen places the pipe ends on 0 and 1
# in C, between fork and exec, and clears close-on-exec there only, which is safe with any
# number of threads; preexec_fn, which could place them on 3 and 4 directly, runs Python in
# the forked child and may deadlock on a lock another thread held at fork time, and pass_fds
# keeps a descriptor's own number. A POSIX shell takes one digit per descriptor, so the
# small, fixed numbers 0 and 1 are the ones it can move; `exec` then replaces it with Chrome
# (same pid), for about a millisecond of start-up.
_EXEC_WITH_PIPE = 'exec 3<&0 4>&1 </dev/null >&2; exec "$@"'


def spawn(
    command: list[str], log_path: Path, *, pipe: bool
) -> tuple[subprocess.Popen[bytes], tuple[int, int] | None]:
    """Start ``command``, with the debugging pipe when ``pipe`` (POSIX only).

    Returns the process and our ``(read_fd, write_fd)`` ends of the pipe (None without one).
    Every descriptor made here is close-on-exec in this process (:func:`os.pipe` makes them
    so): Chrome gets its ends through Popen alone, and no other child inherits any.

    Args:
        command: the binary and its arguments.
        log_path: the file that takes the process's stdout and stderr.
        pipe: whether to hand it the debugging pipe.

    Raises:
        OSError: the pipe, the log file or the process could not be made (nothing is left
            open then).
    """
    chrome_ends: list[int] = []  # Chrome's read end, then its write end
    ours: list[int] = []  # our write end, then our read end
    try:
        if pipe:
            chrome_reads, we_write = os.pipe()  # commands
            chrome_ends.append(chrome_reads)
            ours.append(we_write)
            we_read, chrome_writes = os.pipe()  # answers and events
            chrome_ends.append(chrome_writes)
            ours.append(we_read)
            grow_pipe(chrome_reads)
            grow_pipe(we_read)
            command = ["/bin/sh", "-c", _EXEC_WITH_PIPE, "sh", *command]
        # stderr goes to a file: a pipe nobody reads fills at 64 KB and freezes Chrome.
        with open(log_path, "wb") as log:
            process = subprocess.Popen(
                command,
                stdin=chrome_ends[0] if chrome_ends else subprocess.DEVNULL,
                stdout=chrome_ends[1] if chrome_ends else log,
                stderr=log,
                start_new_session=True,  # Ctrl+C in a terminal reaches Python, not Chrome
            )
    except BaseException:
        close_fds(ours)
        raise
    finally:
        # Chrome has its own copies of its ends now; this process's must go, or the end of
        # file that says Chrome is gone would never come.
        close_fds(chrome_ends)
    return process, (ours[1], ours[0]) if ours else None


def close_fds(fds: Iterable[int] | None) -> None:
    """Close each descriptor of ``fds``; one already closed is no error."""
    for fd in fds or ():
        with contextlib.suppress(OSError):
            os.close(fd)
