"""ego's wheel, built once per test session for every test that installs ego somewhere else
(tests/test_packaging.py, tests/test_packs.py).

The build backend comes from the package index, as for any ``pip wheel`` of a checkout.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.helpers.commands import ego_sync
from tests.helpers.paths import ROOT

#: Seconds the build may take (a cold package cache downloads the backend).
BUILD_TIMEOUT = 300


@pytest.fixture(scope="session")
def ego_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel of this checkout (``pip wheel --no-deps``), built once per session."""
    dist = tmp_path_factory.mktemp("ego-wheel")
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
