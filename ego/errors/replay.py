"""Errors of recording, replaying and testing against HAR files."""

from __future__ import annotations

from .base import EgoError

__all__ = [
    "HarFormatError",
    "HarTooLargeError",
    "InvalidCasesError",
    "ReplayError",
    "UnmatchedRequestError",
]


class ReplayError(EgoError):
    """Recording, replaying or testing against a HAR file went wrong."""


class HarFormatError(ReplayError, ValueError):
    """A HAR file cannot be used: not JSON, no ``log.entries``, an entry without a URL, bad base64.

    Attributes:
        path: the file, when the HAR came from one, else ``None``.
    """

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path


class HarTooLargeError(HarFormatError):
    """A HAR file is over a bound (its bytes, or its entries): it was not read whole.

    Attributes:
        path: the file, when the HAR came from one, else ``None``.
        bound: ``"bytes"`` or ``"entries"``.
        limit: the bound in force.
    """

    def __init__(self, message: str, *, path: str | None, bound: str, limit: int) -> None:
        super().__init__(message, path=path)
        self.bound = bound
        self.limit = limit


class UnmatchedRequestError(ReplayError):
    """Strict replay: the page made requests for which the HAR holds no entry.

    Each was failed like a network error when it happened; this error reports them afterwards.

    Attributes:
        requests: ``(method, url)`` of every unmatched request, in the order they were made.
    """

    def __init__(self, message: str, *, requests: list[tuple[str, str]]) -> None:
        super().__init__(message)
        self.requests = requests


class InvalidCasesError(ReplayError):
    """A learning's ``tests/cases.json`` is missing pieces, is not JSON, or names unknown files.

    Attributes:
        site_id: the site whose cases are broken.
        problems: every problem found, one line each.
    """

    def __init__(self, message: str, *, site_id: str, problems: list[str]) -> None:
        super().__init__(message)
        self.site_id = site_id
        self.problems = problems
