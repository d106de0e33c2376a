"""Where ego keeps things: the same places from any directory, chosen by ego.places, with ``~``
expanded wherever a path is taken.

The wheel's side (the bundled learnings found inside an installed package) is in
test_packaging.py.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import platformdirs
import pytest

import ego
import ego.places as places_module
from ego.learning.catalog.registry import Learnings, project_learnings_dir
from ego.places import (
    HOME_ENV,
    PROFILES_ENV,
    STATE_ENV,
    WORKSPACE_ENV,
    bundled_root,
    checkout_root,
    home_dir,
    places,
    profiles_dir,
    state_dir,
    workspace_dir,
)
from ego.protocol.chrome import CHROME_ENV, find_chrome, profile_dir, profiles_root
from ego.skills.catalog import skills_roots
from ego.skills.portable import export_skill, import_skill
from tests.helpers.browsers import websocket_url
from tests.helpers.commands import ego_sync
from tests.helpers.paths import PYTHON_EGO, ROOT

#: The variables that choose a place; each test starts with none of them set.
PLACE_VARS = (HOME_ENV, PROFILES_ENV, STATE_ENV, WORKSPACE_ENV)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh $HOME (so ``~`` means it) and no place variable set."""
    fake = tmp_path / "home"
    fake.mkdir()
    monkeypatch.setenv("HOME", str(fake))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    for name in PLACE_VARS:
        monkeypatch.delenv(name, raising=False)
    return fake


def place_env(**extra: str) -> dict[str, str]:
    """This run's environment without the place variables (the test run's EGO_STATE_DIR is
    kept: a doctor never attaches to a Chrome a developer kept), plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in (HOME_ENV, PROFILES_ENV)}
    env.pop(WORKSPACE_ENV, None)
    env.pop("EGO_ENDPOINT", None)
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


# -- the same place from any directory ---------------------------------------------------------


def test_a_checkout_keeps_everything_in_the_checkout_from_any_directory(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = []
    for folder in (Path("/"), tmp_path, ROOT / "tests"):
        monkeypatch.chdir(folder)
        seen.append((home_dir(), profiles_dir(), state_dir(), profiles_root(), bundled_root()))
    assert seen == [seen[0]] * 3
    assert checkout_root() == ROOT
    assert seen[0] == (
        ROOT,
        ROOT / "chrome_profiles",
        ROOT / "state",
        ROOT / "chrome_profiles",
        ROOT,
    )
    found = places()
    assert {name: place.source for name, place in found.items()} == {
        "home": "the checkout",
        "profiles": "the checkout",
        "state": "the checkout",
        "workspace": found["workspace"].source,
        "learnings": "the checkout",
        "skills": "the checkout",
    }
    assert found["workspace"].path is None
    assert WORKSPACE_ENV in found["workspace"].source


def test_an_installed_ego_keeps_profiles_and_state_in_the_user_data_dir(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(places_module, "checkout_root", lambda: None)
    expected = Path(platformdirs.user_data_dir("ego", appauthor=False))
    if sys.platform.startswith("linux"):
        assert expected == home / ".local" / "share" / "ego"
    assert home_dir() == expected
    assert profiles_dir() == expected / "chrome_profiles"
    assert state_dir() == expected / "state"
    assert places()["profiles"].source == "the user data dir"


def test_environment_variables_choose_the_places_and_expand_the_tilde(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(HOME_ENV, "~/ego-home")
    assert home_dir() == home / "ego-home"
    assert profiles_dir() == home / "ego-home" / "chrome_profiles"
    assert state_dir() == home / "ego-home" / "state"
    assert places()["state"].source == "$EGO_HOME"
    monkeypatch.setenv(PROFILES_ENV, "~/profiles")
    monkeypatch.setenv(STATE_ENV, "~/state")
    assert (profiles_dir(), state_dir()) == (home / "profiles", home / "state")
    assert profile_dir("work") == home / "profiles" / "work"
    assert places()["profiles"].source == "$EGO_PROFILES_DIR"
    assert places()["state"].source == "$EGO_STATE_DIR"
    # An empty variable is unset (``EGO_HOME= ego ...``).
    monkeypatch.setenv(HOME_ENV, "")
    assert home_dir() == ROOT


def test_the_bundled_learnings_and_skills_are_found_by_one_function(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert project_learnings_dir() == bundled_root() / "learnings" == ROOT / "learnings"
    assert skills_roots(Learnings()) == [ROOT / "skills"]
    # An installed wheel has them inside the package; that copy wins wherever it exists.
    bundle = tmp_path / "ego" / "_bundled"
    (bundle / "learnings").mkdir(parents=True)
    monkeypatch.setattr(places_module, "_WHEEL_BUNDLE", bundle)
    assert project_learnings_dir() == bundle / "learnings"
    assert skills_roots(Learnings()) == [bundle / "skills"]
    assert places()["learnings"].source == "the installed package"


# -- ~ wherever a path is taken ----------------------------------------------------------------


def test_learnings_expand_the_tilde_in_every_root(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert Learnings(workspace="~/agent").roots == [
        home / "agent" / "learnings",
        ROOT / "learnings",
    ]
    assert Learnings(project="~/proj").roots == [home / "proj"]
    assert Learnings(roots=["~/a", Path("~/b")]).roots == [home / "a", home / "b"]
    monkeypatch.setenv(WORKSPACE_ENV, "~/agent")
    assert Learnings().roots[0] == home / "agent" / "learnings"
    assert workspace_dir() == home / "agent"
    assert workspace_dir("~/other") == home / "other"


async def test_launch_workspace_with_a_tilde_saves_under_home(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ported_browser: ego.Browser
) -> None:
    """docs/learning-loop.md's ``ego.launch(workspace="~/agent")``: no ``./~`` folder."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    async with ego.connect(websocket_url(ported_browser), workspace="~/agent") as attached:
        assert attached.site.learnings.roots[0] == home / "agent" / "learnings"
        await attached.site.save_note("demo-shop", "tilde", "# Tilde\n\nSaved under ~.\n")
    assert (home / "agent" / "learnings" / "demo-shop" / "notes" / "tilde.md").is_file()
    assert list(cwd.iterdir()) == []


