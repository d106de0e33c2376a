"""The one call path: every front end prepares a call once and runs it through the site layer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import ego
from ego import calls
from ego.calls import CallOptions
from ego.errors import ConfirmationRequiredError, InvalidArgsError, ToolLoadError
from ego.learning.catalog.registry import Learnings
from tests.helpers.page_server import PageServer

# Tests that start Chrome are marked `chrome` one by one (or through a browser fixture);
# the rest need none and run in the fast tier.

MANIFEST = """{
  "id": "counted",
  "name": "Counted",
  "domains": ["127.0.0.1"],
  "browserTools": {
    "echo": {"description": "echo", "path": "browser-tools/echo.js",
             "args": {"q": {"type": "string", "required": true}}},
    "post": {"description": "post", "path": "browser-tools/echo.js",
             "sideEffect": "irreversible"}
  },
  "pythonTools": {
    "twice": {"description": "twice", "path": "tools/twice.py"}
  }
}
"""


@pytest.fixture
def learnings(tmp_path: Path) -> Learnings:
    site = tmp_path / "counted"
    (site / "browser-tools").mkdir(parents=True)
    (site / "tools").mkdir()
    (site / "manifest.json").write_text(MANIFEST)
    (site / "browser-tools" / "echo.js").write_text("async (args) => ({echo: args.q})\n")
    (site / "tools" / "twice.py").write_text("async def run(ctx, args):\n    return 2\n")
    return Learnings(roots=[tmp_path])


class CountingLearnings(Learnings):
    """Learnings that count how often args are checked."""

    checks = 0

    def checked_args(self, site_id: str, spec: Any, args: Any) -> tuple[dict[str, Any], str]:
        type(self).checks += 1
        return super().checked_args(site_id, spec, args)


def test_prepare_checks_everything_before_a_browser(learnings: Learnings) -> None:
    with pytest.raises(ConfirmationRequiredError) as info:
        calls.prepare(learnings, "counted", "post", {})
    assert info.value.subject == "counted/post"
    assert "confirm=True" in str(info.value)
    with pytest.raises(InvalidArgsError):
        calls.prepare(learnings, "counted", "echo", {"q": 1})
    with pytest.raises(ToolLoadError, match="Python tool"):
        calls.prepare(learnings, "counted", "twice", {}, browser_only=True)
    call = calls.prepare(learnings, "counted", "echo", {"q": "x"}, CallOptions(timeout=5))
    assert call.args == {"q": "x"}
    assert call.source is not None
    assert call.function is None
    assert call.ref.options.timeout == 5


def test_a_repeat_call_takes_its_checked_tool_and_sees_a_changed_manifest(
    learnings: Learnings, tmp_path: Path
) -> None:
    refs = calls.ToolRefs()  # what a Site keeps for its calls
    first = calls.prepare(learnings, "counted", "echo", {"q": "a"}, refs=refs)
    again = calls.prepare(learnings, "counted", "echo", {"q": "b"}, refs=refs)
    assert again.ref is first.ref  # found, declared and confirmed once
    assert again.args == {"q": "b"}
    # Calls made without them, or with another caller's, resolve on their own.
    assert calls.prepare(learnings, "counted", "echo", {"q": "a"}).ref is not first.ref
    assert (
        calls.prepare(learnings, "counted", "echo", {"q": "a"}, refs=calls.ToolRefs()).ref
        is not first.ref
    )
    # The tool turns irreversible: the next call is checked again and refused.
    manifest = tmp_path / "counted" / "manifest.json"
    manifest.write_text(
        MANIFEST.replace(
            '"path": "browser-tools/echo.js",\n             "args"',
            '"path": "browser-tools/echo.js", "sideEffect": "irreversible",\n             "args"',
        )
    )
    with pytest.raises(ConfirmationRequiredError):
        calls.prepare(learnings, "counted", "echo", {"q": "c"}, refs=refs)
    # Other options are checked on their own, never taken from the default options' call.
    confirmed = calls.prepare(
        learnings, "counted", "echo", {"q": "d"}, CallOptions(confirm=True), refs=refs
    )
    assert confirmed.ref.options.confirm


async def test_each_check_runs_once_per_call(
    browser: ego.Browser, server: PageServer, tmp_path: Path, learnings: Learnings
) -> None:
    counting = CountingLearnings(roots=learnings.roots)
    site = ego.Site(browser, counting)
    tab = await browser.new_tab(server.url("/"))
    try:
        CountingLearnings.checks = 0
        assert await site.run_browser_tool("counted", "echo", {"q": "a"}, tab=tab) == {"echo": "a"}
        assert await site.run_tool("counted", "twice", {}, tab=tab) == 2
        call = site.prepare("counted", "echo", {"q": "b"})
        assert await site.run_call(call, tab) == {"echo": "b"}
        assert await site.run_call(call, tab) == {"echo": "b"}  # a prepared call is not rechecked
        assert CountingLearnings.checks == 3
    finally:
        await tab.close()


@pytest.mark.chrome
async def test_browser_launch_gives_a_browser_with_its_site() -> None:
    browser = await ego.Browser.launch()
    try:
        assert isinstance(browser.site, ego.Site)
        assert browser.site.browser is browser
    finally:
        await browser.close()
