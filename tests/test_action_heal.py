"""A tool drafted from page actions healed through the gate on the demo's order desk: the
search button is renamed, ``ego heal`` opens a candidate whose broken step acts on the
renamed button first and the recorded one after, the candidate passes the old cases (which
replay the old page) and runs live, is promoted with its provenance, and the version it
replaced is kept in the tool's history. A candidate that breaks an old case is refused."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

import ego
from ego.demo import DemoServer
from ego.errors import CaseRegressionError, LearningError
from ego.learning.catalog.registry import Learnings
from ego.learning.heal import CANDIDATE_PY, heal_folder
from ego.learning.heal.action_candidate import FIRST_OF, heal_steps
from ego.learning.heal.compare import Change
from ego.learning.plan.history import list_versions
from ego.site import Site
from tests.helpers.browsers import websocket_url
from tests.helpers.commands import ego_async, ego_env, http_endpoint
from tests.helpers.desk_flows import record_search
from tests.helpers.mcp_client import payload
from tests.helpers.page_server import PageServer
from tests.helpers.paths import ROOT


@pytest.fixture(scope="module")
def shop() -> Iterator[DemoServer]:
    with DemoServer(port=0) as server:
        yield server


@pytest.fixture
def changed(shop: DemoServer) -> Iterator[DemoServer]:
    """The shop with its desk redesigned ("Look up" is "Find"); set back after the test."""
    shop.pages_changed = True
    yield shop
    shop.pages_changed = False


async def saved_search(
    browser: ego.Browser, tab: ego.Tab, shop: DemoServer, tmp_path: Path
) -> tuple[Site, Learnings]:
    """The desk's search recorded, drafted and saved as ``desk/desk_search`` (a read)."""
    await record_search(tab, shop, tmp_path / "search.actions.json")
    learnings = Learnings(workspace=tmp_path / "ws")
    (draft,) = ego.suggest_actions(
        "desk", tmp_path / "search.actions.json", learnings=learnings
    ).drafts
    site = Site(browser, learnings)
    await site.save_draft("desk", draft.tool, side_effect="read")
    return site, learnings


@pytest.mark.chrome
async def test_a_renamed_button_heals_through_the_gate_and_the_old_version_is_kept(
    browser: ego.Browser, tab: ego.Tab, shop: DemoServer, changed: DemoServer, tmp_path: Path
) -> None:
    shop.pages_changed = False
    site, learnings = await saved_search(browser, tab, shop, tmp_path)
    shop.pages_changed = True  # the search button is renamed "Find", its test id "desk-find"
    report = await site.heal_tool("desk", "desk_search")
    assert report.live["ran"]
    assert not report.live["ok"]
    (gone,) = [c for c in report.changes if c["kind"] == "selector gone"]
    assert gone["old"] == 'testid="desk-search-submit"'
    assert gone["new"] == 'testid="desk-find"'  # the button nearest to "Look up"
    assert "step 4 (click)" in gone["detail"]
    assert report.candidate == "proposed"
    assert report.file == CANDIDATE_PY
    candidate = (heal_folder(learnings, "desk", "desk_search") / CANDIDATE_PY).read_text()
    assert (
        "await tab.click(await first_of(tab, ['testid=\"desk-find\"', "
        "'testid=\"desk-search-submit\"']))" in candidate
    )
    assert report.candidate_live["ok"], report.candidate_live
    assert "2 result(s) for “desk”" in report.candidate_live["result"]  # what the page shows
    assert "Felt Desk Mat: 19.90" in report.candidate_live["result"]
    assert "the candidate's live run on" in report.format()

    # A candidate that breaks an old case is refused, naming the case; nothing is written.
    file = heal_folder(learnings, "desk", "desk_search") / CANDIDATE_PY
    file.write_text(candidate.replace("return shown(", "return 'nothing' or shown("))
    with pytest.raises(CaseRegressionError, match="changes the expected result of old case"):
        await site.promote_candidate("desk", "desk_search")
    assert len(list_versions(learnings, "desk", "desk_search")) == 1
    file.write_text(candidate)

    check = await site.check_candidate("desk", "desk_search")
    assert check.passed, check.format()
    assert check.old
    assert check.new is not None
    done = await site.promote_candidate("desk", "desk_search")
    (gone,) = [c for c in done.provenance["changed"] if c["kind"] == "selector gone"]
    assert (gone["step"], gone["new"]) == (4, 'testid="desk-find"')
    shown = await site.run_tool("desk", "desk_search", {"words": "kettle", "category": "kitchen"})
    assert "Pour-Over Coffee Kettle: 38.90" in shown

    current, kept = list_versions(learnings, "desk", "desk_search")
    assert kept.version == done.saved.previous_version
    assert kept.file.suffix == ".py"
    assert "desk-find" not in kept.file.read_text()
    assert current.provenance is not None
    assert current.provenance["replaced_version"] == kept.version
    assert current.changed == ("source",)
    with pytest.raises(LearningError, match="run `ego heal desk desk_search` first"):
        await site.check_candidate("desk", "desk_search")  # the heal folder went

    back = site.restore_tool("desk", "desk_search", kept.version)  # and back
    assert back.file.read_text() == kept.file.read_text()
    assert learnings.site("desk").python_tools["desk_search"].path == "tools/desk_search.py"
    assert len(list_versions(learnings, "desk", "desk_search")) == 3


