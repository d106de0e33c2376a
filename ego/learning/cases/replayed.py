"""Running one offline case: its tool in a tab of its own browser context, against its HAR
replayed in strict mode, judged by :mod:`.judge`.

The case loads its HAR into a fresh tab in an isolated browser context (no cookies, storage
or cache shared with other cases), navigates to the case's URL (the real one, e.g.
``https://x.com/home``), has the caller's ``invoke`` run the tool there and judges what it
returned. Nothing reaches the network, so irreversible tools run with ``confirm=True``: the
"post" lands in a recorded page, not on the site.

A case fails on a wrong result, an unexpected error (the reason starts with the signal:
``SKILL_BROKEN ...``), a navigation that fails, a request the HAR lacks (strict mode), or a
timeout; every step is bounded, so a broken site never hangs the run. ``ego test``
(:mod:`ego.casetests`) and the save gate (:mod:`.gate`) both run cases this way; each passes
the call it wants run.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final
from urllib.parse import urlsplit

from ...errors import (
    BrowserClosedError,
    CommandTimeoutError,
    EgoError,
    HarFormatError,
    TabClosedError,
)
from ...page.browser import TabHost
from ...page.tab import Tab
from ...replay import Har, ReplayedRequest, Replayer
from .format import LearningCase
from .judge import error_kind, judge, judge_error
from .result import CaseResult

__all__ = [
    "DEFAULT_TOOL_TIMEOUT",
    "NAVIGATION_TIMEOUT",
    "Invoke",
    "foreign_requests",
    "origin_of",
    "run_replayed",
]

#: Seconds a case's page may take to reach its lifecycle point, unless the caller says.
NAVIGATION_TIMEOUT: Final = 15.0
#: Seconds a case's tool may run when neither the case nor the manifest says.
DEFAULT_TOOL_TIMEOUT: Final = 30.0

#: Chrome's resource types of what page code sends on purpose (Fetch.requestPaused).
_SENT: Final = frozenset({"Fetch", "XHR", "EventSource", "WebSocket", "Ping", "Preflight"})

#: Runs the case's tool in the tab within the seconds given and returns what it returned;
#: raises what the tool's call raises.
Invoke = Callable[[Tab, float], Awaitable[Any]]


async def run_replayed(
    browser: TabHost,
    case: LearningCase,
    invoke: Invoke,
    *,
    tool_timeout: float,
    navigation_timeout: float = NAVIGATION_TIMEOUT,
) -> CaseResult:
    """Run one case in an isolated tab with strict replay and judge the result.

    Args:
        browser: where the case's tab opens.
        case: the case.
        invoke: runs the case's tool in the tab (``tool_timeout`` is passed to it).
        tool_timeout: seconds the tool may run.
        navigation_timeout: seconds the case's URL may take to reach ``wait_until``.

    Returns:
        How the case went: a failing case is a result with ``passed`` False, not an error.

    Raises:
        BrowserClosedError: the browser went away (no later case could run either).
    """
    started = time.monotonic()
    result = CaseResult(site_id=case.site_id, name=case.name, tool=case.tool, passed=False)
    try:
        har = Har.load(case.har)
    except HarFormatError as exc:
        result.reason = str(exc)
        result.seconds = time.monotonic() - started
        return result
    try:
        # Where a remote browser refuses new contexts, a plain tab still runs the case.
        async with browser.isolated_context(fallback=True) as context:
            tab = await context.new_tab()
            await _replay_case(case, tab, har, result, invoke, navigation_timeout, tool_timeout)
    except BrowserClosedError:
        raise
    except EgoError as exc:  # the tab itself could not be opened
        result.passed = False
        result.reason = f"could not open a tab for the case: {exc}"
    result.seconds = time.monotonic() - started
    return result


async def _replay_case(
    case: LearningCase,
    tab: Tab,
    har: Har,
    result: CaseResult,
    invoke: Invoke,
    navigation_timeout: float,
    tool_timeout: float,
) -> None:
    """Run ``case`` in ``tab`` with ``har`` replayed and put the outcome in ``result``."""
    replayer = Replayer(
        tab,
        har,
        mode="strict" if case.mode == "strict" else "fail",
        ignore_params=case.ignore_params,
    )
    # The hard bound of the whole case: each step has its own timeout, this catches the rest.
    bound = navigation_timeout + tool_timeout + 15.0
    try:
        await asyncio.wait_for(
            _run_in_tab(case, tab, replayer, result, invoke, navigation_timeout, tool_timeout),
            bound,
        )
    except BrowserClosedError:
        raise
    except TabClosedError as exc:
        result.passed = False
        result.reason = f"the tab closed during the case: {exc}"
    except CommandTimeoutError as exc:  # a step's own timeout (it is also a TimeoutError)
        result.passed = False
        result.reason = f"TIMEOUT: {exc}"
    except TimeoutError:
        result.passed = False
        result.reason = f"TIMEOUT: the case did not finish within {bound:g} s"
    except EgoError as exc:  # replay could not start, a cookie was refused, ...
        result.passed = False
        result.reason = f"{type(exc).__name__}: {exc}"
    finally:
        await _quietly(replayer.stop(check=False))
    result.unmatched = [f"{r.method} {r.url}" for r in replayer.unmatched]
    if replayer.unmatched and case.mode == "strict":
        listed = "; ".join(result.unmatched[:3])
        more = f" (+{len(result.unmatched) - 3} more)" if len(result.unmatched) > 3 else ""
        note = f"strict replay: no HAR entry for {listed}{more}"
        result.reason = f"{result.reason}; {note}" if result.reason else note
        result.passed = False


async def _quietly(awaitable: Awaitable[Any]) -> None:
    # Cleanup after a case must never replace the case's own outcome with a cleanup error.
    with contextlib.suppress(EgoError, TimeoutError):
        await awaitable


async def _run_in_tab(
    case: LearningCase,
    tab: Tab,
    replayer: Replayer,
    result: CaseResult,
    invoke: Invoke,
    navigation_timeout: float,
    tool_timeout: float,
) -> None:
    await replayer.start()
    if case.cookies:
        cookies = [
            {**cookie, **({} if "url" in cookie or "domain" in cookie else {"url": case.url})}
            for cookie in case.cookies
        ]
        await tab.send("Network.setCookies", {"cookies": cookies})
    try:
        await tab.navigate(
            case.url,
            wait_until=case.wait_until,  # type: ignore[arg-type]  # checked by CASES_SCHEMA
            timeout=navigation_timeout,
        )
    except (EgoError, TimeoutError) as exc:
        result.reason = f"could not load {case.url} from {case.har.name}: {exc}"
        return
    if case.setup:
        try:
            await tab.evaluate(case.setup, timeout=navigation_timeout)
        except (EgoError, TimeoutError) as exc:
            result.reason = f"setup script failed: {exc}"
            return
    mark = len(replayer.requests)
    page = tab.url
    try:
        value = await invoke(tab, tool_timeout)
    except BrowserClosedError:
        raise
    except EgoError as exc:
        result.tool_entries = _answered(replayer, mark)
        result.foreign_requests = foreign_requests(replayer.requests, mark, page)
        result.error = error_kind(exc)
        result.reason = judge_error(case, exc)
        result.passed = not result.reason
        return
    result.tool_entries = _answered(replayer, mark)
    result.foreign_requests = foreign_requests(replayer.requests, mark, page)
    result.result = value
    result.reason = judge(case, value)
    result.passed = not result.reason


def foreign_requests(requests: Sequence[ReplayedRequest], mark: int, page: str) -> list[str]:
    """The requests a tool sent, from ``requests[mark:]``, to another origin than ``page``'s.

    Counted are what code sends on purpose (``fetch``, XHR, EventSource, WebSocket, beacons),
    whatever answered them; a GET of a URL the page itself requested before the tool ran
    (reading its own script bundle again) carries nothing of the tool's and is not counted.
    """
    home = origin_of(page)
    loaded = {r.url for r in requests[:mark] if r.method == "GET"}
    return [
        f"{r.method} {r.url}"
        for r in requests[mark:]
        if r.resource_type in _SENT
        and origin_of(r.url) != home
        and not (r.method == "GET" and r.url in loaded)
    ]


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of ``url``, lower case, the scheme's default port left out."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    host = (parts.hostname or "").lower()
    default = {"http": 80, "https": 443, "ws": 80, "wss": 443}.get(scheme)
    return f"{scheme}://{host}" + (f":{port}" if port is not None and port != default else "")


def _answered(replayer: Replayer, mark: int) -> list[int]:
    """The HAR entries that answered the requests made since ``mark``."""
    return [r.entry for r in replayer.requests[mark:] if r.entry is not None]
