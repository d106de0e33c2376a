"""Ends a Chrome when the Python process that started it is gone.

Run as ``python path/to/ego/_watchdog.py CHROME_PID [TEMP_PROFILE_DIR]`` (a script, so that
the ego package and its dependencies are not imported) with stdin a pipe whose only
write end belongs to the owner. Reading blocks until the owner closes it or dies (the kernel
closes it then, even after SIGKILL); then the Chrome tree is ended and the temporary profile
removed. Pid reuse is ruled out by comparing the process start time taken at startup.
"""

from __future__ import annotations

import shutil
import signal
import sys

import psutil

try:
    from ._proctree import kill_tree
except ImportError:  # run as a script: the folder of this file is on sys.path
    from _proctree import kill_tree  # type: ignore[import-not-found,no-redef]


def main(argv: list[str]) -> int:
    # The owner's terminal may send SIGINT/SIGHUP to everything; only end-of-file ends us.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    pid = int(argv[0])
    remove_dir = argv[1] if len(argv) > 1 else None
    try:
        create_time: float | None = psutil.Process(pid).create_time()
    except psutil.Error:
        create_time = None
    while sys.stdin.buffer.read(65536):
        pass
    if create_time is not None:
        kill_tree(pid, create_time=create_time)
    if remove_dir:
        shutil.rmtree(remove_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
