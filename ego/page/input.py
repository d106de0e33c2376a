"""A page's input verbs as a user makes them: click, hover, check, type, select, upload.

Each finds what a selector or ref names (:mod:`.elements`), waits until it can take the input
(:mod:`.actionability`: attached, visible, enabled, stable, receiving events at its point),
then acts through CDP's Input domain on the tab's session, at the element's point in the
tab's coordinates: a mouse press and release for a click, ``Input.insertText`` (or key
events) for typing. Options are chosen from inside the page and files set with
``DOM.setFileInputFiles``, as nothing else can; keys are :mod:`.keys`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import ElementNotActionableError, ElementNotFoundError
from .actionability import (
    SLIPPED,
    Actionable,
    click_landed,
    deliver_mouse,
    not_actionable,
    wait_actionable,
)
from .elements import Elements, call_on, release, release_elements, resolve
from .keys import key_events, press, send_input, type_keys
from .page import Page

__all__ = ["check", "click", "hover", "press", "select", "type_text", "upload"]

#: The most seconds a checkbox's framework may take to show the state a click gave it.
_STATE_SETTLES = 1.0


async def _act(
    page: Page,
    selector: str,
    action: str,
    wait: float,
    force: bool,
    verb: str,
    prepare: dict[str, Any] | None = None,
    held: bool = True,
) -> tuple[Elements, Actionable, float]:
    """Resolve ``selector`` and wait until it can take ``action``; the elements, the chosen
    one and the seconds left of ``wait``. ``held`` False: the action needs no object of the
    element after the checks (:func:`.elements.resolve`)."""
    deadline = time.monotonic() + wait
    elements = await resolve(page, selector, wait, held=held)
    try:
        left = max(0.0, deadline - time.monotonic())
        chosen = await wait_actionable(
            elements, action, left, force=force, verb=verb, waited=wait, prepare=prepare
        )
    except BaseException:
        release_elements(elements)
        raise
    return elements, chosen, max(0.0, deadline - time.monotonic())


async def _mouse_click(elements: Elements, chosen: Actionable, wait: float, verb: str) -> None:
    """A left click at the chosen point: the mouse moves there, goes down and up."""
    at: dict[str, Any] = {"button": "left", "clickCount": 1}
    events: list[dict[str, Any]] = [
        {"type": "mouseMoved"},
        {"type": "mousePressed", "buttons": 1, **at},
        {"type": "mouseReleased", "buttons": 0, **at},
    ]
    await deliver_mouse(elements, chosen, events, wait, verb)


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
) -> tuple[Elements, Actionable]:
    """Click at the chosen point; when the page moved under the point before the click's
    events arrived, they were cancelled in the page (:func:`.actionability.click_landed`),
    and the checks and the click run again until ``deadline``. Returns the elements and the
    choice of the click that landed (the earlier elements are released).

    Raises:
        ElementNotActionableError: every click until the deadline would have landed
            elsewhere, or the press reached the element and the page then moved another
            element under the point, which the release or the click reached (``receives
            events``; the rest of that click was cancelled, and it is not made again since
            the page saw the press).
    """
    while True:
        left = max(0.0, deadline - time.monotonic())
        await _mouse_click(elements, chosen, left, verb)
        if force:
            return elements, chosen
        miss = await click_landed(elements)
        if miss is None:
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
        elements, chosen, _ = await _act(
            page, selector, action, left, force, verb, prepare=prepare, held=held
        )


async def click(page: Page, selector: str, *, wait: float = 5.0, force: bool = False) -> None:
    """Click the element as a user does, once it can take the click.

    Raises:
        InvalidSelectorError: a malformed selector.
        ElementNotFoundError: nothing matches within ``wait`` (StaleRefError: a ref whose
            node is gone).
        ElementNotActionableError: it stayed hidden, disabled, moving or covered.
    """
    deadline = time.monotonic() + wait
    elements, chosen, _ = await _act(page, selector, "click", wait, force, "click", held=False)
    try:
        elements, chosen = await _click_until_it_lands(
            page, selector, "click", deadline, force, "click", elements, chosen, held=False
        )
    finally:
        release_elements(elements)


async def hover(page: Page, selector: str, *, wait: float = 5.0, force: bool = False) -> None:
    """Move the mouse over the element once it is visible, still and on top.

    Raises:
        as :func:`click`.
    """
    elements, chosen, left = await _act(page, selector, "hover", wait, force, "hover", held=False)
    try:
        await deliver_mouse(elements, chosen, [{"type": "mouseMoved"}], left, "hover")
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
    elements, chosen, _ = await _act(page, selector, "check", wait, force, verb)
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

    Raises:
        ElementNotActionableError: the field stayed hidden, disabled or read-only, or what
            took the focus takes no text (``editable``); or as :func:`click`.
        InvalidSelectorError, ElementNotFoundError: as :func:`click`.
    """
    ready = {"clear": clear, "text": text}
    deadline = time.monotonic() + wait
    elements, chosen, left = await _act(
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
            return
        keys = list(field.get("keys", []))
        if clear and not field.get("empty"):
            keys.append("Delete")
        if delay is not None or kind == "keys":
            for key in keys:
                await press(page, key)
            await type_keys(page, text, delay or 0.0)
        else:
            commands = [("Input.dispatchKeyEvent", e) for key in keys for e in key_events(key)]
            if text:
                commands.append(("Input.insertText", {"text": text}))
            await send_input(page, commands)
    finally:
        release_elements(elements)


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
        ElementNotFoundError: nothing matches within ``wait``, the element is not a
            ``<select>``, or it has no option with one of ``values``.
        ElementNotActionableError: it stayed hidden or disabled.
        ValueError: several values for a single-choice select.
        InvalidSelectorError: a malformed selector.
    """
    wanted = [values] if isinstance(values, str) else list(values)
    elements, chosen, _ = await _act(page, selector, "select", wait, force, "select in")
    try:
        return await _choose(elements, chosen, wanted, "select in")
    finally:
        release_elements(elements)


async def _choose(
    elements: Elements, chosen: Actionable, wanted: list[str], verb: str
) -> list[str]:
    result: dict[str, Any] = await call_on(
        elements, "select_option", chosen.index, wanted, timeout=elements.page.default_timeout
    )
    given = elements.given
    if "notSelect" in result:
        raise ElementNotFoundError(
            f"{given!r} matches a <{result['notSelect']}>, not a <select>: select() "
            "chooses options of a <select>; use click() for custom dropdowns",
            selector=given,
        )
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
    elements, chosen, _ = await _act(page, selector, "upload", wait, force, "upload to")
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
