"""Which failing tool runs a kept trace holds: what ``ego report`` links a failure to.

Each trace, when it closes, adds one line per failing tool run it holds to
``traces.jsonl`` in ego's state folder (see :func:`ego.places.state_dir`): the tool version,
when the run ended, its outcome, and the trace's path. The report finds the trace of a
failure the run record keeps by its tool version and a time within :data:`MATCH_SECONDS`.
The file keeps its newest :data:`KEEP` lines; an unreadable line is skipped.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ..places import state_dir
from ..protocol.jsontext import json_bytes, json_loads

__all__ = ["INDEX_NAME", "KEEP", "MATCH_SECONDS", "KeptFailure", "index_path", "kept", "note"]

#: The index's file name in the state folder.
INDEX_NAME: Final = "traces.jsonl"
#: Lines the index keeps (the newest).
KEEP: Final = 2_000
#: Seconds between a run's end as the record keeps it and as a trace does that still match.
MATCH_SECONDS: Final = 2.0


@dataclass(frozen=True)
class KeptFailure:
    """A failing tool run a kept trace holds."""

    site_id: str
    tool: str
    version: str | None
    at: float
    outcome: str
    message: str
    path: str

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (one line of the index)."""
        return {
            "site": self.site_id,
            "tool": self.tool,
            "version": self.version,
            "at": self.at,
            "outcome": self.outcome,
            "message": self.message,
            "path": self.path,
        }


def index_path() -> Path:
    """Where the index is now: ``traces.jsonl`` in ego's state folder."""
    return state_dir() / INDEX_NAME


def note(failures: list[KeptFailure]) -> None:
    """Add ``failures`` to the index (a problem writing it is let go: it only serves links)."""
    if not failures:
        return
    path = index_path()
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        with os.fdopen(handle, "ab") as out:
            out.write(b"".join(json_bytes(f.as_dict()) + b"\n" for f in failures))
        if path.stat().st_size > KEEP * 600:
            _trim(path)


def _trim(path: Path) -> None:
    lines = path.read_bytes().splitlines(keepends=True)
    if len(lines) <= KEEP:
        return
    temporary = path.with_name(f".{path.name}.{os.getpid()}.part")
    temporary.write_bytes(b"".join(lines[-KEEP:]))
    os.chmod(temporary, 0o600)
    os.replace(temporary, path)


def kept() -> list[KeptFailure]:
    """Every failure the index names whose trace file is still there, oldest first."""
    try:
        raw = index_path().read_bytes()
    except OSError:
        return []
    found = []
    for line in raw.splitlines():
        try:
            data = json_loads(line)
            failure = KeptFailure(
                site_id=str(data["site"]),
                tool=str(data["tool"]),
                version=data.get("version"),
                at=float(data["at"]),
                outcome=str(data.get("outcome", "")),
                message=str(data.get("message", "")),
                path=str(data["path"]),
            )
        except (ValueError, KeyError, TypeError):
            continue
        if Path(failure.path).is_file():
            found.append(failure)
    return found
