"""What a batch run reports: progress while it runs, the summary when it ends."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

__all__ = ["BatchProgress", "BatchSummary"]


@dataclass
class BatchProgress:
    """Where a run is; passed to the ``progress`` callback after every result.

    The rate counts from the first result of this run's calls on, so that neither Chrome's
    start nor the first page load (which only the first calls wait for) makes the time left
    look longer than it is; the summary's rate is the same figure.

    Attributes:
        total: inputs in the file.
        skipped: inputs done by earlier runs (not run again).
        done: inputs finished by this run (refused ones included).
        failed: of those, the failed ones.
        started: ``time.monotonic()`` when this run's calls started (its browsers were up),
            None before.
        first_at, first_done: when the first result after that came, and ``done`` then.
        last_at: when the latest result came.
    """

    total: int
    skipped: int
    done: int = 0
    failed: int = 0
    started: float | None = None
    first_at: float | None = None
    first_done: int = 0
    last_at: float | None = None

    def add(self, *, failed: bool, now: float | None = None) -> None:
        """Count one result, which came at ``now`` (``time.monotonic()`` by default)."""
        now = time.monotonic() if now is None else now
        self.done += 1
        self.failed += failed
        self.last_at = now
        if self.started is not None and self.first_at is None:
            self.first_at, self.first_done = now, self.done

    @property
    def remaining(self) -> int:
        return self.total - self.skipped - self.done

    @property
    def rate(self) -> float | None:
        """Results per second since the first result of the calls; None before a second
        one came at a later time."""
        if self.first_at is None or self.last_at is None or self.last_at <= self.first_at:
            return None
        return (self.done - self.first_done) / (self.last_at - self.first_at)

    @property
    def eta(self) -> float | None:
        """Seconds left at :attr:`rate`, or None while the rate is not known."""
        rate = self.rate
        return self.remaining / rate if rate else None


@dataclass
class BatchSummary:
    """What a run did.

    Attributes:
        site, tool: what ran.
        input, output: the files.
        total: inputs in the input file.
        skipped: inputs already in the output before this run.
        ran: inputs this run finished.
        ok, failed: how those ended.
        browser_failed: failures that came from the browser side (a browser or tab died, a
            timeout, a write cut short) rather than from the tool.
        interrupted: journaled write inputs of an earlier killed run, recorded as failed.
        failed_before, browser_failed_before: failed results among the skipped ones.
        seconds: this run's time, from reading the files to the last result (the browsers'
            start included).
        first_result: seconds from the same start to the first result of the calls (None:
            no call ended).
        rate: results per second after that first one (:attr:`BatchProgress.rate`, the
            figure the last progress line shows); None when it is not known.

    The exit code looks at the whole output, earlier runs included: a resumed run that
    finished the rest cleanly still says 3 or 4 when the file holds failures.
    """

    site: str
    tool: str
    input: str
    output: str
    total: int = 0
    skipped: int = 0
    ran: int = 0
    ok: int = 0
    failed: int = 0
    browser_failed: int = 0
    interrupted: int = 0
    failed_before: int = 0
    browser_failed_before: int = 0
    seconds: float = 0.0
    first_result: float | None = None
    rate: float | None = None

    @property
    def exit_code(self) -> int:
        """0: all ok; 4: a failure came from the browser side (a browser or tab died, a
        timeout, a write cut short, now or in a killed earlier run); 3: only tools failed."""
        if self.browser_failed or self.interrupted or self.browser_failed_before:
            return 4
        return 3 if self.failed or self.failed_before else 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "site": self.site,
            "tool": self.tool,
            "input": self.input,
            "output": self.output,
            "total": self.total,
            "skipped": self.skipped,
            "ran": self.ran,
            "ok": self.ok,
            "failed": self.failed,
            "browser_failed": self.browser_failed,
            "interrupted": self.interrupted,
            "failed_before": self.failed_before,
            "browser_failed_before": self.browser_failed_before,
            "seconds": round(self.seconds, 3),
            "first_result": None if self.first_result is None else round(self.first_result, 3),
            "rate": None if self.rate is None else round(self.rate, 2),
            "exit_code": self.exit_code,
        }
