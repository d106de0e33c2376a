"""Learnings: site folders with a manifest, notes, browser tools and Python tools."""

from __future__ import annotations

from .context import LearnContext, NoteInfo, SiteContext, SiteSummary, ToolInfo, build_context
from .manifest import (
    MANIFEST_SCHEMA_PATH,
    BrowserToolSpec,
    Manifest,
    PythonToolSpec,
    ToolSpec,
    args_schema,
    load_manifest,
)
from .matching import match_domain
from .registry import WORKSPACE_ENV, Learnings, LoadedSource, Note, SiteEntry

__all__ = [
    "MANIFEST_SCHEMA_PATH",
    "WORKSPACE_ENV",
    "BrowserToolSpec",
    "LearnContext",
    "Learnings",
    "LoadedSource",
    "Manifest",
    "Note",
    "NoteInfo",
    "PythonToolSpec",
    "SiteContext",
    "SiteEntry",
    "SiteSummary",
    "ToolInfo",
    "ToolSpec",
    "args_schema",
    "build_context",
    "load_manifest",
    "match_domain",
]
