"""The keyboard as a person uses it: ``tab.keyboard`` types into whatever has the focus (no
selector, the caret left where it was), presses chords and sequences, holds a modifier for
the clicks that follow; a platform's editing shortcut carries its editing command. Typing
reaches a document that is its own editor (a contenteditable body, a ``designMode`` frame)
and replaces the text of an editor that keeps a hidden textarea, by select all and Delete
from the keyboard.
"""

from __future__ import annotations

import pytest

import ego
from ego.errors import ElementNotActionableError
from ego.page.keys import key_event, key_events, split_keys
from tests.helpers.hands_pages import RECORD, TEXTAREA_EDITOR
from tests.helpers.page_server import PageServer

pytestmark = pytest.mark.chrome


async def serve(tab: ego.Tab, server: PageServer, path: str, body: str) -> None:
    await tab.navigate(server.route(path, f"<!doctype html><title>keys</title>{RECORD}{body}"))


@pytest.mark.parametrize("mac", [False, True])
def test_shortcuts_carry_their_editing_command_on_the_platform_that_has_them(mac: bool) -> None:
    own, other = ("Meta", "Control") if mac else ("Control", "Meta")
    assert key_event(f"{own}+A", mac=mac)[1]["commands"] == ["selectAll"]
    assert key_event(f"{own}+Shift+Z", mac=mac)[1]["commands"] == ["redo"]
    assert "commands" not in key_event(f"{other}+A", mac=mac)[1]
    assert key_event("ControlOrMeta+v", mac=mac) == key_event(f"{own}+V", mac=mac)
    # The command goes with the key going down, never with its release.
    events = key_events("ControlOrMeta+C", mac=mac)
    assert [e["type"] for e in events] == ["rawKeyDown", "rawKeyDown", "keyUp", "keyUp"]
    assert [e.get("commands") for e in events] == [None, ["copy"], None, None]
    # A modifier already held is not pressed again, and shapes the key.
    held = key_events("a", held={"Shift"})
    assert [(e["type"], e["key"], e["modifiers"]) for e in held] == [
        ("keyDown", "A", 8), ("keyUp", "A", 8),
    ]  # fmt: skip


def test_sequences_are_cut_at_spaces_and_a_space_alone_is_the_space_bar() -> None:
    assert split_keys("Control+A Delete") == ["Control+A", "Delete"]
    assert split_keys(["Shift+Tab", "Enter  Escape"]) == ["Shift+Tab", "Enter", "Escape"]
    assert split_keys(" ") == [" "]
    with pytest.raises(ValueError, match="name a key"):
        split_keys("")


FIELDS = """
<input id=first value="first field"><input id=second>
<ul id=items><li id=a>A</li><li id=b>B</li><li id=c>C</li></ul>
<script>
let anchor = null;
for (const li of items.children) li.addEventListener('click', (e) => {
  if (e.shiftKey && anchor) log.push(['range', anchor.id, li.id]); else anchor = li;
});
</script>
"""


async def test_the_keyboard_types_at_the_caret_presses_chords_and_holds_keys(
    tab: ego.Tab, server: PageServer
) -> None:
    await serve(tab, server, "/keys/fields", FIELDS)
    await tab.click("#first")
    await tab.press("End")
    await tab.keyboard.type(" typed")  # at the caret: nothing clicked again
    assert await tab.evaluate("first.value") == "first field typed"
    await tab.keyboard.press("Control+Shift+ArrowLeft Backspace")  # a word, then delete it
    assert await tab.evaluate("first.value") == "first field "
    await tab.keyboard.press("ControlOrMeta+A", "Delete")
    assert await tab.evaluate("first.value") == ""
    await tab.keyboard.insert_text("héllo ☃")
    assert await tab.evaluate("first.value") == "héllo ☃"
    await tab.press("Tab")
    await tab.keyboard.down("Shift")
    await tab.keyboard.press("a")
    await tab.keyboard.up("Shift")
    await tab.keyboard.press("b")
    assert await tab.evaluate("second.value") == "Ab"

    # A modifier held by the keyboard is held for the clicks that follow.
    await tab.click("#a")
    await tab.keyboard.down("Shift")
    await tab.click("#c")
    await tab.keyboard.up("Shift")
    assert await tab.evaluate("log.filter((e) => e[0] === 'range')") == [["range", "a", "c"]]
    with pytest.raises(ValueError, match="one key at a time"):
        await tab.keyboard.down("Control+A")
    with pytest.raises(ValueError, match="unknown key 'Enterr'"):
        await tab.press("Enter Enterr")


async def test_typing_replaces_an_editors_text_behind_its_hidden_textarea(
    tab: ego.Tab, server: PageServer
) -> None:
    await serve(tab, server, "/keys/textarea-editor", TEXTAREA_EDITOR)
    for n in range(5):  # every time, not most times
        await tab.type("#editor", f"new text {n}")
        assert await tab.evaluate("view.textContent") == f"new text {n}"
    await tab.type("#editor", " appended", clear=False)
    assert await tab.evaluate("view.textContent") == "new text 4 appended"


