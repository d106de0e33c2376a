"""``learn_context(url)`` in a few lines: what an agent needs to make each tool's first call.

The full answer (:class:`~.context.LearnContext`) gives every tool's whole description, args
and returns schemas, an example and a health record, and every note in full: on the demo
shop that is about 24,000 characters, more than the page it saves the agent from reading.
The compact answer keeps, per site, its name, start URL and one line; per tool, its name, a
one-line description, its args as a signature (types, ``*`` for required) with one example,
its side effect and auth, and a word of health (``ok``, ``suspect``, ``no runs``, ``site
unreachable``); per
note, its title and first paragraph, cut at :data:`LEAD_MAX` characters. The rest is asked
for when needed: a tool's whole entry (``describe_tool``), a note in full (``read_note``),
or the full answer (``detail="full"``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Final, Literal

from pydantic import BaseModel

from .context import FirstSite, LearnContext, NoteInfo, SiteContext, ToolInfo, example_args

__all__ = [
    "DESCRIPTION_MAX",
    "LEAD_MAX",
    "CompactContext",
    "CompactNote",
    "CompactSite",
    "CompactTool",
    "Health",
    "arg_types",
    "compact",
    "health_word",
    "lead",
    "one_line",
]

#: The longest one-line description of a tool or site, and of a note's first paragraph.
DESCRIPTION_MAX: Final = 70
LEAD_MAX: Final = 80

#: A tool's health in a word: its latest run found the site's server not answering (``site
#: unreachable``, which says nothing about the tool), its latest counted runs all failed
#: (``suspect``), it has counted runs and is not suspect (``ok``), or none are recorded
#: (``no runs``).
Health = Literal["ok", "suspect", "no runs", "site unreachable"]

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'`])")
_TYPES: Final = {
    "string": "str",
    "integer": "int",
    "number": "num",
    "boolean": "bool",
    "array": "list",
    "object": "obj",
    "null": "null",
}


class CompactTool(BaseModel):
    """One tool, in as few words as make its first call right.

    Attributes:
        site_id, tool_name, kind: which tool (a skill's ``site_id`` is its domain).
        description: its description's first sentence, cut at :data:`DESCRIPTION_MAX`.
        args: each arg's type, in a word (``str``, ``int``, ``list[str]``, ``a|b``).
        required: the args a call must give.
        example: args that make a valid call (its required args and those with examples).
        side_effect, auth: what it changes, and whether it rides on a logged-in session.
        health: one word (None for a tool ego cannot run).
        runnable: False for a tool ego lists but cannot run (a node tool).
    """

    site_id: str
    tool_name: str
    kind: Literal["browser", "python", "skill", "node"]
    description: str
    args: dict[str, str]
    required: list[str]
    example: dict[str, Any]
    side_effect: Literal["read", "write", "irreversible"] = "read"
    auth: Literal["none", "session"] = "none"
    health: Health | None = None
    runnable: bool = True

    @property
    def signature(self) -> str:
        """The args as ``name*: type, name: type`` (``*``: required)."""
        return ", ".join(
            f"{arg}{'*' if arg in self.required else ''}: {kind}" for arg, kind in self.args.items()
        )


class CompactNote(BaseModel):
    """A note's title and first paragraph (``read_note`` gives the rest)."""

    site_id: str
    path: str
    title: str
    lead: str


class CompactSite(BaseModel):
    """A matching site: its name, start URL and one line (and the domain entry that
    matched)."""

    site_id: str
    name: str
    start_url: str | None
    description: str
    matched_domain: str


class CompactContext(FirstSite, BaseModel):
    """The compact answer of ``learn_context(url)``; :meth:`text` is what an agent reads."""

    url: str
    matched: bool
    sites: list[CompactSite]
    tools: list[CompactTool]
    notes: list[CompactNote]

    @property
    def skills(self) -> list[CompactTool]:
        """The SKILL.md skills among :attr:`tools` (kind ``"skill"``)."""
        return [tool for tool in self.tools if tool.kind == "skill"]

    def text(
        self,
        *,
        tools_header: Callable[[str], str] | None = None,
        skills_header: Callable[[str], str] | None = None,
        call_name: Callable[[CompactTool], str] | None = None,
        example: Callable[[CompactTool], dict[str, Any]] | None = None,
        notes_header: str = "notes (read_note for the whole):",
    ) -> str:
        """The answer as lines of text: per site a line, its tools and its notes, then the
        skills of each domain.

        Args:
            tools_header: the line above a site's tools, given the site id.
            skills_header: the line above a domain's skills, given the domain.
            call_name: how a tool is named on its line (by default its name).
            example: the example args shown for a tool (by default :attr:`CompactTool.example`).
            notes_header: the line above a site's notes.
        """
        if not self.matched:
            return f"no learnings match {self.url}"
        name_of = call_name or (lambda tool: tool.tool_name)
        example_of = example or (lambda tool: tool.example)
        header = tools_header or (lambda site_id: f"{site_id} tools (* required, =example):")
        skill_header = skills_header or (lambda domain: f"{domain} skills (* required, =example):")
        lines: list[str] = []
        for site in self.sites:
            start = f" {site.start_url}" if site.start_url else ""
            about = f": {site.description}" if site.description else ""
            lines.append(f"{site.name} ({site.site_id}){start}{about}")
            own = [tool for tool in self.tools if tool.site_id == site.site_id]
            if own:
                lines.append(header(site.site_id))
                lines += [_tool_line(tool, name_of(tool), example_of(tool)) for tool in own]
            notes = [note for note in self.notes if note.site_id == site.site_id]
            if notes:
                lines.append(notes_header)
                lines += [f"{_note_name(n.path)} {n.title!r}: {n.lead}" for n in notes]
        skills = [tool for tool in self.tools if tool.kind == "skill"]
        for domain in dict.fromkeys(tool.site_id for tool in skills):
            lines.append(skill_header(domain))
            lines += [
                _tool_line(tool, name_of(tool), example_of(tool))
                for tool in skills
                if tool.site_id == domain
            ]
        return "\n".join(lines)


def _note_name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _tool_line(tool: CompactTool, name: str, example: dict[str, Any]) -> str:
    how: str = tool.side_effect
    if tool.auth == "session":
        how += ", login"
    if not tool.runnable:
        return f"{name}({tool.signature}) not runnable here: {tool.description}"
    health = tool.health or "no runs"
    return f"{name}({_args_line(tool, example)}) {how}, {health}: {tool.description}"


def _args_line(tool: CompactTool, example: dict[str, Any]) -> str:
    """The args as ``name*: type=example`` (the example given for required args only)."""
    parts = []
    for arg, kind in tool.args.items():
        needed = arg in tool.required or (arg in example and arg not in tool.args)
        part = f"{arg}{'*' if needed else ''}: {kind}"
        if needed and arg in example:
            part += "=" + _json(example[arg])
        parts.append(part)
    # Args the caller's example adds (an MCP confirm flag): required for the call it shows.
    parts += [f"{arg}*={_json(value)}" for arg, value in example.items() if arg not in tool.args]
    return ", ".join(parts)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def one_line(text: str, limit: int = DESCRIPTION_MAX) -> str:
    """The first sentence of ``text`` on one line, cut at ``limit`` characters (with "…")."""
    flat = " ".join(text.split())
    first = _SENTENCE_END.split(flat, maxsplit=1)[0]
    return _cut(first, limit)


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0]
    if cut.count("(") > cut.count(")"):  # a parenthesis the cut would leave open goes whole
        cut = cut[: cut.rindex("(")]
    return cut.rstrip(",;: ") + "…"