@pytest.mark.chrome
async def test_user_data_dir_with_a_tilde_is_under_home(home: Path) -> None:
    async with ego.launch(user_data_dir="~/profile") as launched:
        assert launched.process is not None
        assert launched.process.user_data_dir == home / "profile"
    assert (home / "profile").is_dir()


def test_chrome_binary_with_a_tilde(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = home / "bin" / "chrome"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv(CHROME_ENV, "~/bin/chrome")
    assert find_chrome() == str(fake)


def test_skill_import_expands_the_tilde(home: Path) -> None:
    (home / "get-orders.SKILL.md").write_text(export_skill("demo-shop/get_orders"))
    folder = import_skill("~/get-orders.SKILL.md", "~/agent")
    assert folder == home / "agent" / "skills" / "shop.localhost" / "get-orders"
    assert (folder / "SKILL.md").is_file()


# -- ego doctor says where each place is and where it comes from -------------------------------


@pytest.mark.chrome
def test_doctor_gives_the_same_profiles_place_from_any_directory(tmp_path: Path) -> None:
    reports = []
    for cwd in (Path("/"), tmp_path):
        result = ego_sync("doctor", "--json", env=place_env(), cwd=cwd, command=PYTHON_EGO)
        assert result.returncode == 0, result
        reports.append(result.json())
    first, second = reports
    assert first["profiles"] == second["profiles"] == str(ROOT / "chrome_profiles")
    assert first["places"] == second["places"]
    assert first["places"]["profiles"] == {
        "path": str(ROOT / "chrome_profiles"),
        "source": "the checkout",
    }
    assert first["places"]["learnings"]["path"] == str(ROOT / "learnings")

    home = tmp_path / "home"
    home.mkdir()
    moved = ego_sync(
        "doctor",
        "--json",
        env=place_env(HOME=str(home), EGO_HOME="~/ego"),
        cwd=Path("/"),
        command=PYTHON_EGO,
    )
    assert moved.returncode == 0, moved
    report = moved.json()
    assert report["profiles"] == str(home / "ego" / "chrome_profiles")
    assert report["places"]["home"] == {"path": str(home / "ego"), "source": "$EGO_HOME"}
    assert report["places"]["profiles"]["source"] == "$EGO_HOME"
