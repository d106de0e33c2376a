"""Waiting for a frame's next document: the one wait behind navigate, reload, back and forward.

A load is told by three events of the frame's session: ``Page.frameNavigated`` (a new
document committed; its ``loaderId`` names it), ``Page.navigatedWithinDocument`` (a
``#fragment`` or ``pushState``: no new document; it ends a move back or forward to such an
entry, never a reload, which a ``pushState`` of the page may race) and
``Page.lifecycleEvent`` (``DOMContentLoaded``, ``load``, ``networkIdle`` of a loader). Only the
lifecycle events of the document the load committed count, never a late one of the page it
replaced; lifecycle events may arrive before the commit is known, so every one seen is kept.
A page restored from the back/forward cache has no lifecycle of its own: it counts as there
once committed.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any, Final, Literal

from ..errors import CommandTimeoutError

if TYPE_CHECKING:
    from ..protocol.session import Session

__all__ = ["LIFECYCLE", "LoadWait", "WaitUntil", "check_wait_until"]

#: How far a load must get: the response started and the document committed (``commit``),
#: its DOM is parsed, it and its subresources loaded, or the network has been quiet 0.5 s.
WaitUntil = Literal["commit", "domcontentloaded", "load", "networkidle"]

#: Chrome's lifecycle event name for each ``wait_until`` past ``commit``.
LIFECYCLE: Final[dict[str, str]] = {
    "domcontentloaded": "DOMContentLoaded",
    "load": "load",
    "networkidle": "networkIdle",
}


def check_wait_until(wait_until: str) -> None:
    """Raise ValueError for a ``wait_until`` that is none of :data:`WaitUntil`."""
    if wait_until not in ("commit", *LIFECYCLE):
        raise ValueError(
            f"wait_until={wait_until!r}: use commit, domcontentloaded, load or networkidle"
        )


class LoadWait:
    """One wait for ``frame_id``'s next document to reach ``wait_until``.

    Made before the command that starts the load (so no event slips by), then awaited with
    :meth:`committed` and :meth:`reached`; :meth:`close` (or ``with``) gives up what is left.
    The waits fail as the session does: :class:`~ego.errors.TabClosedError` when it detaches,
    :class:`~ego.errors.TargetCrashedError` when its renderer crashes, the dialog error while a
    dialog suspends it.

    Args:
        session: the session the frame lives in.
        frame_id: the frame whose document is awaited (a tab's main frame: its target id).
        wait_until: as :data:`WaitUntil`.
        timeout: seconds for the whole load, counted from now.
        what: names the load in a timeout's message (``"navigation to https://…"``).
        within_document: a move within the frame's document (``#fragment``, ``pushState``)
            counts as the load (going back or forward to such an entry); otherwise only a new
            document does, so that a ``pushState`` racing a reload is not taken for it.

    Raises:
        ValueError: an unknown ``wait_until``.
    """

    def __init__(
        self,
        session: Session,
        frame_id: str,
        wait_until: str,
        timeout: float,
        what: str,
        *,
        within_document: bool = False,
    ) -> None:
        check_wait_until(wait_until)
        self.wait_until = wait_until
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout
        self.what = what
        self._frame_id = frame_id
        self._lifecycle = LIFECYCLE.get(wait_until)
        self._seen: set[tuple[str, str]] = set()
        self._loader: str | None = None
        self._new_document = session.expect("Page.frameNavigated", self._is_commit)
        self._same_document = (
            session.expect(
                "Page.navigatedWithinDocument", lambda params: params.get("frameId") == frame_id
            )
            if within_document
            else None
        )
        self._loaded = (
            session.expect("Page.lifecycleEvent", self._is_reached)
            if self._lifecycle is not None
            else None
        )

    def __enter__(self) -> LoadWait:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def left(self) -> float:
        """Seconds left before the deadline (at least a millisecond, for a command's bound)."""
        return max(0.001, self.deadline - time.monotonic())

    def _is_commit(self, params: dict[str, Any]) -> bool:
        return str(params.get("frame", {}).get("id", "")) == self._frame_id

    def _is_reached(self, params: dict[str, Any]) -> bool:
        if params.get("frameId") != self._frame_id:
            return False
        key = (str(params.get("loaderId", "")), str(params.get("name", "")))
        self._seen.add(key)
        return self._loader is not None and key == (self._loader, self._lifecycle)

    def commit(self, loader_id: str) -> None:
        """The command's own answer named the new document (``Page.navigate`` does)."""
        self._loader = loader_id

    async def committed(self) -> tuple[str, str | None]:
        """Wait until the frame committed a new document (or moved within its own, when
        ``within_document``).

        Returns:
            the frame's URL there, and the new document's loader id (None for a move within
            the document, or a page restored from the back/forward cache, which load nothing).

        Raises:
            CommandTimeoutError: nothing committed before the deadline.
        """
        waits = {self._new_document}
        if self._same_document is not None:
            waits.add(self._same_document)
        done, _ = await asyncio.wait(
            waits,
            timeout=self.left(),
            return_when=asyncio.FIRST_COMPLETED,
        )
        if not done:
            raise CommandTimeoutError(f"{self.what}: no page committed within {self.timeout:g} s")
        if self._new_document not in done:
            assert self._same_document is not None
            params = self._same_document.result()
            return str(params.get("url", "")), None
        params = self._new_document.result()
        frame = params.get("frame", {})
        url = str(frame.get("url", "")) + str(frame.get("urlFragment", ""))
        if params.get("type") == "BackForwardCacheRestore":
            return url, None
        self._loader = str(frame.get("loaderId", ""))
        return url, self._loader

    async def reached(self) -> None:
        """Wait until the committed document reaches ``wait_until`` (at once for ``commit``).

        Call after :meth:`commit` or :meth:`committed` named the document.

        Raises:
            CommandTimeoutError: it did not get there before the deadline.
        """
        loaded = self._loaded
        if loaded is None or self._loader is None:
            return
        if (self._loader, self._lifecycle) in self._seen:
            return
        try:
            await asyncio.wait_for(asyncio.shield(loaded), self.left())
        except TimeoutError:
            raise CommandTimeoutError(
                f"{self.what} did not reach {self.wait_until!r} within {self.timeout:g} s; "
                "pass a larger timeout or an earlier wait_until"
            ) from None

    def close(self) -> None:
        """Stop waiting (idempotent): the session keeps no waiter of this load."""
        for future in (self._new_document, self._same_document, self._loaded):
            if future is not None and not future.done():
                future.cancel()
