"""A page's outline as text for an agent: every frame of it, each read in one round trip.

Each document (the tab's and every iframe's, cross-site ones included) is walked by
``scripts/snapshot.js`` in its own context, all of them at once; an iframe's outline is then
nested under the iframe's line, its selectors prefixed with the iframe's and ``>>`` (see
:mod:`.locate`), so every selector printed works when passed back to the tab's verbs. The line
budget spans the whole page: ``offset`` and ``max_lines`` page through it, ``find`` keeps the
lines holding a text and their ancestors, ``selector`` outlines one subtree.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from ..errors import CommandTimeoutError, EgoError, ElementNotFoundError
from ..protocol.remote_values import javascript_error
from .locate import FRAME_STEP, frame_parts, locate
from .page import Page
from .scripts import page_script

__all__ = ["FIND_LIMIT", "Outline", "outline"]

#: The most lines read per document when searching with ``find`` (the whole page, bounded).
FIND_LIMIT: Final = 5000

_GROUPS: Final = itertools.count(1)


@dataclass(frozen=True, slots=True)
class Outline:
    """What :func:`outline` read of a page.

    Attributes:
        title: the page's title.
        url: the page's URL.
        lines: the lines shown (from ``offset``, at most ``max_lines``), indented by nesting,
            each ending with its selector in braces.
        offset: the index of the first line shown.
        total: how many lines the outline has (with ``find``: how many lines are shown
            before paging, the matches with their ancestors).
        complete: False when the walk stopped at its budget: more lines exist past
            ``total``.
        matches: with ``find``, how many lines hold the text.
        unread: frames that could not be read, each with the reason.
    """

    title: str
    url: str
    lines: list[str]
    offset: int
    total: int
    complete: bool
    matches: int | None = None
    unread: list[str] = field(default_factory=list)

    @property
    def next_offset(self) -> int | None:
        """Where the next page of lines starts, or None when these are the last."""
        end = self.offset + len(self.lines)
        return end if end < self.total or not self.complete else None


@dataclass(slots=True)
class _Line:
    depth: int
    text: str
    selector: str
    frame: list[_Line] | None = None
    note: str = ""


async def outline(
    page: Page,
    *,
    selector: str | None = None,
    max_lines: int = 400,
    offset: int = 0,
    find: str | None = None,
    timeout: float,
) -> Outline:
    """Read the outline of ``page`` (every frame under it included).

    Args:
        page: a tab or a frame.
        selector: outline only the element it matches (frame-qualified selectors work).
        max_lines: the most lines to return.
        offset: skip this many lines first (paging).
        find: keep only the lines that hold this text (case-insensitive) and their ancestors.
        timeout: seconds for the whole read.

    Raises:
        ValueError: ``max_lines`` below 1 or ``offset`` below 0.
        ElementNotFoundError: ``selector`` matches nothing.
        JavaScriptError, ContextDestroyedError, CommandTimeoutError, TabClosedError: as
            :meth:`ego.Tab.evaluate`.
    """
    if max_lines < 1 or offset < 0:
        raise ValueError(f"snapshot: max_lines={max_lines} must be >= 1, offset={offset} >= 0")
    prefix = ""
    root: str | None = None
    if selector is not None:
        parts = frame_parts(selector)
        page, root = await locate(page, selector, 0)
        prefix = "".join(f"{part} {FRAME_STEP} " for part in parts[:-1])
    limit = FIND_LIMIT if find else offset + max_lines + 1
    try:
        title, url, lines, complete = await asyncio.wait_for(
            _read(page, root, limit), timeout=timeout
        )
    except TimeoutError:
        raise CommandTimeoutError(
            f"the snapshot of {page.url or 'the page'} took more than {timeout:g} s (a page or "
            "frame that does not answer); pass a larger timeout, or a selector for less"
        ) from None
    if root is not None and lines is None:
        raise ElementNotFoundError(
            f"no element matches {selector!r} on {page.url or 'the page'}: check the selector; "
            "a snapshot without one lists reusable ones",
            selector=selector or "",
        )
    flat: list[tuple[int, str]] = []
    unread: list[str] = []
    _flatten(lines or [], 0, prefix, flat, unread)
    matches: int | None = None
    if find:
        flat, matches = _found(flat, find)
    shown = [f"{'  ' * depth}{text}" for depth, text in flat[offset : offset + max_lines]]
    total = len(flat)
    return Outline(
        title=title,
        url=url,
        lines=shown,
        offset=offset,
        total=total,
        complete=complete or bool(find),
        matches=matches,
        unread=unread,
    )


def _flatten(
    lines: list[_Line], base: int, prefix: str, out: list[tuple[int, str]], unread: list[str]
) -> None:
    for line in lines:
        note = f" ({line.note})" if line.note else ""
        out.append((base + line.depth, f"{line.text}  {{{prefix}{line.selector}}}{note}"))
        if line.note:
            unread.append(f"{prefix}{line.selector}: {line.note}")
        if line.frame is not None:
            _flatten(
                line.frame,
                base + line.depth + 1,
                f"{prefix}{line.selector} {FRAME_STEP} ",
                out,
                unread,
            )


def _found(flat: list[tuple[int, str]], find: str) -> tuple[list[tuple[int, str]], int]:
    """The lines holding ``find`` with their ancestors (by indentation), and how many held it."""
    wanted = find.casefold()
    keep: set[int] = set()
    hits = 0
    for index, (depth, text) in enumerate(flat):
        if wanted not in text.casefold():
            continue
        hits += 1
        keep.add(index)
        level = depth
        for above in range(index - 1, -1, -1):
            if level == 0:
                break
            if flat[above][0] < level:
                keep.add(above)
                level = flat[above][0]
    return [flat[index] for index in sorted(keep)], hits


async def _read(
    page: Page, root: str | None, limit: int
) -> tuple[str, str, list[_Line] | None, bool]:
    """Walk ``page`` and, at the same time, every frame under it; nest each frame's lines
    under its iframe's line. Answers the title, URL, lines (None when ``root`` matched
    nothing) and whether every walk finished within ``limit``."""
    children = await page.child_frames()
    walks = [asyncio.ensure_future(_read(child, None, limit)) for child in children]
    try:
        title, url, own, complete = await _walk(page, root, limit, children)
    except BaseException:
        for walk in walks:
            walk.cancel()
        raise
    if own is None:
        for walk in walks:
            walk.cancel()
        return title, url, None, complete
    results = await asyncio.gather(*walks, return_exceptions=True)
    for line in own:
        if line.frame is None:
            continue
        index = int(line.frame[0].depth)  # the owner's index, parked there by _walk
        result = results[index]
        if isinstance(result, BaseException):
            if not isinstance(result, EgoError):
                raise result
            line.frame = None
            line.note = f"frame not read: {result}"
            continue
        _, _, lines, finished = result
        line.frame = lines or []
        complete = complete and finished
    return title, url, own, complete


async def _walk(
    page: Page, root: str | None, limit: int, children: Sequence[Page]
) -> tuple[str, str, list[_Line] | None, bool]:
    """One document's lines: ``snapshot.js`` called with the iframe elements of
    ``children`` as arguments, so that it can say which line shows which frame."""
    session_id, context_id = await page._target()
    group = f"ego-snapshot-{next(_GROUPS)}"
    connection = page.connection
    timeout = page.default_timeout
    try:
        owners = await asyncio.gather(
            *(_owner(page, child, group) for child in children), return_exceptions=True
        )
        arguments: list[dict[str, Any]] = [{"value": {"limit": limit, "root": root}}]
        for owner in owners:
            if isinstance(owner, str):
                arguments.append({"objectId": owner})
            elif isinstance(owner, BaseException) and not isinstance(owner, EgoError):
                raise owner
            else:
                arguments.append({"value": None})
        params: dict[str, Any] = {
            "functionDeclaration": page_script("snapshot"),
            "arguments": arguments,
            "returnByValue": True,
            "objectGroup": group,
        }
        if context_id is not None:
            params["executionContextId"] = context_id
        else:
            # The session's main frame: run on its document object.
            found = await connection.send(
                "Runtime.evaluate",
                {"expression": "document", "objectGroup": group},
                session_id=session_id,
                timeout=timeout,
            )
            params["objectId"] = found["result"]["objectId"]
        answer = await connection.send(
            "Runtime.callFunctionOn", params, session_id=session_id, timeout=timeout
        )
    finally:
        try:
            await connection.send(
                "Runtime.releaseObjectGroup",
                {"objectGroup": group},
                session_id=session_id,
                timeout=timeout,
            )
        except EgoError:
            pass  # the document went, and its objects with it
    if "exceptionDetails" in answer:
        raise javascript_error(answer["exceptionDetails"], context="taking the snapshot")
    value: dict[str, Any] = answer["result"]["value"]
    if value.get("missing"):
        return value["title"], value["url"], None, True
    lines: list[_Line] = []
    for depth, text, selector, owner in value["lines"]:
        line = _Line(int(depth), str(text), str(selector))
        if owner >= 0:
            # Which frame this line shows, until _read puts the frame's lines in its place.
            line.frame = [_Line(int(owner), "", "")]
        lines.append(line)
    return value["title"], value["url"], lines, not value.get("cut")


async def _owner(page: Page, child: Page, group: str) -> str | None:
    """The remote object id of the iframe element that shows ``child``, in ``page``."""
    owner = await page.send("DOM.getFrameOwner", {"frameId": child._frame_id})
    resolved = await page.send(
        "DOM.resolveNode", {"backendNodeId": owner["backendNodeId"], "objectGroup": group}
    )
    object_id = resolved.get("object", {}).get("objectId")
    return str(object_id) if object_id else None
