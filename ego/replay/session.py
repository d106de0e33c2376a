"""Recording a session of work: everything a tab loads while a person or a script works in
it, until a stop (Ctrl+C, a URL reached, a time elapsed), into one HAR.

``ego record URL`` records a page load; a session records what happens after it too: the
searches, the clicks, the forms, each call the page's scripts make to the site's API. That
is what ``ego suggest`` drafts tools from. The recording is the :class:`~.recorder.Recorder`'s,
secrets stripped the same way.
"""

from __future__ import annotations

import asyncio
import fnmatch
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from .har import Har
from .har_bounds import HarBounds
from .recorder import Omitted, Recorder

if TYPE_CHECKING:
    from ..page.tab import Tab

__all__ = ["POLL_SECONDS", "SessionEnd", "record_session", "url_reached"]

#: How often the tab's URL is read while waiting for ``until_url`` (a navigation the page
#: makes by itself, such as a history push, sends no event the recorder waits on).
POLL_SECONDS: Final = 0.2


def url_reached(url: str, pattern: str) -> bool:
    """Whether ``url`` is what ``pattern`` waits for: a glob (``*/checkout*``) or, without
    ``*``/``?``, a part of it."""
    if any(c in pattern for c in "*?["):
        return fnmatch.fnmatchcase(url, pattern)
    return pattern in url


@dataclass(frozen=True)
class SessionEnd:
    """How a recorded session ended.

    Attributes:
        har: the recording.
        reason: ``"url"`` (``until_url`` reached), ``"duration"``, ``"stopped"`` (the stop
            event: Ctrl+C) or ``"tab closed"``.
        url: the tab's URL at the end.
        seconds: how long it ran.
        omitted: what the recording left out to stay within its bounds.
    """

    har: Har
    reason: str
    url: str
    seconds: float
    omitted: Omitted = field(default_factory=Omitted)


async def record_session(
    tab: Tab,
    har_path: str | os.PathLike[str] | None = None,
    *,
    start_url: str | None = None,
    until_url: str | None = None,
    duration: float | None = None,
    stop: asyncio.Event | None = None,
    strip_secrets: bool = True,
    settle: float = 1.0,
    on_start: Callable[[], None] | None = None,
    bounds: HarBounds | None = None,
) -> SessionEnd:
    """Record ``tab`` while someone works in it, until ``until_url``, ``duration`` or ``stop``.

    Args:
        tab: the tab to record.
        har_path: where to write the HAR (written however the session ends).
        start_url: load this first (recorded too).
        until_url: end once the tab's URL matches (see :func:`url_reached`).
        duration: end after this many seconds.
        stop: end when set (the command line sets it on Ctrl+C).
        strip_secrets: remove cookies and credentials, redact secret values.
        settle: seconds of network silence waited for before the recording stops.
        on_start: called once the recording runs and ``start_url`` has loaded (the command
            line says then that the tab is ready to work in).
        bounds: the most the recording keeps (see :class:`~ego.replay.recorder.Recorder`);
            what goes over them is left out and said in the HAR and in ``omitted``.

    Returns:
        The recording and how it ended.

    Raises:
        ValueError: nothing would end it (no ``until_url``, ``duration`` or ``stop``).
        NavigationError, CommandTimeoutError: ``start_url`` did not load.
        OSError: ``har_path`` cannot be written.
    """
    if until_url is None and duration is None and stop is None:
        raise ValueError("a session needs an end: until_url, duration or a stop event")
    started = time.monotonic()
    recorder = Recorder(tab, har_path, strip_secrets=strip_secrets, bounds=bounds)
    reason = "stopped"
    async with recorder:
        if start_url is not None:
            await tab.navigate(start_url)
        if on_start is not None:
            on_start()
        stopper = stop or asyncio.Event()
        while True:
            if stopper.is_set():
                break
            if tab.closed:
                reason = "tab closed"
                break
            if until_url is not None and url_reached(tab.url, until_url):
                reason = "url"
                break
            left = None if duration is None else duration - (time.monotonic() - started)
            if left is not None and left <= 0:
                reason = "duration"
                break
            wait = POLL_SECONDS if left is None else min(POLL_SECONDS, left)
            try:
                await asyncio.wait_for(stopper.wait(), wait)
            except TimeoutError:
                pass
        if not tab.closed:
            await recorder.wait_idle(quiet=settle, timeout=max(settle * 5, 5.0))
    return SessionEnd(recorder.har, reason, tab.url, time.monotonic() - started, recorder.omitted)
