"""``ego mcp --http``: one server, several agents, one Chrome, nothing shared between them.

The MCP streamable HTTP transport on ``http://HOST:PORT/mcp`` (127.0.0.1:8790 by default).
Every request must name the server in its ``Host`` and, when it carries an ``Origin``, come
from an origin allowed (:mod:`.hosts`: 421 or 403 otherwise, whatever address it is bound
to), and carry ``Authorization: Bearer TOKEN`` (``--token``, or one generated at start,
printed to stderr and written ``0600`` into ego's state folder); any other gets 401 before
anything else is read.

Each MCP session (an ``initialize`` without ``Mcp-Session-Id``) gets a server of its own
(:func:`~ego.mcp.server.build_server`) over a :class:`~ego.mcp.sessions.SessionHolder`: a browser
context of its own in the one shared Chrome, with its own tabs and current tab, dialogs,
downloads, cookies and storage, and output folder (the client's MCP roots are folders of
the client's machine, never this one's unless the operator says so: see :mod:`.files`). A
session reaches nothing of another: a tab id of another session is an unknown tab
(``UnknownTabError``), a ref names a node of the session's own tab or none. At most
``max_sessions`` are open at once (503 after), each with at most ``limits.max_tabs`` tabs. A
session ends when its client deletes it, when it made no request for ``session_idle``
seconds (an open stream of server notifications counts as activity), or when the server
stops; its context (and every tab of it) is closed then. A request for a session that ended
gets 404, and the client opens a new one.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import os
import secrets
import signal
import socket
import sys
import uuid
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import orjson

from .. import api
from ..api import SharedBrowser
from ..errors import ListenError
from ..learning.catalog.registry import Learnings
from ..page.dialogs import DialogPolicy
from ..page.storage_state import StateSource, StorageState
from ..places import state_dir
from .files import FileAccess
from .hosts import HostRules, bind_warning, check_entries
from .limits import ServerLimits
from .sdk import (
    HANDSHAKE_PROTOCOL_VERSIONS,
    MCP_PROTOCOL_VERSION_HEADER,
    MCP_SESSION_ID_HEADER,
    HttpSession,
    serve_asgi,
)
from .server import build_server
from .sessions import SessionHolder

__all__ = [
    "DEFAULT_PORT",
    "MAX_SESSIONS",
    "SESSION_IDLE",
    "HttpServer",
    "serve_http",
    "write_token",
]

logger = logging.getLogger("ego.mcp")

#: The port ``ego mcp --http`` listens on unless told (not the demo shop's 8765).
DEFAULT_PORT: Final = 8790

#: Sessions open at once at most, unless told (``--max-sessions``); one more is refused with
#: 503 until one ends. Each costs a browser context (about 60 MB of Chrome's memory).
MAX_SESSIONS: Final = 16

#: Seconds a session may make no request (and hold no notification stream open) before it
#: is closed, unless told (``--session-idle``).
SESSION_IDLE: Final = 1800.0

#: Seconds the server waits for the sessions to close their contexts when it stops.
_CLOSE_TIMEOUT: Final = 30.0

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Any]]
Send = Callable[[Any], Awaitable[None]]


@dataclass(eq=False)
class _Session:
    """One open MCP session: its holder (context), transport, serving task and idle timer."""

    holder: SessionHolder
    http: HttpSession
    task: asyncio.Task[None] | None = None
    busy: int = 0
    timer: asyncio.TimerHandle | None = None
    reason: str = "its client ended it"
    done: asyncio.Event = field(default_factory=asyncio.Event)
    ending: asyncio.Task[None] | None = None


class HttpServer:
    """The ASGI application of ``ego mcp --http``: the bearer token, then one MCP server and
    browser context per session (see the module docstring).

    Args:
        shared: the Chrome every session's context lives in.
        token: what each request's ``Authorization: Bearer`` must carry.
        rules: the ``Host`` and ``Origin`` headers answered (:class:`~.hosts.HostRules`).
        learnings, dialogs, limits, storage_state: each session's, as for ``ego mcp``.
        session_idle: seconds a session may make no request before it is closed.
        max_sessions: sessions open at once at most.
        output_dir: the server's folder; each session's files go into a folder of its own
            inside it.
        say: where the server says what happens (a session opened or closed).
    """

    def __init__(
        self,
        *,
        shared: SharedBrowser,
        token: str,
        rules: HostRules,
        learnings: Learnings,
        dialogs: DialogPolicy,
        limits: ServerLimits,
        storage_state: StorageState | None,
        session_idle: float,
        max_sessions: int,
        output_dir: Path,
        say: Callable[[str], None],
    ) -> None:
        self.shared = shared
        self._token = token.encode()
        self.rules = rules
        self.learnings = learnings
        self.dialogs: DialogPolicy = dialogs
        self.limits = limits
        self.storage_state = storage_state
        self.session_idle = session_idle
        self.max_sessions = max_sessions
        self.output_dir = output_dir
        self.say = say
        #: The open sessions, by ``Mcp-Session-Id``.
        self.sessions: dict[str, _Session] = {}
        self._closing = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        headers = {name.decode("latin-1").lower(): value for name, value in scope["headers"]}
        # Host and Origin first: a page that rebound its name to this address reads nothing.
        refusal = self.rules.refusal(_header(headers, "host"), _header(headers, "origin"))
        if refusal is not None:
            await _answer(send, refusal.status, refusal.message)
            return
        if scope["path"].rstrip("/") != "/mcp":
            await _answer(send, 404, "not found: the MCP endpoint is /mcp")
            return
        if not self._authorized(headers.get("authorization", b"")):
            await _answer(
                send,
                401,
                "unauthorized: send Authorization: Bearer TOKEN (the token ego mcp --http "
                "printed, or the one given with --token)",
                [(b"www-authenticate", b'Bearer realm="ego"')],
            )
            return
        version = headers.get(MCP_PROTOCOL_VERSION_HEADER, b"").decode("latin-1")
        if version and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            await _answer(
                send,
                400,
                f"protocol version {version} has no sessions, and this server keeps a browser "
                "context per session: connect with initialize (protocol "
                f"{HANDSHAKE_PROTOCOL_VERSIONS[-1]} or earlier)",
            )
            return
        session_id = headers.get(MCP_SESSION_ID_HEADER, b"").decode("latin-1")
        if session_id:
            session = self.sessions.get(session_id)
            if session is None:
                await _answer(send, 404, "session not found: it ended; initialize a new one")
                return
            await self._serve(session, scope, receive, send)
        elif scope["method"] != "POST":
            await _answer(send, 400, "no Mcp-Session-Id: open a session with initialize first")
        else:
            await self._open(scope, receive, send)

    def _authorized(self, header: bytes) -> bool:
        scheme, _, given = header.partition(b" ")
        # Compared in constant time: the answer's timing says nothing of the token.
        return scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(), self._token)

    async def _open(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._closing:
            await _answer(send, 503, "the server is stopping")
            return
        if len(self.sessions) >= self.max_sessions:
            await _answer(
                send,
                503,
                f"{self.max_sessions} sessions are open, the most this server allows: end one "
                f"(DELETE it, or leave it {self.session_idle:g} s without a request) and retry; "
                "the operator raises the bound with ego mcp --http --max-sessions N",
            )
            return
        session_id = uuid.uuid4().hex
        holder = SessionHolder(
            self.shared,
            self.output_dir / f"session-{session_id[:12]}",
            learnings=self.learnings,
            dialogs=self.dialogs,
            limits=self.limits,
            storage_state=self.storage_state,
        )
        server = build_server(holder)
        session = _Session(holder, server.http_session(session_id))
        self.sessions[session_id] = session
        session.task = asyncio.create_task(self._run(session))
        status = await self._serve(session, scope, receive, send)
        if status is None or status >= 400:
            # Nothing was established (not an initialize, say): nothing is kept.
            session.reason = f"it never opened (HTTP {status})"
            await session.http.terminate()
            await session.done.wait()
        else:
            self.say(f"session {session_id[:12]} opened ({len(self.sessions)} open)")

    async def _serve(
        self, session: _Session, scope: Scope, receive: Receive, send: Send
    ) -> int | None:
        """One request of ``session``, which holds its idle timer off while it runs: a POST or
        DELETE until answered, a GET (the stream of server notifications) as long as the
        client keeps it open, which a client that went away does not."""
        session.busy += 1
        if session.timer is not None:
            session.timer.cancel()
            session.timer = None
        try:
            return await session.http.handle(scope, receive, send)
        finally:
            session.busy -= 1
            self._idle_from_now(session)

    def _idle_from_now(self, session: _Session) -> None:
        if session.busy or session.http.terminated:
            return
        if session.timer is not None:
            session.timer.cancel()
        session.timer = asyncio.get_running_loop().call_later(
            self.session_idle, self._expire, session
        )

    def _expire(self, session: _Session) -> None:
        session.timer = None
        if session.busy == 0 and not session.http.terminated:
            session.reason = f"no request for {self.session_idle:g} s"
            session.ending = asyncio.ensure_future(session.http.terminate())

    async def _run(self, session: _Session) -> None:
        """Serve ``session`` until it ends; then it is forgotten, its context closed."""
        session_id = session.http.session_id
        try:
            await session.http.run()
        except Exception:
            logger.exception("MCP session %s failed", session_id[:12])
            session.reason = "it failed (see the log)"
        finally:
            if session.timer is not None:
                session.timer.cancel()
            self.sessions.pop(session_id, None)
            # The server's own on_close closed the context; this covers a session that
            # never reached it (its server did not start).
            with contextlib.suppress(Exception):
                await session.holder.close()
            session.done.set()
            if not session.reason.startswith("it never opened"):
                self.say(
                    f"session {session_id[:12]} closed: {session.reason}; its browser context "
                    f"is gone ({len(self.sessions)} open)"
                )

    async def close(self) -> None:
        """End every session (their contexts close), then the shared Chrome."""
        self._closing = True
        sessions = list(self.sessions.values())
        for session in sessions:
            session.reason = "the server stopped"
            await session.http.terminate()
        waits = [session.done.wait() for session in sessions]
        if waits:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.gather(*waits), _CLOSE_TIMEOUT)
        await self.shared.close()


def _header(headers: dict[str, bytes], name: str) -> str | None:
    value = headers.get(name)
    return None if value is None else value.decode("latin-1")


async def _answer(
    send: Send, status: int, message: str, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    """A JSON-RPC error body (no request id) with ``status``."""
    body = orjson.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}
    )
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def write_token(token: str, port: int) -> Path:
    """Write ``token`` where the person who started the server (and only they) can read it:
    ``mcp/http-PORT.token`` in ego's state folder, ``0600``."""
    folder = state_dir() / "mcp"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"http-{port}.token"
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # a file left by an earlier server keeps its mode: make a new one
    handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(handle, "w") as out:
        out.write(token + "\n")
    return path


