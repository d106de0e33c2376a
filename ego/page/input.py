"""A page's input verbs as a user makes them: click, hover, check, type, select, upload.

Each finds what a selector or ref names (:mod:`.elements`), waits until it can take the input
(:mod:`.actionability`: attached, visible, enabled, stable, receiving events at its point),
then acts through CDP's Input domain on the tab's session, at the element's point in the
tab's coordinates: a mouse press and release for a click (any button, any count: a double
click is two, the second with ``clickCount`` 2, as a person's is), ``Input.insertText`` (or
key events) for typing. Options are chosen from inside the page and files set with
``DOM.setFileInputFiles``, as nothing else can; keys are :mod:`.keys`, the pointer
:mod:`.mouse`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ..errors import ElementNotActionableError, ElementNotFoundError, WrongElementError
from .actionability import (
    SLIPPED,
    Actionable,
    click_landed,
    deliver_mouse,
    not_actionable,
    tab_point,
)
from .aim import Position, aim, check_position, point_on
from .elements import Elements, call_on, release, release_elements
from .hands import BUTTON_BITS, MODIFIER_BITS
from .keys import (
    key_events,
    modifier_fields,
    modifier_name,
    platform_is_mac,
    press,
    send_input,
    type_keys,
)
from .mouse import check_button
from .mouse import move as mouse_move
from .navigation_watch import NavigationWatch
from .page import Page

__all__ = ["Click", "check", "click", "hover", "press", "select", "type_text", "upload"]

#: The most seconds a checkbox's framework may take to show the state a click gave it.
_STATE_SETTLES = 1.0
#: The most seconds an editor may take to show the text typed into it.
_TEXT_SETTLES = 0.5

_MOUSE: Final = "Input.dispatchMouseEvent"
_KEY: Final = "Input.dispatchKeyEvent"


@dataclass(frozen=True)
class Click:
    """How a click presses: which button, how many times (2: a double click), with which
    modifier keys held, where on the element, and how long each press lasts."""

    button: str = "left"
    count: int = 1
    modifiers: frozenset[str] = frozenset()
    position: Position | None = None
    delay: float | None = None

    @classmethod
    def of(
        cls,
        verb: str,
        *,
        button: str = "left",
        click_count: int = 1,
        modifiers: Iterable[str] = (),
        position: Position | None = None,
        delay: float | None = None,
    ) -> Click:
        """The click the arguments of ``verb`` describe.

        Raises:
            ValueError: an unknown button or modifier, a click count below 1, a position
                that is not ``{"x", "y"}``, a negative delay.
        """
        check_button(button, click_count, verb)
        check_position(position, verb)
        if isinstance(modifiers, str):
            modifiers = [modifiers]
        names = set()
        for given in modifiers:
            name = modifier_name(str(given))
            if name is None:
                raise ValueError(
                    f"{verb}: modifiers holds {given!r}; use Alt, Control, Meta, Shift or "
                    "ControlOrMeta"
                )
            names.add(name)
        if delay is not None and delay < 0:
            raise ValueError(f"{verb}: delay={delay!r}; give seconds, 0 or more")
        return cls(button, click_count, frozenset(names), position, delay)


#: A left click, once.
_LEFT: Final = Click()


async def _aim(
    page: Page,
    selector: str,
    action: str,
    wait: float,
    force: bool,
    verb: str,
    *,
    position: Position | None = None,
    prepare: dict[str, Any] | None = None,
    held: bool = True,
    kind: Callable[[Elements], Awaitable[None]] | None = None,
) -> tuple[Elements, Actionable, float]:
    """:func:`.aim.aim`, the point then moved to ``position`` on the element."""
    elements, chosen, left = await aim(
        page, selector, action, wait, force, verb, prepare=prepare, held=held, kind=kind
    )
    if position is not None:
        try:
            chosen, _ = await point_on(elements, chosen, position)
        except BaseException:
            release_elements(elements)
            raise
    return elements, chosen, left


async def _mouse_click(
    elements: Elements,
    chosen: Actionable,
    wait: float,
    verb: str,
    how: Click,
    navigation: NavigationWatch,
) -> None:
    """A click at the chosen point: the mouse moves there and its button goes down and up,
    once per count (``clickCount`` 1, 2, ...), the modifiers ``how`` names held around it.
    What is asked of the page after the input gives up on a document ``navigation`` saw go.
    """
    page = elements.page
    state = page.input_state
    extra = sorted(how.modifiers - state.modifiers)
    mask = state.modifier_mask(how.modifiers)
    held = state.button_mask
    bit = BUTTON_BITS[how.button]
    events: list[dict[str, Any]] = [{"type": "mouseMoved", "modifiers": mask, "buttons": held}]
    for count in range(1, how.count + 1):
        at = {"button": how.button, "clickCount": count, "modifiers": mask}
        events.append({"type": "mousePressed", "buttons": held | bit, **at})
        events.append({"type": "mouseReleased", "buttons": held, **at})
    keys_down = state.modifier_mask()
    downs = []
    for name in extra:
        keys_down |= MODIFIER_BITS[name]
        down = {"type": "rawKeyDown", "modifiers": keys_down, **modifier_fields(name)}
        downs.append((_KEY, down))
    if downs:
        await send_input(page, downs)
    try:
        if not how.delay:
            x, y = await deliver_mouse(elements, chosen, events, wait, verb, navigation)
        else:
            x, y = await deliver_mouse(elements, chosen, events[:2], wait, verb, navigation)
            for event in events[2:]:
                if event["type"] == "mouseReleased" or event["clickCount"] > 1:
                    await asyncio.sleep(how.delay)  # the pace asked for, not a wait
                await page.top_send(_MOUSE, {**event, "x": x, "y": y})
    finally:
        ups = []
        for name in reversed(extra):
            keys_down &= ~MODIFIER_BITS[name]
            ups.append((_KEY, {"type": "keyUp", "modifiers": keys_down, **modifier_fields(name)}))
        if ups:
            await send_input(page, ups)
    state.x, state.y = x, y


async def _click_until_it_lands(
    page: Page,
    selector: str,
    action: str,
    deadline: float,
    force: bool,
    verb: str,
    elements: Elements,
    chosen: Actionable,
    held: bool = True,
    prepare: dict[str, Any] | None = None,
    how: Click = _LEFT,
) -> tuple[Elements, Actionable]:
    """Click at the chosen point as ``how`` says; when the page moved under the point before
    the click's events arrived, they were cancelled in the page
    (:func:`.actionability.click_landed`), and the checks and the click run again until
    ``deadline``. Returns the elements and the choice of the click that landed (the earlier
    elements are released).

    Raises:
        ElementNotActionableError: every click until the deadline would have landed
            elsewhere, or the press reached the element and the page then moved another
            element under the point, which the release or the click reached (``receives
            events``; the rest of that click was cancelled, and it is not made again since
            the page saw the press).
        CommandTimeoutError: the click began a navigation that did not end within the
            tab's ``default_timeout``.
    """
    while True:
        left = max(0.0, deadline - time.monotonic())
        with NavigationWatch(elements.page, elements.page.default_timeout) as navigation:
            await _mouse_click(elements, chosen, left, verb, how, navigation)
            miss = None if force else await click_landed(elements, navigation)
            if miss is None:
                await navigation.arrived(verb)
                return elements, chosen
        if miss.pressed:
            raise _refused(
                elements, chosen, verb, "receives events",
                f"the {miss.event} went to {miss.target} after the press reached it, so the "
                "rest of the click was cancelled", words=SLIPPED,
            )  # fmt: skip
        release_elements(elements)
        left = deadline - time.monotonic()
        if left <= 0:
            raise _refused(
                elements, chosen, verb, "receives events",
                f"the page moved under the point before the click arrived: it would have "
                f"landed on {miss.target}, so it was cancelled",
            )  # fmt: skip
        elements, chosen, _ = await _aim(
            page, selector, action, left, force, verb, position=how.position, prepare=prepare,
            held=held,
        )  # fmt: skip


async def click(
    page: Page,
    selector: str,
    *,
    how: Click = _LEFT,
    wait: float = 5.0,
    force: bool = False,
    verb: str = "click",
) -> None:
    """Click the element as a user does, once it can take the click, as ``how`` says
    (button, count, modifiers, position, delay).

    Raises:
        InvalidSelectorError: a malformed selector.
        ElementNotFoundError: nothing matches within ``wait`` (StaleRefError: a ref whose
            node is gone).
        ElementNotActionableError: it stayed hidden, disabled, moving or covered.
    """
    deadline = time.monotonic() + wait
    if "ControlOrMeta" in how.modifiers:
        own = "Meta" if await platform_is_mac(page) else "Control"
        how = dataclasses.replace(how, modifiers=how.modifiers - {"ControlOrMeta"} | {own})
    elements, chosen, _ = await _aim(
        page, selector, "click", wait, force, verb, position=how.position, held=False
    )
    try:
        elements, chosen = await _click_until_it_lands(
            page, selector, "click", deadline, force, verb, elements, chosen, held=False,
            how=how,
        )  # fmt: skip
    finally:
        release_elements(elements)


async def hover(
    page: Page,
    selector: str,
    *,
    position: Position | None = None,
    wait: float = 5.0,
    force: bool = False,
) -> None:
    """Move the mouse over the element (at ``position`` from its padding box's top-left
    corner, else its point) once it is visible, still and on top. With a mouse button down,
    the move is a drag's: it may start an HTML5 drag, or carry one on (:func:`.mouse.move`).

    Raises:
        ValueError: a position that is not ``{"x", "y"}``.
        as :func:`click`.
    """
    check_position(position, "hover")
    elements, chosen, left = await _aim(
        page, selector, "hover", wait, force, "hover", position=position, held=False
    )
    try:
        state = page.input_state
        if state.buttons:
            x, y = await tab_point(elements.page, chosen.x, chosen.y)
            await mouse_move(page, x, y)
            return
        moved = {"type": "mouseMoved", "modifiers": state.modifier_mask(), "buttons": 0}
        state.x, state.y = await deliver_mouse(elements, chosen, [moved], left, "hover")
    finally:
        release_elements(elements)


async def check(
    page: Page, selector: str, checked: bool = True, *, wait: float = 5.0, force: bool = False
) -> None:
    """Make a checkbox, switch or radio checked (or unchecked) by clicking it, unless it
    already is; then make sure the click changed it.

    Raises:
        ElementNotActionableError: not a checkbox, switch or radio (``checkable``); a radio
            to uncheck; the click left its state as it was (``state changed``); or as
            :func:`click`.
        InvalidSelectorError, ElementNotFoundError: as :func:`click`.
    """
    verb = "check" if checked else "uncheck"
    deadline = time.monotonic() + wait
    elements, chosen, _ = await _aim(page, selector, "check", wait, force, verb)
    try:
        state = chosen.info.get("checked")
        if state is checked:
            return
        if not checked and chosen.info.get("type") == "radio":
            raise _refused(elements, chosen, verb, "checkable", "a radio is unchecked by "
                           "checking another of its group, never by clicking it")  # fmt: skip
        elements, chosen = await _click_until_it_lands(
            page, selector, "check", deadline, force, verb, elements, chosen
        )
        left = deadline - time.monotonic()
        settle = min(_STATE_SETTLES, max(left, 0.1))
        now = await call_on(
            elements, "checked_state", chosen.index, checked, int(settle * 1000),
            timeout=settle + elements.page.default_timeout,
        )  # fmt: skip
        if now is not checked:
            shown = {True: "checked", False: "unchecked", "mixed": "mixed"}.get(now, str(now))
            raise _refused(
                elements, chosen, verb, "state changed",
                f"it is still {shown} after the click (a handler undid it, or the click went "
                "to something that does not toggle it)",
            )  # fmt: skip
    finally:
        release_elements(elements)


def _refused(
    elements: Elements,
    chosen: Actionable,
    verb: str,
    check_name: str,
    seen: str,
    words: tuple[str, str] | None = None,
) -> ElementNotActionableError:
    answer = {"check": check_name, "seen": seen, "what": chosen.what, "final": True}
    return not_actionable(elements, {**answer, "words": words}, 0, verb)


async def type_text(
    page: Page,
    selector: str,
    text: str,
    *,
    clear: bool = True,
    delay: float | None = None,
    wait: float = 5.0,
    force: bool = False,
) -> None:
    """Type as a keyboard does: click the field (or focus it, when something covers it),
    then insert ``text`` where the focus went (``Input.insertText``, or one key at a time,
    ``delay`` seconds apart, when ``delay`` is given).

    The field is then read back (:func:`_check_typed`): in an editor (a contenteditable,
    one whose own field is hidden) a clear that did not take is made once more by the
    keyboard (select all, Delete), as a user would on seeing it; an input, a textarea or a
    contenteditable must have taken some of the text.

    Raises:
        ElementNotActionableError: the field stayed hidden, disabled or read-only, or what
            took the focus takes no text (``editable``); it still showed what it held before
            after the clear was made twice, or it took none of the text: it holds what it
            held before, or the browser takes no such value in a date, time or colour input
            (``typed``); or as :func:`click`.
        InvalidSelectorError, ElementNotFoundError: as :func:`click`.
    """
    # The read-back goes with the input when the text goes in at once (see _enter_and_read).
    ready = {"clear": clear, "text": text, "watch": delay is None}
    deadline = time.monotonic() + wait
    elements, chosen, left = await _aim(
        page, selector, "type", wait, force, "type into", prepare=ready, held=False
    )
    try:
        if chosen.info.get("select"):
            await select(page, selector, [text], wait=left, force=force)
            return
        field = chosen.info.get("field")
        if field is None:
            if not chosen.info.get("focus"):
                elements, chosen = await _click_until_it_lands(
                    page, selector, "type", deadline, force, "type into", elements, chosen,
                    held=False, prepare=ready,
                )  # fmt: skip
            field = await call_on(
                elements, "focused_field", chosen.index,
                {**ready, "focus": bool(chosen.info.get("focus")), "selector": elements.selector},
                timeout=elements.page.default_timeout,
            )  # fmt: skip
        kind = field["kind"]
        if kind == "refuse":
            seen = f"{field['what']}: {field['why']}"
            raise _refused(elements, chosen, "type into", "editable", seen)
        if kind == "value":
            if not (field.get("took") and field.get("kept")):
                advice = _FORMATS.get(str(field.get("type")))
                raise _not_typed(elements, chosen, field, text, advice)
            return
        keys = list(field.get("keys", []))
        if clear and not field.get("empty"):
            keys.append("Delete")
        by_keys = kind == "keys"
        if field.get("before") is None or not _reads_back(field, text, clear):
            await _enter(page, keys, text, delay, by_keys)
            return
        settle = min(_TEXT_SETTLES, max(deadline - time.monotonic(), 0.1))
        expected = text if clear else str(field["before"]) + text
        if delay is None and not by_keys and text:
            after = await _enter_and_read(elements, chosen, field, keys, text, expected, settle)
        else:
            await _enter(page, keys, text, delay, by_keys)
            after = await _read_back(elements, chosen, field, expected, settle)
        await _check_typed(elements, chosen, field, text, clear, delay, by_keys, settle, after)
    finally:
        release_elements(elements)


async def _commands(page: Page, keys: list[str], text: str) -> list[tuple[str, dict[str, Any]]]:
    """The input commands that press ``keys`` (the field's readying shortcuts) and then
    insert ``text`` as an input method commits it."""
    mac = await _mac_for(page, keys)
    commands = [(_KEY, event) for key in keys for event in key_events(key, mac=mac)]
    if text:
        commands.append(("Input.insertText", {"text": text}))
    return commands


async def _mac_for(page: Page, keys: list[str]) -> bool:
    """Whether the field's readying shortcuts are pressed as on macOS (the browser is asked
    only when one of them says ControlOrMeta)."""
    return await platform_is_mac(page) if any("ControlOrMeta" in key for key in keys) else False


async def _enter(
    page: Page, keys: list[str], text: str, delay: float | None, by_keys: bool
) -> None:
    """Press ``keys`` (the field's readying shortcuts), then put ``text`` in: inserted, or
    key by key (``delay`` apart) where keys are asked for or only keys reach."""
    if delay is not None or by_keys:
        if keys:
            await press(page, *keys, mac=await _mac_for(page, keys))
        await type_keys(page, text, delay or 0.0)
        return
    await send_input(page, await _commands(page, keys, text))


async def _enter_and_read(
    elements: Elements,
    chosen: Actionable,
    field: dict[str, Any],
    keys: list[str],
    text: str,
    expected: str,
    settle: float,
) -> str:
    """:func:`_enter` with the read-back sent at once after the input, saving its round trip;
    what the field shows after typing.

    Chrome runs a session's input events in order, but not a script call after them: the
    call may run first. So the call reads only once the text has arrived (the watch
    ``focused_field.js`` set saw the insertText's ``beforeinput``); when it ran first it
    says so, and the field is read again once every input event was answered.

    Raises:
        as :func:`.keys.send_input` and :func:`_read_back`.
    """
    page = elements.page
    commands = await _commands(page, keys, text)
    # Each command is written before the next starts: the read-back goes last.
    sent = await asyncio.gather(
        *(page.top_send(method, params) for method, params in commands),
        _read(elements, chosen, field, expected, settle, watched=True),
        return_exceptions=True,
    )
    for outcome in sent:
        if isinstance(outcome, BaseException):
            raise outcome
    answer = sent[-1]
    if isinstance(answer, dict) and answer.get("marked"):
        return str(answer.get("shown") or "")
    return await _read_back(elements, chosen, field, expected, settle)


def _reads_back(field: dict[str, Any], text: str, clear: bool) -> bool:
    """Whether the field is read back after typing: a field read from the focus (whether
    any text arrived), or an editor whose clear is checked (:func:`_clear_checked`)."""
    return field.get("read") == "active" or _clear_checked(field, text, clear)


def _clear_checked(field: dict[str, Any], text: str, clear: bool) -> bool:
    """Whether the clear of an editor is checked after typing (``redo``: one that readies its
    selection late): it held something, and the text does not hold it."""
    shown_before = _spaced(str(field["before"]))
    return (
        bool(field.get("redo")) and clear and bool(shown_before)
        and shown_before not in _spaced(text)
    )  # fmt: skip


def _spaced(text: str) -> str:
    return " ".join(text.split())


async def _check_typed(
    elements: Elements,
    chosen: Actionable,
    field: dict[str, Any],
    text: str,
    clear: bool,
    delay: float | None,
    by_keys: bool,
    settle: float,
    after: str,
) -> None:
    """Judge ``after``, what the field shows after typing (as ``field``, a
    ``focused_field.js`` answer, says where it is read), against what it held before.

    With ``clear``, an editor that still shows what it held before (``redo``: one that
    readied its selection too late) is cleared again by the keyboard (select all, Delete)
    and the text typed again. A field read from the focus (an input, a textarea, an editing
    host) fails when none of the text arrived: it shows just what it held before, and that
    is not what was asked for. A field that reformats the text (a mask) has taken it.

    Raises:
        ElementNotActionableError: it still shows what it held before after the clear was
            made twice, or it holds what it held before and not the text (``typed``).
    """
    before = str(field["before"])
    expected = text if clear else before + text
    shown_before = _spaced(before)
    arrived = field.get("read") == "active"
    if _clear_checked(field, text, clear) and shown_before in _spaced(after):
        await _enter(elements.page, ["ControlOrMeta+A", "Delete"], text, delay, by_keys)
        after = await _read_back(elements, chosen, field, expected, settle)
        if shown_before in _spaced(after):
            shown = _spaced(after)
            where = elements.page.url or "the page"
            raise ElementNotActionableError(
                f"cannot type into {chosen.what} ({elements.given!r}) on {where}: it still "
                f"shows what it held before after select all and Delete, twice; typed check: "
                f"it shows {shown[:80]!r}. Clear it by the page's own control, or type with "
                "clear=False",
                selector=elements.given,
                check="typed",
                seen=f"it shows {shown[:80]!r}",
            )
    if arrived and after == before and "".join(after.split()) != "".join(expected.split()):
        raise _not_typed(elements, chosen, {**field, "value": after}, text)


async def _read_back(
    elements: Elements, chosen: Actionable, field: dict[str, Any], expected: str, settle: float
) -> str:
    """What the field shows now, once it shows something other than what it held before or
    what was expected, or after ``settle`` seconds (``typed_field.js``)."""
    answer = await _read(elements, chosen, field, expected, settle, watched=False)
    return str(answer.get("shown") or "") if isinstance(answer, dict) else ""


async def _read(
    elements: Elements,
    chosen: Actionable,
    field: dict[str, Any],
    expected: str,
    settle: float,
    *,
    watched: bool,
) -> Any:
    """``typed_field.js``'s answer (``watched``: only once the text has arrived)."""
    return await call_on(
        elements, "typed_field", chosen.index, str(field.get("read") or "active"),
        elements.selector if not elements.object_id else None, str(field["before"]),
        expected, int(settle * 1000), watched, timeout=settle + elements.page.default_timeout,
    )  # fmt: skip


#: The form of the value each input the browser fills (no keyboard text) takes.
_FORMATS: Final = {
    "date": "a date input takes its value as YYYY-MM-DD",
    "time": "a time input takes its value as HH:MM or HH:MM:SS",
    "datetime-local": "a datetime-local input takes its value as YYYY-MM-DDTHH:MM",
    "month": "a month input takes its value as YYYY-MM",
    "week": "a week input takes its value as YYYY-Www",
    "color": "a color input takes its value as #rrggbb",
    "range": "a range input takes a number between its min and max",
}


def _not_typed(
    elements: Elements,
    chosen: Actionable,
    field: dict[str, Any],
    text: str,
    advice: str | None = None,
) -> ElementNotActionableError:
    """The error for a field that holds what it held before and not ``text``: a handler of
    the page refused it (``beforeinput``), or the browser did (a field at its length limit;
    a value in another format than the one ``advice`` names, which was not set)."""
    held, typed = repr(str(field["value"])[:80]), repr(text[:80])
    if field.get("secret"):
        seen = "it holds what it held before, not the text typed (a password is not shown)"
    elif field.get("took") is False:
        seen = f"the browser takes no value {typed}; it holds {held}"
    else:
        seen = f"it holds {held} after typing {typed}"
    advice = advice or (
        "type text in the form the field takes (its format, its length limit), or fill it "
        "by the page's own controls"
    )
    words = ("the field did not take the text", advice)
    return _refused(elements, chosen, "type into", "typed", seen, words=words)


async def select(
    page: Page,
    selector: str,
    values: str | Sequence[str],
    *,
    wait: float = 5.0,
    force: bool = False,
) -> list[str]:
    """Select the options with these values (or, failing that, labels) in a ``<select>``,
    once it is visible and enabled; the values selected afterwards.

    Raises:
        WrongElementError: the element is not a ``<select>`` (an option of one names its
            select's ref), at once, before any wait.
        ElementNotFoundError: nothing matches within ``wait``, or the ``<select>`` has no
            option with one of ``values``.
        ElementNotActionableError: it stayed hidden or disabled.
        ValueError: several values for a single-choice select.
        InvalidSelectorError: a malformed selector.
    """
    wanted = [values] if isinstance(values, str) else list(values)
    elements, chosen, _ = await _aim(
        page, selector, "select", wait, force, "select in", kind=_a_select
    )
    try:
        return await _choose(elements, chosen, wanted, "select in")
    finally:
        release_elements(elements)


async def _a_select(elements: Elements) -> None:
    """Fail at once unless ``elements`` hold a ``<select>``: an option (it is chosen through
    its select, whose ref the error names), or anything else.

    Raises:
        WrongElementError: none of them is a ``<select>``.
    """
    page = elements.page
    found: dict[str, Any] = await call_on(
        elements, "select_target", False, timeout=page.default_timeout
    )
    if found["kind"] == "select":
        return
    if found["kind"] == "option":
        owner = await call_on(
            elements, "select_target", True, timeout=page.default_timeout, by_value=False
        )
        try:
            node = (await page.send("DOM.describeNode", {"objectId": owner}))["node"]
        finally:
            release(page, str(owner), is_object=True)
        ref = page.refs.ref_for(page, int(node["backendNodeId"]))
        label = f" ({json.dumps(found['label'], ensure_ascii=False)})" if found["label"] else ""
        raise WrongElementError(
            selector=elements.given, found=f"an option{label}", wanted="a <select>",
            action="select", owner=f"ref={ref}", choice=str(found["choice"]),
        )  # fmt: skip
    raise _wrong_kind(elements.given, found)


def _wrong_kind(given: str, found: dict[str, Any]) -> WrongElementError:
    """The error for a ``<select>``'s action given ``found`` (a ``select_target.js`` answer
    of another kind)."""
    tag, kind, role = str(found["tag"]), str(found["type"]), str(found["role"])
    shown = f"<{tag}{f' type={kind}' if kind else ''}{f' role={role}' if role else ''}>"
    named = {"a": "a link", "button": "a button"}.get(tag)
    if named and not role:
        words = f"{named} ({shown})"
    else:
        words = f"{'an' if tag[:1] in 'aeiou' else 'a'} {shown}"
    return WrongElementError(selector=given, found=words, wanted="a <select>", action="select")


async def _choose(
    elements: Elements, chosen: Actionable, wanted: list[str], verb: str
) -> list[str]:
    result: dict[str, Any] = await call_on(
        elements, "select_option", chosen.index, wanted, timeout=elements.page.default_timeout
    )
    given = elements.given
    if "notSelect" in result:
        raise _wrong_kind(given, result["notSelect"])
    if "missing" in result:
        choices = ", ".join(repr(value) for value in result["options"])
        raise ElementNotFoundError(
            f"the <select> {given!r} has no option with value or label "
            f"{result['missing']!r}; its values: {choices}",
            selector=given,
        )
    if "tooMany" in result:
        raise ValueError(
            f"the <select> {given!r} takes one choice, not {result['tooMany']}: pass one value"
        )
    if result.get("disabled"):
        raise _refused(elements, chosen, verb, "enabled", "disabled")
    selected: list[str] = result["selected"]
    return selected


async def upload(
    page: Page,
    selector: str,
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    wait: float = 5.0,
    force: bool = False,
) -> None:
    """Set the files of an ``<input type=file>`` (hidden ones too, as pages style them);
    the page sees ``input`` and ``change``.

    Raises:
        FileNotFoundError: a path is not an existing file (nothing is set).
        ElementNotFoundError: nothing matches within ``wait``, or the element is not a file
            input.
        ElementNotActionableError: the input stayed disabled.
        ValueError: several files for an input without ``multiple``.
        InvalidSelectorError: a malformed selector.
    """
    given: list[str | os.PathLike[str]] = (
        [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    )
    files = []
    for path in given:
        resolved = Path(path).expanduser().resolve()
        if not resolved.is_file():
            raise FileNotFoundError(f"cannot upload {os.fspath(path)!r}: no such file")
        files.append(str(resolved))
    elements, chosen, _ = await _aim(page, selector, "upload", wait, force, "upload to")
    try:
        info = chosen.info
        if info["tag"] != "input" or info.get("type") != "file":
            kind = info["tag"] + (f"[type={info['type']}]" if info.get("type") else "")
            raise ElementNotFoundError(
                f"{selector!r} matches a <{kind}>, not an <input type=file>: upload() needs "
                "the file input itself",
                selector=selector,
            )
        if len(files) > 1 and not info.get("multiple"):
            raise ValueError(
                f"the file input {selector!r} takes one file (no multiple attribute), "
                f"not {len(files)}"
            )
        target = elements.page
        object_id = await call_on(
            elements, "element_at", chosen.index, timeout=target.default_timeout, by_value=False
        )
        try:
            await target.send("DOM.setFileInputFiles", {"files": files, "objectId": object_id})
        finally:
            if elements.is_ref:
                release(target, str(object_id), is_object=True)
    finally:
        release_elements(elements)
