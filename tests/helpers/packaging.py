"""Building and installing ego elsewhere: subprocesses run to a bound, fresh venvs, pip into
them."""

from __future__ import annotations

import sys
import sysconfig
from collections.abc import Mapping
from pathlib import Path

from tests.helpers.commands import Result, run_to_end
from tests.helpers.paths import ROOT

#: Seconds a build or an install may take (a cold package cache downloads the backend).
BUILD_TIMEOUT = 300


def run(
    argv: list[str],
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    timeout: float = BUILD_TIMEOUT,
) -> Result:
    """Run ``argv`` to completion; fail with its output when it overruns ``timeout``."""
    return run_to_end(argv, env=env, cwd=cwd, timeout=timeout)


def new_venv(folder: Path) -> Path:
    """A venv without pip (this interpreter's pip installs into it); its python."""
    made = run([sys.executable, "-m", "venv", "--without-pip", str(folder)], cwd=folder.parent)
    assert made.returncode == 0, made
    python = folder / "bin" / "python"
    assert python.exists(), made
    return python


def pip_into(python: Path, *args: str) -> None:
    """``pip install --no-deps ARGS`` into the venv of ``python``."""
    argv = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps"]
    installed = run([*argv, "--disable-pip-version-check", *args], cwd=ROOT)
    assert installed.returncode == 0, installed


def site_packages(python: Path) -> Path:
    """The site-packages folder of ``python``'s venv."""
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    where = run([str(python), "-c", code], cwd=python.parent)
    assert where.returncode == 0, where
    return Path(where.stdout.strip())


def lend_dependencies(python: Path) -> None:
    """Make this interpreter's installed packages importable in ``python``'s venv, after its
    own (so its ego is the wheel's)."""
    paths = dict.fromkeys(sysconfig.get_paths()[key] for key in ("purelib", "platlib"))
    (site_packages(python) / "_ego_test_deps.pth").write_text("\n".join(paths) + "\n")
