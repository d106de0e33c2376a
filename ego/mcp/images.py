"""Screenshots sized for a context window: scaled to a longest side and a byte budget unless
the caller asks for every pixel, with the scale reported so that coordinates stay usable."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ..page import screenshots
from ..page.screenshots import ImageFormat
from ..page.tab import Tab

__all__ = ["MAX_BYTES", "MAX_EDGE", "Image", "bounded_screenshot"]

#: The longest side, in pixels, of a screenshot that does not ask for full size.
MAX_EDGE: Final = 1568
#: The most bytes of such a screenshot (about 1.07 M characters of base64).
MAX_BYTES: Final = 800_000

# Tries after the first: each scales the image down (and a PNG becomes a JPEG) to fit.
_TRIES: Final = 4


@dataclass(frozen=True, slots=True)
class Image:
    """A screenshot as the MCP tool returns it."""

    data: bytes
    format: ImageFormat
    width: float
    height: float
    scale: float


async def bounded_screenshot(
    tab: Tab,
    *,
    full_page: bool,
    selector: str | None,
    format: ImageFormat,
    quality: int | None,
    full_size: bool,
) -> Image:
    """Capture as asked; unless ``full_size``, scale the image to :data:`MAX_EDGE` and, when it
    is still over :data:`MAX_BYTES`, to less (a PNG turning into a JPEG first).

    Raises:
        as :meth:`ego.Tab.screenshot`.
    """
    edge = None if full_size else MAX_EDGE
    shot = await screenshots.capture(
        tab, full_page=full_page, selector=selector, format=format, quality=quality,
        max_size=edge,
    )  # fmt: skip
    for _ in range(_TRIES):
        if full_size or len(shot.data) <= MAX_BYTES:
            break
        if format == "png":
            format, quality = "jpeg", 80
        else:
            longest = max(shot.width, shot.height) * shot.scale
            edge = max(64, int(longest * (MAX_BYTES / len(shot.data)) ** 0.5 * 0.9))
        shot = await screenshots.capture(
            tab, full_page=full_page, selector=selector, format=format, quality=quality,
            max_size=edge,
        )  # fmt: skip
    return Image(shot.data, format, shot.width, shot.height, shot.scale)
