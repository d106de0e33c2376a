"""A tab's waits: for text, an element, a URL or a quiet network, each bounded by a timeout.

Nothing here polls from Python: text and elements are watched by a promise in the page
(a ``MutationObserver``), URLs by the tab's navigation events, and the network by its
request events.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from fnmatch import fnmatchcase
from typing import Final

from ..errors import (
    CommandTimeoutError,
    ContextDestroyedError,
    ElementNotFoundError,
    InvalidSelectorError,
    JavaScriptError,
)
from ..protocol.literals import embed_json
from .elements import check_selector, invalid
from .locate import locate
from .page import Page
from .scripts import page_script

__all__ = ["IDLE_QUIET", "url_matcher", "wait_for"]

#: Seconds with no request in flight that count as network idle.
IDLE_QUIET: Final = 0.5

#: Extra seconds the evaluate carrying an in-page wait gets past the wait's own end.
_GRACE: Final = 5.0


def url_matcher(url: str) -> Callable[[str], bool]:
    """A test for URLs: containing ``url`` (a whole URL, or a part such as ``"/checkout"``),
    or, when it holds ``*``, matching it whole as a glob (``"*/orders/*/done"``; ``*``
    matches any characters, ``/`` included)."""
    if "*" in url:
        return lambda candidate: fnmatchcase(candidate, url)
    return lambda candidate: url in candidate


async def wait_for(
    page: Page,
    *,
    text: str | None = None,
    selector: str | None = None,
    url: str | None = None,
    network_idle: bool = False,
    timeout: float,
) -> float:
    """Wait for exactly one condition: ``text`` shows on the page, ``selector`` matches,
    the page's URL contains ``url`` (see :func:`url_matcher`), or ``network_idle`` (no request in
    flight for :data:`IDLE_QUIET` seconds).

    Text and selectors are watched in the page's document and its open shadow roots, and
    again in the new document when the page navigates meanwhile; a frame-qualified selector
    (``iframe >> selector``) waits for the frame, then in it. A URL counts once the page's
    frame committed to it (or moved to it within the document), before that page loads.

    Returns:
        the seconds waited.

    Raises:
        ValueError: not exactly one condition.
        InvalidSelectorError: ``selector`` is malformed (or a ref); nothing was waited for.
        CommandTimeoutError: the condition did not hold within ``timeout``; the message
            names it.
    """
    given = [text is not None, selector is not None, url is not None, bool(network_idle)]
    if sum(given) != 1:
        raise ValueError(
            "wait_for takes exactly one of text=, selector=, url= or network_idle=True"
        )
    started = time.monotonic()
    if network_idle:
        await page.network_log.wait_idle(quiet=IDLE_QUIET, timeout=timeout)
        return time.monotonic() - started
    if url is not None:
        await _wait_url(page, url, timeout)
        return time.monotonic() - started
    target = page
    if text is not None:
        script, what = f"({page_script('wait_text')})({embed_json(text)}", f"text {text!r}"
    else:
        assert selector is not None
        ref, _ = check_selector(selector)
        if ref is not None:
            raise InvalidSelectorError(
                f"wait_for(selector={selector!r}) takes CSS, not a ref: a ref names a node a "
                "snapshot already showed; wait for a CSS selector or text",
                selector=selector,
            )
        try:
            target, inner = await locate(page, selector, timeout)
        except ElementNotFoundError:
            raise _timed_out(page, timeout, f"an element matching {selector!r}") from None
        except JavaScriptError as exc:
            raise _not_css(selector, exc) from None
        script = f"({page_script('wait_for')})({embed_json(inner)}"
        what = f"an element matching {selector!r}"
    deadline = started + timeout
    while True:
        left = deadline - time.monotonic()
        try:
            if left > 0 and await target.evaluate(
                f"{script}, {int(left * 1000)})", timeout=left + _GRACE, describe=False
            ):
                return time.monotonic() - started
        except ContextDestroyedError:
            continue  # the page navigated: watch the new document for what is left
        except JavaScriptError as exc:
            raise (_not_css(selector, exc) if selector is not None else exc) from None
        break
    raise _timed_out(page, timeout, what)


def _not_css(selector: str, error: JavaScriptError) -> Exception:
    """``error`` as :class:`InvalidSelectorError` when the page said the selector is not CSS
    (the wait's first look throws before anything waits), else itself."""
    if "is not a valid selector" not in str(error):
        return error
    return invalid(selector, selector, str(error))


def _timed_out(page: Page, timeout: float, what: str) -> CommandTimeoutError:
    return CommandTimeoutError(
        f"waited {timeout:g} s for {what} on {page.url or 'the page'}; it did not appear "
        "(check the spelling, or pass a larger timeout)"
    )


async def _wait_url(page: Page, url: str, timeout: float) -> None:
    matches = url_matcher(url)
    deadline = time.monotonic() + timeout
    session, _ = await page._target()
    frame_id = page._frame_id
    # Listen before looking, so that a navigation between the two cannot slip by.
    committed = session.expect(
        "Page.frameNavigated",
        lambda params: (
            params.get("frame", {}).get("id") == frame_id
            and matches(params.get("frame", {}).get("url", ""))
        ),
    )
    same_document = session.expect(
        "Page.navigatedWithinDocument",
        lambda params: params.get("frameId") == frame_id and matches(params.get("url", "")),
    )
    try:
        try:
            here = await page.evaluate("location.href", timeout=timeout, describe=False)
        except ContextDestroyedError:
            here = ""  # mid-navigation: its commit event will tell
        if isinstance(here, str) and matches(here):
            return
        left = max(0.0, deadline - time.monotonic())
        done, _ = await asyncio.wait(
            {committed, same_document}, timeout=left, return_when=asyncio.FIRST_COMPLETED
        )
        if not done:
            raise CommandTimeoutError(
                f"waited {timeout:g} s for the URL {url!r}; the page is at "
                f"{page.url or 'about:blank'} (a URL matches when it contains the text, or "
                "as a glob with *)"
            )
        for future in done:
            future.result()  # a closed connection raises here
    finally:
        committed.cancel()
        same_document.cancel()
