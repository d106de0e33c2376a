"""Selectors that reach into frames: ``iframe#pay >> #card-number`` is the element matching
``#card-number`` in the document the iframe matching ``iframe#pay`` shows.

Each part is a selector of the engine (CSS piercing open shadow roots, ``role=``,
``text=``, ...); ``>>`` never occurs in CSS, so the split is unambiguous. Parts chain through
nested frames: ``#outer >> #inner >> button``. Same-process and cross-site (out-of-process)
frames work alike. A part whose first match is no iframe starts a chain within its document
(``#list >> text=Apple``: the text inside the list), which the page's own engine finds.
"""

from __future__ import annotations

import time
from typing import Final

from ..errors import ElementNotFoundError, ProtocolError
from ..protocol.literals import embed_json
from ..protocol.remote_values import javascript_error
from .page import Page
from .scripts import page_script

__all__ = ["FRAME_STEP", "element_object", "enter", "frame_parts", "locate", "resolve_ref"]

#: What separates an iframe's selector from a selector inside its document.
FRAME_STEP: Final = ">>"


def frame_parts(selector: str) -> list[str]:
    """``selector`` cut at each ``>>`` outside brackets and quotes, each part stripped.

    Raises:
        ValueError: a part is empty (``"iframe >>"``).
    """
    parts: list[str] = []
    depth, quote, start, i = 0, "", 0, 0
    while i < len(selector):
        c = selector[i]
        if c == "\\":
            i += 2
            continue
        if quote:
            quote = "" if c == quote else quote
        elif c in "\"'":
            quote = c
        elif c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif depth == 0 and selector.startswith(FRAME_STEP, i):
            parts.append(selector[start:i].strip())
            start = i + len(FRAME_STEP)
            i = start
            continue
        i += 1
    parts.append(selector[start:].strip())
    if len(parts) > 1 and not all(parts):
        raise ValueError(
            f"selector {selector!r} has an empty part: write 'iframe-selector >> selector'"
        )
    return parts


async def locate(page: Page, selector: str, wait: float) -> tuple[Page, str]:
    """The page (a frame, for a frame-qualified selector) and the selector to use there:
    the parts after the iframes, chained with ``>>`` when the first of them is no iframe.

    Raises:
        ValueError: an empty part.
        ElementNotFoundError: a part before ``>>`` matches nothing within ``wait``.
        CommandTimeoutError: the frame's document did not come in time.
    """
    parts = frame_parts(selector)
    deadline = time.monotonic() + wait
    for n, part in enumerate(parts[:-1]):
        left = max(0.0, deadline - time.monotonic())
        entered = await _enter(page, part, left, selector, chained=True)
        if entered is None:
            return page, f" {FRAME_STEP} ".join(parts[n:])
        page = entered
    return page, parts[-1]


async def enter(page: Page, selector: str, wait: float) -> Page:
    """The frame shown by the iframe ``selector`` matches (each ``>>`` part an iframe, for a
    frame inside a frame).

    Raises:
        ValueError: an empty part.
        ElementNotFoundError: a part matches nothing within ``wait``, or no iframe.
        CommandTimeoutError: the frame's document did not come in time.
    """
    deadline = time.monotonic() + wait
    for part in frame_parts(selector):
        entered = await _enter(page, part, max(0.0, deadline - time.monotonic()), selector)
        assert entered is not None  # not chained: a part that is no iframe raised
        page = entered
    return page


