"""What a trace keeps, and its bounds: :class:`TraceOptions`."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Final

__all__ = [
    "MAX_BODY",
    "MAX_BYTES",
    "MIN_BYTES",
    "SCREENSHOT_QUALITY",
    "SCREENSHOT_SCALE",
    "SNAPSHOT_LINES",
    "TraceOptions",
]

#: The most a trace file may take, in bytes, unless the operator says otherwise.
MAX_BYTES: Final = 50 * 1024 * 1024
#: The least bound a trace file may be given, in bytes.
MIN_BYTES: Final = 64 * 1024
#: The most of one request or response body a trace keeps, in bytes (the rest is cut).
MAX_BODY: Final = 64 * 1024
#: The scale of a screenshot against the page's CSS pixels (0: no screenshots).
SCREENSHOT_SCALE: Final = 0.5
#: The JPEG quality of a screenshot, 1-100.
SCREENSHOT_QUALITY: Final = 60
#: The lines of the accessibility snapshot kept around an action's target.
SNAPSHOT_LINES: Final = 40


@dataclass(frozen=True)
class TraceOptions:
    """What a trace keeps of each step, and the most its file may take.

    Attributes:
        max_bytes: the most the trace file takes. Screenshots, snapshots and bodies stop
            being kept once the file is within a tenth of it (at most 1 MiB) of the bound;
            every other record stops at the bound itself; what was left out is counted in
            the trace's last line.
        max_body: the most of each request and response body kept, in bytes (0: none).
        screenshot_scale: each screenshot's size against the page's CSS pixels, above 0
            and at most 1; 0 takes no screenshots.
        screenshot_quality: the screenshots' JPEG quality, 1-100.
        snapshot_lines: the lines of the accessibility snapshot kept around each action's
            target (0: no snapshots).
        page_events: also make a step of each page a person or the page itself loaded (a
            session recorded for a person), with its screenshot.
    """

    max_bytes: int = MAX_BYTES
    max_body: int = MAX_BODY
    screenshot_scale: float = SCREENSHOT_SCALE
    screenshot_quality: int = SCREENSHOT_QUALITY
    snapshot_lines: int = SNAPSHOT_LINES
    page_events: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.max_bytes, int) or self.max_bytes < MIN_BYTES:
            raise ValueError(f"max_bytes={self.max_bytes!r}: a trace needs at least 64 KiB")
        if not isinstance(self.max_body, int) or self.max_body < 0:
            raise ValueError(f"max_body={self.max_body!r}: give 0 or more bytes")
        if not 0 <= self.screenshot_scale <= 1:
            raise ValueError(
                f"screenshot_scale={self.screenshot_scale!r}: give a scale above 0 and at "
                "most 1, or 0 for no screenshots"
            )
        if not isinstance(self.screenshot_quality, int) or not 1 <= self.screenshot_quality <= 100:
            raise ValueError(f"screenshot_quality={self.screenshot_quality!r}: give 1-100")
        if not isinstance(self.snapshot_lines, int) or self.snapshot_lines < 0:
            raise ValueError(f"snapshot_lines={self.snapshot_lines!r}: give 0 or more lines")

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (the trace's first line holds it)."""
        return asdict(self)
