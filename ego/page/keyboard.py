"""The keyboard: keys pressed, held and typed into whatever has the focus, as a person's are.

``tab.keyboard`` (the same on every frame: Chrome hands key events to the focused frame)
needs no selector: it types at the caret, presses chords (``"Control+Shift+ArrowLeft"``) and
sequences (``"Control+A Delete"``), and holds keys down between calls; a modifier held with
:meth:`Keyboard.down` shapes the keys pressed and the clicks made until :meth:`Keyboard.up`.
The key tables are :mod:`.keys`.
"""

from __future__ import annotations

import asyncio
from typing import Any

from .action_log import observed_device
from .keys import key_event, modifier_fields, platform_is_mac, press, send_input, text_events
from .page import Page

__all__ = ["Keyboard"]

_KEY = "Input.dispatchKeyEvent"


@observed_device("keyboard")
class Keyboard:
    """The tab's keyboard (``tab.keyboard``; ``frame.keyboard`` is the same keyboard)."""

    def __init__(self, page: Page) -> None:
        self._page = page

    async def press(self, *keys: str, delay: float | None = None) -> None:
        """Press each chord in turn in the focused element: ``"Enter"``, ``"Control+A"``,
        ``"Shift+Tab"``, ``"ControlOrMeta+Z"`` (Meta on macOS); a string may hold several,
        cut at spaces (``"Control+A Delete"``; ``"Space"`` is the space bar). A platform's
        editing shortcut (select all, copy, cut, paste, undo, redo) also runs its editing
        command, as the platform's own key binding does.

        Args:
            keys: one or more chords.
            delay: seconds between each key's down and up.

        Raises:
            ValueError: an unknown key or modifier, or no key.
        """
        await press(self._page, *keys, delay=delay)

    async def down(self, key: str) -> None:
        """Hold ``key`` down (``"Shift"``, ``"Control"``, ``"a"``): a modifier stays held for
        the keys and clicks that follow until :meth:`up`; a second ``down`` repeats the key.

        Raises:
            ValueError: an unknown key, or a chord (press those with :meth:`press`).
        """
        state = self._page.input_state
        name, event = await self._one(key, "down")
        repeat = event["code"] in state.keys
        state.keys.add(event["code"])
        if name in ("Alt", "Control", "Meta", "Shift"):
            state.modifiers.add(name)
            event = {**event, **modifier_fields(name)}
        kind = "keyDown" if event.get("text") else "rawKeyDown"
        fields = {"type": kind, "modifiers": state.modifier_mask(), **event}
        if repeat:
            fields["autoRepeat"] = True
        await self._page.top_send(_KEY, fields)

    async def up(self, key: str) -> None:
        """Release ``key``.

        Raises:
            ValueError: an unknown key, or a chord.
        """
        state = self._page.input_state
        name, event = await self._one(key, "up")
        state.keys.discard(event["code"])
        if name in ("Alt", "Control", "Meta", "Shift"):
            state.modifiers.discard(name)
            event = {**event, **modifier_fields(name)}
        up = {k: v for k, v in event.items() if k not in ("text", "unmodifiedText", "commands")}
        await self._page.top_send(_KEY, {"type": "keyUp", "modifiers": state.modifier_mask(), **up})

    async def type(self, text: str, *, delay: float | None = None) -> None:
        """Type ``text`` into the focused element key by key, as a keyboard does (``keydown``,
        ``keypress``, ``input``, ``keyup`` per character; a character a US keyboard lacks goes
        in as an input method commits it), ``delay`` seconds apart.

        Raises:
            nothing of its own: keys go wherever the focus is (nowhere, if nothing has it).
        """
        if not delay:
            await send_input(self._page, text_events(text))
            return
        for n, char in enumerate(text):
            if n:
                await asyncio.sleep(delay)  # the pace asked for, not a wait for anything
            await send_input(self._page, text_events(char))

    async def insert_text(self, text: str) -> None:
        """Put ``text`` in at the caret at once, as an input method commits it
        (``Input.insertText``: ``beforeinput`` and ``input``, no key events)."""
        await self._page.top_send("Input.insertText", {"text": text})

    async def _one(self, key: str, verb: str) -> tuple[str, dict[str, Any]]:
        """The key ``key`` names alone, and its event fields."""
        if len(key) > 1 and "+" in key.strip("+"):
            raise ValueError(
                f"keyboard.{verb}({key!r}): one key at a time; press a chord with "
                "keyboard.press, or hold its modifier with keyboard.down first"
            )
        mac = await platform_is_mac(self._page) if key.lower() == "controlormeta" else False
        state = self._page.input_state
        if key.lower() == "controlormeta":
            key = "Meta" if mac else "Control"
        _, event = key_event(key, held=frozenset(state.modifiers))
        return str(event["key"]), event
