"""The bounds on HAR files, as the commands that read or write them take them
(``--max-har-entries``, ``--max-har-bytes``), and the progress shown while a large one is read.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import click

from ..replay.har_bounds import MAX_HAR_BYTES, MAX_HAR_ENTRIES, HarBounds, HarProgress, reading_hars
from .sizes import ByteSize

__all__ = ["ByteSize", "HarProgressDisplay", "har_bound_options", "har_bounds", "reading"]

F = TypeVar("F", bound=Callable[..., Any])


def har_bound_options(what: str) -> Callable[[F], F]:
    """``--max-har-entries`` and ``--max-har-bytes``, for a command that ``what`` HAR files
    (``"reads"``, ``"writes"``)."""

    def add(command: F) -> F:
        command = click.option(
            "--max-har-bytes",
            type=ByteSize(),
            default=MAX_HAR_BYTES,
            show_default="256M",
            help=f"The most bytes a HAR file it {what} may take (512K, 256M, 1G).",
        )(command)
        return click.option(
            "--max-har-entries",
            type=click.IntRange(min=1),
            default=MAX_HAR_ENTRIES,
            show_default=True,
            help=f"The most entries a HAR file it {what} may hold.",
        )(command)

    return add


def har_bounds(max_har_entries: int, max_har_bytes: int) -> HarBounds:
    """The bounds the two options give."""
    return HarBounds(max_entries=max_har_entries, max_bytes=max_har_bytes)


class HarProgressDisplay:
    """How far the reading of a large HAR got, on stderr whatever the result's format: a line
    rewritten in place when stderr is a terminal, else a plain line at every tenth."""

    def __init__(self) -> None:
        self.live = sys.stderr.isatty()
        self._shown = 0.0
        self._step: tuple[str, str, int] | None = None

    def __call__(self, progress: HarProgress) -> None:
        line = progress.describe()
        if self.live:
            now = time.monotonic()
            if now - self._shown < 0.1:
                return  # a terminal cannot show more than ~10 updates a second anyway
            self._shown = now
            sys.stderr.write("\r\033[K" + line)
            sys.stderr.flush()
            return
        if progress.phase == "scanning":
            share = progress.bytes_read / progress.size if progress.size else 1.0
        else:
            share = progress.done / progress.total if progress.total else 1.0
        step = (str(progress.path), progress.phase, int(share * 10))
        if step != self._step:
            self._step = step
            click.echo(line, err=True)

    def finish(self) -> None:
        """Clear a live line."""
        if self.live and self._shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


@contextlib.contextmanager
def reading(max_har_entries: int, max_har_bytes: int) -> Iterator[HarBounds]:
    """The bounds of the options for every HAR read in the block, with progress shown."""
    display = HarProgressDisplay()
    try:
        with reading_hars(har_bounds(max_har_entries, max_har_bytes), display) as bounds:
            yield bounds
    finally:
        display.finish()
