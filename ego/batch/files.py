"""The files of a batch run: the JSONL input, the append-only output, and the journal of
write tools sent, each read and written so that a kill at any point loses nothing."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import orjson

from ..errors import BatchFileError
from ..protocol.jsontext import json_bytes

logger = logging.getLogger("ego.batch")

__all__ = [
    "SYNC_INTERVAL",
    "InputItem",
    "ResultLog",
    "check_matches",
    "dumps",
    "error_record",
    "journal_path",
    "read_inputs",
    "read_journal",
    "read_results",
    "rewrite_without",
]


@dataclass(frozen=True)
class InputItem:
    """One input line.

    Attributes:
        index: its 0-based line number in the input file.
        args: the parsed args object; for a line that is not a JSON object, its text.
        problem: why the line cannot be used as args, or ``""``.
    """

    index: int
    args: Any
    problem: str = ""


def read_inputs(path: Path) -> list[InputItem]:
    """Every input of a JSONL file, blank lines left out.

    A line that is not JSON, or not an object, is kept as an item with a ``problem``: it
    becomes a failed result rather than stopping the run.

    Raises:
        BatchFileError: the file cannot be read.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BatchFileError(f"cannot read the input {path}: {exc.strerror or exc}") from None
    items = []
    for number, raw in enumerate(data.split(b"\n")):
        line = raw.strip()
        if not line:
            continue
        try:
            args = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            text = line.decode("utf-8", "replace")
            items.append(InputItem(number, text, f"input line {number + 1} is not JSON: {exc}"))
            continue
        if not isinstance(args, dict):
            items.append(
                InputItem(
                    number,
                    args,
                    f"input line {number + 1} is a JSON {type(args).__name__}, not an object",
                )
            )
            continue
        items.append(InputItem(number, args))
    return items


def read_results(path: Path, *, repair: bool = False) -> dict[int, dict[str, Any]]:
    """The result lines of an output file by index (the first one of an index wins).

    A last line without its newline, or one that is not JSON, is what a kill during a
    ``write`` (or a machine crash) leaves: it is ignored, and with ``repair`` cut off the
    file so that appending continues on a clean line.

    Raises:
        BatchFileError: a line before the last is not a result line (the file was edited,
            or is not ego's output).
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise BatchFileError(f"cannot read the output {path}: {exc.strerror or exc}") from None
    results: dict[int, dict[str, Any]] = {}
    offset = 0
    good_end = 0
    lines = data.split(b"\n")
    for number, raw in enumerate(lines):
        last = number == len(lines) - 1
        end = offset + len(raw) + (0 if last else 1)
        record: Any = None
        if raw.strip():
            try:
                record = orjson.loads(raw)
            except orjson.JSONDecodeError:
                record = None
            whole = not last  # a line is complete only with its newline
            if (
                not whole
                or not isinstance(record, dict)
                or not isinstance(record.get("index"), int)
                or "ok" not in record
            ):
                if last or not any(rest.strip() for rest in lines[number + 1 :]):
                    break  # torn tail: drop it
                raise BatchFileError(
                    f"{path} line {number + 1} is not a result line of ego batch: fix or "
                    "remove it, or write to another --output"
                )
            results.setdefault(record["index"], record)
        offset = end
        good_end = end
    if repair and good_end < len(data):
        os.truncate(path, good_end)
    return results


#: The least time between two ``fsync`` of the output, in seconds. An ``fsync`` here takes
#: milliseconds, and a ``write`` that lands on a page the kernel is writing back waits for it
#: (stable pages): back-to-back syncs made every result's write wait, in the event loop. At
#: most this often, a write seldom waits, and a machine crash loses at most this much more.
SYNC_INTERVAL: Final = 0.05


class ResultLog:
    """An append-only JSONL file: whole lines per ``os.write``, group ``fsync`` in a thread.

    A line is in the kernel when :meth:`append` or :meth:`write` returns, so a killed
    process loses none; the ``fsync`` that makes it survive a machine crash follows in a
    thread of the log's own, for every line written meanwhile at once, at most every
    :data:`SYNC_INTERVAL` seconds. Use it from one thread.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._dirty = threading.Event()
        self._closing = threading.Event()
        self._syncer = threading.Thread(target=self._sync_loop, name="ego-batch-fsync", daemon=True)
        self._syncer.start()

    def append(self, record: dict[str, Any]) -> None:
        """Write one record as a line.

        Raises:
            TypeError: the record holds what JSON cannot (nothing is written).
        """
        self.write(dumps(record) + b"\n")

    def write(self, lines: bytes) -> None:
        """Write whole lines (each ending in a newline), with as few ``os.write`` as the
        kernel allows: results that arrived together cost one system call, not one each."""
        view = memoryview(lines)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]
        if not self._dirty.is_set():
            self._dirty.set()

    def _sync_loop(self) -> None:
        # Lines are in the kernel as soon as write() returns (a killed process loses none);
        # fsync makes them survive a machine crash too. Lines written during one fsync, or
        # in the pause after it, share the next.
        while True:
            self._dirty.wait()
            if self._closing.is_set():
                return
            self._dirty.clear()
            try:
                os.fsync(self._fd)
            except OSError as exc:
                logger.warning("fsync of %s failed: %s", self.path, exc)
            self._closing.wait(SYNC_INTERVAL)

    async def close(self) -> None:
        """Stop the syncing thread, sync what is left and close the file.

        Cancelling it leaves the file to the thread and the process's end: every line is
        in the kernel already.
        """
        self._closing.set()
        self._dirty.set()
        await asyncio.to_thread(self._syncer.join)
        with contextlib.suppress(OSError):
            os.fsync(self._fd)
        os.close(self._fd)


def journal_path(output: Path) -> Path:
    return output.with_name(output.name + ".started")


def read_journal(path: Path) -> set[int]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return set()
    started = set()
    for raw in data.split(b"\n"):
        with contextlib.suppress(ValueError):
            started.add(int(raw))
    return started


def check_matches(
    results: dict[int, dict[str, Any]], inputs: dict[int, InputItem], output: Path, source: Path
) -> None:
    for index, record in results.items():
        item = inputs.get(index)
        if item is None or record.get("args") != item.args:
            where = f"input line {index + 1}"
            raise BatchFileError(
                f"{output} does not belong to {source}: its result for {where} has other args "
                "than the input (was it made from another input file?); pass another --output"
            )


def error_record(error: BaseException) -> dict[str, str]:
    message = str(error).replace("\n", " ") or type(error).__name__
    return {"type": type(error).__name__, "message": message}


def dumps(record: dict[str, Any]) -> bytes:
    # A tool's result may hold a lone surrogate (text cut mid-emoji): written as an escape.
    return json_bytes(record, option=orjson.OPT_NON_STR_KEYS, default=_default)


def _default(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    raise TypeError(f"{type(value).__name__} is not JSON")


def rewrite_without(output: Path, results: dict[int, dict[str, Any]], drop: set[int]) -> None:
    # Written beside the output and renamed over it, so a kill leaves the old or the new file.
    temporary = output.with_name(output.name + ".rewrite")
    with open(temporary, "wb") as handle:
        for index, record in results.items():
            if index not in drop:
                handle.write(dumps(record) + b"\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, output)
