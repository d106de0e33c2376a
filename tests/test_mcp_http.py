"""``ego mcp --http``: several agents on one server and one Chrome, each session in a browser
context of its own, through the MCP SDK's own streamable HTTP client.

The server runs as a real subprocess attached to a Chrome this test run started with a port
(``ported_browser``), so that the tests can look into Chrome itself: which contexts and tabs
exist while the sessions run and after they end.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import stat
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, ListRootsResult, Root
from pydantic import FileUrl

import ego
from ego.mcp.learning_tools import mcp_name

from .cli_helpers import PYTHON_EGO, ego_env
from .conftest import PageServer
from .learning_fixtures import make_site, tool
from .test_mcp import check_convention, text_of, value_of

pytestmark = pytest.mark.chrome

USERS = ("alice", "bob", "carol", "dave")
CALLS = 50
WHOAMI = "async () => ({who: localStorage.getItem('who'), cookie: document.cookie})\n"
HOME = (
    "<title>home</title><p id='who'></p><script>document.getElementById('who').textContent ="
    " 'cookie ' + document.cookie + ' storage ' + localStorage.getItem('who')</script>"
)


def login_page(server: PageServer, user: str) -> str:
    return server.route(
        f"/acct/login/{user}",
        f"<title>{user}</title><script>localStorage.setItem('who', '{user}')</script>",
        headers={"Set-Cookie": f"user={user}; Path=/; Max-Age=3600"},
    )


@dataclass
class HttpServer:
    """An ``ego mcp --http`` subprocess: its address, token and what it says on stderr."""

    process: asyncio.subprocess.Process
    url: str = ""
    token: str = ""
    token_file: Path | None = None
    lines: list[str] = field(default_factory=list)
    _seen: asyncio.Condition = field(default_factory=asyncio.Condition)
    _reader: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._reader = asyncio.create_task(self._read())
        line = await self.wait_for(r"serving (\S+)", timeout=90)
        match = re.search(r"serving (\S+);( token (\S+) \(also in (\S+)\))?", line)
        assert match, line
        self.url = match.group(1)
        if match.group(3):
            self.token = match.group(3)
            self.token_file = Path(match.group(4))

    async def _read(self) -> None:
        assert self.process.stderr is not None
        while raw := await self.process.stderr.readline():
            async with self._seen:
                self.lines.append(raw.decode().rstrip())
                self._seen.notify_all()

    async def wait_for(self, pattern: str, *, count: int = 1, timeout: float = 60) -> str:
        """The ``count``-th stderr line matching ``pattern``, waited for (bounded)."""

        def found() -> list[str]:
            return [line for line in self.lines if re.search(pattern, line)]

        async with self._seen:
            try:
                await asyncio.wait_for(self._seen.wait_for(lambda: len(found()) >= count), timeout)
            except TimeoutError:
                raise AssertionError(f"no {pattern!r} x{count} on stderr: {self.lines}") from None
        return found()[count - 1]

    async def stop(self) -> None:
        if self.process.returncode is None:
            self.process.terminate()
            await asyncio.wait_for(self.process.wait(), 60)
        if self._reader is not None:
            await self._reader


@contextlib.asynccontextmanager
async def http_server(
    workspace: Path, home: Path, chrome: ego.Browser, *args: str
) -> AsyncIterator[HttpServer]:
    assert chrome.endpoint is not None
    process = await asyncio.create_subprocess_exec(
        *PYTHON_EGO,
        "mcp",
        "--http",
        "--port",
        "0",
        "--endpoint",
        chrome.endpoint,
        *args,
        env=ego_env(home / "profiles", workspace=workspace),
        cwd=home,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    server = HttpServer(process)
    try:
        await server.start()
        yield server
    finally:
        await server.stop()


@contextlib.asynccontextmanager
async def mcp_session(
    server: HttpServer, *, token: str | None = None, roots: Sequence[Path] = ()
) -> AsyncIterator[ClientSession]:
    """An MCP session through the SDK's streamable HTTP client, ended (DELETE) on leaving."""

    async def list_roots(context: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=FileUrl(r.resolve().as_uri())) for r in roots])

    headers = {"Authorization": f"Bearer {token or server.token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        streamable_http_client(server.url, http_client=http) as (read, write),
        ClientSession(read, write, list_roots_callback=list_roots if roots else None) as session,
    ):
        await asyncio.wait_for(session.initialize(), 60)
        yield session


