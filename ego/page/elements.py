"""What an action acts on: a selector or a snapshot ref, resolved to an object in the page.

A selector (CSS, open shadow roots pierced; ``iframe >> selector`` into a frame) and a ref
(``"ref=e12"``, from a snapshot) both become :class:`Elements`: the page (tab or frame) that
holds the element and a remote object there, on which the action's scripts run with
``Runtime.callFunctionOn``. For a selector the object is an array of every element it
matches (the action takes the first that passes its checks, and a script finds them again
when they all left the page); for a ref it is the node itself.

An action whose scripts need no object after its checks (a click, a hover, typing) may take
a selector unheld (``held=False``): nothing is looked up until its scripts run, each one
finding the matches itself in a ``Runtime.evaluate`` in the frame, which saves a round trip
on the path every click and every typing takes.

A malformed selector fails here, before anything is looked up or done:
:class:`~ego.errors.InvalidSelectorError`.
"""

from __future__ import annotations

import asyncio
import itertools
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from ..errors import (
    ContextDestroyedError,
    EgoError,
    ElementNotFoundError,
    InvalidSelectorError,
    ProtocolError,
)
from ..protocol.literals import embed_json
from ..protocol.remote_values import javascript_error
from .locate import frame_parts, locate, resolve_ref
from .page import Page
from .refs import parse_ref
from .script_handles import forget, handle_of, never_ran
from .scripts import page_script

if TYPE_CHECKING:
    from ..protocol.session import Session

__all__ = [
    "Elements",
    "call_on",
    "check_css",
    "check_selector",
    "invalid",
    "not_found",
    "release",
    "release_elements",
    "resolve",
]

# Chrome's words for "the document this call ran in is gone".
_CONTEXT_GONE: Final = (
    "Cannot find context with specified id",
    "Could not find object with given id",
    "Execution context was destroyed",
    "Inspected target navigated or closed",
)

#: A ``ref=...`` that is not the shape a snapshot prints (``ref=e12``).
_REF_LIKE: Final = re.compile(r"\s*\[?\s*ref\s*=", re.IGNORECASE)

_GROUPS: Final = itertools.count(1)


@dataclass(frozen=True)
class Elements:
    """What a selector or ref names, in the page that holds it.

    Attributes:
        page: the tab or frame whose document holds the element(s).
        object_id: the remote object: an array of the matches (a selector), or the node (a
            ref); empty for a selector taken unheld (the scripts find its matches).
        selector: the CSS to find the matches again in ``page`` (None for a ref).
        given: the selector or ref as the caller wrote it, for messages.
        group: the object group to release (empty for a ref's node).
    """

    page: Page
    object_id: str
    selector: str | None
    given: str
    group: str = ""

    @property
    def is_ref(self) -> bool:
        return self.selector is None


def check_selector(selector: str) -> tuple[str | None, list[str]]:
    """The ref ``selector`` names, or its frame parts; what Python can tell of its shape.

    Raises:
        InvalidSelectorError: an empty selector or ``>>`` part, a ``ref=`` of another shape
            than ``ref=e12``, or a ref inside a frame-qualified selector.
    """
    if not isinstance(selector, str) or not selector.strip():
        raise InvalidSelectorError(
            f"the selector {selector!r} is empty: pass CSS ('#save', 'button.primary') or a "
            "snapshot's ref ('ref=e12')",
            selector=str(selector),
        )
    ref = parse_ref(selector)
    if ref is not None:
        return ref, []
    try:
        parts = frame_parts(selector)
    except ValueError as exc:
        raise InvalidSelectorError(str(exc), selector=selector) from None
    for part in parts:
        if _REF_LIKE.match(part) and not part.lstrip().startswith("[ref="):
            where = " inside a frame-qualified selector" if len(parts) > 1 else ""
            raise InvalidSelectorError(
                f"the selector {selector!r} holds a ref of the wrong shape{where}: a ref is "
                "written 'ref=e12', alone (it names its frame itself), as a snapshot prints it",
                selector=selector,
            )
    return None, parts


