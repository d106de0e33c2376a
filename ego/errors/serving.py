"""Errors of the servers ego starts for others to reach (``ego mcp --http``)."""

from __future__ import annotations

from .base import EgoError

__all__ = ["ListenError"]


class ListenError(EgoError, OSError):
    """A server cannot listen where it was asked: the port is taken, the address is not this
    machine's, or listening there needs privileges the process lacks. Nothing was started.

    Attributes:
        host, port: where it was asked to listen.
    """

    def __init__(self, message: str, *, host: str, port: int) -> None:
        super().__init__(message)
        self.host = host
        self.port = port
