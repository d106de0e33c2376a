"""A tab's way back and forward through its history, waiting for the page it lands on."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any, Final, Literal

from ..errors import CommandTimeoutError, NavigationError

if TYPE_CHECKING:
    from ..protocol.transport import Connection

__all__ = ["HistoryWait", "go"]

#: How far the page landed on must get: as ``Tab.navigate``'s ``wait_until``.
HistoryWait = Literal["commit", "domcontentloaded", "load", "networkidle"]

_LIFECYCLE: Final[dict[str, str]] = {
    "domcontentloaded": "DOMContentLoaded",
    "load": "load",
    "networkidle": "networkIdle",
}


async def go(
    connection: Connection,
    session_id: str,
    delta: int,
    *,
    wait_until: HistoryWait = "load",
    timeout: float,
) -> str:
    """Move ``delta`` entries through the tab's history (-1: back, 1: forward).

    Waits for the page it lands on to reach ``wait_until``: a page restored from the
    back/forward cache or a same-document entry (a ``#fragment``, ``pushState``) counts as
    there once committed, since no new load follows.

    Returns:
        the URL of the entry landed on.

    Raises:
        ValueError: an unknown ``wait_until``.
        NavigationError: there is no entry that way (the first or last page of the history).
        CommandTimeoutError: the page did not reach ``wait_until`` within ``timeout``.
    """
    if wait_until not in ("commit", *_LIFECYCLE):
        raise ValueError(
            f"wait_until={wait_until!r}: use commit, domcontentloaded, load or networkidle"
        )
    direction = "back" if delta < 0 else "forward"
    deadline = time.monotonic() + timeout

    def left() -> float:
        return max(0.001, deadline - time.monotonic())

    history = await connection.send(
        "Page.getNavigationHistory", session_id=session_id, timeout=left()
    )
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
    tree = await connection.send("Page.getFrameTree", session_id=session_id, timeout=left())
    main_frame = tree["frameTree"]["frame"]["id"]
    lifecycle = _LIFECYCLE.get(wait_until)
    loader: list[str] = []
    seen: set[tuple[str, str]] = set()

    def reached(params: dict[str, Any]) -> bool:
        if params.get("frameId") != main_frame:
            return False
        seen.add((params.get("loaderId", ""), params.get("name", "")))
        return bool(loader) and (params.get("loaderId"), params.get("name")) == (
            loader[0],
            lifecycle,
        )

    committed = connection.expect(
        "Page.frameNavigated",
        session_id=session_id,
        predicate=lambda params: not params.get("frame", {}).get("parentId"),
    )
    same_document = connection.expect(
        "Page.navigatedWithinDocument",
        session_id=session_id,
        predicate=lambda params: params.get("frameId") == main_frame,
    )
    loaded = (
        connection.expect("Page.lifecycleEvent", session_id=session_id, predicate=reached)
        if lifecycle is not None
        else None
    )
    what = f"going {direction} to {entry.get('url', '')}"
    waiters = [future for future in (committed, same_document, loaded) if future is not None]
    try:
        await connection.send(
            "Page.navigateToHistoryEntry",
            {"entryId": entry["id"]},
            session_id=session_id,
            timeout=left(),
        )
        done, _ = await asyncio.wait(
            {committed, same_document}, timeout=left(), return_when=asyncio.FIRST_COMPLETED
        )
        if not done:
            raise CommandTimeoutError(f"{what}: no page committed within {timeout:g} s")
        if committed not in done:
            return str(same_document.result().get("url", entry.get("url", "")))
        params = committed.result()
        frame = params.get("frame", {})
        url = str(frame.get("url", entry.get("url", "")))
        if loaded is None or params.get("type") == "BackForwardCacheRestore":
            return url
        loader.append(str(frame.get("loaderId", "")))
        if (loader[0], lifecycle) in seen:
            return url
        try:
            await asyncio.wait_for(asyncio.shield(loaded), left())
        except TimeoutError:
            raise CommandTimeoutError(
                f"{what} did not reach {wait_until!r} within {timeout:g} s; pass a larger "
                "timeout or an earlier wait_until"
            ) from None
        return url
    finally:
        for future in waiters:
            if not future.done():
                future.cancel()
