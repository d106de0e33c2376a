"""A save cannot break a tested tool: the tool's offline cases gate every new version.

The shipped ``wikipedia`` site carries offline cases (``tests/cases.json`` over a HAR built
from its documented markup and APIs) for ``get_page_summary``. Saving a source that returns
``{title: 'wrong'}`` must be refused, naming each case it breaks and why, with nothing
written; forcing it saves and says which cases it broke. Python, the command line and MCP
each word the fix their own way.
"""

from __future__ import annotations

import json
import shutil
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

import ego
from ego.errors import CaseRegressionError
from ego.learning.catalog.registry import Learnings, project_learnings_dir
from ego.site import Site
from tests.helpers.browsers import websocket_url
from tests.helpers.commands import ego_async, ego_env, http_endpoint
from tests.helpers.health import MOODY, close_tabs, isolated_store, mood_pages
from tests.helpers.learnings import make_site, tool
from tests.helpers.mcp_client import payload
from tests.helpers.page_server import PageServer

pytestmark = pytest.mark.chrome

ROOT = Path(__file__).resolve().parent.parent
BROKEN = "async () => ({title: 'wrong'})\n"
SUMMARY_CASES = [
    "summary of the article in the tab",
    "summary of another title, spaces in it",
    "summary of a missing title is an error for the caller",
]


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    yield from isolated_store(monkeypatch, tmp_path / "state")


def shipped_source() -> str:
    return (project_learnings_dir() / "wikipedia/browser-tools/get_page_summary.js").read_text()


async def test_a_source_that_breaks_offline_cases_is_refused_naming_them_then_forced(
    browser: ego.Browser, tmp_path: Path, store: Path
) -> None:
    workspace = tmp_path / "ws"
    site = Site(browser, Learnings(workspace=workspace))

    with pytest.raises(CaseRegressionError) as refused:
        await site.save_browser_tool("wikipedia", "get_page_summary", BROKEN)
    error = refused.value
    assert error.reason == "cases"
    assert error.cases == SUMMARY_CASES
    assert "save it anyway with force=True" in str(error)
    assert "nothing was written" in str(error)
    for name, problem in zip(SUMMARY_CASES, error.problems, strict=True):
        assert problem.startswith(f"case {name!r} passes with the current version")
        assert "result differs from expect" in problem
    # Nothing written: the project site was not even copied into the workspace.
    assert not (workspace / "learnings" / "wikipedia").exists()

    saved = await site.save_browser_tool("wikipedia", "get_page_summary", BROKEN, force=True)
    assert saved.cases is not None
    assert saved.cases.forced
    assert [case.name for case in saved.cases.broken] == SUMMARY_CASES
    assert saved.as_dict()["cases"]["broken"] == SUMMARY_CASES
    assert (workspace / "learnings/wikipedia/browser-tools/get_page_summary.js").read_text() == (
        BROKEN
    )
    # The history entry of each version says which cases ran at its save and how they went.
    current, *kept = site.tool_history("wikipedia", "get_page_summary")
    assert current.cases is not None
    assert current.cases["broken"] == SUMMARY_CASES
    assert current.cases["forced"] is True
    assert [case["before"] for case in current.cases["ran"]] == ["passed"] * 3
    assert kept, "the shipped version is kept"

    # Back to a source that passes them: the gate says they passed, and why nothing broke.
    fixed = await site.save_browser_tool(
        "wikipedia", "get_page_summary", "// fixed again\n" + shipped_source()
    )
    assert fixed.cases is not None
    assert [(case.name, case.passed) for case in fixed.cases.cases] == [
        (name, True) for name in SUMMARY_CASES
    ]
    assert fixed.cases.broken == ()


async def test_a_refused_save_leaves_a_workspace_tool_and_its_history_as_they_were(
    browser: ego.Browser, tmp_path: Path, store: Path
) -> None:
    workspace = tmp_path / "ws"
    site = Site(browser, Learnings(workspace=workspace))
    first = await site.save_browser_tool(
        "wikipedia", "get_page_summary", "// v2\n" + shipped_source()
    )
    assert first.cases is not None
    assert all(case.passed for case in first.cases.cases)
    site_dir = workspace / "learnings" / "wikipedia"
    before = {p: p.read_bytes() for p in site_dir.rglob("*") if p.is_file()}

    with pytest.raises(CaseRegressionError):
        await site.save_browser_tool("wikipedia", "get_page_summary", BROKEN, returns=True)
    after = {p: p.read_bytes() for p in site_dir.rglob("*") if p.is_file()}
    assert after == before
    assert len(site.tool_history("wikipedia", "get_page_summary")) == 2


async def test_a_case_that_fails_with_both_versions_does_not_refuse_the_save(
    browser: ego.Browser, tmp_path: Path, store: Path
) -> None:
    # The recording lost the summary API: the current version fails that case too.
    learnings_root = tmp_path / "project"
    site_dir = learnings_root / "wikipedia"
    shutil.copytree(project_learnings_dir() / "wikipedia", site_dir)
    cases = json.loads((site_dir / "tests/cases.json").read_text())
    for case in cases["cases"]:
        if case["tool"] == "get_page_summary":
            case["expect"] = {"title": "an article the recording never had"}
    (site_dir / "tests/cases.json").write_text(json.dumps(cases))
    site = Site(browser, Learnings(workspace=tmp_path / "ws", project=learnings_root))
    saved = await site.save_browser_tool("wikipedia", "get_page_summary", BROKEN)
    assert saved.cases is not None
    assert [case.before for case in saved.cases.cases] == ["failed"] * 3
    assert saved.cases.broken == ()
    assert not saved.cases.forced


