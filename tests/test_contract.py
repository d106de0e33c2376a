"""The error contract: NEEDS_LOGIN and SKILL_BROKEN, thrown or returned, through the cache and
without it, become exceptions that name their recovery; other errors a tool reports are data."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import ego
from ego.errors import (
    BrowserToolError,
    JavaScriptError,
    LearningError,
    NeedsLoginError,
    SkillBrokenError,
)
from ego.learning.catalog.registry import Learnings
from ego.runtime.contract import signal_error
from ego.site import Site
from tests.helpers.browsers import HANG
from tests.helpers.learnings import make_site, tool
from tests.helpers.page_server import PageServer

PAGE = "<!doctype html><title>Contract</title><p>no session here</p>\n"

TOOLS = {
    "login_thrown": 'async () => {\n  throw new Error("NEEDS_LOGIN: no session");\n}\n',
    "login_returned": 'async () => ({error: "NEEDS_LOGIN: no session"})\n',
    "broken_thrown": (
        "async () => {\n  await 0;\n"
        '  throw new Error("SKILL_BROKEN: the #feed selector is gone");\n}\n'
    ),
    "broken_returned": 'async () => ({error: "SKILL_BROKEN: the #feed selector is gone"})\n',
    "domain_error": (
        'async (args) => ({error: "user not found", user: args.user, retry_after: null})\n'
    ),
    "signal_later": 'async () => ({error: "rate limited; NEEDS_LOGIN maybe later"})\n',
    "plain_throw": 'async () => {\n  const x = 1;\n  throw new Error("boom in the tool");\n}\n',
    "spin": "async () => { for (;;) {} }\n",
    "signal_inside": (
        'async () => {\n  await 0;\n  throw new Error("refresh failed: SKILL_BROKEN?");\n}\n'
    ),
}


@pytest.fixture
async def contract(
    tmp_path: Path, browser: ego.Browser, tab: ego.Tab, server: PageServer
) -> tuple[Site, str, ego.Tab]:
    """A site with every tool above (a fresh id: nothing cached yet) and a tab on an origin."""
    site_id = f"contract-{uuid.uuid4().hex[:10]}"
    browser_tools = {name: tool(source) for name, source in TOOLS.items()}
    browser_tools["domain_error"] = tool(TOOLS["domain_error"], args={"user": {"type": "string"}})
    make_site(tmp_path, site_id, domains=["127.0.0.1"], browser_tools=browser_tools)
    await tab.navigate(server.route("/contract/page", PAGE))
    return Site(browser, Learnings(roots=[tmp_path])), site_id, tab


async def _runs(
    site: Site, site_id: str, tab: ego.Tab, name: str, cache: bool, args: Any = None
) -> list[tuple[BaseException | Any, str]]:
    """Run the tool twice; each outcome (exception or result) with the run's cache mode.

    With the cache on, the first run stores and the second runs the cached source, so both
    paths through the cache are exercised.
    """
    outcomes: list[tuple[BaseException | Any, str]] = []
    for _ in range(2):
        try:
            outcome: Any = await site.run_browser_tool(site_id, name, args, tab=tab, cache=cache)
        except ego.EgoError as exc:
            outcome = exc
        assert site.last_run is not None
        outcomes.append((outcome, site.last_run.mode))
    assert [mode for _, mode in outcomes] == (["stored", "cached"] if cache else ["plain"] * 2)
    return outcomes


@pytest.mark.parametrize("cache", [True, False], ids=["cached", "plain"])
@pytest.mark.parametrize("form", ["thrown", "returned"])
async def test_needs_login_becomes_its_exception(
    contract: tuple[Site, str, ego.Tab], form: str, cache: bool
) -> None:
    site, site_id, tab = contract
    for exc, _ in await _runs(site, site_id, tab, f"login_{form}", cache):
        assert isinstance(exc, NeedsLoginError), exc
        assert not isinstance(exc, (SkillBrokenError, JavaScriptError))
        assert isinstance(exc, LearningError)
        assert (exc.site_id, exc.tool, exc.detail) == (site_id, f"login_{form}", "no session")
        message = str(exc)
        assert message.startswith(f"NEEDS_LOGIN from {site_id}/login_{form}: no session")
        assert "log in to the site by hand in" in message
        assert site.profile_description in message
        assert "then retry" in message
        assert "do not automate the login" in message


@pytest.mark.parametrize("cache", [True, False], ids=["cached", "plain"])
@pytest.mark.parametrize("form", ["thrown", "returned"])
async def test_skill_broken_becomes_its_exception(
    contract: tuple[Site, str, ego.Tab], form: str, cache: bool
) -> None:
    site, site_id, tab = contract
    for exc, _ in await _runs(site, site_id, tab, f"broken_{form}", cache):
        assert isinstance(exc, SkillBrokenError), exc
        assert not isinstance(exc, (NeedsLoginError, JavaScriptError))
        assert exc.detail == "the #feed selector is gone"
        assert (exc.site_id, exc.tool) == (site_id, f"broken_{form}")
        message = str(exc)
        assert message.startswith(f"SKILL_BROKEN from {site_id}/broken_{form}")
        assert "needs a new version" in message
        assert "retrying will not help" in message


@pytest.mark.parametrize("cache", [True, False], ids=["cached", "plain"])
async def test_a_domain_error_is_data(contract: tuple[Site, str, ego.Tab], cache: bool) -> None:
    site, site_id, tab = contract
    for result, _ in await _runs(site, site_id, tab, "domain_error", cache, {"user": "nobody"}):
        assert result == {"error": "user not found", "user": "nobody", "retry_after": None}
    # A signal word that does not start the error is not a signal either.
    for result, _ in await _runs(site, site_id, tab, "signal_later", cache):
        assert result == {"error": "rate limited; NEEDS_LOGIN maybe later"}


@pytest.mark.parametrize("cache", [True, False], ids=["cached", "plain"])
@pytest.mark.parametrize("name", ["plain_throw", "signal_inside"])
async def test_a_plain_throw_is_a_browser_tool_error(
    contract: tuple[Site, str, ego.Tab], name: str, cache: bool
) -> None:
    site, site_id, tab = contract
    for exc, _ in await _runs(site, site_id, tab, name, cache):
        assert isinstance(exc, BrowserToolError), exc
        assert not isinstance(exc, (NeedsLoginError, SkillBrokenError))
        assert (exc.site_id, exc.tool, exc.name) == (site_id, name, "Error")
        assert exc.js_message in ("boom in the tool", "refresh failed: SKILL_BROKEN?")
        assert exc.file.endswith(f"{name}.js")
        assert exc.line == 3  # the throw's line in the tool file, cached or not
        assert f"{site_id}/{name} threw Error" in str(exc)


async def test_needs_login_on_a_temporary_profile_suggests_a_persistent_one(
    contract: tuple[Site, str, ego.Tab], browser: ego.Browser
) -> None:
    site, site_id, tab = contract
    assert browser.process is not None
    assert browser.process.temporary  # the session's browser runs on a throwaway profile
    assert "a persistent profile" in site.profile_description
    assert "profile=NAME" in site.profile_description
    with pytest.raises(NeedsLoginError) as caught:
        await site.run_browser_tool(site_id, "login_returned", tab=tab)
    assert "log in to the site by hand in a persistent profile" in str(caught.value)
    assert f"ego login {site_id} --profile NAME" in str(caught.value)


def test_needs_login_names_a_persistent_profile_or_an_attached_browser(tmp_path: Path) -> None:
    learnings = Learnings(roots=[tmp_path])
    profile_dir = tmp_path / "chrome_profiles" / "work"
    named = Site(
        SimpleNamespace(process=SimpleNamespace(temporary=False, user_data_dir=profile_dir)),  # type: ignore[arg-type]
        learnings,
    )
    attached = Site(SimpleNamespace(process=None), learnings)  # type: ignore[arg-type]
    assert named.profile_description == f"the Chrome profile 'work' ({profile_dir})"
    assert attached.profile_description == "the browser ego is attached to"
    for site in (named, attached):
        exc = signal_error(
            "NEEDS_LOGIN: cookie expired", site_id="s", tool="t", profile=site.profile_description
        )
        assert isinstance(exc, NeedsLoginError)
        assert exc.detail == "cookie expired"
        assert f"by hand in {site.profile_description}, then retry" in str(exc)


async def test_a_tool_that_never_yields_is_stopped_at_its_timeout(
    contract: tuple[Site, str, ego.Tab],
) -> None:
    site, site_id, tab = contract
    # Its own 1 s ends it, as the message says; HANG only bounds a hang.
    with pytest.raises(ego.CommandTimeoutError, match="stopped it after 1 s"):
        await asyncio.wait_for(site.run_browser_tool(site_id, "spin", tab=tab, timeout=1), HANG)
    # The page's thread is free again: behind a script still spinning, the next call would
    # get no answer within its timeout and fail as stopped.
    assert await site.run_browser_tool(
        site_id, "domain_error", {"user": "x"}, tab=tab, timeout=HANG
    )
    assert await tab.evaluate("document.title", timeout=HANG) == "Contract"
