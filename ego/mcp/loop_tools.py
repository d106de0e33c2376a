"""MCP tools of the learning loop's two ends: record what the agent does in a tab, draft tools
from the recording, keep a draft, and heal a tool that stopped working.

- ``start_recording`` / ``stop_recording`` (group ``network``): the current tab's traffic
  into a HAR inside the server's folders (the operator's file limits), secrets stripped as
  ``ego record`` strips them, and its page actions beside it (``<name>.actions.json``,
  :class:`ego.actions.ActionRecording`), from which ``suggest_tools`` drafts a Python tool;
- ``suggest_tools``, ``save_draft``, ``heal_tool`` (group ``saving``): ``ego suggest`` and
  ``ego heal`` for an agent; a kept draft or a promoted candidate is served as its own MCP
  tool at once.

``build_server`` adds them with ``add_loop_tools(server, holder)``.
"""

from __future__ import annotations

import asyncio
import json
import weakref
from typing import Annotated, Any, Literal

from pydantic import Field

from ..actions import ActionRecording
from ..learning.suggest import suggest, suggest_actions
from ..replay.har_bounds import MAX_HAR_BYTES, MAX_HAR_ENTRIES, HarBounds
from ..replay.recorder import Recorder
from ..replay.secret_values import strip_values
from .ego_server import EgoServer
from .holder import READ_ONLY, BrowserHolder, call, check
from .learning_tools import saved_tool_result
from .results import tool_result
from .sdk import CallToolResult, Context, ToolAnnotations, ToolError

__all__ = ["add_loop_tools"]

#: Writes to the agent workspace only (drafts, a new version; the old one is kept).
_SAVES = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=True
)


class _Recording:
    """The recording a server runs (one at a time)."""

    def __init__(self, recorder: Recorder, path: str, actions: ActionRecording) -> None:
        self.recorder = recorder
        self.path = path
        self.actions = actions


def _omitted(recorder: Recorder) -> dict[str, Any] | None:
    """What the recording left out past its bounds, and the fix in the words of MCP."""
    if not recorder.omitted:
        return None
    line = recorder.omitted.describe(recorder.bounds)
    return {
        **recorder.omitted.as_dict(),
        "message": f"{line} (raise max_entries or max_bytes of start_recording to keep it)",
    }


_recordings: weakref.WeakKeyDictionary[BrowserHolder, _Recording] = weakref.WeakKeyDictionary()


