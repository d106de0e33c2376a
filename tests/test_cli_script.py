"""``ego script`` with top-level ``await`` and short tracebacks, and the ``ego shell`` REPL.

Both attach with ``--endpoint`` to the session's Chrome and run as real subprocesses; the
shell gets its statements on stdin.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest

import ego
from tests.helpers.browsers import websocket_url
from tests.helpers.commands import Result, ego_async, ego_env, http_endpoint
from tests.helpers.paths import PYTHON_EGO


@pytest.fixture
def endpoint(ported_browser: ego.Browser) -> str:
    return http_endpoint(websocket_url(ported_browser))


def _write(tmp_path: Path, text: str, name: str = "job.py") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


async def test_a_script_may_await_at_the_top_level(tmp_path: Path, endpoint: str) -> None:
    script = _write(
        tmp_path,
        "value = await tab.evaluate('6 * 7')\n"
        "print('answer', value)\n"
        "print(type(browser).__name__, type(site).__name__, type(tab).__name__)\n"
        "async def main(browser, tab, site):\n"
        "    print('main', await tab.evaluate('1 + 1'))\n",
    )
    result = await ego_async(
        "script", str(script), "--endpoint", endpoint, env=ego_env(tmp_path / "profiles")
    )
    assert result.returncode == 0, result
    assert result.stdout.splitlines() == ["answer 42", "Browser Site Tab", "main 2"]


def _assert_short_traceback(
    result: Result, script: Path, lines: list[tuple[int, str]]
) -> dict[str, str]:
    """The stderr of a failed script: its own frames, then one JSON error line."""
    stderr = result.stderr.strip().splitlines()
    assert stderr[0] == "Traceback (the script's frames):", result
    frames = [line for line in stderr if line.startswith("  File ")]
    assert frames == [f'  File "{script}", line {n}, in {where}' for n, where in lines], result
    for noise in ("click", "asyncio", "site-packages", "ego/cli", "ego/site/"):
        assert noise not in result.stderr, result
    error: dict[str, str] = json.loads(stderr[-1])
    return error


async def test_a_failing_script_shows_its_own_frames_and_one_error_line(
    tmp_path: Path, endpoint: str
) -> None:
    script = _write(
        tmp_path,
        "def check(value):\n"
        "    if value != 3:\n"
        "        raise ValueError(f'expected 3, got {value}')\n"
        "\n"
        "check(await tab.evaluate('1 + 1'))\n",
    )
    result = await ego_async(
        "script", str(script), "--endpoint", endpoint, env=ego_env(tmp_path / "profiles")
    )
    assert result.returncode == 1, result
    error = _assert_short_traceback(result, script, [(5, "<module>"), (3, "check")])
    assert error == {"error": "ValueError: expected 3, got 2", "type": "ScriptError"}


async def test_an_ego_error_in_a_script_keeps_its_type_and_exit_code(
    tmp_path: Path, endpoint: str
) -> None:
    script = _write(tmp_path, "x = 1\nawait site.run_tool('demo-shop', 'get_prodct')\n")
    result = await ego_async(
        "script", str(script), "--endpoint", endpoint, env=ego_env(tmp_path / "profiles")
    )
    assert result.returncode == 3, result
    error = _assert_short_traceback(result, script, [(2, "<module>")])
    assert error["type"] == "UnknownToolError"
    assert "get_prodct" in error["error"]


async def test_a_script_with_a_syntax_error_fails_before_a_browser(tmp_path: Path) -> None:
    script = _write(tmp_path, "x = await\n")
    env = ego_env(tmp_path / "profiles", EGO_CHROME=str(tmp_path / "no-chrome-here"))
    result = await ego_async("script", str(script), env=env)
    assert result.returncode == 1, result
    assert json.loads(result.stderr.strip().splitlines()[-1])["error"].startswith("SyntaxError")
    assert "ChromeNotFound" not in result.stderr


async def _shell(statements: str, env: dict[str, str], *args: str) -> Result:
    """Run ``ego shell`` with ``statements`` on its stdin until it ends (bounded)."""
    argv = [*PYTHON_EGO, "shell", *args]
    process = await asyncio.create_subprocess_exec(
        *argv,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(statements.encode()), 60)
    except TimeoutError:
        process.kill()
        out, err = await process.communicate()
        raise AssertionError(f"ego shell did not end: {out!r} {err!r}") from None
    assert process.returncode is not None
    return Result(argv, process.returncode, out.decode(), err.decode())


async def test_the_shell_runs_piped_statements_with_await(
    tmp_path: Path, endpoint: str, browser: ego.Browser
) -> None:
    tabs_before = len(await browser.tabs())
    statements = (
        "x = await tab.evaluate('6 * 7')\n"
        "print('answer', x)\n"
        "print(type(browser).__name__, type(site).__name__, type(tab).__name__)\n"
        "async def twice(n):\n"
        "    return 2 * n\n"
        "\n"
        "print('twice', await twice(x))\n"
        "len(site.sites()) > 0\n"
    )
    result = await _shell(statements, ego_env(tmp_path / "profiles"), "--endpoint", endpoint)
    assert result.returncode == 0, result
    # Only what the statements print: no banner, no ">>>" or "..." prompts.
    assert result.stdout.splitlines() == ["answer 42", "Browser Site Tab", "twice 84", "True"]
    assert "ego shell" not in result.stderr
    assert len(await browser.tabs()) == tabs_before  # its tab closed with it


@pytest.mark.parametrize(
    ("statements", "code", "frames", "error"),
    [
        (
            "print('before')\ndef check(n):\n    return 1 / n\n\ncheck(0)\n",
            1,
            [(5, "<module>"), (3, "check")],  # the lines of the input, as a script's
            {"error": "ZeroDivisionError: division by zero", "type": "ScriptError"},
        ),
        (
            "print('before')\nawait site.run_tool('demo-shop', 'get_prodct')\n",
            3,
            [(2, "<module>")],
            {"type": "UnknownToolError"},
        ),
    ],
    ids=["python-error", "ego-error"],
)
async def test_a_failed_piped_statement_stops_the_shell_as_a_script_would(
    tmp_path: Path,
    endpoint: str,
    statements: str,
    code: int,
    frames: list[tuple[int, str]],
    error: dict[str, str],
) -> None:
    result = await _shell(
        statements + "print('after')\n", ego_env(tmp_path / "profiles"), "--endpoint", endpoint
    )
    assert result.returncode == code, result
    assert result.stdout.splitlines() == ["before"]  # the statements after it did not run
    # Its own frames (the statement's, in <stdin>) and one error line, as `ego script` gives.
    reported = _assert_short_traceback(result, Path("<stdin>"), frames)
    assert {key: reported[key] for key in error} == error


@pytest.mark.parametrize(
    ("statements", "error"),
    [
        ("print('before')\nx = 1\nx +* 2\n", "SyntaxError: invalid syntax (line 3)"),
        (
            "print('before')\n\nif True:\n    y = (\n",
            "SyntaxError: the input ended inside a statement (line 3)",
        ),
    ],
    ids=["syntax-error", "unfinished"],
)
async def test_a_piped_statement_that_does_not_parse_is_named_by_its_line(
    tmp_path: Path, endpoint: str, statements: str, error: str
) -> None:
    result = await _shell(statements, ego_env(tmp_path / "profiles"), "--endpoint", endpoint)
    assert result.returncode == 1, result
    assert result.stdout.splitlines() == ["before"]
    assert json.loads(result.stderr.strip().splitlines()[-1])["error"] == error


async def test_the_shell_leaves_on_exit(tmp_path: Path, endpoint: str) -> None:
    result = await _shell(
        "print('before')\nexit()\nprint('after')\n",
        ego_env(tmp_path / "profiles"),
        "--endpoint",
        endpoint,
    )
    assert result.returncode == 0, result
    assert "before" in result.stdout
    assert "after" not in result.stdout