async def resolve(page: Page, selector: str, wait: float, *, held: bool = True) -> Elements:
    """The element(s) ``selector`` (CSS or ``ref=e12``) names, waiting up to ``wait`` seconds
    for a selector to match something; with ``held`` False, a selector's frame only (its
    matches are found, waited for and its CSS checked by the script the action runs).

    Raises:
        InvalidSelectorError: ``selector`` is malformed (nothing was done).
        StaleRefError: a ref whose node or frame is gone.
        ElementNotFoundError: nothing matches within ``wait`` (or an iframe part does not).
        CommandTimeoutError: a frame's document did not come in time.
    """
    ref, parts = check_selector(selector)
    if ref is not None:
        frame, object_id = await resolve_ref(page, ref)
        return Elements(frame, object_id, None, selector)
    deadline = time.monotonic() + wait
    if len(parts) > 1:
        await check_css(page, selector, parts)
    target, inner = await locate(page, selector, wait)
    if not held:
        return Elements(target, "", inner, selector)
    group = f"ego-act-{next(_GROUPS)}"
    object_id, count = await _find(target, inner, selector, group)
    left = deadline - time.monotonic()
    if count == 0 and left > 0:
        appeared = await target.evaluate(
            f"({page_script('wait_for')})({embed_json(inner)}, {int(left * 1000)})",
            timeout=left + target.default_timeout,
            describe=False,
        )
        if appeared:
            release(target, group)
            group = f"ego-act-{next(_GROUPS)}"
            object_id, count = await _find(target, inner, selector, group)
    if count == 0:
        release(target, group)
        raise not_found(page, selector, wait)
    return Elements(target, object_id, inner, selector, group)


def not_found(page: Page, selector: str, wait: float) -> ElementNotFoundError:
    """The error for nothing matching ``selector`` within ``wait`` seconds."""
    waited = f" (waited {wait:g} s)" if wait > 0 else ""
    return ElementNotFoundError(
        f"no element matches {selector!r} on {page.url or 'the page'}{waited}: check the "
        "selector; tab.snapshot() lists what the page shows",
        selector=selector,
    )


async def _find(page: Page, inner: str, given: str, group: str) -> tuple[str, int]:
    """Every match of ``inner`` in ``page`` as one array object (in ``group``), and how many."""
    session, context_id = await page._target()
    params: dict[str, Any] = {
        "expression": f"({page_script('find_all')})({embed_json(inner)})",
        "objectGroup": group,
    }
    if context_id is not None:
        params["contextId"] = context_id
    result = await _send(page, session, "Runtime.evaluate", params, page.default_timeout)
    remote = result["result"]
    if remote.get("type") == "string":
        raise _invalid(given, inner, str(remote.get("value", ""))[len("invalid: ") :])
    description = str(remote.get("description", ""))
    count = int(description.rpartition("(")[2].rstrip(")") or 0) if "(" in description else 0
    return str(remote["objectId"]), count


async def check_css(page: Page, selector: str, parts: list[str]) -> None:
    """Every part of ``selector`` is CSS, checked in ``page`` before any frame is entered.

    Raises:
        InvalidSelectorError: a part is not CSS.
    """
    answer = await page.evaluate(
        f"({page_script('check_css')})({embed_json(parts)})", describe=False
    )
    if answer is not None:
        index, why = answer
        raise _invalid(selector, parts[int(index)], str(why))


def invalid(selector: str, part: str, why: str) -> InvalidSelectorError:
    """The error for ``part`` of ``selector`` not being CSS, as Chrome said ``why``."""
    return _invalid(selector, part, why)


def _invalid(selector: str, part: str, why: str) -> InvalidSelectorError:
    # Chrome says only "Failed to execute 'querySelector' on 'DocumentFragment': 'x' is not a
    # valid selector."; anything more it says is worth passing on.
    reason = why.rpartition(": ")[2].rstrip(".") if ": " in why else why
    detail = "" if reason.endswith("is not a valid selector") else f": {reason}"
    inside = f" (the part {part!r})" if part != selector else ""
    engine = _ENGINE.match(part)
    kind = f"a valid {engine.group(1)}= selector" if engine else "valid CSS"
    return InvalidSelectorError(
        f"the selector {selector!r} is not {kind}{inside}{detail}; write CSS such as "
        "'#id', 'button.primary', 'form input[name=q]', a role such as "
        "'role=button[name=\"Save\"]', text=, label=, placeholder=, alt=, title= or "
        "testid= and what to find ('text=Sign in', 'label=\"Email\"'), parts joined by >> "
        "('#list >> text=Apple'), or a snapshot's 'ref=e12'",
        selector=selector,
    )


#: A part of a selector that names an engine rather than CSS.
_ENGINE: Final = re.compile(r"\s*(role|text|label|placeholder|alt|title|testid|css)=")


