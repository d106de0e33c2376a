"""``learn_context(url)``: what an agent can use on a page, as data."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, Field

from ...errors import UnknownNoteError
from ..catalog.manifest import NodeToolSpec, ToolSpec, args_schema
from ..catalog.packs import conflict_message
from ..catalog.registry import Learnings, SiteEntry
from ..health.view import ToolHealth, site_health, tool_health

__all__ = [
    "FirstSite",
    "LearnContext",
    "NoteInfo",
    "SiteContext",
    "SiteSummary",
    "ToolInfo",
    "build_context",
    "describe_tool",
    "example_args",
    "example_call",
    "node_tool_info",
    "node_tool_reason",
    "read_note",
    "summarize_site",
    "tool_info",
]


class ToolInfo(BaseModel):
    """One tool an agent can call."""

    site_id: str
    tool_name: str
    kind: Literal["browser", "python", "skill", "node"]
    description: str
    args: dict[str, Any]
    returns: dict[str, Any] | bool | None
    side_effect: Literal["read", "write", "irreversible"] = "read"
    auth: Literal["none", "session"] = "none"
    example: str = Field(description="A ready-to-paste Python call.")
    #: False for a tool ego lists but cannot run (a node tool of the TypeScript harness).
    runnable: bool = True
    #: Why the tool cannot run, and what to do instead; empty for a runnable tool.
    reason: str = ""
    #: Whether its current version still works: its recorded runs, and ``suspect`` when
    #: the latest ones all failed (None for a tool that cannot run or cannot be loaded).
    health: ToolHealth | None = None


class NoteInfo(BaseModel):
    """A note: knowledge about the site, for an agent to read."""

    site_id: str
    path: str
    title: str
    text: str


class SiteContext(BaseModel):
    """A site whose domains match the URL, with everything it offers."""

    site_id: str
    name: str
    description: str
    matched_domain: str
    start_url: str | None
    notes: list[NoteInfo]
    tools: list[ToolInfo]


class _MatchedSite(Protocol):
    @property
    def site_id(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def matched_domain(self) -> str: ...


class FirstSite:
    """What an answer listing matching sites says of the first: the base of
    :class:`LearnContext` and of the compact answer."""

    if TYPE_CHECKING:
        # A pydantic field of each answer model; declared here for the type checker only.
        sites: Sequence[_MatchedSite]

    @property
    def site_id(self) -> str | None:
        """The first matching site's id, or None."""
        return self.sites[0].site_id if self.sites else None

    @property
    def name(self) -> str | None:
        """The first matching site's name, or None."""
        return self.sites[0].name if self.sites else None

    @property
    def matched_domain(self) -> str | None:
        """The domain entry of the first matching site that matched, or None."""
        return self.sites[0].matched_domain if self.sites else None


class LearnContext(FirstSite, BaseModel):
    """The answer of ``learn_context(url)``.

    ``sites`` holds every site whose domains match (usually one); ``tools`` and ``notes``
    gather theirs, so a caller that does not care which site a tool comes from need not look
    inside ``sites``. ``skills`` holds the SKILL.md skills whose site is the URL's host or a
    parent domain of it (kind ``"skill"``); they are in ``tools`` too.
    """

    url: str
    matched: bool
    sites: list[SiteContext]
    tools: list[ToolInfo]
    notes: list[NoteInfo]
    skills: list[ToolInfo] = Field(default_factory=list)


class SiteSummary(BaseModel):
    """A site as ``sites()`` lists it, valid or not."""

    site_id: str
    name: str | None
    valid: bool
    problems: list[str]
    root: str
    domains: list[str]
    browser_tools: list[str]
    python_tools: list[str]
    node_tools: list[str] = Field(
        default_factory=list, description="Tools ego lists but cannot run (TypeScript harness)."
    )
    source: Literal["workspace", "pack", "bundled", "folder"] = Field(
        "folder", description="Where the site comes from (a folder: a root given by path)."
    )
    pack: str | None = Field(None, description="The pack's name, for a site from a pack.")
    pack_version: str | None = None
    shadows: list[str] = Field(
        default_factory=list,
        description="Later roots that hold the same site id, whose copies are not used "
        "('workspace', 'pack NAME VERSION', 'bundled', 'folder').",
    )
    warning: str = Field("", description="Two packs hold this site id: which one is used.")
    health: dict[str, ToolHealth] = Field(
        default_factory=dict, description="The health of each tool that has recorded runs."
    )


