"""A save's try run without a tab: it opens the site's start URL, as ``ego run`` does."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

import ego
from ego.errors import SaveRefusedError
from ego.learning.catalog.registry import Learnings
from ego.learning.plan.draft import ToolDraft
from ego.learning.save.tool import save_browser_tool
from tests.helpers.page_server import PageServer

SOURCE = "async ({n}) => ({n, title: document.title, path: location.pathname})"
ARGS = {"n": {"type": "integer", "required": True}}


async def test_try_args_without_a_tab_runs_on_the_start_page(
    browser: ego.Browser, server: PageServer, tmp_path: Path
) -> None:
    path = f"/start-{uuid.uuid4().hex}"
    start = server.route(path, "<title>start page</title><p>hi</p>")
    learnings = Learnings(workspace=tmp_path, project=tmp_path / "none")
    tab = await browser.new_tab(start)
    try:
        first = ToolDraft("shop", "echo", SOURCE, "echoes n", args=ARGS)
        await save_browser_tool(learnings, browser, first, tab=tab)
    finally:
        await tab.close()
    assert learnings.site("shop").start_url == start
    before = {t.target_id for t in await browser.tabs()}

    again = ToolDraft("shop", "echo", SOURCE, "echoes n", args=ARGS, try_args={"n": 7})
    saved = await save_browser_tool(learnings, browser, again)

    assert saved.try_result == {"n": 7, "title": "start page", "path": path}
    # The tab it opened for the try is closed again.
    assert {t.target_id for t in await browser.tabs()} == before


async def test_try_args_without_a_tab_or_start_url_is_refused(
    browser: ego.Browser, tmp_path: Path
) -> None:
    learnings = Learnings(workspace=tmp_path, project=tmp_path / "none")
    draft = ToolDraft(
        "shop", "echo", SOURCE, "echoes n", args=ARGS, domains=["shop.example"], try_args={"n": 1}
    )
    with pytest.raises(SaveRefusedError) as caught:
        await save_browser_tool(learnings, browser, draft)
    assert "no startUrl" in str(caught.value)
    assert not (tmp_path / "learnings" / "shop").exists()
