"""Recording runs without slowing them: the call appends a tuple, a thread writes the store.

The call path (:meth:`ego.site.Site.run_call`) calls :func:`record_ok` or
:func:`record_failure`. Each reads the front end (:mod:`.origin`), reads the clock and
appends one tuple to an in-memory queue; nothing else happens on the call's path. A daemon
thread, started by the first run a process records, wakes when runs arrive, waits a moment
for more (:data:`BATCH_SECONDS`) and writes them in one transaction (:mod:`.store`), working
out each run's tool version and wall-clock time there rather than on the call's path.

Nothing here can fail or hold up a call. When the store cannot be written (a read-only state
folder, a corrupt file), the batch is dropped and a warning is logged once per process;
later batches are tried again. At most :data:`MAX_PENDING` runs wait in memory; beyond that
the oldest are dropped, and a warning says so (once per process). :func:`flush` waits, within
a bound, until what this process recorded is on disk (a reader in this process calls it
before reading), and at exit the writer gets :data:`EXIT_SECONDS` to finish: an ego command is
a short process, and its run must not be lost, but exit never waits on a locked store for
longer than that.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import threading
import time
from collections import deque
from pathlib import Path
from time import perf_counter
from typing import TYPE_CHECKING, Final, Protocol

from ..catalog.registry import Learnings, LoadedSource, SiteEntry
from .origin import FRONT_END
from .outcomes import OK, classify
from .store import Key, Run, connect, store_path, write_runs
from .versions import python_version, tool_version

if TYPE_CHECKING:
    import sqlite3

    from ..catalog.manifest import ToolSpec

__all__ = [
    "BATCH_SECONDS",
    "EXIT_SECONDS",
    "FLUSH_SECONDS",
    "MAX_PENDING",
    "RunRecorder",
    "flush",
    "process_recorder",
    "record_as",
    "record_failure",
    "record_judged",
    "record_ok",
    "record_refusal",
]

logger = logging.getLogger("ego.health")

#: Seconds the writer waits after the first run of a batch for more to arrive.
BATCH_SECONDS: Final = 0.25
#: Seconds :func:`flush` waits at most for the writer.
FLUSH_SECONDS: Final = 5.0
#: Seconds the writer may take to finish at exit.
EXIT_SECONDS: Final = 3.0
#: Runs that may wait in memory for the writer; the oldest are dropped beyond this.
MAX_PENDING: Final = 100_000


class _Ref(Protocol):
    """What a run needs of the call's :class:`ego.calls.ToolRef` (a layer above this one)."""

    @property
    def site_id(self) -> str: ...

    @property
    def tool(self) -> str: ...

    @property
    def entry(self) -> SiteEntry: ...

    @property
    def spec(self) -> ToolSpec: ...


class _Call(Protocol):
    """What a run needs of the call (:class:`ego.calls.ToolCall`)."""

    @property
    def ref(self) -> _Ref: ...

    @property
    def source(self) -> LoadedSource | None: ...


#: What a run was of: a call, a loaded source (a skill's), or its key ready made.
Subject = _Call | LoadedSource | Key
#: A run waiting for the writer: subject, front end, clock at start and end, outcome (None
#: for OK), message.
Pending = tuple[Subject, str, float, float, str | None, str]


