"""The files of a batch run: the JSONL input, the append-only output, and the journal of
write tools sent, each read and written so that a kill at any point loses nothing."""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ..errors import BatchFileError
from ..protocol.jsontext import json_bytes

__all__ = [
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


class ResultLog:
    """An append-only JSONL file: one ``os.write`` per line, group ``fsync`` in a thread."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._dirty = asyncio.Event()
        self._syncer = asyncio.get_running_loop().create_task(self._sync_loop())

    def append(self, record: dict[str, Any]) -> None:
        line = dumps(record) + b"\n"
        view = memoryview(line)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]
        self._dirty.set()

    async def _sync_loop(self) -> None:
        # Lines are in the kernel as soon as append() returns (a killed process loses none);
        # fsync makes them survive a machine crash too. Lines that arrive during one fsync
        # share the next.
        while True:
            await self._dirty.wait()
            self._dirty.clear()
            await asyncio.to_thread(os.fsync, self._fd)

    async def close(self) -> None:
        self._syncer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._syncer
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
