"""A trace: one file fed by one tab, or by every tab of a browser or a browser context.

:class:`Trace` follows its tabs (:mod:`.tabs`), those a browser opens after it started too
(:func:`ego.page.action_log.watch_new_tabs`), and watches tool runs
(:func:`ego.learning.health.watch.watch_runs`): a run in one of its tabs is captured there; a
run of its browser's site with no tab known (a Python tool) is a step without a screenshot.
Its steps are numbered as they end. When it stops, every tab's last requests and messages
are written, then the last line: the steps, what was left out, and the health of each tool
version the trace ran as ``ego health`` gives it then. Each failing tool run it holds is
named in the index of kept traces (:mod:`.index`), for ``ego report``'s links.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from ..errors import TraceFileError
from ..learning.health.watch import RunWatch, ToolRun, watch_runs
from ..page.action_log import TabWatch, watch_new_tabs
from ..page.contexts import BrowserContext
from .file import TraceFile
from .index import KeptFailure, note
from .options import TraceOptions
from .secrets import TraceSecrets
from .tabs import TabTrace, tab_of

if TYPE_CHECKING:
    from ..page.tab import Tab

__all__ = [
    "FORMAT",
    "Trace",
    "TraceSummary",
    "header",
    "trace_pages",
    "trace_tab",
    "versions_health",
]

logger = logging.getLogger("ego.trace")

#: The trace format's version, in its first line.
FORMAT = 1


@dataclass(frozen=True)
class TraceSummary:
    """What a trace holds, once it stopped.

    Attributes:
        path: the file.
        steps: the steps it holds.
        failed: the steps that raised.
        bytes: the file's size.
        omitted: what was left out to stay within its bound, by kind.
    """

    path: Path
    steps: int
    failed: int
    bytes: int
    omitted: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "trace": str(self.path),
            "steps": self.steps,
            "failed": self.failed,
            "bytes": self.bytes,
            "omitted": self.omitted,
        }


def header(options: TraceOptions, subject: str) -> dict[str, Any]:
    """A trace's first line."""
    return {
        "type": "trace",
        "format": FORMAT,
        "ego": _ego_version(),
        "t": time.time(),
        "subject": subject,
        "options": options.as_dict(),
    }


def _ego_version() -> str:
    """ego's version, as installed (the trace layer may not import the package's front)."""
    try:
        return metadata.version("ego")
    except metadata.PackageNotFoundError:
        return "unknown"


def versions_health(keys: set[tuple[str, str, str]]) -> list[dict[str, Any]]:
    """The health of each tool version, as ``ego health`` gives it now (read from the run
    record: call it off the event loop)."""
    if not keys:
        return []
    from ..learning.health.view import health_of

    found = health_of(sorted(keys))
    return [
        {
            "site": key[0],
            "tool": key[1],
            "version": key[2],
            "suspect": health.suspect,
            "health": health.line(),
            "runs": health.runs,
            "failures": health.failures,
            "needs_login": health.needs_login,
        }
        for key, health in found.items()
    ]


