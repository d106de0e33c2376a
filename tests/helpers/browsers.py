"""A shared browser's tabs and endpoints, and a call left pending in a page (bounded by HANG)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import ego


def websocket_url(browser: ego.Browser) -> str:
    """``browser.endpoint``, which a browser launched with a port (or attached to) has."""
    assert browser.endpoint is not None, "launched without a port: pass port=0 to attach to it"
    return browser.endpoint


@contextlib.asynccontextmanager
async def fresh_tab(owner: ego.Browser) -> AsyncIterator[ego.Tab]:
    """A new tab of ``owner`` for the block, closed after it (unless the browser is gone)."""
    fresh = await owner.new_tab()
    try:
        yield fresh
    finally:
        if not owner.closed:
            await fresh.close()


#: Turns a hang into a failure. Never a timing assertion: healthy calls end far sooner.
HANG = 15.0


#: A promise that never settles.
NEVER = "new Promise(() => {})"


async def evaluate_pending(tab: ego.Tab, *, timeout: float | None = None) -> asyncio.Task[Any]:
    """Start an evaluate that never settles and return its task once it runs in the page.

    The expression logs a marker first; the console event proves that Chrome has started the
    evaluation (so a following navigation, close or kill really lands mid-call).
    """
    await tab.send("Runtime.enable")
    marker = f"pending-{id(tab)}-{asyncio.get_running_loop().time()}"
    session = await tab.attach()
    started = session.expect(
        "Runtime.consoleAPICalled",
        lambda params: any(arg.get("value") == marker for arg in params["args"]),
    )
    task = asyncio.create_task(tab.evaluate(f"console.log({marker!r}); {NEVER}", timeout=timeout))
    await asyncio.wait_for(started, HANG)
    assert not task.done()
    return task