FRAMED_EDITORS = """
<iframe id=rich srcdoc="<body contenteditable=true><p>old rich</p></body>"></iframe>
<iframe id=design srcdoc="<body><p>old design</p></body>"></iframe>
<script>
design.addEventListener('load', () => { design.contentDocument.designMode = 'on'; });
</script>
"""


async def test_a_document_that_is_its_own_editor_takes_typing(
    tab: ego.Tab, server: PageServer
) -> None:
    await serve(tab, server, "/keys/framed-editors", FRAMED_EDITORS)
    await tab.wait_for(function="() => design.contentDocument.designMode === 'on'")
    await tab.type("iframe#rich >> body", "rich text")
    await tab.type("iframe#design >> body", "designed")
    await tab.type("iframe#design >> body", " and more", clear=False)
    rich = await tab.frame(selector="#rich")
    design = await tab.frame(selector="#design")
    assert await rich.evaluate("document.body.textContent") == "rich text"
    assert await design.evaluate("document.body.textContent") == "designed and more"
    await serve(tab, server, "/keys/editable-body", "<body contenteditable=true><p>old</p>")
    await tab.type("body", "body text")
    assert await tab.evaluate("document.body.textContent") == "body text"


STUBBORN = """
<div id=stubborn contenteditable=true>keep me</div>
<script>
// It refuses to lose its text: no deletion, and nothing typed over a selection.
stubborn.addEventListener('beforeinput', (e) => {
  if (e.inputType.startsWith('delete') || !getSelection().isCollapsed) e.preventDefault();
});
</script>
"""


async def test_a_clear_that_does_not_take_is_made_again_then_reported(
    tab: ego.Tab, server: PageServer
) -> None:
    await serve(tab, server, "/keys/stubborn", STUBBORN)
    with pytest.raises(ElementNotActionableError) as caught:
        await tab.type("#stubborn", "new")
    assert caught.value.check == "typed"
    assert "still shows what it held before" in str(caught.value)
    assert "'keep me'" in str(caught.value)


REFUSING = """
<input id=f><input id=g value=old><input id=secret type=password value=hunter2>
<div id=locked contenteditable=true>fixed</div>
<input id=pin><input id=day type=date><input id=count type=number value=1>
<input id=same value=kept>
<script>
// Fields that refuse every text typed into them.
for (const el of [f, g, secret, locked]) {
  el.addEventListener('beforeinput', (e) => e.preventDefault());
}
// A mask: what arrives is kept as digits and shown as "12-34".
pin.addEventListener('input', () => {
  const digits = pin.value.replace(/\\D/g, '').slice(0, 4);
  pin.value = digits.length > 2 ? digits.slice(0, 2) + '-' + digits.slice(2) : digits;
});
</script>
"""


async def test_typing_a_field_refused_is_reported_and_one_that_reformats_is_not(
    tab: ego.Tab, server: PageServer
) -> None:
    await serve(tab, server, "/keys/refusing", REFUSING)
    for selector, held, clear in (("#f", "''", True), ("#g", "'old'", True),
                                  ("#locked", "'fixed'", False)):  # fmt: skip
        with pytest.raises(ElementNotActionableError) as caught:
            await tab.type(selector, "hello", clear=clear)
        assert caught.value.check == "typed"
        assert caught.value.seen == f"it holds {held} after typing 'hello'"
        assert f"({selector!r})" in str(caught.value)
        assert "\n" not in str(caught.value)
    # A password field's text is never shown, not even in the error.
    with pytest.raises(ElementNotActionableError) as caught:
        await tab.type("#secret", "swordfish")
    assert "hunter2" not in str(caught.value)
    assert "swordfish" not in str(caught.value)
    assert await tab.evaluate("[f.value, g.value, locked.textContent]") == ["", "old", "fixed"]

    # A mask that reformats what arrived, a value in the browser's own format, the same text
    # typed again: each holds what was typed, as the field shows it.
    await tab.type("#pin", "1234")
    await tab.type("#day", "2024-05-06")
    await tab.type("#count", "42")
    await tab.type("#count", "7", clear=False)
    await tab.type("#same", "kept")
    assert await tab.evaluate("[pin.value, day.value, count.value, same.value]") == [
        "12-34", "2024-05-06", "427", "kept",
    ]  # fmt: skip
    # A date in another format is refused by the browser, and the error says the one it takes;
    # the field keeps its value.
    with pytest.raises(ElementNotActionableError) as caught:
        await tab.type("#day", "06/05/2025")
    assert caught.value.seen == "the browser takes no value '06/05/2025'; it holds '2024-05-06'"
    assert "YYYY-MM-DD" in str(caught.value)
    assert await tab.evaluate("day.value") == "2024-05-06"
