"""A page's input verbs: click, type, press a key, hover, select options, upload files.

Clicks and typing happen from inside the page (no coordinates); keys and the mouse go through
CDP's Input domain on the tab's session, as a user's would (focus moves on Tab, a form submits
on Enter, ``:hover`` styles apply); options are chosen from inside the page and files set with
``DOM.setFileInputFiles``. Elements are found by CSS selector, open shadow roots pierced, and
``iframe >> selector`` reaches into a frame (:mod:`.locate`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from ..errors import ElementNotFoundError, ProtocolError
from ..protocol.literals import embed_json
from .locate import element_object, locate
from .page import Page
from .scripts import page_script

__all__ = ["click", "hover", "press", "select", "type_text", "upload"]


# -- keys -----------------------------------------------------------------------------------

#: CDP modifier bits, and each modifier key's code and Windows virtual key code.
_MODIFIERS: Final[dict[str, tuple[int, str, int]]] = {
    "Alt": (1, "AltLeft", 18),
    "Control": (2, "ControlLeft", 17),
    "Meta": (4, "MetaLeft", 91),
    "Shift": (8, "ShiftLeft", 16),
}
_MODIFIER_ALIASES: Final = {
    "ctrl": "Control",
    "control": "Control",
    "alt": "Alt",
    "option": "Alt",
    "meta": "Meta",
    "cmd": "Meta",
    "command": "Meta",
    "shift": "Shift",
}

#: Named keys: (code, windowsVirtualKeyCode, text typed).
_NAMED: Final[dict[str, tuple[str, int, str]]] = {
    "Enter": ("Enter", 13, "\r"),
    "Tab": ("Tab", 9, ""),
    "Backspace": ("Backspace", 8, ""),
    "Delete": ("Delete", 46, ""),
    "Escape": ("Escape", 27, ""),
    "ArrowLeft": ("ArrowLeft", 37, ""),
    "ArrowUp": ("ArrowUp", 38, ""),
    "ArrowRight": ("ArrowRight", 39, ""),
    "ArrowDown": ("ArrowDown", 40, ""),
    "Home": ("Home", 36, ""),
    "End": ("End", 35, ""),
    "PageUp": ("PageUp", 33, ""),
    "PageDown": ("PageDown", 34, ""),
    "Insert": ("Insert", 45, ""),
    "CapsLock": ("CapsLock", 20, ""),
    "ContextMenu": ("ContextMenu", 93, ""),
    **{f"F{n}": (f"F{n}", 111 + n, "") for n in range(1, 13)},
    **{name: (code, vk, "") for name, (_, code, vk) in _MODIFIERS.items()},
}
_NAMED_ALIASES: Final = {
    "esc": "Escape",
    "return": "Enter",
    "del": "Delete",
    "up": "ArrowUp",
    "down": "ArrowDown",
    "left": "ArrowLeft",
    "right": "ArrowRight",
    "space": " ",
    "ctrl": "Control",
    "cmd": "Meta",
}

#: Printable keys of a US layout: the unshifted and shifted character, code, key code.
_PRINTABLE: Final[list[tuple[str, str, str, int]]] = [
    *((c, c.upper(), f"Key{c.upper()}", ord(c.upper())) for c in "abcdefghijklmnopqrstuvwxyz"),
    *((d, s, f"Digit{d}", ord(d)) for d, s in zip("0123456789", ")!@#$%^&*(", strict=True)),
    (" ", " ", "Space", 32),
    (";", ":", "Semicolon", 186),
    ("=", "+", "Equal", 187),
    (",", "<", "Comma", 188),
    ("-", "_", "Minus", 189),
    (".", ">", "Period", 190),
    ("/", "?", "Slash", 191),
    ("`", "~", "Backquote", 192),
    ("[", "{", "BracketLeft", 219),
    ("\\", "|", "Backslash", 220),
    ("]", "}", "BracketRight", 221),
    ("'", '"', "Quote", 222),
]
#: Each printable character: (code, key code, the character Shift makes of it).
_CHARS: Final[dict[str, tuple[str, int, str]]] = {
    **{shifted: (code, vk, shifted) for _, shifted, code, vk in _PRINTABLE},
    **{plain: (code, vk, shifted) for plain, shifted, code, vk in _PRINTABLE},
}


def _key_event(key: str) -> tuple[list[str], dict[str, Any]]:
    """Parse ``"Control+Shift+A"`` into its modifiers and the main key's event fields."""
    if key == "+" or key.endswith("++"):
        names, main = (key[:-2].split("+") if len(key) > 1 else []), "+"
    else:
        *names, main = key.split("+")
    modifiers: list[str] = []
    for name in names:
        modifier = _MODIFIER_ALIASES.get(name.lower())
        if modifier is None:
            raise ValueError(
                f"press({key!r}): {name!r} is not a modifier; use Control, Shift, Alt or Meta"
            )
        if modifier not in modifiers:
            modifiers.append(modifier)
    if not main:
        raise ValueError(f"press({key!r}): no key after the modifiers")
    main = _NAMED_ALIASES.get(main.lower(), main) if len(main) > 1 else main
    shift = "Shift" in modifiers
    if main in _NAMED:
        code, vk, text = _NAMED[main]
        event: dict[str, Any] = {"key": main, "code": code, "windowsVirtualKeyCode": vk}
    elif len(main) == 1:
        if modifiers and main.isascii() and main.isalpha():
            # A keyboard has one key per letter: with modifiers, Shift alone sets its case
            # ("Control+A" is Control and the a key, as a user presses it).
            main = main.lower()
        code, vk, shifted = _CHARS.get(main, ("", 0, main))
        text = shifted if shift else main
        event = {"key": text, "code": code, "windowsVirtualKeyCode": vk}
    else:
        raise ValueError(
            f"press({key!r}): unknown key {main!r}; use one character or a key name such as "
            "Enter, Tab, Escape, Backspace, ArrowDown, PageUp, F5"
        )
    if modifiers and set(modifiers) - {"Shift"}:
        text = ""  # a shortcut (Control+A) types nothing; Chrome runs its editing command
    if text:
        event["text"] = event["unmodifiedText"] = text
    event["nativeVirtualKeyCode"] = event["windowsVirtualKeyCode"]
    return modifiers, event


