"""Evaluating JavaScript in a tab: the raw by-value path, the describing path, top-level await.

:func:`evaluate` is what :meth:`ego.Tab.evaluate` runs. Two paths:

* **raw** (``describe=False``): one ``Runtime.evaluate`` with ``returnByValue``; the value comes
  back as JSON carries it (a ``Date`` or a DOM node becomes ``{}``, a cycle fails). The tool
  call path (:func:`ego.runtime.cache.run_cached`) and the tab's own verbs use it: their code
  returns JSON, and this is the fastest a call can be.
* **described** (``describe=True``, what ``tab.evaluate`` does by default): the value is kept in
  the page by reference; a primitive comes back in that same answer, and an object is then
  described in the page by ``page/scripts/describe.js`` and sent back as JSON, with what JSON
  cannot carry put in words (a ``Date`` as its ISO string, a DOM node as a short descriptor,
  a ``Map``/``Set`` as a list, a cycle as ``"[Circular $.path]"``). One more round trip for an
  object result, none for a primitive.

Both retry an expression that uses top-level ``await`` (a SyntaxError in a script) in REPL mode
(``replMode``), which allows it and keeps the completion value; the first answer costs nothing
when the code has no such error.
"""

from __future__ import annotations

import asyncio
import itertools
import re
import time
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, Final

from ..errors import CommandTimeoutError, ContextDestroyedError, ProtocolError
from ..protocol.remote_values import javascript_error, python_value, unreturnable_error
from .scripts import page_script
from .spinning import stop_spinning

if TYPE_CHECKING:
    from ..protocol.session import Session

__all__ = ["evaluate", "timed_out"]

# Chrome's words for "the context this evaluate ran in is gone" (a navigation or reload).
_CONTEXT_GONE: Final = (
    "Inspected target navigated or closed",
    "Execution context was destroyed",
    "Cannot find context with specified id",
    "Promise was collected",
    "Could not find object with given id",
    "uniqueContextId not found",
)

_AWAIT: Final = re.compile(r"\bawait\b")

# Each described evaluate keeps its value in an object group of its own, released right after
# the description is asked for (concurrent evaluates never release each other's values).
_GROUPS: Final = itertools.count(1)


async def evaluate(
    session: Session,
    expression: str,
    *,
    await_promise: bool,
    timeout: float,
    user_gesture: bool,
    describe: bool,
    tab: str,
    context: str | None = None,
    where: str | None = None,
    in_order: bool = True,
) -> Any:
    """Evaluate ``expression`` in the session's page and return its value.

    A call that gets no answer within ``timeout`` asks whether the page still answers (a
    short probe on the same session): when it does not, a script is spinning on the page's
    thread (``while(true){}``), and it is stopped with ``Runtime.terminateExecution`` so that
    the next call answers at once. A cancelled call does the same in the background.

    Args:
        session: the session of the page (a tab's, or an out-of-process frame's, or a
            worker's).
        expression: JavaScript source; its completion value is the result.
        await_promise: wait for a promise's value.
        timeout: seconds for the whole call.
        user_gesture: run as if the user had clicked.
        describe: describe what JSON cannot carry (see the module docstring).
        tab: the tab's id, for messages.
        context: the unique id of the execution context to run in (a frame's); None for the
            session's own document (a tab's main frame, an out-of-process frame's, a
            worker's global scope).
        where: how messages name the page (``"the frame pay"``); the tab by default.
        in_order: the session runs its commands in the order sent, so a described value's
            object group is released in the same write as the description is asked for.
            False for a worker's session, where a release sent so overtook the description
            (measured on Chromium 156: 161 of 200 descriptions found their object gone):
            the release then waits for the description's answer.

    Raises:
        as :meth:`ego.Tab.evaluate`.
    """
    params: dict[str, Any] = {
        "expression": expression,
        "returnByValue": not describe,
        "awaitPromise": await_promise,
        "userGesture": user_gesture,
    }
    if context is not None:
        params["uniqueContextId"] = context
    deadline = time.monotonic() + timeout
    try:
        if describe:
            return await _answer(
                _Call(session, where, tab, timeout, deadline),
                params,
                describe,
                in_order,
            )
        # The raw path, written out (a tool call's): one command, and its value when the code
        # did not throw; anything else goes the general way with this first answer.
        try:
            result = await session.send("Runtime.evaluate", params, timeout=timeout)
        except ProtocolError as exc:
            call = _Call(session, where, tab, timeout, deadline)
            raise call.failure(exc) from None
        if "exceptionDetails" not in result:
            remote = result["result"]
            # JSON's values come as they are; NaN, -0, a BigInt and the like as their text.
            return python_value(remote) if "unserializableValue" in remote else remote.get("value")
        call = _Call(session, where, tab, timeout, deadline)
        return await _answer(call, params, describe, in_order, result)
    except CommandTimeoutError:
        stopped = await stop_spinning(session)
        raise CommandTimeoutError(timed_out("evaluate", timeout, stopped)) from None
    except asyncio.CancelledError:
        _in_background(stop_spinning(session))
        raise


def timed_out(what: str, seconds: float, stopped: bool) -> str:
    """The message for ``what`` getting no result within ``seconds``, saying whether a spinning
    script was stopped (then the page answers again) or the page answered the probe (then a
    promise never settled)."""
    if stopped:
        return (
            f"{what} did not finish: a script kept the page busy, so ego stopped it after "
            f"{seconds:g} s (Runtime.terminateExecution); the page answers again"
        )
    return (
        f"{what} got no result within {seconds:g} s: a promise that never settled, or slow "
        "work; the page still answers, so pass a larger timeout if the work needs it"
    )


