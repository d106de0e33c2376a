"""What every MCP action tool shares: the arguments that name what it acts on, and the one
way an action runs and answers (:func:`act`): the action, the downloads it began, the dialog
it opened, and what changed on the page (:mod:`.changes`).
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Final, TypeVar

from pydantic import Field

from ..errors import DialogOpenError, EgoError
from ..page.tab import Tab
from .changes import Watch, reply
from .results import tool_result
from .sdk import CallToolResult, ToolError
from .wording import mcp_message

__all__ = [
    "Diff",
    "Force",
    "Modifiers",
    "Ref",
    "Target",
    "act",
    "acting",
    "settled",
    "target_of",
    "thing_of",
]

T = TypeVar("T")

#: A selector (CSS, ``text=``, ``label=``, ``role=``, ...): the click tool's description names
#: the kinds once for every tool that takes one.
Target = str | None
#: A snapshot's ref (``e12``): the name says it, and every snapshot shows the shape.
Ref = str | None
#: ``force: true`` skips the actionability checks; the refusal that needs it says so.
Force = bool
Modifiers = Annotated[list[str] | None, Field(description="Shift, Control, Alt, Meta")]
#: Every action's reply says what changed on the page; diff: false skips it (take_snapshot's
#: description says so once, for all of them).
Diff = bool


def target_of(selector: str | None, ref: str | None) -> str:
    """What an action tool acts on: its ``selector``, or its ``ref`` as ``ref=e12``.

    Raises:
        ToolError: neither or both given.
    """
    if (selector is None) == (ref is None):
        raise ToolError(
            "InvalidSelectorError: give selector (CSS) or ref (from take_snapshot), one of them"
        )
    if ref is not None:
        ref = ref.strip()
        return ref if ref.startswith(("ref=", "[")) else f"ref={ref}"
    assert selector is not None
    return selector


#: A bare ref as a snapshot prints it (``e12``), where a selector or a ref is taken.
_BARE_REF: Final = re.compile(r"e\d+")


def thing_of(given: str) -> str:
    """What a tool argument that takes a selector or a ref names: a bare ``e12`` is the ref
    ``ref=e12``; anything else is the selector (or ``ref=e12``) as given."""
    given = given.strip()
    return f"ref={given}" if _BARE_REF.fullmatch(given) else given


#: Seconds with no request in flight after an action before it counts as settled, and the
#: most an action waits for that.
_SETTLE_QUIET = 0.1
_SETTLE_AT_MOST = 2.0


async def settled(tab: Tab, started: float) -> dict[str, Any]:
    """Let what an action started settle: wait (briefly, bounded) for the page's requests to
    finish, then for the downloads that began since ``started`` to be saved. Answers
    ``{"downloads": [...]}`` when any began, else ``{}``."""
    with contextlib.suppress(EgoError):
        await tab.network_log.wait_idle(quiet=_SETTLE_QUIET, timeout=_SETTLE_AT_MOST)
    begun = [download for download in tab.downloads() if download.started_at >= started]
    for download in begun:
        with contextlib.suppress(EgoError):
            await download.finished(tab.default_timeout)
    return {"downloads": [download.as_dict() for download in begun]} if begun else {}


async def acting(
    tab: Tab, action: Callable[[], Awaitable[object]], started: float
) -> dict[str, Any] | None:
    """Run an input ``action``; when it opened a page dialog (which then blocks the page),
    answer what happened instead of an error: the action ran, and how to answer the dialog.

    Raises:
        ToolError: the action failed (a dialog that was open before it included).
    """
    try:
        # A download the action starts must land in ego's folder, whoever set it last.
        await tab.keep_downloads()
        await action()
    except DialogOpenError as exc:
        dialog = tab.dialog
        if dialog is None or dialog.opened_at < started:
            raise ToolError(mcp_message(exc)) from None
        shown = f" {dialog.message!r}" if dialog.message else ""
        return {
            "dialog": dialog.as_dict(),
            "next": f"this opened a {dialog.type} dialog{shown}; the page waits until it is "
            "answered: call handle_dialog with accept: true or false (prompt_text for a "
            "prompt)",
        }
    except (EgoError, ValueError) as exc:
        # ValueError: the verb refused its arguments (an unknown key); the caller's to fix.
        raise ToolError(mcp_message(exc)) from None
    return None


async def act(
    tab: Tab,
    action: Callable[[], Awaitable[T]],
    answer: Callable[[T | None], dict[str, Any]],
    *,
    diff: bool,
) -> CallToolResult:
    """Run an input ``action`` on ``tab`` and answer what it did: ``answer`` of its value,
    the downloads it began, the dialog it opened, and what changed on the page
    (:mod:`.changes`).

    Raises:
        ToolError: the action failed.
    """
    started = time.time()
    watch = await Watch(tab, diff=diff).start()
    done: list[T] = []

    async def run() -> None:
        done.append(await action())

    opened = await acting(tab, run, started)
    value = done[0] if done else None
    if opened is not None:  # the page is held by the dialog: nothing more can be read
        return tool_result({**answer(value), **opened})
    watch.acted()  # the page is read while it settles
    result = {**answer(value), **await settled(tab, started)}
    return reply(result, await watch.note())
