"""Slow motion: a pause before each input and navigation a connection sends, so that a
person watching a headed browser can follow a run (what Playwright's ``slowMo`` does).

Only what a person would see happen is slowed: every ``Input.*`` event (each mouse move,
press and release, each key, each piece of inserted text), navigations (``Page.navigate``,
``Page.reload``, ``Page.navigateToHistoryEntry``), a new tab and a file chosen for an
upload. Reading the page (``Runtime.evaluate``, the accessibility tree, screenshots) is
not: a tool's call is one evaluate and runs at full speed once the page is there.
"""

from __future__ import annotations

import asyncio
from typing import Final

__all__ = ["SlowMotion"]

#: CDP methods a person sees happen, besides every ``Input.*`` event.
_SEEN: Final = frozenset(
    {
        "Page.navigate",
        "Page.reload",
        "Page.navigateToHistoryEntry",
        "Target.createTarget",
        "DOM.setFileInputFiles",
    }
)
#: ``Input.*`` methods that only set something up: nothing happens on the page.
_SETUP: Final = frozenset({"Input.setIgnoreInputEvents", "Input.setInterceptDrags"})


class SlowMotion:
    """The pause a connection makes before each input and navigation it sends.

    Args:
        milliseconds: how long each pause is.

    Raises:
        ValueError: ``milliseconds`` is negative or not a number.

    Attributes:
        seconds: each pause, in seconds.
        paused: how many pauses were made (what was slowed, for a test or a log).
    """

    def __init__(self, milliseconds: float) -> None:
        if not isinstance(milliseconds, int | float) or not milliseconds >= 0:
            raise ValueError(f"slow_mo must be milliseconds, 0 or more, not {milliseconds!r}")
        self.seconds = milliseconds / 1000
        self.paused = 0
        # When the last pause asked for ends (loop time): a pause starts no earlier.
        self._until = 0.0

    @staticmethod
    def slows(method: str) -> bool:
        """Whether ``method`` is something a person sees happen."""
        if method.startswith("Input."):
            return method not in _SETUP
        return method in _SEEN

    async def before(self, method: str) -> None:
        """Pause before ``method`` is sent, when it is one a person sees happen.

        Pauses follow one another in the order they were asked for: input sent all at once
        (a click's move, press and release) still goes out in order, one pause apart.
        """
        if self.seconds and self.slows(method):
            self.paused += 1
            loop = asyncio.get_running_loop()
            self._until = max(loop.time(), self._until) + self.seconds
            await asyncio.sleep(self._until - loop.time())
