"""A command that opens a window, on a machine without a display: one line that says so and
names the way through (``ego login``, ``ego launch --headed [--detach]``, ``ego run
--headed``, ``ego mcp --headed``), at once; and when ``$DISPLAY`` names no server, the same
line once Chrome failed, from the background ``ego launch`` of ``--detach`` too."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.commands import ego_env, ego_sync, state_file


def _no_display(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = ego_env(tmp_path / "profiles", **extra)
    for name in ("DISPLAY", "WAYLAND_DISPLAY"):
        env.pop(name, None)
    env.update(extra)
    return env


@pytest.mark.parametrize(
    ("command", "fix"),
    [
        (("login", "demo-shop", "--profile", "nodisplay"), "ego login SITE --headless"),
        (("launch", "--headed"), "xvfb-run -a ego launch --headed"),
        (("launch", "--headed", "--detach"), "xvfb-run -a ego launch --headed"),
        (("run", "demo-shop", "get_cart", "--headed"), "drop --headed"),
        (("mcp", "--headed"), "drop --headed"),
    ],
    ids=" ".join,
)
def test_a_window_without_a_display_is_one_line_naming_the_way_through(
    tmp_path: Path, command: tuple[str, ...], fix: str
) -> None:
    result = ego_sync(*command, "--no-json", env=_no_display(tmp_path), cwd=tmp_path, timeout=60)
    assert result.returncode == 4, result
    line = result.error_line()
    assert line.startswith("ego: ChromeLaunchError: "), line
    assert "this machine has no display for one ($DISPLAY is not set)" in line
    assert fix in line
    assert not state_file(_no_display(tmp_path)).exists()


def test_login_without_a_display_names_every_way_to_log_in(tmp_path: Path) -> None:
    result = ego_sync("login", "demo-shop", env=_no_display(tmp_path), cwd=tmp_path, timeout=60)
    assert result.returncode == 4, result
    error = result.json() if result.stdout.strip() else None
    text = result.stderr + result.stdout
    assert "--endpoint http://HOST:PORT" in text
    assert "--save-state FILE" in text
    assert "--storage-state FILE" in text
    assert error is None or error.get("type") == "ChromeLaunchError"


@pytest.mark.chrome  # a headed Chrome starts, and fails for want of its display
def test_launch_headed_detach_relays_chromes_own_no_display_failure(tmp_path: Path) -> None:
    env = _no_display(tmp_path, DISPLAY=":97")
    result = ego_sync("launch", "--headed", "--detach", "--no-json", env=env, cwd=tmp_path)
    assert result.returncode == 4, result
    line = result.error_line()
    assert "Chrome found no display for it (DISPLAY=':97')" in line, result
    assert "did not start within" not in line
    assert not state_file(env).exists()
