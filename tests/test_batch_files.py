"""ego.batch without Chrome: the output log's writes and syncs, and a batch over mock browsers
whose every counted result is on disk when progress is told."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from ego.batch import BatchProgress, run_batch
from ego.batch import files as batch_files
from ego.batch.files import SYNC_INTERVAL, ResultLog
from ego.cli import batch_command
from ego.errors import EgoError
from tests.helpers.pool import Fleet, product


@pytest.fixture
def fleet() -> Iterator[Fleet]:
    made = Fleet()
    yield made
    made.release_all()


class Syncs:
    """Stands in for ``os.fsync``: records when each ran, and lets a test wait for the next."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self._ran = threading.Condition()
        self._fsync = os.fsync

    def __call__(self, fd: int) -> None:
        self._fsync(fd)
        with self._ran:
            self.times.append(time.monotonic())
            self._ran.notify_all()

    def wait_for(self, count: int) -> None:
        with self._ran:
            assert self._ran.wait_for(lambda: len(self.times) >= count, timeout=10)


async def test_the_log_writes_whole_lines_and_syncs_at_most_every_interval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    syncs = Syncs()
    monkeypatch.setattr(batch_files.os, "fsync", syncs)
    path = tmp_path / "out.jsonl"
    log = ResultLog(path)
    log.append({"index": 0, "ok": True})
    log.write(b'{"index": 1, "ok": true}\n{"index": 2, "ok": true}\n')
    # In the file (the kernel) at once, before any sync: a killed process keeps them.
    assert path.read_bytes().count(b"\n") == 3
    await asyncio.to_thread(syncs.wait_for, 1)
    for number in range(3, 6):
        # Written right after a sync: the next one waits out the interval.
        log.write(b'{"index": %d, "ok": true}\n' % number)
        await asyncio.to_thread(syncs.wait_for, number - 1)
    await log.close()
    writes = syncs.times[:-1]  # the last one is close()'s
    gaps = [later - earlier for earlier, later in itertools.pairwise(writes)]
    assert len(gaps) == 3
    assert min(gaps) >= SYNC_INTERVAL * 0.9, gaps
    # close() syncs what is left, once more.
    assert len(syncs.times) == 5
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["index"] for line in lines] == list(range(6))


async def test_every_counted_result_is_in_the_output_when_progress_is_told(
    fleet: Fleet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source, output = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    source.write_text("".join(json.dumps({"id": f"q{n}"}) + "\n" for n in range(200)))
    writes = 0
    write = os.write

    def counted(fd: int, data: bytes | memoryview) -> int:
        nonlocal writes
        writes += 1
        return write(fd, data)

    monkeypatch.setattr(batch_files.os, "write", counted)
    seen: list[tuple[int, int]] = []

    def progress(state: BatchProgress) -> None:
        seen.append((state.done, output.read_bytes().count(b"\n")))

    pool = fleet.pool(2, per_browser=2, per_tab=4)
    summary = await run_batch(pool, "pool-test", "hold_read", source, output, progress=progress)
    assert (summary.ran, summary.ok) == (200, 200)
    assert [done for done, _ in seen] == list(range(1, 201))
    assert all(lines >= done for done, lines in seen), seen
    # Results that finished together went out in one write.
    assert writes < 200
    lines = [json.loads(line) for line in output.read_text().splitlines()]
    assert sorted(line["index"] for line in lines) == list(range(200))
    assert all(line["result"] == product(line["args"]["id"]) for line in lines)


@pytest.mark.parametrize(
    ("options", "per_browser", "per_tab", "concurrency"),
    [
        ([], 4, 1, None),
        (["--per-tab", "16"], 4, 16, None),
        (["--concurrency", "64", "--per-tab", "16"], 4, 16, 64),
        (["--concurrency", "10", "--per-tab", "4", "--browsers", "2"], 2, 4, 10),
    ],
)
def test_batch_spreads_its_concurrency_over_tabs_of_per_tab_calls(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    options: list[str],
    per_browser: int,
    per_tab: int,
    concurrency: int | None,
) -> None:
    made: list[dict[str, object]] = []

    class Stop(EgoError):
        """Raised where the pool would start."""

    def pool(**kwargs: object) -> None:
        made.append(kwargs)
        raise Stop("stopped here")

    monkeypatch.setattr(batch_command, "BrowserPool", pool)
    source = tmp_path / "in.jsonl"
    source.write_text('{"id": 1}\n')
    args = ["demo-shop", "get_product", "--input", str(source), "--output", str(tmp_path / "o")]
    result = CliRunner().invoke(batch_command.batch, [*args, *options])
    assert isinstance(result.exception, Stop), result.output
    assert len(made) == 1
    assert made[0]["per_browser"] == per_browser
    assert made[0]["per_tab"] == per_tab
    assert made[0]["concurrency"] == concurrency
