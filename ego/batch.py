"""Resumable batch runs: one tool over a JSONL file of inputs, through a browser pool.

:func:`run_batch` reads one JSON args object per line of the input, runs the tool once per
input over a :class:`~ego.pool.BrowserPool`, and appends one JSON line per input to the
output as each result arrives::

    {"index": 7, "args": {...}, "ok": true, "result": ..., "ms": 12.3}
    {"index": 8, "args": {...}, "ok": false, "error": {"type": "...", "message": "..."}, "ms": 4.1}

``index`` is the 0-based line number in the input (blank lines are not inputs). Every line is
written with one ``write`` call on a file opened for appending, so a run killed at any point
(SIGKILL included) leaves only whole lines behind, save for a machine crash, which can tear
the last one; the lines are ``fsync``'d in groups right after they are written. Running the
same batch again reads the output, drops a torn last line, skips every index already there,
and runs the rest: in the end the output holds each input exactly once.

Write and irreversible tools are journaled: the index goes to ``<output>.started`` (fsync'd)
right before the tool is sent. An index that is journaled but has no result was cut short by
a kill; a later run records it as failed (``NotRetriedError``: it may or may not have run)
instead of running it again. ``retry_failed=True`` runs failed inputs again, that one too.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from .calls import CallOptions, ToolCall, bind, resolve
from .errors import BatchFileError, BrowserError, LearningError
from .pool import BrowserPool, PoolResult

__all__ = [
    "BatchProgress",
    "BatchSummary",
    "InputItem",
    "read_inputs",
    "read_results",
    "run_batch",
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


@dataclass
class BatchProgress:
    """Where a run is; passed to the ``progress`` callback after every result.

    Attributes:
        total: inputs in the file.
        skipped: inputs done by earlier runs (not run again).
        done: inputs finished by this run.
        failed: of those, the failed ones.
        started: ``time.monotonic()`` when this run started its calls.
    """

    total: int
    skipped: int
    done: int = 0
    failed: int = 0
    started: float = field(default_factory=time.monotonic)

    @property
    def remaining(self) -> int:
        return self.total - self.skipped - self.done

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    @property
    def rate(self) -> float:
        """Results per second so far in this run."""
        elapsed = self.elapsed
        return self.done / elapsed if elapsed > 0 else 0.0

    @property
    def eta(self) -> float | None:
        """Seconds left at the current rate, or None before the first result."""
        rate = self.rate
        return self.remaining / rate if rate > 0 else None


@dataclass
class BatchSummary:
    """What a run did.

    Attributes:
        site, tool: what ran.
        input, output: the files.
        total: inputs in the input file.
        skipped: inputs already in the output before this run.
        ran: inputs this run finished.
        ok, failed: how those ended.
        browser_failed: failures that came from the browser side (a browser or tab died, a
            timeout, a write cut short) rather than from the tool.
        interrupted: journaled write inputs of an earlier killed run, recorded as failed.
        failed_before, browser_failed_before: failed results among the skipped ones.
        seconds: this run's time.

    The exit code looks at the whole output, earlier runs included: a resumed run that
    finished the rest cleanly still says 3 or 4 when the file holds failures.
    """

    site: str
    tool: str
    input: str
    output: str
    total: int = 0
    skipped: int = 0
    ran: int = 0
    ok: int = 0
    failed: int = 0
    browser_failed: int = 0
    interrupted: int = 0
    failed_before: int = 0
    browser_failed_before: int = 0
    seconds: float = 0.0

    @property
    def rate(self) -> float:
        return self.ran / self.seconds if self.seconds > 0 else 0.0

    @property
    def exit_code(self) -> int:
        """0: all ok; 4: a failure came from the browser side (a browser or tab died, a
        timeout, a write cut short, now or in a killed earlier run); 3: only tools failed."""
        if self.browser_failed or self.interrupted or self.browser_failed_before:
            return 4
        return 3 if self.failed or self.failed_before else 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "site": self.site,
            "tool": self.tool,
            "input": self.input,
            "output": self.output,
            "total": self.total,
            "skipped": self.skipped,
            "ran": self.ran,
            "ok": self.ok,
            "failed": self.failed,
            "browser_failed": self.browser_failed,
            "interrupted": self.interrupted,
            "failed_before": self.failed_before,
            "browser_failed_before": self.browser_failed_before,
            "seconds": round(self.seconds, 3),
            "rate": round(self.rate, 2),
            "exit_code": self.exit_code,
        }


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


class _ResultLog:
    """An append-only JSONL file: one ``os.write`` per line, group ``fsync`` in a thread."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._dirty = asyncio.Event()
        self._syncer = asyncio.get_running_loop().create_task(self._sync_loop())

    def append(self, record: dict[str, Any]) -> None:
        line = _dumps(record) + b"\n"
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


