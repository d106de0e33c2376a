"""The pool's public records: endpoints to attach to, counters, member snapshots, map results."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..api import Browser, BrowserContext

__all__ = ["Endpoint", "MemberInfo", "MemberState", "PoolResult", "PoolStats", "Worker"]

#: What one pool member runs its tabs in: a whole browser, or (``contexts=True``) a browser
#: context of a Chrome it shares with other members.
Worker = Browser | BrowserContext

MemberState = Literal["starting", "ready", "replacing", "failed", "closed"]


@dataclass(frozen=True)
class Endpoint:
    """A CDP endpoint for pool browsers to attach to.

    Attributes:
        url: ``ws://`` / ``wss://`` (a browserless URL with ``?token=...``) or ``http://``.
        headers: extra handshake headers (auth for a fleet behind a proxy); the pool's
            ``headers`` when None.
        browsers: how many pool browsers attach here; each is its own websocket (and on
            browserless its own Chrome).
    """

    url: str
    headers: Mapping[str, str] | None = None
    browsers: int = 1


@dataclass
class PoolStats:
    """Counters over the pool's life.

    Attributes:
        calls: calls finished (either way).
        succeeded: calls that returned a result.
        failed: calls that raised.
        retried: attempts repeated because a browser or tab died under a read call.
        not_retried: write/irreversible calls cut short and reported, not repeated.
        replaced: dead browsers replaced by a new one.
    """

    calls: int = 0
    succeeded: int = 0
    failed: int = 0
    retried: int = 0
    not_retried: int = 0
    replaced: int = 0

    def count(self, *, ok: bool) -> None:
        """Count one finished call."""
        self.calls += 1
        if ok:
            self.succeeded += 1
        else:
            self.failed += 1


@dataclass(frozen=True)
class MemberInfo:
    """A snapshot of one pool browser, for monitoring and tests.

    Attributes:
        index: its position in the pool.
        source: ``"launch"`` or the endpoint URL (token hidden).
        state: ``starting``, ``ready``, ``replacing``, ``failed`` (gave up) or ``closed``.
        generation: 1 for the first browser, +1 for every replacement.
        in_flight: calls running on it now.
        calls: calls finished on it (over all generations).
        pid: the Chrome process when ego launched it, else None.
        browser: the live :class:`~ego.api.Browser` (with ``contexts=True``, the member's
            :class:`~ego.api.BrowserContext`), or None while it is being replaced.
        last_error: why the last start or replacement attempt failed, or ``""``.
    """

    index: int
    source: str
    state: MemberState
    generation: int
    in_flight: int
    calls: int
    pid: int | None
    browser: Worker | None
    last_error: str


@dataclass(frozen=True)
class PoolResult:
    """The outcome of one input of :meth:`BrowserPool.map`; errors are captured, not raised.

    Attributes:
        index: the input's position (0-based).
        args: the input as given.
        ok: True when the tool returned.
        result: what the tool returned (None when not ok).
        error: the exception when not ok.
        ms: wall time of the call in milliseconds, retries included.
        attempts: 1, or more when the call was retried after a browser died.
        browser: the index of the pool browser that ran the last attempt (-1 if none did).
    """

    index: int
    args: Any
    ok: bool
    result: Any = None
    error: BaseException | None = None
    ms: float = 0.0
    attempts: int = 0
    browser: int = -1

    # Written out because a map makes one per input: the generated __init__ of a frozen
    # dataclass sets each field through object.__setattr__, which costs about 3 us here
    # against 0.7 us for this. The fields and their defaults are the ones declared above.
    def __init__(
        self,
        index: int,
        args: Any,
        ok: bool,
        result: Any = None,
        error: BaseException | None = None,
        ms: float = 0.0,
        attempts: int = 0,
        browser: int = -1,
    ) -> None:
        self.__dict__.update(
            index=index,
            args=args,
            ok=ok,
            result=result,
            error=error,
            ms=ms,
            attempts=attempts,
            browser=browser,
        )
