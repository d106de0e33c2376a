"""What Chrome's accessibility tree does not say of a document's elements, read from one
``DOMSnapshot.captureSnapshot``: which take clicks, which have a pointer cursor, which a page
made tabbable or ``draggable``, which are laid out as blocks (so that a sentence's inline
elements stay in its line), which are native ``<select>`` elements (whose options are chosen
through them) and how many are ``inert``.

Clicks: Chrome's ``isClickable`` (a click, mousedown or mouseup listener on the element
itself, or a link). The top of a ``cursor: pointer`` region (an element with a pointer
cursor under none, :mod:`.axtree` decides) takes clicks too: that is how a page that
delegates its listeners to the root, as React does, still shows what it means to be
clicked. A read of part of a large page asks the same facts of Chrome for the elements it
reached alone (:mod:`.layout_query`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = ["BLOCK_DISPLAYS", "CAPTURE", "LayoutFacts", "layout_facts"]

#: The ``DOMSnapshot.captureSnapshot`` parameters the facts are read from.
CAPTURE: Final = {"computedStyles": ["cursor", "display"]}
#: The computed ``display`` values (as Chrome 156 serializes them) of elements laid out as
#: blocks. A value not listed (``inline...``, ``contents``, ``none``, ``ruby``, ``math``,
#: one Chrome adds later) keeps its content in the line around it.
BLOCK_DISPLAYS: Final = (
    "block", "flow-root", "list-item", "flow-root list-item", "flex", "grid", "-webkit-box",
    "table", "table-row-group", "table-header-group", "table-footer-group", "table-row",
    "table-column-group", "table-column", "table-cell", "table-caption", "block math",
    "block ruby",
)  # fmt: skip
_BLOCKS: Final = frozenset(BLOCK_DISPLAYS)

#: Elements whose click listeners are the page's own machinery, never a control.
_NOT_CONTROLS: Final = frozenset({"HTML", "BODY", "#document"})


@dataclass(frozen=True, slots=True)
class LayoutFacts:
    """One document's elements, by backend node id.

    Attributes:
        clickable: elements that take clicks (a listener of their own).
        pointer: elements with a pointer cursor.
        tabbable: elements with a ``tabindex`` of 0 or more.
        blocks: elements laid out as blocks (not inline, and with a box).
        frames: each iframe element's ``name`` attribute, else its ``src`` (what names the
            frame when it has no title).
        selects: native ``<select>`` elements.
        draggable: elements with ``draggable="true"`` (a card an agent drags by its ref).
        inert: how many elements carry the ``inert`` attribute (what they hold is out of
            the accessibility tree, as behind a modal dialog).
    """

    clickable: frozenset[int] = frozenset()
    pointer: frozenset[int] = frozenset()
    tabbable: frozenset[int] = frozenset()
    blocks: frozenset[int] = frozenset()
    frames: Mapping[int, str] = field(default_factory=dict)
    selects: frozenset[int] = frozenset()
    inert: int = 0
    draggable: frozenset[int] = frozenset()


def layout_facts(capture: Mapping[str, Any]) -> dict[str, LayoutFacts]:
    """The facts of each document in a ``DOMSnapshot.captureSnapshot`` answer (taken with
    :data:`CAPTURE`), by the id of the frame that shows it."""
    strings: Sequence[str] = capture.get("strings", [])
    facts: dict[str, LayoutFacts] = {}
    for document in capture.get("documents", []):
        frame_id = document.get("frameId")
        if isinstance(frame_id, int):
            frame_id = strings[frame_id]
        facts[str(frame_id)] = _document_facts(document, strings)
    return facts


def _document_facts(document: Mapping[str, Any], strings: Sequence[str]) -> LayoutFacts:
    nodes = document["nodes"]
    layout = document["layout"]
    backend: list[int] = nodes["backendNodeId"]
    names: list[int] = nodes["nodeName"]
    types: list[int] = nodes["nodeType"]

    def text(index: int) -> str:
        return strings[index] if 0 <= index < len(strings) else ""

    cursor: dict[int, str] = {}
    blocks: set[int] = set()
    for node, styles in zip(layout["nodeIndex"], layout["styles"], strict=False):
        if types[node] != 1:
            continue
        cursor[node] = text(styles[0]) if styles else ""
        if len(styles) > 1 and text(styles[1]) in _BLOCKS:
            blocks.add(backend[node])

    clickable: set[int] = set()
    for node in nodes.get("isClickable", {}).get("index", []):
        if types[node] == 1 and text(names[node]) not in _NOT_CONTROLS:
            clickable.add(backend[node])
    pointer = {
        backend[node]
        for node, value in cursor.items()
        if value == "pointer" and text(names[node]) not in _NOT_CONTROLS
    }

    tabbable: set[int] = set()
    frames: dict[int, str] = {}
    selects: set[int] = set()
    draggable: set[int] = set()
    inert = 0
    for node, attributes in enumerate(nodes.get("attributes", [])):
        named = {
            text(attributes[index]): text(attributes[index + 1])
            for index in range(0, len(attributes) - 1, 2)
        }
        if named.get("tabindex", "").strip().isdigit():
            tabbable.add(backend[node])
        if "inert" in named:
            inert += 1
        if named.get("draggable", "").strip().lower() == "true":
            draggable.add(backend[node])
        tag = text(names[node])
        if tag in ("IFRAME", "FRAME"):
            frames[backend[node]] = named.get("name") or named.get("src") or ""
        elif tag == "SELECT":
            selects.add(backend[node])
    return LayoutFacts(
        frozenset(clickable),
        frozenset(pointer),
        frozenset(tabbable),
        frozenset(blocks),
        frames,
        frozenset(selects),
        inert,
        frozenset(draggable),
    )
