"""Whether a tab's documents stayed as they were over a stretch of time: each frame's
document counts its mutations (open shadow roots included) and its elements' input,
change, focus and toggle events from :func:`watch` on, and :meth:`DocumentWatch.unchanged`
says whether any came, and whether a frame navigated.

What it does not see: a script setting a property that no attribute reflects (a field's
``value``, a box's ``checked``) with no event, and what happens inside a closed shadow root.
The watchers are held by their remote objects: nothing is left on the page, and a watch
nobody asks about (its caller cancelled) ends by itself after a minute.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from ..errors import EgoError
from .page import Page
from .scripts import page_script

__all__ = ["DocumentWatch", "watch"]

_GROUP: Final = "ego-unchanged"


@dataclass(frozen=True, slots=True)
class _Watched:
    page: Page
    documents: int
    watcher: str | None  # the remote object; None: the frame could not be watched


@dataclass(frozen=True, slots=True)
class DocumentWatch:
    """The frames of a tab watched since :func:`watch`."""

    frames: Sequence[_Watched]

    async def unchanged(self, timeout: float) -> bool:
        """Whether no frame's document changed or navigated since the watch began (False when
        one could not be asked); the watch ends.

        Args:
            timeout: seconds for the answers.
        """
        answers = await asyncio.gather(
            *(_stop(frame, timeout) for frame in self.frames), return_exceptions=True
        )
        return all(answer == 0 for answer in answers)


async def watch(frames: Sequence[Page], timeout: float) -> DocumentWatch:
    """Start counting what changes the documents of ``frames`` (a tab's, from
    ``tab.frames()``).

    Args:
        frames: the pages to watch.
        timeout: seconds for the watchers to start.
    """
    started = await asyncio.gather(*(_start(frame, timeout) for frame in frames))
    return DocumentWatch(started)


async def _start(page: Page, timeout: float) -> _Watched:
    documents = page.documents
    try:
        _, context_id = await page._target()
        params: dict[str, Any] = {
            "expression": f"({page_script('watch_changes')})()",
            "objectGroup": _GROUP,
        }
        if context_id is not None:
            params["contextId"] = context_id
        result = await asyncio.wait_for(page.send("Runtime.evaluate", params), timeout)
    except (EgoError, TimeoutError):
        return _Watched(page, documents, None)
    object_id = result.get("result", {}).get("objectId")
    return _Watched(page, documents, str(object_id) if object_id else None)


async def _stop(frame: _Watched, timeout: float) -> int:
    """The count of changes the frame's watcher saw (-1: it could not be asked, or the frame
    shows another document now)."""
    if frame.watcher is None or frame.page.documents != frame.documents:
        return -1
    try:
        answer = await asyncio.wait_for(
            frame.page.send(
                "Runtime.callFunctionOn",
                {
                    "functionDeclaration": "function () { return this.stop(); }",
                    "objectId": frame.watcher,
                    "returnByValue": True,
                },
            ),
            timeout,
        )
    except (EgoError, TimeoutError):
        return -1
    finally:
        try:
            await frame.page.send("Runtime.releaseObject", {"objectId": frame.watcher})
        except EgoError:
            pass  # the document went, and the watcher with it
    value = answer.get("result", {}).get("value")
    return value if isinstance(value, int) else -1
