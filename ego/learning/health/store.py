"""The run record on disk: one SQLite file in ego's state folder, shared by every process.

``<state>/health.sqlite3`` (see :func:`ego.places.state_dir`) holds, per tool version (site,
tool, version hash):

- ``outcomes``: one row per outcome (``OK``, each failure kind, ``NEEDS_LOGIN``, ...) with its
  count, when it last happened and its last message: the totals, which never shrink;
- ``runs``: the latest :data:`KEEP_RUNS` runs that count and the latest :data:`KEEP_RUNS` that
  do not (each with its outcome, message, time, duration and front end), so the file stays
  small however long a tool lives, and ``suspect`` can always see the latest counted runs.

The file is in WAL mode, so readers never wait for a writer and writers queue behind one
another (``busy_timeout``); every write is one ``BEGIN IMMEDIATE`` transaction, which takes
the write lock up front instead of failing to upgrade a read. Many processes may write at
once and none loses a run. Only the writer thread (:mod:`.recorder`) writes; readers
(:mod:`.view`) open the file when they need it and never create it.

``sqlite3`` is imported when the file is first used: a command that runs no tool never pays
for it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from time import monotonic, sleep
from typing import TYPE_CHECKING, Final, NamedTuple

from ...places import state_dir
from .outcomes import UNCOUNTED

if TYPE_CHECKING:
    import sqlite3

__all__ = [
    "KEEP_RUNS",
    "SCHEMA_VERSION",
    "STORE_NAME",
    "Key",
    "OutcomeTotal",
    "Run",
    "VersionRecord",
    "connect",
    "read_records",
    "recorded_tools",
    "store_path",
    "write_runs",
]

#: The store's file name in the state folder.
STORE_NAME: Final = "health.sqlite3"
#: Runs kept per version, for counted and for uncounted runs each.
KEEP_RUNS: Final = 50
#: Milliseconds a writer or reader waits for another process's write lock.
BUSY_MS: Final = 10_000
#: The layout of the tables below (``PRAGMA user_version``).
SCHEMA_VERSION: Final = 1

#: A tool version: (site id, tool name, version hash).
Key = tuple[str, str, str]

_SCHEMA: Final = (
    """CREATE TABLE IF NOT EXISTS outcomes (
        site TEXT NOT NULL, tool TEXT NOT NULL, version TEXT NOT NULL, outcome TEXT NOT NULL,
        count INTEGER NOT NULL, last_at REAL NOT NULL, last_message TEXT NOT NULL,
        PRIMARY KEY (site, tool, version, outcome)
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS runs (
        id INTEGER PRIMARY KEY,
        site TEXT NOT NULL, tool TEXT NOT NULL, version TEXT NOT NULL,
        counted INTEGER NOT NULL, outcome TEXT NOT NULL, message TEXT NOT NULL,
        at REAL NOT NULL, seconds REAL NOT NULL, front_end TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS runs_latest ON runs (site, tool, version, counted, at)",
)

_UPSERT: Final = """
    INSERT INTO outcomes (site, tool, version, outcome, count, last_at, last_message)
    VALUES (?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (site, tool, version, outcome) DO UPDATE SET
        count = count + excluded.count,
        last_message = CASE WHEN excluded.last_at >= last_at
                            THEN excluded.last_message ELSE last_message END,
        last_at = MAX(last_at, excluded.last_at)
"""

_PRUNE: Final = """
    DELETE FROM runs WHERE site = ?1 AND tool = ?2 AND version = ?3 AND counted = ?4
    AND id NOT IN (
        SELECT id FROM runs WHERE site = ?1 AND tool = ?2 AND version = ?3 AND counted = ?4
        ORDER BY at DESC, id DESC LIMIT ?5
    )
"""


class Run(NamedTuple):
    """One recorded run (a tuple: the writer makes thousands a second).

    Attributes:
        site, tool, version: the tool version it ran.
        outcome: ``OK``, a failure kind or an uncounted outcome (:mod:`.outcomes`).
        message: the failure's message ("" for ``OK``).
        at: when it ended (seconds since the epoch).
        seconds: how long it took.
        front_end: who ran it (``python``, ``pool``, ``batch``, ``cli``, ``mcp``, ``skill``,
            ``test``).
    """

    site: str
    tool: str
    version: str
    outcome: str
    message: str
    at: float
    seconds: float
    front_end: str

    @property
    def key(self) -> Key:
        """The tool version it ran."""
        return (self.site, self.tool, self.version)


@dataclass(frozen=True, slots=True)
class OutcomeTotal:
    """How often one outcome happened to a version, and the last time."""

    count: int
    last_at: float
    last_message: str


@dataclass
class VersionRecord:
    """What the store knows of one tool version.

    Attributes:
        totals: per outcome, its count and last occurrence.
        latest: the latest counted runs, newest first (at most ``latest`` asked for).
        recent: the latest runs of any kind, newest first (as many as asked for).
    """

    totals: dict[str, OutcomeTotal] = field(default_factory=dict)
    latest: list[Run] = field(default_factory=list)
    recent: list[Run] = field(default_factory=list)


def store_path() -> Path:
    """Where the run record is now: ``health.sqlite3`` in ego's state folder."""
    return state_dir() / STORE_NAME


def connect(path: Path, *, create: bool) -> sqlite3.Connection | None:
    """A connection to the store at ``path``, in WAL mode, or None when it does not exist and
    ``create`` is False.

    Raises:
        sqlite3.Error, OSError: the file or its folder cannot be used.
    """
    import sqlite3

    if not create and not path.is_file():
        return None
    if create:
        path.parent.mkdir(parents=True, exist_ok=True)
    # isolation_level None: transactions are begun and ended here, explicitly.
    conn = sqlite3.connect(path, timeout=BUSY_MS / 1000, isolation_level=None)
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
        if create:
            _use_wal(conn)
            # NORMAL: a commit survives a crash of the process; only a power cut may lose the
            # last batch, which is the trade every WAL store makes for speed.
            conn.execute("PRAGMA synchronous = NORMAL")
            # Read first: only the process that finds no schema takes the write lock for it.
            if conn.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
                conn.execute("BEGIN IMMEDIATE")
                for statement in _SCHEMA:
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                conn.execute("COMMIT")
    except BaseException:
        conn.close()
        raise
    return conn


def _use_wal(conn: sqlite3.Connection) -> None:
    """Put the file in WAL mode, waiting (within :data:`BUSY_MS`) for processes that hold it.

    SQLite answers a journal-mode change that meets another connection's lock with "database
    is locked" at once, without its busy handler: several processes opening a new store
    together would otherwise lose a batch.
    """
    import sqlite3

    deadline = monotonic() + BUSY_MS / 1000
    pause = 0.005
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorcode & 0xFF != sqlite3.SQLITE_BUSY or monotonic() > deadline:
                raise
        sleep(pause)
        pause = min(pause * 2, 0.1)


def _text(text: str) -> str:
    """``text`` as SQLite stores it: a lone UTF-16 surrogate (a name or message cut mid
    emoji) becomes its ``\\udXXX`` escape, which UTF-8 can carry."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _storable(run: Run) -> Run:
    """``run`` with every text SQLite can store: one run's odd name never loses a batch."""
    site, tool, message = _text(run.site), _text(run.tool), _text(run.message)
    if site is run.site and tool is run.tool and message is run.message:
        return run
    return run._replace(site=site, tool=tool, message=message)


def write_runs(conn: sqlite3.Connection, runs: Sequence[Run]) -> None:
    """Add ``runs`` to the store in one transaction: totals, the runs kept, the pruning.

    Of a batch only the runs that could survive pruning are inserted, so a burst of
    thousands of calls costs a few rows.

    Raises:
        sqlite3.Error: the write failed; nothing of the batch was written.
    """
    totals: dict[tuple[str, str, str, str], tuple[int, float, str]] = {}
    kept: dict[tuple[str, str, str, int], list[Run]] = {}
    for run in map(_storable, runs):
        site, tool, version, outcome = run[:4]
        outcome_key = (site, tool, version, outcome)
        count, last_at, message = totals.get(outcome_key, (0, float("-inf"), ""))
        if run.at >= last_at:
            last_at, message = run.at, run.message
        totals[outcome_key] = (count + 1, last_at, message)
        kept.setdefault((site, tool, version, int(outcome not in UNCOUNTED)), []).append(run)
    rows = []
    for group in kept.values():
        group.sort(key=lambda r: r.at)
        rows += [
            (r.site, r.tool, r.version, int(r.outcome not in UNCOUNTED), *r[3:])
            for r in group[-KEEP_RUNS:]
        ]
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.executemany(_UPSERT, [(*key, *values) for key, values in totals.items()])
        conn.executemany(
            "INSERT INTO runs (site, tool, version, counted, outcome, message, at, seconds, "
            "front_end) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        conn.executemany(_PRUNE, [(*key, KEEP_RUNS) for key in kept])
        conn.execute("COMMIT")
    except BaseException:
        # The write's own error is the one to raise; a rollback that fails adds nothing.
        with contextlib.suppress(Exception):
            conn.execute("ROLLBACK")
        raise


def read_records(
    path: Path, keys: Iterable[Key], *, latest: int = 3, recent: int = 0
) -> dict[Key, VersionRecord]:
    """What the store at ``path`` holds for each of ``keys``; a version never run is absent.

    Args:
        path: the store.
        keys: the tool versions wanted.
        latest: how many of the latest counted runs to read per version.
        recent: how many of the latest runs of any kind to read per version.

    Raises:
        sqlite3.Error, OSError: the store exists but cannot be read.
    """
    wanted = list(dict.fromkeys(keys))
    if not wanted:
        return {}
    conn = connect(path, create=False)
    if conn is None:
        return {}
    found: dict[Key, VersionRecord] = {}
    try:
        for key in wanted:
            rows = conn.execute(
                "SELECT outcome, count, last_at, last_message FROM outcomes "
                "WHERE site = ? AND tool = ? AND version = ?",
                key,
            ).fetchall()
            if not rows:
                continue
            record = VersionRecord(
                totals={row[0]: OutcomeTotal(row[1], row[2], row[3]) for row in rows}
            )
            record.latest = _runs(conn, key, latest, counted_only=True)
            if recent:
                record.recent = _runs(conn, key, recent, counted_only=False)
            found[key] = record
    finally:
        conn.close()
    return found


def recorded_tools(path: Path) -> set[tuple[str, str]]:
    """Every (site id, tool name) the store at ``path`` holds an outcome of, any version.

    Raises:
        sqlite3.Error, OSError: the store exists but cannot be read.
    """
    conn = connect(path, create=False)
    if conn is None:
        return set()
    try:
        return {(site, tool) for site, tool in conn.execute("SELECT site, tool FROM outcomes")}
    finally:
        conn.close()


def _runs(conn: sqlite3.Connection, key: Key, limit: int, *, counted_only: bool) -> list[Run]:
    where = " AND counted = 1" if counted_only else ""
    rows = conn.execute(
        "SELECT outcome, message, at, seconds, front_end FROM runs "
        f"WHERE site = ? AND tool = ? AND version = ?{where} ORDER BY at DESC, id DESC LIMIT ?",
        (*key, limit),
    ).fetchall()
    return [Run(*key, *row) for row in rows]
