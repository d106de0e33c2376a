"""Tool runs as they end, told to whoever watches them (a trace): one hook on the call path.

:meth:`ego.site.Site.run_call`, the path every tool call takes, records each run
(:mod:`.recorder`) and then, when anyone watches (:data:`RUN_WATCHERS` is not empty), awaits
:func:`tool_ran`, which builds a :class:`ToolRun` (the tool, its version, args, result or
error, the outcome the record gives it, the page it ran in) and hands it to each watcher.
With no watcher the call path pays one truth test of a module-level list.
"""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from time import perf_counter
from typing import Any, Final, Protocol

from ...page.action_log import Registration
from . import recorder
from .origin import FRONT_END
from .outcomes import OK, classify
from .versions import python_version

__all__ = ["RUN_WATCHERS", "RunWatch", "RunWatcher", "ToolRun", "tool_ran", "watch_runs"]

logger = logging.getLogger("ego.health")


class _Call(recorder._Call, Protocol):
    """What a run needs of the call (:class:`ego.calls.ToolCall`): what the record needs, and
    its args."""

    @property
    def args(self) -> Any: ...


@dataclass(frozen=True, slots=True)
class ToolRun:
    """One tool run, as it ended.

    Attributes:
        site_id, tool: the tool.
        version: the version hash its run is recorded under (None for a Python tool whose
            file is gone).
        args: the args it was called with.
        result: what it returned (None when it failed).
        error: what it raised, or None.
        outcome: ``OK`` or the failure's kind, as the run record counts it
            (:func:`~.outcomes.classify`: ``SKILL_BROKEN``, ``NEEDS_LOGIN``, ...).
        message: the failure's message as the record keeps it ("" for ``OK``).
        started: when it started (seconds since the epoch).
        seconds: how long it took.
        page: the tab or frame it ran in, when known (the one the caller gave, or the one
            chosen for a browser tool).
        host: the browser (or browser context) of the site that ran it.
        front_end: who ran it (``python``, ``cli``, ``mcp``, ``batch``, ...; None for a run
            the record does not keep, such as a save gate's trial).
        call: the call itself (:class:`ego.calls.ToolCall`).
    """

    site_id: str
    tool: str
    version: str | None
    args: Any
    result: Any
    error: BaseException | None
    outcome: str
    message: str
    started: float
    seconds: float
    page: Any
    host: Any
    front_end: str | None
    call: Any

    @property
    def ok(self) -> bool:
        """True when the tool returned."""
        return self.error is None


#: What watches tool runs: called with each :class:`ToolRun`; awaited when it returns an
#: awaitable (the call's caller waits for it).
RunWatcher = Callable[[ToolRun], Awaitable[None] | None]

#: The watchers; the call path reads this list (empty: nothing more is done).
RUN_WATCHERS: Final[list[RunWatch]] = []


class RunWatch(Registration):
    """A watcher of tool runs: :meth:`stop` (or leaving a ``with`` block) removes it."""

    def __init__(self, watcher: RunWatcher) -> None:
        self.watcher = watcher
        super().__init__(RUN_WATCHERS)


def watch_runs(watcher: RunWatcher) -> RunWatch:
    """Call ``watcher`` with every tool run of this process from now on."""
    return RunWatch(watcher)


async def tool_ran(
    call: _Call,
    started: float,
    page: Any,
    host: Any,
    *,
    result: Any = None,
    error: BaseException | None = None,
) -> None:
    """Tell the watchers of a run of ``call`` that began at ``started``
    (:func:`time.perf_counter`) and returned ``result`` or raised ``error``. A watcher that
    fails is logged; the run's outcome stays what it was."""
    seconds = perf_counter() - started
    ref = call.ref
    source = call.source
    if source is not None:
        version: str | None = source.version
    else:
        version = python_version(ref.entry.directory / ref.spec.path)
    outcome, message = classify(error) if error is not None else (OK, "")
    run = ToolRun(
        site_id=ref.site_id,
        tool=ref.tool,
        version=version,
        args=call.args,
        result=result,
        error=error,
        outcome=outcome,
        message=message,
        started=time.time() - seconds,
        seconds=seconds,
        page=page,
        host=host,
        front_end=FRONT_END.get(),
        call=call,
    )
    for watch in list(RUN_WATCHERS):
        try:
            outcome_of = watch.watcher(run)
            if inspect.isawaitable(outcome_of):
                await outcome_of
        except Exception:
            logger.warning("a watcher of tool runs failed", exc_info=True)
