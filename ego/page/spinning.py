"""Stopping a script that keeps a page's thread busy (``while (true) {}``), so that a page can
waste a call but never hold its tab: what an evaluate does when it gets no answer in time,
and what a verb does when the page stopped answering after its input.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from ..errors import CommandTimeoutError, EgoError

if TYPE_CHECKING:
    from ..protocol.session import Session

__all__ = ["PROBE_SECONDS", "stop_spinning"]

#: Seconds a page may take to answer the probe before its thread counts as stuck.
PROBE_SECONDS: Final = 0.3


async def stop_spinning(session: Session) -> bool:
    """Stop a script that keeps the page's thread busy; True when one was stopped.

    Sends a trivial evaluate: a page whose thread is free answers it at once, and then
    nothing is stopped (``Runtime.terminateExecution`` on an idle page would stop the next
    script that runs, a page's own timer included). Only when the probe gets no answer within
    :data:`PROBE_SECONDS` is the running script terminated. Never raises: a page that is gone,
    crashed or blocked by a dialog has nothing to stop.
    """
    try:
        await session.send(
            "Runtime.evaluate", {"expression": "0", "returnByValue": True}, timeout=PROBE_SECONDS
        )
        return False
    except CommandTimeoutError:
        pass
    except EgoError:
        return False
    try:
        await session.send("Runtime.terminateExecution", timeout=5.0)
    except EgoError:
        return False
    return True
