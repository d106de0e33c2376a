"""ego's wheel, built once per test session for every test that installs ego somewhere else
(tests/test_packaging.py, tests/test_packs.py).

The build backend comes from the package index, as for any ``pip wheel`` of a checkout. When
the session runs on several workers (``pytest -n``), the first worker that asks builds it
and the others wait for it and take the same file.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from filelock import FileLock

from tests.helpers.commands import ego_sync
from tests.helpers.paths import ROOT

#: Seconds the build may take (a cold package cache downloads the backend).
BUILD_TIMEOUT = 300


def _build(dist: Path) -> Path:
    """Build the wheel of this checkout into ``dist``; its path."""
    built = ego_sync(
        *("wheel", "-q", "--no-deps", "--disable-pip-version-check", "-w", str(dist), str(ROOT)),
        env=os.environ,
        timeout=BUILD_TIMEOUT,
        command=[sys.executable, "-m", "pip"],
        cwd=dist,
    )
    assert built.returncode == 0, built
    (wheel,) = dist.glob("ego-*.whl")
    return wheel


@pytest.fixture(scope="session")
def ego_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel of this checkout (``pip wheel --no-deps``), built once per session."""
    if "PYTEST_XDIST_WORKER" not in os.environ:  # one process: no other to share with
        return _build(tmp_path_factory.mktemp("ego-wheel"))
    # The workers' temporary folders share a parent: the wheel is built there, under a lock.
    dist = tmp_path_factory.getbasetemp().parent / "ego-wheel"
    with FileLock(str(dist) + ".lock", timeout=BUILD_TIMEOUT + 60):
        if dist.is_dir():
            (wheel,) = dist.glob("ego-*.whl")
            return wheel
        building = dist.with_name("ego-wheel-building")
        shutil.rmtree(building, ignore_errors=True)  # what a failed build left
        building.mkdir()
        wheel = _build(building)
        building.rename(dist)
        return dist / wheel.name
