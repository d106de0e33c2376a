"""Planning a save: the manifest it would write, validated before a byte is written.

Saves go to the agent workspace's learnings root (:func:`workspace_root`), never to the
project's. :func:`find_base` says where a site stands now (new, only in a project root, or in
the workspace), :func:`candidate_manifest` is its manifest after the save, and
:func:`validate_candidate` checks it exactly as loading would. :func:`plan_browser_tool`
runs every check of a browser tool save that needs no browser and returns a
:class:`ToolPlan` that the browser checks (:mod:`ego.learning.save.checks`) and the writer
(:mod:`ego.learning.save.store`) take.
"""

from __future__ import annotations

import copy
import json
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import jsonschema

from ...errors import InvalidManifestError, WorkspaceRequiredError
from ..catalog.jslint import check_source
from ..catalog.manifest import Manifest, args_schema, load_manifest
from ..catalog.matching import domain_of, is_too_broad, match_domain, split_domain
from ..catalog.naming import check_site_id, check_tool_name, refuse
from ..catalog.registry import Learnings
from ..catalog.schemas import validator, worded
from ..catalog.tool_source import source_url
from .draft import FrontEnd, ToolDraft, merge_entry, words_for
from .history import changed_fields, content_hash

__all__ = [
    "SiteBase",
    "ToolKind",
    "ToolPlan",
    "candidate_manifest",
    "check_domains",
    "check_schemas",
    "find_base",
    "manifest_with_tool",
    "plan_browser_tool",
    "validate_candidate",
    "workspace_root",
]


def check_schemas(draft: ToolDraft) -> dict[str, Any]:
    """The draft's args as a full JSON Schema, after checking its args and returns schemas.

    Raises:
        SaveRefusedError: args or returns is not a valid JSON Schema, or args is not an
            object schema (reason ``"args schema"``; ``problems`` lists each).
    """
    site_id, tool, args, returns = draft.site_id, draft.tool, draft.args, draft.returns
    problems = []
    schema: dict[str, Any] = {}
    if args is not None and not isinstance(args, dict):
        problems.append(f"args must be a JSON object (a schema), not {type(args).__name__}")
    else:
        try:
            schema = args_schema(args)
        except ValueError as exc:
            problems.append(f"args: {exc}")
        else:
            if schema.get("type") != "object":
                problems.append('args: a full JSON Schema must have "type": "object"')
            else:
                try:
                    validator(schema).check_schema(schema)
                except jsonschema.SchemaError as exc:
                    where = "/".join(str(p) for p in exc.path)
                    problems.append(
                        f"args is not a valid JSON Schema: {worded(exc)}"
                        + (f" (at {where})" if where else "")
                    )
    if returns is not None:
        if not isinstance(returns, (dict, bool)):
            problems.append(f"returns must be a JSON Schema object, not {type(returns).__name__}")
        else:
            try:
                validator(returns).check_schema(returns)
            except jsonschema.SchemaError as exc:
                problems.append(f"returns is not a valid JSON Schema: {worded(exc)}")
    if problems:
        raise refuse(site_id, tool, "args schema", problems)
    return schema


def workspace_root(learnings: Learnings) -> Path:
    """The learnings root saves go to: the workspace's ``learnings/``.

    Raises:
        WorkspaceRequiredError: ``learnings`` has no workspace root, or it is one of the
            project roots too.
    """
    root = learnings.workspace_root
    if root is not None and any(_same_folder(root, other) for other in learnings.roots[1:]):
        raise WorkspaceRequiredError(
            f"cannot save a learning: the workspace's learnings/ ({root}) is also a project "
            "root, and built-in learnings are never modified; point EGO_WORKSPACE (or "
            "--workspace, workspace=) at a folder of the agent's own"
        )
    if root is None:
        searched = ", ".join(str(r) for r in learnings.roots) or "none"
        raise WorkspaceRequiredError(
            "cannot save a learning: no agent workspace is set (roots: "
            f"{searched}); set EGO_WORKSPACE (or --workspace), or pass workspace= to "
            "ego.launch()/Learnings(): learnings are saved into <workspace>/learnings/, the "
            "project's own learnings/ are never modified"
        )
    return root


