"""A recorded flow of page actions: what ``tab.record_actions()`` writes and
``ego suggest SITE --actions FILE`` reads.

The file is JSON (written private, ``0600``)::

    {
      "format": "ego-actions/1",
      "recorded_at": "2026-12-06T10:00:00+00:00",
      "steps": [
        {"verb": "navigate", "target": "http://shop/search", "url": "about:blank"},
        {"verb": "type", "target": "#q", "selector": "role=textbox[name=\\"Query\\"]",
         "element": {"role": "textbox", "name": "Query", "tag": "input", "input_type": null},
         "value": "lamp", "url": "http://shop/search"},
        {"verb": "click", "target": "text=Search", "selector": "role=button[name=\\"Search\\"]",
         ..., "url": "http://shop/search"}
      ],
      "read": {"verb": "snapshot", "selector": "#results", "find": null,
               "text": "heading \\"3 results\\" ...", "url": "http://shop/results"},
      "end_url": "http://shop/results",
      "har": "flow.har",
      "secrets": ["Password"]
    }

Each step keeps the target as the caller wrote it, the durable selector of the element it
named (``selector``; ``checked`` False when the element went before it could be checked, as
the button that submits a form), the value typed or chosen (``value``; ``"REDACTED"`` with
``secret`` for a password or a field named like a secret), and the URL the page had when the
step began: the next step's ``url`` (or ``end_url``) is where the step led. ``read`` is what
the agent read at the end (a snapshot, whole or of one element or of the lines holding a
text), refs removed. ``secrets`` names the fields whose values were redacted, never a value.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final

from ...errors import HarFormatError

__all__ = [
    "ACTING_VERBS",
    "FLOW_FORMAT",
    "FlowRead",
    "FlowStep",
    "RecordedFlow",
    "load_flow",
    "outline_text",
]

#: The version written in, and required of, a flow file.
FLOW_FORMAT: Final = "ego-actions/1"
#: The verbs a flow keeps as steps (the others, hover or wait_for, are left out).
ACTING_VERBS: Final = frozenset(
    {"navigate", "click", "type", "fill", "select", "check", "uncheck", "press"}
)
_REF: Final = re.compile(r" \[ref=[a-z]?\d+\]")


def outline_text(snapshot: str) -> str:
    """What a snapshot showed of the page, as a flow keeps it: its lines without the header
    line (which names the URL) and without the refs (which live only in one tab)."""
    lines = snapshot.split("\n")[1:]
    return "\n".join(_REF.sub("", line) for line in lines)


@dataclass
class FlowStep:
    """One action of a flow (see the module docstring)."""

    verb: str
    target: str | None
    url: str
    selector: str | None = None
    checked: bool = True
    element: dict[str, Any] | None = None
    value: Any = None
    secret: bool = False


@dataclass
class FlowRead:
    """What the agent read at the end of a flow: a snapshot of the page (``selector`` of one
    element, ``find`` the lines holding a text), as :func:`outline_text` keeps it."""

    verb: str
    text: str
    url: str
    target: str | None = None
    selector: str | None = None
    find: str | None = None


@dataclass
class RecordedFlow:
    """A recorded flow of page actions (see the module docstring)."""

    steps: list[FlowStep] = field(default_factory=list)
    read: FlowRead | None = None
    end_url: str = ""
    recorded_at: str = ""
    har: str | None = None
    secrets: list[str] = field(default_factory=list)
    #: Actions made during the flow that a draft cannot replay (a double click, a drag, the
    #: wheel, ...), as ``verb target``: said in the draft's notes, never dropped unsaid.
    left_out: list[str] = field(default_factory=list)
    path: Path | None = None

    def as_dict(self) -> dict[str, Any]:
        """The file's JSON data."""
        return {
            "format": FLOW_FORMAT,
            "recorded_at": self.recorded_at,
            "steps": [asdict(step) for step in self.steps],
            "read": asdict(self.read) if self.read is not None else None,
            "end_url": self.end_url,
            "har": self.har,
            "secrets": sorted(set(self.secrets)),
            "left_out": list(self.left_out),
        }

    def har_path(self) -> Path | None:
        """The HAR recorded alongside, resolved beside the flow file (None when there is
        none)."""
        if self.har is None:
            return None
        har = Path(self.har)
        if not har.is_absolute() and self.path is not None:
            har = self.path.parent / har
        return har


def load_flow(path: str | os.PathLike[str]) -> RecordedFlow:
    """Read a flow file.

    Raises:
        HarFormatError: it cannot be read, is not JSON, or is not a flow of this format
            (the message names the file and what is wrong).
    """
    file = Path(path)
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise HarFormatError(
            f"{file}: not a recording of page actions ({exc}); "
            "record one with tab.record_actions()",
            path=str(file),
        ) from None
    if not isinstance(data, dict) or data.get("format") != FLOW_FORMAT:
        raise HarFormatError(
            f'{file}: not a recording of page actions (no "format": "{FLOW_FORMAT}"); '
            "record one with tab.record_actions()",
            path=str(file),
        )
    try:
        steps = [FlowStep(**step) for step in data.get("steps") or []]
        read = FlowRead(**data["read"]) if data.get("read") else None
    except TypeError as exc:
        raise HarFormatError(f"{file}: a step cannot be read ({exc})", path=str(file)) from None
    return RecordedFlow(
        steps=steps,
        read=read,
        end_url=str(data.get("end_url") or ""),
        recorded_at=str(data.get("recorded_at") or ""),
        har=data.get("har"),
        secrets=list(data.get("secrets") or []),
        left_out=[str(item) for item in data.get("left_out") or []],
        path=file,
    )
