"""A fake CDP endpoint, for fault injection only.

A real Chrome never sends a frame that is not JSON, never drops its socket in the middle of a
call while staying alive, and never answers a handshake with HTTP 401. :class:`FakeCDP` does
those things on demand so that the tests can check how :mod:`ego.protocol.transport` reacts.
Anything about how a browser *behaves* is tested against the real Chromium instead.

    async with FakeCDP(on_command=garble) as fake:
        connection = await Connection.open(fake.ws_url)

``on_command(websocket, message)`` decides what happens to each command the client sends; the
default answers ``{"id": ..., "result": {}}``. :class:`Forwarder` is one that passes everything
to a real Chrome and back, failing only the commands a test picks (a fault a real browser does
not produce on demand, such as ``Fetch.enable`` refused on a live page). Every HTTP request
(the websocket handshake and ``GET /json/version``) is recorded in :attr:`FakeCDP.requests`
with its headers, and every command in :attr:`FakeCDP.commands`; :attr:`FakeCDP.command_seen`
is set on the first one.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import orjson
from websockets.asyncio.client import ClientConnection, connect
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

__all__ = [
    "BROWSER_PATH",
    "FakeCDP",
    "Forwarder",
    "Recorded",
    "drop",
    "garble",
    "reply",
    "silent",
]

BROWSER_PATH = "/devtools/browser/fake-0000"

CommandHandler = Callable[[ServerConnection, dict[str, Any]], Awaitable[None]]


@dataclass
class Recorded:
    path: str
    headers: Headers


async def reply(websocket: ServerConnection, message: dict[str, Any]) -> None:
    """Answer the command with an empty result, as Chrome does for most commands."""
    await websocket.send(orjson.dumps({"id": message["id"], "result": {}}).decode())


async def silent(websocket: ServerConnection, message: dict[str, Any]) -> None:
    """Never answer."""


async def garble(websocket: ServerConnection, message: dict[str, Any]) -> None:
    """Answer with a text frame that is not JSON."""
    await websocket.send('{"id": ' + str(message["id"]) + ', "result": {oops not json')


async def drop(websocket: ServerConnection, message: dict[str, Any]) -> None:
    """Cut the TCP connection without a closing handshake, as a crashed peer would."""
    websocket.transport.abort()


class Forwarder:
    """An ``on_command`` that forwards each command to a real Chrome (``upstream``, its
    browser websocket URL) and everything Chrome sends back to the client, but answers the
    commands ``fails(method, target_id)`` picks with a CDP error instead (``target_id``: the
    target of the command's session, None for the browser's own).

    Attributes:
        created: the targets created through it (``Target.createTarget``).
        failed: the commands it failed, as the client sent them.
    """

    def __init__(self, upstream: str, fails: Callable[[str, str | None], bool]) -> None:
        self.upstream = upstream
        self.fails = fails
        self.created: set[str] = set()
        self.failed: list[dict[str, Any]] = []
        self._targets: dict[str, str] = {}
        self._sent: dict[int, tuple[str, dict[str, Any]]] = {}
        self._links: dict[ServerConnection, ClientConnection] = {}
        self._relays: set[asyncio.Task[None]] = set()

    async def __call__(self, websocket: ServerConnection, message: dict[str, Any]) -> None:
        link = self._links.get(websocket)
        if link is None:
            link = await connect(self.upstream, max_size=None, ping_interval=None)
            self._links[websocket] = link
            self._relays.add(asyncio.create_task(self._relay(link, websocket)))
        method = str(message.get("method", ""))
        session = message.get("sessionId")
        if self.fails(method, self._targets.get(session) if session else None):
            self.failed.append(message)
            error = {"code": -32000, "message": f"{method} refused by the test's proxy"}
            answer = {"id": message["id"], "error": error}
            if session:
                answer["sessionId"] = session
            await websocket.send(orjson.dumps(answer).decode())
            return
        self._sent[message["id"]] = (method, message.get("params") or {})
        await link.send(orjson.dumps(message).decode())

    async def _relay(self, link: ClientConnection, websocket: ServerConnection) -> None:
        with contextlib.suppress(ConnectionClosed):
            async for raw in link:
                message = orjson.loads(raw)
                self._note(message)
                await websocket.send(raw)

    def _note(self, message: dict[str, Any]) -> None:
        """Which session is which target's, and which targets the client created."""
        if message.get("method") == "Target.attachedToTarget":
            params = message["params"]
            self._targets[params["sessionId"]] = params["targetInfo"]["targetId"]
        sent = self._sent.pop(message.get("id", -1), None)
        result = message.get("result")
        if sent is None or result is None:
            return
        method, params = sent
        if method == "Target.createTarget":
            self.created.add(result["targetId"])
        elif method == "Target.attachToTarget":
            self._targets[result["sessionId"]] = params["targetId"]

    async def aclose(self) -> None:
        for link in self._links.values():
            await link.close()
        for relay in self._relays:
            relay.cancel()
        await asyncio.gather(*self._relays, return_exceptions=True)


class FakeCDP:
    """A websockets server on 127.0.0.1 that speaks just enough CDP to misbehave.

    Args:
        on_command: what to do with each command (see the module docstring).
        reject_status: answer every HTTP request, the handshake included, with this status.
        advertised_host: the host:port that ``/json/version`` puts in its websocket URL (a
            Chrome behind a proxy reports an address the client cannot reach).
    """

    def __init__(
        self,
        on_command: CommandHandler = reply,
        *,
        reject_status: int | None = None,
        advertised_host: str = "10.255.255.1:9",
    ) -> None:
        self.on_command = on_command
        self.reject_status = reject_status
        self.advertised_host = advertised_host
        self.requests: list[Recorded] = []
        self.commands: list[dict[str, Any]] = []
        self.command_seen = asyncio.Event()
        self._server: Server | None = None
        self.port = 0

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}{BROWSER_PATH}"

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        self.requests.append(Recorded(request.path, request.headers))
        if self.reject_status is not None:
            return connection.respond(self.reject_status, "rejected by the fake endpoint\n")
        if request.path == "/json/version":
            body = {
                "Browser": "FakeChrome/1.0",
                "webSocketDebuggerUrl": f"ws://{self.advertised_host}{BROWSER_PATH}",
            }
            return connection.respond(200, orjson.dumps(body).decode())
        return None

    async def _handle(self, websocket: ServerConnection) -> None:
        with contextlib.suppress(ConnectionClosed):
            async for raw in websocket:
                message = orjson.loads(raw)
                self.commands.append(message)
                self.command_seen.set()
                await self.on_command(websocket, message)

    async def __aenter__(self) -> FakeCDP:
        self._server = await serve(
            self._handle,
            "127.0.0.1",
            0,
            process_request=self._process_request,
            compression=None,
            ping_interval=None,
            close_timeout=1,
        )
        self.port = next(iter(self._server.sockets)).getsockname()[1]
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
