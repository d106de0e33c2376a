"""Refs: short names (``e12``) for the nodes a snapshot shows, which every verb takes.

A ref names one node of one frame's document, as Chrome identifies it: the frame's id, the
node's backend node id (stable for the node's life in its document) and which of the frame's
documents it was (``Frame.documents`` when the snapshot was taken). A tab keeps one
:class:`RefRegistry`; the same node keeps its ref across snapshots, so an agent's earlier
refs stay good while their nodes live. ``"ref=e12"`` is accepted wherever a selector is
(:func:`ego.page.locate.resolve_ref` finds the node).

A ref whose frame navigated since, or whose node was removed, fails at once with
:class:`~ego.errors.StaleRefError`, which says to take a new snapshot: it never silently names
another node.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass
from typing import Final, Protocol

from ..errors import ProtocolError, StaleRefError

__all__ = ["MAX_REFS", "RefRegistry", "RefTarget", "parse_ref"]

#: The most refs a tab remembers; past it the least recently given is forgotten (a tab that
#: is snapshotted for days stays small). A forgotten ref fails as stale.
MAX_REFS: Final = 50_000

_REF: Final = re.compile(r"\s*\[?\s*ref\s*=\s*(e[0-9]+)\s*\]?\s*\Z")


def parse_ref(selector: str) -> str | None:
    """The ref ``selector`` names (``"ref=e12"`` or ``"[ref=e12]"``, as a snapshot prints
    it), or None for any other selector."""
    match = _REF.match(selector)
    return match.group(1) if match else None


@dataclass(frozen=True)
class RefTarget:
    """What a ref names: a node of one document of one frame.

    Attributes:
        frame_id: Chrome's id of the frame (a tab's main frame: the tab's target id).
        backend_node_id: the node's backend node id in that frame's document.
        document: which of the frame's documents (``Frame.documents``) held it.
    """

    frame_id: str
    backend_node_id: int
    document: int


class _Frame(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def documents(self) -> int: ...


class RefRegistry:
    """The refs one tab has given out: ``e1``, ``e2``, ... in the order nodes were first seen."""

    def __init__(self, limit: int = MAX_REFS) -> None:
        self._limit = limit
        self._targets: OrderedDict[str, RefTarget] = OrderedDict()
        self._refs: dict[RefTarget, str] = {}
        self._next = 1

    def __len__(self) -> int:
        return len(self._targets)

    def ref_for(self, frame: _Frame, backend_node_id: int) -> str:
        """The ref of a node of ``frame``'s current document: the one it has, else a new one."""
        target = RefTarget(frame.id, int(backend_node_id), frame.documents)
        ref = self._refs.get(target)
        if ref is None:
            ref = f"e{self._next}"
            self._next += 1
            self._refs[target] = ref
            self._targets[ref] = target
            if len(self._targets) > self._limit:
                _, oldest = self._targets.popitem(last=False)
                self._refs.pop(oldest, None)
        else:
            self._targets.move_to_end(ref)
        return ref

    def get(self, ref: str) -> RefTarget | None:
        """What ``ref`` names, or None for a ref this tab never gave (or forgot)."""
        return self._targets.get(ref)

    def stale(self, ref: str, why: str) -> StaleRefError:
        """The error for ``ref`` no longer naming a node, saying ``why``."""
        return StaleRefError(
            f"ref {ref} {why}: take a new snapshot (tab.snapshot()) and use the refs it prints",
            selector=f"ref={ref}",
        )

    def target(self, ref: str, frame: _Frame | None) -> RefTarget:
        """What ``ref`` names, checked against its frame now (``frame``: the frame it was taken
        in, None when the tab no longer has it).

        Raises:
            StaleRefError: the tab never gave ``ref``, its frame is gone, or the frame shows
                another document since.
        """
        target = self._targets.get(ref)
        if target is None:
            raise self.stale(ref, "was not given by a snapshot of this tab (or is long gone)")
        if frame is None:
            raise self.stale(ref, "names a node of a frame that is gone")
        if frame.documents != target.document:
            raise self.stale(ref, "names a node of a page that navigated since the snapshot")
        return target

    def gone(self, ref: str, error: ProtocolError) -> StaleRefError:
        """The error for ``ref`` whose node Chrome no longer has (``DOM.resolveNode`` failed)."""
        return self.stale(ref, f"names a node that was removed from the page ({error})")
