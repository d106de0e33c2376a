"""What a browser tool save names: :class:`ToolDraft`, built once by a front end.

The Python API (``Site.save_browser_tool``), ``ego save-tool`` and the MCP tool
``save_browser_tool`` each build one draft from what they were given and hand it down; the
planning, the checks and the writing all read the same draft. A draft names only what the
caller gave: a field left at None keeps what the tool already has, and :data:`CLEARABLE`
fields are removed only when listed in ``clear``; :func:`merge_entry` applies a draft to a
tool's current manifest entry. :func:`words_for` says how each front end spells the options,
so that a refusal names the one the caller used.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..catalog.naming import live_path, refuse

__all__ = [
    "CLEARABLE",
    "Auth",
    "FrontEnd",
    "SideEffect",
    "ToolDraft",
    "Words",
    "merge_entry",
    "words_for",
]

SideEffect = Literal["read", "write", "irreversible"]
Auth = Literal["none", "session"]
FrontEnd = Literal["python", "cli", "mcp"]

#: The manifest entry fields a save can remove (``clear``): ``args`` cleared means the tool
#: takes no args; ``returns`` and ``timeout`` cleared are left out. ``side_effect`` and
#: ``auth`` are always set to a value instead, and ``description`` is required.
CLEARABLE: tuple[str, ...] = ("args", "returns", "timeout")


@dataclass(frozen=True)
class ToolDraft:
    """A browser tool someone wants kept, as given: nothing here is checked yet.

    For a tool the site already has, every field left at None (and every manifest key a
    draft cannot name, such as ``timeout`` or one a person added) keeps its current value;
    ``clear`` removes fields explicitly. A new tool gets the defaults noted below.

    Attributes:
        site_id: the site's id, its folder name (``"x-com"``).
        tool: the tool's name, an identifier (``"get_timeline_posts"``).
        source: the tool's JavaScript: an async function expression, an arrow function, or a
            module with ``export default async function``.
        description: what the tool does, for an agent choosing tools. Required for a new
            tool; None keeps an existing tool's.
        args: its args: the compact map ``{name: {type, required, description}}`` or a full
            JSON Schema with ``"type": "object"``. None keeps an existing tool's (a new tool
            takes no args); ``clear=("args",)`` makes it take none.
        returns: a JSON Schema for its result. None keeps an existing tool's (a new tool has
            none); ``clear=("returns",)`` removes it.
        side_effect: ``"read"``, ``"write"`` or ``"irreversible"``. None keeps an existing
            tool's (a new tool is ``"read"``).
        auth: ``"session"`` when it rides on a logged-in session, else ``"none"``. None keeps
            an existing tool's (a new tool is ``"none"``).
        domains: the site's domains; for a new site, by default the host (with its port,
            when the URL names one) of the tab's URL. For an existing site, new entries are
            added. A bare ``localhost`` or loopback address without a port is refused.
        try_args: run the tool once with these args before saving (None: no try run).
        name: the site's display name (a new site defaults to its id).
        clear: entry fields to remove, from :data:`CLEARABLE` (``"args"``, ``"returns"``,
            ``"timeout"``); a field cannot be both given and cleared.
        front_end: who built the draft (``"python"``, ``"cli"`` or ``"mcp"``), so that a
            refusal names the option the caller used (``domains=``, ``--domain``,
            ``domains``).
        force: save even when the new source fails offline cases of the tool that pass with
            its current version (the save result names them).
    """

    site_id: str
    tool: str
    source: str
    description: str | None = None
    args: dict[str, Any] | None = None
    returns: dict[str, Any] | bool | None = None
    side_effect: SideEffect | None = None
    auth: Auth | None = None
    domains: Sequence[str] | None = None
    try_args: dict[str, Any] | None = None
    name: str | None = None
    clear: Sequence[str] = ()
    front_end: FrontEnd = "python"
    force: bool = False


@dataclass(frozen=True)
class Words:
    """How one front end spells the options a refusal points at."""

    domains: str  # ``{}`` is an example domain
    tab: str
    description: str
    clear: str
    force: str


_WORDS: dict[str, Words] = {
    "python": Words("domains=['{}']", "tab=", "description=", "clear=('{}',)", "force=True"),
    "cli": Words("--domain {}", "--url", "--description", "--clear {}", "--force"),
    "mcp": Words(
        'domains: ["{}"]',
        "navigate to a page of the site first",
        '"description"',
        'clear: ["{}"]',
        "force: true",
    ),
}


def words_for(front_end: str) -> Words:
    """How ``front_end`` (``"python"``, ``"cli"`` or ``"mcp"``) spells the save's options."""
    return _WORDS.get(front_end, _WORDS["python"])