async def test_the_command_line_refuses_naming_the_cases_and_force_saves(
    ported_browser: ego.Browser, tmp_path: Path, store: Path
) -> None:
    workspace = tmp_path / "ws"
    broken = tmp_path / "broken.js"
    broken.write_text(BROKEN)
    env = ego_env(tmp_path / "profiles", workspace=workspace, EGO_STATE_DIR=str(store.parent))
    endpoint = http_endpoint(websocket_url(ported_browser))
    args = ("save-tool", "wikipedia", "get_page_summary", "--file", str(broken))

    refused = await ego_async(*args, "--endpoint", endpoint, "--no-json", env=env, timeout=120)
    assert refused.returncode == 3, refused
    line = refused.error_line()
    assert line.startswith("ego: CaseRegressionError: not saved wikipedia/get_page_summary")
    assert all(repr(name) in line for name in SUMMARY_CASES)
    assert "save it anyway with --force" in line
    assert not (workspace / "learnings" / "wikipedia").exists()

    forced = await ego_async(
        *args, "--force", "--endpoint", endpoint, "--no-json", env=env, timeout=120
    )
    assert forced.returncode == 0, forced
    assert "offline cases: 0 of 3 passed" in forced.stdout
    for name in SUMMARY_CASES:
        assert f"saved with --force, breaking case {name!r}" in forced.stdout
    saved = workspace / "learnings/wikipedia/browser-tools/get_page_summary.js"
    assert saved.read_text() == BROKEN

    history = await ego_async("history", "wikipedia", "get_page_summary", "--json", env=env)
    assert history.json()[0]["cases"]["broken"] == SUMMARY_CASES


async def test_mcp_refuses_with_force_true_shows_health_and_restores_it(
    ported_browser: ego.Browser, server: PageServer, tmp_path: Path, store: Path
) -> None:
    workspace = tmp_path / "ws"
    site_id = f"mcp-health-{uuid.uuid4().hex[:8]}"
    # A host of the site's own: the MCP tool picks any open tab on the site's domains.
    host = f"{site_id}.localhost"
    pages = mood_pages(server, site_id, host)
    make_site(
        workspace / "learnings",
        site_id,
        domains=[f"{host}:{server.port}"],
        start_url=pages["ok"],
        browser_tools={"check": tool(MOODY, description="Check the page")},
    )
    env = ego_env(tmp_path / "profiles", workspace=workspace, EGO_STATE_DIR=str(store.parent))
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "ego", "--endpoint", http_endpoint(websocket_url(ported_browser)), "mcp"],
        env=env,
        cwd=str(ROOT),
    )
    try:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await drive_mcp(session, site_id, pages)
    finally:
        await close_tabs(ported_browser, f"/{site_id}/")


async def drive_mcp(session: ClientSession, site_id: str, pages: dict[str, str]) -> None:
    """The agent's side: a refused save, a forced one, a run, its health, a restore."""
    await session.initialize()
    refused = await session.call_tool(
        "save_browser_tool",
        {"site_id": "wikipedia", "tool": "get_page_summary", "source": BROKEN},
    )
    assert refused.is_error
    text = " ".join(getattr(part, "text", "") for part in refused.content)
    assert "CaseRegressionError: not saved wikipedia/get_page_summary" in text
    assert "save it anyway with force: true" in text
    assert SUMMARY_CASES[0] in text
    forced = payload(
        await session.call_tool(
            "save_browser_tool",
            {
                "site_id": "wikipedia",
                "tool": "get_page_summary",
                "source": BROKEN,
                "force": True,
            },
        )
    )
    assert forced["cases"]["broken"] == SUMMARY_CASES
    assert forced["cases"]["forced"] is True

    # A run through the tool's own MCP tool is recorded and shown by learn_context and
    # tool_health; the tool list is the same before and after it (no health in it).
    before = (await session.list_tools()).tools
    assert payload(await session.call_tool(f"{site_id}__check", {})) == {"title": "ok"}
    assert (await session.list_tools()).tools == before
    context = payload(
        await session.call_tool("learn_context", {"url": pages["ok"], "detail": "full"})
    )
    [info] = context["tools"]
    assert (info["health"]["runs"], info["health"]["ok"]) == (1, 1)
    compact = await session.call_tool("learn_context", {"url": pages["ok"]})
    assert "health: ok" in compact.content[0].text or " ok" in compact.content[0].text
    [row] = payload(await session.call_tool("tool_health", {"site_id": site_id, "tool": "check"}))
    assert row["version"] == "current"
    assert [run["front_end"] for run in row["recent"]] == ["mcp"]

    # Restoring the shipped version brings back its own record (it never ran here).
    versions = payload(
        await session.call_tool(
            "tool_history", {"site_id": "wikipedia", "tool": "get_page_summary"}
        )
    )
    restored = payload(
        await session.call_tool(
            "restore_tool",
            {
                "site_id": "wikipedia",
                "tool": "get_page_summary",
                "version": versions[1]["version"],
            },
        )
    )
    assert restored["health"]["runs"] == 0
    assert restored["health"]["suspect"] is False
