"""The mouse: moves, buttons and the wheel at points of the tab, as a person's mouse makes them.

Every event goes to the tab's session in the tab's CSS pixels (``Input.dispatchMouseEvent``),
with the buttons down (``buttons``) and the modifier keys held (``modifiers``) that the tab's
:class:`~ego.page.hands.InputState` records, so that ``tab.mouse.down()``, moves and
``up()`` make the ``pointerdown``, ``pointermove`` (with ``buttons`` 1) and ``pointerup`` a
drag makes. A move with the left button down may start an HTML5 drag: Chrome then hands the
drag to ego (``Input.setInterceptDrags``, ``Input.dragIntercepted``) and the moves after it go
on as ``dragenter``/``dragover`` and the release as the ``drop``
(``Input.dispatchDragEvent``), with the data the page put in its ``dataTransfer``, as
Playwright does.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import Any, Final, cast

from ..errors import CommandTimeoutError, EgoError
from .action_log import observed_device
from .hands import BUTTON_BITS
from .keys import send_input
from .page import Page
from .scripts import page_script

__all__ = ["BUTTONS", "Mouse", "check_button", "move", "pause", "press", "release", "wheel"]

#: The buttons a mouse verb takes.
BUTTONS: Final = ("left", "right", "middle")

_MOUSE: Final = "Input.dispatchMouseEvent"
_DRAG: Final = "Input.dispatchDragEvent"

#: Seconds to wait for Chrome's ``Input.dragIntercepted`` once the page began a drag.
_DRAG_HANDED_OVER: Final = 5.0


def check_button(button: str, click_count: int = 1, verb: str = "click") -> None:
    """Refuse a button or click count no mouse has.

    Raises:
        ValueError: ``button`` is not left, right or middle, or ``click_count`` below 1.
    """
    if button not in BUTTONS:
        raise ValueError(f"{verb}: button={button!r} is no mouse button; use left, right or middle")
    if not isinstance(click_count, int) or click_count < 1:
        raise ValueError(f"{verb}: click_count={click_count!r}; use 1 (a click), 2 or 3")


async def move(
    page: Page, x: float, y: float, *, steps: int = 1, watch: Sequence[Page] | None = None
) -> None:
    """Move the mouse from where it is to ``(x, y)`` of the tab in ``steps`` even steps, each
    one event (a drag's moves, while a button is down). With the left button down and no
    drag yet, each step may start an HTML5 drag in one of ``watch`` (the page and its frames
    when None); from then on the steps are ``dragover`` events.

    Raises:
        ValueError: ``steps`` below 1.
    """
    if steps < 1:
        raise ValueError(f"move: steps={steps!r}; use 1 or more")
    state = page.input_state
    start_x, start_y = state.x, state.y
    points = [
        (start_x + (x - start_x) * n / steps, start_y + (y - start_y) * n / steps)
        for n in range(1, steps + 1)
    ]
    if state.drag is None and "left" in state.buttons and (watch is None or watch):
        points = await _moves_that_may_drag(page, points, watch)
    for px, py in points:
        state.x, state.y = px, py
        if state.drag is not None:
            await page.top_send(_DRAG, _drag_event(page, "dragOver"))
        else:
            await page.top_send(_MOUSE, _mouse_event(page, "mouseMoved"))


async def _moves_that_may_drag(
    page: Page, points: list[tuple[float, float]], watch: Sequence[Page] | None
) -> list[tuple[float, float]]:
    """Make the moves of ``points`` with Chrome set to hand over an HTML5 drag, until one
    starts a drag in a watched document; the points left to move through (as ``dragover``
    events: the drag was entered at the point that started it)."""
    state = page.input_state
    pages = list(watch) if watch is not None else await _with_frames(page)
    await _watch_drags(pages, "arm")
    top = _top(page)
    top_session, _ = await top._target()
    handed = top_session.expect("Input.dragIntercepted")
    try:
        await page.top_send("Input.setInterceptDrags", {"enabled": True})
        try:
            for n, (px, py) in enumerate(points):
                state.x, state.y = px, py
                await page.top_send(_MOUSE, _mouse_event(page, "mouseMoved"))
                if any(await _watch_drags(pages, "check")):
                    try:
                        intercepted = await asyncio.wait_for(handed, _DRAG_HANDED_OVER)
                    except TimeoutError:
                        raise CommandTimeoutError(
                            "the page began an HTML5 drag but Chrome did not hand it over "
                            f"within {_DRAG_HANDED_OVER:g} s; release the mouse and try again"
                        ) from None
                    state.drag = cast("dict[str, Any]", intercepted["data"])
                    await page.top_send(_DRAG, _drag_event(page, "dragEnter"))
                    return points[n + 1 :]
            return []
        finally:
            await page.top_send("Input.setInterceptDrags", {"enabled": False})
    finally:
        handed.cancel()
        if state.drag is None:
            with contextlib.suppress(EgoError):
                await _watch_drags(pages, "end")


async def _watch_drags(pages: Sequence[Page], mode: str) -> list[bool]:
    """Run ``drag_watch.js`` in each page; a page that went away answers False."""
    expression = f"({page_script('drag_watch')}).call(null, {mode!r})"

    async def one(page: Page) -> bool:
        try:
            return bool(await page.evaluate(expression, describe=False))
        except EgoError:
            return False  # gone, or between documents: no drag of its began there

    return list(await asyncio.gather(*(one(p) for p in pages)))


async def _with_frames(page: Page) -> list[Page]:
    found = [page]
    for child in await page.child_frames():
        found.extend(await _with_frames(child))
    return found


def _top(page: Page) -> Page:
    """The tab's main frame above ``page``: input and its events live on its session."""
    while not page.is_main:
        # A frame's parent frame (Frame.parent); the protocol of a page does not name it.
        parent = cast("Page | None", getattr(page, "parent", None))
        if parent is None:
            break
        page = parent
    return page


async def press(page: Page, button: str = "left", click_count: int = 1) -> None:
    """Press ``button`` where the mouse is (``mousePressed``).

    Raises:
        ValueError: an unknown button or a click count below 1.
    """
    check_button(button, click_count, "mouse.down")
    state = page.input_state
    if state.drag is not None:
        return  # a drag in progress holds the button already
    if button not in state.buttons:
        state.buttons.append(button)
    await page.top_send(_MOUSE, _mouse_event(page, "mousePressed", button, click_count))


async def pause(page: Page) -> None:
    """Hold still while the tab draws three frames (at least two whole frame intervals), as
    a hand slows down over a drop target: pages act on a drag's moves in a frame or a timer
    of their own (SortableJS ignores moves for 30 ms after each swap), and a person's last
    move comes after such a pause."""
    await page.top_send(
        "Runtime.evaluate",
        {"expression": _THREE_FRAMES, "awaitPromise": True, "returnByValue": True},
    )


async def release(page: Page, button: str = "left", click_count: int = 1) -> None:
    """Release ``button`` where the mouse is (``mouseReleased``); ends an HTML5 drag in
    progress with its ``drop`` there.

    Raises:
        ValueError: an unknown button or a click count below 1.
    """
    check_button(button, click_count, "mouse.up")
    state = page.input_state
    if button in state.buttons:
        state.buttons.remove(button)
    if state.drag is not None and button == "left":
        try:
            # A person's drop follows a dragover at that point: pages accept the drop there.
            await page.top_send(_DRAG, _drag_event(page, "dragOver"))
            await page.top_send(_DRAG, _drag_event(page, "drop"))
        finally:
            state.drag = None
        return
    await page.top_send(_MOUSE, _mouse_event(page, "mouseReleased", button, click_count))


async def click(
    page: Page,
    x: float,
    y: float,
    *,
    button: str = "left",
    click_count: int = 1,
    delay: float | None = None,
) -> None:
    """Move to ``(x, y)`` and click there ``click_count`` times: a press and release for each
    (``clickCount`` 1, then 2, ...), as a person's double click is; ``delay`` seconds between
    each press and its release.

    Raises:
        ValueError: an unknown button or a click count below 1.
    """
    check_button(button, click_count)
    state = page.input_state
    state.x, state.y = x, y
    events = [_mouse_event(page, "mouseMoved")]
    for count in range(1, click_count + 1):
        events.append(_mouse_event(page, "mousePressed", button, count, pressed=True))
        events.append(_mouse_event(page, "mouseReleased", button, count))
    if not delay:
        await send_input(page, [(_MOUSE, event) for event in events])
        return
    for event in events:
        await page.top_send(_MOUSE, event)
        if event["type"] == "mousePressed":
            await asyncio.sleep(delay)  # the pace asked for, not a wait for anything


async def wheel(page: Page, dx: float, dy: float) -> None:
    """Turn the wheel where the mouse is, by ``dx``, ``dy`` CSS pixels (``mouseWheel``): what
    is under the pointer scrolls, or takes the ``wheel`` event for itself. Returns once the
    page's ``wheel`` handlers ran; the scroll itself shows with the next frame or two (as
    Playwright's wheel; :func:`.scrolling.scroll` waits for it)."""
    await page.top_send(_MOUSE, {**_mouse_event(page, "mouseWheel"), "deltaX": dx, "deltaY": dy})


#: Resolves after three animation frames (a timer stands in where a background tab gets none).
_THREE_FRAMES: Final = (
    "new Promise((resolve) => { const timer = setTimeout(resolve, 300); let n = 3;"
    " const step = () => (--n ? requestAnimationFrame(step) : (clearTimeout(timer), resolve()));"
    " requestAnimationFrame(step); })"
)


def _mouse_event(
    page: Page, kind: str, button: str | None = None, click_count: int = 0, pressed: bool = False
) -> dict[str, Any]:
    state = page.input_state
    buttons = state.button_mask | (BUTTON_BITS[button] if pressed and button else 0)
    event: dict[str, Any] = {
        "type": kind,
        "x": state.x,
        "y": state.y,
        "modifiers": state.modifier_mask(),
        "buttons": buttons,
    }
    if button is not None:
        event["button"] = button
        event["clickCount"] = click_count
    elif state.buttons:
        event["button"] = state.buttons[-1]  # a drag's moves name the button held
    return event


def _drag_event(page: Page, kind: str) -> dict[str, Any]:
    state = page.input_state
    return {
        "type": kind,
        "x": state.x,
        "y": state.y,
        "data": state.drag,
        "modifiers": state.modifier_mask(),
    }


@observed_device("mouse")
class Mouse:
    """The tab's mouse (``tab.mouse``; on a frame, the same mouse, in the tab's coordinates).

    It acts at points of the tab in CSS pixels, wherever elements are; the element verbs
    (``click``, ``hover``, ``drag_to``) find the point themselves after their checks, and
    leave the mouse there.
    """

    def __init__(self, page: Page) -> None:
        self._page = page

    @property
    def position(self) -> tuple[float, float]:
        """Where the mouse is, in the tab's CSS pixels."""
        state = self._page.input_state
        return state.x, state.y

    async def move(self, x: float, y: float, *, steps: int = 1) -> None:
        """Move to ``(x, y)`` in ``steps`` even moves from where the mouse is (a drag needs
        several). With the left button down, a move may start the page's HTML5 drag; later
        moves and the release then go on as its ``dragover`` and ``drop``.

        Raises:
            ValueError: ``steps`` below 1.
        """
        await move(self._page, x, y, steps=steps)

    async def down(self, *, button: str = "left", click_count: int = 1) -> None:
        """Press ``button`` (``"left"``, ``"right"``, ``"middle"``) where the mouse is.

        Raises:
            ValueError: an unknown button or a click count below 1.
        """
        await press(self._page, button, click_count)

    async def up(self, *, button: str = "left", click_count: int = 1) -> None:
        """Release ``button`` where the mouse is (the drop of an HTML5 drag in progress).

        Raises:
            ValueError: an unknown button or a click count below 1.
        """
        await release(self._page, button, click_count)

    async def click(
        self,
        x: float,
        y: float,
        *,
        button: str = "left",
        click_count: int = 1,
        delay: float | None = None,
    ) -> None:
        """Move to ``(x, y)`` and click: a press and release per count (2: a double click,
        with ``dblclick``), ``delay`` seconds between press and release.

        Raises:
            ValueError: an unknown button or a click count below 1.
        """
        await click(self._page, x, y, button=button, click_count=click_count, delay=delay)

    async def dblclick(
        self, x: float, y: float, *, button: str = "left", delay: float | None = None
    ) -> None:
        """A double click at ``(x, y)`` (:meth:`click` with ``click_count=2``)."""
        await click(self._page, x, y, button=button, click_count=2, delay=delay)

    async def wheel(self, dx: float, dy: float) -> None:
        """Turn the wheel where the mouse is by ``dx``, ``dy`` CSS pixels (down and right
        positive): what is under the pointer scrolls (or takes the ``wheel`` event). Returns
        once the page's ``wheel`` handlers ran; the scroll shows a frame or two later."""
        await wheel(self._page, dx, dy)
