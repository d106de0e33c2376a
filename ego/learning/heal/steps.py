"""The step of a tool drafted from page actions whose target no longer matches, and the element
nearest to what it named, found while the tool runs live.

A :class:`StepWatch` observes the tab's actions (:meth:`ego.Tab.observe_actions`) while the
tool runs: its steps are the acting verbs it runs, counted as the drafted source numbers them
(``# step N``: the first page's navigation is step 1). When a step fails because its target
matches nothing, the page is read as an agent reads it (a snapshot) and the element nearest to
the target is the one of the same role whose accessible name is closest to the name the target
asked for, or else to the role and name the recording saw (the source's comment of the step:
``# step 4: click 'testid="search"' (button "Look up")``; any role when none has it), those
after the element of the step before it (in the page's order, nearest first) ahead of the
others, given by its durable selector. An element an earlier step acted on is never the
nearest: when nothing else is like the target, it went from the page (a field moved to another
step, say), and the change says so.
"""

from __future__ import annotations

import difflib
import json
import re
from typing import TYPE_CHECKING, Final

from ...errors import EgoError, ElementNotFoundError
from ...page.action_log import Action, Observation
from ..suggest.flow import ACTING_VERBS
from .compare import Change

if TYPE_CHECKING:
    from ...page.tab import Tab

__all__ = ["StepWatch", "recorded_elements"]

_ROLE: Final = re.compile(r'^\s*role=([a-zA-Z-]+)\s*(?:\[\s*name\s*=\s*("(?:[^"\\]|\\.)*")\s*\])?')
#: A step's comment in the drafted source, with the element the recording saw.
_STEP: Final = re.compile(r'^\s*# step (\d+): .* \(([a-z][a-z-]*) ("(?:[^"\\]|\\.)*")\)\s*$', re.M)
_LINE: Final = re.compile(r'^\s*-?\s*([a-z]+)(?: "((?:[^"\\]|\\.)*)")?.*\[ref=([a-z]?\d+)\]')
#: The least name likeness (0 to 1) for an element of another role to be named nearest.
MIN_LIKENESS: Final = 0.4
#: What coming after the previous step's element adds to an element's likeness (less the
#: farther it is).
AFTER_BONUS: Final = 0.5


class StepWatch:
    """The steps a tool runs in ``tab`` while the watch lasts (see the module docstring).

    Args:
        tab: the tab the tool runs in.
        source: the tool's source, whose step comments name the elements recorded.
    """

    def __init__(self, tab: Tab, source: str = "") -> None:
        self.tab = tab
        self.recorded = recorded_elements(source)
        self.steps = 0
        self.failed: Action | None = None
        self.failed_step = 0
        self.previous: Action | None = None  # the last step that went, on an element
        self._used: set[str] = set()  # the refs of the elements the steps acted on
        self._observation: Observation = tab.observe_actions(self._ended)

    def stop(self) -> None:
        """Stop observing the tab."""
        self._observation.stop()

    def _ended(self, action: Action) -> None:
        if action.verb not in ACTING_VERBS:
            return
        self.steps += 1
        if action.error is not None and self.failed is None:
            self.failed, self.failed_step = action, self.steps
        elif action.error is None and action.element is not None:
            self.previous = action
            self._used.add(action.element.ref)

    async def changes(self) -> list[Change]:
        """A ``selector gone`` change for the step that failed on a target matching nothing
        (with the nearest element as ``new``), else none."""
        action = self.failed
        if action is None or action.target is None:
            return []
        if not isinstance(action.error, ElementNotFoundError):
            return []
        nearest = await self._nearest(action.target, self.recorded.get(self.failed_step))
        detail = (
            f"step {self.failed_step} ({action.verb}) on {action.url}: {action.target} "
            "matches nothing on the live page"
        )
        if nearest:
            detail += f"; the nearest element is {nearest}"
        else:
            detail += "; nothing like it is on that page (it moved to another page, or went)"
        return [
            Change(
                "selector gone",
                action.target,
                detail,
                old=action.target,
                new=nearest,
                step=self.failed_step,
            )
        ]

    def _line_of_previous(self, lines: list[str]) -> int | None:
        """The snapshot line of the previous step's element, when it is on this page."""
        element = self.previous.element if self.previous is not None else None
        if element is None:
            return None
        mark = f"[ref={element.ref}]"
        return next((i for i, line in enumerate(lines) if mark in line), None)

    async def _nearest(self, target: str, recorded: tuple[str, str] | None) -> str | None:
        try:
            outline = await self.tab.snapshot(max_lines=2000)
        except EgoError:
            return None
        wanted = _ROLE.match(target)
        if wanted:
            role = wanted.group(1).lower()
            name = json.loads(wanted.group(2)) if wanted.group(2) else target
        elif recorded is not None:
            role, name = recorded
        else:
            role, name = None, target
        lines = outline.split("\n")[1:]
        after = self._line_of_previous(lines)
        best: tuple[float, str] | None = None
        for index, line in enumerate(lines):
            found = _LINE.match(line)
            if found is None:
                continue
            seen_role, seen_name, ref = found.group(1), found.group(2) or "", found.group(3)
            if ref in self._used:
                continue
            likeness = difflib.SequenceMatcher(None, name.lower(), seen_name.lower()).ratio()
            if seen_role == role:
                likeness += 1.0
            elif likeness < MIN_LIKENESS:
                continue
            if after is not None and index > after:
                likeness += max(0.1, AFTER_BONUS - (index - after) / 100)
            if best is None or likeness > best[0]:
                best = (likeness, ref)
        if best is None:
            return None
        try:
            return await self.tab.selector_for(best[1])
        except (EgoError, ValueError):
            return None


def recorded_elements(source: str) -> dict[int, tuple[str, str]]:
    """The role and name each step's comment names (a comment edited out of shape: none)."""
    found: dict[int, tuple[str, str]] = {}
    for step, role, name in _STEP.findall(source):
        try:
            found[int(step)] = (role, json.loads(name))
        except ValueError:
            continue
    return found
