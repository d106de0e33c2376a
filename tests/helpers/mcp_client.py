"""A client of ``ego mcp`` run as a real subprocess over stdio, and reads of its tool results."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import psutil
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import (
    CallToolResult,
    ListRootsResult,
    Root,
    TextContent,
    Tool,
    ToolListChangedNotification,
)
from pydantic import FileUrl

from tests.helpers.commands import ego_env
from tests.helpers.processes import is_chrome, process_tree


class McpClient:
    """An ``ego mcp`` subprocess and a connected SDK ClientSession, owned by one task."""

    def __init__(
        self,
        env: dict[str, str],
        cwd: Path,
        errlog: Path,
        args: Sequence[str] = (),
        *,
        roots: Sequence[Path] = (),
    ) -> None:
        self.params = StdioServerParameters(
            command=sys.executable, args=["-m", "ego", "mcp", *args], env=env, cwd=str(cwd)
        )
        #: The file roots this client declares to the server (none: it declares no roots).
        self.roots = list(roots)
        self.errlog = errlog
        self._others: set[int] = set()
        #: The server's output folder, when a test gave it one.
        self.output = cwd
        #: Set each time the server sends notifications/tools/list_changed.
        self.tools_changed = asyncio.Event()
        self.session: ClientSession | None = None
        self.server: psutil.Process | None = None
        self.chromes_at_start: list[psutil.Process] = []
        self.descendants: dict[int, psutil.Process] = {}
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def start(self, timeout: float = 60) -> None:
        # Other clients' servers may run beside this one: this one is the child born now.
        self._others = {child.pid for child in psutil.Process().children()}
        self._task = asyncio.create_task(self._run())
        ready = asyncio.create_task(self._ready.wait())
        done, _ = await asyncio.wait(
            {ready, self._task}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
        )
        if ready not in done:
            ready.cancel()
            if self._task in done:
                self._task.result()  # raises what went wrong
            raise AssertionError(f"the MCP server did not initialize within {timeout} s")

    async def _run(self) -> None:
        with self.errlog.open("w") as errlog:
            async with (
                stdio_client(self.params, errlog=errlog) as (read, write),
                ClientSession(
                    read,
                    write,
                    message_handler=self._on_message,
                    list_roots_callback=self._list_roots if self.roots else None,
                ) as session,
            ):
                self.initialized = await session.initialize()
                self.session = session
                self.server = _find_server(self._others)
                self.chromes_at_start = [p for p in process_tree(self.server) if is_chrome(p)]
                self._ready.set()
                await self._stop.wait()

    async def _list_roots(self, context: Any) -> ListRootsResult:
        return ListRootsResult(
            roots=[Root(uri=FileUrl(root.resolve().as_uri())) for root in self.roots]
        )

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, ToolListChangedNotification):
            self.tools_changed.set()

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def remember_descendants(self) -> list[psutil.Process]:
        """The server's descendants now (Chrome, its helpers, the watchdog), remembered."""
        assert self.server is not None
        for process in process_tree(self.server):
            self.descendants.setdefault(process.pid, process)
        return list(self.descendants.values())

    async def call(self, name: str, arguments: dict[str, Any] | None = None) -> CallToolResult:
        assert self.session is not None
        assert self.running
        result = await asyncio.wait_for(self.session.call_tool(name, arguments or {}), 60)
        self.remember_descendants()
        check_convention(name, result)
        return result

    async def tools(self) -> dict[str, Tool]:
        assert self.session is not None
        listed = await asyncio.wait_for(self.session.list_tools(), 30)
        return {tool.name: tool for tool in listed.tools}

    async def close(self, timeout: float = 30) -> None:
        """Disconnect the client (closes the server's stdin) and wait for the transport."""
        if self._task is None:
            return
        self._stop.set()
        await asyncio.wait_for(self._task, timeout)


def _find_server(others: set[int]) -> psutil.Process:
    """The ``ego mcp`` child of this process that is not among ``others``."""
    for child in psutil.Process().children():
        if child.pid in others:
            continue
        try:
            if child.cmdline()[1:4] == ["-m", "ego", "mcp"]:
                return child
        except psutil.Error:
            continue
    raise AssertionError("no `ego mcp` child process found")


def check_convention(name: str, result: CallToolResult) -> None:
    """Every tool answers alike: one text block and, on success, structured content."""
    texts = [part for part in result.content if isinstance(part, TextContent)]
    assert len(texts) == 1, (name, result.content)
    if not result.is_error:
        assert isinstance(result.structured_content, dict), (name, result)


def text_of(result: CallToolResult) -> str:
    return "\n".join(part.text for part in result.content if isinstance(part, TextContent))


def value_of(result: CallToolResult) -> Any:
    """A successful tool's JSON value (structured content when the tool declares a schema)."""
    assert not result.is_error, text_of(result)
    if result.structured_content is not None:
        content = result.structured_content
        return content["result"] if set(content) == {"result"} else content
    return json.loads(text_of(result))


@contextlib.asynccontextmanager
async def serving(
    base: Path, *args: str, workspace: Path | None = None
) -> AsyncIterator[McpClient]:
    """An ``ego mcp`` server started in ``base`` (its profiles, output and stderr log there)
    with ``args`` and learnings in ``workspace`` (None: the project's), and its client,
    disconnected at the end unless the server already ended."""
    env = ego_env(base / "profiles", workspace=workspace)
    client = McpClient(env, base, base / "server-stderr.log", args)
    await client.start()
    try:
        yield client
    finally:
        if client.running:
            await client.close()


async def start(
    tmp_path_factory: pytest.TempPathFactory, name: str, *args: str, roots: list[Path] | None = None
) -> tuple[McpClient, Path]:
    base = tmp_path_factory.mktemp(name)
    output = base / "out"
    env = ego_env(base / "profiles", workspace=base / "ws")
    client = McpClient(
        env,
        base,
        base / "server-stderr.log",
        ["--output-dir", str(output), *args],
        roots=roots or [],
    )
    await client.start()
    return client, output


def refused(result: object, *fragments: str) -> str:
    text = text_of(result)  # type: ignore[arg-type]
    assert result.is_error is True, text  # type: ignore[attr-defined]
    assert "\n" not in text.strip(), text
    for fragment in fragments:
        assert fragment in text, text
    return text


def payload(result: Any) -> Any:
    """A tool result's value: its structured content (unwrapped), else its text as JSON."""
    assert not result.is_error, result.content
    structured = result.structured_content
    if isinstance(structured, dict):
        return structured["result"] if set(structured) == {"result"} else structured
    return json.loads(result.content[0].text)


def error_text(result: Any) -> str:
    assert result.is_error
    return " ".join(getattr(part, "text", "") for part in result.content)
