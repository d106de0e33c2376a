"""How a learning-test run went: one :class:`~ego.learning.cases.result.CaseResult` per case,
gathered in a :class:`LearningTestReport`, as JSON for ``ego test --json`` or as a human summary.
"""

from __future__ import annotations

from typing import Any

from pydantic import (
    BaseModel,
    Field,
    SerializerFunctionWrapHandler,
    field_serializer,
    model_serializer,
)

from ..learning.cases.result import CaseResult

__all__ = ["CaseResult", "LearningTestReport"]


class LearningTestReport(BaseModel):
    """Every case's result, plus what had no tests at all.

    Attributes:
        seconds: the whole run.
        results: one per case, in site then file order.
        untested: valid sites that carry no ``tests/cases.json``.
        uncovered: per site with cases, the declared tools no case runs.
    """

    seconds: float = 0.0
    results: list[CaseResult] = Field(default_factory=list)
    untested: list[str] = Field(default_factory=list)
    uncovered: dict[str, list[str]] = Field(default_factory=dict)

    @property
    def passed(self) -> bool:
        """True when there was at least one case and every case passed."""
        return bool(self.results) and all(result.passed for result in self.results)

    @property
    def failures(self) -> list[CaseResult]:
        """The cases that failed."""
        return [result for result in self.results if not result.passed]

    @field_serializer("seconds")
    def _rounded(self, seconds: float) -> float:
        return round(seconds, 3)

    @model_serializer(mode="wrap")
    def _verdict_first(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # A reader of ``ego test --json`` sees the verdict before the details.
        details: dict[str, Any] = handler(self)
        return {
            "passed": self.passed,
            "total": len(self.results),
            "failed": len(self.failures),
            **details,
        }

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (for ``ego test --json``)."""
        return self.model_dump(by_alias=True)

    def format(self) -> str:
        """A human summary: one line per case, then the totals."""
        lines = []
        for result in self.results:
            mark = "PASS" if result.passed else "FAIL"
            line = f"{mark} {result.site_id}/{result.name} ({result.tool}, {result.seconds:.2f} s)"
            if not result.passed:
                line += f"\n     {result.reason}"
            lines.append(line)
        for site_id, tools in self.uncovered.items():
            lines.append(f"NOTE {site_id}: no case runs {', '.join(tools)}")
        if self.untested:
            lines.append(f"NOTE no tests/cases.json in: {', '.join(self.untested)}")
        failed = len(self.failures)
        lines.append(
            f"{len(self.results) - failed} passed, {failed} failed in {self.seconds:.1f} s"
        )
        return "\n".join(lines)
