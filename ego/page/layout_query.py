"""The layout facts of the elements a read of part of a large page reached, asked of Chrome
for them alone, where one ``DOMSnapshot.captureSnapshot`` would serialize every node of the
page (measured on a page of 6,000 elements, Chromium 156: 118 ms of the processes' time
against about 25 for these questions).

Once a snapshot, on each session: the document's node ids (``DOM.getDocument``), the
elements laid out as blocks and those with a pointer cursor
(``DOM.getNodesForSubtreeByStyle``, shadow roots and same-process frames included), and
the elements with a click, mousedown or mouseup listener (``DOMDebugger.getEventListeners``
of the document, its whole subtree). Once a snapshot, in each document: its ``<html>`` and
``<body>``, iframes and their names, native selects, elements with a tabindex of 0 or more
that no role makes controls, ``draggable="true"`` elements, inert elements
(``scripts/layout_specials.js``, open shadow roots included, each element's backend node id
from ``DOM.describeNode``). Then, for the
nodes each round reached, their node ids (``DOM.pushNodesByBackendIdsToFrontend``) tell
which are blocks and which have a pointer cursor. The facts are those
:func:`.layout_facts.layout_facts` reads from a DOM snapshot; what differs is that Chrome's
``isClickable`` is read as the listeners it stands for.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterable
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

from .layout_facts import BLOCK_DISPLAYS, LayoutFacts
from .page import Page
from .scripts import page_script

__all__ = ["DocumentQuery", "SessionQuery"]

T = TypeVar("T")

#: The listeners that make an element take clicks (as Chrome's ``isClickable``).
_CLICKS: Final = frozenset({"click", "mousedown", "mouseup"})
#: The object group of what the questions hold in the page, released with them.
_GROUP: Final = "ego-layout-query"


@dataclass(slots=True)
class SessionQuery:
    """What is asked of one session once a snapshot (:meth:`ask`), and the node ids its
    rounds learned."""

    page: Page
    blocks: frozenset[int] = frozenset()
    pointer: frozenset[int] = frozenset()
    listened: frozenset[int] = frozenset()
    _asked: asyncio.Future[None] | None = None

    async def ask(self) -> None:
        """Ask the session's questions (once; later calls wait for the first)."""
        if self._asked is None:
            self._asked = _kept(self._ask())
        await asyncio.shield(self._asked)

    async def _ask(self) -> None:
        page = self.page
        root = (await page.send("DOM.getDocument", {"depth": 0}))["root"]["nodeId"]
        document = await page.send("Runtime.evaluate", {"expression": "document"})
        # The blocks are asked for, not the inline elements, though either tells the other:
        # Chrome answers with node ids, and gives one to a node only with its parent's
        # children, an event each parent. Inline elements are the leaves of most pages, so
        # nearly every parent is sent; the parents of blocks are fewer (on 1,500 rows of a
        # <span> and a <button> in a <div>: 10 ms against 90).
        blocks, pointer, listeners = await asyncio.gather(
            _styled(page, root, "display", BLOCK_DISPLAYS),
            _styled(page, root, "cursor", ("pointer",)),
            page.send(
                "DOMDebugger.getEventListeners",
                {"objectId": document["result"]["objectId"], "depth": -1, "pierce": True},
            ),
        )
        self.blocks, self.pointer = blocks, pointer
        self.listened = frozenset(
            int(listener["backendNodeId"])
            for listener in listeners.get("listeners", ())
            if listener.get("type") in _CLICKS and "backendNodeId" in listener
        )
        await page.send("Runtime.releaseObject", {"objectId": document["result"]["objectId"]})

    async def node_ids(self, backend_ids: list[int]) -> list[int]:
        """The node ids of these elements (0 for one Chrome no longer has)."""
        if not backend_ids:
            return []
        answer = await self.page.send(
            "DOM.pushNodesByBackendIdsToFrontend", {"backendNodeIds": backend_ids}
        )
        return [int(node) for node in answer.get("nodeIds", ())]