def _example_value(name: str, schema: Any) -> Any:
    if not isinstance(schema, dict):  # a boolean subschema: any value (true) or none (false)
        return name.replace("_", " ")
    if schema.get("examples"):
        return schema["examples"][0]
    if "default" in schema:
        return schema["default"]
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    return {
        "integer": 10,
        "number": 1.5,
        "boolean": True,
        "array": [],
        "object": {},
        "null": None,
    }.get(str(kind), name.replace("_", " "))


def example_args(schema: dict[str, Any]) -> dict[str, Any]:
    """Example values for an args schema: its required args, and those that carry examples.

    Args:
        schema: a full JSON Schema of an args object (see :func:`~.manifest.args_schema`).
    """
    properties: dict[str, Any] = schema.get("properties", {})
    required = schema.get("required", [])
    return {
        name: _example_value(name, prop)
        for name, prop in properties.items()
        if name in required or (isinstance(prop, dict) and "examples" in prop)
    }


def example_call(site_id: str, spec: ToolSpec, *, kind: str) -> str:
    """A ready-to-paste Python call of the tool, with example values for its required args."""
    properties: dict[str, Any] = spec.args.get("properties", {})
    required = spec.args.get("required", [])
    example = {
        name: _example_value(name, schema)
        for name, schema in properties.items()
        if name in required or (isinstance(schema, dict) and "examples" in schema)
    }
    method = "run_browser_tool" if kind == "browser" else "run_tool"
    confirm = ", confirm=True" if spec.side_effect == "irreversible" else ""
    return f"await site.{method}({site_id!r}, {spec.name!r}, {example!r}{confirm})"


def tool_info(site_id: str, spec: ToolSpec, kind: Literal["browser", "python"]) -> ToolInfo:
    """Describe one declared tool."""
    return ToolInfo(
        site_id=site_id,
        tool_name=spec.name,
        kind=kind,
        description=spec.description,
        args=spec.args,
        returns=spec.returns,
        side_effect=spec.side_effect,
        auth=spec.auth,
        example=example_call(site_id, spec, kind=kind),
    )


def node_tool_reason(site_id: str, name: str) -> str:
    """Why a TypeScript harness's node tool does not run here, and how to port it."""
    return (
        f"{site_id}/{name} is a Node-side tool of the TypeScript harness (it gets a Playwright "
        "ctx.page); ego cannot run it: port it to a Python tool (pythonTools, a "
        f"tools/{name}.py with run(ctx, args) using ctx.tab; see docs/learnings.md)"
    )


def node_tool_info(site_id: str, spec: NodeToolSpec) -> ToolInfo:
    """Describe a node tool: listed so that nothing is dropped, marked not runnable."""
    extra = spec.model_extra or {}
    args = extra.get("args")
    try:
        schema = args_schema(args) if isinstance(args, dict) else args_schema(None)
    except ValueError:
        schema = args_schema(None)
    reason = node_tool_reason(site_id, spec.name)
    return ToolInfo(
        site_id=site_id,
        tool_name=spec.name,
        kind="node",
        description=spec.description,
        args=schema,
        returns=None,
        example=f"# not runnable in ego: {reason}",
        runnable=False,
        reason=reason,
    )


def _site_context(learnings: Learnings, entry: SiteEntry, matched: str) -> SiteContext:
    manifest = entry.require()
    tools = [tool_info(manifest.id, spec, "browser") for spec in manifest.browser_tools.values()]
    tools += [tool_info(manifest.id, spec, "python") for spec in manifest.python_tools.values()]
    health = tool_health(
        learnings, entry, [*manifest.browser_tools.values(), *manifest.python_tools.values()]
    )
    for info in tools:
        info.health = health.get(info.tool_name)
    tools += [node_tool_info(manifest.id, spec) for spec in manifest.node_tools.values()]
    notes = [
        NoteInfo(site_id=note.site_id, path=note.path, title=note.title, text=note.text)
        for note in learnings.notes(manifest.id)
    ]
    return SiteContext(
        site_id=manifest.id,
        name=manifest.name,
        description=manifest.description,
        matched_domain=matched,
        start_url=manifest.start_url,
        notes=notes,
        tools=tools,
    )


