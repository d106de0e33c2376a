"""The action log: every page verb and navigation reported, through one hook, to the observers
of its tab (``tab.observe_actions``), costing nothing when nobody observes; tool runs reported
to run watchers from the one call path.
"""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path
from typing import Any

import pytest

import ego
from ego.errors import ElementNotFoundError, SkillBrokenError
from ego.learning.health.watch import RUN_WATCHERS, ToolRun, watch_runs
from ego.page.action_log import Action, observed, watch_new_tabs
from ego.page.keyboard import Keyboard
from ego.page.mouse import Mouse
from ego.page.tab import Tab
from ego.page.verbs import PageVerbs
from tests.helpers.health import MOODY, mood_pages
from tests.helpers.page_server import PageServer

FORM = """<!doctype html><title>form</title>
<label>Email <input id=email name=email></label>
<label>Password <input id=pw type=password></label>
<button id=go onclick="document.title = 'sent'">Send</button>
<iframe id=inner srcdoc="<button id=deep>Deep</button>"></iframe>
"""

NAVIGATIONS = ("navigate", "reload", "back", "forward")


def test_every_public_verb_and_navigation_is_observed() -> None:
    # A verb added to PageVerbs (the frame's verbs, which a tab hands to its main frame)
    # later is observed with no more code: the class decorator wraps every public coroutine
    # method it defines. The mouse and the keyboard are wrapped alike.
    verbs = [
        name
        for name, member in vars(PageVerbs).items()
        if not name.startswith("_") and inspect.isfunction(member)
    ]
    assert {
        "click",
        "dblclick",
        "type",
        "check",
        "press",
        "hover",
        "drag_to",
        "scroll",
        "scroll_into_view",
        "select",
        "upload",
        "wait_for",
    } <= set(verbs)
    for name in verbs:
        assert hasattr(vars(PageVerbs)[name], "__wrapped__"), f"{name} is not observed"
        # The tab's verb is the main frame's, with no wrapper of its own (one hook).
        assert vars(Tab).get(name) is None
    for name in NAVIGATIONS:
        assert hasattr(vars(Tab)[name], "__wrapped__"), f"{name} is not observed"
    for device in (Mouse, Keyboard):
        methods = [
            name
            for name, member in vars(device).items()
            if not name.startswith("_") and inspect.isfunction(member)
        ]
        assert len(methods) >= 5
        for name in methods:
            assert hasattr(vars(device)[name], "__wrapped__"), f"{device}.{name} is not observed"


def test_an_unobserved_verb_is_its_own_coroutine() -> None:
    # Nobody observes: the wrapper reads one attribute and hands back the verb's own
    # coroutine, with no frame of its own in between.
    class Page:
        _action_observers: list[Any] = []

        async def press(self, key: str) -> str:
            return key

    wrapped = observed(Page.press)
    coroutine = wrapped(Page(), "a")
    assert coroutine.cr_code is Page.press.__code__
    coroutine.close()


@pytest.mark.chrome
async def test_each_action_is_reported_with_its_target_element_args_and_outcome(
    tab: ego.Tab, server: PageServer
) -> None:
    url = server.route("/actions/form", FORM)
    seen: list[Action] = []
    with tab.observe_actions(seen.append) as observation:
        await tab.navigate(url)
        await tab.type("#email", "ada@example.org")
        await tab.click("#go")
        with pytest.raises(ElementNotFoundError):
            await tab.click("#missing", wait=0.1)
        await tab.snapshot(max_lines=5)
        frame = await tab.frame(selector="#inner")
        await frame.click("#deep")
    assert not observation.active
    await tab.click("#go")  # not observed any more
    assert [a.verb for a in seen] == ["navigate", "type", "click", "click", "snapshot", "click"]
    navigate, typed, click, missing, snapshot, deep = seen
    assert navigate.target == url
    assert navigate.url.startswith("about:")
    assert typed.target == "#email"
    assert typed.args == {"text": "ada@example.org"}
    assert typed.element is not None
    assert (typed.element.role, typed.element.name, typed.element.tag) == (
        "textbox",
        "Email",
        "input",
    )
    assert typed.element.ref.startswith("e")
    assert click.ok
    assert click.error is None
    assert click.element is not None
    assert click.element.describe().startswith('button "Send" [ref=')
    assert click.seconds > 0
    assert not missing.ok
    assert isinstance(missing.error, ElementNotFoundError)
    assert missing.element is None
    assert missing.args == {"wait": 0.1}
    assert snapshot.reads
    assert isinstance(snapshot.result, str)
    # A tab's verb is its main frame's; a frame's reaches the tab's observers all the same.
    assert click.page is tab.main_frame
    assert deep.page is frame
    assert deep.element is not None
    assert deep.element.name == "Deep"


HANDS = """<!doctype html><title>hands</title>
<style>#pad { width: 200px; height: 100px } #tall { height: 3000px }</style>
<div id=pad ondblclick="document.title = 'double'"></div>
<input id=field>
<div id=tall></div>
"""


