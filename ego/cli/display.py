"""A window where there is no display: one line that names the way through, before Chrome
is started (and after, when Chrome itself found none).

On Linux a window needs an X server or a Wayland compositor, named by ``$DISPLAY`` or
``$WAYLAND_DISPLAY``; without either, a headed Chrome exits at once and its own last lines
do not say what to do.
"""

from __future__ import annotations

import os
import sys
from typing import Final

from ..errors import ChromeLaunchError

__all__ = ["check_display", "no_display", "no_display_error"]

#: The way through for each command that opens a window, in its own words.
_FIXES: Final = {
    "ego launch": (
        "keep a browser without a window (`ego launch`), or give this machine a virtual "
        "display (`xvfb-run -a ego launch --headed`)"
    ),
    "ego login": (
        "log in without a window (`ego login SITE --headless` prints how to reach its tab "
        "from a machine with a screen), in a browser with a window elsewhere (--endpoint "
        "http://HOST:PORT, over an ssh -L tunnel), or on a machine with a screen with "
        "`ego login SITE --save-state FILE`, then use FILE here with --storage-state FILE"
    ),
    "ego run": "drop --headed, or give this machine a virtual display (`xvfb-run -a ego run ...`)",
    "ego mcp": "drop --headed, or give this machine a virtual display (`xvfb-run -a ego mcp ...`)",
}


def _fix(command: str) -> str:
    return _FIXES.get(command, "run it without a window, or under a virtual display (xvfb-run -a)")


def check_display(command: str) -> None:
    """Refuse, before anything starts, to open a window on a machine that has no display.

    Args:
        command: the command that would open it (``"ego run"``), for the fix.

    Raises:
        ChromeLaunchError: Linux, and neither ``$DISPLAY`` nor ``$WAYLAND_DISPLAY`` is set.
    """
    if not sys.platform.startswith("linux"):
        return
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return
    raise ChromeLaunchError(
        f"{command} opens a window, and this machine has no display for one ($DISPLAY is not "
        f"set): {_fix(command)}"
    )


def no_display(text: str) -> bool:
    """Whether Chrome's failure ``text`` says it found no display."""
    lowered = text.lower()
    # The last lines Chrome printed: "Missing X server" may have scrolled past them, while
    # the windowing platform's own failure comes after it.
    signs = ("missing x server", "cannot open display", "platform failed to initialize")
    return any(sign in lowered for sign in signs)


def no_display_error(exc: ChromeLaunchError, command: str) -> ChromeLaunchError:
    """``exc`` said in one line with the way through, when it is Chrome finding no display
    for its window (``$DISPLAY`` set, yet no server there); else ``exc`` itself."""
    text = str(exc)
    if not no_display(text):
        return exc
    return ChromeLaunchError(
        f"{command} opens a window, and Chrome found no display for it "
        f"(DISPLAY={os.environ.get('DISPLAY', '')!r}): {_fix(command)}"
    )