def _cleared(draft: ToolDraft) -> tuple[str, ...]:
    """The draft's ``clear``, checked: known names, none of them also given."""
    names = (draft.clear,) if isinstance(draft.clear, str) else tuple(draft.clear or ())
    words = words_for(draft.front_end)
    problems = [
        f"cannot clear {name!r}: only {', '.join(CLEARABLE)} can be cleared (side effect and "
        "auth are set to a value instead; a description is required)"
        for name in names
        if name not in CLEARABLE
    ]
    given = {"args": draft.args, "returns": draft.returns}
    problems += [
        f"{name} is both given and cleared ({words.clear.format(name)}): pass one of them"
        for name in names
        if given.get(name) is not None
    ]
    if problems:
        raise refuse(draft.site_id, draft.tool, "manifest", problems)
    return names


def merge_entry(old: Any, draft: ToolDraft) -> dict[str, Any]:
    """The tool's manifest entry after the save: ``old`` with what ``draft`` names applied.

    Every key of ``old`` the draft leaves at None (``args``, ``returns``, ``sideEffect``,
    ``auth``, ``description``, ``timeout``, any key a person added) is kept; ``draft.clear``
    removes ``returns`` or ``timeout`` and makes ``args`` empty. Without an ``old`` entry
    (a new tool) the defaults apply: no args, ``sideEffect`` ``"read"``, ``auth``
    ``"none"``, and a description is required. ``path`` is always the live file.

    Args:
        old: the tool's current entry (None, or anything not a dict, for a new tool).
        draft: what the save names.

    Raises:
        SaveRefusedError: a new tool without a description, an empty description, a bad
            side effect, or a bad ``clear`` (reason ``"manifest"``).
    """
    site_id, tool = draft.site_id, draft.tool
    words = words_for(draft.front_end)
    cleared = _cleared(draft)
    existing = isinstance(old, dict)
    description = draft.description
    if description is None and not existing:
        raise refuse(
            site_id,
            tool,
            "manifest",
            [f"{tool!r} is a new tool: give it a description ({words.description})"],
        )
    if description is not None and (not isinstance(description, str) or not description.strip()):
        raise refuse(
            site_id, tool, "manifest", ["the description is empty: say what the tool does"]
        )
    if draft.side_effect is not None and draft.side_effect not in ("read", "write", "irreversible"):
        raise refuse(
            site_id,
            tool,
            "manifest",
            [f"side_effect {draft.side_effect!r} must be 'read', 'write' or 'irreversible'"],
        )
    if not existing:
        entry: dict[str, Any] = {"description": "", "path": live_path(tool), "args": {}}
        entry.update({"sideEffect": "read", "auth": "none"})
    else:
        entry = copy.deepcopy(old)
        entry["path"] = live_path(tool)
    given: dict[str, Any] = {
        "description": description.strip() if isinstance(description, str) else None,
        "args": draft.args,
        "sideEffect": draft.side_effect,
        "auth": draft.auth,
        "returns": draft.returns,
    }
    entry.update({key: value for key, value in given.items() if value is not None})
    for name in cleared:
        if name == "args":
            entry["args"] = {}
        else:
            entry.pop(name, None)
    return entry
