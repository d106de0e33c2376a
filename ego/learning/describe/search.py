"""The catalog: every site's tools and notes, ranked for a query (``ego catalog search``).

Every root is searched (the workspace, the packs, the bundled sites), one copy per site id as
:meth:`~.registry.Learnings.sites` lists them. Ranking reads each manifest the way the domain
index does (:func:`~.index.read_raw`: a JSON parse, no schema check, no models) plus the notes
it names, so a search over 1,000 sites loads none of them in full; only the sites of the hits
shown are loaded and checked (which gives their example calls, and says when one is invalid,
a pack's tampered site included). What was read is kept per Learnings by the manifest's and
notes' stamps, so later searches in the same process read only what changed.

A query's words are matched against the words of each tool's name, its description, its
site's id, name, description and domains, and the site's notes (a query word matches a word
it starts: ``prod`` finds ``products``); a hit matching more of the query's words ranks
first, then by where they matched (a tool's name weighs most, notes least).
"""

from __future__ import annotations

import os
import re
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import BaseModel, Field

from ...errors import UnsafePathError
from ..catalog.index import read_raw
from ..catalog.manifest import BrowserToolSpec
from ..catalog.matching import match_host, url_host
from ..catalog.paths import check_relative, resolve_inside
from ..catalog.registry import Learnings, SiteEntry, file_stamp
from .context import NoteInfo, ToolInfo, node_tool_info, tool_info

__all__ = ["CatalogHit", "CatalogSearch", "CatalogSite", "CatalogTool", "catalog_search", "show"]

#: The most of one note that is searched (a note is knowledge for an agent, not a book).
MAX_NOTE_BYTES = 256 * 1024

#: How much each field counts when a query word matches it.
_TOOL_NAME, _TOOL_TEXT, _SITE, _DOMAINS, _SITE_TEXT, _NOTES = 4.0, 3.0, 2.0, 2.0, 1.0, 0.5
_NOTE_TITLE, _NOTE_TEXT = 3.0, 1.5

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> list[str]:
    return _WORD.findall(_CAMEL.sub(" ", text).lower())


def _field(*texts: Any) -> str:
    """Texts as one searchable string: `` word word `` (a query word matches a word it
    starts, found as ``" " + word``)."""
    return " " + " ".join(_words(" ".join(text for text in texts if isinstance(text, str)))) + " "


class CatalogHit(BaseModel):
    """One tool or note that matches a query.

    ``example`` is a ready-to-paste Python call (None for a note, or a site that does not
    load: then ``valid`` is False and ``problems`` says why).
    """

    site_id: str
    kind: Literal["tool", "note"]
    name: str = Field(description="The tool's name, or the note's path.")
    description: str = Field(description="The tool's description, or the note's title.")
    source: str = Field(description="'workspace', 'pack NAME VERSION', 'bundled' or 'folder'.")
    domains: list[str]
    tool_kind: Literal["browser", "python"] | None = None
    side_effect: Literal["read", "write", "irreversible"] | None = None
    example: str | None = None
    score: float
    valid: bool = True
    problems: list[str] = Field(default_factory=list)
    #: The tool as ``learn_context`` describes it (for front ends that word the example
    #: their own way); not in JSON.
    info: ToolInfo | None = Field(default=None, exclude=True)


class CatalogSearch(BaseModel):
    """The answer of a search: the best ``hits`` of ``total`` matches."""

    query: str
    domain: str | None
    total: int
    hits: list[CatalogHit]


class CatalogTool(BaseModel):
    """One tool in full (``ego catalog show SITE/TOOL``)."""

    site_id: str
    source: str
    directory: str
    file: str
    tool: ToolInfo


class CatalogSite(BaseModel):
    """One site in full (``ego catalog show SITE``)."""

    site_id: str
    name: str
    description: str
    domains: list[str]
    start_url: str | None
    source: str
    shadows: list[str]
    directory: str
    notes: list[NoteInfo]
    tools: list[ToolInfo]


@dataclass(frozen=True)
class _Doc:
    """A tool or note as it is searched."""

    site_id: str
    kind: Literal["tool", "note"]
    name: str
    description: str
    tool_kind: Literal["browser", "python"] | None
    side_effect: Literal["read", "write", "irreversible"] | None
    fields: tuple[tuple[str, float], ...]


@dataclass(frozen=True)
class _Site:
    """One site's documents, and what they were read from."""

    stamp: tuple[int, int, int, int]
    notes: tuple[tuple[Path, tuple[int, int, int, int]], ...]
    domains: tuple[str, ...]
    docs: tuple[_Doc, ...]


@dataclass(frozen=True)
class _Listed:
    """A site folder as a search lists it (one per id, from the first root that has it)."""

    site_id: str
    root: Path
    directory: Path
    stamp: tuple[int, int, int, int]


