"""The keyboard: keys as a US keyboard sends them, pressed or typed in the focused element.

Key events go through CDP's Input domain on the tab's session, as a user's would (focus moves
on Tab, a form submits on Enter); Chrome hands them to the focused frame.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Final

from .page import Page

__all__ = [
    "key_event",
    "key_events",
    "modifier_fields",
    "modifier_name",
    "platform_is_mac",
    "press",
    "send_input",
    "split_keys",
    "text_events",
    "type_keys",
]


#: CDP modifier bits, and each modifier key's code and Windows virtual key code.
_MODIFIERS: Final[dict[str, tuple[int, str, int]]] = {
    "Alt": (1, "AltLeft", 18),
    "Control": (2, "ControlLeft", 17),
    "Meta": (4, "MetaLeft", 91),
    "Shift": (8, "ShiftLeft", 16),
}
#: What ``ControlOrMeta`` stands for until the platform decides (Meta on macOS).
_SHORTCUT: Final = "ControlOrMeta"
_MODIFIER_ALIASES: Final = {
    "controlormeta": _SHORTCUT,
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

#: The editing command a platform's shortcut runs in an editable element (the chord's
#: shortcut modifier, Control or Meta by platform, left out), sent with the key as
#: ``commands`` so that it runs as the platform's own key binding would run it.
_COMMANDS: Final = {
    "A": "selectAll",
    "C": "copy",
    "X": "cut",
    "V": "paste",
    "Z": "undo",
    "Shift+Z": "redo",
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


def split_keys(keys: str | Sequence[str]) -> list[str]:
    """The keys to press one after another: a list as it is, or a string cut at its spaces
    (``"Control+A Delete"``; a string of spaces alone is the space bar, also ``"Space"``).

    Raises:
        ValueError: no key at all.
    """
    given = [keys] if isinstance(keys, str) else list(keys)
    found: list[str] = []
    for item in given:
        found.extend(item.split() if item.strip() else [item[:1]])
    if not found or not all(found):
        raise ValueError(f"press({keys!r}): name a key, such as Enter or Control+A")
    return found


def key_event(
    key: str, *, held: frozenset[str] | set[str] = frozenset(), mac: bool = False
) -> tuple[list[str], dict[str, Any]]:
    """Parse ``"Control+Shift+A"`` into its modifiers and the main key's event fields.

    Args:
        key: one chord: modifiers and a key joined by ``+``.
        held: modifier keys already down (``keyboard.down("Shift")``): they shape the key
            as the chord's own do.
        mac: the browser runs on macOS: ``ControlOrMeta`` is Meta there, and the editing
            shortcuts use Meta.

    Raises:
        ValueError: an unknown key or modifier.
    """
    if key == "+" or key.endswith("++"):
        names, main = (key[:-2].split("+") if len(key) > 1 else []), "+"
    else:
        *names, main = key.split("+")
    modifiers: list[str] = []
    for name in names:
        modifier = _MODIFIER_ALIASES.get(name.lower())
        if modifier == _SHORTCUT:
            modifier = "Meta" if mac else "Control"
        if modifier is None:
            raise ValueError(
                f"press({key!r}): {name!r} is not a modifier; use Control, Shift, Alt, Meta "
                "or ControlOrMeta"
            )
        if modifier not in modifiers:
            modifiers.append(modifier)
    if not main:
        raise ValueError(f"press({key!r}): no key after the modifiers")
    main = _NAMED_ALIASES.get(main.lower(), main) if len(main) > 1 else main
    down = set(modifiers) | set(held)
    shift = "Shift" in down
    if main in _NAMED:
        code, vk, text = _NAMED[main]
        event: dict[str, Any] = {"key": main, "code": code, "windowsVirtualKeyCode": vk}
    elif len(main) == 1:
        if down and main.isascii() and main.isalpha():
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
    if down - {"Shift"}:
        text = ""  # a shortcut (Control+A) types nothing; Chrome runs its editing command
    if text:
        event["text"] = event["unmodifiedText"] = text
    event["nativeVirtualKeyCode"] = event["windowsVirtualKeyCode"]
    command = _COMMANDS.get(_shortcut(down, event.get("code", ""), mac))
    if command:
        event["commands"] = [command]
    return modifiers, event


def _shortcut(down: set[str], code: str, mac: bool) -> str:
    """The platform-neutral name of a chord, as :data:`_COMMANDS` keys it."""
    own = "Meta" if mac else "Control"
    if own not in down or down - {own, "Shift"} or not code.startswith("Key"):
        return ""
    return ("Shift+" if "Shift" in down else "") + code[3:]


async def press(
    page: Page, *keys: str, delay: float | None = None, mac: bool | None = None
) -> None:
    """Press each of ``keys`` in turn (a chord's modifiers held around its key) in the
    focused element of the tab, with the modifiers ``keyboard.down`` holds.

    Key events go to the tab's own session: Chrome hands them to the focused frame.

    Args:
        keys: chords, pressed one after another (a string may hold several, cut at spaces).
        delay: seconds between each key's down and up (key events then go one at a time).
        mac: the browser's platform, when known; asked of the browser when a chord needs it.

    Raises:
        ValueError: a key names no key or modifier.
    """
    chords = [chord for given in keys for chord in split_keys(given)]
    state = page.input_state
    if mac is None:
        mac = await platform_is_mac(page) if any(_needs_platform(k) for k in chords) else False
    held = frozenset(state.modifiers)
    events = [e for chord in chords for e in key_events(chord, held=held, mac=mac)]
    if not delay:
        await send_input(page, [(_KEY, event) for event in events])
        return
    for event in events:
        await page.top_send(_KEY, event)
        if event["type"] != "keyUp" and "location" not in event:  # the chord's own key
            await asyncio.sleep(delay)  # the pace asked for, not a wait for anything


def _needs_platform(chord: str) -> bool:
    names = {name.lower() for name in chord.split("+")[:-1]}
    return bool(names & {"control", "ctrl", "meta", "cmd", "command", "controlormeta"})


async def platform_is_mac(page: Page) -> bool:
    """Whether the tab's browser runs on macOS (asked once per tab)."""
    state = page.input_state
    if state.mac is None:
        version = await page.top_send("Browser.getVersion")
        state.mac = "Macintosh" in str(version.get("userAgent", ""))
    return state.mac


def key_events(
    key: str, *, held: frozenset[str] | set[str] = frozenset(), mac: bool = False
) -> list[dict[str, Any]]:
    """The ``Input.dispatchKeyEvent`` parameters that press ``key``: each modifier down
    that is not held already, the key down and up, those modifiers up.

    Raises:
        ValueError: ``key`` names no key or modifier.
    """
    modifiers, event = key_event(key, held=held, mac=mac)
    events: list[dict[str, Any]] = []
    mask = sum(_MODIFIERS[name][0] for name in held)
    pressed = [name for name in modifiers if name not in held]
    for name in pressed:
        mask |= _MODIFIERS[name][0]
        events.append({"type": "rawKeyDown", "modifiers": mask, **modifier_fields(name)})
    events.append({"type": "keyDown" if event.get("text") else "rawKeyDown", "modifiers": mask,
                   **event})  # fmt: skip
    up = {k: v for k, v in event.items() if k not in ("text", "unmodifiedText", "commands")}
    events.append({"type": "keyUp", "modifiers": mask, **up})
    for name in reversed(pressed):
        mask &= ~_MODIFIERS[name][0]
        events.append({"type": "keyUp", "modifiers": mask, **modifier_fields(name)})
    return events


def modifier_fields(name: str) -> dict[str, Any]:
    """The event fields of the modifier key ``name`` (``"Shift"``, ``"Control"``, ...)."""
    _, code, vk = _MODIFIERS[name]
    return {"key": name, "code": code, "windowsVirtualKeyCode": vk,
            "nativeVirtualKeyCode": vk, "location": 1}  # fmt: skip


def modifier_name(key: str) -> str | None:
    """The modifier ``key`` names (``"ctrl"`` is ``"Control"``), or None."""
    return _MODIFIER_ALIASES.get(key.lower())


async def send_input(page: Page, commands: list[tuple[str, dict[str, Any]]]) -> None:
    """Send input commands on the tab's session all at once, in order: each is written
    before the next (a send writes before it first waits), and Chrome runs a session's
    input events in order, each once the page has handled the one before."""
    await asyncio.gather(*(page.top_send(method, params) for method, params in commands))


def text_events(text: str) -> list[tuple[str, dict[str, Any]]]:
    """The input commands that type ``text`` key by key: each character of a US keyboard as
    its key going down and up (with Shift for a shifted one; a line break as Enter), any
    other character inserted as an input method commits it (``Input.insertText``)."""
    commands: list[tuple[str, dict[str, Any]]] = []
    for char in text:
        if char in "\r\n":
            commands.extend((_KEY, event) for event in key_events("Enter"))
        elif char in _CHARS:
            code, vk, _ = _CHARS[char]
            modifiers = 8 if char in _SHIFTED else 0
            event = {"key": char, "code": code, "windowsVirtualKeyCode": vk,
                     "nativeVirtualKeyCode": vk, "modifiers": modifiers}  # fmt: skip
            commands.append((_KEY, {"type": "keyDown", "text": char, "unmodifiedText": char,
                                    **event}))  # fmt: skip
            commands.append((_KEY, {"type": "keyUp", **event}))
        else:
            commands.append(("Input.insertText", {"text": char}))
    return commands


async def type_keys(page: Page, text: str, delay: float) -> None:
    """Type ``text`` one key at a time in the focused element (:func:`text_events`), all in
    flight at once, or ``delay`` seconds apart from one character to the next.
    """
    if delay <= 0:
        await send_input(page, text_events(text))
        return
    for n, char in enumerate(text):
        if n:
            await asyncio.sleep(delay)  # the pace asked for, not a wait for anything
        await send_input(page, text_events(char))


_KEY: Final = "Input.dispatchKeyEvent"

#: The characters a US keyboard types with Shift held.
_SHIFTED: Final = frozenset(shifted for plain, shifted, _, _ in _PRINTABLE if plain != shifted)