class RunRecorder:
    """The queue of runs and the thread that writes them (one per process: :func:`recorder`).

    Args:
        batch_seconds: how long the writer gathers runs before writing.
        max_pending: runs that may wait in memory.
    """

    def __init__(
        self, *, batch_seconds: float = BATCH_SECONDS, max_pending: int = MAX_PENDING
    ) -> None:
        self.batch_seconds = batch_seconds
        self.max_pending = max_pending
        #: The runs waiting for the writer (the same deque for the recorder's whole life, so
        #: the call's side may hold on to its ``append``).
        self.pending: deque[Pending | threading.Event] = deque(maxlen=max_pending)
        self._reset()

    def _reset(self) -> None:
        self.pending.clear()
        #: True while the writer sleeps (or has not started): the next run must wake it.
        self.idle = True
        #: Runs this process wrote to the store.
        self.written = 0
        self._wake = threading.Event()
        self._hurry = threading.Event()
        self._start_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._closing = False
        self._warned = False
        self._overflow_warned = False
        self._conn: sqlite3.Connection | None = None
        self._conn_path: Path | None = None

    def add(self, item: Pending) -> None:
        """Queue one run for the writer."""
        self.pending.append(item)
        if self.idle:
            self.nudge()

    def nudge(self) -> None:
        """Wake the writer, starting it the first time."""
        if self._thread is None:
            with self._start_lock:
                if self._thread is None:
                    thread = threading.Thread(target=self._loop, name="ego-health", daemon=True)
                    thread.start()
                    self._thread = thread
        self._wake.set()

    def flush(self, timeout: float = FLUSH_SECONDS) -> bool:
        """Wait until every run queued so far is written (or dropped); False on timeout."""
        thread = self._thread
        if thread is None or not thread.is_alive():
            return not self.pending
        if self.idle and not self.pending:
            return True
        done = threading.Event()
        self.pending.append(done)
        self._hurry.set()
        self._wake.set()
        return done.wait(timeout)

    def close(self, timeout: float = EXIT_SECONDS) -> None:
        """Write what is queued and stop the writer, waiting at most ``timeout`` seconds."""
        thread = self._thread
        if thread is None:
            return
        self._closing = True
        self._hurry.set()
        self._wake.set()
        thread.join(timeout)

    def after_fork(self) -> None:
        """In a forked child: start afresh. The parent writes the runs it queued."""
        self._reset()

    def _loop(self) -> None:
        while True:
            self.idle = True
            # Checked after ``idle`` is published: a run queued before this line is seen
            # here, one queued after it finds ``idle`` set and wakes the writer.
            if not self.pending and not self._closing:
                self._wake.wait()
            self.idle = False
            self._wake.clear()
            if not self._closing:
                self._hurry.wait(self.batch_seconds)
            self._hurry.clear()
            try:
                self._drain()
            except Exception as exc:  # the writer must outlive anything a batch does
                self._warn(exc)
            if self._closing and not self.pending:
                self._close_connection()
                return

    def _drain(self) -> None:
        # Checked here, off the call's path: a full queue is the only sign that the deque
        # dropped runs, since it drops the oldest without a word.
        if len(self.pending) >= self.max_pending and not self._overflow_warned:
            self._overflow_warned = True
            logger.warning(
                "ego: more than %d runs waited for the run record's writer; the oldest of them "
                "were not recorded",
                self.max_pending,
            )
        batch: list[Pending] = []
        waiting: list[threading.Event] = []
        while True:
            try:
                item = self.pending.popleft()
            except IndexError:
                break
            if isinstance(item, threading.Event):
                waiting.append(item)
            else:
                batch.append(item)
        try:
            if batch:
                self._write(batch)
        finally:
            for done in waiting:
                done.set()

    def _write(self, batch: list[Pending]) -> None:
        # One pair of clock readings turns every run's end into wall-clock time.
        offset = time.time() - perf_counter()
        # The calls of one tool version share its loaded source: its key is worked out once.
        keys: dict[int, Key | None] = {}
        runs = []
        for subject, front, started, ended, outcome, message in batch:
            if isinstance(subject, tuple):
                key: Key | None = subject
            else:
                marker = _marker(subject)
                if marker not in keys:
                    keys[marker] = _key(subject)
                key = keys[marker]
            if key is not None:
                runs.append(
                    Run(*key, outcome or OK, message, offset + ended, ended - started, front)
                )
        if not runs:
            return
        path = store_path()
        try:
            if self._conn is None or self._conn_path != path:
                self._close_connection()
                self._conn = connect(path, create=True)
                self._conn_path = path
            assert self._conn is not None
            write_runs(self._conn, runs)
        except Exception as exc:
            self._close_connection()
            self._warn(exc, path)
            return
        self.written += len(runs)

    def _close_connection(self) -> None:
        if self._conn is not None:
            # A connection that cannot close cleanly is let go all the same.
            with contextlib.suppress(Exception):
                self._conn.close()
        self._conn = None
        self._conn_path = None

    def _warn(self, exc: BaseException, path: Path | None = None) -> None:
        if self._warned:
            return
        self._warned = True
        where = f" at {path}" if path is not None else ""
        logger.warning(
            "ego: the run record%s cannot be written (%s: %s); runs are not recorded until it "
            "can be (check that ego's state folder is writable, see `ego doctor`)",
            where,
            type(exc).__name__,
            exc,
        )


