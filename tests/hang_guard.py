"""A bound on every test: a test that hangs fails with its stacks instead of stalling the run.

Each test (setup, call and teardown) gets ``EGO_TEST_TIMEOUT`` seconds (180 by default).
When they run out, a watchdog thread prints every thread's stack and every asyncio task's
stack, then cancels the task that runs the test, which then fails with a message saying so.
A test that is stuck outside the event loop (a blocking call) cannot be cancelled: after a
grace period the watchdog ends this run's Chromes and exits the process, so that CI reports a
hang in minutes rather than at its own deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import faulthandler
import os
import sys
import threading
from collections.abc import AsyncIterator, Generator
from typing import TextIO

import pytest

LIMIT = float(os.environ.get("EGO_TEST_TIMEOUT", "180"))
#: After cancelling, how long the test has to unwind before the process is ended.
GRACE = float(os.environ.get("EGO_TEST_GRACE", "30"))

_loop: asyncio.AbstractEventLoop | None = None


@pytest.fixture(scope="session", autouse=True)
async def _remember_loop() -> AsyncIterator[None]:
    global _loop
    _loop = asyncio.get_running_loop()
    yield
    _loop = None


class _Guard:
    def __init__(self, item: pytest.Item) -> None:
        self.item = item
        self.fired = False
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="hang-guard", daemon=True)

    def __enter__(self) -> _Guard:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()

    def _watch(self) -> None:
        if self._done.wait(LIMIT):
            return
        self.fired = True
        out = sys.__stderr__ or sys.stderr
        print(
            f"\nHANG: {self.item.nodeid} still running after {LIMIT:g} s; stacks follow",
            file=out,
            flush=True,
        )
        faulthandler.dump_traceback(file=out, all_threads=True)
        loop = _loop
        name = getattr(self.item, "originalname", self.item.name)
        if loop is not None and loop.is_running():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(_dump_and_cancel, loop, name, out, self._done)
        if self._done.wait(GRACE):
            return
        # pytest's capture would be lost with the process: write to the real stderr now.
        capture = self.item.config.pluginmanager.getplugin("capturemanager")
        if capture is not None:
            with contextlib.suppress(Exception):
                capture.suspend_global_capture(in_=True)
        out = sys.__stderr__ or sys.stderr
        print(f"\nHANG: {self.item.nodeid} did not unwind; ending the run", file=out, flush=True)
        faulthandler.dump_traceback(file=out, all_threads=True)
        _kill_run_chromes()
        os._exit(3)


def _dump_and_cancel(
    loop: asyncio.AbstractEventLoop, test_name: str, out: TextIO, finished: threading.Event
) -> None:
    if finished.is_set():
        return  # the test ended meanwhile; a task of that name now is another test's
    for task in asyncio.all_tasks(loop):
        print(f"--- {task!r}", file=out)
        task.print_stack(file=out)
    for task in asyncio.all_tasks(loop):
        code = getattr(task.get_coro(), "cr_code", None)
        if code is not None and code.co_name == test_name:
            task.cancel(f"the test ran longer than {LIMIT:g} s")
    out.flush()


def _kill_run_chromes() -> None:
    from tests.helpers.processes import ego_chromes

    for process in ego_chromes():
        with contextlib.suppress(Exception):
            process.kill()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    with _Guard(item) as guard:
        item.stash[_GUARD] = guard
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Generator[None, object, object]:
    try:
        return (yield)
    except asyncio.CancelledError:
        guard = pyfuncitem.stash.get(_GUARD, None)
        if guard is not None and guard.fired:
            pytest.fail(
                f"hung: cancelled after {LIMIT:g} s (EGO_TEST_TIMEOUT); "
                "the thread and task stacks are printed on stderr",
                pytrace=False,
            )
        raise


_GUARD = pytest.StashKey[_Guard]()
