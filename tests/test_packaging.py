"""ego as installed software: a built wheel carries the bundled learnings and skills, and an
install of it in a fresh venv, run outside the checkout, finds them (doctor, sites, demo).

The wheel is built once per session (``ego_wheel`` in tests/wheel_fixture.py; the build
backend comes from the package index, as for any ``pip install``). The fresh venv takes ego
from the wheel only; its dependencies come from this interpreter's site-packages through a
.pth file, which adds that folder but not the editable install's own .pth, so nothing of the
checkout is importable there. .ci/run does the same with the dependencies installed from the
index.
"""

from __future__ import annotations

import fnmatch
import json
import os
import sys
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

import ego
from ego.learning.catalog.registry import Learnings
from ego.places import HOME_ENV, PROFILES_ENV, STATE_ENV, WORKSPACE_ENV
from ego.skills.catalog import catalog_for
from tests.helpers.commands import Result
from tests.helpers.packaging import lend_dependencies, new_venv, pip_into, run, site_packages
from tests.helpers.paths import ROOT

# Tests that start Chrome are marked `chrome` one by one (or through a browser fixture);
# the rest need none and run in the fast tier.


@dataclass(frozen=True)
class Installed:
    """A fresh venv with the built wheel in it, and a folder outside the checkout to run in."""

    wheel: Path
    python: Path
    site_packages: Path
    home: Path
    cwd: Path

    @property
    def ego(self) -> Path:
        return self.python.with_name("ego")

    def env(self) -> dict[str, str]:
        """A user's environment: a $HOME of its own, no ego place variables, no checkout."""
        env = {
            key: value
            for key, value in os.environ.items()
            if key not in {HOME_ENV, PROFILES_ENV, STATE_ENV, WORKSPACE_ENV, "EGO_ENDPOINT"}
            and key not in {"PYTHONPATH", "XDG_DATA_HOME", "VIRTUAL_ENV"}
        }
        env["HOME"] = str(self.home)
        env["PYTHONUNBUFFERED"] = "1"
        return env

    def ego_json(self, *args: str, timeout: float = 120) -> tuple[Result, object]:
        result = run(
            [str(self.ego), *args, "--json"], cwd=self.cwd, env=self.env(), timeout=timeout
        )
        try:
            return result, json.loads(result.stdout)
        except json.JSONDecodeError:
            raise AssertionError(f"stdout is not JSON:\n{result}") from None


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory, ego_wheel: Path) -> Installed:
    """The wheel (built once per session) installed alone into a fresh venv outside the
    checkout."""
    base = tmp_path_factory.mktemp("packaging")
    wheel = ego_wheel
    python = new_venv(base / "venv")
    pip_into(python, str(wheel))
    lend_dependencies(python)
    home, cwd = base / "home", base / "elsewhere"
    home.mkdir()
    cwd.mkdir()
    return Installed(wheel, python, site_packages(python), home, cwd)


def shipped_files(folder: str) -> set[str]:
    """The files of the checkout's ``folder`` that a wheel carries (what .gitignore keeps)."""
    ignored = [
        line.strip().rstrip("/")
        for line in (ROOT / ".gitignore").read_text().splitlines()
        if line.strip() and not line.startswith(("#", "!"))
    ]
    found = set()
    for path in (ROOT / folder).rglob("*"):
        relative = path.relative_to(ROOT)
        if path.is_file() and not any(
            fnmatch.fnmatch(part, pattern) for part in relative.parts for pattern in ignored
        ):
            found.add(relative.as_posix())
    return found


def test_the_wheel_carries_the_bundled_learnings_and_skills(installed: Installed) -> None:
    with zipfile.ZipFile(installed.wheel) as archive:
        names = set(archive.namelist())
    for folder in ("learnings", "skills"):
        expected = {f"ego/_bundled/{name}" for name in shipped_files(folder)}
        assert expected, folder
        assert expected <= names, sorted(expected - names)[:10]
    assert "ego/py.typed" in names
    assert not [name for name in names if "__pycache__" in name or name.endswith(".pyc")]


