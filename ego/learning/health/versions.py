"""The version hash a run is recorded against, for every kind of tool and every kept version.

A browser tool's version is the hash the cache stamps it with (:attr:`LoadedSource.version`:
its normalised source and its sourceURL), so a record follows exactly the code that ran. A
version kept in the tool's history gets the same hash from its kept source and the path its
entry had, which is how ``ego health`` finds the record of every version, and why restoring
a version brings its record back. A Python tool's version is a hash of its file; the versions
its history keeps (``tools/.history``) get no hash here yet, so ``ego health`` shows its
current version's record only.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

from ...errors import LearningError
from ..catalog.jslint import function_expression
from ..catalog.manifest import BrowserToolSpec, ToolSpec
from ..catalog.paths import resolve_inside
from ..catalog.registry import FileStamp, Learnings, SiteEntry, file_stamp, version_of
from ..catalog.tool_source import source_url

__all__ = ["kept_version", "python_version", "tool_version"]

_python: dict[Path, tuple[FileStamp, str]] = {}
# The writer thread and the event loop both ask; a lost race only hashes a file twice.
_python_lock = threading.Lock()


def kept_version(site_id: str, path: str, text: str) -> str | None:
    """The version hash of a browser tool's source ``text`` served from ``path`` in the site;
    None when the text is not a tool (it would not run, so it has no record)."""
    try:
        expression = function_expression(text)
    except ValueError:
        return None
    return version_of(source_url(site_id, path), expression)


def python_version(file: Path) -> str | None:
    """The version hash of a Python tool's file (cached by its stat); None when unreadable."""
    stamp = file_stamp(file)
    with _python_lock:
        cached = _python.get(file)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    try:
        digest = hashlib.sha256(file.read_bytes()).hexdigest()[:16]
    except OSError:
        return None
    with _python_lock:
        _python[file] = (stamp, digest)
    return digest


def tool_version(learnings: Learnings, entry: SiteEntry, spec: ToolSpec) -> str | None:
    """The version hash of a declared tool as it is on disk now; None when its file cannot be
    loaded (the tool cannot run, so there is nothing to show)."""
    try:
        if isinstance(spec, BrowserToolSpec):
            return learnings.browser_source(entry.site_id, spec, entry).version
        return python_version(resolve_inside(entry.directory, spec.path, what=spec.name))
    except LearningError:
        return None