@dataclass(slots=True)
class DocumentQuery:
    """The facts of one document's elements, learned round by round (:meth:`facts`)."""

    page: Page
    session: SessionQuery
    clickable: set[int] = field(default_factory=set)
    pointer: set[int] = field(default_factory=set)
    blocks: set[int] = field(default_factory=set)
    seen: set[int] = field(default_factory=set)
    _specials: asyncio.Future[dict[str, dict[int, str]]] | None = None

    async def facts(self, backend_ids: Iterable[int]) -> LayoutFacts:
        """The document's facts, with those of ``backend_ids`` (its elements reached since
        the last call) learned.

        Raises:
            EgoError: as :meth:`ego.Tab.send`.
        """
        if self._specials is None:
            self._specials = _kept(_specials(self.page))
        specials, _ = await asyncio.gather(asyncio.shield(self._specials), self.session.ask())
        page_own = specials["page"]
        new = [node for node in dict.fromkeys(backend_ids) if node not in self.seen]
        self.seen.update(new)
        for backend, node in zip(new, await self.session.node_ids(new), strict=True):
            if node == 0:
                continue
            if node in self.session.blocks:
                self.blocks.add(backend)
            if node in self.session.pointer and backend not in page_own:
                self.pointer.add(backend)
        self.clickable = {node for node in self.session.listened if node not in page_own}
        return LayoutFacts(
            clickable=frozenset(self.clickable),
            pointer=frozenset(self.pointer),
            tabbable=frozenset(specials["tabbable"]),
            blocks=frozenset(self.blocks),
            frames=dict(specials["frame"]),
            selects=frozenset(specials["select"]),
            inert=len(specials["inert"]),
            draggable=frozenset(specials["draggable"]),
        )


def _kept(work: Coroutine[Any, Any, T]) -> asyncio.Future[T]:
    """``work`` as a future several callers await (shielded), whose failure is theirs to
    see: none is left unretrieved when no one awaited it."""
    future = asyncio.ensure_future(work)
    future.add_done_callback(lambda done: done.cancelled() or done.exception())
    return future


async def _styled(page: Page, root: int, name: str, values: tuple[str, ...]) -> frozenset[int]:
    answer = await page.send(
        "DOM.getNodesForSubtreeByStyle",
        {
            "nodeId": root,
            "computedStyles": [{"name": name, "value": value} for value in values],
            "pierce": True,
        },
    )
    return frozenset(int(node) for node in answer.get("nodeIds", ()))


async def _specials(page: Page) -> dict[str, dict[int, str]]:
    """The document's special elements by kind: backend node id to name."""
    _, context_id = await page._target()
    params: dict[str, Any] = {
        "expression": f"({page_script('layout_specials')})()",
        "objectGroup": _GROUP,
    }
    if context_id is not None:
        params["contextId"] = context_id
    try:
        found = (await page.send("Runtime.evaluate", params))["result"]["objectId"]
        listed, elements = await asyncio.gather(
            page.send("Runtime.callFunctionOn", _call(found, "[this.kinds, this.names]", True)),
            page.send("Runtime.callFunctionOn", _call(found, "this.elements", False)),
        )
        kinds, names = listed["result"]["value"]
        properties = await page.send(
            "Runtime.getProperties",
            {"objectId": elements["result"]["objectId"], "ownProperties": True},
        )
        held = {
            int(prop["name"]): prop["value"]["objectId"]
            for prop in properties.get("result", ())
            if prop.get("name", "").isdigit() and "objectId" in prop.get("value", {})
        }
        described = await asyncio.gather(
            *(page.send("DOM.describeNode", {"objectId": held[i]}) for i in range(len(kinds)))
        )
    finally:
        await page.send("Runtime.releaseObjectGroup", {"objectGroup": _GROUP})
    specials: dict[str, dict[int, str]] = {
        kind: {} for kind in ("page", "frame", "select", "tabbable", "inert", "draggable")
    }
    for kind, name, node in zip(kinds, names, described, strict=True):
        specials[kind][int(node["node"]["backendNodeId"])] = str(name)
    return specials


def _call(object_id: str, value: str, by_value: bool) -> dict[str, Any]:
    return {
        "functionDeclaration": f"function () {{ return {value}; }}",
        "objectId": object_id,
        "returnByValue": by_value,
        "objectGroup": _GROUP,
    }
