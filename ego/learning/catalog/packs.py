"""Learning packs: sites shared as Python distributions, verified before they run.

A pack is a distribution (usually a wheel built by ``ego pack build``) that declares an entry
point in the group ``ego.learnings``. Its value is a dotted path to the folder that holds the
pack's site folders (``ego_pack_shop.learnings`` is ``<site-packages>/ego_pack_shop/learnings``).
ego never imports it: the folder is found from the distribution's own files, so nothing of a
pack runs before it is checked.

Installed packs form learnings roots after the workspace and before the bundled sites, one
per pack, ordered by distribution name (then entry point name): when two packs hold one site
id, the first by that order is used and the site is reported as shadowed, with a warning.

A pack's site is **verified** against the hashes its installer wrote (the distribution's
``RECORD``, read with :mod:`importlib.metadata`): every file the installer recorded under the
site folder must be there with the recorded SHA-256 and size, and no other file may be
there (Python's own ``__pycache__`` folders aside). The first check hashes every file; later
checks stat each file and folder and hash only what changed, so a site that stays as
installed costs one stat per file. A site that fails is invalid with a
:class:`~ego.errors.PackIntegrityError` naming each file; every other site keeps working.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import logging
import os
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Literal

from ...errors import PackIntegrityError, UnknownPackError

__all__ = [
    "ENTRY_POINT_GROUP",
    "Integrity",
    "Origin",
    "Pack",
    "canonical_name",
    "conflict_message",
    "find_pack",
    "installed_packs",
    "pack_conflicts",
]

logger = logging.getLogger("ego.packs")
# Logged for an application that configures logging; `ego sites` and `ego pack list` print
# the warning themselves, and every other command keeps its stderr to its own error line.
logger.addHandler(logging.NullHandler())

#: The entry point group a distribution declares to be a learning pack.
ENTRY_POINT_GROUP = "ego.learnings"

#: Folders whose content Python writes itself (compiled modules): neither recorded by every
#: installer nor a source of code ego runs (a Python tool is run from its ``.py`` file).
_SKIPPED_FOLDERS = frozenset({"__pycache__"})

Stamp = tuple[int, int, int, int]


def canonical_name(name: str) -> str:
    """A distribution name as packaging compares them: lower case, runs of ``-_.`` as ``-``."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class Origin:
    """Where a site comes from.

    Attributes:
        kind: ``workspace`` (the agent's own), ``pack`` (an installed pack), ``bundled``
            (ships with ego) or ``folder`` (a root given by path).
        pack: the pack's distribution name, for a pack.
        version: the pack's version, for a pack.
    """

    kind: Literal["workspace", "pack", "bundled", "folder"]
    pack: str | None = None
    version: str | None = None

    @property
    def label(self) -> str:
        """``workspace``, ``bundled``, ``folder`` or ``pack NAME VERSION``."""
        return f"pack {self.pack} {self.version}" if self.kind == "pack" else self.kind


@dataclass(frozen=True)
class RecordedFile:
    """One file of a site as the installer recorded it (hash ``None``: none recorded)."""

    algorithm: str | None
    digest: str | None
    size: int | None


@dataclass(eq=False)
class Pack:
    """An installed learning pack.

    Attributes:
        name: the distribution's name as its metadata spells it.
        version: the distribution's version.
        entry_point: the entry point's name.
        value: the entry point's value (a dotted path to the sites folder).
        root: the folder of the pack's site folders, or None when the pack is broken.
        problem: why ``root`` is None ("" when the pack is usable).
    """

    name: str
    version: str
    entry_point: str
    value: str
    root: Path | None
    problem: str = ""
    _distribution: importlib.metadata.Distribution | None = field(default=None, repr=False)
    _recorded: dict[str, dict[str, RecordedFile]] | None = field(default=None, repr=False)

    @property
    def origin(self) -> Origin:
        return Origin("pack", self.name, self.version)

    @property
    def label(self) -> str:
        return self.origin.label

    def site_ids(self) -> list[str]:
        """The site folders in the pack's root, sorted (the same names a root lists)."""
        if self.root is None:
            return []
        try:
            children = list(os.scandir(self.root))
        except OSError:
            return []
        return sorted(
            child.name
            for child in children
            if not child.name.startswith(("_", ".")) and child.is_dir()
        )

    def recorded(self, site_id: str) -> dict[str, RecordedFile]:
        """The files the installer recorded under ``site_id``'s folder, by path relative to
        it (``/`` separated), ``__pycache__`` left out."""
        if self._recorded is None:
            self._recorded = self._read_record()
        return self._recorded.get(site_id, {})

    def _read_record(self) -> dict[str, dict[str, RecordedFile]]:
        found: dict[str, dict[str, RecordedFile]] = {}
        distribution = self._distribution
        if distribution is None or self.root is None:
            return found
        base = Path(str(distribution.locate_file(""))).resolve()
        try:
            prefix = PurePosixPath(self.root.resolve().relative_to(base).as_posix())
        except ValueError:
            return found
        for recorded in distribution.files or ():
            path = PurePosixPath(recorded.as_posix())
            try:
                inside = path.relative_to(prefix)
            except ValueError:
                continue
            parts = inside.parts
            if len(parts) < 2 or _SKIPPED_FOLDERS.intersection(parts):
                continue
            file_hash = recorded.hash
            found.setdefault(parts[0], {})[PurePosixPath(*parts[1:]).as_posix()] = RecordedFile(
                file_hash.mode if file_hash is not None else None,
                file_hash.value if file_hash is not None else None,
                recorded.size,
            )
        return found


