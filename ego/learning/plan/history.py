"""Saved versions of tools, and the atomic file writes that keep them.

When a saved tool is replaced, its previous source and manifest entry go to
``<site>/browser-tools/.history/<tool>/`` (a Python tool's to
``<site>/tools/.history/<tool>/``): ``<version>.js`` (``<version>.py``) holds the source and
``<version>.json`` the record (when it was saved and replaced, its hash, its whole manifest
entry). The version id is the UTC time it was replaced, ``20250102T030405.123456Z``, so ids
sort by age. The record is written last: a version without one is not listed. What the save
gate found when a source was saved (its offline cases and their results) is kept in
``cases/<hash>.json`` of the same folder, by the source's hash, so it stays with the version
when it is replaced and comes back when it is restored. A version ``ego heal`` promoted keeps
its provenance (what failed, what changed, which cases passed) the same way, in
``provenance/<hash>.json``.
:func:`list_versions` says for each version what changed from the one before it
(:func:`changed_fields`: the source, the args, the side effect, ...).

Every write here goes to a temporary file in the same folder which is then ``os.replace``'d
over the target, so a reader sees the old file or the new one, never half of one. A rewritten
file always gets a newer modification time than the file it replaces (bumped when the clock
did not move on), so :class:`~ego.learning.catalog.registry.Learnings`, which re-reads files when
their modification time or size changes, never keeps a stale copy. :func:`json_fields`
turns these records (and the save results built on them) into JSON-ready dicts.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path
from typing import Any

from ...errors import UnknownVersionError
from ..catalog.registry import Learnings
from .modes import file_mode

__all__ = [
    "HISTORY_DIR",
    "PYTHON_HISTORY_DIR",
    "ToolVersion",
    "archive_file",
    "changed_fields",
    "content_hash",
    "fsync_dir",
    "history_folder",
    "json_fields",
    "keep_cases",
    "keep_provenance",
    "list_versions",
    "load_version",
    "tool_kind",
    "write_atomic",
]

#: Where a site keeps the previous versions of its browser tools, relative to the site folder.
HISTORY_DIR = "browser-tools/.history"
#: Where it keeps those of its Python tools (drafted from page actions).
PYTHON_HISTORY_DIR = "tools/.history"
#: The suffixes a kept source may have: a browser tool's, a Python tool's.
_SOURCE_SUFFIXES = (".js", ".py")
#: The folder of a tool's history that keeps each saved source's gate results, by hash.
CASES_DIR = "cases"
#: The folder of a tool's history that keeps where a healed source came from, by hash.
PROVENANCE_DIR = "provenance"

_VERSION_ID = re.compile(r"^\d{8}T\d{6}\.\d{6}Z(?:-\d+)?$")
#: The order :func:`changed_fields` names an entry's keys in; other keys follow, sorted.
_ENTRY_ORDER = ("description", "args", "returns", "sideEffect", "auth", "timeout")


def content_hash(data: bytes) -> str:
    """The short hash ``history`` shows for a source: the first 12 hex digits of its SHA-256."""
    return hashlib.sha256(data).hexdigest()[:12]


def changed_fields(
    old: dict[str, Any] | None,
    new: dict[str, Any],
    old_hash: str | None,
    new_hash: str,
) -> tuple[str, ...]:
    """What differs between two versions of a tool: ``"source"``, then the entry's keys.

    ``path`` is not compared (a kept copy lives elsewhere). A key missing on one side and
    present on the other counts as changed. With no ``old`` entry (a new tool) everything
    ``new`` sets is named.

    Args:
        old, new: the manifest entries, older first.
        old_hash, new_hash: their sources' :func:`content_hash` (None: unknown, so changed).
    """
    before = old or {}
    keys = [k for k in _ENTRY_ORDER if k in before or k in new]
    keys += sorted((set(before) | set(new)) - set(_ENTRY_ORDER) - {"path"})
    changed = ["source"] if old_hash != new_hash else []
    changed += [k for k in keys if k not in before or k not in new or before[k] != new[k]]
    return tuple(changed)


def fsync_dir(folder: Path) -> None:
    """Flush ``folder``'s entries to disk, so a rename into it survives a crash."""
    # Makes the rename itself durable on POSIX; not possible (nor needed) everywhere.
    with contextlib.suppress(OSError, AttributeError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and ``os.replace``.

    The folder is created when missing. When ``path`` existed, the new file's modification
    time is made later than the old one's, so a reader caching by (mtime, size) sees the
    change even within one tick of a coarse file-system clock.

    Raises:
        OSError: the write or the rename failed; the target is unchanged and the temporary
            file is removed.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        before: os.stat_result | None = path.stat()
    except FileNotFoundError:
        before = None
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, file_mode())
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)
    if before is not None:
        _ensure_newer(path, before)


