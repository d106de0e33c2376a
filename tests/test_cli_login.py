"""``ego login`` on a machine without a display says how to log in instead."""

from __future__ import annotations

from pathlib import Path

import pytest

from .cli_helpers import ego_env, ego_sync

pytestmark = pytest.mark.chrome  # it starts (a failing) Chrome


def test_login_without_a_display_says_how_to_log_in(tmp_path: Path) -> None:
    env = ego_env(tmp_path / "profiles")
    for name in ("DISPLAY", "WAYLAND_DISPLAY"):
        env.pop(name, None)
    result = ego_sync("login", "demo-shop", "--profile", "nodisplay", env=env, timeout=90)
    assert result.returncode == 4, result
    error = result.json() if result.stdout.strip() else None
    text = result.stderr + result.stdout
    assert "no display for a window" in text, text
    assert "ego launch --headed --profile NAME" in text
    assert "--endpoint http://HOST:PORT" in text
    assert "xvfb-run" in text
    assert error is None or error.get("type") == "ChromeLaunchError"
