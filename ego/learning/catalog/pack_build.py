"""Building a learning pack: sites made into a wheel by a standard build backend.

``build_pack(["shop"], name="shop-tools", version="1.0")`` copies each site folder (its
manifest, notes, tools and offline cases in ``tests/``) into a fresh project in a temporary
folder, writes a ``pyproject.toml`` that declares the ``ego.learnings`` entry point, and has
hatchling build the wheel through :mod:`build` (PEP 517), in this interpreter, with no
network. The wheel is an ordinary distribution: ``pip install`` installs it (and writes the
RECORD of hashes that :mod:`.packs` verifies), ``twine upload`` publishes it.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import PackBuildError
from .manifest import Manifest
from .packs import ENTRY_POINT_GROUP, canonical_name
from .registry import Learnings
from .validate import validate_site

__all__ = ["BuiltPack", "build_pack", "package_name"]

#: A distribution name as PEP 508 allows it.
_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?")


@dataclass(frozen=True)
class BuiltPack:
    """A built pack.

    Attributes:
        wheel: the wheel file.
        name: the distribution name.
        version: its version, normalised.
        sites: the site ids it holds.
        files: how many files of those sites it holds.
    """

    wheel: Path
    name: str
    version: str
    sites: list[str]
    files: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "wheel": str(self.wheel),
            "name": self.name,
            "version": self.version,
            "sites": self.sites,
            "files": self.files,
        }


def package_name(name: str) -> str:
    """The import package a pack named ``name`` installs: ``ego_pack_<name>``."""
    return "ego_pack_" + canonical_name(name).replace("-", "_")


def _ignored(folder: str, names: list[str]) -> set[str]:
    # Hidden folders hold a site's saved history and locks; compiled files are Python's own.
    return {
        name
        for name in names
        if name.startswith(".") or name == "__pycache__" or name.endswith((".pyc", ".pyo"))
    }


def build_pack(
    site_ids: Sequence[str],
    *,
    name: str,
    version: str,
    out: str | Path = "dist",
    learnings: Learnings | None = None,
) -> BuiltPack:
    """Build a wheel of ``site_ids`` named ``name`` at ``version`` into ``out``.

    Each site is taken from where ``learnings`` finds it (the workspace first, then packs,
    then the bundled sites) and checked as ``ego validate`` checks it first.

    Args:
        site_ids: the sites to pack (at least one).
        name: the distribution's name (``shop-tools``).
        version: its version (``1.0``, ``2.1.3``; PEP 440).
        out: the folder the wheel is written to (made when missing).
        learnings: where the sites are; by default the usual roots.

    Raises:
        PackBuildError: no site, a name or version that is not allowed, a site that
            ``ego validate`` rejects (the message names the problem), or the build failed.
        UnknownSiteError: a site is in no root.
    """
    from packaging.version import InvalidVersion, Version

    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise PackBuildError(
            f"{name!r} is not a distribution name: pass name= letters, digits and -_. "
            "(starting and ending with a letter or digit), such as 'shop-tools'"
        )
    try:
        normalised = str(Version(version))
    except (InvalidVersion, TypeError):
        raise PackBuildError(
            f"{version!r} is not a version: pass version= a PEP 440 version such as '1.0.0'"
        ) from None
    chosen = list(dict.fromkeys(site_ids))
    if not chosen:
        raise PackBuildError("a pack needs at least one site: name the sites to put in it")
    learnings = learnings if learnings is not None else Learnings()
    entries = [learnings.find(site_id) for site_id in chosen]
    manifests: list[Manifest] = []
    for entry in entries:
        problems = [problem for problem in validate_site(entry) if not problem.warning]
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise PackBuildError(
                f"site {entry.site_id!r} ({entry.directory}) is invalid: {problems[0]}{more}; "
                f"fix it (ego validate {entry.directory} lists every problem) and build again"
            )
        manifests.append(entry.require())
    package = package_name(name)
    target = Path(out).expanduser()
    with tempfile.TemporaryDirectory(prefix="ego-pack-") as temporary:
        project = Path(temporary)
        sites_folder = project / package / "learnings"
        sites_folder.mkdir(parents=True)
        (project / package / "__init__.py").write_text(
            f'"""Learnings for ego ({", ".join(chosen)}): a pack built by `ego pack build`."""\n',
            encoding="utf-8",
        )
        files = 0
        for entry in entries:
            copied = shutil.copytree(entry.directory, sites_folder / entry.site_id, ignore=_ignored)
            files += sum(1 for path in Path(copied).rglob("*") if path.is_file())
        (project / "README.md").write_text(_readme(name, manifests), encoding="utf-8")
        (project / "pyproject.toml").write_text(
            _pyproject(name, normalised, package, chosen), encoding="utf-8"
        )
        wheel = _build(project, target)
    return BuiltPack(wheel, name, normalised, chosen, files)


def _build(project: Path, out: Path) -> Path:
    """Have the project's backend build its wheel into ``out``, in this interpreter."""
    from build import BuildBackendException, ProjectBuilder
    from pyproject_hooks import quiet_subprocess_runner

    builder = ProjectBuilder(
        project, python_executable=sys.executable, runner=quiet_subprocess_runner
    )
    try:
        out.mkdir(parents=True, exist_ok=True)
        return Path(builder.build("wheel", out))
    except BuildBackendException as exc:
        detail = " ".join(str(exc.exception or exc).split())[:300]
        raise PackBuildError(
            f"the build backend (hatchling) failed: {detail}; check that hatchling is "
            "installed beside ego (pip install hatchling)"
        ) from None
    except OSError as exc:
        raise PackBuildError(f"cannot write the wheel into {out}: {exc}") from None


def _toml(text: str) -> str:
    # A JSON string is a TOML basic string (the same escapes).
    return json.dumps(text)


def _pyproject(name: str, version: str, package: str, sites: list[str]) -> str:
    keywords = ", ".join(_toml(word) for word in ["ego-learnings", *sites])
    return (
        "[build-system]\n"
        'requires = ["hatchling>=1.26"]\n'
        'build-backend = "hatchling.build"\n\n'
        "[project]\n"
        f"name = {_toml(name)}\n"
        f"version = {_toml(version)}\n"
        f"description = {_toml('Learnings for ego: ' + ', '.join(sites))}\n"
        'readme = "README.md"\n'
        'requires-python = ">=3.11"\n'
        f"keywords = [{keywords}]\n\n"
        f"[project.entry-points.{_toml(ENTRY_POINT_GROUP)}]\n"
        f"{_toml(canonical_name(name))} = {_toml(package + '.learnings')}\n\n"
        "[tool.hatch.build.targets.wheel]\n"
        f"only-include = [{_toml(package)}]\n"
    )


def _readme(name: str, manifests: list[Manifest]) -> str:
    lines = [
        f"# {name}",
        "",
        "Learnings for ego, built by `ego pack build`: install this next to ego and `ego sites`",
        "lists its sites; `ego pack verify` checks them against what the installer recorded.",
        "",
    ]
    for manifest in manifests:
        tools = sorted([*manifest.browser_tools, *manifest.python_tools])
        lines.append(f"- **{manifest.id}** ({manifest.name}): {', '.join(manifest.domains)}")
        if tools:
            lines.append(f"  tools: {', '.join(tools)}")
    return "\n".join(lines) + "\n"