def json_fields(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """The ``dict_factory`` for :func:`dataclasses.asdict` that makes paths strings.

    The records a save returns (:class:`ToolVersion`, ``SavedTool``, ``SavedNote``) become
    JSON-ready this way for the CLI and MCP; every other value is already JSON data.
    """
    return {key: str(value) if isinstance(value, Path) else value for key, value in pairs}


def _ensure_newer(path: Path, before: os.stat_result) -> None:
    after = path.stat()
    # 1 microsecond, then whole seconds for file systems that round finer steps away.
    for step in (1_000, 1_000_000_000, 2_000_000_000):
        if after.st_mtime_ns > before.st_mtime_ns:
            return
        os.utime(path, ns=(after.st_atime_ns, before.st_mtime_ns + step))
        after = path.stat()


def history_folder(site_dir: Path, tool: str, kind: str = "browser") -> Path:
    """The folder holding ``tool``'s previous versions in ``site_dir`` (``kind``: the tool's,
    ``"browser"`` or ``"python"``)."""
    return site_dir / (PYTHON_HISTORY_DIR if kind == "python" else HISTORY_DIR) / tool


def keep_cases(site_dir: Path, tool: str, hash: str, record: dict[str, Any]) -> None:
    """Keep what the save gate found for the source whose :func:`content_hash` is ``hash``.

    Raises:
        OSError: the record cannot be written.
    """
    write_atomic(history_folder(site_dir, tool) / CASES_DIR / f"{hash}.json", _json_bytes(record))


def keep_provenance(
    site_dir: Path, tool: str, hash: str, record: dict[str, Any], kind: str = "browser"
) -> None:
    """Keep where the source whose :func:`content_hash` is ``hash`` came from (``ego heal``);
    ``kind`` is the tool's (``"browser"`` or ``"python"``).

    Raises:
        OSError: the record cannot be written.
    """
    folder = history_folder(site_dir, tool, kind) / PROVENANCE_DIR
    write_atomic(folder / f"{hash}.json", _json_bytes(record))


def _cases(folder: Path, hash: str, kind: str = CASES_DIR) -> dict[str, Any] | None:
    try:
        record = json.loads((folder / kind / f"{hash}.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return record if isinstance(record, dict) else None


def _iso(timestamp_ns: int) -> str:
    return datetime.fromtimestamp(timestamp_ns / 1e9, UTC).isoformat(timespec="seconds")


def _new_version_id(folder: Path) -> str:
    base = datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
    candidate, counter = base, 0
    while any(
        (folder / f"{candidate}{suffix}").exists() for suffix in (*_SOURCE_SUFFIXES, ".json")
    ):
        counter += 1
        candidate = f"{base}-{counter}"
    return candidate


@dataclass(frozen=True)
class ToolVersion:
    """One version of a tool: the current one or one kept in its history.

    Attributes:
        version: the id to pass to ``restore`` (the UTC time it was replaced), or
            ``"current"`` for the version the manifest uses now.
        current: True for the version in use.
        saved_at: when this version's source was written (ISO 8601, UTC).
        replaced_at: when it was replaced by a newer one (None for the current version).
        size: bytes of source.
        hash: the first 12 hex digits of the source's SHA-256.
        description: its manifest description.
        file: where its source is.
        entry: its whole manifest entry, as the manifest held it (args, side effect,
            returns, timeout, ...).
        changed: what changed from the version before it (the next older one), as
            :func:`changed_fields` names it; None for the oldest version listed, whose
            predecessor is not known.
        cases: the offline cases the save gate ran when this source was saved, with their
            results (``ran``, ``broken``, ``forced``), or None when none ran.
        provenance: for a version ``ego heal`` promoted: what failed, what changed, the
            endpoint proposed, the cases that passed; else None.
    """

    version: str
    current: bool
    saved_at: str
    replaced_at: str | None
    size: int
    hash: str
    description: str
    file: Path
    entry: dict[str, Any] = field(repr=False)
    changed: tuple[str, ...] | None = None
    cases: dict[str, Any] | None = field(default=None, repr=False)
    provenance: dict[str, Any] | None = field(default=None, repr=False)

    def as_dict(self) -> dict[str, Any]:
        """The version as JSON-ready data (for the CLI and MCP), its entry included."""
        data = asdict(self, dict_factory=json_fields)
        if data["changed"] is not None:
            data["changed"] = list(data["changed"])
        return data


def archive_file(
    site_dir: Path, tool: str, file: Path, entry: dict[str, Any], *, folder: Path | None = None
) -> ToolVersion:
    """Keep a copy of ``file`` (a tool's current source) and its manifest ``entry``.

    When the newest kept version is this very source and entry (a save that failed after
    keeping it), that version is returned and nothing is written. Otherwise the copy goes to
    ``<site_dir>/browser-tools/.history/<tool>/<version>.js`` (a Python tool's, a ``.py``
    file, to ``<site_dir>/tools/.history/<tool>/<version>.py``; or under ``folder`` when
    given) and keeps the file's modification time as its ``saved_at``; the record
    ``<version>.json`` is written after it.

    Raises:
        OSError: the file cannot be read or the copy cannot be written.
    """
    suffix = ".py" if file.suffix == ".py" else ".js"
    kind = "python" if suffix == ".py" else "browser"
    target = folder if folder is not None else history_folder(site_dir, tool, kind)
    data = file.read_bytes()
    saved_ns = file.stat().st_mtime_ns
    kept = _archived(target)
    if kept and kept[0].entry == entry and kept[0].file.read_bytes() == data:
        # Kept already by a save that then failed: do not keep it twice.
        return kept[0]
    version = _new_version_id(target)
    source_path = target / f"{version}{suffix}"
    write_atomic(source_path, data)
    replaced = datetime.now(UTC).isoformat(timespec="seconds")
    saved_at = _iso(saved_ns)
    record: dict[str, Any] = {
        "version": version,
        "tool": tool,
        "savedAt": saved_at,
        "replacedAt": replaced,
        "size": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "entry": entry,
    }
    write_atomic(target / f"{version}.json", _json_bytes(record))
    return ToolVersion(
        version=version,
        current=False,
        saved_at=saved_at,
        replaced_at=replaced,
        size=len(data),
        hash=content_hash(data),
        description=str(entry.get("description", "")),
        file=source_path,
        entry=entry,
    )


def _json_bytes(value: Any) -> bytes:
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _archived(folder: Path) -> list[ToolVersion]:
    found = []
    try:
        records = sorted(folder.glob("*.json"), reverse=True)
    except OSError:
        return []
    for record_path in records:
        version = record_path.stem
        source = next(
            (
                folder / f"{version}{suffix}"
                for suffix in _SOURCE_SUFFIXES
                if (folder / f"{version}{suffix}").is_file()
            ),
            None,
        )
        if not _VERSION_ID.match(version) or source is None:
            continue
        try:
            record = json.loads(record_path.read_text(encoding="utf-8"))
            data = source.read_bytes()
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            continue
        entry = record.get("entry") if isinstance(record, dict) else None
        if not isinstance(entry, dict):
            continue
        found.append(
            ToolVersion(
                version=version,
                current=False,
                saved_at=str(record.get("savedAt", "")),
                replaced_at=str(record.get("replacedAt", "")) or None,
                size=len(data),
                hash=content_hash(data),
                description=str(entry.get("description", "")),
                file=source,
                entry=entry,
                cases=_cases(folder, content_hash(data)),
                provenance=_cases(folder, content_hash(data), PROVENANCE_DIR),
            )
        )
    # Ids sort by time; a "-N" suffix (same microsecond) sorts after its base id.
    found.sort(key=lambda v: (v.version.split("-")[0], int(v.version.partition("-")[2] or 0)))
    found.reverse()
    return found


def tool_kind(site_dir: Path, tool: str) -> str:
    """``"python"`` when the site's manifest lists ``tool`` as a Python tool, else
    ``"browser"`` (whose history a tool the manifest does not list keeps)."""
    try:
        raw = json.loads((site_dir / "manifest.json").read_text(encoding="utf-8"))
        python_tools = raw.get("pythonTools") or {}
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        return "browser"
    return "python" if isinstance(python_tools, dict) and tool in python_tools else "browser"


def _current(site_dir: Path, tool: str, kind: str) -> ToolVersion | None:
    key = "pythonTools" if kind == "python" else "browserTools"
    try:
        raw = json.loads((site_dir / "manifest.json").read_text(encoding="utf-8"))
        entry = raw[key][tool]
        file = site_dir / entry["path"]
        data = file.read_bytes()
        saved_ns = file.stat().st_mtime_ns
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(entry, dict):
        return None
    return ToolVersion(
        version="current",
        current=True,
        saved_at=_iso(saved_ns),
        replaced_at=None,
        size=len(data),
        hash=content_hash(data),
        description=str(entry.get("description", "")),
        file=file,
        entry=entry,
        cases=_cases(history_folder(site_dir, tool, kind), content_hash(data)),
        provenance=_cases(history_folder(site_dir, tool, kind), content_hash(data), PROVENANCE_DIR),
    )


def list_versions(learnings: Learnings, site_id: str, tool: str) -> list[ToolVersion]:
    """The versions of a tool (a browser or a Python tool): the current one first, then the
    kept ones, newest first.

    The site is taken from the first root that has it (the workspace copy when there is
    one). A site or tool that does not exist has no versions: the list is empty. Each
    version says what changed from the one after it in the list (``changed``).
    """
    directory = _site_dir(learnings, site_id)
    if directory is None:
        return []
    versions = []
    kind = tool_kind(directory, tool)
    current = _current(directory, tool, kind)
    if current is not None:
        versions.append(current)
    versions.extend(_archived(history_folder(directory, tool, kind)))
    return [
        replace(
            version, changed=changed_fields(older.entry, version.entry, older.hash, version.hash)
        )
        for version, older in pairwise(versions)
    ] + versions[-1:]


def _site_dir(learnings: Learnings, site_id: str) -> Path | None:
    for root in learnings.roots:
        directory = root / site_id
        if directory.is_dir() and not site_id.startswith((".", "_")) and "/" not in site_id:
            return directory
    return None


def load_version(learnings: Learnings, site_id: str, tool: str, version: str) -> ToolVersion:
    """The kept version ``version`` of a tool (its id, or a unique prefix of its id or hash).

    Raises:
        UnknownVersionError: no kept version matches, or several do (the message lists the
            kept versions).
    """
    kept = [v for v in list_versions(learnings, site_id, tool) if not v.current]
    wanted = version.strip()
    matches = [v for v in kept if v.version == wanted]
    if not matches and wanted:
        matches = [v for v in kept if v.version.startswith(wanted) or v.hash.startswith(wanted)]
    if len(matches) == 1:
        return matches[0]
    listing = ", ".join(f"{v.version} ({v.hash})" for v in kept) or "none"
    problem = "matches several versions" if matches else "is not a kept version"
    raise UnknownVersionError(
        f"{site_id}/{tool}: {version!r} {problem}; kept versions: {listing} "
        f"(see `ego history {site_id} {tool}`)"
    )
