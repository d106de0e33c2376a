"""An in-process Chrome: a CDP channel answered from Python, for tests that need no browser.

The idea of httpx's ``MockTransport``: :class:`MockChannel` implements
:class:`ego.protocol.transport.Channel`, so ``Connection(MockChannel(...))`` is a real
:class:`~ego.protocol.transport.Connection` whose "browser" is this module, and
``mock_browser(channel)`` a real :class:`ego.api.Browser` on it. Nothing is launched and no
socket is opened; messages go through the event loop (``call_soon``), in order, as they
would through a socket.

What it speaks:

- ``Target.createTarget``, ``Target.attachToTarget`` (``flatten=true``: a ``sessionId``),
  ``Target.getTargets``, ``Target.closeTarget`` (then ``Target.detachedFromTarget`` for each
  session and ``Target.targetDestroyed``), ``Target.activateTarget``;
- ``Page.navigate`` (a ``loaderId``, then ``Page.frameNavigated`` and the lifecycle events
  ``init``, ``DOMContentLoaded``, ``load``, ``networkIdle``), ``Page.reload``,
  ``Page.getFrameTree``; the ``enable`` commands a tab sends;
- ``Runtime.evaluate``: the ``evaluate`` handler decides the value from an
  :class:`Evaluation` (it may be a coroutine function, to hold a call in flight until the
  test lets it go). It raises :class:`PageError` for a JavaScript throw. A tool's plain wrap
  is decoded: :attr:`Evaluation.tool_args` and :attr:`Evaluation.tool_url`. The cache's Call
  snippet is answered ``NO_STORAGE`` without asking the handler (as on a page whose
  localStorage throws), so a tool always runs through the plain wrap;
- ``Browser.getVersion``, ``Browser.close`` (answers, then the browser dies).

Any command can be answered by a handler of your own (``handlers={"Page.navigate": f}``);
an unknown one gets CDP's "method not found" error. :meth:`MockChannel.kill` is a crash: the
channel closes and every pending call fails with BrowserClosedError.

    channel = MockChannel(evaluate=lambda ev: {"echo": ev.tool_args})
    browser = mock_browser(channel)
    tab = await browser.new_tab("http://127.0.0.1:1/page")
    channel.kill()
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
import math
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from ego.api import Browser
from ego.protocol.transport import Connection
from ego.runtime.cache import SIGNAL_KEY

__all__ = [
    "CommandError",
    "CommandHandler",
    "EvaluateHandler",
    "Evaluation",
    "MockChannel",
    "MockTarget",
    "PageError",
    "mock_browser",
]

JSON = dict[str, Any]


class PageError(Exception):
    """Raise it from an evaluate handler: the page threw ``name: message``."""

    def __init__(self, message: str, name: str = "Error") -> None:
        super().__init__(message)
        self.name = name


class CommandError(Exception):
    """Raise it from a handler: the command is answered with this CDP error."""

    def __init__(self, message: str, code: int = -32000) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class MockTarget:
    """A page the mock browser holds."""

    target_id: str
    url: str = "about:blank"
    title: str = ""
    frame_id: str = ""
    sessions: set[str] = field(default_factory=set)
    loaders: int = 0


@dataclass(frozen=True)
class Evaluation:
    """One ``Runtime.evaluate`` as the handler sees it.

    Attributes:
        channel: the channel (browser) it runs on.
        target: the page.
        session_id: the session it was sent on.
        expression: the JavaScript sent.
        tool_args: the args of a tool's plain wrap (decoded); None for other code.
        tool_url: the tool's sourceURL (``ego-learnings/<site>/<path>``), or None.
    """

    channel: MockChannel
    target: MockTarget
    session_id: str
    expression: str
    tool_args: Any = None
    tool_url: str | None = None

    @property
    def is_tool(self) -> bool:
        """True for a tool's plain wrap."""
        return self.tool_url is not None or self.expression.startswith(_WRAP_HEAD)


EvaluateHandler = Callable[[Evaluation], Any]
"""Returns the page's value (or an awaitable of it); raises PageError for a throw."""

