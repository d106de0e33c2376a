"""Page dialogs never freeze a tab: answered by the policy, or failing calls at once.

Every dialog type (alert, confirm, prompt, beforeunload) is raised on real pages from a click
(``tab.click``), from a browser tool (``site.run_browser_tool`` on a temporary learning) and
from a timer (``setTimeout``), under the default policy (answered at once, recorded, the
call gets its answer) and under ``"manual"`` (DialogOpenError at once, then
``tab.handle_dialog`` and the tab works again). The connection's session suspension is
tested on its own at the end, without a browser.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import ego
from ego.errors import (
    CommandTimeoutError,
    DialogOpenError,
    NavigationError,
    ProtocolError,
    TabClosedError,
    TargetCrashedError,
)
from ego.learning.catalog.registry import Learnings
from ego.page.dialogs import MAX_RECORDED_DIALOGS, dialog_actions
from ego.protocol.session import Session, SessionState
from ego.protocol.transport import Connection
from ego.site import Site
from tests.helpers.browsers import websocket_url
from tests.helpers.cdp_mock import MockChannel
from tests.helpers.learnings import make_site, tool
from tests.helpers.page_server import PageServer

# Bound for waits on events that come within milliseconds.
HANG = 15.0
# The calls' own timeout here (the tab's default), far beyond HANG: a call that ends within
# HANG ended before its timeout could fire, so the dialog (or its answer) ended it, whatever
# the load on the machine.
CALL_TIMEOUT = 4 * HANG

PAGE = """<title>dialogs</title>
<button id="alert" onclick="window.answer = alert('Hello there')">alert</button>
<button id="confirm" onclick="window.answer = confirm('Delete it?')">confirm</button>
<button id="prompt" onclick="window.answer = prompt('Your name?', 'Bob')">prompt</button>
<button id="later" onclick="setTimeout(() => { window.answer = confirm('Later?'); }, 50)">
later</button>
"""

LEAVE = """<title>leave</title>
<script>
addEventListener('beforeunload', (e) => { e.preventDefault(); e.returnValue = ''; });
</script>
<button id="touch" onclick="window.touched = true">touch</button>
"""

# What each dialog gives the page under the default policy: alert accepted (undefined),
# confirm and prompt dismissed (false, null).
DEFAULT_ANSWERS: dict[str, Any] = {"alert": None, "confirm": False, "prompt": None}
MESSAGES = {"alert": "Hello there", "confirm": "Delete it?", "prompt": "Your name?"}
DIALOG_CODE = {
    "alert": "alert('Hello there')",
    "confirm": "confirm('Delete it?')",
    "prompt": "prompt('Your name?', 'Bob')",
}


@pytest.fixture
def page_url(server: PageServer) -> str:
    server.route("/dialogs/leave", LEAVE)
    server.route("/dialogs/other", "<title>other</title><p>other</p>")
    return server.route("/dialogs/page", PAGE)


@pytest.fixture
async def page(tab: ego.Tab, page_url: str) -> ego.Tab:
    tab.default_timeout = CALL_TIMEOUT
    await tab.navigate(page_url, timeout=HANG)
    return tab


@pytest.fixture
async def manual(page: ego.Tab) -> ego.Tab:
    page.dialog_policy = "manual"
    return page


@pytest.fixture
def site(tmp_path: Path, browser: ego.Browser) -> Site:
    """A temporary learning whose tools open each dialog and return what it answered."""
    tools = {
        kind: tool(
            f"async () => {{\n  const answer = {code};\n  window.toolAnswer = answer;\n"
            "  return {answer};\n}\n"
        )
        for kind, code in DIALOG_CODE.items()
    }
    make_site(tmp_path, "dialogs", domains=["127.0.0.1"], browser_tools=tools)
    return Site(browser, Learnings(roots=[tmp_path]))


# --- the default policy -----------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["alert", "confirm", "prompt"])
async def test_a_dialog_from_a_click_is_answered_by_the_default_policy(
    page: ego.Tab, kind: str
) -> None:
    await asyncio.wait_for(page.click(f"#{kind}"), HANG)  # answered: nothing waited it out
    assert await page.evaluate("window.answer") == DEFAULT_ANSWERS[kind]
    [dialog] = page.dialogs
    assert (dialog.type, dialog.message, dialog.url) == (kind, MESSAGES[kind], page.url)
    assert dialog.answer == ("accepted" if kind == "alert" else "dismissed")
    assert dialog.handled_by == "policy"
    assert dialog.default_prompt == ("Bob" if kind == "prompt" else "")
    assert dialog.closed_at is not None
    assert dialog.opened_at <= dialog.closed_at
    assert not dialog.is_open
    assert page.dialog is None
    assert dialog.as_dict()["open"] is False


@pytest.mark.parametrize("kind", ["alert", "confirm", "prompt"])
async def test_a_dialog_from_a_tool_is_answered_and_the_tool_gets_its_answer(
    page: ego.Tab, site: Site, kind: str
) -> None:
    result = await site.run_browser_tool("dialogs", kind, tab=page)
    assert result == ({} if kind == "alert" else {"answer": DEFAULT_ANSWERS[kind]})
    assert [(each.type, each.handled_by) for each in page.dialogs] == [(kind, "policy")]


async def test_a_dialog_from_a_timer_is_answered_and_recorded(page: ego.Tab) -> None:
    async with page.expect_dialog(timeout=HANG) as expected:
        await page.evaluate("setTimeout(() => { window.answer = confirm('Later?'); }, 50); 1")
    assert expected.dialog is not None
    assert (expected.dialog.message, expected.dialog.answer) == ("Later?", "dismissed")
    assert await page.evaluate("window.answer") is False
    assert page.dialog is None


async def test_accept_and_a_mapping_override_the_default(page: ego.Tab) -> None:
    page.dialog_policy = "accept"
    await page.click("#prompt")
    assert await page.evaluate("window.answer") == "Bob"  # the default text, accepted
    page.dialog_policy = {"confirm": "accept"}
    await page.click("#confirm")
    assert await page.evaluate("window.answer") is True
    await page.click("#prompt")  # prompt: still the default's dismiss
    assert await page.evaluate("window.answer") is None
    assert [dialog.answer for dialog in page.dialogs] == ["accepted", "accepted", "dismissed"]


async def test_beforeunload_is_dismissed_so_the_page_stays_and_the_error_says_why(
    page: ego.Tab, server: PageServer
) -> None:
    await page.navigate(server.url("/dialogs/leave"), timeout=HANG)
    await page.click("#touch")  # beforeunload dialogs need a user gesture first
    with pytest.raises(NavigationError, match=r"beforeunload dialog was dismissed.*expect_dialog"):
        await page.navigate(server.url("/dialogs/other"), timeout=HANG)
    assert await page.evaluate("document.title") == "leave"
    assert [(d.type, d.answer, d.handled_by) for d in page.dialogs] == [
        ("beforeunload", "dismissed", "policy")
    ]
    # Accepted for one navigation: the page is left.
    async with page.expect_dialog(accept=True, timeout=HANG):
        await page.navigate(server.url("/dialogs/other"), timeout=HANG)
    assert await page.evaluate("document.title") == "other"
    assert page.dialogs[-1].answer == "accepted"


async def test_the_record_is_bounded(page: ego.Tab) -> None:
    count = MAX_RECORDED_DIALOGS + 5
    await page.evaluate(f"for (let i = 0; i < {count}; i++) alert('n' + i); 1")
    messages = [dialog.message for dialog in page.dialogs]
    assert len(messages) == MAX_RECORDED_DIALOGS
    assert messages[-1] == f"n{count - 1}"
    assert messages[0] == f"n{count - MAX_RECORDED_DIALOGS}"


# --- the manual policy ------------------------------------------------------------------------


def assert_blocked_by(error: DialogOpenError, kind: str, message: str) -> None:
    assert error.dialog_type == kind
    assert error.dialog_message == message
    assert "tab.handle_dialog(accept=True" in str(error)
    assert repr(message) in str(error)
    assert "/dialogs/" in error.url


@pytest.mark.parametrize("kind", ["alert", "confirm", "prompt"])
async def test_manual_a_click_fails_at_once_then_handle_dialog_frees_the_tab(
    manual: ego.Tab, kind: str
) -> None:
    with pytest.raises(DialogOpenError) as caught:
        await asyncio.wait_for(manual.click(f"#{kind}"), HANG)
    assert_blocked_by(caught.value, kind, MESSAGES[kind])
    assert manual.dialog is not None
    assert manual.dialog.type == kind
    # New calls fail at once too: evaluate, raw sends of the blocked domains, snapshot.
    for call in (
        manual.evaluate("1"),
        manual.send("Runtime.evaluate", {"expression": "1"}),
        manual.send("DOM.getDocument"),
        manual.send("Input.dispatchKeyEvent", {"type": "keyDown", "key": "a"}),
        manual.snapshot(),
    ):
        with pytest.raises(DialogOpenError):
            await asyncio.wait_for(call, HANG)
    text = "Ada" if kind == "prompt" else None
    dialog = await manual.handle_dialog(accept=True, prompt_text=text)
    assert (dialog.answer, dialog.handled_by, dialog.prompt_text) == ("accepted", "caller", text)
    assert manual.dialog is None
    assert await manual.evaluate("window.answer") == {"alert": None, "confirm": True}.get(
        kind, "Ada"
    )
    assert await manual.evaluate("document.title") == "dialogs"


@pytest.mark.parametrize("kind", ["alert", "confirm", "prompt"])
async def test_manual_a_tool_call_fails_at_once_and_the_prompt_text_reaches_the_page(
    manual: ego.Tab, site: Site, kind: str
) -> None:
    call = asyncio.create_task(site.run_browser_tool("dialogs", kind, tab=manual))
    with pytest.raises(DialogOpenError) as caught:
        await asyncio.wait_for(call, HANG)
    assert_blocked_by(caught.value, kind, MESSAGES[kind])
    with pytest.raises(DialogOpenError):
        await site.run_browser_tool("dialogs", "alert", tab=manual)  # a new call: refused
    await manual.handle_dialog(accept=True, prompt_text="Ada")
    # The tool went on in the page once answered, with the answer given.
    assert await manual.evaluate("window.toolAnswer") == {"alert": None, "confirm": True}.get(
        kind, "Ada"
    )
    assert manual.dialogs[-1].prompt_text == ("Ada" if kind == "prompt" else None)


async def test_manual_the_prompt_text_is_what_the_page_gets(manual: ego.Tab) -> None:
    with pytest.raises(DialogOpenError):
        await manual.click("#prompt")
    await manual.handle_dialog(accept=True, prompt_text="Ada Lovelace")
    assert await manual.evaluate("window.answer") == "Ada Lovelace"
    with pytest.raises(DialogOpenError):
        await manual.click("#prompt")
    await manual.handle_dialog(accept=False, prompt_text="ignored")
    assert await manual.evaluate("window.answer") is None
    assert [(d.answer, d.prompt_text) for d in manual.dialogs] == [
        ("accepted", "Ada Lovelace"),
        ("dismissed", None),
    ]


async def test_manual_a_timer_dialog_fails_the_pending_call_and_the_next_ones(
    manual: ego.Tab,
) -> None:
    # Pending: an evaluate waits on a promise when the timer's dialog opens.
    pending = asyncio.create_task(
        manual.evaluate("new Promise((r) => setTimeout(() => { alert('tick'); r(1); }, 100))")
    )
    with pytest.raises(DialogOpenError) as caught:
        await asyncio.wait_for(pending, HANG)
    assert caught.value.dialog_message == "tick"
    await manual.handle_dialog(accept=True)
    assert await manual.evaluate("1 + 1") == 2
    # Later: nothing is pending when it opens; the next call fails at once.
    await manual.click("#later")
    await manual.expect_dialog(timeout=HANG)
    with pytest.raises(DialogOpenError, match="Later"):
        await manual.evaluate("document.title")
    opened = await manual.expect_dialog(timeout=HANG)  # the one open now, at once
    assert opened is manual.dialog
    assert opened.message == "Later?"
    await manual.handle_dialog(accept=True)
    assert await manual.evaluate("window.answer") is True


async def test_manual_beforeunload_fails_the_navigation_at_once_then_accepting_leaves(
    manual: ego.Tab, server: PageServer
) -> None:
    await manual.navigate(server.url("/dialogs/leave"), timeout=HANG)
    await manual.click("#touch")  # beforeunload dialogs need a user gesture first
    with pytest.raises(DialogOpenError) as caught:
        await asyncio.wait_for(manual.navigate(server.url("/dialogs/other")), HANG)
    assert caught.value.dialog_type == "beforeunload"
    loaded = (await manual.attach()).expect(
        "Page.lifecycleEvent", lambda params: params.get("name") == "load"
    )
    await manual.handle_dialog(accept=True)
    await asyncio.wait_for(loaded, HANG)
    assert await manual.evaluate("document.title") == "other"


async def test_manual_expect_dialog_answers_the_next_one_as_told(manual: ego.Tab) -> None:
    async with manual.expect_dialog(accept=True, prompt_text="Cleo", timeout=HANG) as expected:
        assert repr(expected) == (
            f"<DialogExpectation accept with 'Cleo': no dialog yet (waits up to {HANG:g} s)>"
        )
        await manual.click("#prompt")  # answered at once: the click gets its answer
    assert expected.dialog is not None
    assert repr(expected) == (
        f"<DialogExpectation accept with 'Cleo': prompt {expected.dialog.message!r}, "
        "accepted by caller>"
    )
    assert (expected.dialog.handled_by, expected.dialog.prompt_text) == ("caller", "Cleo")
    assert await manual.evaluate("window.answer") == "Cleo"
    # Awaited while one is open: answered as told, at once.
    with pytest.raises(DialogOpenError):
        await manual.click("#confirm")
    dialog = await manual.expect_dialog(accept=False, timeout=HANG)
    assert (dialog.type, dialog.answer) == ("confirm", "dismissed")
    assert await manual.evaluate("window.answer") is False


# --- edges ------------------------------------------------------------------------------------


async def test_handle_dialog_without_a_dialog_says_so(page: ego.Tab) -> None:
    with pytest.raises(ProtocolError, match="no dialog is open"):
        await page.handle_dialog(accept=True)
    await page.click("#alert")
    with pytest.raises(ProtocolError, match=r"the last one, alert 'Hello there', was accepted"):
        await page.handle_dialog(accept=True)


async def test_expect_dialog_is_bounded(page: ego.Tab) -> None:
    # Its own 0.3 s ends each wait, not the tab's default (CALL_TIMEOUT, beyond HANG).
    with pytest.raises(CommandTimeoutError, match=r"no dialog opened .* within 0\.3 s"):
        await asyncio.wait_for(page.expect_dialog(timeout=0.3), HANG)

    async def around_an_evaluate() -> None:
        async with page.expect_dialog(timeout=0.3):
            await page.evaluate("1")

    with pytest.raises(CommandTimeoutError, match=r"no dialog opened .* within 0\.3 s"):
        await asyncio.wait_for(around_an_evaluate(), HANG)
    await page.click("#alert")  # nobody left waiting claims it: the policy answers
    assert page.dialogs[-1].handled_by == "policy"


async def test_closing_the_tab_ends_a_wait_for_a_dialog(browser: ego.Browser) -> None:
    tab = await browser.new_tab()
    waiting = asyncio.ensure_future(tab.expect_dialog(timeout=CALL_TIMEOUT))
    await tab.close()
    with pytest.raises(TabClosedError):  # the close ended it: its timeout is beyond HANG
        await asyncio.wait_for(waiting, HANG)


def test_a_wrong_policy_is_refused_before_anything_starts() -> None:
    with pytest.raises(ValueError, match="dialogs='sometimes'"):
        ego.launch(dialogs="sometimes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown dialog type 'popup'"):
        ego.connect("http://127.0.0.1:1", dialogs={"popup": "accept"})
    with pytest.raises(ValueError, match="confirm='maybe'"):
        dialog_actions({"confirm": "maybe"})
    assert dialog_actions("auto") == {
        "alert": "accept",
        "beforeunload": "dismiss",
        "confirm": "dismiss",
        "prompt": "dismiss",
    }
    assert set(dialog_actions("manual").values()) == {"manual"}


async def test_connect_with_a_manual_policy_gives_it_to_every_tab(
    ported_browser: ego.Browser, page_url: str
) -> None:
    async with ego.connect(websocket_url(ported_browser), dialogs="manual") as other:
        assert other.dialogs == "manual"
        tab = await other.new_tab(page_url, timeout=HANG)
        try:
            assert tab.dialog_policy == "manual"
            with pytest.raises(DialogOpenError):
                await tab.click("#confirm")
            await tab.handle_dialog(accept=True)
            assert await tab.evaluate("window.answer") is True
        finally:
            await tab.close()


# --- the connection: suspending a session (no browser) ----------------------------------------


async def _held_session(channel: MockChannel) -> tuple[Connection, Session, asyncio.Event]:
    """A connection to the mock with one session whose Runtime.evaluate and Fetch commands
    wait until the event returned is set."""
    release = asyncio.Event()

    async def hold(mock: MockChannel, params: dict[str, Any], session_id: str | None) -> Any:
        await release.wait()
        return {}

    channel.handlers["Runtime.evaluate"] = hold
    channel.handlers["Fetch.continueRequest"] = hold
    connection = Connection(channel)
    result = await connection.send("Target.createTarget", {"url": "about:blank"})
    attached = await connection.send(
        "Target.attachToTarget", {"targetId": result["targetId"], "flatten": True}
    )
    return connection, connection.session(attached["sessionId"]), release


def _error(what: str) -> DialogOpenError:
    return DialogOpenError(f"{what}: blocked", dialog_type="alert", dialog_message="m", url="u")


def _sent(channel: MockChannel) -> list[str]:
    return [command["method"] for command in channel.commands]


async def test_suspend_fails_pending_and_new_commands_but_the_allowed_ones() -> None:
    channel = MockChannel()
    connection, session, release = await _held_session(channel)
    pending = asyncio.ensure_future(session.send("Runtime.evaluate"))
    allowed = asyncio.ensure_future(session.send("Fetch.continueRequest"))
    waiter = session.expect("Page.lifecycleEvent")
    await connection.send("Browser.getVersion")  # answered after both were sent
    session.suspend(_error, allow={"Fetch.", "Page.handleJavaScriptDialog"})
    assert session.state is SessionState.SUSPENDED
    with pytest.raises(DialogOpenError, match=r"Runtime\.evaluate was cut short: blocked"):
        await pending
    with pytest.raises(DialogOpenError, match=r"stopped waiting for Page\.lifecycleEvent"):
        await waiter
    with pytest.raises(DialogOpenError, match=r"DOM\.getDocument was not sent: blocked"):
        await session.send("DOM.getDocument")
    assert "DOM.getDocument" not in _sent(channel)
    # Allowed, by domain and by name; the browser's own session is not suspended.
    assert not allowed.done()
    release.set()
    assert await asyncio.wait_for(allowed, HANG) == {}
    with pytest.raises(ProtocolError, match="wasn't found"):  # the mock's answer: it was sent
        await session.send("Page.handleJavaScriptDialog")
    assert "Page.handleJavaScriptDialog" in _sent(channel)
    await connection.send("Browser.getVersion")
    session.resume()
    assert session.state is SessionState.ATTACHED
    assert await session.send("Runtime.evaluate") == {}
    await connection.close()


async def test_a_crash_ends_a_suspension_with_its_own_error() -> None:
    channel = MockChannel()
    connection, session, release = await _held_session(channel)
    release.set()
    session.suspend(_error)
    crashed = session.expect("Inspector.targetCrashed")
    channel.emit("Inspector.targetCrashed", {}, session_id=session.id)
    await asyncio.wait_for(crashed, HANG)
    assert session.state is SessionState.CRASHED
    with pytest.raises(TargetCrashedError):
        await session.send("Runtime.evaluate")
    await connection.close()
