"""The scripts a verb runs are made once per document and called again by a handle, made anew
when the document that held them is gone.
"""

from __future__ import annotations

import pytest

import ego
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