def _pack(entry_point: importlib.metadata.EntryPoint) -> Pack | None:
    distribution = entry_point.dist
    if distribution is None:
        return None
    name = distribution.metadata["Name"] or entry_point.name
    version = distribution.version
    value = entry_point.value.strip()

    def broken(problem: str) -> Pack:
        return Pack(name, version, entry_point.name, value, None, problem, distribution)

    if entry_point.attr or not re.fullmatch(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*", value):
        return broken(
            f"its {ENTRY_POINT_GROUP} entry point {entry_point.name} = {value!r} must be a "
            "dotted path to the folder of its sites (such as ego_pack_shop.learnings)"
        )
    folder = Path(str(distribution.locate_file(value.replace(".", "/"))))
    if not folder.is_dir():
        return broken(f"its sites folder {folder} (entry point {value!r}) is not a folder")
    return Pack(name, version, entry_point.name, value, folder, "", distribution)


# Discovery is cached per process, keyed by the import path and what its folders hold: an
# install or uninstall changes a site-packages folder's modification time.
_discovered: tuple[tuple[tuple[str, int], ...], list[Pack]] | None = None


def _path_key() -> tuple[tuple[str, int], ...]:
    key = []
    for entry in sys.path:
        try:
            key.append((entry, os.stat(entry or ".").st_mtime_ns))
        except OSError:
            key.append((entry, -1))
    return tuple(key)


def installed_packs(path: Sequence[str] | None = None) -> list[Pack]:
    """Every installed learning pack, ordered by distribution name, then entry point name.

    That order decides which pack's copy of a site is used when two packs hold one site id
    (the first); :func:`pack_conflicts` lists such ids, and a warning is logged on the
    ``ego.packs`` logger when packs are found.

    Args:
        path: the folders to look in (another environment's site-packages); by default
            this interpreter's import path.
    """
    global _discovered
    if path is not None:
        found = [
            entry_point
            for distribution in importlib.metadata.distributions(path=list(path))
            for entry_point in distribution.entry_points
            if entry_point.group == ENTRY_POINT_GROUP
        ]
        return _ordered(found)
    key = _path_key()
    if _discovered is not None and _discovered[0] == key:
        return list(_discovered[1])
    packs = _ordered(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))
    _discovered = (key, packs)
    return list(packs)


def _ordered(entry_points: Iterable[importlib.metadata.EntryPoint]) -> list[Pack]:
    packs = [pack for pack in map(_pack, entry_points) if pack is not None]
    packs.sort(key=lambda pack: (canonical_name(pack.name), pack.entry_point))
    for site_id, holders in pack_conflicts(packs).items():
        logger.warning(conflict_message(site_id, [pack.label for pack in holders]))
    return packs


def pack_conflicts(packs: Iterable[Pack]) -> dict[str, list[Pack]]:
    """The site ids that more than one of ``packs`` holds, each with the packs in search
    order (the first is the one used)."""
    holders: dict[str, list[Pack]] = {}
    for pack in packs:
        for site_id in pack.site_ids():
            holders.setdefault(site_id, []).append(pack)
    return {site_id: found for site_id, found in sorted(holders.items()) if len(found) > 1}


def conflict_message(site_id: str, labels: list[str]) -> str:
    """The warning for a site id that several packs hold (``labels``: theirs, the one used
    first)."""
    return (
        f"site {site_id!r} is in more than one pack: {labels[0]} is used, "
        f"{', '.join(labels[1:])} "
        "shadowed (packs are searched by name); uninstall one, or copy the site into the "
        "workspace to choose"
    )


def find_pack(name: str, packs: Iterable[Pack] | None = None) -> Pack:
    """The installed pack whose distribution (or entry point) name is ``name``.

    Args:
        name: compared as packaging compares names (case, ``-``, ``_`` and ``.`` alike).
        packs: where to look; by default :func:`installed_packs`.

    Raises:
        UnknownPackError: no such pack (the message lists the installed ones).
    """
    packs = installed_packs() if packs is None else list(packs)
    wanted = canonical_name(name)
    for pack in packs:
        if wanted in (canonical_name(pack.name), canonical_name(pack.entry_point)):
            return pack
    known = ", ".join(f"{pack.name} {pack.version}" for pack in packs) or "none"
    raise UnknownPackError(
        f"no learning pack {name!r} is installed (installed: {known}); install it with "
        "pip install NAME, or see ego pack list"
    )


