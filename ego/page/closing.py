"""Closing a tab for sure: Chrome may acknowledge a close and then drop it.

On Chromium 156, 15 of 40 closes of a page that redirects as it loads were acknowledged and
dropped (the close met the navigation's commit), leaving the tab open. So a close is asked
again until the tab is gone: its session detaches, or, for a tab this connection never
attached to, Chrome no longer knows the target.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any, Final

from ..errors import ProtocolError

if TYPE_CHECKING:
    from ..protocol.session import Session
    from ..protocol.transport import Connection

__all__ = ["CLOSE_ATTEMPTS", "close_target"]

logger = logging.getLogger("ego.page.tab")

#: How many times :func:`close_target` asks Chrome to close a tab that stays open.
CLOSE_ATTEMPTS: Final = 8
#: Seconds a close waits for the tab to go before asking again.
_CLOSE_WAIT: Final = 0.25
#: Seconds between checks on a tab this connection is not attached to.
_CLOSE_POLL: Final = 0.05


async def close_target(connection: Connection, target_id: str, session: Session | None) -> None:
    """Close the page ``target_id`` and return once it is gone (or after
    :data:`CLOSE_ATTEMPTS` closes, with a warning).

    Args:
        connection: the browser's connection.
        target_id: the tab's target.
        session: the tab's session on this connection, if it attached one.

    Raises:
        BrowserClosedError: the connection closed before the tab did.
    """
    # Registered before the first close: the detach may arrive with its answer.
    detached = (
        connection.root.expect(
            "Target.detachedFromTarget",
            lambda params: params.get("sessionId") == session.id,
        )
        if session is not None and not session.detached
        else None
    )
    try:
        for _ in range(CLOSE_ATTEMPTS):
            try:
                await connection.send("Target.closeTarget", {"targetId": target_id})
            except ProtocolError:
                return  # already gone
            if await _gone(connection, target_id, detached):
                return
        logger.warning(
            "tab %s is still open after %d closes: Chrome dropped them",
            target_id,
            CLOSE_ATTEMPTS,
        )
    finally:
        if detached is not None:
            detached.cancel()


async def _gone(
    connection: Connection, target_id: str, detached: asyncio.Future[Any] | None
) -> bool:
    """Whether the tab is gone within :data:`_CLOSE_WAIT` seconds of a close."""
    if detached is not None:
        done, _ = await asyncio.wait({detached}, timeout=_CLOSE_WAIT)
        if done:
            detached.result()  # the connection's end is an error, not a closed tab
        return bool(done)
    # A connection not attached to the tab hears no detach: ask for the target instead.
    deadline = time.monotonic() + _CLOSE_WAIT
    while True:
        try:
            await connection.send("Target.getTargetInfo", {"targetId": target_id})
        except ProtocolError:
            return True
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(_CLOSE_POLL)