@pytest.mark.chrome
async def test_the_mouse_the_keyboard_and_each_kind_of_verb_are_reported_once(
    tab: ego.Tab, server: PageServer
) -> None:
    await tab.navigate(server.route("/actions/hands", HANDS))
    x, y = await tab.evaluate(
        "(r => [r.x + 5, r.y + r.height / 2])(document.querySelector('#field')"
        ".getBoundingClientRect())"
    )
    seen: list[Action] = []
    with tab.observe_actions(seen.append):
        await tab.dblclick("#pad")
        await tab.mouse.click(x, y)
        await tab.keyboard.type("hi")
        await tab.main_frame.keyboard.press("Backspace")
        await tab.scroll(dy=200)
    # The verbs a verb runs (the mouse under dblclick) are not reported: only what was asked.
    assert [a.verb for a in seen] == [
        "dblclick",
        "mouse.click",
        "keyboard.type",
        "keyboard.press",
        "scroll",
    ]
    dblclick, mouse_click, typed, pressed, scrolled = seen
    assert await tab.evaluate("document.title") == "double"
    assert dblclick.element is not None
    assert dblclick.element.tag == "div"
    assert mouse_click.args == {"x": x, "y": y}
    assert mouse_click.target is None
    assert mouse_click.page is tab.main_frame
    assert typed.args == {"text": "hi"}
    assert pressed.args == {"keys": ("Backspace",)}
    assert scrolled.args == {"dy": 200}
    assert all(action.ok for action in seen)
    assert await tab.evaluate("document.querySelector('#field').value") == "h"


@pytest.mark.chrome
async def test_verbs_an_observer_runs_are_not_reported_and_a_failing_one_changes_nothing(
    tab: ego.Tab, server: PageServer
) -> None:
    await tab.navigate(server.route("/actions/quiet", FORM))
    seen: list[str] = []

    async def looking(action: Action) -> None:
        # An async observer is awaited before the action's caller goes on; the verbs it
        # runs itself are its own, not the caller's.
        seen.append(action.verb)
        await action.page.snapshot(max_lines=3)

    def failing(action: Action) -> None:
        raise RuntimeError("an observer's own bug")

    with tab.observe_actions(looking), tab.observe_actions(failing):
        await tab.click("#go")
        assert await tab.evaluate("document.title") == "sent"
        await tab.press("Tab")
    assert seen == ["click", "press"]


@pytest.mark.chrome
async def test_a_typed_password_reaches_the_observer_with_its_field(
    tab: ego.Tab, server: PageServer
) -> None:
    await tab.navigate(server.route("/actions/password", FORM))
    seen: list[Action] = []
    with tab.observe_actions(seen.append):
        await tab.type("#pw", "correct horse")
    (typed,) = seen
    assert typed.element is not None
    assert typed.element.input_type == "password"
    assert typed.element.name == "Password"


@pytest.mark.chrome
async def test_new_tabs_are_told_to_their_watchers(browser: ego.Browser) -> None:
    made: list[Any] = []
    with watch_new_tabs(lambda tab, owner, context: made.append((tab, owner, context))):
        opened = await browser.new_tab()
    try:
        assert (opened, browser, None) in made
    finally:
        await opened.close()


@pytest.mark.chrome
async def test_tool_runs_reach_their_watchers_from_the_call_path(
    browser: ego.Browser, server: PageServer, tmp_path: Path
) -> None:
    pages = mood_pages(server, "watched", host="watched.localhost")
    site = tmp_path / "learnings" / "moody"
    (site / "browser-tools").mkdir(parents=True)
    (site / "browser-tools" / "mood.js").write_text(MOODY)
    (site / "manifest.json").write_text(
        '{"id": "moody", "name": "Moody", "domains": ["watched.localhost"], '
        '"browserTools": {"mood": {"description": "the mood", "path": "browser-tools/mood.js", '
        '"args": {}}}}'
    )
    learnings = ego.Learnings(roots=[tmp_path / "learnings"])
    owner = ego.Site(browser, learnings)
    runs: list[ToolRun] = []

    async def watching(run: ToolRun) -> None:
        await asyncio.sleep(0)
        runs.append(run)

    tab = await browser.new_tab(pages["ok"])
    try:
        with watch_runs(watching):
            assert await owner.run_browser_tool("moody", "mood", {}, tab=tab) == {"title": "ok"}
            await tab.navigate(pages["broken"])
            with pytest.raises(SkillBrokenError):
                await owner.run_browser_tool("moody", "mood", {}, tab=tab)
        assert RUN_WATCHERS == []
    finally:
        await tab.close()
    ok, broken = runs
    assert (ok.site_id, ok.tool, ok.outcome, ok.page) == ("moody", "mood", "OK", tab)
    assert ok.result == {"title": "ok"}
    assert ok.version
    assert ok.ok
    assert broken.outcome == "SKILL_BROKEN"
    assert isinstance(broken.error, SkillBrokenError)
    assert broken.version == ok.version
    assert broken.host is browser
