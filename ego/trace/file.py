"""A trace file: JSON lines written as the trace goes, private, bounded, with what was left
out said in its last line.

One line per record, flushed as it is written, so a process killed mid-trace leaves every
whole line it wrote (a reader drops a torn last one). JSON lines rather than a zip: a line
appended is the file's whole update (a zip's directory is written at its end, so a killed
process leaves none), any line can be read with ``grep`` or ``jq``, and the viewer reads it
as it is. Screenshots are base64 JPEG inside their step's line.

The file is made ``0600`` (a trace shows pages of a logged-in session, secrets redacted or
not) and never follows a link at its path. Once it comes within a tenth of its bound (at most
1 MiB) the heavy parts of each record (screenshots, snapshots, bodies) are left out and each
says so; at the bound every record is left out; the last line counts what was left out.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections import Counter
from pathlib import Path
from typing import Any, Final

from ..protocol.jsontext import json_bytes, json_loads
from .options import TraceOptions
from .secrets import TraceSecrets

__all__ = ["END_ROOM", "HEAVY", "OMITTED", "TraceFile", "open_private"]

#: The parts of a record left out first once the file nears its bound.
HEAVY: Final = ("screenshot", "snapshot", "request_body", "response_body")
#: Bytes kept free for the last line, which says what was left out.
END_ROOM: Final = 16 * 1024
#: What a part left out says.
OMITTED: Final = "left out: the trace reached its size bound"

_FLAGS: Final = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC


def open_private(path: Path) -> int:
    """``path`` opened for writing from its start, ``0600``, never through a link.

    Raises:
        OSError: it cannot be (a link there is refused with ``ELOOP``).
    """
    handle = os.open(path, _FLAGS, 0o600)
    try:
        os.fchmod(handle, 0o600)  # a file that was there keeps its mode otherwise
    except BaseException:
        os.close(handle)
        raise
    return handle


class TraceFile:
    """One trace file (see the module docstring).

    Args:
        path: where to write it (replaced if it exists).
        options: its bound (``max_bytes``).
        secrets: the trace's secrets: told of each line written, and used to rewrite the file
            at its close when values were noted after lines that may hold them.

    Raises:
        OSError: the file cannot be made.
    """

    def __init__(self, path: str | os.PathLike[str], options: TraceOptions, secrets: TraceSecrets):
        self.path = Path(path)
        self.max_bytes = options.max_bytes
        # Heavy parts stop a tenth (at most 1 MiB) before the room the other records keep.
        self.heavy_bound = options.max_bytes - END_ROOM - min(1024 * 1024, options.max_bytes // 10)
        self.secrets = secrets
        self.size = 0
        #: What was left out: ``screenshot``, ``snapshot``, ``request_body``,
        #: ``response_body`` (parts), and whole records by their type.
        self.omitted: Counter[str] = Counter()
        self.omitted_bytes = 0
        self._known: int | None = None  # secret values known at the first line
        self._file = os.fdopen(open_private(self.path), "wb")

    @property
    def closed(self) -> bool:
        return self._file.closed

    def write(self, record: dict[str, Any]) -> bool:
        """Append ``record`` as one line, within the bound; False when it was left out."""
        if self._file.closed:
            return False
        if self._known is None:
            self._known = len(self.secrets.values)
        line = json_bytes(record) + b"\n"
        if self.size + len(line) > self.heavy_bound:
            heavy = [key for key in HEAVY if record.get(key) is not None]
            if heavy:
                lighter = dict(record)
                for key in heavy:
                    if not (isinstance(record[key], dict) and "omitted" in record[key]):
                        self.omitted[key] += 1
                    lighter[key] = {"omitted": OMITTED}
                self.omitted_bytes += len(line)
                line = json_bytes(lighter) + b"\n"
                self.omitted_bytes -= len(line)
        if self.size + len(line) > self.max_bytes - END_ROOM:
            self.omitted[str(record.get("type", "record"))] += 1
            self.omitted_bytes += len(line)
            return False
        self._file.write(line)
        self._file.flush()
        self.size += len(line)
        return True

    def close(self, end: dict[str, Any]) -> None:
        """Write the last line (``end``, with what was left out) and close the file;
        rewrite it with every noted secret cut out when some were noted after lines that
        may hold them. Idempotent.

        Raises:
            OSError: the rewrite failed (the file as written stays).
        """
        if self._file.closed:
            return
        end = {
            **end,
            "bytes": self.size,
            "max_bytes": self.max_bytes,
            "omitted": dict(self.omitted),
            "omitted_bytes": self.omitted_bytes,
        }
        line = json_bytes(end) + b"\n"
        self._file.write(line)
        self.size += len(line)
        self._file.close()
        if self._known is not None and len(self.secrets.values) > self._known:
            self._rewrite()

    def abandon(self) -> None:
        """Close and remove the file (a trace nobody keeps)."""
        if not self._file.closed:
            self._file.close()
        with contextlib.suppress(OSError):
            self.path.unlink()

    def _rewrite(self) -> None:
        """The file again, each line with every noted value cut out, put in its place."""
        temporary = self.path.with_name(f".{self.path.name[:200]}.{uuid.uuid4().hex[:8]}.part")
        handle = os.open(temporary, _FLAGS | os.O_EXCL, 0o600)
        try:
            with os.fdopen(handle, "wb") as out, self.path.open("rb") as source:
                for raw in source:
                    try:
                        record = json_loads(raw)
                    except ValueError:
                        continue
                    out.write(json_bytes(self.secrets.cut(record)) + b"\n")
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
        self.size = self.path.stat().st_size
