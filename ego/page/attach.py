"""Sessions Chrome attaches by itself (``Target.setAutoAttach``): what to ask for, and how a
session that waits for its debugger is prepared and then let run.

A session that asks for auto-attach with ``waitForDebuggerOnStart`` makes Chrome hold every
dedicated worker its documents start until a debugger lets it run, even when the filter
names only other types: measured on Chromium 156, a worker under an iframe-only filter was
never attached and never ran (an ``exclude`` entry for workers holds it the same way). A
worker is let run once each session that attached it has resumed it; a session that
detaches without resuming leaves it held, and a ``Target.detachFromTarget`` of one session of
a worker (sent on its parent) ended the other clients' sessions of that worker too. So every
such auto-attach names ``worker`` too, and whoever asked resumes each worker it gets and keeps
the session until Chrome ends it with the worker. Service and shared workers are not held by a
filter that leaves them out.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, Final

from ..errors import EgoError

if TYPE_CHECKING:
    from ..protocol.session import Session

__all__ = ["CHILDREN", "GUARDED", "NESTED_WORKERS", "auto_attach", "prepare_paused"]

logger = logging.getLogger("ego.page.attach")


def auto_attach(*kinds: str) -> dict[str, Any]:
    """``Target.setAutoAttach`` parameters for targets of ``kinds`` (``"iframe"``,
    ``"worker"``, ``"page"``): flattened sessions on the same connection, each paused until
    it is let run."""
    return {
        "autoAttach": True,
        "waitForDebuggerOnStart": True,
        "flatten": True,
        "filter": [{"type": kind} for kind in kinds],
    }


#: A tab's sessions (its own and each cross-site frame's): cross-site iframes, the dedicated
#: workers of their documents and the service workers Chrome relates to them.
CHILDREN: Final = auto_attach("iframe", "worker", "service_worker")

#: The origin guard's sessions: cross-site iframes, and dedicated workers only to let them run.
GUARDED: Final = auto_attach("iframe", "worker")

#: A dedicated worker's session: the workers it starts.
NESTED_WORKERS: Final = auto_attach("worker")


async def prepare_paused(session: Session, setup: Awaitable[Any] | None = None) -> None:
    """Await ``setup`` (the commands the session needs before its target runs), then let the
    target run, whatever ``setup`` did: a target left paused would hang its page.

    Never raises an ego error: a session that went away meanwhile (the frame was removed or
    came back into its parent's process, the worker ended) has nothing left to prepare.
    """
    try:
        if setup is not None:
            await setup
    except EgoError as exc:
        logger.debug("preparing session %s: %s", session.id, exc)
    finally:
        try:
            await session.send("Runtime.runIfWaitingForDebugger")
        except EgoError:
            pass  # gone already: nothing waits
