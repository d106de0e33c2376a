"""``ego batch`` stopped by Ctrl+C or SIGTERM: says where it stopped and how to resume."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from ego.demo import DemoServer
from tests.helpers.batches import (
    check_complete,
    count_lines,
    product_inputs,
    run_batch_cli,
    start_batch,
    wait_for_lines,
    write_jsonl,
)

pytestmark = pytest.mark.chrome


@pytest.fixture(scope="module")
def shop() -> Iterator[DemoServer]:
    with DemoServer(port=0) as server:
        yield server


@pytest.mark.parametrize(
    ("sent", "code", "cause"),
    [(signal.SIGINT, 130, "Ctrl+C"), (signal.SIGTERM, 143, "SIGTERM")],
)
def test_a_stopped_batch_says_where_and_how_to_resume(
    shop: DemoServer, tmp_path: Path, sent: signal.Signals, code: int, cause: str
) -> None:
    inputs = product_inputs(shop, 400)
    source, output = tmp_path / "items.jsonl", tmp_path / "results.jsonl"
    write_jsonl(source, inputs)
    args = ["demo-shop", "get_product", "--input", str(source), "--output", str(output)]
    args += ["--url", shop.url, "--concurrency", "2", "--no-json"]
    process = start_batch(args)
    try:
        wait_for_lines(output, 20, process)
        process.send_signal(sent)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == code, err
    kept = count_lines(output)
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"ego: stopped by {cause} at {kept}/400 ("), last
    assert "run the same command to resume: ego batch demo-shop get_product" in last
    # Every line is whole, and the command it names finishes the job.
    assert all(json.loads(line)["ok"] for line in output.read_text().splitlines())
    status, _, err = run_batch_cli(args)
    assert status == 0, err
    check_complete(shop, output, inputs)