class Trace:
    """A trace being written (see the module docstring): ``async with`` it, or ``await`` it
    and :meth:`stop` it.

    Args:
        path: the trace file (replaced if it exists).
        options: what each step keeps and the file's bound.
        tab: trace this tab (and its frames).
        host: or every tab of this browser (its contexts' too) or browser context, those
            opened later included.
        subject: what the trace is of, as its viewer's title says (by default the tab's URL,
            or "browser").
        on_closed: called with the file's path once it is closed (``ego mcp`` copies it to
            where the agent asked, within its file limits).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        options: TraceOptions | None = None,
        *,
        tab: Tab | None = None,
        host: Any = None,
        subject: str | None = None,
        on_closed: Callable[[Path], None] | None = None,
    ) -> None:
        if (tab is None) == (host is None):
            raise ValueError("trace one tab (tab=) or a browser's tabs (host=)")
        self.path = Path(path)
        self.options = options or TraceOptions()
        self.secrets = TraceSecrets()
        self.summary: TraceSummary | None = None
        self._tab = tab
        self._host = host
        self._on_closed = on_closed
        self._subject = subject
        self._file: TraceFile | None = None
        self._tabs: dict[str, TabTrace] = {}
        self._steps = 0
        self._failed = 0
        self._versions: set[tuple[str, str, str]] = set()
        self._failures: list[KeptFailure] = []
        self._watches: list[TabWatch | RunWatch] = []
        self._following: set[asyncio.Task[None]] = set()

    @property
    def running(self) -> bool:
        """True between :meth:`start` and :meth:`stop`."""
        return self._file is not None and not self._file.closed

    def __await__(self) -> Generator[Any, None, Trace]:
        return self.start().__await__()

    async def __aenter__(self) -> Trace:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.stop()

    async def start(self) -> Trace:
        """Open the file and start following the tabs.

        Raises:
            TraceFileError: the file cannot be made there.
            TabClosedError: the tab traced is closed.
        """
        if self._file is not None:
            return self
        try:
            self._file = TraceFile(self.path, self.options, self.secrets)
        except OSError as exc:
            raise TraceFileError(
                f"cannot write the trace {self.path} ({exc.strerror or exc}): give a path in "
                "a folder that exists and can be written",
                path=str(self.path),
            ) from None
        subject = self._subject or (
            f"tab {self._tab.url}" if self._tab is not None else _subject(self._host)
        )
        self._file.write(header(self.options, self.secrets.url(subject)))
        self._watches.append(watch_runs(self._on_run))
        try:
            if self._tab is not None:
                await self._follow(self._tab)
            else:
                self._watches.append(watch_new_tabs(self._on_new_tab))
                for tab in await self._host.tabs():
                    await self._follow(tab)
        except BaseException:
            await self.stop()
            raise
        return self

    async def stop(self) -> TraceSummary:
        """Write what the tabs heard last and the last line, and close the file. Idempotent.

        Returns:
            what the trace holds.
        """
        if self.summary is not None:
            return self.summary
        for watch in self._watches:
            watch.stop()
        if self._following:
            await asyncio.wait(set(self._following), timeout=10)
        for traced in list(self._tabs.values()):
            with contextlib.suppress(Exception):
                await traced.stop()
        file = self._file
        if file is None:
            self.summary = TraceSummary(self.path, 0, 0, 0)
            return self.summary
        health: list[dict[str, Any]] = []
        try:
            health = await asyncio.to_thread(versions_health, self._versions)
        except Exception:
            logger.warning("the trace could not read the tools' health", exc_info=True)
        file.close(
            {"type": "end", "t": time.time(), "steps": self._steps, "failed": self._failed,
             "health": health}
        )  # fmt: skip
        note([_with_path(failure, self.path) for failure in self._failures])
        self.summary = TraceSummary(
            self.path, self._steps, self._failed, file.size, dict(file.omitted)
        )
        if self._on_closed is not None:
            self._on_closed(self.path)
        return self.summary

    # -- tabs ------------------------------------------------------------------------------

    async def _follow(self, tab: Tab) -> None:
        if tab.target_id in self._tabs or tab.closed or not self.running:
            return
        traced = TabTrace(tab, self.options, self.secrets, self)
        self._tabs[tab.target_id] = traced
        await traced.start()

    def _on_new_tab(self, tab: Tab, browser: Any, context: Any) -> None:
        host = self._host
        covered = context is host if isinstance(host, BrowserContext) else browser is host
        if not covered:
            return
        task = asyncio.get_running_loop().create_task(self._follow_quietly(tab))
        self._following.add(task)
        task.add_done_callback(self._following.discard)

    async def _follow_quietly(self, tab: Tab) -> None:
        try:
            await self._follow(tab)
        except Exception as exc:
            logger.debug("trace: could not follow %r: %s", tab, exc)

    def _runs_here(self, run: ToolRun) -> bool:
        host = self._host
        if host is None:
            return False
        return run.host is host or getattr(run.host, "browser", None) is host

    async def _on_run(self, run: ToolRun) -> None:
        page = run.page
        traced = self._tabs.get(tab_of(page).target_id) if page is not None else None
        if traced is not None:
            await traced.on_run(run)
        elif page is None and self._runs_here(run):
            from .records import tool_step

            step = tool_step(run, self.secrets, self.options.max_body)
            await self.step(None, step, not run.ok)

    # -- the sink --------------------------------------------------------------------------

    def record(self, trace: TabTrace | None, record: dict[str, Any]) -> None:
        if self._file is not None:
            self._file.write(record)

    async def step(self, trace: TabTrace | None, step: dict[str, Any], failed: bool) -> None:
        if self._file is None or self._file.closed:
            return
        self._steps += 1
        step["step"] = self._steps
        if failed:
            self._failed += 1
        failure = note_run(step, self._versions)
        if failure is not None:
            self._failures.append(failure)
        self._file.write(step)


def note_run(step: dict[str, Any], versions: set[tuple[str, str, str]]) -> KeptFailure | None:
    """Note the tool version a tool step ran (in ``versions``); the failure it is, if it
    failed (its path filled in once the trace is kept)."""
    if step.get("kind") != "tool":
        return None
    if step.get("version"):
        versions.add((str(step["site"]), str(step["tool"]), str(step["version"])))
    if step.get("ok"):
        return None
    return KeptFailure(
        site_id=str(step["site"]),
        tool=str(step["tool"]),
        version=step.get("version"),
        at=float(step["t"]) + float(step.get("seconds") or 0),
        outcome=str(step.get("outcome", "")),
        message=str(step.get("message", "")),
        path="",
    )


def _with_path(failure: KeptFailure, path: Path) -> KeptFailure:
    return dataclasses.replace(failure, path=str(path.resolve()))


def _subject(host: Any) -> str:
    if isinstance(host, BrowserContext):
        return f"browser context {host.context_id or '(default)'}"
    return "browser"


def trace_tab(
    tab: Tab, path: str | os.PathLike[str], *, subject: str | None = None, **options: Any
) -> Trace:
    """A trace of ``tab`` into ``path`` (what :meth:`ego.Tab.trace` returns).

    Raises:
        ValueError: an option out of its range (:class:`TraceOptions`).
    """
    return Trace(path, TraceOptions(**options), tab=tab, subject=subject)


def trace_pages(
    host: Any, path: str | os.PathLike[str], *, subject: str | None = None, **options: Any
) -> Trace:
    """A trace of every tab of ``host`` (a browser or a browser context) into ``path``.

    Raises:
        ValueError: an option out of its range (:class:`TraceOptions`).
    """
    return Trace(path, TraceOptions(**options), host=host, subject=subject)
