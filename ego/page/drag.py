"""Dragging one element onto another, as a person's mouse does it.

``drag_to(source, target)`` presses the left button at the source's point (after the checks
a hover makes: visible, still, on top), moves in several steps to the target's point (the
same checks, made with the source's; its point is read again once the button is down,
since pages change on the press) and releases it there. When the page moved elements about
during the moves (a list sorting itself, which may ignore moves for a moment after each
change), the mouse rests for three frames before its last step, as a hand slows over a drop
target. Where the press can start an HTML5 drag (a ``draggable`` element, a link, an
image), the moves are made with Chrome set to hand the drag over (:mod:`.mouse`): once the
page's ``dragstart`` ran, the rest is ``dragenter``, ``dragover`` and ``drop`` at the target
with the ``dataTransfer`` the page filled, and ``dragend`` at the source. Elsewhere the moves
are plain pointer moves with the button down, what a sortable list that listens to pointer
events, or a map that pans, follows.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Final

from ..errors import EgoError
from .actionability import Actionable, deliver_mouse, tab_point
from .aim import Position, aim, check_position, point_on
from .elements import Elements, release_elements
from .locate import FRAME_STEP
from .mouse import move, pause, release
from .page import Page
from .refs import parse_ref
from .scripts import page_script

__all__ = ["DRAG_STEPS", "drag_to"]

#: Moves from the source's point to the target's by default: pointer-driven drags need a
#: few to pass their threshold and then move over the target.
DRAG_STEPS: Final = 5


async def drag_to(
    page: Page,
    source: str,
    target: str,
    *,
    source_position: Position | None = None,
    target_position: Position | None = None,
    steps: int = DRAG_STEPS,
    wait: float = 5.0,
    force: bool = False,
) -> None:
    """Drag ``source`` onto ``target`` with the left mouse button.

    Raises:
        ValueError: ``steps`` below 1, or a position that is not ``{"x", "y"}``.
        InvalidSelectorError, ElementNotFoundError, ElementNotActionableError: as a hover
            of the source or of the target (the error names which).
    """
    check_position(source_position, "drag_to", "source_position")
    check_position(target_position, "drag_to", "target_position")
    if not isinstance(steps, int) or steps < 1:
        raise ValueError(f"drag_to: steps={steps!r}; use 1 or more")
    deadline = time.monotonic() + wait
    state = page.input_state
    # Both ends of a drag within the tab's own document are checked at once (each check waits
    # for frames); the target's point is read again once the button is down. In frames, one
    # after the other: the checks there track the mouse's arrival, one element at a time.
    together = page.is_main and _in_the_document(source) and _in_the_document(target)
    ahead: tuple[Elements, Actionable, float] | None = None
    if together:
        ends = await asyncio.gather(
            aim(page, source, "hover", wait, force, "drag", held=False),
            aim(page, target, "hover", wait, force, "drop on", held=False),
            return_exceptions=True,
        )
        checked = [end for end in ends if not isinstance(end, BaseException)]
        failed = [end for end in ends if isinstance(end, BaseException)]
        if failed:
            for end in checked:
                release_elements(end[0])
            raise failed[0]
        (elements, chosen, left), ahead = checked
    else:
        elements, chosen, left = await aim(page, source, "hover", wait, force, "drag", held=False)
    try:
        chosen, draggable = await point_on(elements, chosen, source_position)
        mask = state.modifier_mask()
        pressed = {"type": "mousePressed", "button": "left", "buttons": 1, "clickCount": 1}
        events = [
            {"type": "mouseMoved", "modifiers": mask, "buttons": 0},
            {**pressed, "modifiers": mask},
        ]
        state.x, state.y = await deliver_mouse(elements, chosen, events, left, "drag")
        if "left" not in state.buttons:
            state.buttons.append("left")
        origin = elements.page
    except BaseException:
        if ahead is not None:
            release_elements(ahead[0])
        raise
    finally:
        release_elements(elements)
    try:
        if ahead is not None:
            elements, chosen, _ = ahead
        else:
            left = max(0.0, deadline - time.monotonic())
            elements, chosen, _ = await aim(
                page, target, "hover", left, force, "drop on", held=False, waited=wait
            )
        try:
            if target_position is not None or ahead is not None:
                chosen, _ = await point_on(elements, chosen, target_position, again=True)
            x, y = await tab_point(elements.page, chosen.x, chosen.y)
        finally:
            release_elements(elements)
        watch = [origin] if draggable else []
        if steps > 1:
            # All but the last step; when the page moved elements about meanwhile (a list
            # sorting itself), a pause before the last step onto the target.
            near_x = state.x + (x - state.x) * (steps - 1) / steps
            near_y = state.y + (y - state.y) * (steps - 1) / steps
            await _watch(origin, "observe")
            await move(page, near_x, near_y, steps=steps - 1, watch=watch)
            if await _watch(origin, "rearranged"):
                await pause(page)
        await move(page, x, y, steps=1, watch=watch)
        await release(page, "left")
    finally:
        if "left" in state.buttons:  # nothing stays pressed after a failed drag
            with contextlib.suppress(EgoError):
                await release(page, "left")


def _in_the_document(selector: str) -> bool:
    """Whether ``selector`` names an element of the page's own document (for a tab: no
    frame's): no ref (which may name a frame's node) and no ``>>`` (which may enter one)."""
    return parse_ref(selector) is None and FRAME_STEP not in selector


async def _watch(page: Page, mode: str) -> bool:
    """``drag_watch.js`` in ``page`` (``"observe"``, ``"rearranged"``); False when the page
    is gone or between documents."""
    try:
        expression = f"({page_script('drag_watch')}).call(null, {mode!r})"
        return bool(await page.evaluate(expression, describe=False))
    except EgoError:
        return False
