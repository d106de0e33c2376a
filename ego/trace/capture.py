"""What a step shows of its page: a screenshot of the tab's viewport and the lines of the
accessibility snapshot around the action's target.

The screenshot is ``Page.captureScreenshot`` as JPEG, at the trace's quality, clipped to the
visible viewport at the trace's scale (the base64 Chrome sends goes into the record as it
is). The snapshot is ego's own (:func:`ego.page.snapshot.outline`), read once the action
ended: the ``snapshot_lines`` lines centred on the line of the element the action named (by
its ref), or the page's first lines when the action named none or it is gone. Each is
bounded in time; one that cannot be taken (a dialog holds the page, the tab closed) says why
in the record instead.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Final

from ..errors import EgoError
from ..page.snapshot import outline
from .options import TraceOptions

if TYPE_CHECKING:
    from ..page.page import Page
    from ..page.tab import Tab

__all__ = ["CAPTURE_SECONDS", "screenshot", "snapshot_around"]

#: Seconds a screenshot or a snapshot of a step may take.
CAPTURE_SECONDS: Final = 5.0
#: The most lines of a page's outline read to find the target's line in.
_READ_LINES: Final = 5_000


async def screenshot(tab: Tab, options: TraceOptions) -> dict[str, Any] | None:
    """The tab's viewport as the step's image: ``{"jpeg": base64, "width", "height",
    "scale"}`` (the image's pixels; ``scale`` against the page's CSS pixels), or
    ``{"error": why}``; None when the trace takes no screenshots."""
    scale = options.screenshot_scale
    if not scale:
        return None
    try:
        metrics = await tab.top_send("Page.getLayoutMetrics", timeout=CAPTURE_SECONDS)
        viewport = metrics.get("cssVisualViewport") or metrics["visualViewport"]
        width, height = float(viewport["clientWidth"]), float(viewport["clientHeight"])
        shot = await tab.top_send(
            "Page.captureScreenshot",
            {
                "format": "jpeg",
                "quality": options.screenshot_quality,
                "clip": {
                    "x": float(viewport.get("pageX", 0)),
                    "y": float(viewport.get("pageY", 0)),
                    "width": width,
                    "height": height,
                    "scale": scale,
                },
                "optimizeForSpeed": True,
            },
            timeout=CAPTURE_SECONDS,
        )
    except (EgoError, KeyError, ValueError) as exc:
        return {"error": f"not taken: {exc}"}
    return {
        "jpeg": shot["data"],
        "width": round(width * scale),
        "height": round(height * scale),
        "scale": scale,
    }


async def snapshot_around(page: Page, ref: str | None, lines: int) -> dict[str, Any] | None:
    """The ``lines`` snapshot lines around the element ``ref`` names (else the page's first),
    with where they start and which is the target's: ``{"title", "url", "lines", "first",
    "total", "target"}``, or ``{"error": why}``; None when ``lines`` is 0."""
    if not lines:
        return None
    try:
        read = await asyncio.wait_for(
            outline(page, max_lines=_READ_LINES, timeout=CAPTURE_SECONDS), CAPTURE_SECONDS + 1
        )
    except (EgoError, TimeoutError) as exc:
        return {"error": f"not read: {exc or 'it took too long'}"}
    every = read.lines
    mark = f"[ref={ref}]" if ref else None
    index = next((i for i, line in enumerate(every) if mark in line), None) if mark else None
    first = 0
    if index is not None:
        first = max(0, min(index - lines // 2, len(every) - lines))
    return {
        "title": read.title,
        "url": read.url,
        "lines": every[first : first + lines],
        "first": first,
        "total": read.total,
        "target": None if index is None else index - first,
    }
