"""Traces from the command line and MCP: ``ego run --trace``, ``ego batch --trace-failures``,
``ego record --session --trace``, ``ego mcp --trace-failures`` and the MCP tools
``start_trace`` and ``stop_trace`` (served with ``ego mcp --trace-tools``, held to the operator's
file limits)."""

from __future__ import annotations

import json
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

import ego
from ego.demo import DemoServer
from ego.trace.reading import read_trace
from tests.helpers.browsers import websocket_url
from tests.helpers.commands import ego_async, ego_env, http_endpoint
from tests.helpers.mcp_client import McpClient, text_of, value_of
from tests.helpers.page_server import PageServer
from tests.helpers.paths import ROOT

pytestmark = pytest.mark.chrome

#: A tool of the shop that reads the cart and fails for n == 2, as a broken site would.
FUSSY = """async (args) => {
  const cart = await (await fetch("/api/cart")).json();
  if (args.n === 2) throw new Error("SKILL_BROKEN: the cart has no count for input 2");
  return {n: args.n, count: cart.count};
}
"""


@pytest.fixture(scope="module")
def shop() -> Iterator[DemoServer]:
    server = DemoServer(port=0).start()
    yield server
    server.close()


@pytest.fixture
def endpoint(ported_browser: ego.Browser) -> str:
    return http_endpoint(websocket_url(ported_browser))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A workspace whose demo shop has the tool ``fussy``."""
    root = tmp_path / "workspace"
    site = root / "learnings" / "demo-shop"
    shutil.copytree(ROOT / "learnings" / "demo-shop", site)
    (site / "browser-tools" / "fussy.js").write_text(FUSSY)
    manifest = json.loads((site / "manifest.json").read_text())
    manifest["browserTools"]["fussy"] = {
        "description": "the cart's count, failing for n == 2",
        "path": "browser-tools/fussy.js",
        "args": {"n": {"type": "integer", "required": True}},
    }
    (site / "manifest.json").write_text(json.dumps(manifest))
    return root


async def test_ego_run_trace_writes_the_trace_of_the_run_and_says_where(
    workspace: Path, endpoint: str, shop: DemoServer, tmp_path: Path
) -> None:
    trace = tmp_path / "run.trace.jsonl"
    env = ego_env(tmp_path / "profiles", workspace=workspace)
    result = await ego_async(
        "run", "demo-shop", "fussy", "--arg", "n=2", "--start-url", f"demo-shop={shop.url}",
        "--trace", str(trace), "--trace-scale", "0.25", "--endpoint", endpoint, "--no-json",
        env=env,
    )  # fmt: skip
    assert result.returncode != 0, result
    assert f"trace: {trace} (1 step, 1 failed); see it with: ego show-trace {trace} --open" in (
        result.stderr
    )
    assert stat.S_IMODE(trace.stat().st_mode) == 0o600
    read = read_trace(trace)
    assert read.header["subject"] == "ego run demo-shop fussy"
    assert read.header["options"]["screenshot_scale"] == 0.25
    (step,) = read.steps
    assert (step["tool"], step["outcome"], step["args"]) == ("fussy", "SKILL_BROKEN", {"n": 2})
    assert any(r["type"] == "request" and r["url"].endswith("/api/cart") for r in read.records)


async def test_ego_batch_keeps_the_trace_of_each_failing_input_only(
    workspace: Path, endpoint: str, shop: DemoServer, tmp_path: Path
) -> None:
    inputs = tmp_path / "in.jsonl"
    inputs.write_text("".join(json.dumps({"n": n}) + "\n" for n in (1, 2, 3)))
    output, folder = tmp_path / "out.jsonl", tmp_path / "failures"
    env = ego_env(tmp_path / "profiles", workspace=workspace)
    result = await ego_async(
        "batch", "demo-shop", "fussy", "--input", str(inputs), "--output", str(output),
        "--url", shop.url, "--trace-failures", str(folder), "--endpoint", endpoint, env=env,
        timeout=120,
    )  # fmt: skip
    assert result.returncode == 3, result  # some inputs failed
    lines = {line["index"]: line for line in map(json.loads, output.read_text().splitlines())}
    assert [lines[i]["ok"] for i in (0, 1, 2)] == [True, False, True]
    (kept,) = folder.iterdir()
    assert lines[1]["trace"] == str(kept)
    assert "trace" not in lines[0]
    assert kept.name.endswith("-input-1.trace.jsonl")
    (step,) = read_trace(kept).steps
    assert (step["input"], step["args"], step["outcome"]) == ("input-1", {"n": 2}, "SKILL_BROKEN")


async def test_ego_record_session_trace_makes_a_step_of_each_page_the_page_loaded(
    endpoint: str, shop: DemoServer, server: PageServer, tmp_path: Path
) -> None:
    # The session starts on a page whose own script goes on to a product: a load no action
    # of ego made, as a person's click would be.
    hop = server.route(
        "/trace/hop",
        f"<script>addEventListener('load', () => location.href = "
        f"{json.dumps(shop.url_for('/product/4'))})</script>",
    )
    har, trace = tmp_path / "session.har", tmp_path / "session.trace.jsonl"
    result = await ego_async(
        "record", hop, "--session", "demo-shop", "--har", str(har), "--until-url",
        "*/product/4", "--trace", str(trace), "--endpoint", endpoint,
        env=ego_env(tmp_path / "profiles"),
    )  # fmt: skip
    assert result.returncode == 0, result
    assert result.json()["trace"]["trace"] == str(trace)
    read = read_trace(trace)
    kinds = [(s["kind"], s["verb"]) for s in read.steps]
    assert kinds == [("action", "navigate"), ("page", "load")]
    loaded = read.steps[-1]
    assert loaded["url"].endswith("/product/4")
    assert "jpeg" in loaded["screenshot"]
    assert loaded["snapshot"]["url"].endswith("/product/4")


async def test_ego_record_trace_goes_with_a_session(tmp_path: Path) -> None:
    result = await ego_async(
        "record", "http://127.0.0.1:9/", "--har", str(tmp_path / "x.har"),
        "--trace", str(tmp_path / "x.jsonl"), env=ego_env(tmp_path / "profiles"),
    )  # fmt: skip
    assert result.returncode == 2
    assert "--trace goes with --session" in result.stderr


async def test_mcp_traces_a_session_and_keeps_the_traces_of_failures(
    shop: DemoServer, tmp_path: Path
) -> None:
    output, failures = tmp_path / "out", tmp_path / "failures"
    client = McpClient(
        ego_env(tmp_path / "profiles"),
        tmp_path,
        tmp_path / "server-stderr.log",
        [
            "--output-dir",
            str(output),
            "--trace-tools",
            "--trace-failures",
            str(failures),
            "--allow-file-urls",
        ],
    )
    await client.start()
    try:
        started = value_of(await client.call("start_trace", {"path": "agent.trace.jsonl"}))
        assert started == {"trace": str(output / "agent.trace.jsonl"), "running": True}
        twice = await client.call("start_trace", {})
        assert twice.is_error
        assert "a trace is running already" in text_of(twice)
        value_of(await client.call("navigate", {"url": shop.url}))
        missing = await client.call("press_key", {"key": "NoSuchKey"})
        assert missing.is_error
        stopped = value_of(await client.call("stop_trace"))
        assert stopped["trace"] == str(output / "agent.trace.jsonl")
        assert stopped["steps"] >= 2
        assert stopped["failed"] == 1
        outside = await client.call("start_trace", {"path": str(tmp_path / "elsewhere.jsonl")})
        assert outside.is_error
        assert "outside the folders this server may use" in text_of(outside)
    finally:
        await client.close()
    path = output / "agent.trace.jsonl"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    verbs = [s["verb"] for s in read_trace(path).steps]
    assert verbs[-2:] == ["navigate", "press"]
    # --trace-failures kept the failing key press, with the navigation before it.
    (kept,) = failures.iterdir()
    steps = read_trace(kept).steps
    assert [s["verb"] for s in steps][-2:] == ["navigate", "press"]
    assert steps[-1]["error"]["type"] == "ValueError"