def _stamp(path: str) -> Stamp:
    try:
        stat = os.stat(path)
    except OSError:
        return (-1, -1, -1, -1)
    return (stat.st_mtime_ns, stat.st_size, stat.st_ino, stat.st_ctime_ns)


@dataclass
class _Verified:
    """What the last check of one site saw: its folders' and files' stamps, and the verdict."""

    folders: dict[str, Stamp]
    files: dict[str, Stamp]
    good: set[str]
    problems: tuple[str, ...]


class Integrity:
    """Checks pack sites against their RECORD, hashing a file only when its stat changed."""

    def __init__(self) -> None:
        self._seen: dict[Path, _Verified] = {}
        #: How many files were hashed (for tests: a second check of an unchanged site hashes
        #: nothing).
        self.hashed = 0

    def problems(self, pack: Pack, site_id: str) -> tuple[str, ...]:
        """What is wrong with ``site_id`` of ``pack``: one line per file, empty when it is as
        installed. The same tuple object comes back while nothing changed.

        Args:
            pack: the installed pack.
            site_id: a site folder in the pack's root.
        """
        assert pack.root is not None
        directory = pack.root / site_id
        seen = self._seen.get(directory)
        if seen is not None and all(
            _stamp(os.path.join(directory, name)) == stamp for name, stamp in seen.folders.items()
        ):
            files = seen.files
            if all(_stamp(os.path.join(directory, name)) == files[name] for name in files):
                return seen.problems
        return self._check(pack, site_id, directory, seen)

    def folders(self, directory: Path) -> list[str]:
        """The folders of a checked site (to watch: a change of any file shows in its folder)."""
        seen = self._seen.get(directory)
        return [os.path.join(directory, name) for name in seen.folders] if seen else []

    def _check(
        self, pack: Pack, site_id: str, directory: Path, seen: _Verified | None
    ) -> tuple[str, ...]:
        folders, files, extra = _walk(directory)
        recorded = pack.recorded(site_id)
        good: set[str] = set()
        problems: list[str] = []
        for name in sorted(set(recorded) | set(files) | set(extra)):
            expected = recorded.get(name)
            if expected is None:
                problems.append(f"{name} was added after the install (not in the pack's RECORD)")
                continue
            stamp = files.get(name)
            if stamp is None:
                problems.append(
                    f"{name} is missing (the pack's RECORD lists it)"
                    if name not in extra
                    else f"{name} is not a regular file (the pack's RECORD lists a file)"
                )
                continue
            if seen is not None and name in seen.good and seen.files.get(name) == stamp:
                good.add(name)
                continue
            problem = self._compare(directory / name, name, expected)
            if problem:
                problems.append(problem)
            else:
                good.add(name)
        verdict = tuple(problems)
        if seen is not None and seen.problems == verdict:
            verdict = seen.problems  # the same object: callers keep what they built on it
        self._seen[directory] = _Verified(folders, files, good, verdict)
        return verdict

    def _compare(self, file: Path, name: str, expected: RecordedFile) -> str:
        if expected.algorithm is None or expected.digest is None:
            return f"{name} has no hash in the pack's RECORD, so it cannot be verified"
        if expected.algorithm not in hashlib.algorithms_guaranteed:
            return f"{name} is recorded with an unknown hash ({expected.algorithm})"
        self.hashed += 1
        digest = hashlib.new(expected.algorithm)
        try:
            with open(file, "rb") as handle:
                for chunk in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(chunk)
        except OSError as exc:
            return f"{name} cannot be read: {exc.strerror or exc}"
        encoded = base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode()
        if encoded != expected.digest:
            return (
                f"{name} was changed after the install (its {expected.algorithm} differs from "
                "the pack's RECORD)"
            )
        return ""

    def error(self, pack: Pack, site_id: str, problems: tuple[str, ...]) -> PackIntegrityError:
        """The site's error for ``problems`` (from :meth:`problems`)."""
        return PackIntegrityError(
            f"site {site_id!r} of {pack.label} differs from what its installer recorded: "
            f"{problems[0]}"
            + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else "")
            + f"; reinstall it: pip install --force-reinstall '{pack.name}=={pack.version}'",
            site_id=site_id,
            problems=list(problems),
        )


def _walk(directory: Path) -> tuple[dict[str, Stamp], dict[str, Stamp], set[str]]:
    """A site folder's folders and regular files (``/`` separated, relative to it) with their
    stamps, and what is neither (links to folders, sockets, ...)."""
    folders: dict[str, Stamp] = {".": _stamp(str(directory))}
    files: dict[str, Stamp] = {}
    extra: set[str] = set()
    pending = [("", str(directory))]
    while pending:
        relative, path = pending.pop()
        try:
            entries = list(os.scandir(path))
        except OSError:
            continue
        for entry in entries:
            name = f"{relative}{entry.name}"
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in _SKIPPED_FOLDERS:
                        folders[name] = _stamp(entry.path)
                        pending.append((name + "/", entry.path))
                elif entry.is_file(follow_symlinks=False):
                    files[name] = _stamp(entry.path)
                else:
                    extra.add(name)
            except OSError:
                extra.add(name)
    return folders, files, extra