async def _answer(
    call: _Call,
    params: dict[str, Any],
    describe: bool,
    in_order: bool,
    result: dict[str, Any] | None = None,
) -> Any:
    """The value of the evaluate ``params`` describe, sent through ``call`` (unless its first
    ``result`` came already: a raw evaluate that threw)."""
    expression = params["expression"]
    group = ""
    if describe:
        group = f"ego-evaluate-{next(_GROUPS)}"
        params["objectGroup"] = group
    if result is None:
        result = await call.send("Runtime.evaluate", params)
    details = result.get("exceptionDetails")
    if details is not None and _needs_top_level_await(details, expression):
        call.release(group)
        if describe:  # a group of its own: the release above must not take the new value
            group = f"ego-evaluate-{next(_GROUPS)}"
            params["objectGroup"] = group
        result = await call.send("Runtime.evaluate", {**params, "replMode": True})
        details = result.get("exceptionDetails")
    remote: dict[str, Any] = result["result"]
    if details is not None:
        call.release(group)
        raise javascript_error(details)
    object_id = remote.get("objectId")
    if not describe or object_id is None:
        return python_value(remote)
    described = call.post(
        "Runtime.callFunctionOn",
        {
            "functionDeclaration": page_script("describe"),
            "arguments": [{"objectId": object_id}],
            "objectId": object_id,
            "returnByValue": True,
        },
    )
    # Written after the description on the same session, so Chrome runs it after: the value
    # stays in the page exactly as long as needed, without waiting a round trip for it.
    if in_order:
        call.release(group)
    try:
        answer = await call.answer(described)
    finally:
        if not in_order:
            call.release(group)
    if "exceptionDetails" in answer:
        raise javascript_error(answer["exceptionDetails"], context="describing the value")
    packed: list[Any] = answer["result"]["value"]
    return _restore(packed[0], packed[1]) if len(packed) > 1 else packed[0]


def _needs_top_level_await(details: dict[str, Any], expression: str) -> bool:
    """True when the script did not compile and may need top-level ``await``.

    Only a compile error qualifies, never a SyntaxError the code threw while running
    (``JSON.parse``, a rejected promise): nothing ran, so running it again in REPL mode is
    safe. A compile error has no stack frames and is not a promise's rejection.
    """
    exception = details.get("exception") or {}
    return (
        exception.get("className") == "SyntaxError"
        and "\n    at " not in str(exception.get("description", ""))
        and "in promise" not in str(details.get("text", ""))
        and "stackTrace" not in details
        and _AWAIT.search(expression) is not None
    )


def _restore(value: Any, specials: list[list[Any]]) -> Any:
    """Put back the numbers and BigInts JSON cannot carry, each at its path."""
    for path, kind, text in specials:
        special = python_value({"unserializableValue": text + "n" if kind == "bigint" else text})
        if not path:
            return special
        target = value
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = special
    return value


class _Call:
    """One evaluate's commands, sharing its deadline and its error wording."""

    __slots__ = ("_deadline", "_session", "_tab", "_where")

    def __init__(
        self, session: Session, where: str | None, tab: str, timeout: float, deadline: float
    ) -> None:
        self._session = session
        self._where = where
        self._tab = tab
        self._deadline = deadline

    async def send(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return await self.answer(self.post(method, params))

    def post(self, method: str, params: dict[str, Any]) -> asyncio.Future[dict[str, Any]]:
        """Write a command of this evaluate now, bounded by its deadline."""
        return self._session.post(
            method, params, timeout=max(0.001, self._deadline - time.monotonic())
        )

    async def answer(self, sent: asyncio.Future[dict[str, Any]]) -> dict[str, Any]:
        """The result of a command :meth:`post` wrote, its refusal worded for this evaluate."""
        try:
            return await sent
        except ProtocolError as exc:
            raise self.failure(exc) from None

    def failure(self, exc: ProtocolError) -> Exception:
        """What a command of this evaluate that Chrome refused with ``exc`` raises."""
        if any(text in str(exc) for text in _CONTEXT_GONE):
            where = self._where or f"the page in tab {self._tab[:8]}"
            return ContextDestroyedError(
                f"{where} navigated or reloaded before the evaluate finished; "
                "evaluate again on the new page"
            )
        unreturnable = unreturnable_error(exc)
        return exc if unreturnable is None else unreturnable

    def release(self, group: str) -> None:
        """Let the page drop the values kept for this call; nobody waits for the answer."""
        if group:
            self._session.send_unawaited("Runtime.releaseObjectGroup", {"objectGroup": group})


# Stops in flight for cancelled callers, held so that they are not collected before they end.
_RELEASES: Final[set[asyncio.Future[Any]]] = set()


def _released(release: asyncio.Future[Any]) -> None:
    _RELEASES.discard(release)
    if not release.cancelled():
        release.exception()  # read: a page or tab gone took the values with it


def _in_background(work: Coroutine[Any, Any, Any]) -> None:
    """Run ``work`` without waiting for it (a cancelled caller cannot wait)."""
    task = asyncio.ensure_future(work)
    _RELEASES.add(task)
    task.add_done_callback(_released)
