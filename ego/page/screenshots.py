"""Screenshots of a page: the viewport, the whole page, a frame's box or one element, as PNG,
JPEG or WebP, at full size or scaled to a longest side."""

from __future__ import annotations

import asyncio
import base64
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from ..errors import ElementNotFoundError
from ..protocol.literals import embed_json
from .locate import locate
from .page import Page
from .scripts import page_script

__all__ = ["ImageFormat", "Shot", "capture"]

ImageFormat = Literal["png", "jpeg", "webp"]
_FORMATS: Final = ("png", "jpeg", "webp")


@dataclass(frozen=True, slots=True)
class Shot:
    """A screenshot.

    Attributes:
        data: the image's bytes.
        width, height: the captured area in CSS pixels (before scaling).
        scale: image pixels per CSS pixel (1.0 at full size; below 1 when scaled down): a
            point (x, y) of the image is (x / scale, y / scale) in the captured area.
    """

    data: bytes
    width: float
    height: float
    scale: float


async def capture(
    page: Page,
    *,
    full_page: bool = False,
    selector: str | None = None,
    format: ImageFormat = "png",
    quality: int | None = None,
    path: str | os.PathLike[str] | None = None,
    max_size: int | None = None,
) -> Shot:
    """Take a screenshot with ``Page.captureScreenshot`` on the tab's session.

    The viewport by default (a frame's own box, for a frame); ``full_page`` captures the
    whole document (its content size, beyond the viewport); ``selector`` clips to the first
    matching element's box, wherever it is on the page or in a frame. The image is in CSS
    pixels at a scale factor of 1, unless ``max_size`` scales it down.

    Args:
        page: the tab or frame.
        full_page: the whole scrollable page instead of the viewport (a tab only).
        selector: a CSS selector: capture just that element.
        format: ``"png"``, ``"jpeg"`` or ``"webp"``.
        quality: 0-100, for JPEG and WebP only.
        path: also write the image to this file.
        max_size: the longest side of the image in pixels; a larger capture is scaled down.

    Raises:
        ValueError: an unknown format, a quality out of range or given for PNG, both
            ``full_page`` and ``selector``, ``full_page`` on a frame, or ``max_size`` < 1.
        ElementNotFoundError: ``selector`` matches nothing, or an element with no box.
        OSError: ``path`` cannot be written.
    """
    if format not in _FORMATS:
        raise ValueError(f"screenshot format {format!r}: use png, jpeg or webp")
    if quality is not None and (format == "png" or not 0 <= quality <= 100):
        raise ValueError(f"screenshot quality={quality!r}: give 0-100, and only for jpeg or webp")
    if full_page and selector is not None:
        raise ValueError("screenshot: pass full_page or selector, not both")
    if max_size is not None and max_size < 1:
        raise ValueError(f"screenshot max_size={max_size!r}: give a number of pixels >= 1")
    params: dict[str, Any] = {"format": format}
    if quality is not None:
        params["quality"] = quality
    framed = not page.is_main
    if full_page and framed:
        raise ValueError("screenshot: full_page is for a tab; a frame's screenshot is its box")
    clip: dict[str, float] | None = None
    if selector is not None:
        clip = await _element_clip(page, selector)
    elif full_page:
        metrics = await page.top_send("Page.getLayoutMetrics")
        size = metrics.get("cssContentSize") or metrics["contentSize"]
        clip = {"x": 0, "y": 0, "width": size["width"], "height": size["height"]}
    elif framed or max_size is not None:
        clip = await _viewport_clip(page)
    scale = 1.0
    if clip is not None:
        if max_size is not None:
            scale = min(1.0, max_size / max(clip["width"], clip["height"], 1))
        params["clip"] = {**clip, "scale": scale}
        params["captureBeyondViewport"] = True
    result = await page.top_send("Page.captureScreenshot", params)
    data = base64.b64decode(result["data"])
    if path is not None:
        await asyncio.to_thread(Path(path).write_bytes, data)
    width = clip["width"] if clip else 0.0
    height = clip["height"] if clip else 0.0
    return Shot(data, width, height, scale)


async def _element_clip(page: Page, selector: str) -> dict[str, float]:
    """The element's box in the tab's document coordinates."""
    target, inner = await locate(page, selector, 0)
    box = await target.evaluate(
        f"({page_script('element_box')})({embed_json(inner)}, false)", describe=False
    )
    if box is None:
        raise ElementNotFoundError(
            f"no element matches {selector!r} on {page.url or 'the page'}: check the "
            "selector; tab.snapshot() shows what the page holds",
            selector=selector,
        )
    if not box["width"] or not box["height"]:
        raise ElementNotFoundError(
            f"{selector!r} matches a <{box['tag']}> with no box (hidden or empty): "
            "nothing to capture",
            selector=selector,
        )
    left, top = await target.viewport_offset()
    scroll_x, scroll_y = await _tab_scroll(page, target, box)
    # With captureBeyondViewport the clip is in document coordinates.
    return {
        "x": left + box["x"] + scroll_x,
        "y": top + box["y"] + scroll_y,
        "width": box["width"],
        "height": box["height"],
    }


async def _viewport_clip(page: Page) -> dict[str, float]:
    """The page's viewport (a frame's box) in the tab's document coordinates."""
    size = await page.evaluate(
        "({width: innerWidth, height: innerHeight, scrollX, scrollY})", describe=False
    )
    left, top = await page.viewport_offset()
    metrics = await page.top_send("Page.getLayoutMetrics")
    viewport = metrics.get("cssVisualViewport") or metrics.get("visualViewport", {})
    return {
        "x": left + float(viewport.get("pageX", 0)),
        "y": top + float(viewport.get("pageY", 0)),
        "width": float(size["width"]),
        "height": float(size["height"]),
    }


async def _tab_scroll(page: Page, target: Page, box: dict[str, Any]) -> tuple[float, float]:
    """How far the tab's own document is scrolled: the box says it for an element of the
    tab's document; a frame's element needs the tab's layout metrics."""
    if target.is_main:
        return float(box["scrollX"]), float(box["scrollY"])
    metrics = await page.top_send("Page.getLayoutMetrics")
    viewport = metrics.get("cssVisualViewport") or metrics.get("visualViewport", {})
    return float(viewport.get("pageX", 0)), float(viewport.get("pageY", 0))


async def print_pdf(
    page: Page,
    *,
    path: str | os.PathLike[str] | None,
    landscape: bool,
    print_background: bool,
    scale: float,
    timeout: float,
) -> bytes:
    """``Page.printToPDF`` of a tab's page; the file's bytes (see :meth:`ego.Tab.pdf`).

    Raises:
        ValueError: ``scale`` out of range.
        ProtocolError: Chrome cannot print this page.
        OSError: ``path`` cannot be written.
    """
    if not 0.1 <= scale <= 2:
        raise ValueError(f"pdf scale={scale!r}: give 0.1 to 2")
    result = await page.top_send(
        "Page.printToPDF",
        {"landscape": landscape, "printBackground": print_background, "scale": scale},
        timeout=timeout,
    )
    data = base64.b64decode(result["data"])
    if path is not None:
        await asyncio.to_thread(Path(path).write_bytes, data)
    return data