def _listing(roots: Iterable[Path]) -> list[_Listed]:
    # The roots are listed here rather than through the domain index: the index reads every
    # manifest's domains, and a search reads every manifest anyway (once, below).
    chosen: dict[str, _Listed] = {}
    for root in roots:
        try:
            children = list(os.scandir(root))
        except OSError:
            continue
        for child in children:
            if child.name.startswith(("_", ".")) or child.name in chosen:
                continue
            try:
                if not child.is_dir():
                    continue
            except OSError:
                continue
            stamp = file_stamp(os.path.join(child.path, "manifest.json"))
            chosen[child.name] = _Listed(child.name, root, root / child.name, stamp)
    return [chosen[name] for name in sorted(chosen)]


class _Catalog:
    """The documents of one Learnings' sites, re-read by their stamps."""

    def __init__(self) -> None:
        self.sites: dict[Path, _Site] = {}

    def documents(self, roots: Iterable[Path]) -> list[tuple[_Listed, _Site]]:
        found = []
        kept: dict[Path, _Site] = {}
        for site in _listing(roots):
            known = self.sites.get(site.directory)
            if (
                known is None
                or known.stamp != site.stamp
                or any(file_stamp(path) != stamp for path, stamp in known.notes)
            ):
                known = _read_site(site)
            kept[site.directory] = known
            found.append((site, known))
        self.sites = kept
        return found


def _note_file(directory: Path, path: str, what: str) -> Path:
    """The note's file; a link on its way is resolved and must stay in the site folder."""
    check_relative(path, what=what)
    file = directory / path
    folder = directory
    for part in PurePosixPath(path).parts:
        folder = folder / part
        if folder.is_symlink():
            return resolve_inside(directory, path, what=what)
    return file


def _read_site(site: _Listed) -> _Site:
    if site.stamp[0] == -1:
        return _Site(site.stamp, (), (), ())
    raw = read_raw(str(site.directory / "manifest.json")) or {}
    domains = tuple(entry for entry in raw.get("domains") or () if isinstance(entry, str))
    site_field = _field(site.site_id, raw.get("name"))
    domains_field = _field(*domains)
    site_text = _field(raw.get("description"))
    notes: list[tuple[Path, tuple[int, int, int, int]]] = []
    note_docs: list[_Doc] = []
    note_fields: list[str] = []
    paths = raw.get("notes")
    for path in paths if isinstance(paths, list) else ():
        if not isinstance(path, str):
            continue
        try:
            file = _note_file(site.directory, path, f"{site.site_id} note")
            with open(file, "rb") as handle:
                text = handle.read(MAX_NOTE_BYTES).decode("utf-8", errors="replace")
        except (UnsafePathError, OSError):
            continue
        notes.append((file, file_stamp(file)))
        note_fields.append(_field(text))
        title = _note_title(text, path)
        fields: tuple[tuple[str, float], ...] = (
            (_field(title), _NOTE_TITLE),
            (note_fields[-1], _NOTE_TEXT),
            (site_field, _SITE),
            (domains_field, _DOMAINS),
        )
        note_docs.append(_Doc(site.site_id, "note", path, title, None, None, fields))
    notes_field = "".join(note_fields)
    docs: list[_Doc] = []
    for key, kind in (("browserTools", "browser"), ("pythonTools", "python")):
        tools = raw.get(key)
        for name, spec in (tools if isinstance(tools, dict) else {}).items():
            spec = spec if isinstance(spec, dict) else {}
            description = spec.get("description")
            description = description if isinstance(description, str) else ""
            effect = spec.get("sideEffect", "read")
            fields = (
                (_field(name), _TOOL_NAME),
                (_field(description), _TOOL_TEXT),
                (site_field, _SITE),
                (domains_field, _DOMAINS),
                (site_text, _SITE_TEXT),
                (notes_field, _NOTES),
            )
            docs.append(
                _Doc(
                    site.site_id,
                    "tool",
                    str(name),
                    description,
                    kind,  # type: ignore[arg-type]
                    effect if effect in ("read", "write", "irreversible") else None,
                    fields,
                )
            )
    return _Site(site.stamp, tuple(notes), domains, tuple(docs + note_docs))


def _note_title(text: str, path: str) -> str:
    for line in text.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return Path(path).stem.replace("-", " ").replace("_", " ")


def _score(doc: _Doc, terms: list[str]) -> tuple[int, float]:
    """How many of ``terms`` match ``doc``, and their weight (each term its best field's)."""
    matched, score = 0, 0.0
    for term in terms:
        needle = " " + term
        best = max((weight for text, weight in doc.fields if needle in text), default=0.0)
        if best:
            matched += 1
            score += best
    return matched, score


_CATALOGS: weakref.WeakKeyDictionary[Learnings, _Catalog] = weakref.WeakKeyDictionary()


