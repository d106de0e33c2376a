"""Traces of failing steps only: a file for each, in a folder (``ego batch --trace-failures``,
``ego mcp --trace-failures``).

:class:`FailureTraces` follows every tab any browser of this process makes while it runs
(and the tab of each tool run it sees), as a trace does, but keeps what each tab heard in
memory, in a window bounded in bytes (the oldest records go first). When a step fails (a
tool run, or an action of an agent), the window and the step go to a new file, named for
the step (a batch names its input), and the window starts again; a tool run that passes
ends its window too (it was that input's), so a batch keeps nothing of its passing inputs.
Screenshots are taken of the steps the window keeps: a tool run's when it failed, an
action's always (its window shows the steps that led to a failure).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import re
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ..errors import TraceFileError
from ..learning.health.watch import RunWatch, ToolRun, watch_runs
from ..page.action_log import TabWatch, watch_new_tabs
from ..protocol.jsontext import json_bytes
from .file import TraceFile
from .index import note
from .options import TraceOptions
from .records import tool_step
from .secrets import TraceSecrets
from .tabs import TabTrace, tab_of
from .tracer import header, note_run, versions_health

if TYPE_CHECKING:
    from ..page.tab import Tab

__all__ = ["WINDOW_BYTES", "FailureTraces"]

logger = logging.getLogger("ego.trace")

#: The most a tab's window keeps in memory, in bytes of JSON.
WINDOW_BYTES: Final = 16 * 1024 * 1024
_UNSAFE: Final = re.compile(r"[^A-Za-z0-9._-]+")


class _Window:
    """What one tab heard since its last step that ended a window."""

    def __init__(self, most: int) -> None:
        self.most = most
        self.records: deque[tuple[dict[str, Any], int]] = deque()
        self.size = 0
        self.dropped = 0

    def add(self, record: dict[str, Any]) -> None:
        size = len(json_bytes(record))
        self.records.append((record, size))
        self.size += size
        while self.size > self.most and len(self.records) > 1:
            _, gone = self.records.popleft()
            self.size -= gone
            self.dropped += 1

    def take(self) -> list[dict[str, Any]]:
        taken = [record for record, _ in self.records]
        self.records.clear()
        self.size = 0
        self.dropped = 0
        return taken


class FailureTraces:
    """Keeps a trace file of each failing step (see the module docstring).

    Args:
        folder: where the files go (made ``0700`` when missing).
        options: what each step keeps, and each file's bound.
        label: names a tool run's step (a batch gives its input's index), or None.
        window_bytes: the most each tab's window keeps.

    Attributes:
        kept: the files written, oldest first.
        labelled: the file of each labelled step kept (a batch's input), by its label.
    """

    def __init__(
        self,
        folder: str | os.PathLike[str],
        options: TraceOptions | None = None,
        *,
        label: Callable[[ToolRun], str | None] | None = None,
        window_bytes: int = WINDOW_BYTES,
    ) -> None:
        self.folder = Path(folder)
        self.options = options or TraceOptions()
        self.secrets = TraceSecrets()
        self.label = label
        self.window_bytes = window_bytes
        self.kept: list[Path] = []
        self.labelled: dict[str, Path] = {}
        self._tabs: dict[str, TabTrace] = {}
        self._windows: dict[str, _Window] = {}
        self._watches: list[TabWatch | RunWatch] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._count = 0
        self._running = False

    async def __aenter__(self) -> FailureTraces:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def start(self) -> FailureTraces:
        """Make the folder and start following every new tab and watching tool runs.

        Raises:
            TraceFileError: the folder cannot be made or is not one.
        """
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise TraceFileError(
                f"cannot keep traces in {self.folder} ({exc.strerror or exc}): give a folder "
                "that can be made and written",
                path=str(self.folder),
            ) from None
        self._running = True
        self._watches = [watch_new_tabs(self._on_new_tab), watch_runs(self._on_run)]
        return self

    async def stop(self) -> None:
        """Stop following; what the windows hold of passing steps is let go. Idempotent."""
        if not self._running:
            return
        self._running = False
        for watch in self._watches:
            watch.stop()
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=10)
        for traced in list(self._tabs.values()):
            with contextlib.suppress(Exception):
                await traced.stop()

    # -- tabs ------------------------------------------------------------------------------

    def _on_new_tab(self, tab: Tab, browser: Any, context: Any) -> None:
        task = asyncio.get_running_loop().create_task(self._follow_quietly(tab))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _follow_quietly(self, tab: Tab) -> None:
        try:
            await self._follow(tab)
        except Exception as exc:
            logger.debug("trace: could not follow %r: %s", tab, exc)

    async def _follow(self, tab: Tab) -> TabTrace | None:
        if not self._running or tab.closed:
            return None
        traced = self._tabs.get(tab.target_id)
        if traced is None:
            traced = TabTrace(tab, self.options, self.secrets, self)
            self._tabs[tab.target_id] = traced
            self._windows[tab.target_id] = _Window(self.window_bytes)
            await traced.start()
        return traced

    async def _on_run(self, run: ToolRun) -> None:
        label = self.label(run) if self.label is not None else None
        traced = None
        if run.page is not None:
            with contextlib.suppress(Exception):
                traced = await self._follow(tab_of(run.page))
        if traced is not None:
            await traced.on_run(run, label)
        elif not run.ok:
            step = tool_step(run, self.secrets, self.options.max_body)
            if label is not None:
                step["input"] = label
            await self._keep([step])

    # -- the sink --------------------------------------------------------------------------

    def record(self, trace: TabTrace, record: dict[str, Any]) -> None:
        window = self._windows.get(trace.id)
        if window is not None:
            window.add(record)

    async def step(self, trace: TabTrace, step: dict[str, Any], failed: bool) -> None:
        window = self._windows.get(trace.id)
        if window is None:
            return
        if failed:
            dropped = window.dropped
            await self._keep([*window.take(), step], dropped=dropped)
        elif step.get("kind") == "tool":
            window.take()  # a passing run: its input's window ends
        else:
            window.add(step)

    async def _keep(self, records: list[dict[str, Any]], *, dropped: int = 0) -> None:
        """Write ``records`` (the last one the failing step) to a new file."""
        failing = records[-1]
        path = self._name(failing)
        versions: set[tuple[str, str, str]] = set()
        failures = []
        try:
            file = TraceFile(path, self.options, self.secrets)
        except OSError as exc:
            logger.warning("trace: could not keep the trace of a failure in %s: %s", path, exc)
            return
        file.write(header(self.options, f"a failing step of {failing.get('url') or 'a run'}"))
        steps = 0
        for record in records:
            if record.get("type") == "step":
                steps += 1
                record = {**record, "step": steps}
                failure = note_run(record, versions)
                if failure is not None:
                    failures.append(dataclasses.replace(failure, path=str(path.resolve())))
            file.write(record)
        health: list[dict[str, Any]] = []
        with contextlib.suppress(Exception):
            health = await asyncio.to_thread(versions_health, versions)
        end = {"type": "end", "t": time.time(), "steps": steps, "failed": 1, "health": health}
        if dropped:
            end["window_dropped"] = dropped
        file.close(end)
        note(failures)
        self.kept.append(path)
        if failing.get("input") is not None:
            self.labelled[str(failing["input"])] = path

    def _name(self, step: dict[str, Any]) -> Path:
        self._count += 1
        what = step.get("input") or step.get("tool") or step.get("verb") or "step"
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(float(step.get("t") or time.time())))
        base = _UNSAFE.sub("-", f"{stamp}-{self._count:04d}-{what}").strip("-")[:120]
        return self.folder / f"{base}.trace.jsonl"