def _listening(host: str, port: int) -> socket.socket:
    """A socket bound to ``host``:``port``, listening, non-blocking.

    Raises:
        ListenError: it cannot be (the message names the fix).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise ListenError.of(host, port, exc) from None
    except BaseException:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


def _stderr(line: str) -> None:
    print(f"ego mcp: {line}", file=sys.stderr, flush=True)


async def serve_http(
    *,
    endpoint: str | None = None,
    profile: str | None = None,
    headless: bool = True,
    learnings: Learnings | None = None,
    dialogs: DialogPolicy = "manual",
    limits: ServerLimits | None = None,
    storage_state: StateSource | None = None,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    token: str | None = None,
    session_idle: float = SESSION_IDLE,
    max_sessions: int = MAX_SESSIONS,
    allowed_hosts: Sequence[str] = (),
    allowed_origins: Sequence[str] = (),
    say: Callable[[str], None] = _stderr,
) -> None:
    """Serve MCP over streamable HTTP until SIGINT or SIGTERM (or cancellation): each session
    in a browser context of its own, in one Chrome (``endpoint``'s, else launched on the first
    session's first tool call); then close every session and the Chrome.

    Args:
        endpoint, profile, headless, learnings, dialogs, limits: as for :func:`ego.mcp.serve`.
        storage_state: a saved login every new session's context starts with (read once,
            within the bounds of ``limits``).
        host, port: where to listen (``port`` 0: a free one, said on stderr); a host that is
            not a loopback address gets a warning on ``say``.
        token: the bearer token; by default a new one, said on stderr and written to
            ``mcp/http-PORT.token`` in ego's state folder (``0600``).
        session_idle: seconds without a request (nor an open notification stream) after
            which a session is closed.
        max_sessions: sessions open at once at most (503 for one more).
        allowed_hosts: ``Host`` values answered besides the server's own address
            (:class:`~.hosts.HostRules`).
        allowed_origins: ``Origin`` values answered besides the server's own.
        say: where the server says its address and what happens to sessions.

    Raises:
        ListenError: ``host``/``port`` cannot be listened on (a taken port, say).
        ValueError: a malformed origin pattern in ``limits``, or a malformed host or origin
            in ``allowed_hosts``/``allowed_origins``.
        StorageStateError: ``storage_state`` is not a storage state, or is over the bounds
            (StorageStateTooLargeError).
    """
    limits = limits if limits is not None else ServerLimits()
    limits.check()
    policy = limits.policy
    # The SDK says each session's start and end at INFO; this server says it in one line.
    logging.getLogger("mcp").setLevel(logging.WARNING)
    learnings = learnings if learnings is not None else Learnings()
    # Read once, within the bounds: a bad file fails here, not in the first session.
    state = limits.read_storage_state(storage_state) if storage_state is not None else None
    check_entries(allowed_hosts, allowed_origins)
    output = limits.output_dir or state_dir() / "mcp" / f"server-{os.getpid()}"
    # The server's own folder (no --output-dir), private, removed at the end unless it holds
    # files; each session's folder is inside it.
    folder = FileAccess(output, own=limits.output_dir is None)
    keywords: dict[str, Any] = {
        "learnings": learnings,
        "dialogs": dialogs,
        "downloads": output / "downloads",
        "allowed_origins": limits.allowed_origins,
        "blocked_origins": limits.blocked_origins,
        "allow_file_urls": policy.allow_local,
        "allow_script_urls": not limits.read_only,
    }

    async def start() -> api.Browser:
        folder.downloads_dir()
        if endpoint:
            return await api.connect(endpoint, **keywords)
        return await api.launch(
            profile=profile, headless=headless, max_js_heap_mb=limits.max_js_heap_mb, **keywords
        )

    sock = _listening(host, port)
    bound = sock.getsockname()[1]
    generated = token is None
    secret = token or secrets.token_urlsafe(32)
    app = HttpServer(
        shared=SharedBrowser(start),
        token=secret,
        rules=HostRules(host, bound, allowed_hosts=allowed_hosts, allowed_origins=allowed_origins),
        learnings=learnings,
        dialogs=dialogs,
        limits=limits,
        storage_state=state,
        session_idle=session_idle,
        max_sessions=max_sessions,
        output_dir=output,
        say=say,
    )
    shown = f"[{host}]" if ":" in host else host
    address = f"http://{shown}:{bound}/mcp"
    warning = bind_warning(host)
    if warning is not None:
        say(warning)
    say(
        f"sessions: at most {max_sessions} at once, each closed after {session_idle:g} s "
        f"without a request, with at most {limits.max_tabs} tabs"
    )
    if generated:
        kept = write_token(secret, bound)
        say(f"serving {address}; token {secret} (also in {kept}); send Authorization: Bearer")
    else:
        say(f"serving {address}; send Authorization: Bearer with the token given")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    caught = [number for number in (signal.SIGINT, signal.SIGTERM) if hasattr(signal, "SIGTERM")]
    for number in caught:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(number, stop.set)
    try:
        await serve_asgi(app, sock, stop, before_shutdown=app.close)
    finally:
        for number in caught:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(number)
        await app.close()
        if generated:
            with contextlib.suppress(OSError):
                (state_dir() / "mcp" / f"http-{bound}.token").unlink()
        left = folder.close()
        if left is not None:
            say(left.removeprefix("ego mcp "))
        say("stopped")
