"""The per-test bound of tests/hang_guard.py, checked on a pytest run of its own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

HANGS = """
import asyncio

async def test_waits_forever() -> None:
    await asyncio.Event().wait()

async def test_after_it() -> None:
    assert 1 + 1 == 2
"""

BLOCKS = """
import threading

def test_blocks_the_loop_thread() -> None:
    threading.Event().wait()

def test_never_reached() -> None:
    pass
"""


def run_pytest(tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    test_file = tmp_path / "test_guarded.py"
    test_file.write_text(source)
    env = {
        **os.environ,
        # Short, as each run waits them out: the hung test its bound, the blocked one both.
        "EGO_TEST_TIMEOUT": "1",
        "EGO_TEST_GRACE": "1",
        "PYTHONPATH": str(ROOT),
    }
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "tests.hang_guard",
            "-q",
            "-p",
            "no:cacheprovider",
            "-c",
            str(ROOT / "pyproject.toml"),
            "--rootdir",
            str(ROOT),
            str(test_file),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_hung_async_test_fails_with_its_stack_and_the_run_goes_on(tmp_path: Path) -> None:
    run = run_pytest(tmp_path, HANGS)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "1 failed, 1 passed" in run.stdout
    assert "hung: cancelled after 1 s" in run.stdout
    # The stack of the stuck task says where it waited.
    assert "in test_waits_forever" in run.stdout + run.stderr
    assert "await asyncio.Event().wait()" in run.stdout + run.stderr


def test_a_test_blocking_the_thread_ends_the_run(tmp_path: Path) -> None:
    run = run_pytest(tmp_path, BLOCKS)
    assert run.returncode == 3, run.stdout + run.stderr
    output = run.stdout + run.stderr
    assert "test_blocks_the_loop_thread did not unwind; ending the run" in output
    # The dump shows the blocking call, and the run ended there.
    assert "in test_blocks_the_loop_thread" in output
    assert "passed" not in output
