"""Processes: this test run's marker and Chromes, process trees, and bounded waits for them to
end."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Iterable
from pathlib import Path

import psutil

from ego.protocol._proctree import not_ended_within


def is_chrome(process: psutil.Process) -> bool:
    try:
        cmdline = " ".join(process.cmdline())
        return "chrom" in process.name().lower() or "--remote-debugging" in cmdline
    except psutil.Error:
        return False


def process_tree(root: psutil.Process) -> list[psutil.Process]:
    """``root``'s live descendants."""
    with contextlib.suppress(psutil.Error):
        return root.children(recursive=True)
    return []


def with_descendants(processes: Iterable[psutil.Process]) -> list[psutil.Process]:
    found: dict[int, psutil.Process] = {}
    for process in processes:
        found[process.pid] = process
        for child in process_tree(process):
            found[child.pid] = child
    return list(found.values())


def alive(processes: Iterable[psutil.Process]) -> list[psutil.Process]:
    """The processes still running (a zombie counts as gone: it is only waiting to be reaped)."""
    living = []
    for process in processes:
        with contextlib.suppress(psutil.Error):
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                living.append(process)
    return living


async def wait_gone(processes: Iterable[psutil.Process], timeout: float) -> list[psutil.Process]:
    """Wait (bounded) until every process has exited; return those still alive at the end."""
    pending = list(processes)
    return await asyncio.to_thread(still_alive_after, pending, timeout)


def still_alive_after(processes: list[psutil.Process], timeout: float) -> list[psutil.Process]:
    """Wait (bounded, blocking) until every process has exited; those still alive then. A
    zombie has exited: one that is not this process's child may wait seconds for init to
    reap it."""
    return not_ended_within(alive(processes), timeout)


def profile_pids(profile_dir: Path) -> list[psutil.Process]:
    """Live Chrome processes whose command line names ``profile_dir``."""
    needle = f"--user-data-dir={profile_dir}"
    found = []
    for process in psutil.process_iter(["cmdline"]):
        with contextlib.suppress(psutil.Error):
            if any(part == needle for part in process.info["cmdline"] or []):
                found.append(process)
    return alive(found)


_SESSION_START = time.time()


#: Every process this test run starts inherits this marker (Chrome included), which is how
#: the leak check tells this run's Chromes from anybody else's.
RUN_MARKER = "EGO_TEST_RUN"


RUN_ID = uuid.uuid4().hex


#: What ``$EGO_CHROME`` names where no Chrome may start: a "browser" that says so and fails,
#: so that a test starting Chrome without the ``chrome`` mark fails (its subprocesses too)
#: instead of slowing the fast tier down or passing by luck.
NO_CHROME_MESSAGE = "this test is not marked chrome, yet it started Chrome: mark it"


def ego_chromes(since: float = _SESSION_START) -> list[psutil.Process]:
    """Live Chrome processes started during this test run (by ego or by a test).

    A process belongs to this run when it inherited this run's ``EGO_TEST_RUN`` marker, so a
    test run never counts, or kills, the Chromes of another run on the same machine.
    """
    found = []
    for process in psutil.process_iter(["cmdline", "create_time", "status"]):
        try:
            if process.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            if process.info["create_time"] < since - 1:
                continue
            cmdline = " ".join(process.info["cmdline"] or [])
            if "--remote-debugging" not in cmdline and "--type=" not in cmdline:
                continue
            if process.environ().get(RUN_MARKER) != RUN_ID:
                continue
        except psutil.Error:
            continue
        found.append(process)
    return found


def live(processes: list[psutil.Process]) -> list[psutil.Process]:
    """Those of ``processes`` still running (a zombie has ended; it only awaits reaping)."""
    running = []
    for process in processes:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                running.append(process)
        except psutil.NoSuchProcess:
            pass
    return running


def tree(pid: int) -> list[psutil.Process]:
    root = psutil.Process(pid)
    return [root, *root.children(recursive=True)]


def processes_mentioning(text: str) -> list[psutil.Process]:
    """Live processes whose command line contains ``text`` (a profile folder, a pid)."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        try:
            if text in " ".join(process.info["cmdline"] or []):
                found.append(process)
        except psutil.Error:
            continue
    return live(found)
