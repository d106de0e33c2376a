"""A trace file read back: its first line, its records, its last line.

A trace is written a line at a time; one whose process was killed has no last line and may
end in a torn one, which is dropped (and said: :attr:`TraceData.torn`). A line that is not a
JSON object is skipped and counted.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ..errors import TraceFileError
from ..protocol.jsontext import json_loads

__all__ = ["MAX_READ", "TraceData", "read_trace"]

#: The largest trace file read, in bytes.
MAX_READ: Final = 1024 * 1024 * 1024


@dataclass
class TraceData:
    """What a trace file holds.

    Attributes:
        path: the file.
        header: its first line (``type: "trace"``).
        records: every other line but the last, in file order.
        end: its last line (``type: "end"``), or None when the trace never closed.
        torn: a last line was cut mid-way (the process writing it was killed) and dropped.
        skipped: lines that were not JSON objects.
    """

    path: Path
    header: dict[str, Any]
    records: list[dict[str, Any]] = field(default_factory=list)
    end: dict[str, Any] | None = None
    torn: bool = False
    skipped: int = 0

    @property
    def steps(self) -> list[dict[str, Any]]:
        """The steps, in the order they ended."""
        found = [record for record in self.records if record.get("type") == "step"]
        return sorted(found, key=lambda step: int(step.get("step") or 0))


def read_trace(path: str | os.PathLike[str], *, most: int = MAX_READ) -> TraceData:
    """Read the trace at ``path``.

    Raises:
        TraceFileError: no such file, unreadable, larger than ``most`` bytes, or not a trace
            (its first line is not a trace's).
    """
    file = Path(path)
    try:
        size = file.stat().st_size
        if size > most:
            raise TraceFileError(
                f"{file} is {size:,} bytes, more than the {most:,} a trace is read up to: "
                "it is no trace ego wrote",
                path=str(file),
            )
        raw = file.read_bytes()
    except OSError as exc:
        raise TraceFileError(
            f"cannot read the trace {file} ({exc.strerror or exc}): give the path of a trace "
            "file (ego run --trace FILE writes one)",
            path=str(file),
        ) from None
    lines = raw.split(b"\n")
    torn = bool(lines[-1].strip())
    if torn:
        lines.pop()
    data: TraceData | None = None
    skipped = 0
    for line in lines:
        if not line.strip():
            continue
        try:
            record = json_loads(line)
        except ValueError:
            record = None
        if not isinstance(record, dict):
            if data is None:
                break
            skipped += 1
            continue
        if data is None:
            if record.get("type") != "trace":
                break
            data = TraceData(file, record)
            continue
        if record.get("type") == "end":
            data.end = record
        else:
            data.records.append(record)
    if data is None:
        raise TraceFileError(
            f"{file} is not a trace: its first line is not one (ego run --trace FILE, "
            "tab.trace(path) and browser.trace(path) write traces)",
            path=str(file),
        )
    data.torn = torn
    data.skipped = skipped
    return data