async def call(session: ClientSession, name: str, arguments: dict[str, Any]) -> CallToolResult:
    result = await asyncio.wait_for(session.call_tool(name, arguments), 60)
    check_convention(name, result)
    return result


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory, server: PageServer) -> Path:
    root = tmp_path_factory.mktemp("mcp-http")
    make_site(
        root / "learnings",
        "acct",
        domains=["127.0.0.1"],
        start_url=server.url("/acct/home"),
        browser_tools={"whoami": tool(WHOAMI, description="who is logged in here")},
    )
    server.route("/acct/home", HOME)
    for user in USERS:
        login_page(server, user)
    return root


@pytest.fixture(scope="module")
async def shared(workspace: Path, ported_browser: ego.Browser) -> AsyncIterator[HttpServer]:
    """One ``ego mcp --http`` for the module, on the test run's ported Chrome."""
    async with http_server(workspace, workspace, ported_browser) as running:
        yield running


async def contexts_of(chrome: ego.Browser) -> set[str]:
    listed = await chrome.connection.send("Target.getBrowserContexts")
    return set(listed["browserContextIds"])


async def pages_in(chrome: ego.Browser, contexts: set[str]) -> list[str]:
    targets = await chrome.connection.send("Target.getTargets")
    return [
        info["url"]
        for info in targets["targetInfos"]
        if info["type"] == "page" and info.get("browserContextId") in contexts
    ]


async def test_requests_without_the_token_are_refused(shared: HttpServer) -> None:
    assert shared.token_file is not None
    assert stat.S_IMODE(shared.token_file.stat().st_mode) == 0o600
    assert shared.token_file.read_text().strip() == shared.token
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    async with httpx2.AsyncClient(timeout=30) as http:
        missing = await http.post(shared.url, json=body)
        wrong = await http.post(
            shared.url, json=body, headers={"Authorization": "Bearer not-the-token"}
        )
        basic = await http.post(
            shared.url, json=body, headers={"Authorization": f"Basic {shared.token}"}
        )
    for answer in (missing, wrong, basic):
        assert answer.status_code == 401
        assert answer.headers["www-authenticate"].startswith("Bearer")
        assert "Bearer" in answer.json()["error"]["message"]
    # The SDK's own client, with a wrong token, gets nowhere either.
    failed: list[BaseException] = []
    try:
        async with mcp_session(shared, token="not-the-token"):
            pass
    except Exception as exc:  # the SDK raises what its HTTP client raised, in a group
        failed.append(exc)
    assert failed
    # The client reads the server's 401 answer: what to send.
    assert "unauthorized: send Authorization: Bearer" in repr(failed[0])
    assert not [line for line in shared.lines if "opened" in line]


async def test_four_agents_at_once_share_nothing(
    shared: HttpServer, server: PageServer, ported_browser: ego.Browser
) -> None:
    before = await contexts_of(ported_browser)
    barrier = asyncio.Barrier(len(USERS))
    tab_ids: dict[str, str] = {}
    seen_contexts: set[str] = set()
    answers: dict[str, list[str]] = {user: [] for user in USERS}
    refused: dict[str, list[str]] = {user: [] for user in USERS}
    whoami = mcp_name("acct", "whoami")

    async def agent(user: str) -> None:
        async with mcp_session(shared) as session:
            logged_in = value_of(await call(session, "navigate", {"url": login_page(server, user)}))
            tab_ids[user] = logged_in["id"]
            for number in range(CALLS):
                step = number % 5
                if step == 0:
                    url = server.url(f"/acct/home?u={user}&n={number}")
                    value = value_of(await call(session, "navigate", {"url": url}))
                    answers[user].append(f"{value['url']} {value['id']}")
                elif step == 1:
                    answers[user].append(text_of(await call(session, "take_snapshot", {})))
                elif step == 2:
                    value = value_of(await call(session, whoami, {}))
                    answers[user].append(f"{value['who']} {value['cookie']}")
                elif step == 3:
                    expression = "document.cookie + ' ' + localStorage.getItem('who')"
                    result = await call(session, "evaluate", {"expression": expression})
                    answers[user].append(str(value_of(result)))
                else:
                    listed = value_of(await call(session, "list_tabs", {}))
                    answers[user].append(" ".join(each["id"] for each in listed))
            seen_contexts.update(await contexts_of(ported_browser) - before)
            await barrier.wait()  # every agent has a tab id now
            for other, tab_id in tab_ids.items():
                if other != user:
                    result = await call(session, "select_tab", {"id": tab_id})
                    assert result.is_error, text_of(result)
                    refused[user].append(text_of(result))
            # Its own tab is still its current one, on its own page.
            still = value_of(await call(session, "evaluate", {"expression": "document.cookie"}))
            answers[user].append(str(still))
            await barrier.wait()  # no session ends before all tried the others' tabs

    await asyncio.wait_for(asyncio.gather(*(agent(user) for user in USERS)), 600)

    # Every answer belongs to the client that asked: its user in it, no other user's
    # name, no other session's tab id.
    crossed = []
    for user, texts in answers.items():
        others = [name for name in USERS if name != user]
        foreign = [tab_ids[name] for name in others]
        for text in texts:
            if any(name in text for name in others) or any(t in text for t in foreign):
                crossed.append((user, text))
        assert len(texts) == CALLS + 1
        assert sum(user in text for text in texts) >= CALLS * 3 // 5
    assert crossed == []
    # Another session's tab id is unknown here: a typed error, never its page.
    for texts in refused.values():
        assert len(texts) == len(USERS) - 1
        assert all("UnknownTabError: no open tab of this browser context" in t for t in texts)
    # The site saw each agent's requests with its own cookie only.
    for user in USERS:
        cookies = {
            headers.get("Cookie")
            for _, path, headers, _ in server.requests
            if path.startswith(f"/acct/home?u={user}&")
        }
        assert cookies == {f"user={user}"}
    # Four contexts of one Chrome while they ran; none (and no tab of them) after.
    assert len(seen_contexts) == len(USERS)
    await shared.wait_for(r"closed: its client ended it", count=len(USERS))
    assert await contexts_of(ported_browser) & seen_contexts == set()
    assert await pages_in(ported_browser, seen_contexts) == []
    report = {
        "clients": len(USERS),
        "calls": sum(len(texts) for texts in answers.values()),
        "cross_session_results": len(crossed),
        "foreign_tab_ids_refused": sum(len(texts) for texts in refused.values()),
    }
    print(f"isolation: {json.dumps(report)}", file=sys.stderr)


