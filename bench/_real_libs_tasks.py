"""The 20 everyday tasks of ``real_libraries.py``, each written twice: as ego's newcomer
writes it and as Playwright for Python's does, with the page state that says it was done.

ego's code is what README.md, docs/architecture.md and docs/mcp.md teach: ``tab.click``,
``tab.type``, ``tab.check``, ``tab.press`` and ``tab.wait_for`` with a CSS selector (reaching
into open shadow roots) or a ref read from ``tab.snapshot(find=...)`` (``"ref=e12"`` for the
line ``button "Save" [ref=e12]``), as an agent does from the page's outline. Playwright's is
its documented style: ``get_by_role``, ``get_by_label``, ``get_by_text``, ``locator``,
``fill``, ``check``, ``click``.

A task's ``check`` is a JavaScript expression evaluated in the page after the task (by
``tab.evaluate`` for ego, ``page.evaluate`` for Playwright): ``true`` when the page is in the
state the task asked for, else a string saying what it shows. A task that reads something
(the editor's code, the API's answer, the PDF's first line) returns it, and ``read`` checks
it as well.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from _real_libs_site import SECOND_PAGE
from real_pages_workers import PHRASE

import ego

EgoCode = Callable[[ego.Tab], Awaitable[Any]]
PlaywrightCode = Callable[[Any], Awaitable[Any]]

EMAIL = "ada@example.com"
NAME = "Grace Hopper"
CODE = "const answer = 6 * 7;"
COMMENTED = "let total = 1"
PET_BODY = '{"name": "Rex", "kind": "dog"}'

#: How long an agent keeps looking for a line in the snapshot before it gives up (a menu
#: that is still opening is not in the accessibility tree yet).
LOOK_FOR = 5.0

_LINE = re.compile(
    r'^\s*(?P<role>[\w-]+)(?: (?P<name>"(?:[^"\\]|\\.)*"))?(?P<rest>.*?)\[ref=(?P<ref>e\d+)\]'
)


@dataclass(frozen=True)
class Task:
    """One everyday task on one library's page.

    Attributes:
        name: what the task does, as the table prints it.
        page: the path of the page it starts on.
        ego: ego's code; what it returns is the value it read, if any.
        playwright: Playwright's code, the same.
        check: a JavaScript expression, ``true`` when the page shows the task done, else a
            string of what it shows; polled for a few seconds after the task.
        read: when set, what the value the task read must hold (compared with spaces
            removed: pdf.js and Swagger UI break their text across elements).
        api_call: when set, the Pet API call (method, path, body or "") the server must have
            received during the task.
    """

    name: str
    page: str
    ego: EgoCode
    playwright: PlaywrightCode
    check: str
    read: str | None = None
    api_call: tuple[str, str, str] | None = None


async def ref(tab: ego.Tab, name: str, role: str, *, exact: bool = True) -> str:
    """``"ref=eN"`` of the first snapshot line with ``role`` and ``name``, as an agent picks
    it from ``tab.snapshot(find=name)``: the name matched whatever its case (Chrome applies
    a ``text-transform``), exactly or, with ``exact=False``, as a part; looked for again
    until :data:`LOOK_FOR` runs out, as an agent takes another snapshot.

    Raises:
        LookupError: no such line; the message quotes what the snapshot held.
    """
    deadline = time.monotonic() + LOOK_FOR
    wanted = " ".join(name.split()).casefold()
    while True:
        outline = await tab.snapshot(find=name)
        for line in outline.splitlines():
            match = _LINE.match(line)
            if match is None or match["role"] != role or match["name"] is None:
                continue
            shown = " ".join(json.loads(match["name"]).split()).casefold()
            if shown == wanted or (not exact and wanted in shown):
                return f"ref={match['ref']}"
        if time.monotonic() >= deadline:
            held = " | ".join(line.strip() for line in outline.splitlines()[1:6])
            raise LookupError(f"no line {role} {name!r} with a ref in snapshot(find=): {held}")
        await asyncio.sleep(0.2)


# --------------------------------------------------------------------------- Shoelace


async def ego_menu(tab: ego.Tab) -> None:
    await tab.click(await ref(tab, "Actions", "button"))
    await tab.click(await ref(tab, "Duplicate", "menuitem"))


async def pw_menu(page: Any) -> None:
    await page.get_by_role("button", name="Actions").click()
    await page.get_by_role("menuitem", name="Duplicate").click()


async def ego_switch(tab: ego.Tab) -> None:
    await tab.check("#dark")


async def pw_switch(page: Any) -> None:
    await page.get_by_text("Dark mode").click()


async def ego_checkbox(tab: ego.Tab) -> None:
    await tab.check(await ref(tab, "I agree to the terms", "checkbox"))


async def pw_checkbox(page: Any) -> None:
    await page.get_by_text("I agree to the terms").click()


async def ego_tab(tab: ego.Tab) -> None:
    await tab.click(await ref(tab, "Billing", "tab"))


async def pw_tab(page: Any) -> None:
    await page.get_by_role("tab", name="Billing").click()


async def ego_subscribe(tab: ego.Tab) -> None:
    await tab.type("sl-input[name=email]", EMAIL)
    await tab.click(await ref(tab, "Subscribe", "button"))


async def pw_subscribe(page: Any) -> None:
    await page.get_by_label("Email").fill(EMAIL)
    await page.get_by_role("button", name="Subscribe").click()


async def ego_dialog(tab: ego.Tab) -> None:
    await tab.click("#signout")
    await tab.click("sl-button.confirm")  # the closed dialog's Confirm comes first


async def pw_dialog(page: Any) -> None:
    await page.get_by_role("button", name="Sign out").click()
    await page.get_by_role("button", name="Confirm").click()


async def ego_radio(tab: ego.Tab) -> None:
    await tab.check(await ref(tab, "Large", "radio"))


async def pw_radio(page: Any) -> None:
    await page.get_by_role("radio", name="Large").check()


async def ego_select(tab: ego.Tab) -> None:
    await tab.click(await ref(tab, "Country", "combobox"))
    await tab.click(await ref(tab, "Japan", "option"))


async def pw_select(page: Any) -> None:
    await page.get_by_role("combobox", name="Country").click()
    await page.get_by_role("option", name="Japan").click()


# --------------------------------------------------------------------------- Ionic


async def ego_segment(tab: ego.Tab) -> None:
    await tab.click(await ref(tab, "Favorites", "tab"))


async def pw_segment(page: Any) -> None:
    await page.locator("ion-segment-button[value=favorites]").click()


# Playwright's check() reads the state right after its click, and Ionic (Stencil) renders
# aria-checked a frame later: "Clicking the checkbox did not change its state" in about one
# run of three here (microsoft/playwright#13470). Its users click Ionic's toggles, checkboxes
# and radios instead, as Ionic's own tests do.


async def ego_toggle(tab: ego.Tab) -> None:
    await tab.check("#notify")


async def pw_toggle(page: Any) -> None:
    await page.get_by_role("switch", name="Notifications").click()


async def ego_remember(tab: ego.Tab) -> None:
    await tab.check(await ref(tab, "Remember me", "checkbox"))


async def pw_remember(page: Any) -> None:
    await page.get_by_role("checkbox", name="Remember me").click()


async def ego_save(tab: ego.Tab) -> None:
    await tab.type("#name", NAME)
    await tab.click(await ref(tab, "Save", "button"))


async def pw_save(page: Any) -> None:
    await page.get_by_label("Name").fill(NAME)
    await page.get_by_role("button", name="Save").click()


async def ego_alert(tab: ego.Tab) -> None:
    await tab.click(await ref(tab, "Delete item", "button"))
    await tab.click(await ref(tab, "Delete", "button"))


async def pw_alert(page: Any) -> None:
    await page.get_by_role("button", name="Delete item").click()
    await page.get_by_role("button", name="Delete", exact=True).click()


async def ego_pet(tab: ego.Tab) -> None:
    await tab.check(await ref(tab, "Dog", "radio"))


async def pw_pet(page: Any) -> None:
    await page.get_by_role("radio", name="Dog").click()


# --------------------------------------------------------------------------- CodeMirror


async def ego_code(tab: ego.Tab) -> Any:
    await tab.type(".cm-content", CODE)
    return await tab.evaluate("document.querySelector('.cm-content').innerText")


async def pw_code(page: Any) -> Any:
    await page.locator(".cm-content").fill(CODE)
    return await page.locator(".cm-content").inner_text()


async def ego_comment(tab: ego.Tab) -> None:
    await tab.type(".cm-content", COMMENTED)
    await tab.press("Control+/")


async def pw_comment(page: Any) -> None:
    await page.locator(".cm-content").fill(COMMENTED)
    await page.keyboard.press("Control+/")


# --------------------------------------------------------------------------- Swagger UI

_RESPONSE = ".live-responses-table tr.response .response-col_description"


async def ego_get_pet(tab: ego.Tab) -> Any:
    await tab.click(await ref(tab, "Find a pet by id", "button", exact=False))
    await tab.click(await ref(tab, "Try it out", "button"))
    await tab.type(await ref(tab, "petId", "textbox", exact=False), "7")
    await tab.click(await ref(tab, "Execute", "button"))
    await tab.wait_for(selector=_RESPONSE)
    return await tab.evaluate(f"document.querySelector({_RESPONSE!r}).innerText")


async def pw_get_pet(page: Any) -> Any:
    await page.get_by_text("Find a pet by id").click()
    await page.get_by_role("button", name="Try it out").click()
    await page.get_by_placeholder("petId").fill("7")
    await page.get_by_role("button", name="Execute").click()
    return await page.locator(_RESPONSE).inner_text()


async def ego_add_pet(tab: ego.Tab) -> Any:
    await tab.click(await ref(tab, "Add a pet", "button", exact=False))
    await tab.click(await ref(tab, "Try it out", "button"))
    await tab.type("textarea.body-param__text", PET_BODY)
    await tab.click(await ref(tab, "Execute", "button"))
    await tab.wait_for(selector=_RESPONSE)
    return await tab.evaluate(f"document.querySelector({_RESPONSE!r}).innerText")


async def pw_add_pet(page: Any) -> Any:
    await page.get_by_text("Add a pet").click()
    await page.get_by_role("button", name="Try it out").click()
    await page.locator("textarea.body-param__text").fill(PET_BODY)
    await page.get_by_role("button", name="Execute").click()
    return await page.locator(_RESPONSE).inner_text()


# --------------------------------------------------------------------------- pdf.js


async def ego_pdf_text(tab: ego.Tab) -> Any:
    await tab.wait_for(selector=".textLayer span")
    return await tab.evaluate("document.querySelector('.textLayer').innerText")


async def pw_pdf_text(page: Any) -> Any:
    await page.locator(".textLayer span").first.wait_for()
    return await page.locator(".textLayer").inner_text()


async def ego_next_page(tab: ego.Tab) -> None:
    await tab.wait_for(text="Page one.")
    await tab.click(await ref(tab, "Next page", "button"))
    await tab.wait_for(text="Page 2")


async def pw_next_page(page: Any) -> None:
    from playwright.async_api import expect

    await page.get_by_text("Page one.").wait_for()
    await page.get_by_role("button", name="Next page").click()
    await expect(page.locator("#where")).to_have_text("Page 2")


def _is(expression: str, expected: str) -> str:
    """A check that ``expression`` is ``expected`` (a JS literal), else says what it is."""
    return f"({expression}) === {expected} || 'it is ' + JSON.stringify({expression})"


_PAGE_TWO = "document.querySelector('.page[data-page-number=\"2\"] .textLayer')"

TASKS = [
    Task(
        "shoelace: Actions menu, choose Duplicate", "/shoelace", ego_menu, pw_menu,
        _is("state.menu", "'duplicate'"),
    ),
    Task(
        "shoelace: turn on the Dark mode switch", "/shoelace", ego_switch, pw_switch,
        _is("document.getElementById('dark').checked", "true"),
    ),
    Task(
        "shoelace: check a checkbox in a shadow root", "/shoelace", ego_checkbox, pw_checkbox,
        _is("document.getElementById('agree').checked", "true"),
    ),
    Task(
        "shoelace: select the tab Billing", "/shoelace", ego_tab, pw_tab,
        _is("document.getElementById('tabs').querySelector('sl-tab[active]')?.panel",
            "'billing'"),
    ),
    Task(
        "shoelace: fill Email, Subscribe", "/shoelace", ego_subscribe, pw_subscribe,
        _is("state.subscribed", repr(EMAIL)),
    ),
    Task(
        "shoelace: Sign out, Confirm in its dialog", "/shoelace", ego_dialog, pw_dialog,
        _is("state.confirmed", "'signout'"),
    ),
    Task(
        "shoelace: pick the radio Large", "/shoelace", ego_radio, pw_radio,
        _is("document.getElementById('size').value", "'large'"),
    ),
    Task(
        "shoelace: choose Japan in a select", "/shoelace", ego_select, pw_select,
        _is("document.getElementById('country').value", "'jp'"),
    ),
    Task(
        "ionic: select the segment Favorites", "/ionic", ego_segment, pw_segment,
        _is("document.getElementById('filter').value", "'favorites'"),
    ),
    Task(
        "ionic: turn on the Notifications toggle", "/ionic", ego_toggle, pw_toggle,
        _is("document.getElementById('notify').checked", "true"),
    ),
    Task(
        "ionic: check Remember me", "/ionic", ego_remember, pw_remember,
        _is("document.getElementById('remember').checked", "true"),
    ),
    Task(
        "ionic: type a name, Save", "/ionic", ego_save, pw_save,
        _is("state.saved", repr(NAME)),
    ),
    Task(
        "ionic: Delete item, confirm in the alert", "/ionic", ego_alert, pw_alert,
        _is("state.deleted", "true"),
    ),
    Task(
        "ionic: pick the radio Dog", "/ionic", ego_pet, pw_pet,
        _is("document.getElementById('pet').value", "'dog'"),
    ),
    Task(
        "codemirror: type code, read it back", "/codemirror", ego_code, pw_code,
        _is("view.state.doc.toString()", json.dumps(CODE)), read=CODE,
    ),
    Task(
        "codemirror: Control+/ comments the line", "/codemirror", ego_comment, pw_comment,
        _is("view.state.doc.toString()", json.dumps("// " + COMMENTED)),
    ),
    Task(
        "swagger-ui: GET a pet, read the response", "/swagger", ego_get_pet, pw_get_pet,
        _is(f"document.querySelector({_RESPONSE!r})?.innerText.includes('Biscuit')", "true"),
        read='"name": "Biscuit"', api_call=("GET", "/api/pets/7", ""),
    ),
    Task(
        "swagger-ui: POST a pet with a JSON body", "/swagger", ego_add_pet, pw_add_pet,
        _is(f"document.querySelector({_RESPONSE!r})?.innerText.includes('Rex')", "true"),
        read='"id": 100', api_call=("POST", "/api/pets", PET_BODY),
    ),
    Task(
        "pdf.js: render, read the first line", "/pdf", ego_pdf_text, pw_pdf_text,
        "window.rendered.then((r) => (r.pages === 1 && r.painted > 500) || JSON.stringify(r))",
        read=PHRASE,
    ),
    Task(
        "pdf.js viewer: Next page shows page 2", "/pdf-pager", ego_next_page, pw_next_page,
        f"(pdfViewer.currentPageNumber === 2 && {_PAGE_TWO}?.textContent.replace(/\\s/g, '')"
        f".includes({json.dumps(SECOND_PAGE.replace(' ', ''))})) || 'page '"
        f" + pdfViewer.currentPageNumber + ', page 2 shows ' + {_PAGE_TWO}?.textContent",
    ),
]  # fmt: skip
