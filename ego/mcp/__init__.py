"""ego as an MCP server: learnings as typed tools plus the generic browser verbs (``ego mcp``),
over stdio (:func:`serve`) or streamable HTTP with a browser context per session
(:func:`serve_http`).

The names below are imported on first use: the server's modules load the MCP SDK (about a
second of CPU), which a command that reads only :mod:`ego.mcp.limits` or
:mod:`ego.mcp.hosts` (``ego mcp`` refusing its options, ``ego doctor``) never needs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .ego_server import EgoServer
    from .holder import BrowserHolder
    from .http import serve_http
    from .server import build_server, serve

__all__ = ["BrowserHolder", "EgoServer", "build_server", "serve", "serve_http"]

#: Where each public name lives.
_MODULES = {
    "BrowserHolder": ".holder",
    "EgoServer": ".ego_server",
    "build_server": ".server",
    "serve": ".server",
    "serve_http": ".http",
}


def __getattr__(name: str) -> Any:
    """Import the module of a public name when it is first asked for.

    Raises:
        AttributeError: ``name`` is none of this package's names.
    """
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
