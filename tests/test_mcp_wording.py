"""ego's errors in an MCP caller's words (no browser): the fix is named as a tool call."""

from __future__ import annotations

import pytest

from ego.errors import (
    CommandTimeoutError,
    ConfirmationRequiredError,
    DialogOpenError,
    EgoError,
    ElementNotActionableError,
    ElementNotFoundError,
    SkillExistsError,
    TargetCrashedError,
)
from ego.mcp.wording import mcp_message

PYTHON_SPELLINGS = ("=True", "=False", "tab.", "domains=", "site.")


def test_confirmation_is_worded_as_an_mcp_argument() -> None:
    error = ConfirmationRequiredError("demo-shop/post_review")
    assert "confirm=True" in str(error)  # the Python wording stays as it is
    text = mcp_message(error)
    assert text.startswith("ConfirmationRequiredError: demo-shop/post_review is irreversible")
    assert "call it again with confirm: true" in text
    assert "ego_confirm: true" in mcp_message(error, confirm_key="ego_confirm")


def test_an_open_dialog_names_handle_dialog() -> None:
    error = DialogOpenError(
        "Runtime.evaluate: a confirm dialog blocks tab 1234 ... tab.handle_dialog(accept=True)",
        dialog_type="confirm",
        dialog_message="Delete it?",
        url="http://127.0.0.1:8000/x",
    )
    text = mcp_message(error)
    assert "a confirm dialog 'Delete it?' is open on http://127.0.0.1:8000/x" in text
    assert "handle_dialog (accept: true or false" in text


@pytest.mark.parametrize(
    ("error", "wanted"),
    [
        (
            ElementNotFoundError(
                "no element matches '#x' on http://a.test/: check the selector; "
                "tab.snapshot() lists reusable ones",
                selector="#x",
            ),
            "take_snapshot lists reusable ones",
        ),
        (
            TargetCrashedError("Runtime.evaluate: tab crashed; reload the tab (tab.reload())"),
            "reload the tab (the reload tool)",
        ),
        (
            SkillExistsError(
                "skill a.com/b is already in /ws/skills: pass overwrite=True to replace it"
            ),
            "call it again with overwrite: true",
        ),
        (
            ElementNotActionableError(
                "cannot type into <div id=e> ('#e') on http://a.test/: it still shows what it "
                "held before after select all and Delete, twice; typed check: it shows 'x'. "
                "Clear it by the page's own control, or type with clear=False",
                selector="#e",
                check="typed",
                seen="it shows 'x'",
            ),
            "or call type with clear: false",
        ),
        (
            CommandTimeoutError(
                "the click landed and began a navigation to http://a.test/next, but no page "
                "came within 30 s (its server has not answered): wait for it with "
                "tab.wait_for(url=...), or give the tab a larger default_timeout"
            ),
            "wait for it with wait_for (url, timeout)",
        ),
        (
            EgoError("wait_for takes exactly one of text=, selector=, url= or network_idle=True"),
            "exactly one of text, selector, url or network_idle: true",
        ),
    ],
)
def test_python_spellings_become_mcp_ones(error: EgoError, wanted: str) -> None:
    text = mcp_message(error)
    assert wanted in text
    assert not [spelling for spelling in PYTHON_SPELLINGS if spelling in text], text
