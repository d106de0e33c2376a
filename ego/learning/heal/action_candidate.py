"""The candidate for a tool drafted from page actions whose step's selector matches nothing
on the live page: that step's target becomes an ordered list of selectors, the nearest
element's (:mod:`.steps` found it live) first and the recorded one after.

The step then acts on the first selector of the list the page shows (``first_of``, written
into the candidate once), waiting for any of them as long as the tool waits for a page. So
the candidate works on the live page, which shows the new element, and on the old page its
cases replay from their recordings, which shows the recorded one: the old cases judge it as
they judged the tool. A list rather than a replaced selector, because the recordings of the
old cases are the tool's proof that it did the job; a step healed twice gets a third
selector in front. Every selector is written as a Python literal (``repr``), never as code.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from .compare import Change

__all__ = ["heal_steps"]

#: Written into a candidate with a healed step (after its imports' ``START``).
FIRST_OF: Final = '''

async def first_of(tab: Any, selectors: list[str]) -> str:
    """The first of ``selectors`` the page shows, waiting up to PAGE_SECONDS for any of them.

    ``ego heal`` put the selector of the element the live page has first and the recorded
    one after (the old cases' recordings show that one); the last when none comes, for the
    step's verb to say what is missing.
    """
    waits = [
        asyncio.ensure_future(tab.wait_for(selector=selector, timeout=PAGE_SECONDS))
        for selector in selectors
    ]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        found = [
            wait.done() and not wait.cancelled() and wait.exception() is None for wait in waits
        ]
    finally:
        for wait in waits:
            wait.cancel()
        await asyncio.gather(*waits, return_exceptions=True)
    return next((s for s, shown in zip(selectors, found, strict=True) if shown), selectors[-1])
'''
_LIST_CALL: Final = "await first_of(tab, ["


def _step_line(lines: list[str], step: int) -> int | None:
    """The index of the line acting in step ``step`` (the first ``await tab.`` after its
    ``# step N:`` comment, before the next step's)."""
    mark = re.compile(rf"^\s*# step {step}:")
    start = next((i for i, line in enumerate(lines) if mark.match(line)), None)
    if start is None:
        return None
    for index in range(start + 1, len(lines)):
        line = lines[index].strip()
        if line.startswith("# step "):
            return None
        if line.startswith("await tab."):
            return index
    return None


def _healed_line(line: str, old: str, new: str) -> str | None:
    if _LIST_CALL in line:  # healed before: the new selector goes first
        return line.replace(_LIST_CALL, f"{_LIST_CALL}{new!r}, ", 1)
    if repr(old) not in line:
        return None
    return line.replace(repr(old), f"{_LIST_CALL}{new!r}, {old!r}])", 1)


def _with_first_of(source: str) -> str:
    if "async def first_of(" in source:
        return source
    if not re.search(r"^import asyncio$", source, re.M):
        source = re.sub(r"^(import re)$", r"import asyncio\n\1", source, count=1, flags=re.M)
    return source.rstrip("\n") + "\n" + FIRST_OF


def heal_steps(source: str, changes: Sequence[Change]) -> str | None:
    """``source`` with each step whose selector went (a ``selector gone`` change with its
    step and the nearest element) acting on the nearest element's selector first and the
    recorded one after; None when no step could be healed (nothing near was found, or the
    source's steps were edited out of the drafted shape)."""
    lines = source.split("\n")
    healed = False
    for change in changes:
        if change.kind != "selector gone" or change.step is None:
            continue
        if not change.new or not change.old or change.new == change.old:
            continue
        index = _step_line(lines, change.step)
        if index is None:
            continue
        line = _healed_line(lines[index], change.old, change.new)
        if line is not None:
            lines[index], healed = line, True
    return _with_first_of("\n".join(lines)) if healed else None
