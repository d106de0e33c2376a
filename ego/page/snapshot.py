"""A page's outline for an agent: Chrome's accessibility tree of every frame, with refs.

Each document (the tab's and every iframe's, cross-site ones through their own sessions) is
read at once: ``Accessibility.getFullAXTree`` for its frame, and one
``DOMSnapshot.captureSnapshot`` per session for what the tree does not say (which elements
take clicks, which are blocks: :mod:`.layout_facts`). :mod:`.axtree` turns each tree into
lines; a frame's lines are nested under its iframe's line. Elements an agent can act on carry
a ref from the tab's registry (``[ref=e12]``, :mod:`.refs`), which every verb takes as
``"ref=e12"``. The line budget spans the whole page: ``offset`` and ``max_lines`` page
through it, ``find`` keeps the lines holding a text and their ancestors, ``selector`` (CSS, a
frame-qualified one, or a ref) outlines one subtree.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from ..errors import CommandTimeoutError, EgoError, ElementNotFoundError
from ..protocol.gc_pause import gc_paused
from .ax_read import read_tree
from .axtree import REF
from .layout_facts import CAPTURE, LayoutFacts, layout_facts
from .layout_query import DocumentQuery, SessionQuery
from .locate import element_object, locate, resolve_ref
from .page import Page
from .refs import RefRegistry, parse_ref

__all__ = ["Outline", "outline"]


@dataclass(frozen=True, slots=True)
class Outline:
    """What :func:`outline` read of a page.

    Attributes:
        title: the page's title.
        url: the page's URL.
        lines: the lines shown (from ``offset``, at most ``max_lines``), indented by nesting.
        offset: the index of the first line shown.
        total: how many lines the outline has (with ``find``: the matches with their
            ancestors); when not ``whole``, how many were read.
        whole: whether every line of the page was read (False: a large page read only as
            far as the lines asked for; ``total`` is then at least one more than shown).
        matches: with ``find``, how many lines hold the text.
        unread: frames that could not be read, each with the reason.
        inert: how many parts of the page are out of reach: each document a modal dialog
            holds (Chrome keeps only the dialog in its tree) and each element with the
            ``inert`` attribute.
    """

    title: str
    url: str
    lines: list[str]
    offset: int
    total: int
    matches: int | None = None
    unread: list[str] = field(default_factory=list)
    inert: int = 0
    whole: bool = True

    @property
    def next_offset(self) -> int | None:
        """Where the next page of lines starts, or None when these are the last."""
        end = self.offset + len(self.lines)
        return end if end < self.total else None


#: Each session's layout facts, by frame id, read once per snapshot.
_Captures = asyncio.Future[dict[str, LayoutFacts]]


@dataclass(slots=True)
class _Reading:
    """What one snapshot's reads share: the lines wanted (None: all), each session's layout
    facts (from its DOM snapshot, or the questions a read in part asks), what was found
    inert, and whether every line was read."""

    need: int | None = None
    captures: dict[str, _Captures] = field(default_factory=dict)
    queries: dict[str, SessionQuery] = field(default_factory=dict)
    inert: int = 0
    whole: bool = True


@dataclass(frozen=True, slots=True)
class _Document:
    """The frame and document a tree was read from, fixed before reading it: a ref names a
    node of that document even if the frame navigates meanwhile (it is then stale)."""

    id: str
    documents: int


#: A laid-out line: its depth, its text as shown, and whole (what ``find`` searches).
_Flat = tuple[int, str, str]
#: Lines that hold one record: ``find`` shows the whole of the one a match is in.
_RECORDS: Final = frozenset({"row", "listitem"})


@dataclass(slots=True)
class _Line:
    depth: int
    text: str
    full: str
    document: _Document
    ref: int | None = None
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
        selector: outline only the element it matches: CSS (frame-qualified selectors
            work) or a ref (``"ref=e12"``).
        max_lines: the most lines to return.
        offset: skip this many lines first (paging).
        find: keep only the lines that hold this text (case-insensitive) and their ancestors.
        timeout: seconds for the whole read.

    Raises:
        ValueError: ``max_lines`` below 1 or ``offset`` below 0.
        ElementNotFoundError: ``selector`` matches nothing.
        StaleRefError: ``selector`` is a ref whose node is gone.
        ContextDestroyedError, CommandTimeoutError, TabClosedError, DialogOpenError: as
            :meth:`ego.Tab.evaluate`.
    """
    if max_lines < 1 or offset < 0:
        raise ValueError(f"snapshot: max_lines={max_lines} must be >= 1, offset={offset} >= 0")
    reading = _Reading(need=None if find else offset + max_lines + 1)
    try:
        title, url, lines = await asyncio.wait_for(
            _read_from(page, selector, reading), timeout=timeout
        )
    except TimeoutError:
        raise CommandTimeoutError(
            f"the snapshot of {page.url or 'the page'} took more than {timeout:g} s (a page or "
            "frame that does not answer); pass a larger timeout, or a selector for less"
        ) from None
    finally:
        for capture in reading.captures.values():
            capture.cancel()
        await asyncio.gather(*reading.captures.values(), return_exceptions=True)
    flat: list[_Flat] = []
    unread: list[str] = []
    matches: int | None = None
    with gc_paused():
        _flatten(lines, 0, flat, unread, page.refs)
        if find:
            flat, matches = _found(flat, find)
        shown = [
            f"{'  ' * depth}{full if find else text}"
            for depth, text, full in flat[offset : offset + max_lines]
        ]
    return Outline(
        title=title,
        url=url,
        lines=shown,
        offset=offset,
        total=len(flat),
        matches=matches,
        unread=unread,
        inert=reading.inert,
        whole=reading.whole,
    )


