"""ego as an MCP server: learnings as typed tools plus the generic browser verbs (``ego mcp``),
over stdio (:func:`serve`) or streamable HTTP with a browser context per session
(:func:`serve_http`)."""

from __future__ import annotations

from .ego_server import EgoServer
from .holder import BrowserHolder
from .http import serve_http
from .server import build_server, serve

__all__ = ["BrowserHolder", "EgoServer", "build_server", "serve", "serve_http"]
