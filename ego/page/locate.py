"""Selectors that reach into frames: ``iframe#pay >> #card-number`` is the element matching
``#card-number`` in the document the iframe matching ``iframe#pay`` shows.

Each part is CSS (open shadow roots pierced, as everywhere in ego); ``>>`` never occurs in
CSS, so the split is unambiguous. Parts chain through nested frames: ``#outer >> #inner >>
button``. Same-process and cross-site (out-of-process) frames work alike.
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
    """The page (a frame, for a frame-qualified selector) and the selector to use there.

    Raises:
        ValueError: an empty part.
        ElementNotFoundError: an iframe part matches nothing within ``wait``, or matches an
            element that is not a frame.
        CommandTimeoutError: the frame's document did not come in time.
    """
    parts = frame_parts(selector)
    deadline = time.monotonic() + wait
    for part in parts[:-1]:
        page = await _enter(page, part, max(0.0, deadline - time.monotonic()), selector)
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
        page = await _enter(page, part, max(0.0, deadline - time.monotonic()), selector)
    return page


async def _enter(page: Page, owner: str, wait: float, whole: str) -> Page:
    """The frame shown by the iframe matching ``owner`` in ``page``."""
    object_id = await element_object(page, owner)
    if object_id is None and wait > 0:
        found = await page.evaluate(
            f"({page_script('wait_for')})({embed_json(owner)}, {int(wait * 1000)})",
            timeout=wait + page.default_timeout,
            describe=False,
        )
        if found:
            object_id = await element_object(page, owner)
    if object_id is None:
        raise ElementNotFoundError(
            f"no iframe matches {owner!r} on {page.url or 'the page'} (in {whole!r}): check "
            "the selector; tab.snapshot() shows each frame with a ref, and tab.selector_for(ref) "
            "its selector",
            selector=whole,
        )
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


async def element_object(page: Page, selector: str) -> str | None:
    """The remote object id of the first element matching ``selector``, or None."""
    session, context_id = await page._target()
    params: dict[str, object] = {
        "expression": f"({page_script('find')})({embed_json(selector)})",
        "returnByValue": False,
    }
    if context_id is not None:
        params["contextId"] = context_id
    result = await session.send("Runtime.evaluate", params, timeout=page.default_timeout)
    if "exceptionDetails" in result:
        raise javascript_error(result["exceptionDetails"])
    object_id = result["result"].get("objectId")
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
