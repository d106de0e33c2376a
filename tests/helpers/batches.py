"""Running ``ego batch`` as a subprocess and checking what it wrote: its command, input and
output files, a wait on the output's growth (bounded)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from ego.demo import DemoServer
from tests.helpers.paths import ROOT


def batch_command() -> list[str]:
    """``python -m ego batch`` once the command is registered on the group."""
    from ego.cli.app import COMMANDS  # the commands, imported when run

    if "batch" in COMMANDS:
        return [sys.executable, "-m", "ego", "batch"]
    return [sys.executable, "-m", "ego.cli.batch_command"]


def start_batch(args: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*batch_command(), *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )


def run_batch_cli(
    args: list[str], env: dict[str, str] | None = None, timeout: float = 120
) -> tuple[int, str, str]:
    process = start_batch(args, env)
    out, err = process.communicate(timeout=timeout)
    return process.returncode, out, err


def count_lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def wait_for_lines(path: Path, wanted: int, process: subprocess.Popen[str]) -> int:
    """Watch the output grow until it holds ``wanted`` lines (the trigger is the file)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        lines = count_lines(path)
        if lines >= wanted:
            return lines
        if process.poll() is not None:
            out, err = process.communicate()
            pytest.fail(f"the batch ended first ({process.returncode}) at {lines}: {err}{out}")
        time.sleep(0.005)  # polling the file; the trigger is its content, not the time
    pytest.fail(f"the output never reached {wanted} lines")


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def product_inputs(shop: DemoServer, count: int) -> list[dict[str, Any]]:
    ids = sorted(shop.state.products)
    return [{"id": ids[i % len(ids)]} for i in range(count)]


def write_jsonl(path: Path, items: list[Any]) -> None:
    path.write_text("".join(json.dumps(item) + "\n" for item in items))


def check_complete(shop: DemoServer, output: Path, inputs: list[dict[str, Any]]) -> None:
    """Every input exactly once, each with the right product."""
    lines = records(output)
    counts = Counter(record["index"] for record in lines)
    assert sorted(counts) == list(range(len(inputs)))
    assert set(counts.values()) == {1}, [i for i, n in counts.items() if n > 1]
    for record in lines:
        assert record["ok"], record
        assert record["args"] == inputs[record["index"]]
        product = shop.state.products[record["args"]["id"]]
        assert record["result"]["name"] == product["name"]
        assert record["result"]["price"] == product["price"]
        assert isinstance(record["ms"], float)
