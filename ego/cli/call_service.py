"""The call service of the browser ``ego launch`` keeps: ``ego run`` at the cost of one call.

A fresh ``ego run`` process would spend most of its time importing what it needs to check a
call (pydantic models, jsonschema) and attaching to Chrome. The ``ego launch`` process has
all of that loaded and holds the browser, so it also listens on a Unix socket; ``ego run``
(see :mod:`.call_client`) sends it the command line's words and prints what comes back. The
call takes the same steps as in-process: :func:`.learning_commands.prepare_call`, then
:func:`.learning_commands.run_prepared` in the kept browser, recorded as the command line's
in the tools' health.

Only what would run the same way in the service is served; anything else is answered with
``fallback`` and the command runs in its own process as before:

- another ego (another package folder, interpreter or import path, which could find
  other learning packs),
- a Python tool (it would run with the service's working folder and environment),
- a command line click refuses (``--args`` not JSON, ``--arg`` not ``k=v``): click words that
  error itself.

The socket sits in a folder of its own, created readable by its owner only (``mkdtemp``):
only the user who runs ``ego launch`` can make calls through it, as only they can attach to
its Chrome through the port it records. Windows has no Unix sockets for asyncio; there
``ego launch`` runs no service and ``ego run`` takes the long way.

One request and one reply per connection, each a line of JSON. A client that goes away
before its reply cancels its call (as Ctrl+C does to an ``ego run`` of its own).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from ..errors import EgoError
from ..learning.health.origin import front_end
from ..learning.health.recorder import flush
from ..protocol.jsontext import json_bytes, json_loads
from .call_client import PROTOCOL, install_key
from .output import EXIT_OTHER, cli_words, exit_code_for

if TYPE_CHECKING:
    from ..api import Browser
    from ..learning.catalog.registry import Learnings

__all__ = ["CallService"]

logger = logging.getLogger("ego.cli")

#: The most bytes a request may hold (a command line's args fit many times over).
_MAX_REQUEST = 4 * 1024 * 1024
#: Seconds an answer waits for its run to reach the run record: a locked store holds it up
#: no longer (the run is still written later).
RECORD_SECONDS = 1.0


class CallService:
    """Serves ``ego run`` calls in ``browser`` on a Unix socket (see the module's text).

    Start it with :meth:`start`; :meth:`close` stops it and removes the socket's folder.
    """

    def __init__(self, browser: Browser, server: asyncio.AbstractServer, folder: str) -> None:
        self.browser = browser
        self._server = server
        self._folder = folder
        #: The socket's path (what the kept browser's record carries as ``calls``).
        self.path = os.path.join(folder, "calls.sock")
        self._learnings: dict[str, Learnings] = {}
        self._key = install_key()

    @classmethod
    async def start(cls, browser: Browser) -> CallService | None:
        """Listen for calls in ``browser``; None where asyncio has no Unix sockets."""
        if not hasattr(asyncio, "start_unix_server"):
            return None
        # A short path of its own: a Unix socket's path holds about 100 bytes, and a folder
        # only its owner can enter keeps the socket theirs without a race on its mode.
        folder = tempfile.mkdtemp(prefix="ego-calls-")
        path = os.path.join(folder, "calls.sock")
        service: CallService | None = None

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            assert service is not None
            await service._serve(reader, writer)

        try:
            server = await asyncio.start_unix_server(serve, path=path, limit=_MAX_REQUEST)
        except OSError:
            shutil.rmtree(folder, ignore_errors=True)
            logger.warning("ego launch serves no calls: cannot listen on %s", path)
            return None
        service = cls(browser, server, folder)
        return service

    async def close(self) -> None:
        """Stop listening, cancel calls in progress, remove the socket's folder."""
        self._server.close()
        # Best effort: ego launch is on its way out, and the folder goes either way.
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._server.wait_closed(), 5)
        shutil.rmtree(self._folder, ignore_errors=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            try:
                line = await asyncio.wait_for(reader.readline(), 10)
                request = json_loads(line)
            except (TimeoutError, ValueError, asyncio.LimitOverrunError):
                return
            answer = asyncio.ensure_future(self._answer(request))
            # The client sends nothing more: reading returns when it goes away.
            gone = asyncio.ensure_future(reader.read(1))
            try:
                await asyncio.wait({answer, gone}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                gone.cancel()
            if not answer.done():
                answer.cancel()
                with contextlib.suppress(BaseException):
                    await answer
                return
            writer.write(json_bytes(answer.result()) + b"\n")
            await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()
            # A client that went away mid-reply has nothing left to be told.
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _answer(self, request: Any) -> dict[str, Any]:
        if not isinstance(request, dict) or request.get("protocol") != PROTOCOL:
            return {"fallback": "another protocol"}
        if request.get("install") != self._key:
            return {"fallback": "another ego"}
        try:
            words = _Words.read(request)
        except (KeyError, TypeError, ValueError) as exc:
            return {"fallback": f"a request this service cannot read ({exc})"}
        try:
            return await self._call(words)
        except EgoError as exc:
            return _error(exc, cli_words(exc), ego=True)
        except Exception as exc:
            # Not the client's fault, and no reason to end the service: the client prints it.
            logger.exception("ego run through the kept browser failed")
            return _error(exc, f"{type(exc).__name__}: {exc}", ego=False)

    async def _call(self, words: _Words) -> dict[str, Any]:
        from ..calls import CallOptions
        from ..learning.catalog.manifest import PythonToolSpec
        from ..site import Site
        from .learning_commands import prepare_call, run_prepared

        learnings = self._learnings_for(words.workspace)
        _, spec = learnings.tool(words.site_id, words.tool)
        if isinstance(spec, PythonToolSpec):
            return {"fallback": "a Python tool runs in the command's own process"}
        options = CallOptions(timeout=words.timeout, confirm=words.confirm, cache=words.cache)
        with front_end("cli"):
            try:
                call = prepare_call(
                    learnings, words.site_id, words.tool, words.args_json, words.pairs, options
                )
            except click.ClickException:
                # Nothing ran: the command's own click words the error, as it always has.
                return {"fallback": "usage"}
            site = Site(self.browser, learnings)
            try:
                result = await run_prepared(site, call, words.url, words.start_urls)
            finally:
                # An ego run in a process of its own writes its run as it exits; one served
                # here is written before its answer, so an `ego health` right after sees it.
                await asyncio.to_thread(flush, RECORD_SECONDS)
        return {"result": result}

    def _learnings_for(self, workspace: str) -> Learnings:
        """One :class:`Learnings` per workspace, kept: it notices edits to the files by
        itself, so a call after an edit runs the edited tool."""
        from ..learning.catalog.registry import Learnings

        learnings = self._learnings.get(workspace)
        if learnings is None:
            # "" says "no workspace": None would mean the service's own $EGO_WORKSPACE.
            learnings = self._learnings[workspace] = Learnings(workspace=workspace)
        return learnings


@dataclass(frozen=True)
class _Words:
    """What ``ego run`` was told, as :mod:`.call_client` sends it."""

    workspace: str
    site_id: str
    tool: str
    args_json: str | None
    pairs: tuple[str, ...]
    confirm: bool
    timeout: float | None
    cache: bool
    url: str | None
    start_urls: tuple[tuple[str, str], ...]

    @classmethod
    def read(cls, request: dict[str, Any]) -> _Words:
        """Raises: KeyError, TypeError, ValueError: ``request`` is not of this shape."""
        timeout = request["timeout"]
        return cls(
            workspace=_text(request["workspace"]),
            site_id=_text(request["site"]),
            tool=_text(request["tool"]),
            args_json=_text(request["args_json"], optional=True),
            pairs=tuple(_text(pair) for pair in request["pairs"]),
            confirm=_flag(request["confirm"]),
            timeout=None if timeout is None else float(timeout),
            cache=_flag(request["cache"]),
            url=_text(request["url"], optional=True),
            start_urls=tuple((_text(site), _text(url)) for site, url in request["start_urls"]),
        )


def _text(value: Any, *, optional: bool = False) -> Any:
    if isinstance(value, str) or (optional and value is None):
        return value
    raise TypeError(f"expected text, got {type(value).__name__}")


def _flag(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    raise TypeError(f"expected true or false, got {type(value).__name__}")


def _error(exc: Exception, message: str, *, ego: bool) -> dict[str, Any]:
    code = exit_code_for(exc) if ego else EXIT_OTHER
    return {"error": {"type": type(exc).__name__, "message": message, "ego": ego, "exit": code}}