async def _enter(
    page: Page, owner: str, wait: float, whole: str, *, chained: bool = False
) -> Page | None:
    """The frame shown by the iframe matching ``owner`` in ``page``; with ``chained``, None
    when ``owner``'s first match is no iframe (the rest of the selector is found inside it)."""
    object_id = await element_object(page, owner, frames_only=chained)
    if object_id is None and wait > 0:
        found = await page.evaluate(
            f"({page_script('wait_for')})({embed_json(owner)}, {int(wait * 1000)})",
            timeout=wait + page.default_timeout,
            describe=False,
        )
        if found:
            object_id = await element_object(page, owner, frames_only=chained)
    if object_id is None:
        kind = "element" if chained else "iframe"
        raise ElementNotFoundError(
            f"no {kind} matches {owner!r} on {page.url or 'the page'} (in {whole!r}): check "
            "the selector; tab.snapshot() shows each frame with a ref, and tab.selector_for(ref) "
            "its selector",
            selector=whole,
        )
    if object_id == _NOT_A_FRAME:
        return None
    try:
        node = (await page.send("DOM.describeNode", {"objectId": object_id}))["node"]
    finally:
        try:
            await page.send("Runtime.releaseObject", {"objectId": object_id})
        except ProtocolError:
            pass  # the document went, and the object with it
    frame_id = node.get("frameId")
    if not frame_id:
        tag = str(node.get("localName") or node.get("nodeName", "?")).lower()
        raise ElementNotFoundError(
            f"{owner!r} matches a <{tag}>, not an iframe (in {whole!r}): the part before >> "
            "must name an iframe",
            selector=whole,
        )
    return await page.child_frame(str(frame_id), max(wait, page.default_timeout))


#: What :func:`element_object` answers, asked for frames only, of an element that is none.
_NOT_A_FRAME: Final = "not a frame"
#: The first match, or the words of :data:`_NOT_A_FRAME` in its place when it is no frame.
_FRAME_OR_WORDS: Final = (
    "((el) => el && el.localName !== 'iframe' && el.localName !== 'frame' ? %s : el)(%s)"
)


async def element_object(page: Page, selector: str, *, frames_only: bool = False) -> str | None:
    """The remote object id of the first element matching ``selector``, or None; with
    ``frames_only``, :data:`_NOT_A_FRAME` (and nothing held) when that element is no frame."""
    session, context_id = await page._target()
    found = f"({page_script('find')})({embed_json(selector)})"
    if frames_only:
        found = _FRAME_OR_WORDS % (embed_json(_NOT_A_FRAME), found)
    params: dict[str, object] = {"expression": found, "returnByValue": False}
    if context_id is not None:
        params["contextId"] = context_id
    result = await session.send("Runtime.evaluate", params, timeout=page.default_timeout)
    if "exceptionDetails" in result:
        raise javascript_error(result["exceptionDetails"])
    remote = result["result"]
    if remote.get("value") == _NOT_A_FRAME:
        return _NOT_A_FRAME
    object_id = remote.get("objectId")
    return str(object_id) if object_id else None


async def resolve_ref(page: Page, ref: str) -> tuple[Page, str]:
    """The frame that holds the node ``ref`` names, and a remote object of the node there
    (in the frame's own execution context: release it when done).

    Raises:
        StaleRefError: the ref is unknown, its frame is gone or navigated, or its node was
            removed (even while the page still holds it).
    """
    registry = page.refs
    known = registry.get(ref)
    frame = page.known_frame(known.frame_id) if known is not None else None
    target = registry.target(ref, frame)
    assert frame is not None
    _, context_id = await frame._target()
    params: dict[str, object] = {"backendNodeId": target.backend_node_id}
    if context_id is not None:
        params["executionContextId"] = context_id
    try:
        result = await frame.send("DOM.resolveNode", params)
    except ProtocolError as exc:
        raise registry.gone(ref, exc) from None
    object_id = str(result["object"]["objectId"])
    # Chrome still resolves a removed node while anything holds it (until it is collected):
    # only one in the document is the node the snapshot showed.
    connected = await frame.send(
        "Runtime.callFunctionOn",
        {
            "functionDeclaration": "function () { return this.isConnected; }",
            "objectId": object_id,
            "returnByValue": True,
        },
    )
    if connected.get("result", {}).get("value") is not True:
        try:
            await frame.send("Runtime.releaseObject", {"objectId": object_id})
        except ProtocolError:
            pass  # the document went, and the object with it
        raise registry.stale(ref, "names a node that was removed from the page")
    return frame, object_id
