"""Scrolling a page or an element: into view, by pixels, to an edge, or on until something
shows (a row of a virtualized list, which exists only once it is scrolled near).

The page's own scroll position moves (``scrollBy``, ``scrollTo``, ``scrollIntoView``, all
instant), as a scrollbar or the keyboard moves it: the page gets its ``scroll`` events and
draws what comes into view; ``tab.mouse.wheel`` is the way to send wheel input instead. One
script does it in the page (``scripts/scroll.js``), waiting for the element to show and for
the page to handle each move (its ``scroll`` event with the next frame, and that frame's
animation callbacks), so each call is one round trip.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal

from ..errors import CommandTimeoutError, ElementNotActionableError, ElementNotFoundError
from ..protocol.literals import embed_json
from .actionability import tab_point
from .elements import call_on, invalid, not_found, release_elements, resolve
from .page import Page
from .scripts import page_script

__all__ = ["EDGES", "Edge", "ScrollPosition", "scroll", "scroll_into_view"]

#: Where ``to=`` may send a scroller.
Edge = Literal["top", "bottom", "left", "right"]
EDGES: Final = ("top", "bottom", "left", "right")
_EDGE_WORDS: Final = {"start": "top", "end": "bottom"}


@dataclass(frozen=True)
class ScrollPosition:
    """Where a scroller is after a scroll.

    Attributes:
        scrolled: what scrolled, in words (``the page``, ``<div id=rows>``).
        x, y: its scroll offsets, in CSS pixels.
        max_x, max_y: the largest offsets it takes (``y == max_y``: at the bottom).
        found: what ``until`` found, in words (None without ``until``).
    """

    scrolled: str
    x: int
    y: int
    max_x: int
    max_y: int
    found: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The position as JSON-ready fields (``found`` only when there is one)."""
        fields: dict[str, Any] = {
            "scrolled": self.scrolled, "x": self.x, "y": self.y,
            "max_x": self.max_x, "max_y": self.max_y,
        }  # fmt: skip
        if self.found is not None:
            fields["found"] = self.found
        return fields


async def scroll_into_view(page: Page, selector: str, *, wait: float = 5.0) -> None:
    """Scroll the element into view (to the centre, unless it is wholly in view already),
    and its frames into the tab's view; return once the page handled the scroll.

    Raises:
        InvalidSelectorError: a malformed selector.
        ElementNotFoundError: nothing matches within ``wait``.
        ElementNotActionableError: it matches, but stayed hidden (``visible``).
    """
    answer, elements_page = await _run(page, selector, {"mode": "into_view"}, wait, "scroll to")
    box = answer["box"]
    # Scrolling inside a frame does not move the frame in its parent: bring it in too.
    await tab_point(elements_page, box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)


async def scroll(
    page: Page,
    selector: str | None = None,
    *,
    dx: float = 0,
    dy: float = 0,
    to: str | None = None,
    until: str | None = None,
    wait: float | None = None,
) -> ScrollPosition:
    """Scroll the page (no selector) or the element's scroller by ``dx``, ``dy`` pixels, to
    an edge (``to``), or a view at a time (toward ``to``, the bottom by default) until
    ``until`` matches a visible element, which is then scrolled into view.

    ``wait`` bounds the wait for the element to show (5 s by default) and, with ``until``,
    the whole search (by default the page's timeout: each view costs a frame or two).

    Raises:
        ValueError: nothing to do, or several ways at once, or an unknown edge.
        InvalidSelectorError: a malformed ``selector`` or ``until``.
        ElementNotFoundError: ``selector`` matches nothing within ``wait``; with ``until``,
            the scroller reached its end and nothing matched.
        ElementNotActionableError: the element stayed hidden.
        CommandTimeoutError: ``until`` still matched nothing when ``wait`` ran out.
    """
    edge = _EDGE_WORDS.get(to, to) if to is not None else None
    if edge is not None and edge not in EDGES:
        raise ValueError(f"scroll: to={to!r}; use top, bottom, left or right (start, end)")
    ways = sum([bool(dx or dy), edge is not None and until is None, until is not None])
    if ways != 1:
        raise ValueError(
            "scroll takes one of: dx=/dy= (pixels), to= (an edge), or until= (a selector to "
            "scroll to, toward to=, the bottom by default)"
        )
    if until is not None and (dx or dy):
        raise ValueError("scroll: until= scrolls toward to=; leave dx= and dy= out")
    options: dict[str, Any] = {"dx": dx, "dy": dy, "to": edge, "until": until}
    options["mode"] = "until" if until is not None else "to" if edge is not None else "by"
    if wait is None:
        wait = page.default_timeout if until is not None else 5.0
    answer, _ = await _run(page, selector, options, wait, "scroll")
    return ScrollPosition(
        str(answer["what"]), int(answer["x"]), int(answer["y"]),
        int(answer["maxX"]), int(answer["maxY"]), answer.get("found"),
    )  # fmt: skip


async def _run(
    page: Page, selector: str | None, options: dict[str, Any], wait: float, verb: str
) -> tuple[dict[str, Any], Page]:
    """Run ``scroll.js`` on what ``selector`` names (the page's document when None); its
    answer when it did the job, and the page it ran in.

    Raises:
        as :func:`scroll`.
    """
    options = {**options, "timeout": int(wait * 1000), "page": selector is None}
    if selector is None:
        answer = await page.evaluate(
            f"({page_script('scroll')}).call(null, null, {embed_json(options)})",
            timeout=wait + page.default_timeout,
            describe=False,
        )
        return _checked(answer, page, "the page", options, wait, verb), page
    elements = await resolve(page, selector, wait, held=False)
    try:
        answer = await call_on(
            elements, "scroll", elements.selector, options,
            timeout=wait + page.default_timeout,
        )  # fmt: skip
    finally:
        release_elements(elements)
    return _checked(answer, elements.page, selector, options, wait, verb), elements.page


def _checked(
    answer: Any, page: Page, given: str, options: dict[str, Any], wait: float, verb: str
) -> dict[str, Any]:
    if not isinstance(answer, dict):
        raise ElementNotFoundError(
            f"cannot {verb} {given!r}: the page answered nothing", selector=given
        )
    if answer.get("ok"):
        return answer
    why = answer.get("why")
    where = page.url or "the page"
    if why == "invalid":
        part = str(options["until"]) if answer.get("part") == "until" else given
        raise invalid(part, part, str(answer.get("invalid", "")))
    if why == "missing":
        raise not_found(page, given, wait)
    if why == "hidden":
        raise ElementNotActionableError(
            f"cannot {verb} {answer.get('what')} ({given!r}) on {where}: it is hidden "
            f"(waited {wait:g} s); visible check: it has no box. Wait for it to show",
            selector=given,
            check="visible",
            seen="it has no box",
        )
    until = options.get("until")
    scrolled = answer.get("what", "the page")
    if why == "end":
        raise ElementNotFoundError(
            f"scrolled {scrolled} as far as it goes (x={answer.get('x')}, y={answer.get('y')}) and "
            f"no visible element matches {until!r}: check the selector, or scroll the other "
            "way (to='top')",
            selector=str(until),
        )
    raise CommandTimeoutError(
        f"scrolled {scrolled} for {wait:g} s (now at y={answer.get('y')} of "
        f"{answer.get('maxY')}) and no visible element matches {until!r} yet: pass a larger "
        "wait, or scroll by pixels first"
    )
