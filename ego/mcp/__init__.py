"""ego as an MCP server: learnings as typed tools plus the generic browser verbs (``ego mcp``)."""

from __future__ import annotations

from .ego_server import EgoServer
from .holder import BrowserHolder
from .server import build_server, serve

__all__ = ["BrowserHolder", "EgoServer", "build_server", "serve"]