async def press(page: Page, key: str) -> None:
    """Press ``key`` (with its modifiers held) in the focused element of the tab.

    Key events go to the tab's own session: Chrome hands them to the focused frame.

    Raises:
        ValueError: ``key`` names no key or modifier.
    """
    modifiers, event = _key_event(key)
    mask = 0
    for name in modifiers:
        bit, code, vk = _MODIFIERS[name]
        mask |= bit
        await page.top_send(
            "Input.dispatchKeyEvent",
            {"type": "rawKeyDown", "key": name, "code": code, "windowsVirtualKeyCode": vk,
             "nativeVirtualKeyCode": vk, "modifiers": mask, "location": 1},
        )  # fmt: skip
    down = "keyDown" if event.get("text") else "rawKeyDown"
    await page.top_send("Input.dispatchKeyEvent", {"type": down, "modifiers": mask, **event})
    up = {k: v for k, v in event.items() if k not in ("text", "unmodifiedText")}
    await page.top_send("Input.dispatchKeyEvent", {"type": "keyUp", "modifiers": mask, **up})
    for name in reversed(modifiers):
        bit, code, vk = _MODIFIERS[name]
        mask &= ~bit
        await page.top_send(
            "Input.dispatchKeyEvent",
            {"type": "keyUp", "key": name, "code": code, "windowsVirtualKeyCode": vk,
             "nativeVirtualKeyCode": vk, "modifiers": mask, "location": 1},
        )  # fmt: skip


# -- elements -------------------------------------------------------------------------------


def _not_found(page: Page, selector: str, wait: float, why: str = "") -> ElementNotFoundError:
    waited = f" (waited {wait:g} s)" if wait > 0 else ""
    return ElementNotFoundError(
        f"no element matches {selector!r} on {page.url or 'the page'}{waited}{why}: check the "
        "selector; tab.snapshot() lists reusable ones",
        selector=selector,
    )


async def _run(
    page: Page, script: str, selector: str, extra: str, wait: float, *, gesture: bool = False
) -> tuple[Page, Any]:
    """Run ``page_scripts/<script>.js`` on the element ``selector`` names (in its frame, for
    a frame-qualified selector), waiting up to ``wait`` seconds for it to appear.

    The script answers None or ``{found: false}`` when nothing matches. The wait's own
    evaluate is bounded by ``wait`` plus the page's default timeout.

    Returns:
        the page the element is in, and the script's answer.

    Raises:
        ElementNotFoundError: nothing matches within ``wait``.
    """
    target, inner = await locate(page, selector, wait)
    code = f"({page_script(script)})({embed_json(inner)}{extra})"
    result = await target.evaluate(code, describe=False, user_gesture=gesture)
    if _missing(result) and wait > 0:
        appeared = await target.evaluate(
            f"({page_script('wait_for')})({embed_json(inner)}, {int(wait * 1000)})",
            timeout=wait + target.default_timeout,
            describe=False,
        )
        if appeared:
            result = await target.evaluate(code, describe=False, user_gesture=gesture)
    if _missing(result):
        raise _not_found(page, selector, wait)
    return target, result


