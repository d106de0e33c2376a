"""Ending a process tree. Imports nothing but psutil: the watchdog runs it as a bare script."""

from __future__ import annotations

import contextlib
import time

import psutil

__all__ = ["kill_tree", "not_ended_within", "still_running", "wait_ended"]

#: Seconds between two looks at a process that is not this one's child.
_POLL = 0.02


def still_running(pid: int, started: float, *, tolerance: float = 0.01) -> bool:
    """True while process ``pid`` runs and is the one that started at ``started``.

    ``started`` is its ``create_time``; a process with the same pid but another start time
    (the pid reused) is not it, and neither is a zombie.
    """
    try:
        process = psutil.Process(pid)
        return (
            abs(process.create_time() - started) <= tolerance
            and process.status() != psutil.STATUS_ZOMBIE
        )
    except psutil.Error:
        return False


def wait_ended(process: psutil.Process, timeout: float) -> bool:
    """Wait up to ``timeout`` seconds for ``process`` to end; True if it did.

    A zombie has ended. psutil's own wait would take it for alive: a process that is not
    this one's child stays a zombie until its parent reaps it, and a detached one's parent
    is init, which may reap only every few seconds.
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            if process.status() == psutil.STATUS_ZOMBIE:
                return True
            process.wait(timeout=min(_POLL, max(0.0, deadline - time.monotonic())))
            return True
        except psutil.TimeoutExpired:
            if time.monotonic() >= deadline:
                return False
        except psutil.NoSuchProcess:
            return True


def kill_tree(pid: int, *, create_time: float | None = None, grace: float = 2.0) -> None:
    """End process ``pid`` and all its descendants: SIGTERM, then SIGKILL after ``grace``.

    ``create_time`` guards against pid reuse: a process with the same pid but another start
    time is left alone.
    """
    try:
        root = psutil.Process(pid)
        if create_time is not None and abs(root.create_time() - create_time) > 0.01:
            return
        processes = [root, *root.children(recursive=True)]
    except psutil.Error:
        return
    for process in processes:
        with contextlib.suppress(psutil.Error):
            process.terminate()
    alive = not_ended_within(processes, grace)
    for process in alive:
        with contextlib.suppress(psutil.Error):
            process.kill()
    not_ended_within(alive, grace)


def not_ended_within(processes: list[psutil.Process], timeout: float) -> list[psutil.Process]:
    """Those of ``processes`` still running after waiting up to ``timeout`` seconds in all."""
    deadline = time.monotonic() + timeout
    return [p for p in processes if not wait_ended(p, max(0.0, deadline - time.monotonic()))]
