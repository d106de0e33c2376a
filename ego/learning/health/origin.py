"""Which front end a run comes from: a context variable each front end sets once at its door.

A run is recorded where every call passes (:meth:`ego.site.Site.run_call`), and that place
does not know who called it. Threading a ``front_end`` argument through the CLI, MCP, the
pool, the batch runner and the site would touch every signature on the way; a context
variable reaches the call instead, and it follows asyncio tasks (a task copies the context of
the code that created it), so a pool's worker tasks inherit the batch that started them.

The default is ``"python"`` (a script calling the site itself). ``None`` means "do not
record": the save gate's trial runs of a source that is not saved yet, and ``ego test``,
which records the judged outcome of each case instead of the raw one.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Final, Literal

__all__ = [
    "FRONT_ENDS",
    "FrontEnd",
    "current_front_end",
    "front_end",
    "unrecorded",
]

FrontEnd = Literal["python", "pool", "batch", "cli", "mcp", "skill", "test"]

#: Every front end a run may name, in the order ``ego health`` lists them.
FRONT_ENDS: Final = ("python", "pool", "batch", "cli", "mcp", "skill", "test")

#: The front end of the code running now; None while runs must not be recorded.
FRONT_END: ContextVar[str | None] = ContextVar("ego_front_end", default="python")


def current_front_end() -> str | None:
    """The front end runs are recorded under here, or None when they are not recorded."""
    return FRONT_END.get()


@contextmanager
def front_end(name: FrontEnd, *, unless_named: bool = False) -> Iterator[None]:
    """Record the runs made inside the block under ``name``.

    Args:
        name: the front end.
        unless_named: keep a front end that already named itself (the pool, used from a
            batch, leaves the batch's name; used from a script, it names itself). A block
            that records nothing stays unrecorded either way.
    """
    current = FRONT_END.get()
    if current is None or (unless_named and current != "python"):
        yield
        return
    token = FRONT_END.set(name)
    try:
        yield
    finally:
        FRONT_END.reset(token)


@contextmanager
def unrecorded() -> Iterator[None]:
    """Record nothing for the runs made inside the block (trial runs, judged test runs)."""
    token = FRONT_END.set(None)
    try:
        yield
    finally:
        FRONT_END.reset(token)
