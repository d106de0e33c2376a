"""A tree read in part: the lines it fixes and the nodes the next round reads."""

from __future__ import annotations

from typing import Any

from ego.page.axtree import REF, partial_lines
from ego.page.layout_facts import LayoutFacts


def _rows(count: int, read: int) -> dict[str, dict[str, Any]]:
    """A document of ``count`` rows (a block each, holding a button), the first ``read`` of
    them with their content read."""
    nodes: dict[str, dict[str, Any]] = {
        "root": {
            "nodeId": "root",
            "role": {"value": "RootWebArea"},
            "childIds": [f"row{n}" for n in range(count)],
        }
    }
    for n in range(count):
        nodes[f"row{n}"] = {
            "nodeId": f"row{n}",
            "backendDOMNodeId": 1000 + n,
            "role": {"value": "generic"},
            "childIds": [f"button{n}"],
        }
        if n < read:
            nodes[f"button{n}"] = {
                "nodeId": f"button{n}",
                "backendDOMNodeId": 5000 + n,
                "role": {"value": "button"},
                "name": {"value": f"Buy {n}"},
                "childIds": [],
            }
    return nodes


def test_a_walk_that_stops_at_its_most_unread_fixes_the_same_lines() -> None:
    nodes = _rows(1000, 30)
    facts = LayoutFacts(blocks=frozenset(range(1000, 2000)))
    whole = partial_lines(nodes, nodes["root"], facts, url="http://x/")
    stopped = partial_lines(nodes, nodes["root"], facts, url="http://x/", most_unread=16)
    assert [line.full for line in stopped.lines] == [line.full for line in whole.lines]
    first = [line.full.replace(REF, "[ref]") for line in whole.lines[:2]]
    assert first == ['button "Buy 0" [ref]', 'button "Buy 1" [ref]']
    assert len(whole.lines) == 29  # the last read row's line may still change
    assert whole.unread == [f"row{n}" for n in range(30, 1000)]
    assert stopped.unread == whole.unread[:16]
