"""What a browser tool save names: :class:`ToolDraft`, built once by a front end.

The Python API (``Site.save_browser_tool``), ``ego save-tool`` and the MCP tool
``save_browser_tool`` each build one draft from what they were given and hand it down; the
planning, the checks and the writing all read the same draft.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["Auth", "SideEffect", "ToolDraft"]

SideEffect = Literal["read", "write", "irreversible"]
Auth = Literal["none", "session"]


@dataclass(frozen=True)
class ToolDraft:
    """A browser tool someone wants kept, as given: nothing here is checked yet.

    Attributes:
        site_id: the site's id, its folder name (``"x-com"``).
        tool: the tool's name, an identifier (``"get_timeline_posts"``).
        source: the tool's JavaScript: an async function expression, an arrow function, or a
            module with ``export default async function``.
        description: what the tool does, for an agent choosing tools.
        args: its args: the compact map ``{name: {type, required, description}}`` or a full
            JSON Schema with ``"type": "object"``; None for no args.
        returns: a JSON Schema for its result, or None.
        side_effect: ``"read"``, ``"write"`` or ``"irreversible"``.
        auth: ``"session"`` when it rides on a logged-in session, else ``"none"``.
        domains: the site's domains; for a new site, by default the host of the tab's URL.
            For an existing site, new entries are added.
        try_args: run the tool once with these args before saving (None: no try run).
        name: the site's display name (a new site defaults to its id).
    """

    site_id: str
    tool: str
    source: str
    description: str
    args: dict[str, Any] | None = None
    returns: dict[str, Any] | bool | None = None
    side_effect: SideEffect = "read"
    auth: Auth = "none"
    domains: Sequence[str] | None = None
    try_args: dict[str, Any] | None = None
    name: str | None = None