DRAFTED = "\n".join(
    [
        "from __future__ import annotations",
        "",
        "import re",
        "from typing import Any",
        "START = 'http://x/'",
        "PAGE_SECONDS = 15.0",
        "async def run(ctx: Any, args: dict[str, Any]) -> Any:",
        "    tab = ctx.tab",
        "    # step 2: click '#go' (button \"Go\")",
        "    await tab.click('#go')",
        "",
    ]
)


def test_a_step_healed_twice_gets_the_newest_selector_first_and_each_selector_once() -> None:
    gone = Change("selector gone", "#go", "", old="#go", new='role=button[name="Run"]', step=2)
    once = heal_steps(DRAFTED, [gone]).source
    assert once is not None
    assert "await tab.click(await first_of(tab, ['role=button[name=\"Run\"]', '#go']))" in once
    assert once.count("async def first_of(") == 1
    assert "from __future__ import annotations\n\nimport asyncio\nimport re\n" in once
    again = heal_steps(once, [Change("selector gone", "#go", "", old="#go", new="#run", step=2)])
    assert again.source is not None
    assert "first_of(tab, ['#run', 'role=button[name=\"Run\"]', '#go'])" in again.source
    assert again.source.count("async def first_of(") == 1
    # The same selector found again moves to the front, never twice in the list.
    gone_again = Change("selector gone", "#run", "", old="#run", new="#go", step=2)
    third = heal_steps(again.source, [gone_again]).source
    assert third is not None
    assert "first_of(tab, ['#go', '#run', 'role=button[name=\"Run\"]'])" in third
    nothing = heal_steps(DRAFTED, [Change("selector gone", "#go", "", old="#go", step=2)])
    assert nothing.source is None
    assert nothing.left == ["step 2: no element near the one that went ('#go')"]


def test_a_hand_edited_step_heals_whatever_its_quotes_and_imports() -> None:
    edited = (
        '"""Edited by hand."""\n'
        "PAGE_SECONDS = 15.0\n"
        "async def run(ctx, args):\n"
        "    tab = ctx.tab\n"
        '    # step 2: click "#go"\n'
        '    await tab.click(\n        "#go", wait=2.0\n    )\n'
    )
    gone = Change("selector gone", "#go", "", old="#go", new="#run", step=2)
    healed = heal_steps(edited, [gone])
    assert healed.left == []
    assert healed.source is not None
    assert "await tab.click(\n        await first_of(tab, ['#run', '#go']), wait=2.0\n" in (
        healed.source
    )
    assert healed.source.startswith('"""Edited by hand."""\n')  # the docstring stays first
    namespace: dict[str, object] = {}
    exec(compile(healed.source, "candidate.py", "exec"), namespace)  # its imports are there
    assert callable(namespace["first_of"])
    # A step whose line is not a verb on a string gets no candidate, and says why.
    moved = heal_steps(edited.replace('"#go"', "SELECTOR"), [gone])
    assert moved.source is None
    assert moved.left == [
        "step 2: its line is not as drafted (await tab.VERB('#go', ...)), so it was not healed"
    ]


