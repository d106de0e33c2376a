"""A fake CDP endpoint, for fault injection only.

A real Chrome never sends a frame that is not JSON, never drops its socket in the middle of a
call while staying alive, and never answers a handshake with HTTP 401. :class:`FakeCDP` does
those things on demand so that the tests can check how :mod:`ego.protocol.transport` reacts.
Anything about how a browser *behaves* is tested against the real Chromium instead.

    async with FakeCDP(on_command=garble) as fake:
        connection = await Connection.open(fake.ws_url)

``on_command(websocket, message)`` decides what happens to each command the client sends; the
default answers ``{"id": ..., "result": {}}``. Every HTTP request (the websocket handshake and
``GET /json/version``) is recorded in :attr:`FakeCDP.requests` with its headers, and every
command in :attr:`FakeCDP.commands`; :attr:`FakeCDP.command_seen` is set on the first one.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import orjson
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

__all__ = ["BROWSER_PATH", "FakeCDP", "Recorded", "drop", "garble", "reply", "silent"]

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
