"""The page scripts a document was given once, called again by a handle.

A verb's script (``actionable.js`` with its DOM helpers is about 65 KB) would otherwise go
over the pipe, through Chrome's JSON and into V8's parser with every call: measured on this
machine, a call that ships it costs about 1.4 ms where a call of the same function already
made in the page costs about 0.45 ms. So the first call of a script in a document makes the
function there (``Runtime.evaluate`` of its source, the object kept in the group
:data:`GROUP`, which no page script can reach) and notes its object id in the frame's
``document_memo`` (which a new document empties); later calls name it
(``Runtime.callFunctionOn``). The function lives as long as its execution context; an id
whose context has gone (Chrome says it knows no such object or context, and nothing ran) is
forgotten and the call is made again the long way by the caller.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from ..errors import EgoError, ProtocolError
from .scripts import page_script

if TYPE_CHECKING:
    from ..protocol.session import Session
    from .page import Page

__all__ = ["GROUP", "NEVER_RAN", "forget", "handle_of", "never_ran"]

#: The object group of the installed functions (never released: they go with the context).
GROUP: Final = "ego-scripts"

#: Chrome's words for a call it refused before running anything: the handle is stale.
NEVER_RAN: Final = ("Could not find object with given id", "Cannot find context with specified id")

#: The key of a script's handles in a document memo.
_MEMO_KEY: Final = "ego.page.script_handles"


def _handles(page: Page) -> dict[tuple[int | None, str], str] | None:
    """The handles noted for the page's current document (None: a page with no memo, such as
    a test's stand-in, installs nothing)."""
    memo: dict[str, Any] | None = getattr(page, "document_memo", None)
    if memo is None:
        return None
    handles: dict[tuple[int | None, str], str] | None = memo.get(_MEMO_KEY)
    if handles is None:
        handles = memo[_MEMO_KEY] = {}
    return handles


async def handle_of(
    page: Page, session: Session, context_id: int | None, script: str, timeout: float
) -> str | None:
    """The object id of ``page/scripts/<script>.js``'s function in the page's document (the
    context ``context_id``, None: the session's main frame), made there on first use; None
    when it cannot be made (the document is going), and the caller sends the source itself.
    """
    handles = _handles(page)
    if handles is None:
        return None
    # Keyed by the source: a new test id attribute makes new sources (page_script).
    key = (context_id, page_script(script))
    handle = handles.get(key)
    if handle is not None:
        return handle
    params: dict[str, Any] = {"expression": f"({key[1]})", "objectGroup": GROUP}
    if context_id is not None:
        params["contextId"] = context_id
    try:
        result = await session.send("Runtime.evaluate", params, timeout=timeout)
    except EgoError:
        return None
    object_id = result.get("result", {}).get("objectId")
    if "exceptionDetails" in result or not isinstance(object_id, str):
        return None
    # The memo read again: a document that came meanwhile has a memo of its own.
    current = _handles(page)
    if current is handles:
        handles[key] = object_id
    return object_id


def never_ran(error: ProtocolError) -> bool:
    """Whether Chrome refused a call before running it (an object or context it no longer
    has)."""
    return any(words in str(error) for words in NEVER_RAN)


def forget(page: Page, context_id: int | None, script: str) -> None:
    """Drop the handle of ``script`` noted for the page's document (its context went)."""
    handles = _handles(page)
    if handles is not None:
        handles.pop((context_id, page_script(script)), None)
