"""The keyboard: keys as a US keyboard sends them, pressed or typed in the focused element.

Key events go through CDP's Input domain on the tab's session, as a user's would (focus moves
on Tab, a form submits on Enter); Chrome hands them to the focused frame.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

from .page import Page

__all__ = ["key_event", "key_events", "press", "send_input", "type_keys"]


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


def key_event(key: str) -> tuple[list[str], dict[str, Any]]:
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
    await send_input(page, [("Input.dispatchKeyEvent", event) for event in key_events(key)])


def key_events(key: str) -> list[dict[str, Any]]:
    """The ``Input.dispatchKeyEvent`` parameters that press ``key``: each modifier down,
    the key down and up, the modifiers up.

    Raises:
        ValueError: ``key`` names no key or modifier.
    """
    modifiers, event = key_event(key)
    events: list[dict[str, Any]] = []
    mask = 0
    for name in modifiers:
        bit, code, vk = _MODIFIERS[name]
        mask |= bit
        events.append(
            {"type": "rawKeyDown", "key": name, "code": code, "windowsVirtualKeyCode": vk,
             "nativeVirtualKeyCode": vk, "modifiers": mask, "location": 1}
        )  # fmt: skip
    down = "keyDown" if event.get("text") else "rawKeyDown"
    events.append({"type": down, "modifiers": mask, **event})
    up = {k: v for k, v in event.items() if k not in ("text", "unmodifiedText")}
    events.append({"type": "keyUp", "modifiers": mask, **up})
    for name in reversed(modifiers):
        bit, code, vk = _MODIFIERS[name]
        mask &= ~bit
        events.append(
            {"type": "keyUp", "key": name, "code": code, "windowsVirtualKeyCode": vk,
             "nativeVirtualKeyCode": vk, "modifiers": mask, "location": 1}
        )  # fmt: skip
    return events


async def send_input(page: Page, commands: list[tuple[str, dict[str, Any]]]) -> None:
    """Send input commands on the tab's session all at once, in order: each is written
    before the next (a send writes before it first waits), and Chrome runs a session's
    input events in order, each once the page has handled the one before."""
    await asyncio.gather(*(page.top_send(method, params) for method, params in commands))


async def type_keys(page: Page, text: str, delay: float) -> None:
    """Type ``text`` one key at a time in the focused element, ``delay`` seconds apart: each
    character of a US keyboard as its key going down and up (with Shift for a shifted one;
    a line break as Enter), any other character inserted as an input method commits it
    (``Input.insertText``).
    """
    for n, char in enumerate(text):
        if n and delay > 0:
            await asyncio.sleep(delay)  # the pace asked for, not a wait for anything
        if char in "\r\n":
            await press(page, "Enter")
        elif char in _CHARS:
            code, vk, _ = _CHARS[char]
            modifiers = 8 if char in _SHIFTED else 0
            event = {"key": char, "code": code, "windowsVirtualKeyCode": vk,
                     "nativeVirtualKeyCode": vk, "modifiers": modifiers}  # fmt: skip
            down = {"type": "keyDown", "text": char, "unmodifiedText": char, **event}
            up = {"type": "keyUp", **event}
            await send_input(page, [(_KEY, down), (_KEY, up)])
        else:
            await page.top_send("Input.insertText", {"text": char})


_KEY: Final = "Input.dispatchKeyEvent"

#: The characters a US keyboard types with Shift held.
_SHIFTED: Final = frozenset(shifted for plain, shifted, _, _ in _PRINTABLE if plain != shifted)