def lead(text: str, limit: int = LEAD_MAX) -> str:
    """A note's first paragraph after its title, on one line, cut at ``limit`` characters."""
    paragraph: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if not paragraph and (not stripped or stripped.startswith("#")):
            continue
        if not stripped:
            break
        paragraph.append(stripped)
    return _cut(" ".join(paragraph), limit)


def arg_types(schema: Any) -> tuple[dict[str, str], list[str]]:
    """An args schema's args, each with its type in a word, and the required ones."""
    if not isinstance(schema, dict):
        return {}, []
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return {}, []
    required = [name for name in schema.get("required", []) if name in properties]
    return {name: _type(prop) for name, prop in properties.items()}, required


def _type(schema: Any) -> str:
    if not isinstance(schema, dict):
        return "any"
    if schema.get("enum"):
        values = [str(value) for value in schema["enum"]]
        joined = "|".join(values)
        if len(joined) <= 40:
            return joined
    kind = schema.get("type")
    if isinstance(kind, list):
        return "|".join(_TYPES.get(str(k), str(k)) for k in kind)
    if kind == "array":
        items = schema.get("items")
        return f"list[{_type(items)}]" if isinstance(items, dict) and items else "list"
    if isinstance(kind, str):
        return _TYPES.get(kind, kind)
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            return "|".join(_type(option) for option in options)
    return "any"


def health_word(info: ToolInfo) -> Health | None:
    """A tool's health in one word (None for a tool that cannot run)."""
    if not info.runnable:
        return None
    health = info.health
    if health is not None and health.unreachable:
        return "site unreachable"
    if health is not None and health.suspect:
        return "suspect"
    if health is None or not health.runs:
        return "no runs"
    return "ok"


def _tool(info: ToolInfo) -> CompactTool:
    args = info.args if isinstance(info.args, dict) else {}
    types, required = arg_types(args)
    return CompactTool(
        site_id=info.site_id,
        tool_name=info.tool_name,
        kind=info.kind,
        description=one_line(info.description) or info.tool_name,
        args=types,
        required=required,
        example=example_args(args) if info.runnable else {},
        side_effect=info.side_effect,
        auth=info.auth,
        health=health_word(info),
        runnable=info.runnable,
    )


def _site(site: SiteContext) -> CompactSite:
    return CompactSite(
        site_id=site.site_id,
        name=site.name,
        start_url=site.start_url,
        description=one_line(site.description, DESCRIPTION_MAX + 10),
        matched_domain=site.matched_domain,
    )


def _note(note: NoteInfo) -> CompactNote:
    return CompactNote(site_id=note.site_id, path=note.path, title=note.title, lead=lead(note.text))


def compact(context: LearnContext) -> CompactContext:
    """The compact form of a full ``learn_context`` answer."""
    return CompactContext(
        url=context.url,
        matched=context.matched,
        sites=[_site(site) for site in context.sites],
        tools=[_tool(info) for info in context.tools],
        notes=[_note(note) for note in context.notes],
    )
