"""Waiting for a JavaScript predicate to hold in the page, bounded like every wait.

``wait_for(function="() => window.app && window.app.ready")`` (a function, called each
time, or an expression, evaluated each time) is polled in the page itself, on every
animation frame or every ``polling`` seconds, in one evaluate that resolves when it returns
something truthy or the time is up: no round trip per poll. When the page navigates
meanwhile, the rest of the wait runs in the new document.
"""

from __future__ import annotations

import time
from typing import Final

from ..errors import CommandTimeoutError, ContextDestroyedError
from .page import Page

__all__ = ["Polling", "wait_function"]

#: ``"raf"``: every animation frame; a number: every that many seconds.
Polling = str | float

#: Extra seconds the evaluate carrying the wait gets past the wait's own end.
_GRACE: Final = 5.0

_POLL: Final = """(async () => {
  const predicate = () => (%s);
  const every = %s, deadline = performance.now() + %d;
  const next = () => new Promise((resolve) => {
    if (every !== "raf") return setTimeout(resolve, every);
    // A tab in the background gets no animation frames: a timer stands in.
    const timer = setTimeout(resolve, 100);
    requestAnimationFrame(() => { clearTimeout(timer); resolve(); });
  });
  for (;;) {
    let value = predicate();
    if (typeof value === "function") value = value();
    if (await value) return true;
    if (performance.now() >= deadline) return false;
    await next();
  }
})()"""


async def wait_function(
    page: Page, function: str, *, polling: Polling = "raf", timeout: float
) -> float:
    """Wait until ``function`` (JavaScript: a function, or an expression) returns something
    truthy in the page; the seconds waited.

    Raises:
        ValueError: ``function`` is empty, or ``polling`` is neither ``"raf"`` nor a
            positive number of seconds.
        JavaScriptError: the function threw (or is not JavaScript): at once.
        CommandTimeoutError: it did not hold within ``timeout``.
    """
    if not isinstance(function, str) or not function.strip():
        raise ValueError("wait_for(function=...) takes JavaScript: '() => window.ready'")
    if polling == "raf":
        every = '"raf"'
    elif isinstance(polling, int | float) and not isinstance(polling, bool) and polling > 0:
        every = str(max(1, round(polling * 1000)))
    else:
        raise ValueError(
            f"wait_for: polling={polling!r}; use 'raf' (every animation frame) or seconds"
        )
    started = time.monotonic()
    deadline = started + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        expression = _POLL % (function, every, int(left * 1000))
        try:
            if await page.evaluate(expression, timeout=left + _GRACE, describe=False):
                return time.monotonic() - started
        except ContextDestroyedError:
            continue  # the page navigated: poll in the new document for what is left
        break
    shown = " ".join(function.split())
    shown = shown if len(shown) <= 80 else shown[:79] + "…"
    raise CommandTimeoutError(
        f"waited {timeout:g} s for {shown!r} to be true on {page.url or 'the page'}; it was "
        "not (check it with evaluate, or pass a larger timeout)"
    )
