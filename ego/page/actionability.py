"""Waiting until an element can take a user's input, and where to send it.

Before a click (and a hover, a check, typing, a choice of option) ego waits, as Playwright
does, until the element is attached, visible, enabled, (for typing) editable, stable and the
one that receives events at its point. ``scripts/actionable.js`` runs the checks in the
page, on the element's object (:mod:`.elements`), every animation frame until the wait ends,
and answers the point in the frame's viewport; :func:`tab_point` adds where the frame sits
in the tab, since mouse events go to the tab's session. docs/architecture.md
("Actionability") lists the checks, their order and their bound.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import Any, Final, cast

from ..errors import CommandTimeoutError, EgoError, ElementNotActionableError, ProtocolError
from ..protocol.session import Session
from .elements import Elements, call_on, invalid, not_found
from .keys import send_input
from .navigation_watch import NavigationWatch
from .page import Page
from .refs import parse_ref
from .scripts import page_script
from .spinning import stop_spinning

__all__ = [
    "CHECKS",
    "SLIPPED",
    "Actionable",
    "Miss",
    "click_landed",
    "deliver_mouse",
    "tab_point",
    "wait_actionable",
]

#: The checks each action waits for, in the order they are made.
CHECKS: Final[dict[str, tuple[str, ...]]] = {
    "click": ("visible", "enabled", "stable", "hit"),
    "check": ("visible", "checkable", "enabled", "stable", "hit"),
    "hover": ("visible", "stable", "hit"),
    "type": ("visible", "enabled", "editable", "stable", "hit", "focus"),
    "select": ("visible", "enabled"),
    "upload": ("enabled",),
}

#: The actions that end in a click, whose events are checked where they arrive.
_CLICKED: Final = frozenset({"click", "check", "type"})

#: How a failed check is worded, and what to do about it.
_WORDS: Final[dict[str, tuple[str, str]]] = {
    "attached": ("it left the page", "it was replaced; act again, or take a new snapshot"),
    "visible": ("it is hidden", "wait for it to show, or act on a visible element"),
    "checkable": ("it cannot be checked", "pass a checkbox, switch or radio (or its label)"),
    "enabled": ("it is disabled", "enable it first (what does the form still need?)"),
    "editable": ("it takes no text", "type into an editable field"),
    "stable": ("it keeps moving", "wait for the animation to end, or pass force=True"),
    "receives events": (
        "another element would get the input",
        "close or wait out what covers it, or pass force=True",
    ),
}

#: How a click whose press reached the element and whose rest the page sent elsewhere is
#: worded: forcing it would send the rest there too.
SLIPPED: Final = (
    "the page moved another element under the point as the button went down",
    "look at the page as it is now (a new snapshot) before acting again",
)


@dataclass(frozen=True)
class Actionable:
    """The element an action may go to, as the checks found it.

    Attributes:
        index: which of the matches (0 for a ref).
        x, y: the point to act at, in the frame's viewport (CSS pixels).
        what: the element in words (``<button id=save "Save">``).
        info: the rest of the script's answer (``tag``, ``checked``, ``focus``, ``select``,
            ``type``, ``multiple``).
    """

    index: int
    x: float
    y: float
    what: str
    info: dict[str, Any]


async def wait_actionable(
    elements: Elements,
    action: str,
    wait: float,
    *,
    force: bool = False,
    verb: str | None = None,
    waited: float | None = None,
    prepare: dict[str, Any] | None = None,
) -> Actionable:
    """Wait (up to ``wait`` seconds, retried every animation frame in the page) until one of
    ``elements`` passes the checks of ``action``; the first in document order that does.

    Args:
        elements: what the selector or ref names.
        action: a key of :data:`CHECKS`.
        wait: seconds; at least one full round (two frames, for stability) is made.
        force: skip the checks; the element still needs a box to act at.
        verb: how messages name the action (``action`` by default).
        waited: the whole wait the caller was given, for messages (``wait`` by default).
        prepare: for typing, ``{"clear": ..., "text": ...}``: a field that is itself the
            editor is focused and readied in the same call (its ``focused_field.js`` answer
            under ``info["field"]``).

    Raises:
        ElementNotActionableError: no element passed by the end of the wait; names the
            check that failed and what it saw.
        ElementNotFoundError: nothing matches (any more).
        InvalidSelectorError: an unheld selector is not CSS.
        StaleRefError: a ref's node was removed from the page.
        ContextDestroyedError: the page navigated meanwhile.
    """
    checks = CHECKS[action]
    options = {
        "timeout": int(wait * 1000),
        "force": force,
        "visible": "visible" in checks,
        "enabled": "enabled" in checks,
        "editable": "editable" in checks,
        "stable": "stable" in checks,
        "hit": "hit" in checks,
        "focus": "focus" in checks,
        "checkable": "checkable" in checks,
        # In a frame the mouse's arrival is checked (see :func:`deliver_mouse`).
        "track": "hit" in checks and not elements.page.is_main,
        # A click's events are checked where they arrive (see :func:`click_landed`).
        "intercept": action in _CLICKED,
        "prepare": prepare or {},
    }
    page = elements.page
    try:
        answer = await call_on(
            elements, "actionable", elements.selector, options,
            timeout=wait + page.default_timeout,
        )  # fmt: skip
    except CommandTimeoutError:
        raise CommandTimeoutError(
            f"{verb or action} {elements.given!r}: the page did not answer within "
            f"{wait + page.default_timeout:g} s (a script keeps it busy?)"
        ) from None
    if answer.get("ok"):
        return Actionable(
            int(answer["index"]), float(answer["x"]), float(answer["y"]), answer["what"], answer
        )
    if "invalid" in answer:
        raise invalid(elements.given, elements.selector or elements.given, str(answer["invalid"]))
    if not answer.get("count") and answer.get("check") == "attached" and not elements.is_ref:
        raise not_found(page, elements.given, wait if waited is None else waited)
    ref = parse_ref(elements.given) if elements.is_ref else None
    if ref is not None and answer.get("check") == "attached":
        raise page.refs.stale(ref, "names a node that was removed from the page")
    raise not_actionable(elements, answer, wait if waited is None else waited, verb or action)


def not_actionable(
    elements: Elements, answer: dict[str, Any], wait: float, verb: str
) -> ElementNotActionableError:
    """The error for ``answer``, a failed round of checks (its ``words``, when given, say
    what happened and what to do instead of the check's own)."""
    check, seen, what = str(answer["check"]), str(answer["seen"]), str(answer.get("what", ""))
    if check == "attached" and not answer.get("count"):
        seen = "it matches nothing any more"
    state, advice = answer.get("words") or _WORDS.get(
        check, ("it cannot take the input", "take a new snapshot")
    )
    waited = "" if answer.get("final") else f" (waited {wait:g} s)"
    subject = f"{what} ({elements.given!r})" if what else repr(elements.given)
    where = elements.page.url or "the page"
    shown = "receives events" if check == "receives events" else check
    return ElementNotActionableError(
        f"cannot {verb} {subject} on {where}: {state}{waited}; {shown} check: {seen}. "
        f"{advice[0].upper()}{advice[1:]}",
        selector=elements.given,
        check=check,
        seen=seen,
    )


async def tab_point(page: Page, x: float, y: float) -> tuple[float, float]:
    """``(x, y)`` of ``page``'s viewport in the tab's: for a frame, its iframe's content box
    corner is added (and the iframes are first scrolled into view in their parents,
    ``DOM.scrollIntoViewIfNeeded``, when the point falls outside the tab's viewport).

    Raises:
        FrameDetachedError: the frame (or an ancestor) was removed.
    """
    if page.is_main:
        return x, y
    left, top = await page.viewport_offset()
    metrics = await page.top_send("Page.getLayoutMetrics")
    view = metrics.get("cssLayoutViewport") or metrics.get("layoutViewport") or {}
    width, height = float(view.get("clientWidth", 0)), float(view.get("clientHeight", 0))
    if 0 <= left + x < width and 0 <= top + y < height:
        return left + x, top + y
    # Scrolling inside a frame does not move the frame in its parent.
    frame: Page | None = page
    while frame is not None and not frame.is_main:
        # A frame's parent frame (Frame.parent); the protocol of a page does not name it.
        parent = cast("Page | None", getattr(frame, "parent", None))
        if parent is None:
            break
        try:
            owner = await parent.send("DOM.getFrameOwner", {"frameId": frame.id})
            await parent.send(
                "DOM.scrollIntoViewIfNeeded", {"backendNodeId": owner["backendNodeId"]}
            )
        except ProtocolError:
            break  # measured as it is: the hit test already passed inside the frame
        frame = parent
    # Chrome routes a mouse event to a cross-site frame by where the frame was drawn last:
    # let the tab draw a frame or two of the scrolled page first.
    await page.top_send(
        "Runtime.evaluate",
        {"expression": _TWO_FRAMES, "awaitPromise": True, "returnByValue": True},
    )
    left, top = await page.viewport_offset()
    return left + x, top + y


#: Resolves after two animation frames (a timer stands in where a background tab gets none).
_TWO_FRAMES: Final = (
    "new Promise((resolve) => { const timer = setTimeout(resolve, 200);"
    " requestAnimationFrame(() => requestAnimationFrame(() => { clearTimeout(timer);"
    " resolve(); })); })"
)


async def deliver_mouse(
    elements: Elements,
    chosen: Actionable,
    events: list[dict[str, Any]],
    wait: float,
    verb: str,
    navigation: NavigationWatch | None = None,
) -> tuple[float, float]:
    """Send the mouse ``events`` (their ``x``, ``y`` filled in) at the chosen point; where
    they went, in the tab's coordinates.

    In the tab's own document they go at once. In a frame the browser sends a mouse event to
    whichever document it drew at that point last, which lags a scroll by a frame or more:
    the move goes first, and only once the frame's document saw it arrive do the other
    events follow; until then the tab is let draw and the move sent again (bounded by
    ``wait``, at least a second). The frame stops watching for the mouse after, unless
    ``navigation`` saw a navigation begin first (the frame's document is going).

    Raises:
        ElementNotActionableError: the mouse never reached the element in its frame.
    """
    page = elements.page
    x, y = await tab_point(page, chosen.x, chosen.y)
    mouse = "Input.dispatchMouseEvent"
    if page.is_main:
        await send_input(page, [(mouse, {**e, "x": x, "y": y}) for e in events])
        return x, y
    deadline = time.monotonic() + max(wait, 1.0)
    try:
        while True:
            await page.top_send(mouse, {**events[0], "x": x, "y": y})
            seen = await call_on(elements, "pointer_seen", False, timeout=page.default_timeout)
            if any(reached for _, _, reached in seen):
                break
            if time.monotonic() >= deadline:
                where = f"at ({x:.0f}, {y:.0f})"
                other = "another element" if seen else "another document"
                raise not_actionable(
                    elements,
                    {"check": "receives events", "what": chosen.what, "final": True,
                     "seen": f"the mouse {where} reached {other}, not the element"},
                    wait, verb,
                )  # fmt: skip
            await page.top_send(
                "Runtime.evaluate",
                {"expression": _TWO_FRAMES, "awaitPromise": True, "returnByValue": True},
            )
            x, y = await tab_point(page, chosen.x, chosen.y)
        await send_input(page, [(mouse, {**e, "x": x, "y": y}) for e in events[1:]])
        return x, y
    finally:
        with contextlib.suppress(EgoError):
            stop = call_on(elements, "pointer_seen", True, timeout=page.default_timeout)
            await (stop if navigation is None else navigation.or_answer(stop))


@dataclass(frozen=True)
class Miss:
    """A click that did not land on the element the checks chose, cancelled in the page.

    Attributes:
        target: what the cancelled event would have reached, in words.
        event: that event's type (``pointerdown``, ``mouseup``, ``click``, ...).
        pressed: whether the press had reached the element first (the page saw it and then
            moved something under the point); when not, nothing of the click reached the
            page and it may be made again.
    """

    target: str
    event: str
    pressed: bool


async def click_landed(elements: Elements, navigation: NavigationWatch) -> Miss | None:
    """After a click the checks chose a point for: where it went instead of the element, when
    the page moved under the point before the press or between the press and the release
    (those events were cancelled in the page, by ``actionable.js``'s watch), or None when
    every event landed (or the page went away with it, as a link's click does).

    Chrome may hold the question until the next document commits after a click that began
    a navigation (``navigation``, set before the click); a question that got no answer then
    says nothing of where the click went (:meth:`NavigationWatch.arrived` waits for that).
    """
    page = elements.page
    session: Session | None = None
    params: dict[str, Any] = {
        "expression": f"({page_script('hit_verdict')})()",
        "returnByValue": True,
    }
    try:
        session, context = await page._target()
        if context is not None:
            params["contextId"] = context
        # Sent on the session, not through page.evaluate: a timeout there stops a spinning
        # script, and a page that is only navigating away must not be sent that.
        result = await session.send("Runtime.evaluate", params, timeout=page.default_timeout)
    except CommandTimeoutError:
        if navigation.began is not None:
            return None  # a cancelled click navigates nothing: it landed
        if session is not None:
            await stop_spinning(session)  # a script keeps the page busy after the click
        return None
    except EgoError:
        return None  # the click navigated or closed the page: it landed
    answer = result.get("result", {}).get("value")  # none when the script threw
    if not isinstance(answer, dict) or answer.get("verdict") not in ("missed", "slipped"):
        return None
    return Miss(
        str(answer.get("target") or "another element"),
        str(answer.get("event") or "click"),
        answer["verdict"] == "slipped",
    )
