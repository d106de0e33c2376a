"""Sessions Chrome attaches by itself (``Target.setAutoAttach``): what to ask for, and how a
session that waits for its debugger is prepared and then let run."""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, Final

from ..errors import EgoError

if TYPE_CHECKING:
    from ..protocol.session import Session

__all__ = ["auto_attach", "prepare_paused"]

logger = logging.getLogger("ego.page.attach")


def auto_attach(kind: str) -> dict[str, Any]:
    """``Target.setAutoAttach`` parameters for targets of ``kind`` (``"iframe"``, ``"page"``):
    flattened sessions on the same connection, each paused until it is let run."""
    return {
        "autoAttach": True,
        "waitForDebuggerOnStart": True,
        "flatten": True,
        "filter": [{"type": kind}],
    }


#: Cross-site iframes only (not workers).
IFRAMES: Final = auto_attach("iframe")


async def prepare_paused(session: Session, setup: Awaitable[Any]) -> None:
    """Await ``setup`` (the commands the session needs before its target runs), then let the
    target run, whatever ``setup`` did: a target left paused would hang its page.

    Never raises an ego error: a session that went away meanwhile (the frame was removed or
    came back into its parent's process) has nothing left to prepare.
    """
    try:
        await setup
    except EgoError as exc:
        logger.debug("preparing session %s: %s", session.id, exc)
    finally:
        try:
            await session.send("Runtime.runIfWaitingForDebugger")
        except EgoError:
            pass  # gone already: nothing waits