async def _read_from(
    page: Page, selector: str | None, reading: _Reading
) -> tuple[str, str, list[_Line]]:
    if selector is None:
        return await _read(page, None, reading)
    target, backend = await _subtree_root(page, selector)
    return await _read(target, backend, reading)


async def _subtree_root(page: Page, selector: str) -> tuple[Page, int]:
    """The frame holding the element ``selector`` names and the element's backend node id.

    Raises:
        ElementNotFoundError: nothing matches.
        StaleRefError: a ref whose node is gone.
    """
    ref = parse_ref(selector)
    if ref is not None:
        frame, object_id = await resolve_ref(page, ref)
        await _release(frame, object_id)
        known = page.refs.get(ref)
        assert known is not None  # resolve_ref found it
        return frame, known.backend_node_id
    frame, css = await locate(page, selector, 0)
    found = await element_object(frame, css)
    if found is None:
        raise ElementNotFoundError(
            f"no element matches {selector!r} on {frame.url or 'the page'}: check the "
            "selector; a snapshot without one shows the page's elements with their refs",
            selector=selector,
        )
    try:
        node = (await frame.send("DOM.describeNode", {"objectId": found}))["node"]
    finally:
        await _release(frame, found)
    return frame, int(node["backendNodeId"])


async def _release(page: Page, object_id: str) -> None:
    try:
        await page.send("Runtime.releaseObject", {"objectId": object_id})
    except EgoError:
        pass  # the document went, and the object with it


def _flatten(
    lines: list[_Line],
    base: int,
    out: list[_Flat],
    unread: list[str],
    refs: RefRegistry,
) -> None:
    """Lay the lines out in order, each frame's under its iframe's line, and give each
    element its ref (in this order: a page's first snapshot numbers them as they read)."""
    for line in lines:
        note = f" ({line.note})" if line.note else ""
        text, full = line.text, line.full
        if line.ref is not None:
            mark = f"[ref={refs.ref_for(line.document, line.ref)}]"
            text, full = text.replace(REF, mark), full.replace(REF, mark)
        out.append((base + line.depth, text + note, full + note))
        if line.note:
            unread.append(f"{text}: {line.note}")
        if line.frame is not None:
            _flatten(line.frame, base + line.depth + 1, out, unread, refs)


def _found(flat: list[_Flat], find: str) -> tuple[list[_Flat], int]:
    """The lines holding ``find`` with their ancestors (by indentation), and how many held it.
    A match inside a table row or a list item brings the row: its line, the lines right
    under it (the row's cells) and each line in it with a ref (what acts on that row)."""
    wanted = find.casefold()
    keep: set[int] = set()
    hits = 0
    for index, (_, _, full) in enumerate(flat):
        if wanted not in full.casefold():
            continue
        hits += 1
        above = _ancestors(flat, index)
        keep.add(index)
        keep.update(above)
        row = next((i for i in (index, *above) if _role(flat[i][1]) in _RECORDS), None)
        if row is not None:
            keep.update(_record(flat, row))
    return [flat[index] for index in sorted(keep)], hits


def _ancestors(flat: list[_Flat], index: int) -> list[int]:
    """The indices of the lines ``flat[index]`` sits under, nearest first."""
    found: list[int] = []
    level = flat[index][0]
    for above in range(index - 1, -1, -1):
        if level == 0:
            break
        if flat[above][0] < level:
            found.append(above)
            level = flat[above][0]
    return found