def _missing(result: Any) -> bool:
    return result is None or (isinstance(result, dict) and result.get("found") is False)


async def click(page: Page, selector: str, *, wait: float = 5.0) -> None:
    """Scroll the element into view, focus it and call its ``click()``.

    Raises:
        ElementNotFoundError: nothing matches within ``wait``.
        JavaScriptError: a click handler threw synchronously.
    """
    await _run(page, "click", selector, "", wait, gesture=True)


async def type_text(
    page: Page, selector: str, text: str, *, clear: bool = True, wait: float = 5.0
) -> None:
    """Set the field's value through its native setter and fire ``input`` and ``change``.

    Raises:
        ElementNotFoundError: nothing matches within ``wait``.
    """
    extra = f", {embed_json(text)}, {str(clear).lower()}"
    await _run(page, "type_text", selector, extra, wait, gesture=True)


async def hover(page: Page, selector: str, *, wait: float = 5.0) -> None:
    """Scroll the element into view and move the mouse to its centre.

    Raises:
        ElementNotFoundError: nothing matches within ``wait``, or the element has no box
            (hidden).
    """
    target, box = await _run(page, "element_box", selector, ", true", wait)
    if not box["width"] or not box["height"]:
        raise ElementNotFoundError(
            f"{selector!r} matches a <{box['tag']}> with no box on {page.url or 'the page'}: "
            "it is hidden (display: none, or empty); hover a visible element",
            selector=selector,
        )
    # The box is in the frame's viewport; the mouse moves in the tab's.
    left, top = await target.viewport_offset()
    x = left + box["x"] + box["width"] / 2
    y = top + box["y"] + box["height"] / 2
    await page.top_send(
        "Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y, "button": "none"}
    )


async def select(
    page: Page, selector: str, values: str | Sequence[str], *, wait: float = 5.0
) -> list[str]:
    """Select the options with these values (or, failing that, labels) in a ``<select>``.

    Returns the values selected afterwards.

    Raises:
        ElementNotFoundError: nothing matches within ``wait``, the element is not a
            ``<select>``, or it has no option with one of ``values``.
        ValueError: several values for a single-choice select, or the select is disabled.
    """
    wanted = [values] if isinstance(values, str) else list(values)
    _, result = await _run(page, "select_option", selector, f", {embed_json(wanted)}", wait)
    if "notSelect" in result:
        raise ElementNotFoundError(
            f"{selector!r} matches a <{result['notSelect']}>, not a <select>: select() "
            "chooses options of a <select>; use click() for custom dropdowns",
            selector=selector,
        )
    if "missing" in result:
        choices = ", ".join(repr(value) for value in result["options"])
        raise ElementNotFoundError(
            f"the <select> {selector!r} has no option with value or label "
            f"{result['missing']!r}; its values: {choices}",
            selector=selector,
        )
    if "tooMany" in result:
        raise ValueError(
            f"the <select> {selector!r} takes one choice, not {result['tooMany']}: pass one value"
        )
    if result.get("disabled"):
        raise ValueError(f"the <select> {selector!r} is disabled")
    selected: list[str] = result["selected"]
    return selected


async def upload(
    page: Page,
    selector: str,
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    wait: float = 5.0,
) -> None:
    """Set the files of an ``<input type=file>``; the page sees ``input`` and ``change``.

    Raises:
        FileNotFoundError: a path is not an existing file (nothing is set).
        ElementNotFoundError: nothing matches within ``wait``, or the element is not a file
            input.
        ValueError: several files for an input without ``multiple``.
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
    target, info = await _run(page, "file_input", selector, "", wait)
    if info["tag"] != "input" or info["type"] != "file":
        kind = info["tag"] + (f"[type={info['type']}]" if info["type"] else "")
        raise ElementNotFoundError(
            f"{selector!r} matches a <{kind}>, not an <input type=file>: upload() needs "
            "the file input itself",
            selector=selector,
        )
    if len(files) > 1 and not info["multiple"]:
        raise ValueError(
            f"the file input {selector!r} takes one file (no multiple attribute), not {len(files)}"
        )
    _, inner = await locate(page, selector, 0)
    object_id = await element_object(target, inner)
    if object_id is None:
        raise _not_found(page, selector, 0)
    try:
        await target.send("DOM.setFileInputFiles", {"files": files, "objectId": object_id})
    finally:
        try:
            await target.send("Runtime.releaseObject", {"objectId": object_id})
        except ProtocolError:
            pass  # the page navigated: the object went with it
