"""Errors of the servers ego starts for others to reach (``ego mcp --http``, the demo shop)."""

from __future__ import annotations

import errno
import re

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

    @classmethod
    def of(cls, host: str, port: int, exc: OSError) -> ListenError:
        """What a server asked to listen on ``host``:``port`` raises when binding failed with
        ``exc``: the reason in one line with the keyword that changes it (``port=``, ``host=``;
        a command line shows its own options)."""
        shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        if exc.errno == errno.EADDRINUSE:
            why = (
                "another process listens on that port: pass another port= (port=0 takes a free one)"
            )
        elif exc.errno == errno.EADDRNOTAVAIL:
            why = "no interface of this machine has that address: pass another host="
        elif exc.errno == errno.EACCES:
            why = "that port needs privileges this process lacks: pass a port= above 1023"
        else:
            why = f"{exc.strerror or exc}: pass another host= or port="
        return cls(f"cannot listen on {shown}: {why}", host=host, port=port)

    @property
    def command_line(self) -> str:
        """The message with its fix as a command line's options (``--port 0``, ``--host``)."""
        return _KEYWORD.sub(r"--\1", _FREE_PORT.sub("--port 0", str(self)))


_FREE_PORT = re.compile(r"\bport=0\b")
_KEYWORD = re.compile(r"\b(port|host)=")
