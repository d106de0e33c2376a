"""Durable selectors for refs: what a learning keeps instead of a ref, which lives only as
long as its node.

``selector_for(page, "e12")`` gives a selector that finds the ref's node alone, checked in the
page, as a person would name the node: its test id (``testid="save"``), else
``role=button[name="Delete account"]`` when the role and name Chrome computes for it find it
alone (the selector engine's ``role=`` form, ``scripts/roles.js``), else its placeholder,
label, alt text, own text or title (``label="Email"``, ``scripts/locators.js``), else a CSS
selector (an id, a test id, a name or label when unique, else a short structural path; a
node in an open shadow root gets its host's selector first). A node in a frame gets each
iframe's own selector before it, joined by ``>>`` (:mod:`.locate`), each part checked in its
document.
"""

from __future__ import annotations

from typing import Any

from ..errors import EgoError, ElementNotFoundError, NoSelectorError
from ..protocol.remote_values import javascript_error
from .axtree import role_name
from .locate import FRAME_STEP, resolve_ref
from .page import Page
from .refs import parse_ref
from .scripts import page_script

__all__ = ["selector_for"]


async def selector_for(page: Page, ref: str, *, by_content: bool = True) -> str:
    """A selector that finds the node ``ref`` names alone, from ``page`` (frame-qualified
    for a node in a frame under it).

    Args:
        page: a tab or a frame: the selector works when given to its verbs.
        ref: ``"e12"``, ``"ref=e12"`` or ``"[ref=e12]"``, as a snapshot of the tab printed it.
        by_content: False leaves out what the node shows (its role and name, label, alt
            text, text, title): for a node read for what it shows, whose content is the
            answer and changes with it; its test id or a CSS selector then.

    Raises:
        ValueError: ``ref`` is not a ref.
        StaleRefError: the ref's node is gone (its frame navigated, or it was removed).
        ElementNotFoundError: the node is in a frame that is not ``page`` nor under it.
        NoSelectorError: no selector finds the node alone (it is in a closed shadow root).
    """
    name = parse_ref(ref) or parse_ref(f"ref={ref}")
    if name is None:
        raise ValueError(f"{ref!r} is not a ref: pass one a snapshot printed, such as 'e12'")
    frame, object_id = await resolve_ref(page, name)
    known = page.refs.get(name)
    assert known is not None  # resolve_ref found it
    try:
        path = await _path(page, frame.id)
        if path is None:
            raise ElementNotFoundError(
                f"ref {name} names a node of the frame {frame.url or frame.id}, which is not "
                f"{page.url or 'this page'} nor inside it: ask the tab (tab.selector_for)",
                selector=f"ref={name}",
            )
        own = await _selector(
            frame, object_id, known.backend_node_id, f"ref {name}", by_content=by_content
        )
    finally:
        await _release(frame, object_id)
    parts: list[str] = []
    parent = page
    for child in path:
        owner = await parent.send("DOM.getFrameOwner", {"frameId": child._frame_id})
        backend = int(owner["backendNodeId"])
        object_id = await _resolve(parent, backend)
        try:
            parts.append(await _selector(parent, object_id, backend, f"the iframe of ref {name}"))
        finally:
            await _release(parent, object_id)
        parent = child
    return f" {FRAME_STEP} ".join([*parts, own])


async def _path(page: Page, frame_id: str) -> list[Page] | None:
    """The frames from ``page`` (not included) down to the frame ``frame_id``, or None when
    that frame is not ``page`` nor under it."""
    if page.id == frame_id:
        return []
    for child in await page.child_frames():
        below = await _path(child, frame_id)
        if below is not None:
            return [child, *below]
    return None


async def _resolve(page: Page, backend: int) -> str:
    _, context_id = await page._target()
    params: dict[str, Any] = {"backendNodeId": backend}
    if context_id is not None:
        params["executionContextId"] = context_id
    return str((await page.send("DOM.resolveNode", params))["object"]["objectId"])


async def _selector(
    page: Page, object_id: str, backend: int, what: str, *, by_content: bool = True
) -> str:
    """The durable selector of one element of ``page``'s document, checked there."""
    role = name = None
    node: dict[str, Any] | None = None
    if by_content:
        tree = await page.send(
            "Accessibility.getPartialAXTree", {"backendNodeId": backend, "fetchRelatives": False}
        )
        nodes = tree.get("nodes", [])
        node = next((n for n in nodes if n.get("backendDOMNodeId") == backend), None)
    if node is not None and not node.get("ignored"):
        role = role_name(str(node.get("role", {}).get("value", "")))
        name = " ".join(str(node.get("name", {}).get("value", "") or "").split()) or None
    answer = await page.send(
        "Runtime.callFunctionOn",
        {
            "functionDeclaration": page_script("selector_for"),
            "objectId": object_id,
            "arguments": [{"value": role}, {"value": name}, {"value": by_content}],
            "returnByValue": True,
        },
    )
    if "exceptionDetails" in answer:
        raise javascript_error(answer["exceptionDetails"], context="finding a selector")
    value = answer["result"].get("value") or {}
    if value.get("selector"):
        return str(value["selector"])
    raise NoSelectorError(
        f"no selector finds {what} alone on {page.url or 'the page'}: "
        f"{value.get('problem', 'none was found')}; act on it by its ref instead"
    )


async def _release(page: Page, object_id: str) -> None:
    try:
        await page.send("Runtime.releaseObject", {"objectId": object_id})
    except EgoError:
        pass  # the document went, and the object with it