async def test_a_saved_login_is_loaded_by_another_agent(
    shared: HttpServer, server: PageServer, tmp_path: Path
) -> None:
    shared_folder = tmp_path / "logins"
    shared_folder.mkdir()
    path = shared_folder / "login.json"
    login_page(server, "erin")
    async with mcp_session(shared, roots=[shared_folder]) as first:
        await call(first, "navigate", {"url": server.url("/acct/login/erin")})
        saved = value_of(await call(first, "save_storage_state", {"path": str(path)}))
        assert saved["path"] == str(path)
        assert saved["cookies"] == 1
        assert saved["origins"] == [{"origin": server.origin, "local_storage_items": 1}]
        # Its answer names what the file holds, never a value.
        assert "erin" not in json.dumps(saved)
        outside = await call(first, "save_storage_state", {"path": str(tmp_path / "x.json")})
        assert outside.is_error
        assert "FileAccessError:" in text_of(outside)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    async with mcp_session(shared, roots=[shared_folder]) as second:
        fresh = await call(second, "navigate", {"url": server.url("/acct/home")})
        assert value_of(fresh)["url"].endswith("/acct/home")
        assert "storage null" in text_of(await call(second, "take_snapshot", {}))
        loaded = value_of(await call(second, "load_storage_state", {"path": str(path)}))
        assert loaded["skipped"] == []
        await call(second, "reload", {})
        assert "cookie user=erin storage erin" in text_of(await call(second, "take_snapshot", {}))


async def test_a_seeded_session_starts_logged_in_and_an_idle_one_is_closed(
    workspace: Path, server: PageServer, ported_browser: ego.Browser, tmp_path: Path
) -> None:
    state = tmp_path / "frank.json"
    async with await ported_browser.new_context() as context:
        await context.new_tab(login_page(server, "frank"))
        await context.storage_state(path=state)
    before = await contexts_of(ported_browser)
    args = ("--session-idle", "3", "--storage-state", str(state))
    async with (
        http_server(workspace, tmp_path, ported_browser, *args) as idle,
        mcp_session(idle) as session,
    ):
        await call(session, "navigate", {"url": server.url("/acct/home")})
        seeded = text_of(await call(session, "take_snapshot", {}))
        assert "cookie user=frank storage frank" in seeded
        made = await contexts_of(ported_browser) - before
        assert len(made) == 1
        await idle.wait_for(r"closed: no request for 3 s")
        assert await contexts_of(ported_browser) & made == set()
        assert await pages_in(ported_browser, made) == []
        # The session is gone: its next call is answered 404, as the client is told.
        with pytest.raises(MCPError, match="session not found: it ended; initialize a new one"):
            await asyncio.wait_for(session.call_tool("list_tabs", {}), 30)
