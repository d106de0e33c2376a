"""Every front end survives every string a manifest, a page or a tool can hold: a lone UTF-16
surrogate prints as a ``\\ud800`` escape (never a traceback), and a path no file system takes
is a problem of its site."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import orjson
import pytest

from ego.protocol.jsontext import json_bytes, json_loads, json_text
from tests.helpers.commands import ego_async, ego_env
from tests.helpers.mcp_client import McpClient, value_of

LONE = "bad \ud800 name"


def bad_workspace(root: Path) -> Path:
    site = root / "learnings" / "bad-strings"
    (site / "browser-tools").mkdir(parents=True)
    (site / "browser-tools" / "ok.js").write_text("async () => 'ok'\n")
    manifest = {
        "id": "bad-strings",
        "name": LONE,
        "domains": ["bad.example"],
        "browserTools": {
            "ok": {"description": f"says {LONE}", "path": "browser-tools/ok.js"},
            "long": {"description": "a name too long", "path": "browser-tools/" + "x" * 300},
        },
    }
    # json.dumps writes the lone surrogate as the escape a manifest on disk holds.
    (site / "manifest.json").write_text(json.dumps(manifest))
    return root


def test_json_text_writes_lone_surrogates_as_escapes() -> None:
    value = {"name": LONE, "n": 1}
    text = json_text(value)
    assert "\\ud800" in text
    assert json.loads(text) == value
    assert json.loads(json_text(value, option=orjson.OPT_INDENT_2)) == value
    assert json_bytes({"plain": "é"}) == orjson.dumps({"plain": "é"})  # the common path
    with pytest.raises(TypeError):
        json_text({"x": object()})


def test_json_loads_reads_back_what_json_bytes_writes() -> None:
    for value in ({"name": LONE, "n": 1}, {"big": 2**70}, ["plain", 1.5, None]):
        assert json_loads(json_bytes(value)) == value
    with pytest.raises(ValueError, match="Expecting property name"):
        json_loads(b"{not json")


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["sites", "--json"], 0),
        (["tools", "http://bad.example/", "--json"], 0),
        (["validate", "--json"], 3),
    ],
)
async def test_the_cli_prints_any_manifest_string_and_path(
    tmp_path: Path, args: list[str], code: int
) -> None:
    workspace = bad_workspace(tmp_path / "ws")
    env = ego_env(tmp_path / "profiles", workspace=workspace)
    result = await ego_async(*args, env=env, cwd=tmp_path)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == code, result.stderr
    printed = json.loads(result.stdout)
    if args[0] == "validate":
        [problem] = [p for p in printed["problems"] if "bad-strings" in p]
        assert "longer than a file system takes" in problem
    else:
        assert "\\ud800" in result.stdout  # the escape JSON carries
        assert LONE in json.dumps(printed, ensure_ascii=False)


@pytest.fixture
async def agent(tmp_path: Path) -> AsyncIterator[McpClient]:
    workspace = bad_workspace(tmp_path / "ws")
    client = McpClient(
        ego_env(tmp_path / "profiles", workspace=workspace), tmp_path, tmp_path / "err.log"
    )
    await client.start()
    try:
        yield client
    finally:
        await client.close()


async def test_mcp_serves_any_manifest_string_without_a_browser(agent: McpClient) -> None:
    # Over MCP a lone surrogate arrives as U+FFFD: the SDK's client refuses the escape.
    sites = value_of(await agent.call("list_sites"))
    assert "bad \ufffd name" in [site["name"] for site in sites]
    context = value_of(await agent.call("learn_context", {"url": "http://bad.example/"}))
    assert context["sites"][0]["site_id"] == "bad-strings"
    assert "says bad \ufffd name" in [tool["description"] for tool in context["tools"]]
    assert agent.server is not None
    assert not [p for p in agent.server.children(recursive=True) if "chrom" in p.name()]


@pytest.mark.chrome
async def test_mcp_returns_a_lone_surrogate_a_page_made(agent: McpClient) -> None:
    cut = value_of(await agent.call("evaluate", {"expression": "['😀'.slice(0, 1), '😀']"}))
    assert cut == ["\ufffd", "😀"]
    assert value_of(await agent.call("evaluate", {"expression": "1 + 1"})) == 2
