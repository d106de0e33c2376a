"""``ego mcp --http``: several agents on one server and one Chrome, each session in a browser
context of its own, through the MCP SDK's own streamable HTTP client.

The server runs as a real subprocess attached to a Chrome this test run started with a port
(``ported_browser``), so that the tests can look into Chrome itself: which contexts and tabs
exist while the sessions run and after they end. The tests of what the server refuses before
any tool runs (hosts, origins, sessions, its port) start no Chrome at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import socket
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
from ego.learning.catalog.registry import Learnings
from ego.mcp.hosts import HostRules, bind_warning, check_entries
from ego.mcp.http import serve_http
from ego.mcp.learning_tools import mcp_name
from ego.mcp.limits import ServerLimits
from tests.helpers.commands import ego_async, ego_env
from tests.helpers.learnings import make_site, tool
from tests.helpers.mcp_client import check_convention, text_of, value_of
from tests.helpers.page_server import PageServer
from tests.helpers.paths import PYTHON_EGO, ROOT

chrome = pytest.mark.chrome  # the tests whose sessions call tools, which use Chrome

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
    """An ``ego mcp --http`` (a subprocess, or ``serve_http`` in this process): its address,
    token and what it says (on stderr, or to its ``say``)."""

    process: asyncio.subprocess.Process | None = None
    url: str = ""
    token: str = ""
    token_file: Path | None = None
    lines: list[str] = field(default_factory=list)
    _said: asyncio.Event = field(default_factory=asyncio.Event)
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

    def heard(self, line: str) -> None:
        """The server said ``line``."""
        self.lines.append(line)
        self._said.set()

    async def _read(self) -> None:
        assert self.process is not None
        assert self.process.stderr is not None
        while raw := await self.process.stderr.readline():
            self.heard(raw.decode().rstrip())

    async def wait_for(self, pattern: str, *, count: int = 1, timeout: float = 60) -> str:
        """The ``count``-th line matching ``pattern`` the server said, waited for (bounded)."""

        def found() -> list[str]:
            return [line for line in self.lines if re.search(pattern, line)]

        async def said() -> None:
            while len(found()) < count:
                self._said.clear()
                await self._said.wait()

        try:
            await asyncio.wait_for(said(), timeout)
        except TimeoutError:
            raise AssertionError(f"no {pattern!r} x{count} said: {self.lines}") from None
        return found()[count - 1]

    async def stop(self) -> None:
        if self.process is not None and self.process.returncode is None:
            self.process.terminate()
            await asyncio.wait_for(self.process.wait(), 60)
        if self._reader is not None:
            await self._reader


@contextlib.asynccontextmanager
async def http_server(
    workspace: Path, home: Path, chrome: ego.Browser | None, *args: str
) -> AsyncIterator[HttpServer]:
    """An ``ego mcp --http`` on a free port, attached to ``chrome`` (None: a server whose
    sessions call no tool, so it starts no Chrome)."""
    attach = ["--endpoint", chrome.endpoint] if chrome is not None and chrome.endpoint else []
    process = await asyncio.create_subprocess_exec(
        *PYTHON_EGO,
        "mcp",
        "--http",
        "--port",
        "0",
        *attach,
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
    server: HttpServer,
    *,
    token: str | None = None,
    roots: Sequence[Path] = (),
    stream: bool = True,
) -> AsyncIterator[ClientSession]:
    """An MCP session through the SDK's streamable HTTP client, ended (DELETE) on leaving;
    with ``stream=False`` its stream of server notifications (a GET) never reaches the
    server, as of a client that holds none open."""

    async def list_roots(context: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=FileUrl(r.resolve().as_uri())) for r in roots])

    headers = {"Authorization": f"Bearer {token or server.token}"}
    transport = httpx2.AsyncHTTPTransport() if stream else _NoStream()
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60, transport=transport) as http,
        streamable_http_client(server.url, http_client=http) as (read, write),
        ClientSession(read, write, list_roots_callback=list_roots if roots else None) as session,
    ):
        await asyncio.wait_for(session.initialize(), 60)
        yield session


class _NoStream(httpx2.AsyncHTTPTransport):
    """Sends every request but a GET, which fails at once without reaching the server."""

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.method == "GET":
            raise httpx2.ConnectError("this client holds no notification stream")
        return await super().handle_async_request(request)


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
    """One ``ego mcp --http`` for the module, on the test run's ported Chrome, with
    ``workspace / "logins"`` a folder every session may use (``--file-root``)."""
    (workspace / "logins").mkdir(exist_ok=True)
    args = ("--file-root", str(workspace / "logins"))
    async with http_server(workspace, workspace, ported_browser, *args) as running:
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


@chrome
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


@chrome
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


@chrome
async def test_a_saved_login_is_loaded_by_another_agent(
    shared: HttpServer, server: PageServer, workspace: Path, tmp_path: Path
) -> None:
    path = workspace / "logins" / "login.json"  # the server's --file-root
    login_page(server, "erin")
    async with mcp_session(shared) as first:
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
    async with mcp_session(shared) as second:
        fresh = await call(second, "navigate", {"url": server.url("/acct/home")})
        assert value_of(fresh)["url"].endswith("/acct/home")
        assert "storage null" in text_of(await call(second, "take_snapshot", {}))
        loaded = value_of(await call(second, "load_storage_state", {"path": str(path)}))
        assert loaded["skipped"] == []
        await call(second, "reload", {})
        assert "cookie user=erin storage erin" in text_of(await call(second, "take_snapshot", {}))


@chrome
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
        mcp_session(idle, stream=False) as session,  # an open stream would keep it
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


# -- what the server refuses before any tool runs (no Chrome) ----------------------------------

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}


def _port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/")[0])


@contextlib.asynccontextmanager
async def served(
    tmp_path: Path, *, limits: ServerLimits | None = None, **options: Any
) -> AsyncIterator[HttpServer]:
    """``serve_http`` in this process, with what it says kept in ``lines``, its files in
    ``tmp_path / "out"`` unless ``limits`` say otherwise; stopped (as a cancelled server
    stops) on leaving. Without an ``endpoint`` its sessions must call no tool: none starts
    a Chrome then."""
    running = HttpServer(token="the-token")
    task = asyncio.create_task(
        serve_http(
            port=0,
            token=running.token,
            limits=limits or ServerLimits(output_dir=tmp_path / "out"),
            learnings=Learnings(),
            say=running.heard,
            **options,
        )
    )
    try:
        started = asyncio.create_task(running.wait_for(r"^serving \S+;"))
        await asyncio.wait({started, task}, timeout=60, return_when=asyncio.FIRST_COMPLETED)
        if task.done():
            started.cancel()
            task.result()  # raises what stopped it
        running.url = re.split(r"[ ;]", (await started))[1]
        yield running
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(task, 60)


async def _initialize(
    server: HttpServer, headers: dict[str, str], *, to: str = "127.0.0.1"
) -> httpx2.Response:
    """A raw ``initialize`` sent to ``to`` on the server's port, with ``headers`` (and the
    token): what a web page, or a client that opens no notification stream, sends."""
    sent = {
        "Authorization": f"Bearer {server.token}",
        "Accept": "application/json, text/event-stream",
        **headers,
    }
    shown = f"[{to}]" if ":" in to else to
    async with httpx2.AsyncClient(timeout=30) as http:
        return await http.post(
            f"http://{shown}:{_port_of(server.url)}/mcp", json=INITIALIZE, headers=sent
        )


@pytest.mark.parametrize("bind", ["::ffff:127.0.0.1", "0.0.0.0"])
async def test_host_and_origin_are_checked_on_every_bind(tmp_path: Path, bind: str) -> None:
    async with served(tmp_path, host=bind) as running:
        port = _port_of(running.url)
        own = f"127.0.0.1:{port}"
        # DNS rebinding: a page whose name now resolves here sends its own name as Host.
        rebound = await _initialize(
            running, {"Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"}
        )
        assert rebound.status_code == 421, rebound.text
        assert "--allowed-host" in rebound.json()["error"]["message"]
        # A page of another origin calling the server by its own name.
        foreign = await _initialize(running, {"Host": own, "Origin": "http://evil.example"})
        assert foreign.status_code == 403, foreign.text
        assert "--allowed-origin" in foreign.json()["error"]["message"]
        assert not [line for line in running.lines if "opened" in line]
        # The server's own name, from a client that sends no Origin (not a page): served.
        fine = await _initialize(running, {"Host": own})
        assert fine.status_code == 200, fine.text
        assert fine.headers["mcp-session-id"]
        warned = [line for line in running.lines if "warning: listening on" in line]
        if bind == "0.0.0.0":
            # One line says what protects a server other machines can reach.
            [warning] = warned
            assert "bearer token" in warning
            assert "Host check" in warning
            assert "Origin check" in warning
        else:
            assert warned == []  # an IPv4-mapped loopback address is loopback


async def test_the_operator_allows_more_hosts_and_origins(tmp_path: Path) -> None:
    allowing = {"allowed_hosts": ["mcp.example"], "allowed_origins": ["http://tool.example:3000"]}
    async with served(tmp_path, **allowing) as running:
        port = _port_of(running.url)
        allowed = await _initialize(
            running, {"Host": f"MCP.example.:{port}", "Origin": "http://tool.example:3000"}
        )
        assert allowed.status_code == 200, allowed.text
        other_port = await _initialize(running, {"Host": "127.0.0.1:1"})
        assert other_port.status_code == 421
        null = await _initialize(running, {"Host": f"localhost:{port}", "Origin": "null"})
        assert null.status_code == 403


async def test_an_idle_session_is_closed_and_an_open_stream_keeps_one(tmp_path: Path) -> None:
    async with (
        served(tmp_path, session_idle=2) as running,
        mcp_session(running) as listening,  # the SDK's client keeps a notification stream open
    ):
        await asyncio.wait_for(listening.send_ping(), 30)
        # A client that made one request and went quiet, opened after the listening one.
        quiet = await _initialize(running, {})
        ended = quiet.headers["mcp-session-id"][:12]
        await running.wait_for(rf"session {ended} closed: no request for 2 s")
        # The session whose stream stayed open is served still, though it sent nothing for
        # longer than the quiet one.
        await asyncio.wait_for(listening.send_ping(), 30)
        closed = [line for line in running.lines if "closed:" in line]
        assert len(closed) == 1, closed


async def test_sessions_are_bounded_by_default_and_the_cap_says_what_to_do(
    tmp_path: Path,
) -> None:
    async with served(tmp_path / "default") as running:
        # Without options: sessions idle out, and their number and tabs are bounded.
        assert (
            "sessions: at most 16 at once, each closed after 1800 s without a request, with at "
            "most 20 tabs"
        ) in running.lines
    async with served(tmp_path / "capped", max_sessions=1) as capped:
        first = await _initialize(capped, {})
        assert first.status_code == 200, first.text
        second = await _initialize(capped, {})
        assert second.status_code == 503
        message = second.json()["error"]["message"]
        assert "1 sessions are open, the most this server allows" in message
        assert "--max-sessions" in message


async def test_a_taken_port_is_one_line_naming_the_fix(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = await ego_async(
            "mcp", "--http", "--port", str(port), env=ego_env(tmp_path / "profiles"), cwd=tmp_path
        )
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    [line] = result.stderr.strip().splitlines()  # piped: the error as one JSON line
    assert json.loads(line) == {
        "type": "ListenError",
        "error": f"cannot listen on 127.0.0.1:{port}: another process listens on that port: "
        "pass another --port (--port 0 takes a free one)",
    }


def test_the_command_lines_defaults_are_the_servers_and_not_the_demo_shops_port() -> None:
    from ego.cli.demo_command import SERVE_PORT
    from ego.cli.mcp_command import mcp
    from ego.mcp.http import DEFAULT_PORT, MAX_SESSIONS, SESSION_IDLE
    from ego.mcp.limits import MAX_TABS

    defaults = {param.name: param.default for param in mcp.params}
    assert defaults["port"] == DEFAULT_PORT
    assert defaults["max_sessions"] == MAX_SESSIONS
    assert defaults["session_idle"] == SESSION_IDLE
    assert defaults["max_tabs"] == MAX_TABS
    assert DEFAULT_PORT != SERVE_PORT


@pytest.mark.parametrize(
    ("bind", "header", "answered"),
    [
        ("127.0.0.1", "127.0.0.1:8790", True),
        ("127.0.0.1", "LOCALHOST.:8790", True),  # any case, a trailing dot
        ("127.0.0.1", "[::1]:8790", True),
        ("127.0.0.1", "127.0.0.1:8791", False),  # another port
        ("127.0.0.1", "127.0.0.1", False),  # no port: 80
        ("127.0.0.1", "evil.example:8790", False),
        ("::ffff:127.0.0.1", "[::ffff:7f00:1]:8790", True),  # one address, two spellings
        ("::ffff:127.0.0.1", "127.0.0.1:8790", True),
        ("::", "[::1]:8790", True),
        ("::", "evil.example:8790", False),
        ("192.168.1.5", "192.168.1.5:8790", True),
        ("192.168.1.5", "localhost:8790", False),  # not loopback: only the address
        ("192.168.1.5", "mcp.example:1234", True),  # --allowed-host mcp.example: any port
        ("192.168.1.5", "[::1]:8790", True),  # --allowed-host ::1 (bare IPv6)
        ("127.0.0.1", "127.0.0.1:8790@evil", False),
    ],
)
def test_host_headers_are_compared_as_addresses(bind: str, header: str, answered: bool) -> None:
    rules = HostRules(bind, 8790, allowed_hosts=["mcp.example", "::1"] if "192" in bind else [])
    assert (rules.refusal(header, None) is None) is answered


@pytest.mark.parametrize(
    ("origin", "answered"),
    [
        ("http://127.0.0.1:8790", True),
        ("HTTP://LocalHost:8790", True),
        ("https://tool.example", True),  # allowed as https://tool.example:443
        ("https://tool.example:443", True),
        ("http://tool.example", False),  # another scheme is another origin
        ("http://127.0.0.1:8791", False),
        ("null", False),
        ("http://evil.example", False),
    ],
)
def test_origins_are_compared_as_origins(origin: str, answered: bool) -> None:
    rules = HostRules("127.0.0.1", 8790, allowed_origins=["https://tool.example"])
    assert (rules.refusal("127.0.0.1:8790", origin) is None) is answered
    assert rules.refusal(None, None) is not None  # a request without a Host


@pytest.mark.parametrize(
    "entry", ["*", "evil.example/x", "user@host", "[::1", "host:99999", "*.example"]
)
def test_a_malformed_allowed_entry_stops_the_server_before_it_starts(entry: str) -> None:
    with pytest.raises(ValueError, match=re.escape(repr(entry))):
        check_entries([entry], [])
    with pytest.raises(ValueError, match="not an origin"):
        check_entries([], [entry])


def test_a_bind_other_machines_reach_is_said_once_with_what_protects_it() -> None:
    for loopback in ("127.0.0.1", "::1", "::ffff:127.0.0.1", "localhost", "127.0.0.2"):
        assert bind_warning(loopback) is None
    for open_bind in ("0.0.0.0", "::", "192.168.1.5", "myhost.lan"):
        warning = bind_warning(open_bind)
        assert warning is not None
        assert "\n" not in warning
        assert "bearer token" in warning
        assert "--allowed-host" in warning


def test_docs_give_the_http_bounds_the_code_has() -> None:
    from ego.mcp.http import DEFAULT_PORT, MAX_SESSIONS, SESSION_IDLE
    from ego.mcp.limits import MAX_TABS
    from ego.page.console import MAX_MESSAGES
    from ego.page.network import MAX_REQUESTS
    from ego.page.storage_state import MAX_STATE_BYTES, MAX_STATE_ITEMS

    docs = " ".join((ROOT / "docs" / "mcp.md").read_text().split())
    assert f"http://127.0.0.1:{DEFAULT_PORT}/mcp" in docs
    assert f"At most `--max-sessions` ({MAX_SESSIONS} by default)" in docs
    assert f"at most `--max-tabs` ({MAX_TABS}) tabs" in docs
    assert f"`--session-idle` seconds ({SESSION_IDLE:,.0f} by default" in docs
    assert f"at most {MAX_REQUESTS:,} requests and {MAX_MESSAGES:,} console messages" in docs
    assert (
        f"at most {MAX_STATE_BYTES >> 20} MB by its size, then at most {MAX_STATE_ITEMS:,}" in docs
    )


# -- what a session's tools may reach (Chrome) -------------------------------------------------


async def _files_in_page(session: ClientSession) -> list[str]:
    expression = "[...document.querySelector('#f').files].map(file => file.name)"
    return list(value_of(await call(session, "evaluate", {"expression": expression})))


@chrome
async def test_a_clients_roots_are_never_server_paths_over_http(
    tmp_path: Path, server: PageServer, ported_browser: ego.Browser
) -> None:
    shared = tmp_path / "shared"  # a folder the operator names (--file-root)
    shared.mkdir()
    (shared / "inside.txt").write_text("in a file root")
    secret = tmp_path / "secret.txt"  # anything else the server's user can read
    secret.write_text("the server's own file")
    page = server.route("/http/roots", '<title>roots</title><input id="f" type="file">')
    limits = ServerLimits(output_dir=tmp_path / "out", file_roots=(shared,))
    async with (
        served(tmp_path, limits=limits, endpoint=ported_browser.endpoint) as running,
        mcp_session(running, roots=[Path("/")]) as session,  # declares file:///
    ):
        await call(session, "navigate", {"url": page})
        upload = await call(session, "upload_file", {"selector": "#f", "paths": [str(secret)]})
        assert upload.is_error
        assert "FileAccessError" in text_of(upload)
        assert "over HTTP the client's MCP roots are folders of its own machine" in text_of(upload)
        assert await _files_in_page(session) == []
        outside = tmp_path / "outside.png"
        shot = await call(session, "take_screenshot", {"path": str(outside)})
        assert shot.is_error
        assert "outside the folders this server may use" in text_of(shot)
        assert not outside.exists()
        # What the operator allowed: the session's own folder, and the file roots.
        inside = {"selector": "#f", "paths": [str(shared / "inside.txt")]}
        assert not (await call(session, "upload_file", inside)).is_error
        assert await _files_in_page(session) == ["inside.txt"]
        saved = value_of(await call(session, "take_screenshot", {"path": "shot.png"}))
        assert Path(saved["path"]).parent.parent == (tmp_path / "out").resolve()
        assert Path(saved["path"]).parent.name.startswith("session-")
    # The operator who wants a client's roots taken as this machine's folders says so.
    client_side = tmp_path / "client"
    client_side.mkdir()
    (client_side / "root.txt").write_text("in a client root")
    trusting = ServerLimits(output_dir=tmp_path / "out2", client_roots_are_server_paths=True)
    async with (
        served(tmp_path, limits=trusting, endpoint=ported_browser.endpoint) as running,
        mcp_session(running, roots=[client_side]) as session,
    ):
        await call(session, "navigate", {"url": page})
        rooted = {"selector": "#f", "paths": [str(client_side / "root.txt")]}
        assert not (await call(session, "upload_file", rooted)).is_error
        refused = await call(session, "upload_file", {"selector": "#f", "paths": [str(secret)]})
        assert refused.is_error
        assert "outside the folders" in text_of(refused)


@chrome
async def test_a_huge_storage_state_is_refused_to_a_session(
    tmp_path: Path, ported_browser: ego.Browser, huge_storage_state: Path
) -> None:
    limits = ServerLimits(output_dir=tmp_path / "out", file_roots=(huge_storage_state.parent,))
    async with (
        served(tmp_path, limits=limits, endpoint=ported_browser.endpoint) as running,
        mcp_session(running) as session,
    ):
        loaded = await asyncio.wait_for(
            session.call_tool("load_storage_state", {"path": str(huge_storage_state)}), 120
        )
        assert loaded.is_error
        text = text_of(loaded)
        assert "StorageStateTooLargeError: the storage state" in text
        assert "may be at most 64.0 MB" in text
        assert "the operator raises the bound with ego mcp --max-storage-state MB" in text
        # The server answers at once after it.
        assert value_of(await call(session, "list_tabs", {})) == []


@chrome
async def test_a_sessions_tabs_are_bounded(
    tmp_path: Path, server: PageServer, ported_browser: ego.Browser
) -> None:
    server.route("/http/popped", "<title>popped</title>")
    page = server.route(
        "/http/tabs", '<title>tabs</title><a id="pop" href="/http/popped" target="_blank">pop</a>'
    )
    limits = ServerLimits(output_dir=tmp_path / "out", max_tabs=2)
    async with (
        served(tmp_path, limits=limits, endpoint=ported_browser.endpoint) as running,
        mcp_session(running) as session,
    ):
        await call(session, "navigate", {"url": page})
        await call(session, "navigate", {"url": page, "new_tab": True})
        third = await call(session, "navigate", {"url": page, "new_tab": True})
        assert third.is_error
        assert text_of(third).endswith(
            "TabLimitError: 2 tabs are open, the most this browser context may have: close one "
            "with close_tab first (the operator sets the bound with ego mcp --max-tabs)"
        )
        assert len(value_of(await call(session, "list_tabs", {}))) == 2
        # A page opening a tab itself (a link to a new window, clicked) gets it closed again,
        # and the agent is told.
        await call(session, "click", {"selector": "#pop"})
        notes = []
        for _ in range(50):  # calls, not sleeps: the popup shows within a few
            listed = await call(session, "list_tabs", {})
            notes.append(str((listed.structured_content or {}).get("notice", "")))
            assert len(value_of(listed)) <= 2
            if notes[-1]:
                break
        assert "a page opened more tabs than this session may have (2" in notes[-1], notes
        assert "/http/popped" in notes[-1]
