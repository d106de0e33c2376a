"""A tab's screenshots: the viewport, the whole page or one element, as PNG, JPEG or WebP."""

from __future__ import annotations

import asyncio
import base64
import os
from pathlib import Path
from typing import Any, Final, Literal

from ..errors import ElementNotFoundError
from ..protocol.literals import embed_json
from .page import Page
from .scripts import page_script

__all__ = ["ImageFormat", "capture"]

ImageFormat = Literal["png", "jpeg", "webp"]
_FORMATS: Final = ("png", "jpeg", "webp")


async def capture(
    page: Page,
    *,
    full_page: bool = False,
    selector: str | None = None,
    format: ImageFormat = "png",
    quality: int | None = None,
    path: str | os.PathLike[str] | None = None,
) -> bytes:
    """Take a screenshot with ``Page.captureScreenshot`` and return the image's bytes.

    The viewport by default; ``full_page`` captures the whole document (its content size,
    beyond the viewport); ``selector`` clips to the first matching element's box, wherever
    it is on the page. The image is in device pixels (CSS pixels at a scale factor of 1).

    Args:
        page: the tab.
        full_page: the whole scrollable page instead of the viewport.
        selector: a CSS selector: capture just that element.
        format: ``"png"``, ``"jpeg"`` or ``"webp"``.
        quality: 0-100, for JPEG and WebP only.
        path: also write the image to this file.

    Raises:
        ValueError: an unknown format, a quality out of range or given for PNG, or both
            ``full_page`` and ``selector``.
        ElementNotFoundError: ``selector`` matches nothing, or an element with no box.
        OSError: ``path`` cannot be written.
    """
    if format not in _FORMATS:
        raise ValueError(f"screenshot format {format!r}: use png, jpeg or webp")
    if quality is not None and (format == "png" or not 0 <= quality <= 100):
        raise ValueError(f"screenshot quality={quality!r}: give 0-100, and only for jpeg or webp")
    if full_page and selector is not None:
        raise ValueError("screenshot: pass full_page or selector, not both")
    params: dict[str, Any] = {"format": format}
    if quality is not None:
        params["quality"] = quality
    if selector is not None:
        box = await page.evaluate(
            f"({page_script('element_box')})({embed_json(selector)}, false)", describe=False
        )
        if box is None:
            raise ElementNotFoundError(
                f"no element matches {selector!r} on {page.url or 'the page'}: check the "
                "selector; tab.snapshot() lists reusable ones",
                selector=selector,
            )
        if not box["width"] or not box["height"]:
            raise ElementNotFoundError(
                f"{selector!r} matches a <{box['tag']}> with no box (hidden or empty): "
                "nothing to capture",
                selector=selector,
            )
        # With captureBeyondViewport the clip is in document coordinates.
        params["clip"] = {
            "x": box["x"] + box["scrollX"],
            "y": box["y"] + box["scrollY"],
            "width": box["width"],
            "height": box["height"],
            "scale": 1,
        }
        params["captureBeyondViewport"] = True
    elif full_page:
        metrics = await page.send("Page.getLayoutMetrics")
        size = metrics.get("cssContentSize") or metrics["contentSize"]
        params["clip"] = {
            "x": 0,
            "y": 0,
            "width": size["width"],
            "height": size["height"],
            "scale": 1,
        }
        params["captureBeyondViewport"] = True
    result = await page.send("Page.captureScreenshot", params)
    data = base64.b64decode(result["data"])
    if path is not None:
        await asyncio.to_thread(Path(path).write_bytes, data)
    return data
