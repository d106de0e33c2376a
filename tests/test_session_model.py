"""The session model: a session only Chrome's attach makes, a tab that is its main frame, a
frame never taken for the main one, a reload that waits for its own document.

The zombie session needs one read that carries an attach's answer and the detach of the
session it names, which a real Chrome cannot be made to send: the in-process mock
(:mod:`tests.cdp_mock`) arranges it. The rest runs on the real Chromium.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import pytest

import ego
from ego.errors import TabClosedError
from ego.page.main_frame import page_verbs
from ego.page.verbs import PageVerbs
from ego.protocol.session import SessionState
from tests.helpers.cdp_mock import MockChannel, mock_browser
from tests.helpers.page_server import PageServer

#: Turns a hang into a failure; healthy waits end far sooner.
HANG = 20.0


async def test_a_session_detached_in_the_same_read_as_its_attach_answer_stays_detached() -> None:
    channel = MockChannel()
    browser = mock_browser(channel)
    connection = browser.connection
    created = await connection.send("Target.createTarget", {"url": "about:blank"})
    tab = next(each for each in await browser.tabs() if each.target_id == created["targetId"])
    before = connection.resources()

    zombies: list[str] = []

    def attach_then_detach(mock: MockChannel, params: dict[str, Any], _: str | None) -> Any:
        # The attach event, its answer and the session's detach reach ego in one read.
        mock.hold()
        zombies.append(mock.open_session(str(params["targetId"])))
        loop = asyncio.get_running_loop()
        loop.call_soon(lambda: (mock.detach_session(zombies[0]), mock.release()))
        return {"sessionId": zombies[0]}

    channel.handlers["Target.attachToTarget"] = attach_then_detach
    with pytest.raises(TabClosedError):
        await asyncio.wait_for(tab.evaluate("1"), HANG)
    assert tab.closed
    assert tab.session is not None
    assert tab.session.state is SessionState.DETACHED
    # Nothing of it is left on the connection, and nothing was ever sent on it.
    assert connection.resources() == before
    assert [c["method"] for c in channel.commands if c.get("sessionId") in zombies] == []
    with pytest.raises(TabClosedError):
        await tab.session.send("Runtime.evaluate", {"expression": "1"})
    await browser.close()


async def test_every_public_verb_of_a_tab_runs_in_its_main_frame() -> None:
    channel = MockChannel()
    browser = mock_browser(channel)
    tab = await browser.new_tab()
    verbs = page_verbs()
    assert {"click", "type", "snapshot", "wait_for", "screenshot"} <= set(verbs)
    for name in verbs:
        member = inspect.getattr_static(PageVerbs, name)
        if isinstance(member, property):
            assert getattr(tab, name) is getattr(tab.main_frame, name), name
            continue
        calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

        async def recorded(*args: Any, **kwargs: Any) -> str:
            calls.append((args, kwargs))  # noqa: B023 (the list of this verb)
            return "from the main frame"

        setattr(tab.main_frame, name, recorded)
        try:
            answer = await getattr(tab, name)("ref=e1", wait=1.0)
        finally:
            delattr(tab.main_frame, name)
        assert (answer, calls) == ("from the main frame", [(("ref=e1",), {"wait": 1.0})]), name
        assert inspect.signature(getattr(type(tab), name)) == inspect.signature(member), name
    await browser.close()


@pytest.mark.chrome
async def test_the_tab_and_its_main_frame_answer_and_fail_alike(
    browser: ego.Browser, server: PageServer
) -> None:
    tab = await browser.new_tab(server.route("/model/same", "<title>Same</title><p>one</p>"))
    main = tab.main_frame
    assert main.is_main
    assert tab.session is main.session is not None
    assert await tab.evaluate("document.title") == await main.evaluate("document.title") == "Same"
    assert (await tab.snapshot()).startswith('page "Same"')
    assert (await main.snapshot()).startswith('page "Same"')
    await tab.close()
    for page in (tab, main):
        with pytest.raises(TabClosedError):
            await page.evaluate("1")
        with pytest.raises(TabClosedError):
            await page.send("Runtime.evaluate", {"expression": "1"})


@pytest.mark.chrome
async def test_a_frame_whose_parent_is_not_known_yet_is_never_the_main_frame(
    browser: ego.Browser, server: PageServer
) -> None:
    # A cross-site frame (c) inside a same-process frame (b1) of a cross-site frame (b): a tab
    # attached after the page loaded hears of c, and of b1 as its parent, before it has read
    # b's frame tree.
    port = server.port
    server.route("/model/a", f"<iframe name=b src='http://localhost:{port}/model/b'></iframe>")
    server.route("/model/b", "<iframe name=b1 src='/model/b1'></iframe>")
    server.route("/model/b1", f"<iframe name=c src='http://127.0.0.1:{port}/model/c'></iframe>")
    server.route("/model/c", "<script>fetch('/model/c-ran')</script>")
    ran = server.arrival("/model/c-ran")
    created = await browser.connection.send("Target.createTarget", {"url": server.url("/model/a")})
    tab = next(each for each in await browser.tabs() if each.target_id == created["targetId"])
    try:
        assert await asyncio.to_thread(ran.wait, HANG)
        # Each iframe's parent as the tree had it, right after it took the attach in (it
        # listened first): the frame, whether it had a parent itself, whether it was main.
        parents: list[tuple[ego.Frame | None, bool, bool]] = []

        def heard(method: str, params: dict[str, Any]) -> None:
            if params["targetInfo"]["type"] == "iframe":
                parent = tab.known_frame(params["targetInfo"]["parentFrameId"])
                placed = parent is not None and parent.parent is not None
                parents.append((parent, placed, parent is not None and parent.is_main))

        # Told of each session the frame tree listens to, as the tab's workers are.
        tab._frames.watchers.append(
            lambda session: session.listen({"Target.attachedToTarget"}, heard)
        )
        c = await tab.frame(name="c", timeout=HANG)
        orphans = [
            (frame, main)
            for frame, placed, main in parents
            if frame is not None and frame is not tab.main_frame and not placed
        ]
        assert orphans, "no frame was heard of before its parent: the test proved nothing"
        assert [main for _, main in orphans] == [False]
        b1 = await tab.frame(name="b1", timeout=HANG)
        assert c.parent is b1
        assert [frame for frame in await tab.frames() if frame.is_main] == [tab.main_frame]
    finally:
        await tab.close()


@pytest.mark.chrome
async def test_reload_waits_for_the_new_document_not_a_push_state_racing_it(
    tab: ego.Tab, server: PageServer
) -> None:
    # The page moves within its document as it unloads: after the reload went out, before its
    # document came (held by the server until that move is seen).
    url = server.route(
        "/model/race",
        "<title>race</title><script>addEventListener('beforeunload', "
        "() => history.pushState(null, '', '/model/moved'))</script>",
    )
    await tab.navigate(url)
    before = tab.documents
    session = await tab.attach()
    moved = session.expect("Page.navigatedWithinDocument")
    held = server.hold("/model/race")
    reload = asyncio.create_task(tab.reload(timeout=HANG))
    try:
        assert (await asyncio.wait_for(moved, HANG))["url"].endswith("/model/moved")
    finally:
        held.set()
    await asyncio.wait_for(reload, HANG)
    assert tab.documents == before + 1
    assert await tab.evaluate("location.pathname") == "/model/race"
