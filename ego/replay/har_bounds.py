"""How large a HAR file ego reads or writes: entries and bytes, checked before the file is
parsed whole.

A HAR handed to ``ego suggest``, ``ego heal``, ``ego test`` or a replay may come from anyone,
and one of 100,000 entries once kept ``ego suggest`` busy for minutes at 770 MB. So reading
one is bounded:

1. its size (and the size of every Playwright ``content._file`` body it names) is taken from
   the file system first: a file over :attr:`HarBounds.max_bytes` is refused unread;
2. its entries are counted as the file streams through a JSON parser (``ijson``, at C speed):
   the count stops at :attr:`HarBounds.max_entries` + 1 and the file is refused, without the
   rest being read;
3. only then is it parsed and its entries checked, one by one.

Both refusals are :class:`~ego.errors.HarTooLargeError`. A caller that reads a large file on
purpose raises the bound (``bounds=HarBounds(max_entries=...)``; ``--max-har-entries`` on the
command line). Code that does not pass bounds to :meth:`~ego.replay.har.Har.load` (the cases a
heal or ``ego test`` replays) takes them from :func:`reading_hars`, which a front end opens
around the whole command, with a progress callback for files over :data:`LARGE_HAR_BYTES`.

Recording is bounded the same way (:class:`~ego.replay.recorder.Recorder`), so that what ego
writes it can read back.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

import ijson

from ..errors import HarTooLargeError

__all__ = [
    "LARGE_HAR_BYTES",
    "MAX_HAR_BYTES",
    "MAX_HAR_ENTRIES",
    "HarBounds",
    "HarProgress",
    "ProgressCallback",
    "current_bounds",
    "current_progress",
    "reading_hars",
    "scan_har_file",
    "too_many_bytes",
    "too_many_entries",
]

#: Entries a HAR may hold, by default (a long session on a busy site records a few thousand).
MAX_HAR_ENTRIES: Final = 50_000
#: Bytes a HAR file (with the body files it names) may take, by default.
MAX_HAR_BYTES: Final = 256 * 1024 * 1024
#: Files larger than this get progress reports while they are read.
LARGE_HAR_BYTES: Final = 16 * 1024 * 1024
#: Entries between two progress reports.
_REPORT_EVERY: Final = 2_000


@dataclass(frozen=True)
class HarBounds:
    """The most a HAR file may hold to be read (or a recording to be written).

    Attributes:
        max_entries: entries (``log.entries``); default :data:`MAX_HAR_ENTRIES`.
        max_bytes: bytes of the file, with the ``content._file`` bodies it names; default
            :data:`MAX_HAR_BYTES`.

    Raises:
        ValueError: a bound that is not a positive number.
    """

    max_entries: int = MAX_HAR_ENTRIES
    max_bytes: int = MAX_HAR_BYTES

    def __post_init__(self) -> None:
        for name in ("max_entries", "max_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name}={value!r}: give a positive whole number")


@dataclass(frozen=True)
class HarProgress:
    """How far the reading of one large HAR file got.

    Attributes:
        path: the file.
        phase: ``"scanning"`` (entries counted as the file streams) or ``"loading"`` (entries
            parsed and checked).
        done: entries counted or loaded so far.
        total: the entries in the file, once known (``"loading"``), else None.
        bytes_read: bytes scanned so far (``"scanning"``), else the file's size.
        size: the file's size in bytes.
    """

    path: Path
    phase: Literal["scanning", "loading"]
    done: int
    total: int | None
    bytes_read: int
    size: int

    def describe(self) -> str:
        """One line for a person: ``session.har (70 MB): 40% scanned, 28,000 entries``."""
        head = f"reading {self.path.name} ({self.size / 1_000_000:,.0f} MB)"
        if self.phase == "scanning":
            share = self.bytes_read / self.size if self.size else 1.0
            return f"{head}: {share:.0%} scanned, {self.done:,} entries"
        return f"{head}: {self.done:,} of {self.total or 0:,} entries loaded"


#: Called with each progress report of a large file.
ProgressCallback = Callable[[HarProgress], None]

_SCOPE: contextvars.ContextVar[tuple[HarBounds, ProgressCallback | None]] = contextvars.ContextVar(
    "ego_har_bounds", default=(HarBounds(), None)
)


@contextlib.contextmanager
def reading_hars(
    bounds: HarBounds | None = None, progress: ProgressCallback | None = None
) -> Iterator[HarBounds]:
    """Bounds (and a progress callback) for every HAR read in the block that is not given
    its own: a heal's or a test run's cases, a replay of a path.

    ::

        with reading_hars(HarBounds(max_entries=200_000)):
            report = await browser.site.heal_tool("shop", "get_products")

    Args:
        bounds: the bounds; None keeps the ones in force.
        progress: called with each :class:`HarProgress` of a file over
            :data:`LARGE_HAR_BYTES`; None keeps the one in force.
    """
    old_bounds, old_progress = _SCOPE.get()
    token = _SCOPE.set((bounds or old_bounds, progress or old_progress))
    try:
        yield bounds or old_bounds
    finally:
        _SCOPE.reset(token)


def current_bounds() -> HarBounds:
    """The bounds :func:`reading_hars` set, else the defaults."""
    return _SCOPE.get()[0]


def current_progress() -> ProgressCallback | None:
    """The progress callback :func:`reading_hars` set, if any."""
    return _SCOPE.get()[1]


def too_many_entries(path: Path | None, counted: int, bounds: HarBounds) -> HarTooLargeError:
    """The refusal of a HAR with more than ``bounds.max_entries`` entries."""
    name = str(path) if path is not None else "the HAR"
    return HarTooLargeError(
        f"{name} holds more than {bounds.max_entries:,} entries (counted {counted:,} before "
        f"stopping): cut the recording, or raise the bound (HarBounds(max_entries=N))",
        path=str(path) if path is not None else None,
        bound="entries",
        limit=bounds.max_entries,
    )


def too_many_bytes(
    path: Path | None, size: int, bounds: HarBounds, what: str = ""
) -> HarTooLargeError:
    """The refusal of a HAR (with its body files) larger than ``bounds.max_bytes``."""
    name = str(path) if path is not None else "the HAR"
    return HarTooLargeError(
        f"{name} is {size:,} bytes{what}, more than the bound of {bounds.max_bytes:,}: cut the "
        "recording, or raise the bound (HarBounds(max_bytes=N))",
        path=str(path) if path is not None else None,
        bound="bytes",
        limit=bounds.max_bytes,
    )


def scan_har_file(
    path: Path, bounds: HarBounds, progress: ProgressCallback | None = None
) -> tuple[int, int]:
    """Check a HAR file against ``bounds`` before it is parsed whole.

    Args:
        path: the file.
        bounds: the bounds.
        progress: told how the scan goes, for a file over :data:`LARGE_HAR_BYTES`.

    Returns:
        ``(size, entries)``: the file's size, and its entries as counted (0 when the file
        is not JSON: parsing it then says what is wrong with it).

    Raises:
        HarTooLargeError: the file is larger than ``bounds.max_bytes``, or holds more than
            ``bounds.max_entries`` entries.
        OSError: the file cannot be read.
    """
    size = os.stat(path).st_size
    if size > bounds.max_bytes:
        raise too_many_bytes(path, size, bounds)
    report = progress if size > LARGE_HAR_BYTES else None
    counted = 0
    with open(path, "rb") as handle:
        for prefix in ("log.entries.item", "entries.item"):  # a bare log object is read too
            handle.seek(0)
            try:
                for _ in ijson.items(handle, prefix, use_float=True):
                    counted += 1
                    if counted > bounds.max_entries:
                        raise too_many_entries(path, counted, bounds)
                    if report is not None and counted % _REPORT_EVERY == 0:
                        report(HarProgress(path, "scanning", counted, None, handle.tell(), size))
            except HarTooLargeError:
                raise
            except (ijson.JSONError, ValueError):
                return size, 0  # not JSON: the parse that follows words the problem
            if counted:
                break
    if report is not None:
        report(HarProgress(path, "scanning", counted, None, size, size))
    return size, counted