def _journal_path(output: Path) -> Path:
    return output.with_name(output.name + ".started")


def _read_journal(path: Path) -> set[int]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return set()
    started = set()
    for raw in data.split(b"\n"):
        with contextlib.suppress(ValueError):
            started.add(int(raw))
    return started


def _check_matches(
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


def _error_record(error: BaseException) -> dict[str, str]:
    message = str(error).replace("\n", " ") or type(error).__name__
    return {"type": type(error).__name__, "message": message}


def _dumps(record: dict[str, Any]) -> bytes:
    return orjson.dumps(record, option=orjson.OPT_NON_STR_KEYS, default=_default)


def _default(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    raise TypeError(f"{type(value).__name__} is not JSON")


def _is_browser_side(error: BaseException) -> bool:
    return isinstance(error, BrowserError)


def _subclasses(cls: type[BaseException]) -> set[str]:
    names = {cls.__name__}
    for sub in cls.__subclasses__():
        names |= _subclasses(sub)
    return names


# The error type names, as written in an output file, that count as browser-side failures.
_BROWSER_SIDE = frozenset(_subclasses(BrowserError))


async def run_batch(
    pool: BrowserPool,
    site_id: str,
    tool: str,
    input_path: str | os.PathLike[str],
    output_path: str | os.PathLike[str],
    *,
    confirm: bool = False,
    timeout: float | None = None,
    retry_failed: bool = False,
    progress: Callable[[BatchProgress], None] | None = None,
) -> BatchSummary:
    """Run ``site_id``/``tool`` once per input line; resume where an earlier run stopped.

    The pool is started here (``async with``) only when there is work left, and closed at
    the end. Before that, everything that would fail every input is checked: the site and
    tool exist, an irreversible tool has ``confirm``, and the output belongs to this input.

    Args:
        pool: a :class:`~ego.pool.BrowserPool`, not started yet.
        site_id, tool: the tool to run (browser or Python).
        input_path: JSONL, one args object per line.
        output_path: JSONL results, appended to (created when missing).
        confirm: allow an irreversible tool.
        timeout: seconds each call may run.
        retry_failed: drop the failed results from the output first (the file is rewritten
            atomically) and run those inputs again.
        progress: called after every result, in the event loop: keep it quick.

    Raises:
        UnknownSiteError, UnknownToolError, InvalidManifestError, ConfirmationRequiredError:
            before anything starts.
        BatchFileError: the input is unreadable, or the output is corrupt in its middle or
            was made from another input.
        ConnectionFailedError, ChromeLaunchError, ...: no browser of the pool started.
        PoolExhaustedError: every browser died and none could be replaced; the results
            written so far stay, and the next run continues from them.

    Cancelling (Ctrl+C) stops the calls; every result already written stays.
    """
    source, output = Path(input_path), Path(output_path)
    ref = resolve(pool.learnings, site_id, tool, CallOptions(timeout=timeout, confirm=confirm))
    spec = ref.spec
    journaled = spec.side_effect != "read"
    items = read_inputs(source)
    by_index = {item.index: item for item in items}
    results = read_results(output, repair=True)
    _check_matches(results, by_index, output, source)
    journal = _journal_path(output)
    started_before = _read_journal(journal)

    if retry_failed:
        failed = {index for index, record in results.items() if not record.get("ok")}
        interrupted = {i for i in started_before if i not in results and i in by_index}
        if failed:
            _rewrite_without(output, results, failed)
            for index in failed:
                del results[index]
        if failed or interrupted:
            journal.unlink(missing_ok=True)
            started_before = set()

    summary = BatchSummary(site_id, tool, str(source), str(output), total=len(items))
    summary.skipped = len(results)
    for record in results.values():
        if not record.get("ok"):
            summary.failed_before += 1
            kind = (
                record.get("error", {}).get("type")
                if isinstance(record.get("error"), dict)
                else None
            )
            if kind in _BROWSER_SIDE:
                summary.browser_failed_before += 1
    pending = [item for item in items if item.index not in results]
    state = BatchProgress(total=len(items), skipped=len(results))
    began = time.monotonic()
    log = _ResultLog(output)
    journal_fd: int | None = None
    try:
        runnable: list[InputItem] = []
        calls: list[ToolCall] = []
        for item in pending:
            problem = {"type": "InvalidInputError", "message": item.problem}
            call: ToolCall | None = None
            if not item.problem:
                # Args that fail the schema fail here, without starting a browser for them;
                # the call prepared here is the one the pool runs.
                try:
                    call = bind(pool.learnings, ref, item.args)
                except LearningError as exc:
                    problem = _error_record(exc)
            if problem["message"]:
                log.append(
                    {
                        "index": item.index,
                        "args": item.args,
                        "ok": False,
                        "error": problem,
                        "ms": 0.0,
                    }
                )
                _count(summary, state, ok=False, browser=False, progress=progress)
            elif item.index in started_before:
                log.append(
                    {
                        "index": item.index,
                        "args": item.args,
                        "ok": False,
                        "error": {
                            "type": "NotRetriedError",
                            "message": (
                                f"not retried: {site_id}/{tool} is a {spec.side_effect} tool "
                                "and an earlier run was stopped while it ran for this input; "
                                "it may or may not have run (run with --retry-failed to run "
                                "it again)"
                            ),
                        },
                        "ms": 0.0,
                    }
                )
                summary.interrupted += 1
                state.done += 1
                state.failed += 1
                if progress is not None:
                    progress(state)
            else:
                assert call is not None
                runnable.append(item)
                calls.append(call)
        if runnable:
            if journaled:
                journal_fd = os.open(journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            fd = journal_fd

            def on_send(position: int) -> None:
                # Must reach the disk before the tool may run: a kill right after this
                # leaves the index journaled, and the next run will not repeat it.
                if fd is not None:
                    os.write(fd, b"%d\n" % runnable[position].index)
                    os.fsync(fd)

            async with pool:
                # The rate and time left count from here, not from Chrome's start.
                state.started = time.monotonic()
                results_of = pool.map_calls(
                    calls, ordered=False, on_send=on_send if journaled else None
                )
                async with results_of:
                    async for result in results_of:
                        item = runnable[result.index]
                        record = _record(item, result)
                        try:
                            log.append(record)
                        except TypeError as exc:
                            # A Python tool may return what JSON cannot hold (a set, bytes).
                            record.pop("result", None)
                            record["ok"] = False
                            record["error"] = {
                                "type": "TypeError",
                                "message": f"the result is not JSON: {exc}",
                            }
                            result = PoolResult(result.index, result.args, False, error=exc)
                            log.append(record)
                        _count(
                            summary,
                            state,
                            ok=result.ok,
                            browser=result.error is not None and _is_browser_side(result.error),
                            progress=progress,
                        )
    finally:
        summary.seconds = time.monotonic() - began
        await log.close()
        if journal_fd is not None:
            os.close(journal_fd)
            with contextlib.suppress(OSError):
                if journal.stat().st_size == 0:
                    journal.unlink()  # nothing was sent (the pool did not start, say)
    if journaled and summary.skipped + summary.ran + summary.interrupted >= len(items):
        # Every input has its line: the journal has nothing left to protect.
        journal.unlink(missing_ok=True)
    return summary


def _record(item: InputItem, result: PoolResult) -> dict[str, Any]:
    record: dict[str, Any] = {"index": item.index, "args": item.args, "ok": result.ok}
    if result.ok:
        record["result"] = result.result
    else:
        assert result.error is not None
        record["error"] = _error_record(result.error)
    record["ms"] = round(result.ms, 3)
    return record


def _count(
    summary: BatchSummary,
    state: BatchProgress,
    *,
    ok: bool,
    browser: bool,
    progress: Callable[[BatchProgress], None] | None,
) -> None:
    summary.ran += 1
    state.done += 1
    if ok:
        summary.ok += 1
    else:
        summary.failed += 1
        state.failed += 1
        if browser:
            summary.browser_failed += 1
    if progress is not None:
        progress(state)


def _rewrite_without(output: Path, results: dict[int, dict[str, Any]], drop: set[int]) -> None:
    # Written beside the output and renamed over it, so a kill leaves the old or the new file.
    temporary = output.with_name(output.name + ".rewrite")
    with open(temporary, "wb") as handle:
        for index, record in results.items():
            if index not in drop:
                handle.write(_dumps(record) + b"\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, output)
