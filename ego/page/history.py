"""A tab's way back and forward through its history, waiting for the page it lands on."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import NavigationError
from .loads import LoadWait, WaitUntil, check_wait_until

if TYPE_CHECKING:
    from ..protocol.session import Session

__all__ = ["HistoryWait", "go"]

#: How far the page landed on must get: as ``Tab.navigate``'s ``wait_until``.
HistoryWait = WaitUntil


async def go(
    session: Session,
    main_frame: str,
    delta: int,
    *,
    wait_until: HistoryWait = "load",
    timeout: float,
) -> str:
    """Move ``delta`` entries through the tab's history (-1: back, 1: forward).

    Waits for the page it lands on to reach ``wait_until`` (:class:`~ego.page.loads.LoadWait`):
    a page restored from the back/forward cache or a same-document entry (a ``#fragment``,
    ``pushState``) counts as there once committed, since no new load follows.

    Returns:
        the URL of the entry landed on.

    Raises:
        ValueError: an unknown ``wait_until``.
        NavigationError: there is no entry that way (the first or last page of the history).
        CommandTimeoutError: the page did not reach ``wait_until`` within ``timeout``.
    """
    check_wait_until(wait_until)
    direction = "back" if delta < 0 else "forward"
    with LoadWait(
        session, main_frame, wait_until, timeout, f"going {direction}", within_document=True
    ) as load:
        history = await session.send("Page.getNavigationHistory", timeout=load.left())
        entries: list[dict[str, Any]] = history.get("entries", [])
        current = int(history.get("currentIndex", 0))
        index = current + delta
        if not 0 <= index < len(entries):
            here = entries[current].get("url", "") if 0 <= current < len(entries) else ""
            end = "first" if delta < 0 else "last"
            raise NavigationError(
                f"cannot go {direction}: the tab is at the {end} page of its history ({here})"
            )
        entry = entries[index]
        load.what = f"going {direction} to {entry.get('url', '')}"
        await session.send(
            "Page.navigateToHistoryEntry", {"entryId": entry["id"]}, timeout=load.left()
        )
        url, _ = await load.committed()
        await load.reached()
        return url or str(entry.get("url", ""))
