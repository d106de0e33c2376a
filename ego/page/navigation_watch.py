"""Whether an action began a navigation of the document it acted in, and waiting for the page
that navigation brings.

A click on a link asks its frame to navigate (Chrome sends ``Page.frameRequestedNavigation``
before it answers anything sent after the click on that session). Chrome then holds the
commands sent to a page navigating away until the next document commits (measured on
Chromium 156 after a click on a link whose server had not answered yet:
``Runtime.evaluate``, ``DOM.getDocument`` and ``Page.getFrameTree`` all waited), though not
always the first one sent right after the click. So a verb that began a navigation waits for
its end (the next document, a move within the document, or the load stopping without one)
within a bound, and says so when none came, rather than return on the old page one time and
wait for the new one another.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final, TypeVar

from ..errors import CommandTimeoutError, EgoError

if TYPE_CHECKING:
    from ..protocol.session import Listener, Session
    from .page import Page

__all__ = ["NavigationWatch"]

T = TypeVar("T")

_REQUESTED: Final = "Page.frameRequestedNavigation"
#: What ends a navigation a frame asked for: a new document, a move within the document
#: (a fragment), or the load stopping without either (a 204, a download, a refusal).
_ENDS: Final = ("Page.frameNavigated", "Page.navigatedWithinDocument", "Page.frameStoppedLoading")


class NavigationWatch:
    """Watches ``page``'s frame and the frames holding it, from now until :meth:`close`, for
    a navigation they ask for (use it as a context manager).

    Args:
        page: the frame (or tab) an action is about to act in.
        timeout: seconds from now that :meth:`arrived` waits for the navigation's end.
    """

    def __init__(self, page: Page, timeout: float) -> None:
        self._deadline = time.monotonic() + timeout
        self._timeout = timeout
        self._began: str | None = None
        self._begun: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._ends: list[asyncio.Future[dict[str, Any]]] = []
        self._session: Session | None = None
        frames: dict[Session, set[str]] = {}
        frame: Page | None = page
        while frame is not None:
            session = frame.session
            if session is not None:
                frames.setdefault(session, set()).add(frame.id)
            frame = frame.parent
        self._listeners: list[Listener] = [
            session.listen((_REQUESTED,), self._requested(session, ids))
            for session, ids in frames.items()
        ]

    def __enter__(self) -> NavigationWatch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def began(self) -> str | None:
        """The URL of the navigation a watched frame asked for since the watch was set (the
        first), or None."""
        return self._began

    def close(self) -> None:
        """Stop watching."""
        for listener in self._listeners:
            listener.close()
        for end in self._ends:
            if end.done() and not end.cancelled():
                end.exception()  # the session ended: the navigation's end is of no concern
            end.cancel()
        self._begun.cancel()

    def _requested(self, session: Session, ids: set[str]) -> Callable[[str, dict[str, Any]], None]:
        def heard(method: str, params: dict[str, Any]) -> None:
            frame_id = params.get("frameId")
            if self._began is not None or frame_id not in ids:
                return
            # A link that opens a tab or a download navigates no watched frame.
            if params.get("disposition") not in (None, "currentTab"):
                return
            self._began = str(params.get("url") or "")
            self._session = session
            # Set in the read path: no event of the navigation can come before these.
            self._ends = [session.expect(end, _of_frame(frame_id)) for end in _ENDS]
            if not self._begun.done():
                self._begun.set_result(None)

        return heard

    async def or_answer(self, asked: Awaitable[T]) -> T | None:
        """What ``asked`` answers once it comes, unless a navigation began before it (or had
        begun): then None at once, and ``asked`` is cancelled (a command is abandoned: its
        answer is dropped when it comes).

        Raises:
            whatever ``asked`` raises, when it comes first.
        """
        answer = asyncio.ensure_future(asked)
        if not answer.done() and self._began is None:
            either: list[asyncio.Future[Any]] = [answer, self._begun]
            try:
                await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
            except asyncio.CancelledError:
                answer.cancel()
                raise
        if answer.done():
            return answer.result()
        answer.cancel()
        return None

    async def arrived(self, verb: str) -> None:
        """Wait, until the watch's deadline, for the end of the navigation a watched frame
        began (nothing to wait for when none began). A watched session that ended (the tab
        closed, a dialog holds it) ends the wait: the document the navigation left is gone.

        Raises:
            CommandTimeoutError: the navigation did not end in time (its server has not
                answered).
        """
        if self._began is None or self._session is None:
            return
        left = self._deadline - time.monotonic()
        if not any(end.done() for end in self._ends) and left > 0:
            waited: list[asyncio.Future[Any]] = list(self._ends)
            await asyncio.wait(waited, timeout=left, return_when=asyncio.FIRST_COMPLETED)
        if any(end.done() for end in self._ends):
            # One question the page answers: right after the commit Chrome may not have moved
            # the page's session to the new document yet, and a command then finds "no active
            # page" (Page.getNavigationHistory, seen on Chromium 156).
            with contextlib.suppress(EgoError):
                await self._session.send(
                    "Runtime.evaluate",
                    {"expression": "0", "returnByValue": True},
                    timeout=max(0.1, self._deadline - time.monotonic()),
                )
            return
        raise CommandTimeoutError(
            f"the {verb} landed and began a navigation to {self._began or 'a new page'}, but "
            f"no page came within {self._timeout:g} s (its server has not answered): wait for "
            "it with tab.wait_for(url=...), or give the tab a larger default_timeout"
        )


def _of_frame(frame_id: str) -> Callable[[dict[str, Any]], bool]:
    def of(params: dict[str, Any]) -> bool:
        frame = params.get("frame")
        return (frame.get("id") if isinstance(frame, dict) else params.get("frameId")) == frame_id

    return of
