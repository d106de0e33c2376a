"""Where ego keeps things on disk: profiles, state, the bundled learnings, the workspace.

Every place is chosen the same way from any current directory, so a login made from one
folder is there when ego runs from another. ego's *home* is

1. ``$EGO_HOME`` when set, else
2. the checkout, when ego runs from a source checkout (an editable install included), else
3. the user data directory (``platformdirs``: ``~/.local/share/ego`` on Linux,
   ``~/Library/Application Support/ego`` on macOS, ``%LOCALAPPDATA%\\ego`` on Windows).

Persistent Chrome profiles live in ``<home>/chrome_profiles`` (``$EGO_PROFILES_DIR`` wins) and
ego's own state (what should survive from one command to the next) in ``<home>/state``
(``$EGO_STATE_DIR`` wins). There is no default workspace: saving a learning needs
``$EGO_WORKSPACE``, ``--workspace`` or ``workspace=``, so ego never writes where nobody asked.
A leading ``~`` is expanded in every one of these paths. docs/install.md says the same for
users; ``ego doctor`` prints each place and where it comes from.

The bundled learnings/ and skills/ are found by :func:`bundled_root`: inside the package
(``ego/_bundled``) in an installed wheel, at the top of the checkout otherwise.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "HOME_ENV",
    "PROFILES_ENV",
    "STATE_ENV",
    "WORKSPACE_ENV",
    "Place",
    "bundled_root",
    "checkout_root",
    "expand",
    "home_dir",
    "places",
    "profiles_dir",
    "state_dir",
    "workspace_dir",
]

#: Environment variable naming ego's home: profiles and state go under it.
HOME_ENV = "EGO_HOME"
#: Environment variable naming the folder that holds persistent profiles (wins over the home).
PROFILES_ENV = "EGO_PROFILES_DIR"
#: Environment variable naming the folder of ego's state (wins over the home).
STATE_ENV = "EGO_STATE_DIR"
#: Environment variable naming the agent workspace; its ``learnings/`` is searched first.
WORKSPACE_ENV = "EGO_WORKSPACE"

_PACKAGE = Path(__file__).resolve().parent
#: Where a wheel puts the repository's learnings/ and skills/ (pyproject.toml maps them).
_WHEEL_BUNDLE = _PACKAGE / "_bundled"


@dataclass(frozen=True)
class Place:
    """A folder ego uses and why it is that one.

    Attributes:
        path: the folder (absolute; it may not exist yet), or None when nothing is set.
        source: what chose it, for people, to read after "from": ``$EGO_HOME``,
            ``the checkout``, ``the user data dir``, ...
    """

    path: Path | None
    source: str


def expand(path: str | os.PathLike[str]) -> Path:
    """``path`` as a Path with a leading ``~`` (or ``~user``) expanded.

    Args:
        path: a path as a user typed it.
    """
    return Path(os.path.expanduser(os.fspath(path)))


def _env_path(name: str) -> Path | None:
    # An empty variable counts as unset, as the shell's ``NAME= ego ...`` idiom means.
    value = os.environ.get(name)
    return expand(value).absolute() if value else None


def checkout_root() -> Path | None:
    """The source checkout ego runs from, or None for an installed package.

    A checkout is the folder above the ``ego`` package when it holds ``pyproject.toml`` and
    ``learnings/``; an installed package sits in ``site-packages``, which holds neither.
    """
    top = _PACKAGE.parent
    if (top / "pyproject.toml").is_file() and (top / "learnings").is_dir():
        return top
    return None


def bundled_root() -> Path:
    """The folder holding the learnings/ and skills/ that ship with ego.

    The first of ``ego/_bundled`` (where a wheel puts them) and the checkout's top (where
    they are edited) that exists; the wheel's path when neither does, so an incomplete
    install shows no sites rather than another folder's.
    """
    if _WHEEL_BUNDLE.is_dir():
        return _WHEEL_BUNDLE
    checkout = checkout_root()
    return checkout if checkout is not None else _WHEEL_BUNDLE


def _home() -> Place:
    configured = _env_path(HOME_ENV)
    if configured is not None:
        return Place(configured, f"${HOME_ENV}")
    checkout = checkout_root()
    if checkout is not None:
        return Place(checkout, "the checkout")
    # Imported here: only an installed ego without $EGO_HOME needs it.
    import platformdirs

    return Place(Path(platformdirs.user_data_dir("ego", appauthor=False)), "the user data dir")


def _under_home(env: str, name: str) -> Place:
    configured = _env_path(env)
    if configured is not None:
        return Place(configured, f"${env}")
    home = _home()
    assert home.path is not None
    return Place(home.path / name, home.source)


def home_dir() -> Path:
    """ego's home: ``$EGO_HOME``, else the checkout, else the user data directory."""
    place = _home()
    assert place.path is not None
    return place.path


def profiles_dir() -> Path:
    """The folder of persistent Chrome profiles (it may not exist yet).

    ``$EGO_PROFILES_DIR``, else ``<home>/chrome_profiles``.
    """
    place = _under_home(PROFILES_ENV, "chrome_profiles")
    assert place.path is not None
    return place.path


def state_dir() -> Path:
    """The folder of ego's own state, kept from one command to the next.

    ``$EGO_STATE_DIR``, else ``<home>/state``. It may not exist yet: create it before writing.
    """
    place = _under_home(STATE_ENV, "state")
    assert place.path is not None
    return place.path


def _workspace(workspace: str | os.PathLike[str] | None) -> Place:
    if workspace is not None and os.fspath(workspace):
        return Place(expand(workspace).absolute(), "--workspace or workspace=")
    configured = _env_path(WORKSPACE_ENV)
    if configured is not None:
        return Place(configured, f"${WORKSPACE_ENV}")
    return Place(None, f"not set: ${WORKSPACE_ENV} or --workspace names one (saving needs it)")


def workspace_dir(workspace: str | os.PathLike[str] | None = None) -> Path | None:
    """The agent workspace: ``workspace`` when given, else ``$EGO_WORKSPACE``, else None.

    Args:
        workspace: an explicit workspace (``~`` expanded); empty counts as not given.
    """
    return _workspace(workspace).path


def places(workspace: str | os.PathLike[str] | None = None) -> dict[str, Place]:
    """Every place ego uses, by name, each with what chose it (what ``ego doctor`` prints).

    Names: ``home``, ``profiles``, ``state``, ``workspace`` (its path is None when unset),
    ``learnings`` and ``skills`` (the bundled ones).

    Args:
        workspace: the workspace given on the command line or to the API, if any.
    """
    bundle = bundled_root()
    bundled_from = "the installed package" if bundle == _WHEEL_BUNDLE else "the checkout"
    return {
        "home": _home(),
        "profiles": _under_home(PROFILES_ENV, "chrome_profiles"),
        "state": _under_home(STATE_ENV, "state"),
        "workspace": _workspace(workspace),
        "learnings": Place(bundle / "learnings", bundled_from),
        "skills": Place(bundle / "skills", bundled_from),
    }
