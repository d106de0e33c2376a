"""``ego save-tool``, ``save-note``, ``history`` and ``restore``.

The commands are invoked through click's CliRunner on their own command objects (they work
before and after they are registered on the ``ego`` group), and once through a real
``python -m ego`` subprocess when the group has them.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

import ego
from ego.cli.app import Settings
from ego.cli.save_commands import history, restore, save_note, save_tool
from ego.demo import DemoServer
from ego.learning.catalog.registry import Learnings
from ego.learning.describe.context import build_context
from ego.site import Site

ROOT = Path(__file__).resolve().parent.parent
PROJECT_LEARNINGS = ROOT / "learnings"

SEARCH = """async ({q}) => {
  const r = await fetch('/api/products?q=' + encodeURIComponent(q));
  return {version: VERSION, names: (await r.json()).products.map((p) => p.name)};
}
"""


@pytest.fixture(scope="module")
def demo() -> Iterator[DemoServer]:
    server = DemoServer(port=0).start()
    yield server
    server.close()


@pytest.fixture
def site_id() -> str:
    return f"cli-{uuid.uuid4().hex[:8]}"


def invoke(command: Any, args: list[str], workspace: Path | None) -> Result:
    settings = Settings(None, True, str(workspace) if workspace is not None else None)
    return CliRunner().invoke(command, args, obj=settings, catch_exceptions=False)


def tree(folder: Path) -> dict[str, bytes | str]:
    if not folder.exists():
        return {}
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() if p.is_file() else "dir"
        for p in sorted(folder.rglob("*"))
    }


def test_save_tool_command_checks_saves_and_tries(
    tmp_path: Path, demo: DemoServer, site_id: str
) -> None:
    workspace = tmp_path / "ws"
    source = tmp_path / "find.js"
    source.write_text(SEARCH.replace("VERSION", "1"))
    args = [
        site_id,
        "find",
        "--file",
        str(source),
        "--description",
        "Search products",
        "--args",
        '{"q": {"type": "string", "required": true}}',
        "--try-args",
        '{"q": "desk"}',
        "--url",
        demo.url,
    ]
    result = invoke(save_tool, args, workspace)
    assert result.exit_code == 0, result.output + result.stderr
    data = json.loads(result.stdout)
    assert data["created_site"] is True
    assert data["try_result"] == {"version": 1, "names": ["Mechanical Desk Clock", "Felt Desk Mat"]}
    manifest = json.loads((workspace / "learnings" / site_id / "manifest.json").read_text())
    assert manifest["domains"] == [f"shop.localhost:{demo.port}"]  # the tab's host and port
    assert manifest["browserTools"]["find"]["description"] == "Search products"

    # A source that does not parse: exit 3, one line saying why, nothing written.
    before = tree(workspace)
    source.write_text("async ({q}) => { return q +; }")
    refused = invoke(save_tool, args, workspace)
    assert refused.exit_code == 3
    error = json.loads(refused.stderr)
    assert error["type"] == "SaveRefusedError"
    assert "does not parse" in error["error"]
    assert tree(workspace) == before


def test_save_tool_needs_a_workspace(tmp_path: Path) -> None:
    source = tmp_path / "t.js"
    source.write_text("async () => 1")
    result = invoke(save_tool, ["x", "t", "--file", str(source), "--description", "d"], None)
    assert result.exit_code == 3
    assert "EGO_WORKSPACE" in json.loads(result.stderr)["error"]


def test_bad_json_options_are_usage_errors(tmp_path: Path) -> None:
    source = tmp_path / "t.js"
    source.write_text("async () => 1")
    base = ["x", "t", "--file", str(source), "--description", "d"]
    assert invoke(save_tool, [*base, "--args", "{nope"], tmp_path).exit_code == 2
    assert invoke(save_tool, [*base, "--try-args", "[1]"], tmp_path).exit_code == 2
    assert (
        invoke(
            save_tool,
            ["x", "t", "--file", str(tmp_path / "missing.js"), "--description", "d"],
            tmp_path,
        ).exit_code
        == 2
    )


async def test_history_and_restore_commands(
    browser: ego.Browser, tmp_path: Path, demo: DemoServer, site_id: str
) -> None:
    workspace = tmp_path / "ws"
    site = Site(browser, Learnings(workspace=workspace, project=PROJECT_LEARNINGS))
    tab = await browser.new_tab(demo.url)
    try:
        for version in (1, 2):
            await site.save_browser_tool(
                site_id,
                "find",
                SEARCH.replace("VERSION", str(version)),
                f"v{version}",
                {"q": {"type": "string", "required": True}},
                tab=tab,
            )
        listed = invoke(history, [site_id, "find"], workspace)
        assert listed.exit_code == 0, listed.stderr
        rows = json.loads(listed.stdout)
        assert [(r["version"] == "current", r["description"]) for r in rows] == [
            (True, "v2"),
            (False, "v1"),
        ]
        assert {"version", "saved_at", "size", "hash"} <= set(rows[1])

        restored = invoke(restore, [site_id, "find", rows[1]["version"]], workspace)
        assert restored.exit_code == 0, restored.stderr
        assert json.loads(restored.stdout)["hash"] == rows[1]["hash"]
        result = await site.run_browser_tool(site_id, "find", {"q": "lamp"}, tab=tab)
        assert result["version"] == 1
        after = json.loads(invoke(history, [site_id, "find"], workspace).stdout)
        assert [r["description"] for r in after] == ["v1", "v2", "v1"]

        missing = invoke(restore, [site_id, "find", "nope"], workspace)
        assert missing.exit_code == 3
        assert "UnknownVersionError" in missing.stderr
        assert rows[1]["version"] in missing.stderr
    finally:
        await tab.close()


def test_save_note_command(tmp_path: Path, site_id: str) -> None:
    workspace = tmp_path / "ws"
    note = tmp_path / "note.md"
    note.write_text("# Search API\nGET /api/products?q=words\n")
    result = invoke(
        save_note,
        [site_id, "search-api", "--file", str(note), "--domain", "shop.localhost"],
        workspace,
    )
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert Path(data["file"]).read_text() == note.read_text()
    context = build_context(Learnings(workspace=workspace), "http://shop.localhost/")
    assert "Search API" in [n.title for n in context.notes if n.site_id == site_id]

    no_domain = invoke(save_note, [f"{site_id}-2", "x", "--file", str(note)], workspace)
    assert no_domain.exit_code == 3
    assert "domains" in json.loads(no_domain.stderr)["error"]


def _ego(*args: str, workspace: Path | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "ego"]
    if workspace is not None:
        command += ["--workspace", str(workspace)]
    return subprocess.run(
        [*command, *args], capture_output=True, text=True, timeout=120, cwd=ROOT, check=False
    )


def test_save_tool_through_a_real_subprocess(
    tmp_path: Path, demo: DemoServer, site_id: str
) -> None:
    workspace = tmp_path / "ws"
    source = tmp_path / "find.js"
    source.write_text(SEARCH.replace("VERSION", "7"))
    saved = _ego(
        "save-tool",
        site_id,
        "find",
        "--file",
        str(source),
        "--description",
        "Search products",
        "--args",
        '{"q": {"type": "string", "required": true}}',
        "--try-args",
        '{"q": "lamp"}',
        "--url",
        demo.url,
        workspace=workspace,
    )
    assert saved.returncode == 0, saved.stderr
    assert json.loads(saved.stdout)["try_result"] == {"version": 7, "names": ["Trail Headlamp 400"]}

    tools = _ego("tools", demo.url, workspace=workspace)
    assert tools.returncode == 0, tools.stderr
    assert site_id in [t["site_id"] for t in json.loads(tools.stdout)["tools"]]

    run = _ego(
        "run", site_id, "find", "--args", '{"q": "desk"}', "--url", demo.url, workspace=workspace
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["version"] == 7

    listed = _ego("history", site_id, "find", workspace=workspace)
    assert listed.returncode == 0, listed.stderr
    assert [r["version"] for r in json.loads(listed.stdout)] == ["current"]