def add_loop_tools(server: EgoServer, holder: BrowserHolder) -> None:
    """Register ``start_recording``, ``stop_recording``, ``suggest_tools``, ``save_draft``
    and ``heal_tool`` on ``server``."""

    @server.tool(group="network", in_read_only=True, annotations=READ_ONLY, files=True)
    async def start_recording(
        path: Annotated[str | None, Field(description="The HAR file to write.")] = None,
        max_entries: Annotated[int, Field(ge=1)] = MAX_HAR_ENTRIES,
        max_bytes: Annotated[int, Field(ge=1)] = MAX_HAR_BYTES,
    ) -> CallToolResult:
        """Record what the tab loads (pages, API calls; no secrets) into a HAR, and the page
        actions beside it, until stop_recording, for suggest_tools."""
        running = _recordings.get(holder)
        if running is not None and running.recorder.running:
            raise ToolError(
                f"a recording into {running.path} is running: stop_recording ends it first"
            )
        count = len(_recordings) + 1
        target = check(lambda: holder.files.for_writing(path or f"recording-{count}.har"))
        tab = await holder.tab()
        bounds = HarBounds(max_entries=max_entries, max_bytes=max_bytes)
        recorder = Recorder(tab, bounds=bounds)  # stop_recording writes it, following no link
        await call(recorder.start)
        actions = await ActionRecording(tab).start()  # kept in memory, written beside
        _recordings[holder] = _Recording(recorder, str(target), actions)
        return tool_result({"har": str(target), "tab": tab.target_id})

    @server.tool(group="network", in_read_only=True, annotations=READ_ONLY)
    async def stop_recording() -> CallToolResult:
        """End and write the recording. Returns {har, entries, omitted, left_out, ...}."""
        running = _recordings.pop(holder, None)
        if running is None:
            raise ToolError("no recording is running: start_recording starts one")

        async def stop() -> Any:
            await running.recorder.wait_idle(quiet=0.5, timeout=5.0)
            return await running.recorder.stop()

        har = await call(stop)
        flow = await running.actions.stop()
        strip_values(har, running.actions.secrets.values)  # what was typed into secrets
        data = har.dumps().encode()
        await call(lambda: asyncio.to_thread(holder.files.write, running.path, data))
        flow.har = running.path.rsplit("/", 1)[-1]
        actions_path = running.path.removesuffix(".har") + ".actions.json"
        flow_data = json.dumps(flow.as_dict(), indent=2, ensure_ascii=False).encode()
        await call(lambda: asyncio.to_thread(holder.files.write, actions_path, flow_data))
        hosts: dict[str, int] = {}
        for entry in har.entries:
            host = entry.request.url.split("/")[2] if "://" in entry.request.url else "?"
            hosts[host] = hosts.get(host, 0) + 1
        return tool_result(
            {
                "har": running.path,
                "entries": len(har.entries),
                "hosts": hosts,
                "actions": actions_path,
                "steps": len(flow.steps),
                "omitted": _omitted(running.recorder),
                "left_out": list(flow.left_out),
            }
        )

    @server.tool(group="saving", annotations=_SAVES, files=True)
    async def suggest_tools(
        site_id: str,
        har_paths: Annotated[
            list[str], Field(description="stop_recording's HAR files, or its .actions.json")
        ],
        check_cases: Annotated[bool, Field(description="Run each draft's cases.")] = False,
    ) -> CallToolResult:
        """Draft a browser tool per JSON endpoint the recordings show (a Python tool per flow
        of page actions), with args, returns and offline cases; save_draft keeps one."""
        files = check(lambda: [holder.files.for_reading(p) for p in har_paths])
        flows = all(str(p).endswith(".actions.json") for p in files)

        async def draft() -> Any:
            if flows:
                return suggest_actions(site_id, list(files), learnings=holder.learnings)
            return suggest(site_id, list(files), learnings=holder.learnings)

        report = await call(draft)
        data = report.as_dict()
        data["skipped"] = data["skipped"][:50]
        if check_cases and report.drafts:
            browser = await holder.browser()
            data["checked"] = {}
            for drafted in report.drafts:
                name = drafted.tool

                async def run(name: str = name) -> Any:
                    return await browser.site.check_draft(site_id, name)

                data["checked"][name] = [r.to_dict() for r in await call(run)]
        return tool_result(data)

    @server.tool(group="saving", annotations=_SAVES)
    async def save_draft(
        site_id: str,
        tool: str,
        description: Annotated[str | None, Field(description="Better than the draft's.")] = None,
        side_effect: Annotated[
            Literal["read", "write", "irreversible"] | None,
            Field(description="A drafted write is irreversible unless you say write."),
        ] = None,
        ctx: Context[Any, Any] | None = None,
    ) -> CallToolResult:
        """Keep a drafted tool, checked as save_browser_tool and its cases run."""
        browser = await holder.browser()
        saved = await call(
            lambda: browser.site.save_draft(
                site_id, tool, description=description, side_effect=side_effect, front_end="mcp"
            )
        )
        data = saved.as_dict()
        return await saved_tool_result(server, holder, site_id, tool, data, ctx)

    @server.tool(group="saving", annotations=_SAVES)
    async def heal_tool(
        site_id: str,
        tool: str,
        step: Literal["diagnose", "check", "promote"] = "diagnose",
        accept_changed_cases: Annotated[
            list[str] | None, Field(description="promote: cases whose result may change.")
        ] = None,
        confirm: Annotated[
            bool, Field(description="diagnose: allow an irreversible tool's live run.")
        ] = False,
        ctx: Context[Any, Any] | None = None,
    ) -> CallToolResult:
        """Mend a failing tool. diagnose: run its cases and a live run, say what changed and
        write candidate.js; check: test the candidate; promote: save it."""
        browser = await holder.browser()
        site = browser.site
        if step == "diagnose":
            report = await call(lambda: site.heal_tool(site_id, tool, confirm=confirm))
            return tool_result(report.as_dict())
        if step == "check":
            result = await call(lambda: site.check_candidate(site_id, tool))
            return tool_result(result.as_dict())
        done = await call(
            lambda: site.promote_candidate(
                site_id, tool, accept_changed_cases=accept_changed_cases or (), front_end="mcp"
            )
        )
        data = done.as_dict()
        return await saved_tool_result(server, holder, site_id, tool, data, ctx)