@pytest.mark.chrome
async def test_first_of_takes_the_earlier_selector_when_both_match(
    tab: ego.Tab, server: PageServer
) -> None:
    inner = server.route("/first-of/inner", '<button id="deep">Deep</button>')
    page = f'<button id="top">Top</button><iframe id="inner" src="{inner}"></iframe>'
    await tab.navigate(server.route("/first-of/outer", page))
    await tab.wait_for(selector="#inner >> #deep")
    namespace: dict[str, object] = {}
    exec(
        compile(
            f"import asyncio\nfrom typing import Any\nPAGE_SECONDS = 5.0\n{FIRST_OF}",
            "first_of",
            "exec",
        ),
        namespace,
    )
    first_of = namespace["first_of"]
    assert callable(first_of)
    # The frame's selector is found in more round trips than the top one: still first.
    for _ in range(5):
        assert await first_of(tab, ["#inner >> #deep", "#top"]) == "#inner >> #deep"
        assert await first_of(tab, ["#top", "#inner >> #deep"]) == "#top"
    assert await first_of(tab, ["#gone", "#top"]) == "#top"


@pytest.mark.chrome
async def test_ego_heal_check_and_promote_an_action_tool_on_the_command_line(
    ported_browser: ego.Browser, ported_tab: ego.Tab, shop: DemoServer, tmp_path: Path
) -> None:
    await saved_search(ported_browser, ported_tab, shop, tmp_path)
    endpoint = ["--endpoint", http_endpoint(websocket_url(ported_browser))]
    env = ego_env(tmp_path / "profiles", workspace=tmp_path / "ws")
    shop.pages_changed = True
    try:
        healed = await ego_async("heal", "desk", "desk_search", *endpoint, env=env)
        assert healed.returncode == 0, healed
        assert (healed.json()["candidate"], healed.json()["file"]) == ("proposed", CANDIDATE_PY)
        assert healed.json()["candidate_live"]["ok"] is True
        checked = await ego_async("heal", "desk", "desk_search", "--check", *endpoint, env=env)
        assert checked.returncode == 0, checked
        assert checked.json()["passed"] is True
        promoted = await ego_async("heal", "desk", "desk_search", "--promote", *endpoint, env=env)
        assert promoted.returncode == 0, promoted
    finally:
        shop.pages_changed = False
    history = await ego_async("history", "desk", "desk_search", "--json", env=env)
    (gone,) = [c for c in history.json()[0]["provenance"]["changed"] if c.get("step") == 4]
    assert gone["new"] == 'testid="desk-find"'
    tool = tmp_path / "ws/learnings/desk/tools/desk_search.py"
    assert "first_of(tab, ['testid=\"desk-find\"', 'testid=\"desk-search-submit\"'])" in (
        tool.read_text()
    )


@pytest.mark.chrome
async def test_an_mcp_agent_heals_checks_and_promotes_an_action_tool(
    ported_browser: ego.Browser, ported_tab: ego.Tab, shop: DemoServer, tmp_path: Path
) -> None:
    await saved_search(ported_browser, ported_tab, shop, tmp_path)
    env = {key: value for key, value in os.environ.items() if key != "EGO_WORKSPACE"}
    env["EGO_STATE_DIR"] = str(tmp_path / "state")
    args = ["-m", "ego", "--workspace", str(tmp_path / "ws"), "mcp"]
    args += ["--output-dir", str(tmp_path / "out"), "--allowed-origins", shop.origin]
    args += ["--endpoint", http_endpoint(websocket_url(ported_browser))]
    params = StdioServerParameters(command=sys.executable, args=args, env=env, cwd=str(ROOT))
    tool = {"site_id": "desk", "tool": "desk_search"}
    shop.pages_changed = True
    try:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            report = payload(await session.call_tool("heal_tool", tool))
            assert report["candidate"] == "proposed"
            assert report["candidate_live"]["ok"] is True
            checked = payload(await session.call_tool("heal_tool", {**tool, "step": "check"}))
            assert checked["passed"] is True
            promoted = payload(await session.call_tool("heal_tool", {**tool, "step": "promote"}))
    finally:
        shop.pages_changed = False
    (gone,) = [c for c in promoted["provenance"]["changed"] if c["kind"] == "selector gone"]
    assert (gone["step"], gone["new"]) == (4, 'testid="desk-find"')
