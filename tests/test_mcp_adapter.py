"""The MCP SDK behind one module, tool groups declared with each tool, and a tool list that does
no file or database work on the event loop. No browser: the servers here are built and asked
for their tools only.
"""

from __future__ import annotations

import ast
import asyncio
import importlib.metadata
import sys
import threading
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement

from ego.learning.catalog.registry import Learnings
from ego.mcp.ego_server import EgoServer
from ego.mcp.holder import READ_ONLY, BrowserHolder
from ego.mcp.limits import GROUPS, ServerLimits, ToolGroup
from ego.mcp.sdk import CallToolResult, SchemaTool
from ego.mcp.server import build_server
from tests.helpers.learnings import ECHO, make_site, tool

ROOT = Path(__file__).resolve().parent.parent
SDK_PACKAGES = ("mcp", "mcp_types")
ADAPTER = Path("ego/mcp/sdk.py")


def sdk_imports(path: Path) -> list[str]:
    """The SDK modules ``path`` imports, wherever in the file (functions and TYPE_CHECKING too)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found += [name for name in names if name.split(".")[0] in SDK_PACKAGES]
    return found


def test_no_ego_module_but_the_adapter_imports_the_sdk() -> None:
    offenders = {
        str(path.relative_to(ROOT)): imported
        for path in sorted((ROOT / "ego").rglob("*.py"))
        if path.relative_to(ROOT) != ADAPTER and (imported := sdk_imports(path))
    }
    assert offenders == {}, "import the MCP SDK's names from ego.mcp.sdk"
    assert "mcp.server.mcpserver" in sdk_imports(ROOT / ADAPTER)  # the check sees imports


def test_the_sdk_requirement_has_an_upper_bound_the_installed_sdk_meets() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    [mcp] = [
        requirement
        for line in project["project"]["dependencies"]
        if (requirement := Requirement(line)).name == "mcp"
    ]
    assert any(spec.operator == "<" for spec in mcp.specifier), mcp
    installed = importlib.metadata.version("mcp")
    assert mcp.specifier.contains(installed), (str(mcp), installed)
    assert importlib.metadata.version("mcp-types") == installed


# -- tool groups -------------------------------------------------------------------------------


def server_on(root: Path, limits: ServerLimits | None = None) -> EgoServer:
    holder = BrowserHolder(
        endpoint=None,
        profile=None,
        headless=True,
        learnings=Learnings(roots=[root]),
        limits=limits,
    )
    return build_server(holder)


@pytest.fixture
def site_root(tmp_path: Path) -> Path:
    """A site with a read tool and a write tool."""
    make_site(
        tmp_path,
        "shop",
        domains=["shop.test"],
        browser_tools={
            "look": tool(ECHO, sideEffect="read"),
            "buy": tool(ECHO, sideEffect="write"),
        },
    )
    return tmp_path


async def served(server: EgoServer) -> set[str]:
    return {listed.name for listed in await server.list_tools()}


async def test_every_served_tool_has_a_group(site_root: Path) -> None:
    server = server_on(site_root)
    groups = server.tool_groups()
    assert await served(server) == set(groups)
    assert set(groups.values()) == set(GROUPS)  # every group holds a tool
    assert groups["navigate"] == "pages"
    assert groups["evaluate"] == "input"
    assert groups["shop__look"] == groups["tool_health"] == "learnings"


@pytest.mark.parametrize(
    "chosen",
    [
        *((group,) for group in GROUPS),
        ("pages", "network"),
        ("learnings", "saving"),
    ],
)
async def test_tools_serves_exactly_the_tools_of_the_groups_chosen(
    site_root: Path, chosen: tuple[ToolGroup, ...]
) -> None:
    every = server_on(site_root).tool_groups()
    server = server_on(site_root, ServerLimits(groups=frozenset(chosen)))
    assert await served(server) == {name for name, group in every.items() if group in chosen}
    assert set(server.tool_groups().values()) == set(chosen)


async def test_read_only_serves_the_tools_kept_there_of_the_groups_chosen(site_root: Path) -> None:
    server = server_on(site_root, ServerLimits(read_only=True, groups=frozenset({"learnings"})))
    names = await served(server)
    assert {"learn_context", "run_browser_tool", "tool_health", "shop__look"} <= names
    assert "shop__buy" not in names  # a write tool
    assert set(server.tool_groups().values()) == {"learnings"}


async def test_the_tools_that_name_a_file_are_held_to_the_operators_file_limits(
    site_root: Path,
) -> None:
    # The client's roots are asked for before these run; each resolves its path through the
    # server's FileAccess. The trace tools are served when the operator asks for them.
    assert not {"start_trace", "stop_trace"} & await served(server_on(site_root))
    server = server_on(site_root, ServerLimits(trace_tools=True))
    assert {"start_trace", "stop_trace"} <= await served(server)
    for name in ("take_screenshot", "save_pdf", "upload_file", "start_trace", "stop_trace"):
        assert server.uses_files(name), name
    assert not server.uses_files("navigate")


def bare_server() -> EgoServer:
    async def nothing() -> None:
        return None

    return EgoServer(name="t", instructions="t", limits=ServerLimits(), on_close=nothing)


async def answer() -> CallToolResult:
    return CallToolResult(content=[])


def test_a_tool_without_a_group_is_refused_at_registration() -> None:
    server = bare_server()
    with pytest.raises(TypeError, match="group"):
        server.tool(annotations=READ_ONLY)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="'everything' is not one of learnings, pages"):
        server.tool(group="everything", annotations=READ_ONLY)  # type: ignore[arg-type]
    schema_tool = SchemaTool(
        name="site__tool",
        description="d",
        input_schema={"type": "object"},
        annotations=READ_ONLY,
        handler=lambda arguments: answer(),
    )
    with pytest.raises(ValueError, match="'' is not one of"):
        server.put_schema_tool(schema_tool, group="", in_read_only=True)  # type: ignore[arg-type]
    assert server.tool_groups() == {}

    @server.tool(group="pages", annotations=READ_ONLY)
    async def twice() -> CallToolResult:
        return await answer()

    with pytest.raises(ValueError, match="'twice' is registered already"):
        server.tool(group="input", annotations=READ_ONLY)(twice)
    assert server.tool_groups() == {"twice": "pages"}


# -- tools/list on the event loop --------------------------------------------------------------

#: Audit events of file and database work (open() and os.open, SQLite, folder listings).
_FILE_EVENTS = frozenset({"open", "sqlite3.connect", "os.listdir", "os.scandir"})
_watched: set[int] = set()
_seen: list[tuple[str, str]] = []
_hooked = False


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _watched and event in _FILE_EVENTS and threading.get_ident() in _watched:
        _seen.append((event, str(args[0]) if args else ""))


@pytest.fixture
def file_work_on_this_thread() -> Iterator[list[tuple[str, str]]]:
    """The file and database work done on this thread while the fixture is in use."""
    global _hooked
    if not _hooked:  # an audit hook stays for the process: one, idle unless watching
        sys.addaudithook(_audit)
        _hooked = True
    _seen.clear()
    _watched.add(threading.get_ident())
    try:
        yield _seen
    finally:
        _watched.clear()


async def test_tools_list_reads_no_file_and_no_database_on_the_loop(
    site_root: Path, file_work_on_this_thread: list[tuple[str, str]]
) -> None:
    server = server_on(site_root)  # building it reads the learnings, as it should
    file_work_on_this_thread.clear()
    # The watch sees this thread's file work: reading a manifest is seen.
    (site_root / "shop" / "manifest.json").read_bytes()
    assert [event for event, _ in file_work_on_this_thread] == ["open"]
    file_work_on_this_thread.clear()
    assert asyncio.get_running_loop()  # the list below is asked for on the loop's thread
    first = await server.list_tools()
    again = await server.list_tools()
    assert file_work_on_this_thread == []
    assert {"shop__look", "shop__buy"} <= {listed.name for listed in first}
    assert [t.model_dump() for t in first] == [t.model_dump() for t in again]
