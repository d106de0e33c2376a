"""Typing as the page sees it, whatever order Chrome runs ego's commands in: a field is focused
(or clicked: pressed before released) before any key, the clear's Delete comes before the text,
and the read-back that checks the text arrived reads it even when Chrome runs it before the
input it was sent after. The scripts a verb runs are made once per document and called again
by a handle, made anew when the document that held them is gone.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import ego
from ego.errors import ElementNotActionableError
from ego.page import input as actions
from tests.helpers.page_server import PageServer

pytestmark = pytest.mark.chrome

#: Every trusted event of a click and of typing, with its target and what the focus was then.
FIELDS = """<!doctype html><title>typing</title>
<input id=field value=old>
<div id=pick style="display: inline-block; padding: 20px; border: 1px solid">
  <input id=inner value=x style="width: 60px"></div>
<input id=refusing value=kept>
<script>
window.log = [];
const TYPES = ['pointerdown', 'mousedown', 'pointerup', 'mouseup', 'click', 'focus',
               'keydown', 'beforeinput', 'input', 'keyup'];
for (const type of TYPES) window.addEventListener(type, (e) => {
  if (!e.isTrusted || !e.target.id) return;
  log.push([type, e.target.id, e.inputType || e.key || '', document.activeElement.id]);
}, true);
refusing.addEventListener('beforeinput', (e) => e.preventDefault());
</script>"""


def typed(field: str, delete: bool = True) -> list[list[str]]:
    """The events a field sees when text is typed into it (focused already)."""
    clear = [
        ["keydown", field, "Delete", field],
        ["beforeinput", field, "deleteContentForward", field],
        ["input", field, "deleteContentForward", field],
        ["keyup", field, "Delete", field],
    ]
    text = [["beforeinput", field, "insertText", field], ["input", field, "insertText", field]]
    return [*(clear if delete else []), *text]


async def test_a_field_has_the_focus_before_its_keys_and_the_clear_comes_before_the_text(
    tab: ego.Tab, server: PageServer
) -> None:
    await tab.navigate(server.route("/typing/events", FIELDS))
    for n in range(5):
        await tab.evaluate("log.length = 0; document.activeElement.blur(); 0")
        await tab.type("#field", f"text {n}")
        assert await tab.evaluate("[log, field.value]") == [
            [["focus", "field", "", "field"], *typed("field")],
            f"text {n}",
        ]
        # A wrapper is clicked: pressed, the focus moving in, released, then the keys.
        await tab.evaluate("log.length = 0; inner.value = 'x'; 0")
        await tab.type("#pick", f"inner {n}")
        press = [["pointerdown", "inner", "", "field"], ["mousedown", "inner", "", "field"]]
        release = [["pointerup", "inner", "", "inner"], ["mouseup", "inner", "", "inner"]]
        assert await tab.evaluate("[log, inner.value]") == [
            [*press, ["focus", "inner", "", "inner"], *release,
             ["click", "inner", "", "inner"], *typed("inner")],
            f"inner {n}",
        ]  # fmt: skip


async def test_a_read_back_chrome_runs_before_the_text_arrived_reads_again(
    tab: ego.Tab, server: PageServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    await tab.navigate(server.route("/typing/late", FIELDS))
    frame = tab.main_frame
    sent = frame.top_send
    read = actions._read
    answers: list[Any] = []
    answered = asyncio.Event()

    # The text is held back until the read-back sent after it has answered: what Chrome does
    # now and then (the input goes through the browser, the call straight to the page).
    async def late_text(method: str, params: Any = None, **options: Any) -> Any:
        if method == "Input.insertText":
            await asyncio.wait_for(answered.wait(), 10)
        return await sent(method, params, **options)

    async def noted(*args: Any, watched: bool) -> Any:
        answer = await read(*args, watched=watched)
        answers.append((watched, answer))
        if watched:
            answered.set()
        return answer

    monkeypatch.setattr(frame, "top_send", late_text)
    monkeypatch.setattr(actions, "_read", noted)
    await tab.type("#field", "arrived late")
    assert await tab.evaluate("field.value") == "arrived late"
    assert answers == [
        (True, {"shown": None, "marked": False}),
        (False, {"shown": "arrived late", "marked": True}),
    ]
    # A field that refuses the text is judged on what it holds once the text came.
    answered.clear()
    with pytest.raises(ElementNotActionableError) as caught:
        await tab.type("#refusing", "never")
    assert caught.value.check == "typed"
    assert caught.value.seen == "it holds 'kept' after typing 'never'"


async def test_scripts_are_made_once_per_document_and_again_when_it_went(
    tab: ego.Tab, server: PageServer
) -> None:
    await tab.navigate(server.route("/typing/handles", FIELDS))
    await tab.type("#field", "one")
    handles = dict(tab.document_memo["ego.page.script_handles"])
    assert len(handles) == 2  # the checks and the read-back
    await tab.type("#field", "two")
    assert tab.document_memo["ego.page.script_handles"] == handles
    # A new document: the handles of the old one name functions Chrome no longer has. Kept
    # by mistake, each fails without running (the call is made with the source), and is
    # made again for the next call.
    await tab.navigate(server.route("/typing/handles-2", FIELDS))
    tab.document_memo["ego.page.script_handles"] = dict(handles)
    await tab.type("#field", "three")
    assert await tab.evaluate("[field.value, log.filter((e) => e[0] === 'input').length]") == [
        "three", 2,
    ]  # fmt: skip
    assert tab.document_memo["ego.page.script_handles"] == {}
    await tab.type("#field", "four")
    assert await tab.evaluate("field.value") == "four"
    renewed = tab.document_memo["ego.page.script_handles"]
    assert renewed.keys() == handles.keys()
    assert not set(renewed.values()) & set(handles.values())
