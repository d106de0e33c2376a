"""The rules a save's names follow (site id, tool name, note name) and how a refusal reads.

Every check of the learning loop refuses with :func:`refuse`, so a refused save always says
``not saved <site>/<name>: <why>; nothing was written`` and carries ``reason`` and
``problems`` for a program to read.
"""

from __future__ import annotations

import re

from ...errors import SaveRefusedError
from .manifest import MAX_SITE_ID, is_site_id

__all__ = [
    "MAX_NAME",
    "check_note_name",
    "check_site_id",
    "check_tool_name",
    "live_path",
    "refuse",
]

_TOOL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_NOTE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")
#: The longest tool or note name accepted.
MAX_NAME = 64


def refuse(
    site_id: str, name: str, reason: str, problems: list[str], lead: str = ""
) -> SaveRefusedError:
    """The error for a refused save of ``site_id``/``name``.

    Args:
        site_id, name: what was being saved.
        reason: which check failed (``"name"``, ``"source"``, ``"manifest"``, ...).
        problems: one line per problem found; the first leads the message unless ``lead``.
        lead: the message's head, when it should read differently from the first problem.
    """
    head = lead or problems[0]
    more = f" (+{len(problems) - 1} more: {'; '.join(problems[1:])})" if len(problems) > 1 else ""
    return SaveRefusedError(
        f"not saved {site_id}/{name}: {head}{more}; nothing was written",
        site_id=site_id,
        name=name,
        reason=reason,
        problems=problems,
    )


def check_site_id(site_id: str, *, name: str = "") -> None:
    """Refuse a site id that cannot be a learnings folder name.

    Raises:
        SaveRefusedError: ``site_id`` is not lower-case letters, digits, ``.``, ``_`` and
            ``-``, starting with a letter or digit (reason ``"site id"``).
    """
    if not is_site_id(site_id):
        raise refuse(
            str(site_id),
            name,
            "site id",
            [
                f"site id {site_id!r} is not valid: use lower-case letters, digits, '.', '_' "
                f"and '-', starting with a letter or digit, at most {MAX_SITE_ID} characters "
                "(e.g. 'x-com')"
            ],
        )


def check_tool_name(site_id: str, tool: str) -> None:
    """Refuse a tool name that is not an identifier.

    Raises:
        SaveRefusedError: ``tool`` is not ``[A-Za-z_][A-Za-z0-9_]*`` of at most 64
            characters (reason ``"name"``).
    """
    if not isinstance(tool, str) or not _TOOL_NAME.fullmatch(tool) or len(tool) > MAX_NAME:
        raise refuse(
            site_id,
            str(tool),
            "name",
            [
                f"tool name {tool!r} is not a valid identifier: use letters, digits and '_', "
                f"not starting with a digit, at most {MAX_NAME} characters "
                "(e.g. 'get_timeline_posts')"
            ],
        )


def check_note_name(site_id: str, name: str) -> str:
    """The note's file name stem (``name`` without a trailing ``.md``), checked.

    Raises:
        SaveRefusedError: the name is not letters, digits, ``_`` and ``-`` (reason ``"name"``).
    """
    stem = name[:-3] if isinstance(name, str) and name.lower().endswith(".md") else name
    if not isinstance(stem, str) or not _NOTE_NAME.fullmatch(stem) or len(stem) > MAX_NAME:
        raise refuse(
            site_id,
            str(name),
            "name",
            [
                f"note name {name!r} is not valid: use letters, digits, '_' and '-' "
                f"(at most {MAX_NAME}), e.g. 'search-api'"
            ],
        )
    return stem


def live_path(tool: str) -> str:
    """Where a saved browser tool's source lives in its site folder."""
    return f"browser-tools/{tool}.js"