def test_the_version_is_written_once(installed: Installed) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"]
    assert project["project"]["dynamic"] == ["version"]
    with zipfile.ZipFile(installed.wheel) as archive:
        (metadata,) = [name for name in archive.namelist() if name.endswith(".dist-info/METADATA")]
        headers = archive.read(metadata).decode().split("\n\n", 1)[0].splitlines()
    assert f"Version: {ego.__version__}" in headers
    assert installed.wheel.name.startswith(f"ego-{ego.__version__}-")


def test_an_installed_ego_finds_its_learnings_outside_the_checkout(installed: Installed) -> None:
    probe = run(
        [
            str(installed.python),
            "-c",
            "import json, ego, ego.places as p, ego.learning.catalog.registry as r;"
            "print(json.dumps([ego.__file__, str(p.bundled_root()), str(p.checkout_root()),"
            " str(r.project_learnings_dir())]))",
        ],
        cwd=installed.cwd,
        env=installed.env(),
    )
    assert probe.returncode == 0, probe
    module, bundle, checkout, learnings = json.loads(probe.stdout)
    package = installed.site_packages / "ego"
    assert Path(module) == package / "__init__.py"
    assert Path(bundle) == package / "_bundled"
    assert checkout == "None"
    assert Path(learnings) == package / "_bundled" / "learnings"


@pytest.mark.chrome
def test_doctor_sites_and_demo_run_from_the_installed_wheel(installed: Installed) -> None:
    bundle = installed.site_packages / "ego" / "_bundled"
    result, doctor = installed.ego_json("doctor")
    assert result.returncode == 0, result
    assert isinstance(doctor, dict)
    assert doctor["starts"] is True
    assert doctor["learnings_roots"] == [str(bundle / "learnings")]
    data_dir = installed.home / ".local" / "share" / "ego"
    if sys.platform.startswith("linux"):
        assert doctor["profiles"] == str(data_dir / "chrome_profiles")
        assert doctor["places"]["state"]["path"] == str(data_dir / "state")
    assert doctor["places"]["profiles"]["source"] == "the user data dir"
    assert doctor["places"]["learnings"] == {
        "path": str(bundle / "learnings"),
        "source": "the installed package",
    }

    result, sites = installed.ego_json("sites")
    assert result.returncode == 0, result
    assert isinstance(sites, dict)
    checkout = Learnings(roots=[ROOT / "learnings"])
    assert sorted(site["site_id"] for site in sites["sites"]) == sorted(
        entry.site_id for entry in checkout.sites()
    )
    assert all(site["valid"] for site in sites["sites"]), sites
    assert sorted(skill["skill_id"] for skill in sites["skills"]) == sorted(
        entry.skill_id for entry in catalog_for(checkout).entries()
    )

    result, demo = installed.ego_json("demo", timeout=180)
    assert result.returncode == 0, result
    assert isinstance(demo, dict)
    assert demo["learn_context"]["matched"] is True
    assert demo["steps"], demo
    assert demo["steps"][0]["ok"] is True, demo["steps"][0]


def test_an_editable_install_finds_the_checkout(tmp_path: Path) -> None:
    """scripts/bootstrap's ``pip install -e .``: ego and its learnings come from the checkout."""
    python = new_venv(tmp_path / "venv")
    pip_into(python, "-e", str(ROOT))
    lend_dependencies(python)
    probe = run(
        [
            str(python),
            "-c",
            "import json, ego, ego.places as p;"
            "print(json.dumps([ego.__file__, str(p.bundled_root())]))",
        ],
        cwd=tmp_path,
    )
    assert probe.returncode == 0, probe
    module, bundle = json.loads(probe.stdout)
    assert Path(module) == ROOT / "ego" / "__init__.py"
    assert Path(bundle) == ROOT
