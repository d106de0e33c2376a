"""Learnings: site folders with a manifest, notes, browser tools and Python tools.

The names below import their module on first use: ``ego.learning.catalog.registry`` does not pay
for the pydantic models of ``learn_context``'s answer, nor the other way round.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .catalog.manifest import (
        MANIFEST_SCHEMA_PATH,
        BrowserToolSpec,
        Manifest,
        PythonToolSpec,
        ToolSpec,
        args_schema,
        load_manifest,
    )
    from .catalog.matching import match_domain
    from .catalog.registry import WORKSPACE_ENV, Learnings, LoadedSource, Note, SiteEntry
    from .describe.context import (
        LearnContext,
        NoteInfo,
        SiteContext,
        SiteSummary,
        ToolInfo,
        build_context,
    )

_LAZY: dict[str, str] = {
    **dict.fromkeys(
        ("LearnContext", "NoteInfo", "SiteContext", "SiteSummary", "ToolInfo", "build_context"),
        ".describe.context",
    ),
    **dict.fromkeys(
        (
            "MANIFEST_SCHEMA_PATH",
            "BrowserToolSpec",
            "Manifest",
            "PythonToolSpec",
            "ToolSpec",
            "args_schema",
            "load_manifest",
        ),
        ".catalog.manifest",
    ),
    "match_domain": ".catalog.matching",
    **dict.fromkeys(
        ("WORKSPACE_ENV", "Learnings", "LoadedSource", "Note", "SiteEntry"), ".catalog.registry"
    ),
}

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


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ego.learning' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
