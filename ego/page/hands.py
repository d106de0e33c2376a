"""What a tab's mouse and keyboard hold between calls: where the pointer is, which buttons
and modifier keys are down, and the data of an HTML5 drag in progress.

One :class:`InputState` per tab, shared by the tab and its frames (their input goes to the
tab's session, in the tab's coordinates): ``tab.mouse.down()`` presses where the last move,
click or hover left the pointer, and a modifier held with ``tab.keyboard.down("Shift")`` is
held for the clicks that follow, as on a real keyboard.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

__all__ = ["BUTTON_BITS", "MODIFIER_BITS", "InputState"]

#: CDP's ``buttons`` bit of each mouse button.
BUTTON_BITS: Final[dict[str, int]] = {"left": 1, "right": 2, "middle": 4, "back": 8, "forward": 16}

#: CDP's ``modifiers`` bit of each modifier key.
MODIFIER_BITS: Final[dict[str, int]] = {"Alt": 1, "Control": 2, "Meta": 4, "Shift": 8}


@dataclass
class InputState:
    """A tab's input devices as the page last saw them.

    Attributes:
        x, y: the pointer, in the tab's CSS pixels.
        buttons: the mouse buttons down, in the order they went down.
        modifiers: the modifier keys held (``"Shift"``, ``"Control"``, ``"Alt"``, ``"Meta"``).
        keys: the codes of every key held (a second ``down`` of one repeats it).
        drag: the drag data Chrome handed over when an HTML5 drag began under the pressed
            mouse (``Input.dragIntercepted``), until the drop.
        mac: whether the browser runs on macOS (its shortcuts use Meta), once asked.
    """

    x: float = 0.0
    y: float = 0.0
    buttons: list[str] = field(default_factory=list)
    modifiers: set[str] = field(default_factory=set)
    keys: set[str] = field(default_factory=set)
    drag: dict[str, Any] | None = None
    mac: bool | None = None

    @property
    def button_mask(self) -> int:
        """The ``buttons`` bitmask of the buttons down."""
        mask = 0
        for button in self.buttons:
            mask |= BUTTON_BITS[button]
        return mask

    def modifier_mask(self, extra: set[str] | frozenset[str] = frozenset()) -> int:
        """The ``modifiers`` bitmask of the keys held and ``extra``."""
        mask = 0
        for name in self.modifiers | extra:
            mask |= MODIFIER_BITS[name]
        return mask