def _record(flat: list[_Flat], row: int) -> set[int]:
    """The lines of the row at ``row`` that ``find`` shows: the row's own, those right under
    it, and each with a ref with the lines it sits under inside the row."""
    depth = flat[row][0]
    shown = {row}
    path: list[int] = []  # the lines the current one sits under, inside the row
    for index in range(row + 1, len(flat)):
        level = flat[index][0]
        if level <= depth:
            break
        while path and flat[path[-1]][0] >= level:
            path.pop()
        if level == depth + 1 or "[ref=" in flat[index][1]:
            shown.add(index)
            shown.update(path)
        path.append(index)
    return shown


def _role(text: str) -> str:
    """The role a line names (its first word)."""
    head = text.split(" ", 1)[0]
    return head.removesuffix(":")


async def _read(page: Page, root: int | None, reading: _Reading) -> tuple[str, str, list[_Line]]:
    """The title, URL and lines of ``page``'s document (from the element ``root`` when
    given), each iframe's line holding its frame's lines. The whole page's frames are read
    at the same time as the page; for a subtree, only the frames it shows, after it."""
    document = _Document(page.id, page.documents)
    children = list(await page.child_frames())
    reads: dict[int, asyncio.Future[tuple[str, str, list[_Line]]]] = {}
    if root is None:
        reads = {i: asyncio.ensure_future(_read(c, None, reading)) for i, c in enumerate(children)}
    try:
        (tree, facts), owners = await asyncio.gather(
            read_tree(page, root, _DocumentFacts(page, reading), need=reading.need),
            asyncio.gather(*(_owner(page, child) for child in children), return_exceptions=True),
        )  # fmt: skip
        reading.inert += facts.inert + tree.modal
        reading.whole = reading.whole and tree.whole
        shown = {owner: i for i, owner in enumerate(owners) if isinstance(owner, int)}
        for owner in owners:
            if isinstance(owner, BaseException) and not isinstance(owner, EgoError):
                raise owner
        lines = tree.lines
        own = [_Line(line.depth, line.text, line.full, document, line.ref) for line in lines]
        for line, source in zip(own, lines, strict=True):
            index = shown.get(source.frame) if source.frame is not None else None
            if index is None:
                continue
            if index not in reads:
                reads[index] = asyncio.ensure_future(_read(children[index], None, reading))
            try:
                _, _, frame_lines = await reads[index]
            except EgoError as exc:
                line.note = f"frame not read: {exc}"
                continue
            line.frame = frame_lines
        return tree.title, tree.url, own
    finally:
        for read in reads.values():
            read.cancel()
        await asyncio.gather(*reads.values(), return_exceptions=True)


class _DocumentFacts:
    """Where a document's layout facts come from: its session's DOM snapshot (read once a
    snapshot, for every document of the session), or the questions a read in part asks
    (:mod:`.layout_query`, the session's asked once a snapshot)."""

    def __init__(self, page: Page, reading: _Reading) -> None:
        self.page = page
        self.reading = reading
        self.query: DocumentQuery | None = None

    async def whole(self) -> LayoutFacts:
        return await _facts(self.page, self.reading.captures)

    async def of(self, backend_ids: Iterable[int]) -> LayoutFacts:
        if self.query is None:
            session, _ = await self.page._target()
            key = str(session.id)
            asked = self.reading.queries.get(key)
            if asked is None:
                asked = self.reading.queries[key] = SessionQuery(self.page)
            self.query = DocumentQuery(self.page, asked)
        return await self.query.facts(backend_ids)


async def _facts(page: Page, captures: dict[str, _Captures]) -> LayoutFacts:
    """The layout facts of ``page``'s document, from one DOM snapshot per session (a
    session's snapshot holds every document of its process)."""
    session, _ = await page._target()
    capture = captures.get(str(session.id))
    if capture is None:
        capture = asyncio.ensure_future(_capture(page))
        captures[str(session.id)] = capture
    return (await asyncio.shield(capture)).get(page._frame_id, LayoutFacts())


async def _capture(page: Page) -> dict[str, LayoutFacts]:
    return layout_facts(await page.send("DOMSnapshot.captureSnapshot", CAPTURE))


async def _owner(page: Page, child: Page) -> int:
    """The backend node id of the iframe element that shows ``child``, in ``page``."""
    owner = await page.send("DOM.getFrameOwner", {"frameId": child._frame_id})
    return int(owner["backendNodeId"])
