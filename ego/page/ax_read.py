"""One document's accessibility tree read from Chrome: whole, or as far as a line budget.

The whole tree is one ``Accessibility.getFullAXTree``, whose cost grows with the nodes it
holds (measured on Chromium 156: about 20 µs of Chrome's time and 10 of Python's a node; a
page of 6,000 elements is 9,000 nodes). A snapshot that shows its first 400 lines needs a
fraction of them, so a large document (more elements than :data:`LAZY_RATIO` times the
lines wanted) is read in reading order instead: its root (``getRootAXNode``), then the
children of the nodes whose content the lines need next (``getChildAXNodes``, several at
once each round), until the lines that what was read fixes (:func:`.axtree.partial_lines`)
hold the budget; the layout facts come from questions about the elements read alone
(:mod:`.layout_query`). Those two commands need the domain enabled on the session
(``Accessibility.enable``), and it stays so: turning it off would drop the tree Chrome
built, to be built again by the next snapshot (Chrome keeps a document's tree once any of
these commands read it anyway). While it is on, Chrome reports changes to the nodes read
(``Accessibility.nodesUpdated``, at most four times a second), which ego does not listen to.
A read in part that goes wrong (a node gone meanwhile) is done whole instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol

from ..errors import EgoError
from ..protocol.gc_pause import gc_paused
from .axtree import AxLine, ax_lines, is_modal, partial_lines, root_of
from .layout_facts import LayoutFacts
from .page import Page

__all__ = ["LAZY_RATIO", "Facts", "TreeRead", "read_tree"]

#: A document with more elements than this many times the lines wanted is read in part.
LAZY_RATIO: Final = 4
#: The fewest nodes whose children one round of a read in part asks for.
_LEAST_ROUND: Final = 16
#: The most rounds of a read in part; a tree nested deeper is read whole.
_MOST_ROUNDS: Final = 80
_COUNT: Final = "document.getElementsByTagName('*').length"

Node = Mapping[str, Any]


class Facts(Protocol):
    """Where a read gets the layout facts of its document."""

    async def whole(self) -> LayoutFacts:
        """The facts of every element of the document (``DOMSnapshot.captureSnapshot``)."""
        ...

    async def of(self, backend_ids: Iterable[int]) -> LayoutFacts:
        """The facts of the elements asked for so far, with ``backend_ids`` (asked of Chrome
        for them alone: :mod:`.layout_query`)."""
        ...


@dataclass(frozen=True, slots=True)
class TreeRead:
    """What was read of a document's tree.

    Attributes:
        title, url: the document's, as its root node says them.
        lines: its lines (from the element asked for, when one was).
        whole: whether ``lines`` are all of them (False: a read in part stopped at the
            budget).
        modal: whether a modal dialog holds the document.
    """

    title: str
    url: str
    lines: list[AxLine]
    whole: bool
    modal: bool


async def read_tree(
    page: Page,
    root: int | None,
    facts: Facts,
    *,
    need: int | None,
) -> tuple[TreeRead, LayoutFacts]:
    """The lines of ``page``'s document, or of its element ``root``.

    Args:
        page: a tab or a frame.
        root: the backend node id of the element to outline (None: the document).
        facts: where the document's layout facts come from.
        need: read at least this many lines, in order, and no more than it takes (None:
            all of them).

    Raises:
        EgoError: as :meth:`ego.Tab.send`.
    """
    if root is None and need is not None and await _large(page, need):
        try:
            read = await _in_part(page, facts, need)
        except EgoError:
            read = None  # a node went meanwhile: read it whole
        if read is not None:
            return read
    # The collector stays paused from the answer's arrival until its containers (about 30 a
    # node) are freed with the lines built: while they live, every collection would walk them
    # all and move them to an older generation, whose full collection walks the whole heap
    # (measured in `ego mcp` on a 200-row page: collections of 4 to 13 ms after each read,
    # and a full one every few reads). Nothing made here is in a cycle (gc_pause.py).
    with gc_paused():
        read = await _whole(page, root, facts)
        # The step that resumed on the answer holds it (the awaited future's result) until
        # it ends: the collector runs again once it has.
        await asyncio.sleep(0)
    return read


async def _whole(page: Page, root: int | None, facts: Facts) -> tuple[TreeRead, LayoutFacts]:
    """The lines of the whole tree read at once (the answer is freed on return)."""
    tree, found = await asyncio.gather(
        page.send("Accessibility.getFullAXTree", {"frameId": page._frame_id}), facts.whole()
    )
    nodes: list[Node] = tree.get("nodes", [])
    top = nodes[0] if nodes else {}
    title, url = _title(top), _url(top, page.url)
    start = root_of(nodes, root)
    if start is None:
        return TreeRead(title, url, [], True, is_modal(nodes)), found
    lines = ax_lines(nodes, start, found, url=url)
    return TreeRead(title, url, lines, True, is_modal(nodes)), found


async def _large(page: Page, need: int) -> bool:
    """Whether ``page``'s document has more elements than a read of ``need`` lines takes
    whole."""
    try:
        count = await page.evaluate(_COUNT, describe=False)
    except EgoError:
        return False
    return isinstance(count, int) and count > LAZY_RATIO * need


async def _in_part(page: Page, facts: Facts, need: int) -> tuple[TreeRead, LayoutFacts] | None:
    """The first lines of the document, at least ``need`` of them, read in order (None:
    nested deeper than :data:`_MOST_ROUNDS` rounds reach)."""
    # The layout questions go first; the root and what it holds are read meanwhile.
    asked = asyncio.ensure_future(facts.of(()))
    try:
        return await _rounds(page, facts, need)
    finally:
        asked.cancel()
        await asyncio.gather(asked, return_exceptions=True)


async def _rounds(page: Page, facts: Facts, need: int) -> tuple[TreeRead, LayoutFacts] | None:
    frame = page._frame_id
    await page.send("Accessibility.enable")  # once is enough: a session keeps it
    top: Node = (await page.send("Accessibility.getRootAXNode", {"frameId": frame}))["node"]
    wanted = [top["nodeId"]]
    title, url = _title(top), _url(top, page.url)
    known: dict[str, Node] = {top["nodeId"]: top}
    new: list[Node] = [top]
    modal = False
    for _ in range(_MOST_ROUNDS):
        answers = await asyncio.gather(
            *(
                page.send("Accessibility.getChildAXNodes", {"id": node, "frameId": frame})
                for node in wanted
            )
        )
        new += [node for children in answers for node in children.get("nodes", ())]
        for node in new:
            known[node["nodeId"]] = node
        modal = modal or is_modal(new)
        found = await facts.of(_elements(new))
        with gc_paused():
            part = partial_lines(known, top, found, url=url, most_unread=_round(need, 0))
        if not part.unread or len(part.lines) >= need:
            return TreeRead(title, url, part.lines, not part.unread, modal), found
        wanted = part.unread[: _round(need, len(part.lines))]
        new = []
    return None


def _round(need: int, have: int) -> int:
    """How many nodes' children the next round asks for, with ``have`` of ``need`` lines
    fixed: an element read brings a line or two, so half the lines still wanted is about
    what the next round needs, and no more than twice it."""
    return max(_LEAST_ROUND, (need - have + 1) // 2)


def _elements(nodes: Iterable[Node]) -> list[int]:
    """The backend node ids of the elements among ``nodes`` (not their text)."""
    return [
        node["backendDOMNodeId"]
        for node in nodes
        if "backendDOMNodeId" in node
        and node.get("role", {}).get("value") not in ("StaticText", "InlineTextBox")
    ]


def _title(top: Node) -> str:
    return str(top.get("name", {}).get("value", ""))


def _url(top: Node, fallback: str) -> str:
    return next(
        (
            str(prop.get("value", {}).get("value", ""))
            for prop in top.get("properties", ())
            if prop.get("name") == "url"
        ),
        fallback,
    )