def _same_folder(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


@dataclass
class SiteBase:
    """Where a site stands before a save: new, only in another root, or in the workspace."""

    kind: Literal["new", "project", "workspace"]
    directory: Path | None
    raw: dict[str, Any]


def find_base(learnings: Learnings, site_id: str, name: str) -> SiteBase:
    """Where ``site_id`` stands now: in the workspace, only in a project root, or new.

    Args:
        learnings: the roots; the workspace root is looked at first.
        site_id: the site.
        name: the tool or note being saved (for the refusal message).

    Raises:
        WorkspaceRequiredError: no workspace root.
        SaveRefusedError: the site's manifest is broken (reason ``"site"``).
    """
    root = workspace_root(learnings)
    for index, candidate_root in enumerate([root, *learnings.roots[1:]]):
        directory = candidate_root / site_id
        if not directory.is_dir():
            continue
        kind: Literal["project", "workspace"] = "workspace" if index == 0 else "project"
        try:
            load_manifest(directory)
            raw = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
        except InvalidManifestError as exc:
            raise refuse(
                site_id,
                name,
                "site",
                [f"the site's manifest ({directory}) is broken: {p}" for p in exc.problems],
                lead=f"site {site_id!r} in {candidate_root} has a broken manifest: "
                f"{exc.problems[0]}; fix it (ego validate) or remove the folder",
            ) from None
        return SiteBase(kind, directory, raw)
    return SiteBase("new", None, {})


def _start_url(url: str | None) -> str | None:
    if not url or domain_of(url) is None:
        return None
    return url.split("#", 1)[0]


def check_domains(
    site_id: str, what: str, domains: Sequence[str], *, front_end: FrontEnd = "python"
) -> None:
    """Refuse domains that would claim every local app: a bare ``localhost`` or loopback.

    Args:
        site_id, what: the site and the tool or note being saved (for the message).
        domains: the domains the save would give the site.
        front_end: whose words the message uses for the domains option.

    Raises:
        SaveRefusedError: an entry is ``localhost``, ``127.0.0.1``, ``[::1]`` (or another
            loopback or unspecified address) without a port (reason ``"domains"``).
    """
    words = words_for(front_end)
    problems = []
    for entry in domains:
        if not isinstance(entry, str) or not is_too_broad(entry):
            continue
        host = split_domain(entry)[0]
        example = (f"[{host}]" if ":" in host else host) + ":8765"
        problems.append(
            f"domain {entry!r} is too broad: without a port it matches every local app on "
            "this machine; name the port the site is served on, e.g. "
            + words.domains.format(example)
        )
    if problems:
        raise refuse(site_id, what, "domains", problems)


def candidate_manifest(
    base: SiteBase,
    site_id: str,
    what: str,
    *,
    domains: Sequence[str] | None,
    page_url: str | None,
    site_name: str | None,
    front_end: FrontEnd = "python",
) -> dict[str, Any]:
    """The site's manifest after the save (raw JSON data), before the tool or note is put in.

    A new site gets ``domains`` (else the domain of ``page_url``: its host, with the port
    when the URL names one) and a start URL; an existing one keeps its manifest, with
    ``site_name`` and any new ``domains`` applied.

    Args:
        base: where the site stands now (:func:`find_base`).
        site_id: the site.
        what: the tool or note being saved (for the refusal message).
        domains, page_url, site_name: as the save was given them.
        front_end: whose words a refusal uses (``"python"``, ``"cli"`` or ``"mcp"``).

    Raises:
        SaveRefusedError: the site is new and no domain is known, or a new domain is a bare
            ``localhost`` or loopback address (reason ``"domains"``; see
            :func:`check_domains`).
    """
    words = words_for(front_end)
    if domains:
        check_domains(site_id, what, domains, front_end=front_end)
    if base.kind == "new":
        chosen = list(domains) if domains else []
        if not chosen:
            host = domain_of(page_url)
            if host is None:
                raise refuse(
                    site_id,
                    what,
                    "domains",
                    [
                        f"site {site_id!r} is new and no domains are known: pass "
                        f"{words.domains.format('x.com')} or save it with a tab on the site "
                        f"({words.tab})"
                    ],
                )
            check_domains(site_id, what, [host], front_end=front_end)
            chosen = [host]
        raw: dict[str, Any] = {"id": site_id, "name": site_name or site_id, "domains": chosen}
        start = _start_url(page_url)
        if start is not None and match_domain(start, chosen):
            raw["startUrl"] = start
        return raw
    raw = copy.deepcopy(base.raw)
    if site_name:
        raw["name"] = site_name
    if domains:
        known = list(raw.get("domains") or [])
        raw["domains"] = known + [d for d in domains if d not in known]
    return raw


def validate_candidate(site_id: str, what: str, raw: dict[str, Any]) -> Manifest:
    """Validate a manifest that is not on disk yet, with exactly the checks loading applies.

    Raises:
        SaveRefusedError: the manifest would be invalid (reason ``"manifest"``).
    """
    with tempfile.TemporaryDirectory(prefix="ego-manifest-check-") as folder:
        site_dir = Path(folder) / site_id
        site_dir.mkdir()
        (site_dir / "manifest.json").write_text(json.dumps(raw), encoding="utf-8")
        try:
            return load_manifest(site_dir)
        except InvalidManifestError as exc:
            raise refuse(
                site_id,
                what,
                "manifest",
                [f"the manifest would be invalid: {p}" for p in exc.problems],
            ) from None


@dataclass(frozen=True)
class ToolPlan:
    """A browser tool save that passed every check that needs no browser.

    Attributes:
        site_id, tool: what is saved.
        source: the tool file's text as given.
        expression: the source normalised to one expression (see
            :func:`ego.learning.catalog.tool_source.normalize_source`).
        entry: the manifest entry to write: the tool's current entry with what the draft
            named applied (:func:`merge_entry`).
        manifest: the whole manifest to write (raw JSON data).
        parsed: ``manifest`` parsed and validated.
        base: ``"new"`` (no such site yet), ``"project"`` (only in another root: it will be
            copied to the workspace) or ``"workspace"``.
        base_dir: the site folder that exists now (None for a new site).
        workspace: the workspace learnings root.
        changed: what the save changes in the tool: ``"source"`` and the entry's keys
            (``"args"``, ``"sideEffect"``, ...) whose value differs from the current one;
            for a new tool, everything it sets.
        draft: what the save names; the writer merges it again into the entry it finds
            under the site's lock, so a save that raced this one keeps its changes.
    """

    site_id: str
    tool: str
    source: str
    expression: str
    entry: dict[str, Any]
    manifest: dict[str, Any]
    parsed: Manifest
    base: Literal["new", "project", "workspace"]
    base_dir: Path | None
    workspace: Path
    changed: tuple[str, ...] = ()
    draft: ToolDraft | None = None

    @property
    def url(self) -> str:
        """The sourceURL the saved tool will run under."""
        return source_url(self.site_id, self.entry["path"])

    @property
    def args_schema(self) -> dict[str, Any]:
        """The tool's args as a full JSON Schema."""
        return self.parsed.browser_tools[self.tool].args


def _current_source(base: SiteBase, old: Any) -> bytes | None:
    """The bytes of the tool's current source, or None when there is none to read."""
    path = old.get("path") if isinstance(old, dict) else None
    if base.directory is None or not isinstance(path, str):
        return None
    try:
        return (base.directory / path).read_bytes()
    except OSError:
        return None


#: A tool's kind: the manifest key it is listed under, and how a refusal names it.
ToolKind = Literal["browser", "python"]
_KINDS: dict[str, tuple[str, str]] = {
    "browser": ("browserTools", "a browser tool"),
    "python": ("pythonTools", "a Python tool"),
}


def manifest_with_tool(
    base: SiteBase,
    draft: ToolDraft,
    *,
    page_url: str | None,
    kind: ToolKind,
    path: str | None = None,
) -> tuple[dict[str, Any], Any, dict[str, Any]]:
    """The site's manifest after the save with the draft's tool in it (raw JSON data, not
    yet validated), the tool's current entry (None for a new tool) and its new one.

    Args:
        base: where the site stands now (:func:`find_base`).
        draft: what to save.
        page_url: a new site's start URL (and its domain when ``draft.domains`` is None).
        kind: the tool's kind: its entry goes under ``browserTools`` or ``pythonTools``.
        path: the entry's file (default: the live path :func:`merge_entry` gives).

    Raises:
        SaveRefusedError: the site has a tool of the other kind by that name (reason
            ``"name"``), or as :func:`candidate_manifest` and :func:`merge_entry`.
    """
    site_id, tool = draft.site_id, draft.tool
    raw = candidate_manifest(
        base,
        site_id,
        tool,
        domains=draft.domains,
        page_url=page_url,
        site_name=draft.name,
        front_end=draft.front_end,
    )
    key, _ = _KINDS[kind]
    other_key, other = next(named for k, named in _KINDS.items() if k != kind)
    others = raw.get(other_key) or {}
    if isinstance(others, dict) and tool in others:
        raise refuse(
            site_id,
            tool,
            "name",
            [f"site {site_id!r} already has {other} {tool!r}: pick another name"],
        )
    tools = dict(raw.get(key) or {})
    old = tools.get(tool)
    entry = merge_entry(old, draft)
    if path is not None:
        entry["path"] = path
    tools[tool] = entry
    raw[key] = tools
    return raw, old, entry


def plan_browser_tool(
    learnings: Learnings, draft: ToolDraft, *, page_url: str | None = None
) -> ToolPlan:
    """Check a browser tool save as far as possible without a browser, and plan its writes.

    The tool's entry is its current one with what the draft names applied (see
    :func:`merge_entry`): a re-save changes only what it names.

    Args:
        learnings: the roots; the save goes to their workspace root.
        draft: what to save (its ``try_args`` are not looked at here).
        page_url: the URL of the page the tool was found on; gives a new site its domain and
            start URL.

    Raises:
        WorkspaceRequiredError: no workspace root.
        SaveRefusedError: a check failed (``reason`` says which); SnapshotReferenceError for
            snapshot-only references.
    """
    site_id, tool = draft.site_id, draft.tool
    check_site_id(site_id, name=str(tool))
    check_tool_name(site_id, tool)
    expression = check_source(site_id, tool, draft.source)
    check_schemas(draft)
    base = find_base(learnings, site_id, tool)
    raw, old, entry = manifest_with_tool(base, draft, page_url=page_url, kind="browser")
    parsed = validate_candidate(site_id, tool, raw)
    data = draft.source.encode("utf-8")
    previous = _current_source(base, old)
    changed = changed_fields(
        old if isinstance(old, dict) else None,
        entry,
        content_hash(previous) if previous is not None else None,
        content_hash(data),
    )
    return ToolPlan(
        site_id=site_id,
        tool=tool,
        source=draft.source,
        expression=expression,
        entry=entry,
        manifest=raw,
        parsed=parsed,
        base=base.kind,
        base_dir=base.directory,
        workspace=workspace_root(learnings),
        changed=changed,
        draft=draft,
    )