def catalog_search(
    learnings: Learnings, query: str, *, domain: str | None = None, limit: int = 10
) -> CatalogSearch:
    """The tools and notes of every root that best match ``query``, best first.

    Args:
        learnings: the roots (workspace, packs, bundled).
        query: words to look for; empty with ``domain`` lists that domain's tools and notes.
        domain: only sites whose domains match this host (``shop.localhost:8765`` or
            ``x.com``), as ``learn_context`` matches a URL on it.
        limit: how many hits to give (the best first); ``total`` counts them all.

    Raises:
        ValueError: ``domain`` is not a host, or ``limit`` is below 1.
    """
    if limit < 1:
        raise ValueError(f"limit must be 1 or more, not {limit}")
    target = None
    if domain is not None:
        target = url_host(f"http://{domain.strip()}/") if "://" not in domain else url_host(domain)
        if target is None:
            raise ValueError(f"{domain!r} is not a host such as x.com or shop.localhost:8765")
    terms = list(dict.fromkeys(_words(query)))
    catalog = _CATALOGS.setdefault(learnings, _Catalog())
    ranked: list[tuple[int, float, _Doc, _Listed]] = []
    for site, read in catalog.documents(learnings.roots):
        if target is not None and match_host(*target, read.domains) is None:
            continue
        for doc in read.docs:
            matched, score = _score(doc, terms) if terms else (0, 0.0)
            if matched or (not terms and target is not None):
                ranked.append((matched, score, doc, site))
    ranked.sort(
        key=lambda hit: (-hit[0], -hit[1], hit[2].site_id, hit[2].kind != "tool", hit[2].name)
    )
    entries: dict[str, SiteEntry] = {}
    hits = []
    for _, score, doc, site in ranked[:limit]:
        entry = entries.get(doc.site_id)
        if entry is None:
            entry = entries[doc.site_id] = learnings.find(doc.site_id)
        hits.append(_hit(learnings, entry, site, doc, score))
    return CatalogSearch(query=query, domain=domain, total=len(ranked), hits=hits)


def _hit(
    learnings: Learnings, entry: SiteEntry, site: _Listed, doc: _Doc, score: float
) -> CatalogHit:
    read = _CATALOGS[learnings].sites[site.directory]
    info = None
    if entry.manifest is not None and doc.kind == "tool":
        spec = entry.manifest.browser_tools.get(doc.name) or entry.manifest.python_tools.get(
            doc.name
        )
        if spec is not None:
            info = tool_info(doc.site_id, spec, doc.tool_kind or "browser")
    return CatalogHit(
        site_id=doc.site_id,
        kind=doc.kind,
        name=doc.name,
        description=doc.description,
        source=learnings.origin(site.root).label,
        domains=list(read.domains),
        tool_kind=doc.tool_kind,
        side_effect=doc.side_effect,
        example=info.example if info is not None else None,
        score=round(score, 2),
        valid=entry.valid,
        problems=entry.problems,
        info=info,
    )


def show(learnings: Learnings, ref: str) -> CatalogSite | CatalogTool:
    """One site (``SITE``) or tool (``SITE/TOOL``) in full: everything ``learn_context``
    says of it, and where it comes from.

    Args:
        learnings: the roots.
        ref: ``site_id`` or ``site_id/tool``.

    Raises:
        UnknownSiteError: no such site.
        InvalidManifestError: the site does not load (a pack's site whose files differ from
            its RECORD: :class:`~ego.errors.PackIntegrityError`, naming the files).
        UnknownToolError: the site declares no such tool (the message lists them).
    """
    site_id, _, tool = ref.partition("/")
    if tool:
        entry, spec = learnings.tool(site_id, tool)
        kind: Literal["browser", "python"] = (
            "browser" if isinstance(spec, BrowserToolSpec) else "python"
        )
        return CatalogTool(
            site_id=site_id,
            source=_source(entry),
            directory=str(entry.directory),
            file=str(entry.directory / spec.path),
            tool=tool_info(site_id, spec, kind),
        )
    entry = learnings.find(site_id)
    manifest = entry.require()
    tools = [tool_info(site_id, spec, "browser") for spec in manifest.browser_tools.values()]
    tools += [tool_info(site_id, spec, "python") for spec in manifest.python_tools.values()]
    tools += [node_tool_info(site_id, spec) for spec in manifest.node_tools.values()]
    later = learnings.roots[learnings.roots.index(entry.root) + 1 :]
    return CatalogSite(
        site_id=site_id,
        name=manifest.name,
        description=manifest.description,
        domains=list(manifest.domains),
        start_url=manifest.start_url,
        source=_source(entry),
        shadows=[learnings.origin(root).label for root in later if (root / site_id).is_dir()],
        directory=str(entry.directory),
        notes=[
            NoteInfo(site_id=note.site_id, path=note.path, title=note.title, text=note.text)
            for note in learnings.notes(site_id)
        ],
        tools=tools,
    )


def _source(entry: SiteEntry) -> str:
    return entry.origin.label if entry.origin is not None else "folder"