CommandHandler = Callable[["MockChannel", JSON, str | None], Any]
"""``handler(channel, params, session_id)`` returns the result (or an awaitable of it)."""

_WRAP_HEAD = "(async () => { const __ego_tool = "
_WRAP = re.compile(
    r"^\(async \(\) => \{ const __ego_tool = (?P<source>.*);\n"
    r"return await __ego_tool\((?P<args>.*)\); \}\)\(\)\n"
    r"(?://# sourceURL=(?P<url>[^\n]*)\n)?$",
    re.DOTALL,
)
_CLOSED = "the connection to the browser closed"
#: CDP's code for "Session with given id not found".
_NO_SESSION = -32001

#: Commands answered with an empty result.
_EMPTY = frozenset(
    {
        "Page.enable",
        "Page.setLifecycleEventsEnabled",
        "Network.enable",
        "Runtime.enable",
        "Target.setDiscoverTargets",
        "Target.setAutoAttach",
        "Emulation.setFocusEmulationEnabled",
    }
)


class MockChannel:
    """A browser in this process, reached as a :class:`ego.protocol.transport.Channel`.

    Args:
        evaluate: what ``Runtime.evaluate`` answers (see :class:`Evaluation`); the default
            answers ``undefined``.
        handlers: answers of your own for any command, by method (they win over the
            built-in ones).
        name: prefixes target and session ids (tells browsers apart in a test's logs).

    Attributes:
        targets: the open pages by target id.
        commands: every command received, in order (the decoded messages).
        evaluations: every evaluation passed to the handler, in order.
        closed: True once the channel closed (killed, closed, or Browser.close).
    """

    def __init__(
        self,
        evaluate: EvaluateHandler | None = None,
        *,
        handlers: Mapping[str, CommandHandler] | None = None,
        name: str = "mock",
    ) -> None:
        self.evaluate = evaluate
        self.handlers = dict(handlers or {})
        self.name = name
        self.targets: dict[str, MockTarget] = {}
        self.commands: list[JSON] = []
        self.evaluations: list[Evaluation] = []
        self.closed = False
        self.close_reason = ""
        self._sessions: dict[str, str] = {}
        self._ids = itertools.count(1)
        self._on_message: Callable[[bytes], None] | None = None
        self._on_close: Callable[[str], None] | None = None
        self._early: list[bytes] = []
        # What hold() keeps for one read, or None while messages go one by one.
        self._held: list[bytes] | None = None
        # Handlers still working (an evaluation held by the test), with their target.
        self._tasks: dict[asyncio.Task[None], str | None] = {}
        self._loop = asyncio.get_running_loop()

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{len(self.targets)} target(s)"
        return f"<MockChannel {self.name} {state}>"

    # -- the Channel protocol --------------------------------------------------------------

    def attach(self, on_message: Callable[[bytes], None], on_close: Callable[[str], None]) -> None:
        """Start delivering messages (and any queued before) to the handlers."""
        self._on_message, self._on_close = on_message, on_close
        early, self._early = self._early, []
        for message in early:
            on_message(message)
        if self.closed:
            on_close(self.close_reason)

    def send(self, message: bytes) -> bool:
        """Take one command; it is answered on a later turn of the event loop."""
        if self.closed:
            return False
        command: JSON = orjson.loads(message)
        self.commands.append(command)
        self._loop.call_soon(self._handle, command)
        return True

    def fail(self, code: int, reason: str) -> None:
        """The client gave up on the channel (a protocol error on its side)."""
        self.kill(f"{_CLOSED} (code {code}: {reason})")

    async def close(self) -> None:
        """Close the channel (the client disconnects)."""
        self.kill(_CLOSED)

    def abort(self) -> None:
        """Drop the channel at once."""
        self.kill(_CLOSED)

    # -- what a test does ------------------------------------------------------------------

    def kill(self, reason: str = f"{_CLOSED} (the mock browser was killed)") -> None:
        """Crash: close the channel now. Every pending and later call fails. Idempotent."""
        if self.closed:
            return
        self.closed = True
        self.close_reason = reason
        for task in list(self._tasks):
            task.cancel()
        if self._on_close is not None:
            self._on_close(reason)

    def emit(self, method: str, params: JSON | None = None, session_id: str | None = None) -> None:
        """Send an event to the client (on a later turn of the event loop)."""
        message: JSON = {"method": method, "params": params or {}}
        if session_id is not None:
            message["sessionId"] = session_id
        self._deliver(message)

    def close_target(self, target_id: str) -> None:
        """Close a page as if the user or the page did: its sessions detach."""
        target = self.targets.pop(target_id)
        for task, owner in list(self._tasks.items()):
            if owner == target_id:
                task.cancel()  # nothing answers for a page that is gone
        for session_id in sorted(target.sessions):
            self._sessions.pop(session_id, None)
            self.emit("Target.detachedFromTarget", {"sessionId": session_id, "targetId": target_id})
        self.emit("Target.targetDestroyed", {"targetId": target_id})

    def open_session(self, target_id: str) -> str:
        """Attach a new flattened session to the page and report it
        (``Target.attachedToTarget``); its id."""
        target = self._target(target_id)
        session = f"{self.name}-S{next(self._ids):04d}".upper()
        target.sessions.add(session)
        self._sessions[session] = target.target_id
        self.emit(
            "Target.attachedToTarget",
            {"sessionId": session, "targetInfo": self._info(target), "waitingForDebugger": False},
        )
        return session

    def detach_session(self, session_id: str) -> None:
        """Detach one session as Chrome does when it drops it: its page stays open."""
        target_id = self._sessions.pop(session_id)
        self.targets[target_id].sessions.discard(session_id)
        self.emit("Target.detachedFromTarget", {"sessionId": session_id, "targetId": target_id})

    def hold(self) -> None:
        """Keep every message the mock sends from now on until :meth:`release`."""
        self._held = []

    def release(self) -> None:
        """Hand what :meth:`hold` kept to the client in one turn of the event loop, as one
        read of a socket or pipe that carries several messages."""
        held, self._held = self._held or [], None

        def deliver() -> None:
            for data in held:
                self._hand_over(data)

        self._loop.call_soon(deliver)

    def running(self) -> int:
        """Handlers still working (held evaluations, say)."""
        return sum(1 for task in self._tasks if not task.done())

    # -- internals -------------------------------------------------------------------------

    def _deliver(self, message: JSON) -> None:
        data = orjson.dumps(message)
        if self._held is not None:
            self._held.append(data)
        else:
            self._loop.call_soon(self._hand_over, data)

    def _hand_over(self, data: bytes) -> None:
        if self.closed:
            return  # a socket that died takes its unread messages with it
        if self._on_message is None:
            self._early.append(data)
        else:
            self._on_message(data)

    def _reply(self, command: JSON, result: Any) -> None:
        answer: JSON = {"id": command["id"], "result": result if result is not None else {}}
        self._deliver(_named(answer, command))

    def _reply_error(self, command: JSON, code: int, message: str) -> None:
        answer: JSON = {"id": command["id"], "error": {"code": code, "message": message}}
        if code == _NO_SESSION:
            self._deliver(answer)  # Chrome does not name a session it does not have
        else:
            self._deliver(_named(answer, command))

    def _handle(self, command: JSON) -> None:
        if self.closed:
            return
        method: str = command.get("method", "")
        params: JSON = command.get("params") or {}
        session_id: str | None = command.get("sessionId")
        try:
            if session_id is not None and session_id not in self._sessions:
                raise CommandError("Session with given id not found.", _NO_SESSION)
            custom = self.handlers.get(method)
            if custom is not None:
                self._answer(command, lambda: custom(self, params, session_id), session_id)
                return
            builtin = getattr(self, "_cmd_" + method.replace(".", "_"), None)
            if builtin is not None:
                builtin(command, params, session_id)
            elif method in _EMPTY:
                self._reply(command, {})
            else:
                raise CommandError(f"'{method}' wasn't found", -32601)
        except CommandError as exc:
            self._reply_error(command, exc.code, str(exc))

    def _answer(self, command: JSON, produce: Callable[[], Any], session_id: str | None) -> None:
        """Reply with what ``produce()`` gives, awaiting it in a task when it is awaitable."""
        result = produce()
        if not inspect.isawaitable(result):
            self._reply(command, result)
            return
        owner = self._sessions.get(session_id) if session_id is not None else None

        async def finish(pending: Awaitable[Any]) -> None:
            try:
                value = await pending
            except CommandError as exc:
                self._reply_error(command, exc.code, str(exc))
                return
            except Exception as exc:  # a bug in a test's handler: the call fails, loudly
                self._reply_error(command, -32000, f"mock handler failed: {exc!r}")
                return
            self._reply(command, value)

        task = self._loop.create_task(finish(result))
        self._tasks[task] = owner
        task.add_done_callback(self._forget)

    def _forget(self, task: asyncio.Task[None]) -> None:
        self._tasks.pop(task, None)

    def _target(self, target_id: Any) -> MockTarget:
        target = self.targets.get(str(target_id))
        if target is None:
            raise CommandError("No target with given id found", -32602)
        return target

    # -- built-in commands -----------------------------------------------------------------

    def _cmd_Browser_getVersion(self, command: JSON, params: JSON, session_id: str | None) -> None:
        self._reply(command, {"product": "MockChrome/1.0", "protocolVersion": "1.3"})

    def _cmd_Browser_close(self, command: JSON, params: JSON, session_id: str | None) -> None:
        self._reply(command, {})
        self._loop.call_soon(self.kill, f"{_CLOSED} (Browser.close)")

    def _cmd_Target_createTarget(self, command: JSON, params: JSON, session_id: str | None) -> None:
        number = next(self._ids)
        target_id = f"{self.name}-T{number:04d}".upper()
        self.targets[target_id] = MockTarget(
            target_id, url=str(params.get("url") or "about:blank"), frame_id=target_id
        )
        self._reply(command, {"targetId": target_id})

    def _cmd_Target_attachToTarget(
        self, command: JSON, params: JSON, session_id: str | None
    ) -> None:
        target = self._target(params.get("targetId"))
        if not params.get("flatten"):
            raise CommandError("the mock speaks flattened sessions only (flatten: true)")
        # As Chrome does: the event first, then the answer that names the session.
        self._reply(command, {"sessionId": self.open_session(target.target_id)})

    def _cmd_Target_getTargets(self, command: JSON, params: JSON, session_id: str | None) -> None:
        self._reply(command, {"targetInfos": [self._info(t) for t in self.targets.values()]})

    def _cmd_Target_closeTarget(self, command: JSON, params: JSON, session_id: str | None) -> None:
        target = self._target(params.get("targetId"))
        self._reply(command, {"success": True})
        self.close_target(target.target_id)

    def _cmd_Target_activateTarget(
        self, command: JSON, params: JSON, session_id: str | None
    ) -> None:
        self._target(params.get("targetId"))
        self._reply(command, {})

    def _cmd_Page_getFrameTree(self, command: JSON, params: JSON, session_id: str | None) -> None:
        target = self._session_target(session_id)
        frame = {"id": target.frame_id, "loaderId": f"L{target.loaders}", "url": target.url}
        self._reply(command, {"frameTree": {"frame": frame}})

    def _cmd_Page_navigate(self, command: JSON, params: JSON, session_id: str | None) -> None:
        target = self._session_target(session_id)
        url = str(params.get("url", ""))
        loader = self._new_document(target, url)
        self._reply(command, {"frameId": target.frame_id, "loaderId": loader})
        self._load(target, loader, session_id)

    def _cmd_Page_reload(self, command: JSON, params: JSON, session_id: str | None) -> None:
        target = self._session_target(session_id)
        loader = self._new_document(target, target.url)
        self._reply(command, {})
        self._load(target, loader, session_id)

    def _cmd_Runtime_evaluate(self, command: JSON, params: JSON, session_id: str | None) -> None:
        target = self._session_target(session_id)
        assert session_id is not None
        expression = str(params.get("expression", ""))
        if SIGNAL_KEY in expression and not expression.startswith(_WRAP_HEAD):
            # A cache snippet, answered as on a page whose localStorage throws: the cache
            # steps aside and the plain wrap follows.
            self._reply(command, _remote({SIGNAL_KEY: "NO_STORAGE"}))
            return
        args, url = _tool_call(expression)
        evaluation = Evaluation(self, target, session_id, expression, args, url)
        self.evaluations.append(evaluation)
        handler = self.evaluate

        async def run() -> JSON:
            try:
                value = handler(evaluation) if handler is not None else None
                if inspect.isawaitable(value):
                    value = await value
            except PageError as exc:
                return _thrown(exc)
            return _remote(value)

        self._answer(command, run, session_id)

    # -- helpers ---------------------------------------------------------------------------

    def _session_target(self, session_id: str | None) -> MockTarget:
        if session_id is None:
            raise CommandError("this command needs a page session (sessionId)", -32601)
        return self._target(self._sessions[session_id])

    def _new_document(self, target: MockTarget, url: str) -> str:
        target.loaders += 1
        target.url = url
        return f"{target.target_id}-L{target.loaders}"

    def _load(self, target: MockTarget, loader: str, session_id: str | None) -> None:
        frame = {"id": target.frame_id, "loaderId": loader, "url": target.url}
        self.emit("Page.frameNavigated", {"frame": frame}, session_id)
        for name in ("init", "DOMContentLoaded", "load", "networkIdle"):
            event = {"frameId": target.frame_id, "loaderId": loader, "name": name, "timestamp": 0}
            self.emit("Page.lifecycleEvent", event, session_id)

    def _info(self, target: MockTarget) -> JSON:
        return {
            "targetId": target.target_id,
            "type": "page",
            "title": target.title,
            "url": target.url,
            "attached": bool(target.sessions),
            "browserContextId": "default",
        }


