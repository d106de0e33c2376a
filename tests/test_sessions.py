"""Sessions own their state, and a tab has a main frame.

Each CDP session is a :class:`~ego.protocol.session.Session` that owns its subscriptions,
listeners, waiters and state; when Chrome detaches it, all of that ends at once and the
connection forgets it. A tab's URL and document count are its main frame's, which the frame
tree alone keeps current.
"""

from __future__ import annotations

import asyncio

import pytest

import ego
from ego.errors import TabClosedError
from ego.protocol.session import SessionState
from tests.helpers.page_server import PageServer

pytestmark = pytest.mark.chrome

#: Turns a hang into a failure; healthy waits end far sooner.
HANG = 20.0


async def test_a_closed_tabs_session_ends_everything_it_owns(browser: ego.Browser) -> None:
    tab = await browser.new_tab()
    session = tab.session
    assert session is not None
    assert session.state is SessionState.ATTACHED
    assert session in browser.connection.sessions
    heard: list[str] = []
    subscription = session.subscribe("Runtime.consoleAPICalled", lambda p: heard.append("x"))
    listener = session.listen({"Page.frameNavigated"}, lambda method, params: None)
    waiter = session.expect("Page.loadEventFired")
    await tab.close()
    assert session.state is SessionState.DETACHED
    assert session not in browser.connection.sessions
    # The waiter failed, the subscription's task ended, and nothing of it is left.
    with pytest.raises(TabClosedError):
        await asyncio.wait_for(waiter, HANG)
    await asyncio.wait_for(subscription._task, HANG)
    assert session.resources() == {"subscriptions": 0, "listeners": 0, "waiters": 0, "pending": 0}
    listener.close()  # idempotent on a detached session
    # A command to it is refused without being sent.
    with pytest.raises(TabClosedError):
        await session.send("Runtime.evaluate", {"expression": "1"})


async def test_the_tab_is_its_main_frames_document(tab: ego.Tab, server: PageServer) -> None:
    first = server.route("/sessions/first", "<title>First</title><p>one</p>")
    server.route("/sessions/moved", "", status=302, headers={"Location": "/sessions/first"})
    await tab.navigate(server.url("/sessions/moved"))
    frames = await tab.frames()
    assert frames[0] is tab.main_frame
    # The URL is where the redirect led, as Chrome committed it, the frame's and the tab's.
    assert tab.url == tab.main_frame.url == first
    documents = tab.documents
    assert documents == tab.main_frame.documents
    await tab.evaluate("history.pushState({}, '', '/sessions/pushed'); 0")
    await tab.wait_for(url="/sessions/pushed", timeout=HANG)
    assert tab.url.endswith("/sessions/pushed")
    assert tab.documents == documents  # a move within the document is no new document
    await tab.reload()
    assert tab.documents == documents + 1
    # Back to the entry the page pushed: the same (reloaded) document, so still one more.
    await tab.back()
    assert tab.url == first
    assert tab.documents == documents + 1
    second = server.route("/sessions/second", "<title>Second</title>")
    await tab.navigate(second)
    assert (tab.url, tab.documents) == (second, documents + 2)
    await tab.back()  # another document again (from the back/forward cache or loaded)
    assert (tab.url, tab.documents) == (first, documents + 3)
    assert tab.main_frame.documents == tab.documents
