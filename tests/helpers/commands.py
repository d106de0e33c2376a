"""Running ``ego`` as a real subprocess (to its end, or in the background), its environment, and
the ports and endpoints a command is given (processes.py finds and awaits processes).

Every wait here is bounded: a subprocess that outlives its timeout is killed and the test fails
with what it printed so far.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.helpers.paths import PYTHON_EGO

#: Environment variables of the developer's shell that would change what a command sees.
_CLEARED = ("EGO_WORKSPACE", "EGO_ENDPOINT", "EGO_NEW_BROWSER", "EGO_START_URL")


def ego_env(profiles: Path, *, workspace: Path | None = None, **extra: str) -> dict[str, str]:
    """The environment for an ``ego`` subprocess.

    It inherits this test run's ``EGO_TEST_RUN`` marker (so the leak check sees its Chromes),
    keeps profiles (and the state folder) under ``profiles`` and learnings in the project
    unless ``workspace`` is set.
    """
    env = {key: value for key, value in os.environ.items() if key not in _CLEARED}
    env["EGO_PROFILES_DIR"] = str(profiles)
    # Each environment has its own state folder, so a browser one test keeps with
    # `ego launch` is seen only by the commands of that test.
    env["EGO_STATE_DIR"] = str(profiles / ".ego-state")
    env["PYTHONUNBUFFERED"] = "1"
    if workspace is not None:
        env["EGO_WORKSPACE"] = str(workspace)
    env.update(extra)
    return env


@dataclass
class Result:
    """What an ``ego`` subprocess did."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        try:
            return json.loads(self.stdout)
        except json.JSONDecodeError as exc:
            raise AssertionError(f"stdout is not JSON ({exc}):\n{self}") from None

    def error_line(self) -> str:
        """The one line the command printed on stderr (fails if there is not exactly one)."""
        lines = [line for line in self.stderr.splitlines() if line.strip()]
        assert len(lines) == 1, f"expected one error line on stderr, got {len(lines)}:\n{self}"
        return lines[0]

    def __str__(self) -> str:
        return (
            f"$ {' '.join(self.args)}\nexit {self.returncode}\n"
            f"--- stdout\n{self.stdout[-4000:]}\n--- stderr\n{self.stderr[-4000:]}"
        )


def ego_sync(
    *args: str,
    env: Mapping[str, str],
    timeout: float = 60,
    command: list[str] | None = None,
    cwd: Path | None = None,
) -> Result:
    """Run ``python -m ego ARGS`` (or ``command``) to completion, blocking."""
    return run_to_end([*(command or PYTHON_EGO), *args], env=env, cwd=cwd, timeout=timeout)


def run_to_end(
    argv: list[str], *, env: Mapping[str, str] | None, cwd: Path | None, timeout: float
) -> Result:
    """Run ``argv`` to completion, blocking (``env`` None: this process's environment); fail
    with what it printed when it overruns ``timeout``."""
    try:
        done = subprocess.run(
            argv,
            env=None if env is None else dict(env),
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(
            f"$ {' '.join(argv)} did not finish within {timeout} s\n"
            f"stdout: {exc.stdout!r}\nstderr: {exc.stderr!r}"
        ) from None
    return Result(argv, done.returncode, done.stdout, done.stderr)


async def ego_async(
    *args: str,
    env: Mapping[str, str],
    timeout: float = 60,
    command: list[str] | None = None,
    cwd: Path | None = None,
) -> Result:
    """Run ``python -m ego ARGS`` to completion without blocking the event loop."""
    argv = [*(command or PYTHON_EGO), *args]
    process = await asyncio.create_subprocess_exec(
        *argv,
        env=dict(env),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), timeout)
    except TimeoutError:
        process.kill()
        out, err = await process.communicate()
        raise AssertionError(
            f"$ {' '.join(argv)} did not finish within {timeout} s\n"
            f"stdout: {out.decode(errors='replace')}\nstderr: {err.decode(errors='replace')}"
        ) from None
    assert process.returncode is not None
    return Result(argv, process.returncode, out.decode(), err.decode())


async def read_json_line(stream: asyncio.StreamReader, timeout: float) -> Any:
    """The first line of ``stream`` that is a JSON object (the Debian chromium wrapper may
    print a stray line first); fails after ``timeout`` seconds or at end of stream."""
    deadline = time.monotonic() + timeout
    seen: list[str] = []
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError(f"no JSON line within {timeout} s; got {seen!r}")
        try:
            raw = await asyncio.wait_for(stream.readline(), remaining)
        except TimeoutError:
            raise AssertionError(f"no JSON line within {timeout} s; got {seen!r}") from None
        if not raw:
            raise AssertionError(f"the process closed stdout before a JSON line; got {seen!r}")
        line = raw.decode().strip()
        seen.append(line)
        if line.startswith("{"):
            return json.loads(line)


def free_port() -> int:
    """A local port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def http_endpoint(ws_url: str) -> str:
    """``http://127.0.0.1:PORT`` from a browser websocket URL."""
    port = ws_url.split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1]
    return f"http://127.0.0.1:{port}"


def state_file(env: dict[str, str]) -> Path:
    return Path(env["EGO_STATE_DIR"]) / "browser.json"


@contextlib.asynccontextmanager
async def background(*args: str, env: dict[str, str], cwd: Path) -> AsyncIterator[Any]:
    """``python -m ego ARGS`` running in the background; killed if the test leaves it."""
    process = await asyncio.create_subprocess_exec(
        *PYTHON_EGO,
        *args,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        yield process
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
