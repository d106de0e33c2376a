"""How one offline case went: :class:`CaseResult`, shared by ``ego test`` and the save gate."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, field_serializer

__all__ = ["CaseResult"]


class CaseResult(BaseModel):
    """How one case went.

    Attributes:
        site_id: the site (``site`` in JSON).
        name: the case's name (``case`` in JSON).
        tool: the tool it ran.
        passed: True when every expectation held (``status``: passed/failed in JSON).
        reason: why it failed (starts with the signal for SKILL_BROKEN / NEEDS_LOGIN), or "".
        seconds: how long the case took, setup and cleanup included.
        result: what the tool returned, when it returned (not in JSON: it may be large).
        error: the error kind the tool ended with (SKILL_BROKEN, NEEDS_LOGIN, TOOL_ERROR,
            ...), or None.
        unmatched: ``"METHOD URL"`` of every request the HAR could not answer.
        tool_entries: the HAR entries that answered the tool's own requests (after the page
            loaded), by index (not in JSON): what ``ego heal`` compares with a live run.
        foreign_requests: ``"METHOD URL"`` of each request the tool sent to another origin
            than the page's (not in JSON): what the save gate refuses
            (:func:`~ego.learning.cases.gate.check_origins`).
    """

    site_id: str = Field(serialization_alias="site")
    name: str = Field(serialization_alias="case")
    tool: str
    passed: bool = Field(serialization_alias="status")
    reason: str = ""
    seconds: float = 0.0
    result: Any = Field(default=None, exclude=True)
    error: str | None = None
    unmatched: list[str] = Field(default_factory=list)
    tool_entries: list[int] = Field(default_factory=list, exclude=True)
    foreign_requests: list[str] = Field(default_factory=list, exclude=True)

    @field_serializer("passed")
    def _status(self, passed: bool) -> str:
        return "passed" if passed else "failed"

    @field_serializer("seconds")
    def _rounded(self, seconds: float) -> float:
        return round(seconds, 3)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (for ``ego test --json``)."""
        return self.model_dump(by_alias=True)
