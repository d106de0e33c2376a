"""Where a pointer verb acts: the element a selector or ref names, once it passed the checks
of its action, and the point on it, in the frame's viewport or in the tab's.

Every verb that puts the mouse on an element (click, hover, drag, scroll by the wheel) takes
these steps: :func:`aim` resolves the target (:mod:`.elements`) and waits until it can take
the action (:mod:`.actionability`); :func:`point_on` moves the point to a ``position`` given
from the top-left corner of the element's padding box (as Playwright measures it).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from .actionability import Actionable, wait_actionable
from .elements import Elements, call_on, release_elements, resolve
from .page import Page

__all__ = ["Position", "aim", "check_position", "point_on"]

#: A point on an element: ``{"x": ..., "y": ...}``, CSS pixels from the top-left corner of
#: its padding box.
Position = Mapping[str, float]


async def aim(
    page: Page,
    selector: str,
    action: str,
    wait: float,
    force: bool,
    verb: str,
    prepare: dict[str, Any] | None = None,
    held: bool = True,
    waited: float | None = None,
    kind: Callable[[Elements], Awaitable[None]] | None = None,
) -> tuple[Elements, Actionable, float]:
    """Resolve ``selector`` and wait until it can take ``action``; the elements, the chosen
    one and the seconds left of ``wait``. ``held`` False: the action needs no object of the
    element after the checks (:func:`.elements.resolve`); ``waited``: the whole wait the
    verb was given, for messages (``wait`` by default); ``kind``: a check of what was found
    that fails at once, before any wait (an element of the wrong kind never becomes right).

    Raises:
        as :func:`.actionability.wait_actionable` and :func:`.elements.resolve`.
    """
    deadline = time.monotonic() + wait
    elements = await resolve(page, selector, wait, held=held)
    try:
        if kind is not None:
            await kind(elements)
        left = max(0.0, deadline - time.monotonic())
        chosen = await wait_actionable(
            elements,
            action,
            left,
            force=force,
            verb=verb,
            waited=waited or wait,
            prepare=prepare,
        )
    except BaseException:
        release_elements(elements)
        raise
    return elements, chosen, max(0.0, deadline - time.monotonic())


def check_position(position: Position | None, verb: str, name: str = "position") -> None:
    """Refuse a position that is not ``{"x": number, "y": number}``.

    Raises:
        ValueError: it is not.
    """
    if position is None:
        return
    try:
        valid = set(position) == {"x", "y"} and all(
            isinstance(position[k], int | float) and not isinstance(position[k], bool)
            for k in ("x", "y")
        )
    except TypeError:
        valid = False
    if not valid:
        raise ValueError(
            f"{verb}: {name}={position!r}; give {{'x': ..., 'y': ...}}, CSS pixels from the "
            "top-left corner of the element's padding box"
        )


async def point_on(
    elements: Elements, chosen: Actionable, position: Position | None, *, again: bool = False
) -> tuple[Actionable, bool]:
    """The chosen element with its point moved to ``position`` (when given; else, with
    ``again``, to its centre as the page shows it now, for an element that may have moved
    since its checks), and whether a press there can start an HTML5 drag.

    Raises:
        ElementNotActionableError: never; a node gone meanwhile keeps the checked point.
    """
    answer = await call_on(
        elements, "element_point", chosen.index,
        dict(position) if position is not None else None,
        None if again else chosen.x, None if again else chosen.y,
        elements.selector if not elements.object_id else None,
        timeout=elements.page.default_timeout,
    )  # fmt: skip
    if not isinstance(answer, dict):
        return chosen, False
    moved = dataclasses.replace(chosen, x=float(answer["x"]), y=float(answer["y"]))
    return moved, bool(answer.get("draggable"))
