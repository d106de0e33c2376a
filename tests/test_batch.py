"""``ego batch``: a real subprocess killed with SIGKILL half-way, then resumed.

The batch runs against the demo shop served from this process; its Chromes are headless
Chromium started by the subprocess. A write tool's journal is tested with the ``pool-test``
site and the holding server of ``test_pool``.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from click.testing import CliRunner

from ego.batch import read_results
from ego.cli.batch_command import batch
from ego.demo import DemoServer
from ego.errors import BatchFileError
from tests.helpers.batches import (
    check_complete,
    product_inputs,
    records,
    run_batch_cli,
    start_batch,
    wait_for_lines,
    write_jsonl,
)
from tests.helpers.paths import POOL_LEARNINGS
from tests.helpers.pool import HoldServer
from tests.helpers.processes import still_alive_after

# Tests that start Chrome are marked `chrome` one by one (or through a browser fixture);
# the rest need none and run in the fast tier.

ROOT = Path(__file__).resolve().parent.parent


def descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []


def kill_and_check_chromes_end(process: subprocess.Popen[str]) -> list[psutil.Process]:
    """SIGKILL the batch process; its Chromes (and watchdogs) must end by themselves."""
    tree = descendants(process.pid)
    assert any("chrom" in (p.name() or "").lower() for p in tree), tree
    process.send_signal(signal.SIGKILL)
    process.communicate()
    assert process.returncode == -signal.SIGKILL
    alive = still_alive_after(tree, 30)
    assert not alive, f"left running after the batch was killed: {alive}"
    return tree


@pytest.fixture(scope="module")
def shop() -> Iterator[DemoServer]:
    with DemoServer(port=0) as server:
        yield server


@pytest.mark.chrome
def test_batch_killed_half_way_then_resumed(shop: DemoServer, tmp_path: Path) -> None:
    inputs = product_inputs(shop, 300)
    source, output = tmp_path / "items.jsonl", tmp_path / "results.jsonl"
    write_jsonl(source, inputs)
    args = [
        "demo-shop",
        "get_product",
        "--input",
        str(source),
        "--output",
        str(output),
        "--url",
        shop.url,
        "--browsers",
        "2",
        "--concurrency",
        "8",
    ]

    first = start_batch(args)
    wait_for_lines(output, 150, first)
    kill_and_check_chromes_end(first)
    done_before = output.read_bytes()
    kept = done_before.count(b"\n")
    assert 150 <= kept < 300, kept
    # What a crash in the middle of a write would leave: a torn last line.
    with open(output, "ab") as handle:
        handle.write(b'{"index": 299, "args": {"id"')

    code, out, err = run_batch_cli(args)
    assert code == 0, err
    summary = json.loads(out)
    assert summary["skipped"] == kept
    assert summary["ran"] == 300 - kept
    # Progress reaches a stderr that is no terminal, the summary being JSON: a line at every
    # tenth, no rate or time left before there is one, and at the end the summary's rate.
    progress = [line for line in err.splitlines() if " done, " in line]
    assert progress, err
    assert progress[0] == f"1/{300 - kept} done, 0 failed, ?/s, ? left ({kept} done before)"
    last = re.search(r", ([\d.]+|\?)/s, ", progress[-1])
    assert last is not None, progress[-1]
    if summary["rate"] is None:
        assert last.group(1) == "?"
    else:
        assert float(last.group(1)) == pytest.approx(summary["rate"], abs=0.051)
    assert summary["failed"] == summary["failed_before"] == 0
    # The torn tail was cut off, and nothing written before the kill changed.
    assert output.read_bytes().startswith(done_before)
    check_complete(shop, output, inputs)

    # A third run has nothing to do and starts no browser.
    code, out, _ = run_batch_cli(args)
    assert code == 0
    assert json.loads(out)["ran"] == 0
    check_complete(shop, output, inputs)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An agent workspace whose learnings/ holds the pool-test site."""
    folder = tmp_path / "workspace"
    (folder / "learnings").mkdir(parents=True)
    # A copy: a site folder that links outside its learnings root is refused.
    shutil.copytree(POOL_LEARNINGS / "pool-test", folder / "learnings" / "pool-test")
    return folder