async def call_on(
    elements: Elements,
    script: str,
    *args: Any,
    timeout: float,
    by_value: bool = True,
) -> Any:
    """Run ``page/scripts/<script>.js`` with ``this`` the elements' object and ``args``;
    its value (awaited), or a remote object id when ``by_value`` is False.

    Raises:
        ContextDestroyedError: the page navigated meanwhile.
        JavaScriptError: the script threw.
        CommandTimeoutError: no answer within ``timeout``.
    """
    page = elements.page
    session, context_id = await page._target()
    values = [{"value": arg} for arg in args]
    handle = await handle_of(page, session, context_id, script, timeout)
    if handle is not None:
        if elements.object_id:
            # The elements' object is `this`; the function is handed over first.
            on = {"functionDeclaration": _CALL_HELD, "objectId": elements.object_id,
                  "arguments": [{"objectId": handle}, *values]}  # fmt: skip
        else:
            on = {"functionDeclaration": _CALL_UNHELD, "objectId": handle, "arguments": values}
        try:
            return await _call(elements, session, on, timeout, by_value, stale=True)
        except _Stale:
            forget(page, context_id, script)
    if not elements.object_id:
        # A selector taken unheld: the script runs with no `this`, in the frame's context.
        assert by_value, "an unheld selector has no object to hand back"
        call = f"({page_script(script)}).call(null{''.join(', ' + embed_json(a) for a in args)})"
        params: dict[str, Any] = {
            "expression": call,
            "returnByValue": True,
            "awaitPromise": True,
        }
        if context_id is not None:
            params["contextId"] = context_id
        result = await _send(page, session, "Runtime.evaluate", params, timeout)
        return result["result"].get("value")
    on = {"functionDeclaration": page_script(script), "objectId": elements.object_id,
          "arguments": values}  # fmt: skip
    return await _call(elements, session, on, timeout, by_value)


#: Calls a script's function made in the page (:mod:`.script_handles`): with no `this` (a
#: selector taken unheld), or with the elements' object as `this`.
_CALL_UNHELD: Final = "function (...args) { return this.call(null, ...args); }"
_CALL_HELD: Final = "function (script, ...args) { return script.apply(this, args); }"


class _Stale(Exception):
    """A script's handle named a function Chrome no longer has; nothing ran."""


async def _call(
    elements: Elements,
    session: Session,
    on: dict[str, Any],
    timeout: float,
    by_value: bool,
    *,
    stale: bool = False,
) -> Any:
    """``Runtime.callFunctionOn`` with ``on`` (the function, its object and arguments),
    awaited; its value, or a remote object id in the elements' group.

    Raises:
        _Stale: with ``stale``, Chrome knows no such object or context; nothing ran.
        as :func:`call_on`.
    """
    params = {**on, "returnByValue": by_value, "awaitPromise": True}
    if not by_value:
        params["objectGroup"] = elements.group or f"ego-act-{next(_GROUPS)}"
    result = await _send(
        elements.page, session, "Runtime.callFunctionOn", params, timeout, stale=stale
    )
    remote = result["result"]
    return remote.get("value") if by_value else remote.get("objectId")


async def _send(
    page: Page,
    session: Session,
    method: str,
    params: dict[str, Any],
    timeout: float,
    *,
    stale: bool = False,
) -> dict[str, Any]:
    try:
        result = await session.send(method, params, timeout=timeout)
    except ProtocolError as exc:
        if stale and never_ran(exc):
            raise _Stale from None
        gone = _context_gone(page, exc)
        if gone is None:
            raise
        raise gone from None
    if "exceptionDetails" in result:
        raise javascript_error(result["exceptionDetails"])
    return result


def _context_gone(page: Page, error: ProtocolError) -> ContextDestroyedError | None:
    """The error for ``error`` when it says the page's document went (None: it does not)."""
    if any(words in str(error) for words in _CONTEXT_GONE):
        return ContextDestroyedError(
            f"the page {page.url} navigated or reloaded during the action; act again on "
            "the new page"
        )
    return None


def release(page: Page, group_or_object: str, *, is_object: bool = False) -> None:
    """Let the page drop what an action held (an object group, or one object); nobody waits."""
    if not group_or_object:
        return
    method, params = (
        ("Runtime.releaseObject", {"objectId": group_or_object})
        if is_object
        else ("Runtime.releaseObjectGroup", {"objectGroup": group_or_object})
    )
    task = asyncio.ensure_future(_quietly(page, method, params))
    _PENDING.add(task)
    task.add_done_callback(_PENDING.discard)


def release_elements(elements: Elements) -> None:
    """Release what :func:`resolve` kept in the page for ``elements``."""
    if elements.is_ref:
        release(elements.page, elements.object_id, is_object=True)
    elif elements.group:
        release(elements.page, elements.group)


async def _quietly(page: Page, method: str, params: dict[str, Any]) -> None:
    try:
        await page.send(method, params)
    except EgoError:
        pass  # the page navigated or closed: what it held went with it


# Releases in flight, held so that they are not collected before they are sent.
_PENDING: Final[set[asyncio.Future[None]]] = set()
