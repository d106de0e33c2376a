"""Whether an action began a navigation of the document it acted in, so that a check made in
that document afterwards need not wait for the next one.

Chrome holds the commands sent to a page whose frame is navigating away, from the request
until the new document commits (measured on Chromium 156 after a click on a link whose
server had not answered yet: ``Runtime.evaluate``, ``DOM.getDocument`` and
``Page.getFrameTree`` all waited). A check in the page after a click (did its events land?)
would then wait for the next page's server, up to the tab's timeout. The watch is set before
the input is sent and sees the frame, or a frame whose document holds it, ask to navigate
(``Page.frameRequestedNavigation``, which Chrome sends for a navigation the page began: a
link, a form, a script).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from ..protocol.session import Session
    from .page import Page

__all__ = ["NavigationWatch"]

T = TypeVar("T")

_REQUESTED = "Page.frameRequestedNavigation"


class NavigationWatch:
    """Watches ``page``'s frame and the frames holding it for a navigation they begin, from
    now until :meth:`close` (use it as a context manager).

    Args:
        page: the frame (or tab) an action is about to act in.
    """

    def __init__(self, page: Page) -> None:
        frames: dict[Session, set[str]] = {}
        frame: Page | None = page
        while frame is not None:
            session = frame.session
            if session is not None:
                frames.setdefault(session, set()).add(frame.id)
            frame = frame.parent
        self._requested = [
            session.expect(_REQUESTED, _of_frames(ids)) for session, ids in frames.items()
        ]

    def __enter__(self) -> NavigationWatch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def began(self) -> str | None:
        """The URL of a navigation a watched frame began since the watch was set, if any."""
        for requested in self._requested:
            if requested.done() and not requested.cancelled() and not requested.exception():
                return str(requested.result().get("url") or "")
        return None

    def close(self) -> None:
        """Stop watching."""
        for requested in self._requested:
            if requested.done() and not requested.cancelled():
                requested.exception()  # the session ended: nothing to report here
            requested.cancel()

    async def or_answer(self, asked: Awaitable[T]) -> T | None:
        """What ``asked`` answers once it comes, unless a navigation began before it (or had
        begun): then None at once, and ``asked`` is cancelled (a command is abandoned: its
        answer is dropped when it comes). A watched session that ended counts as a
        navigation: its document is gone.

        Raises:
            whatever ``asked`` raises, when it comes first.
        """
        answer = asyncio.ensure_future(asked)
        if not answer.done() and not any(requested.done() for requested in self._requested):
            waited: list[asyncio.Future[Any]] = [answer, *self._requested]
            try:
                await asyncio.wait(waited, return_when=asyncio.FIRST_COMPLETED)
            except asyncio.CancelledError:
                answer.cancel()
                raise
        if answer.done():
            return answer.result()
        answer.cancel()
        return None


def _of_frames(ids: set[str]) -> Callable[[dict[str, Any]], bool]:
    # A link that opens a tab or a download navigates no watched frame.
    return lambda params: (
        params.get("frameId") in ids
        and params.get("disposition")
        in (
            None,
            "currentTab",
        )
    )