@pytest.mark.chrome
def test_a_write_cut_short_by_a_kill_is_not_run_again(tmp_path: Path, workspace: Path) -> None:
    holder = HoldServer(hold_only={"b"})
    try:
        source, output = tmp_path / "writes.jsonl", tmp_path / "done.jsonl"
        write_jsonl(source, [{"id": "a"}, {"id": "b"}, {"id": "c"}])
        args = [
            "pool-test",
            "hold_write",
            "--input",
            str(source),
            "--output",
            str(output),
            "--url",
            holder.url(),
            "--concurrency",
            "1",
        ]
        env = {"EGO_WORKSPACE": str(workspace)}
        first = start_batch(args, env)
        assert holder.wait_arrived("b")  # a is done, b is in flight and held
        kill_and_check_chromes_end(first)
        assert [r["index"] for r in records(output)] == [0]
        holder.release()

        code, out, err = run_batch_cli(args, env)
        assert code == 4, err  # a write was cut short: the file holds a browser-side failure
        summary = json.loads(out)
        assert summary["interrupted"] == 1
        lines = {r["index"]: r for r in records(output)}
        assert sorted(lines) == [0, 1, 2]
        assert lines[1]["error"]["type"] == "NotRetriedError"
        assert "may or may not have run" in lines[1]["error"]["message"]
        assert holder.counts == Counter({"a": 1, "b": 1, "c": 1})

        # Asked for explicitly, it runs again (and only it).
        code, out, err = run_batch_cli([*args, "--retry-failed"], env)
        assert code == 0, err
        assert json.loads(out)["ran"] == 1
        assert holder.counts == Counter({"a": 1, "b": 2, "c": 1})
        lines = {r["index"]: r for r in records(output)}
        assert sorted(lines) == [0, 1, 2]
        assert all(r["ok"] for r in lines.values())
        assert not (tmp_path / "done.jsonl.started").exists()
    finally:
        holder.close()


@pytest.mark.chrome
def test_per_tab_runs_the_concurrency_in_fewer_tabs(tmp_path: Path, workspace: Path) -> None:
    # Six held at once: Chrome itself sends at most six requests to one host at a time.
    holder = HoldServer(hold_only={f"r{number}" for number in range(6)})
    try:
        source, output = tmp_path / "reads.jsonl", tmp_path / "out.jsonl"
        write_jsonl(source, [{"id": f"r{number}"} for number in range(10)])
        args = ["pool-test", "hold_read", "--input", str(source), "--output", str(output)]
        args += ["--url", holder.url(), "--concurrency", "6", "--per-tab", "3"]
        process = start_batch(args, {"EGO_WORKSPACE": str(workspace)})
        try:
            # Six calls held by the server at once, from two tabs of one Chrome.
            for number in range(6):
                assert holder.wait_arrived(f"r{number}")
            assert holder.counts["r6"] == 0
            holder.release()
            out, err = process.communicate(timeout=120)
        finally:
            if process.poll() is None:
                process.kill()
                process.communicate()
        assert process.returncode == 0, err
        assert json.loads(out)["ok"] == 10
        assert holder.pages == 2
        lines = {r["index"]: r for r in records(output)}
        assert sorted(lines) == list(range(10))
        assert all(r["result"]["body"] == "released" for r in lines.values())
    finally:
        holder.close()


def test_output_files_that_cannot_be_resumed_are_refused(tmp_path: Path) -> None:
    source, output = tmp_path / "items.jsonl", tmp_path / "results.jsonl"
    write_jsonl(source, [{"id": 1}, {"id": 2}])
    good = '{"index": 0, "args": {"id": 1}, "ok": true, "result": 1, "ms": 1.0}\n'

    # A corrupt line in the middle is not a torn tail: refuse rather than guess.
    output.write_text("not json\n" + good)
    with pytest.raises(BatchFileError, match="line 1 is not a result line"):
        read_results(output)

    # A torn tail is dropped, and cut off with repair=True.
    output.write_text(good + '{"index": 1, "ar')
    assert list(read_results(output, repair=True)) == [0]
    assert output.read_text() == good

    # An output made from another input: one clear line, exit code 2, no browser started.
    write_jsonl(source, [{"id": 5}, {"id": 2}])
    result = CliRunner().invoke(
        batch,
        ["demo-shop", "get_product", "--input", str(source), "--output", str(output), "--no-json"],
    )
    assert result.exit_code == 2, result.output
    assert result.output.startswith("ego: BatchFileError: ")
    assert "does not belong to" in result.output
    assert len(result.output.strip().splitlines()) == 1

    # An irreversible tool without --confirm is refused before anything starts.
    result = CliRunner().invoke(
        batch,
        ["demo-shop", "post_review", "--input", str(source), "--output", str(tmp_path / "x")],
    )
    assert result.exit_code == 3
    assert "--confirm" in result.output