def describe_tool(learnings: Learnings, site_id: str, tool: str) -> ToolInfo:
    """Everything about one tool of a site: its whole description, args and returns schemas,
    side effect, auth, an example call and its health record (reads no tool file but to
    know its version).

    Raises:
        UnknownSiteError, InvalidManifestError: no such usable site.
        UnknownToolError: the site declares no such tool (the message lists its tools).
    """
    manifest = learnings.site(site_id)
    node = manifest.node_tools.get(tool) if isinstance(tool, str) else None
    if node is not None:
        return node_tool_info(site_id, node)
    entry, spec = learnings.tool(site_id, tool)
    kind: Literal["browser", "python"] = "browser" if tool in manifest.browser_tools else "python"
    info = tool_info(site_id, spec, kind)
    info.health = tool_health(learnings, entry, [spec]).get(spec.name)
    return info


def read_note(learnings: Learnings, site_id: str, note: str) -> NoteInfo:
    """One of a site's notes in full, named by its path (``notes/api.md``), its file name
    (``api.md``, ``api``) or its title.

    Raises:
        UnknownSiteError, InvalidManifestError: no such usable site.
        UnknownNoteError: the site has no such note (the message lists its notes).
    """
    notes = learnings.notes(site_id)
    wanted = note.strip().casefold()
    for found in notes:
        file = found.path.rsplit("/", 1)[-1]
        names = {found.path, file, file.rsplit(".", 1)[0], found.title}
        if wanted in {name.casefold() for name in names}:
            return NoteInfo(
                site_id=found.site_id, path=found.path, title=found.title, text=found.text
            )
    listed = ", ".join(found.path for found in notes) or "none"
    raise UnknownNoteError(f"site {site_id!r} has no note {note!r:.200}; its notes: {listed}")


def build_context(learnings: Learnings, url: str, skills: Sequence[ToolInfo] = ()) -> LearnContext:
    """Everything the learnings offer for ``url``: every valid site whose domains match.

    Args:
        learnings: where sites are found.
        url: the page.
        skills: the SKILL.md skills for ``url``, described as tools by the layer that knows
            them; they come in ``skills`` and at the end of ``tools``.
    """
    # Only the sites whose domains match are loaded, not every site installed.
    sites = [
        _site_context(learnings, entry, matched) for entry, matched in learnings.sites_for_url(url)
    ]
    skills = list(skills)
    return LearnContext(
        url=url,
        matched=bool(sites or skills),
        sites=sites,
        tools=[tool for site in sites for tool in site.tools] + skills,
        notes=[note for site in sites for note in site.notes],
        skills=skills,
    )


def summarize_site(
    entry: SiteEntry,
    learnings: Learnings | None = None,
    ran: Collection[tuple[str, str]] | None = None,
) -> SiteSummary:
    """One line's worth of facts about a site, valid or not; with ``learnings`` (the roots
    ``entry`` comes from), the health of its tools that have recorded runs. A listing passes
    ``ran`` (:func:`~ego.learning.health.view.ran_tools`, asked once for all its sites), so
    that only the tools that ran are looked at."""
    manifest = entry.manifest
    origin = entry.origin
    packs = [shadow.label for shadow in entry.shadows if shadow.kind == "pack"]
    warning = ""
    if origin is not None and origin.kind == "pack" and packs:
        warning = conflict_message(entry.site_id, [origin.label, *packs])
    return SiteSummary(
        site_id=entry.site_id,
        name=manifest.name if manifest else None,
        valid=entry.valid,
        problems=entry.problems,
        root=str(entry.root),
        domains=list(manifest.domains) if manifest else [],
        browser_tools=sorted(manifest.browser_tools) if manifest else [],
        python_tools=sorted(manifest.python_tools) if manifest else [],
        node_tools=sorted(manifest.node_tools) if manifest else [],
        source=origin.kind if origin is not None else "folder",
        pack=origin.pack if origin is not None else None,
        pack_version=origin.version if origin is not None else None,
        shadows=[shadow.label for shadow in entry.shadows],
        warning=warning,
        health=site_health(learnings, entry, ran) if learnings is not None else {},
    )
