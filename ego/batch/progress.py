"""What a batch run reports: progress while it runs, the summary when it ends."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

__all__ = ["BatchProgress", "BatchSummary"]


@dataclass
class BatchProgress:
    """Where a run is; passed to the ``progress`` callback after every result.

    Attributes:
        total: inputs in the file.
        skipped: inputs done by earlier runs (not run again).
        done: inputs finished by this run.
        failed: of those, the failed ones.
        started: ``time.monotonic()`` when this run started its calls.
    """

    total: int
    skipped: int
    done: int = 0
    failed: int = 0
    started: float = field(default_factory=time.monotonic)

    @property
    def remaining(self) -> int:
        return self.total - self.skipped - self.done

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    @property
    def rate(self) -> float:
        """Results per second so far in this run."""
        elapsed = self.elapsed
        return self.done / elapsed if elapsed > 0 else 0.0

    @property
    def eta(self) -> float | None:
        """Seconds left at the current rate, or None before the first result."""
        rate = self.rate
        return self.remaining / rate if rate > 0 else None


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
        seconds: this run's time.

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

    @property
    def rate(self) -> float:
        return self.ran / self.seconds if self.seconds > 0 else 0.0

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
            "rate": round(self.rate, 2),
            "exit_code": self.exit_code,
        }