def _marker(subject: _Call | LoadedSource) -> int:
    """What runs of one tool version share: its loaded source (a Python tool: its spec)."""
    if isinstance(subject, LoadedSource):
        return id(subject)
    source = subject.source
    return id(source) if source is not None else id(subject.ref.spec)


def _key(subject: Subject) -> Key | None:
    """The tool version a run was of; None for a Python tool whose file is gone."""
    if isinstance(subject, tuple):
        return subject
    if isinstance(subject, LoadedSource):
        return (subject.site_id, subject.tool, subject.version)
    source = subject.source
    if source is not None:
        return (source.site_id, source.tool, source.version)
    ref = subject.ref
    version = python_version(ref.entry.directory / ref.spec.path)
    return None if version is None else (ref.site_id, ref.tool, version)


_RECORDER = RunRecorder()
# Bound once: the hot call looks neither up.
_append = _RECORDER.pending.append
_front = FRONT_END.get
atexit.register(lambda: _RECORDER.close())
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=lambda: _RECORDER.after_fork())


def process_recorder() -> RunRecorder:
    """This process's recorder."""
    return _RECORDER


def record_ok(subject: Subject, started: float) -> None:
    """Record a run that returned; ``started`` is :func:`time.perf_counter` at its start.

    The hot call's whole cost of being recorded: keep it to a context read, a clock read and
    an append.
    """
    front = _front()
    if front is not None:
        _append((subject, front, started, perf_counter(), None, ""))
        if _RECORDER.idle:
            _RECORDER.nudge()


def record_failure(subject: Subject, started: float, exc: BaseException) -> None:
    """Record a run that raised ``exc`` (classified by its type, see :mod:`.outcomes`)."""
    front = FRONT_END.get()
    if front is not None:
        outcome, message = classify(exc)
        _RECORDER.add((subject, front, started, perf_counter(), outcome, message))


def record_as(
    front_end: str, subject: Subject, started: float, exc: BaseException | None = None
) -> None:
    """Record a run under ``front_end`` (a skill's run is the ``skill`` front end's), unless
    the code running now records nothing (:func:`~.origin.unrecorded`)."""
    if _front() is not None:
        outcome, message = classify(exc) if exc is not None else (None, "")
        _RECORDER.add((subject, front_end, started, perf_counter(), outcome, message))


def record_refusal(
    learnings: Learnings, entry: SiteEntry, spec: ToolSpec, exc: BaseException
) -> None:
    """Record a call of ``spec`` refused before it ran (``exc``, a ConfirmationRequiredError).

    The refusal happens before the tool's code is loaded, so its version is worked out here:
    the refusal path is not the hot call's.
    """
    if _front() is not None:
        version = tool_version(learnings, entry, spec)
        if version is not None:
            record_failure((entry.site_id, spec.name, version), perf_counter(), exc)


def record_judged(
    subject: Subject, started: float, ended: float, outcome: str, message: str, *, front_end: str
) -> None:
    """Record a run whose outcome the caller judged (a test case: ``OK`` when it passed);
    ``started`` and ``ended`` are :func:`time.perf_counter` readings around the run."""
    _RECORDER.add((subject, front_end, started, ended, outcome, message))


def flush(timeout: float = FLUSH_SECONDS) -> bool:
    """Wait until this process's recorded runs are in the store; False when it took longer
    than ``timeout`` seconds (the runs are still written later)."""
    return _RECORDER.flush(timeout)
