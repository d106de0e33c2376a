"""A recording made through ``ego mcp`` says what it left out: requests past the bounds an
agent gave ``start_recording`` (with the fix in MCP's words) and page actions a draft cannot
replay, in ``stop_recording``'s answer, never only inside the files it wrote.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.helpers.mcp_client import McpClient, serving, text_of, value_of
from tests.helpers.page_server import PageServer

pytestmark = pytest.mark.chrome  # the MCP server under test launches Chrome

PAGE = """<!doctype html><title>busy</title>
<button id=go ondblclick="this.textContent = 'opened'">Open</button>
<ul id=items></ul>
<script>
async function load() {
  for (const n of [1, 2, 3, 4]) {
    const r = await fetch('/rec-bounds/api/' + n);
    items.append(Object.assign(document.createElement('li'), {textContent: await r.text()}));
  }
}
</script>"""


@pytest.fixture(scope="module")
async def agent(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[McpClient]:
    base = tmp_path_factory.mktemp("mcp-recording")
    output = ["--output-dir", str(base / "out")]
    async with serving(base, *output, workspace=base / "ws") as client:
        yield client


async def test_stop_recording_says_what_the_bounds_and_the_draft_left_out(
    agent: McpClient, server: PageServer
) -> None:
    for n in (1, 2, 3, 4):
        server.route(f"/rec-bounds/api/{n}", f'{{"n": {n}}}', content_type="application/json")
    url = server.route("/rec-bounds/page", PAGE)
    refused = await agent.call("start_recording", {"path": "x.har", "max_entries": 0})
    assert refused.is_error
    assert "max_entries" in text_of(refused)

    value_of(await agent.call("start_recording", {"path": "bounded.har", "max_entries": 2}))
    value_of(await agent.call("navigate", {"url": url, "diff": False}))
    value_of(await agent.call("evaluate", {"expression": "load()"}))
    value_of(await agent.call("click", {"selector": "#go", "double": True, "diff": False}))
    stopped = value_of(await agent.call("stop_recording", {}))

    assert stopped["entries"] == 2
    omitted = stopped["omitted"]
    assert omitted["entries"] >= 3  # the page's own load is one of the two kept
    assert "past 2 entries" in omitted["message"]
    assert "raise max_entries or max_bytes of start_recording" in omitted["message"]
    assert stopped["left_out"] == ["click #go (click_count=2)"], stopped


async def test_a_recording_within_its_bounds_left_out_nothing(
    agent: McpClient, server: PageServer
) -> None:
    url = server.route("/rec-bounds/quiet", "<!doctype html><title>quiet</title><p>hi</p>")
    value_of(await agent.call("start_recording", {"path": "quiet.har"}))
    value_of(await agent.call("navigate", {"url": url, "diff": False}))
    stopped = value_of(await agent.call("stop_recording", {}))
    assert stopped["entries"] >= 1
    assert (stopped["omitted"], stopped["left_out"]) == (None, [])
