"""Resumable batch runs: one tool over a JSONL file of inputs, through a browser pool.

:func:`run_batch` reads one JSON args object per line of the input, runs the tool once per
input over a :class:`~ego.pool.BrowserPool`, and appends one JSON line per input to the
output as each result arrives::

    {"index": 7, "args": {...}, "ok": true, "result": ..., "ms": 12.3}
    {"index": 8, "args": {...}, "ok": false, "error": {"type": "...", "message": "..."}, "ms": 4.1}

``index`` is the 0-based line number in the input (blank lines are not inputs). The results
that finished together are written as whole lines with one ``write`` call on a file opened
for appending, before anything else runs and before they are counted, so a run killed at any
point (SIGKILL included) leaves only whole lines behind and loses no result it counted, save
for a machine crash, which can tear the last one; the lines are ``fsync``'d in groups by a
thread, at most every :data:`~ego.batch.files.SYNC_INTERVAL` seconds. Running the same batch
again reads the output, drops a torn last line, skips every index already there, and runs the
rest: in the end the output holds each input exactly once.

Write and irreversible tools are journaled: the index goes to ``<output>.started`` (fsync'd)
right before the tool is sent. An index that is journaled but has no result was cut short by
a kill; a later run records it as failed (``NotRetriedError``: it may or may not have run)
instead of running it again. ``retry_failed=True`` runs failed inputs again, that one too.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..calls import CallOptions, ToolCall, ToolRef, bind, resolve
from ..errors import BrowserError, LearningError
from ..learning.health.origin import front_end
from ..pool import BrowserPool, PoolResult
from ..trace.failures import FailureTraces
from ..trace.options import TraceOptions
from .files import (
    InputItem,
    ResultLog,
    check_matches,
    dumps,
    error_record,
    journal_path,
    read_inputs,
    read_journal,
    read_results,
    rewrite_without,
)
from .lock import hold_output
from .progress import BatchProgress, BatchSummary

__all__ = ["run_batch"]


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
    trace_failures: str | os.PathLike[str] | None = None,
    trace_options: TraceOptions | None = None,
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
        trace_failures: keep a trace of each input that fails in this folder
            (``input-<index>.trace.jsonl`` and a time stamp), and name it in the input's
            output line (``trace``); passing inputs keep nothing (see
            :mod:`ego.trace.failures`).
        trace_options: what each of those traces keeps, and its bound.

    Raises:
        UnknownSiteError, UnknownToolError, InvalidManifestError, ConfirmationRequiredError:
            before anything starts.
        BatchFileError: the input is unreadable, the output is corrupt in its middle or was
            made from another input, or another run holds the output (its lock,
            ``<output>.lock``, is held for the run's whole life).
        TraceFileError: ``trace_failures`` cannot be made or written.
        ConnectionFailedError, ChromeLaunchError, ...: no browser of the pool started.
        PoolExhaustedError: every browser died and none could be replaced; the results
            written so far stay, and the next run continues from them.

    Cancelling (Ctrl+C) stops the calls; every result already written stays.
    """
    source, output = Path(input_path), Path(output_path)
    with front_end("batch"):
        ref = resolve(pool.learnings, site_id, tool, CallOptions(timeout=timeout, confirm=confirm))
        with hold_output(output):
            if trace_failures is None:
                return await _run(
                    pool, ref, source, output, retry_failed=retry_failed, progress=progress
                )
            labels: dict[int, str] = {}
            traces = FailureTraces(
                trace_failures, trace_options, label=lambda run: labels.get(id(run.call))
            )
            async with traces:
                return await _run(
                    pool, ref, source, output, retry_failed=retry_failed, progress=progress,
                    traces=(traces, labels),
                )  # fmt: skip


async def _run(
    pool: BrowserPool,
    ref: ToolRef,
    source: Path,
    output: Path,
    *,
    retry_failed: bool,
    progress: Callable[[BatchProgress], None] | None,
    traces: tuple[FailureTraces, dict[int, str]] | None = None,
) -> BatchSummary:
    site_id, tool, spec = ref.site_id, ref.tool, ref.spec
    journaled = spec.side_effect != "read"
    items = read_inputs(source)
    by_index = {item.index: item for item in items}
    results = read_results(output, repair=True)
    check_matches(results, by_index, output, source)
    journal = journal_path(output)
    started_before = read_journal(journal)

    if retry_failed:
        failed = {index for index, record in results.items() if not record.get("ok")}
        interrupted = {i for i in started_before if i not in results and i in by_index}
        if failed:
            rewrite_without(output, results, failed)
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
    log = ResultLog(output)
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
                    problem = error_record(exc)
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
                state.add(failed=True)
                if progress is not None:
                    progress(state)
            else:
                assert call is not None
                runnable.append(item)
                calls.append(call)
                if traces is not None:
                    traces[1][id(call)] = f"input-{item.index}"
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
                # The rate and time left count from the first result after this, not
                # from Chrome's start (see BatchProgress).
                state.started = time.monotonic()
                results_of = pool.map_calls(
                    calls, ordered=False, on_send=on_send if journaled else None
                )
                async with results_of:
                    # A group is what finished together: its lines go out in one write
                    # before anything else runs, as one line each would.
                    async for group in results_of.groups():
                        lines: list[bytes] = []
                        outcomes: list[PoolResult] = []
                        for result in group:
                            line, result = _line(
                                runnable[result.index],
                                result,
                                traces[0].labelled if traces is not None else None,
                            )
                            lines.append(line)
                            outcomes.append(result)
                        log.write(b"".join(lines))
                        for result in outcomes:
                            error = result.error
                            browser = error is not None and _is_browser_side(error)
                            _count(summary, state, ok=result.ok, browser=browser, progress=progress)
    finally:
        summary.seconds = time.monotonic() - began
        if state.first_at is not None:
            summary.first_result = state.first_at - began
        summary.rate = state.rate
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


def _line(
    item: InputItem, result: PoolResult, traced: dict[str, Path] | None = None
) -> tuple[bytes, PoolResult]:
    """The output line of ``result``, and the result as counted: a Python tool may return
    what JSON cannot hold (a set, bytes), which makes a failed result instead. A failure
    whose trace was kept (in ``traced``, by the input's label) names it."""
    record = _record(item, result)
    trace = traced.get(f"input-{item.index}") if traced is not None and not result.ok else None
    if trace is not None:
        record["trace"] = str(trace)
    try:
        return dumps(record) + b"\n", result
    except TypeError as exc:
        record.pop("result", None)
        record["ok"] = False
        record["error"] = {"type": "TypeError", "message": f"the result is not JSON: {exc}"}
        return dumps(record) + b"\n", PoolResult(result.index, result.args, False, error=exc)


def _record(item: InputItem, result: PoolResult) -> dict[str, Any]:
    record: dict[str, Any] = {"index": item.index, "args": item.args, "ok": result.ok}
    if result.ok:
        record["result"] = result.result
    else:
        assert result.error is not None
        record["error"] = error_record(result.error)
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
    state.add(failed=not ok)
    if ok:
        summary.ok += 1
    else:
        summary.failed += 1
        if browser:
            summary.browser_failed += 1
    if progress is not None:
        progress(state)