def mock_browser(
    channel: MockChannel, *, endpoint: str | None = None, default_timeout: float = 10.0
) -> Browser:
    """A real :class:`ego.api.Browser` whose connection runs over ``channel``."""
    connection = Connection(channel, default_timeout=default_timeout)
    return Browser(
        connection, endpoint=endpoint or f"mock://{channel.name}", default_timeout=default_timeout
    )


def _named(answer: JSON, command: JSON) -> JSON:
    """``answer`` naming the session of ``command``, as Chrome names it in every answer to a
    command sent on a session."""
    if "sessionId" in command:
        answer["sessionId"] = command["sessionId"]
    return answer


def _tool_call(expression: str) -> tuple[Any, str | None]:
    """The args and sourceURL of a tool's plain wrap, or (None, None) for other code."""
    match = _WRAP.match(expression)
    if match is None:
        return None, None
    text = match.group("args")
    if text.startswith("JSON.parse(") and text.endswith(")"):
        text = json.loads(text[len("JSON.parse(") : -1])
    return json.loads(text), match.group("url")


def _remote(value: Any) -> JSON:
    """``value`` as the ``Runtime.evaluate`` result of a page returning it by value."""
    if value is None:
        remote: JSON = {"type": "undefined"}
    elif isinstance(value, bool):
        remote = {"type": "boolean", "value": value}
    elif isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        text = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
        remote = {"type": "number", "unserializableValue": text}
    elif isinstance(value, int | float):
        remote = {"type": "number", "value": value}
    elif isinstance(value, str):
        remote = {"type": "string", "value": value}
    else:
        remote = {"type": "object", "value": value}
    return {"result": remote}


def _thrown(error: PageError) -> JSON:
    description = f"{error.name}: {error}\n    at <anonymous>:1:1"
    exception = {
        "type": "object",
        "subtype": "error",
        "className": error.name,
        "description": description,
    }
    return {
        "result": exception,
        "exceptionDetails": {
            "exceptionId": 1,
            "text": "Uncaught",
            "lineNumber": 0,
            "columnNumber": 0,
            "exception": exception,
        },
    }
