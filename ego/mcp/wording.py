"""ego's errors in an MCP caller's words: the fix named as a tool call, never as Python.

The error types carry the facts (``ConfirmationRequiredError.subject``,
``DialogOpenError.dialog_type``, ...) and their messages word the fix for Python callers
(``confirm=True``, ``tab.snapshot()``). An MCP client types ``confirm: true`` and calls
``take_snapshot``, so :func:`mcp_message` words each fix the MCP way. The Python wording is
left as it is.
"""

from __future__ import annotations

import json
from typing import Final

from ..errors import (
    ConfirmationRequiredError,
    DialogOpenError,
    EgoError,
    SkillExistsError,
    StorageStateTooLargeError,
    TabLimitError,
    WrongElementError,
)
from ..page.refs import parse_ref

__all__ = ["MAX_ERROR_CHARS", "PYTHON_TO_MCP", "failure_message", "mcp_message", "one_line"]

#: The most characters an error's text gives an agent (a page may throw a huge message).
MAX_ERROR_CHARS: Final = 2_000

#: Python spellings in ego's messages and what an MCP caller types instead.
PYTHON_TO_MCP: tuple[tuple[str, str], ...] = (
    ("confirm=True", "confirm: true"),
    ("force=True", "force: true"),
    ("tab.snapshot()", "take_snapshot"),
    ("tab.selector_for(ref)", "selector_for"),
    ("(tab.selector_for)", "(selector_for)"),
    ("(tab.reload())", "(the reload tool)"),
    ("tab.reload()", "the reload tool"),
    ("tab.handle_dialog()", "handle_dialog"),
    ("tab.handle_dialog", "handle_dialog"),
    ("overwrite=True", "overwrite: true"),
    ("type with clear=False", "call type with clear: false"),
    ("tab.network()", "list_network_requests"),
    ("text=, selector=, url= or network_idle=True", "text, selector, url or network_idle: true"),
    (
        "navigate inside `async with tab.expect_dialog(accept=True):`, or launch with "
        "dialogs={'beforeunload': 'accept'}",
        "navigate again and answer its dialog with handle_dialog (accept: true)",
    ),
    ("reload with resend=True", "call reload with resend: true"),
    (
        "wait for it with tab.wait_for(url=...), or give the tab a larger default_timeout",
        "wait for it with wait_for (url, timeout)",
    ),
    ("site.save_browser_tool(", "save_browser_tool("),
    ("site.run_browser_tool(", "run_browser_tool("),
    ("`site.heal_tool(", "`heal_tool("),
    (
        "pass that tab (tab=) or call set_start_url(",
        "navigate to it and call the tool again, or call set_start_url(",
    ),
    ("list the tabs again (tabs())", "list_tabs lists them"),
)


#: ego's verbs as Python calls them and the MCP tool of each, with the argument that says
#: what to do to the element.
_TOOLS: Final = {"select": ("select_option", "values")}


def mcp_message(exc: BaseException, *, confirm_key: str = "confirm") -> str:
    """``exc`` as an MCP tool error's text: its type name, then its message in MCP words.

    Args:
        exc: the error a tool raised.
        confirm_key: the argument that confirms an irreversible call on this tool (``confirm``
            unless the tool's own args already use that name).
    """
    if isinstance(exc, ConfirmationRequiredError):
        text = exc.worded(f"call it again with {confirm_key}: true")
    elif isinstance(exc, DialogOpenError):
        shown = f" {exc.dialog_message!r}" if exc.dialog_message else ""
        text = (
            f"a {exc.dialog_type} dialog{shown} is open on {exc.url or 'the page'} and blocks "
            "it: answer it with handle_dialog (accept: true or false; prompt_text for a "
            "prompt), then retry"
        )
    elif isinstance(exc, StorageStateTooLargeError):
        text = exc.worded(f"the operator raises the bound with ego mcp {exc.flag}")
    elif isinstance(exc, TabLimitError):
        text = exc.worded(
            "close one with close_tab first (the operator sets the bound with ego mcp --max-tabs)"
        )
    elif isinstance(exc, WrongElementError):
        text = _wrong_element(exc)
    elif isinstance(exc, SkillExistsError):
        text = str(exc).replace("pass overwrite=True", "call it again with overwrite: true")
    else:
        text = str(exc)
    for python, mcp in PYTHON_TO_MCP:
        text = text.replace(python, mcp)
    return f"{type(exc).__name__}: {text}"


def _wrong_element(exc: WrongElementError) -> str:
    """``exc`` naming the tool an agent calls and the arguments it passes."""
    tool, what = _TOOLS.get(exc.action, (exc.action, "values"))
    owner = parse_ref(exc.owner) if exc.owner is not None else None
    fix = f"{tool} with ref: {json.dumps(owner)} and {what}: {json.dumps([exc.choice])}"
    return exc.worded(_target(exc.selector), tool, _target(exc.owner or ""), fix)


def _target(selector: str) -> str:
    """A selector or ref as an MCP caller passes it (``ref e12``, ``selector "#save"``)."""
    ref = parse_ref(selector)
    return f"ref {ref}" if ref is not None else f"selector {json.dumps(selector)}"


def one_line(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    """``text`` on one line (its line breaks as spaces), cut to ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def failure_message(tool: str, exc: BaseException) -> str:
    """The one line an MCP caller gets for ``exc``, raised by ``tool``: an ego error in MCP
    words (:func:`mcp_message`), anything else as its type and its message, bounded."""
    if isinstance(exc, EgoError):
        return one_line(mcp_message(exc))
    detail = one_line(str(exc), MAX_ERROR_CHARS // 4) or "no message"
    return f"Error executing tool {tool}: {type(exc).__name__}: {detail}"
