"""The candidate for a tool drafted from page actions whose step's selector matches nothing
on the live page: that step's target becomes an ordered list of selectors, the nearest
element's (:mod:`.steps` found it live) first and the recorded one after.

The step then acts on the first selector of the list, in its order, that the page shows
(``first_of``, written into the candidate once, with the imports it needs), waiting for any of
them as long as the tool waits for a page. So the candidate works on the live page, which
shows the new element, and on the old page its cases replay from their recordings, which
shows the recorded one: the old cases judge it as they judged the tool. A list rather than a
replaced selector, because the recordings of the old cases are the tool's proof that it did
the job; a step healed twice gets a third selector in front (each selector once). The step's
verb and its selector are found by the source's syntax (``ast``), so a hand-edited source
heals whatever its quoting; every selector is written as a Python literal (``repr``), never
as code.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from ..suggest.action_source import PAGE_SECONDS
from .compare import Change

__all__ = ["FIRST_OF", "StepsHealed", "heal_steps"]

#: Seconds ``first_of`` looks for one selector in a round: the page answers at once when the
#: selector matches, so this is what each selector before the one shown costs.
FIRST_OF_LOOK: Final = 0.05
#: Written at the end of a candidate with a healed step (its imports at the top).
FIRST_OF: Final = f'''

#: Seconds first_of looks for one selector in a round (at once when it matches).
FIRST_OF_LOOK = {FIRST_OF_LOOK}


async def first_of(tab: Any, selectors: list[str]) -> str:
    """The first of ``selectors``, in their order, that the page shows, waiting up to
    PAGE_SECONDS for any of them.

    ``ego heal`` put the selector of the element the live page has first and the recorded
    one after (the old cases' recordings show that one). Each round looks for them in that
    order (a look answers at once when one matches) and takes the first found, so the
    earlier wins whenever both are there; when none is, it waits for any of them, then looks
    again. The last when none comes, for the step's verb to say what is missing.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + PAGE_SECONDS
    while True:
        for selector in selectors:
            try:
                await tab.wait_for(selector=selector, timeout=FIRST_OF_LOOK)
            except Exception:  # the verb after says what is wrong with the last
                continue
            return selector
        left = deadline - loop.time()
        if left <= 0:
            return selectors[-1]
        waits = [
            asyncio.ensure_future(tab.wait_for(selector=selector, timeout=left))
            for selector in selectors
        ]
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            shown = any(w.done() and not w.cancelled() and w.exception() is None for w in waits)
        finally:
            for wait in waits:
                wait.cancel()
            await asyncio.gather(*waits, return_exceptions=True)
        if not shown:
            return selectors[-1]
'''
#: The imports ``first_of`` needs, each added when the source binds no such name.
_IMPORTS: Final = (("asyncio", "import asyncio"), ("Any", "from typing import Any"))
_PAGE_SECONDS: Final = f"#: Seconds each next page may take to come.\nPAGE_SECONDS = {PAGE_SECONDS}"
_STEP_MARK: Final = re.compile(r"^\s*# step (\d+):")


@dataclass
class StepsHealed:
    """What :func:`heal_steps` made of a source.

    Attributes:
        source: the candidate's source, or None when no step could be healed.
        left: a line for each step that went and was not healed, saying why.
    """

    source: str | None = None
    left: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Edit:
    start: int  # offsets in the source's characters
    end: int
    text: str


class _Offsets:
    """Character offsets in a source of the (line, UTF-8 byte column) positions ``ast`` gives."""

    def __init__(self, source: str) -> None:
        self.lines = source.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def of(self, line: int, column: int) -> int:
        text = self.lines[line - 1].encode("utf-8")[:column].decode("utf-8", errors="replace")
        return self.starts[line - 1] + len(text)

    def span(self, node: ast.expr) -> tuple[int, int]:
        assert node.end_lineno is not None
        assert node.end_col_offset is not None
        return self.of(node.lineno, node.col_offset), self.of(node.end_lineno, node.end_col_offset)


def _step_comments(source: str) -> dict[int, tuple[int, int]]:
    """For each ``# step N:`` comment, the lines (1-based) its step's statements lie between."""
    marks = [
        (int(found.group(1)), number)
        for number, line in enumerate(source.splitlines(), start=1)
        if (found := _STEP_MARK.match(line))
    ]
    ends = [number for _, number in marks[1:]] + [10**9]
    return {step: (number, end) for (step, number), end in zip(marks, ends, strict=True)}


def _tab_calls(tree: ast.Module) -> list[ast.Call]:
    """Every awaited ``tab.VERB(...)`` call, in the source's order."""
    calls = [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Await)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Attribute)
        and isinstance(node.value.func.value, ast.Name)
        and node.value.func.value.id == "tab"
    ]
    return sorted(calls, key=lambda call: (call.lineno, call.col_offset))


def _target(call: ast.Call) -> ast.expr | None:
    """The argument a verb acts on: its first, or ``selector=``."""
    if call.args:
        return call.args[0]
    return next((k.value for k in call.keywords if k.arg == "selector"), None)


def _listed(target: ast.expr) -> ast.List | None:
    """The list of ``await first_of(tab, [...])`` (a step healed before), of strings only."""
    if not (isinstance(target, ast.Await) and isinstance(target.value, ast.Call)):
        return None
    call = target.value
    if not (isinstance(call.func, ast.Name) and call.func.id == "first_of"):
        return None
    if len(call.args) != 2 or not isinstance(call.args[1], ast.List):
        return None
    listed = call.args[1]
    return listed if all(_string(item) is not None for item in listed.elts) else None


def _string(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _selectors(selectors: Sequence[str]) -> str:
    """The list literal, each selector once, in the order given."""
    return "[" + ", ".join(repr(s) for s in dict.fromkeys(selectors)) + "]"


def _edit(target: ast.expr, old: str, new: str, offsets: _Offsets) -> _Edit | None:
    """The step's target made a list with ``new`` first, or None when it is no string or
    list of strings holding ``old``."""
    listed = _listed(target)
    if listed is not None:
        held = [s for item in listed.elts if (s := _string(item)) is not None]
        if old not in held:
            return None
        return _Edit(*offsets.span(listed), _selectors([new, *held]))
    if _string(target) != old:
        return None
    return _Edit(*offsets.span(target), f"await first_of(tab, {_selectors([new, old])})")


def _bound(tree: ast.Module) -> set[str]:
    """The names the module binds at its top level (imports and assignments)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def _with_first_of(source: str) -> str:
    """``source`` with ``first_of`` at its end (once) and what it needs at its top, after the
    docstring and the ``__future__`` imports, which must come first."""
    tree = ast.parse(source)
    if any(isinstance(n, ast.AsyncFunctionDef) and n.name == "first_of" for n in tree.body):
        return source
    bound = _bound(tree)
    imports = "".join(f"{line}\n" for name, line in _IMPORTS if name not in bound)
    at = _first_import_line(tree)  # the line (0-based) the imports go before
    lines = source.splitlines(keepends=True)
    if at > 0 and not lines[at - 1].endswith("\n"):
        lines[at - 1] += "\n"
    source = "".join(lines[:at]) + imports + "".join(lines[at:])
    end = "" if "PAGE_SECONDS" in bound else f"\n\n{_PAGE_SECONDS}"
    return source.rstrip("\n") + "\n" + end + FIRST_OF


def _first_import_line(tree: ast.Module) -> int:
    """Where imports may go: before the first import after the ``__future__`` ones, else after
    the docstring and those (which must come first)."""
    after = 0
    for index, node in enumerate(tree.body):
        future = isinstance(node, ast.ImportFrom) and node.module == "__future__"
        if isinstance(node, ast.Import | ast.ImportFrom) and not future:
            return node.lineno - 1
        docstring = index == 0 and isinstance(node, ast.Expr) and _string(node.value) is not None
        if not (future or docstring):
            break
        after = node.end_lineno or node.lineno
    return after


def heal_steps(source: str, changes: Sequence[Change]) -> StepsHealed:
    """``source`` with each step whose selector went (a ``selector gone`` change with its
    step and the nearest element) acting on the nearest element's selector first and the
    recorded one after.

    The step's verb is found by the source's syntax, so any quoting of its selector, and a
    call over several lines, heal; a step healed before gets the new selector in front of
    its list, each selector once. ``source`` is None when no step could be healed: nothing
    near was found, or the step's line is not a verb on the recorded selector (edited out of
    the drafted shape, or the source does not parse); ``left`` says which and why.
    """
    healed = StepsHealed()
    gone = [c for c in changes if c.kind == "selector gone" and c.step is not None and c.old]
    if not gone:
        return healed
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        healed.left.append(f"the tool's source does not parse ({exc.msg}, line {exc.lineno})")
        return healed
    steps, calls, offsets = _step_comments(source), _tab_calls(tree), _Offsets(source)
    edits: list[_Edit] = []
    for change in gone:
        assert change.step is not None
        assert change.old is not None
        if not change.new or change.new == change.old:
            healed.left.append(
                f"step {change.step}: no element near the one that went ({change.old!r})"
            )
            continue
        lines = steps.get(change.step)
        call = next((c for c in calls if lines and lines[0] < c.lineno < lines[1]), None)
        target = _target(call) if call is not None else None
        edit = _edit(target, change.old, change.new, offsets) if target is not None else None
        if edit is None:
            healed.left.append(
                f"step {change.step}: its line is not as drafted "
                f"(await tab.VERB({change.old!r}, ...)), so it was not healed"
            )
            continue
        edits.append(edit)
    if not edits:
        return healed
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        source = source[: edit.start] + edit.text + source[edit.end :]
    healed.source = _with_first_of(source)
    return healed
