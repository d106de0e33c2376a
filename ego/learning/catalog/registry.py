"""Finding sites in the learnings roots and loading what they declare."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from time import monotonic
from types import ModuleType
from typing import Any

from ...errors import (
    InvalidArgsError,
    InvalidManifestError,
    ToolLoadError,
    UnknownSiteError,
    UnknownToolError,
    UnsafePathError,
)
from ...places import WORKSPACE_ENV, bundled_root, expand
from ...runtime.js import embed_json, source_url
from .freshness import FileStamp, Fresh, file_stamp, nearest_folder, source_watch_paths
from .index import DomainIndex
from .jslint import function_expression
from .manifest import (
    MAX_SITE_ID,
    BrowserToolSpec,
    Manifest,
    PythonToolSpec,
    ToolSpec,
    is_site_id,
    load_manifest,
)
from .matching import match_host, url_host
from .packs import Integrity, Origin, Pack, installed_packs
from .paths import check_relative, resolve_inside
from .quickcheck import quick_check
from .schemas import failing_field, first_error, key_problem, unknown_args, validator
from .watch import generation, watch

__all__ = [
    "MAX_SITE_ID",
    "WORKSPACE_ENV",
    "FileStamp",
    "Learnings",
    "LoadedSource",
    "Note",
    "SiteEntry",
    "file_stamp",
    "project_learnings_dir",
    "version_of",
]


def _refuse_key(subject: str, args: Any, *, deep: bool = True) -> None:
    """Raise InvalidArgsError when ``args`` holds a key that is not a string."""
    problem = key_problem(args, "args", deep=deep)
    if problem is not None:
        message = f"{subject}: {problem[1]}; nothing was sent to the browser"
        raise InvalidArgsError(message, field=problem[0])


def project_learnings_dir() -> Path:
    """The ``learnings/`` that ship with ego: in the package of an installed wheel, at the top
    of a checkout (see :func:`ego.places.bundled_root`)."""
    return bundled_root() / "learnings"


@dataclass(frozen=True)
class SiteEntry:
    """A site folder found in a learnings root, valid or not."""

    site_id: str
    root: Path
    directory: Path
    manifest: Manifest | None
    error: InvalidManifestError | None
    #: Where the site comes from (workspace, a pack, bundled); None for an entry made by hand.
    origin: Origin | None = None
    #: The later roots that hold the same site id, in search order: their copies are not used.
    shadows: tuple[Origin, ...] = ()

    @property
    def valid(self) -> bool:
        return self.manifest is not None

    @property
    def problems(self) -> list[str]:
        return self.error.problems if self.error is not None else []

    def require(self) -> Manifest:
        """The manifest, or the site's InvalidManifestError."""
        if self.manifest is None:
            assert self.error is not None
            raise self.error
        return self.manifest


@dataclass(frozen=True)
class LoadedSource:
    """A browser tool's source, ready to wrap or cache.

    ``expression`` evaluates to the tool function; ``url`` is its sourceURL; ``version`` is a
    digest of the expression and url, so it changes exactly when what runs changes.
    """

    site_id: str
    tool: str
    file: Path
    url: str
    expression: str
    version: str


@dataclass(frozen=True)
class Note:
    """A note (knowledge for an agent) from a site's ``notes/``."""

    site_id: str
    path: str
    title: str
    text: str


class Learnings:
    """The learnings roots: the workspace's ``learnings/`` first, then each installed learning
    pack's (:mod:`.packs`), then the project's.

    A site id present in several roots is taken from the first (the workspace shadows a pack,
    a pack the project). A pack's site is checked against its installer's RECORD first: one
    that differs is invalid (:class:`~ego.errors.PackIntegrityError`). Folders whose name
    starts with ``_`` or ``.`` are skipped. A broken manifest makes only its own site invalid.
    Manifests and tool files are re-read when they change on disk (by modification time,
    size, inode and change time), so editing a learning needs no restart. A hot call does not
    stat them: change notification (:mod:`.watch`) tells when to, and a file is trusted at
    most :data:`~.watch.REVALIDATE_SECONDS` without a stat.

    Args:
        workspace: the agent workspace; its ``learnings/`` is searched first. Defaults to
            ``$EGO_WORKSPACE`` when set.
        project: the project's learnings folder; defaults to :func:`project_learnings_dir`.
        roots: explicit roots, searched in order (replaces all of the above).
        packs: the learning packs whose roots come between the workspace and the project;
            by default every installed one (:func:`~.packs.installed_packs`). With ``roots``,
            the packs whose roots are among them (so that those sites are verified).

    A leading ``~`` in any of these paths is expanded.
    """

    def __init__(
        self,
        *,
        workspace: str | os.PathLike[str] | None = None,
        project: str | os.PathLike[str] | None = None,
        roots: Sequence[str | os.PathLike[str]] | None = None,
        packs: Sequence[Pack] | None = None,
    ) -> None:
        origins: dict[Path, Origin] = {}
        chosen = list(packs or ()) if packs is not None or roots is not None else installed_packs()
        pack_roots = {pack.root: pack for pack in chosen if pack.root is not None}
        if roots is not None:
            self.roots = [expand(root) for root in roots]
            first = self.roots[0] if len(self.roots) > 1 else None
            self._workspace = first if first not in pack_roots else None
            origins[project_learnings_dir()] = Origin("bundled")
        else:
            found: list[Path] = []
            workspace = workspace if workspace is not None else os.environ.get(WORKSPACE_ENV)
            self._workspace = expand(workspace) / "learnings" if workspace else None
            if self._workspace is not None:
                found.append(self._workspace)
            found.extend(pack_roots)
            project_root = expand(project) if project is not None else project_learnings_dir()
            origins[project_root] = Origin("bundled")
            self.roots = [*found, project_root]
        if self._workspace is not None:
            origins[self._workspace] = Origin("workspace")
        origins.update((root, pack.origin) for root, pack in pack_roots.items())
        #: The learning packs among the roots, in search order.
        self.packs = [pack for pack in chosen if pack.root in self.roots]
        self._packs = {root: pack for root, pack in pack_roots.items() if root in self.roots}
        self._origins = origins
        #: Checks the packs' sites against their RECORD (a stat per file once checked).
        self.integrity = Integrity()
        self._refused: dict[Path, tuple[SiteEntry, tuple[str, ...], SiteEntry]] = {}
        self._manifests: dict[Path, tuple[FileStamp, SiteEntry]] = {}
        self._sources: dict[Path, tuple[FileStamp, LoadedSource]] = {}
        self._modules: dict[Path, tuple[FileStamp, ModuleType]] = {}
        self._validators: dict[int, tuple[dict[str, Any], Any, Any]] = {}
        # Per site id: the same folder in earlier roots (which must stay absent, or it would
        # shadow this one), the manifest's path and stamp, and the entry. One stat per call.
        self._found: dict[str, tuple[tuple[str, ...], str, FileStamp, SiteEntry, Fresh]] = {}
        self._checked: dict[tuple[Path, str], tuple[FileStamp, LoadedSource, str, Fresh]] = {}
        # Per (site id, tool): what the last browser_source found, with the records of the
        # site and of the source, for hot_tool's one look (see there).
        self._hot: dict[tuple[str, str], tuple[SiteEntry, ToolSpec, LoadedSource, Fresh, Fresh]]
        self._hot = {}
        #: Every site folder of the roots, filed by domain (the listing of :meth:`sites`).
        self.index = DomainIndex(file_stamp)

    @property
    def workspace_root(self) -> Path | None:
        """The workspace's ``learnings/`` root (with ``roots=``: the first of several roots
        when it is no pack's), else None."""
        return self._workspace

    def origin(self, root: Path) -> Origin:
        """Where the sites of ``root`` come from: the workspace, a pack, bundled, or a folder."""
        return self._origins.get(root) or Origin("folder")

    def _entry(self, root: Path, directory: Path, stamp: FileStamp | None = None) -> SiteEntry:
        manifest_path = directory / "manifest.json"
        if stamp is None:
            stamp = file_stamp(manifest_path)
        cached = self._manifests.get(manifest_path)
        if cached is not None and cached[0] == stamp:
            entry = cached[1]
        else:
            origin = self.origin(root)
            try:
                manifest = load_manifest(directory, root=root)
                entry = SiteEntry(directory.name, root, directory, manifest, None, origin)
            except InvalidManifestError as exc:
                entry = SiteEntry(directory.name, root, directory, None, exc, origin)
            self._manifests[manifest_path] = (stamp, entry)
        pack = self._packs.get(root)
        return entry if pack is None else self._verified(pack, entry)

    def _verified(self, pack: Pack, entry: SiteEntry) -> SiteEntry:
        """``entry``, or the same site made invalid when its files differ from the pack's
        RECORD (the same object while nothing changes, which :meth:`find` relies on)."""
        problems = self.integrity.problems(pack, entry.site_id)
        if not problems:
            return entry
        kept = self._refused.get(entry.directory)
        if kept is not None and kept[0] is entry and kept[1] is problems:
            return kept[2]
        error = self.integrity.error(pack, entry.site_id, problems)
        refused = replace(entry, manifest=None, error=error)
        self._refused[entry.directory] = (entry, problems, refused)
        return refused

    def sites(self) -> list[SiteEntry]:
        """Every site in every root, valid or not, one per id, sorted by id; each says where
        it comes from and which later roots it shadows.

        The listing is the index's (:attr:`index`): fresh by change notification, like a
        tool's source; every manifest is loaded in full.
        """
        found = []
        for site in self.index.sites(self.roots):
            entry = self._entry(site.root, site.directory, site.stamp)
            later = self.roots[self.roots.index(site.root) + 1 :]
            shadows = tuple(self.origin(root) for root in later if (root / site.site_id).is_dir())
            found.append(replace(entry, shadows=shadows) if shadows else entry)
        return found

    def sites_for_url(self, url: str) -> list[tuple[SiteEntry, str]]:
        """The valid sites whose domains match ``url``, sorted by id, each with the domain
        entry that matched (the rules of :func:`~.matching.match_domain`).

        Only the sites the index names for the URL's host are loaded in full, so the cost
        grows with the sites that match, not with all sites. A site whose manifest is broken
        is left out (:meth:`sites` lists it).
        """
        target = url_host(url) if isinstance(url, str) else None
        if target is None:
            return []
        host, port = target
        found = []
        for site in self.index.candidates(self.roots, host):
            entry = self._entry(site.root, site.directory, site.stamp)
            if entry.manifest is not None:
                matched = match_host(host, port, entry.manifest.domains)
                if matched is not None:
                    found.append((entry, matched))
        return found

    def find(self, site_id: str) -> SiteEntry:
        """The site ``site_id`` from the first root that has it, valid or not.

        Raises:
            UnknownSiteError: no root has it (the message lists the roots searched), or
                ``site_id`` is not a string.
        """
        if not isinstance(site_id, str):
            raise UnknownSiteError(
                f"a site id is a string like 'x-com', not {type(site_id).__name__} {site_id!r:.80}"
            )
        hit = self._found.get(site_id)
        if hit is not None:
            shadows, manifest_path, stamp, entry, fresh = hit
            # The generation is read before the stat: a change after it moves it on again.
            now, seen = monotonic(), generation()
            if seen == fresh.generation and now < fresh.until:
                return entry
            if (
                file_stamp(manifest_path) == stamp
                and not any(map(os.path.isdir, shadows))
                and (
                    entry.root not in self._packs
                    or self._entry(entry.root, entry.directory, stamp) is entry
                )
            ):
                fresh.renew(seen, now)
                return entry
        # A whole match: a folder name with a final newline would break the tool's sourceURL.
        if is_site_id(site_id):
            for index, root in enumerate(self.roots):
                directory = root / site_id
                if directory.is_dir():
                    entry = self._entry(root, directory)
                    # _entry just stamped the manifest; a missing one is never remembered.
                    manifest_file = directory / "manifest.json"
                    stamp = self._manifests[manifest_file][0]
                    if stamp[0] != -1:
                        shadows = tuple(str(other / site_id) for other in self.roots[:index])
                        # Watched: the manifest, its folder (an atomic replace), the root (the
                        # folder renamed), where an earlier root would gain the site, and
                        # for a pack every folder of the site (any file its RECORD covers).
                        watched = watch(
                            [
                                str(manifest_file),
                                str(directory),
                                str(root),
                                *(nearest_folder(Path(shadow)) for shadow in shadows),
                                *(self.integrity.folders(directory) if root in self._packs else ()),
                            ]
                        )
                        self._found[site_id] = (
                            shadows,
                            str(manifest_file),
                            stamp,
                            entry,
                            Fresh(watched),
                        )
                    return entry
        searched = ", ".join(str(root) for root in self.roots) or "no roots"
        known = ", ".join(entry.site_id for entry in self.sites()) or "none"
        raise UnknownSiteError(
            f"no learnings site {site_id!r:.200}; searched {searched}; known sites: {known}"
        )

    def site(self, site_id: str) -> Manifest:
        """The valid manifest of ``site_id``.

        Raises:
            UnknownSiteError: no such site.
            InvalidManifestError: the site's manifest is broken.
        """
        return self.find(site_id).require()

    def tool(self, site_id: str, tool: str) -> tuple[SiteEntry, ToolSpec]:
        """The site and the declared tool ``tool`` (browser or Python). Reads no tool file.

        Raises:
            UnknownSiteError, InvalidManifestError: as :meth:`site`; the message also names
                the tool asked for.
            UnknownToolError: the manifest declares no such tool (the message lists them), or
                ``tool`` is not a string.
        """
        try:
            entry = self.find(site_id)
            manifest = entry.require()
        except UnknownSiteError as exc:
            raise UnknownSiteError(f"cannot run {site_id}/{tool}: {exc}") from None
        except InvalidManifestError as exc:
            raise type(exc)(
                f"cannot run {site_id}/{tool}: {exc}", site_id=exc.site_id, problems=exc.problems
            ) from None
        spec: ToolSpec | None = None
        if isinstance(tool, str):
            spec = manifest.browser_tools.get(tool) or manifest.python_tools.get(tool)
        if spec is None:
            declared = sorted([*manifest.browser_tools, *manifest.python_tools])
            raise UnknownToolError(
                f"site {site_id!r} declares no tool {tool!r:.200} "
                f"({entry.directory / 'manifest.json'}); declared tools: "
                f"{', '.join(declared) or 'none'}"
            )
        return entry, spec

    def check_args(self, site_id: str, spec: ToolSpec, args: Any) -> dict[str, Any]:
        """Validate ``args`` against the tool's schema and return them as a dict.

        Raises:
            InvalidArgsError: the args fail the schema (``field`` names the failing field), or
                they are not JSON (NaN, a set, ...; ``field`` is ``"(args)"``).
        """
        return self.checked_args(site_id, spec, args)[0]

    def checked_args(self, site_id: str, spec: ToolSpec, args: Any) -> tuple[dict[str, Any], str]:
        """:meth:`check_args`, also giving the args as the JSON literal a call embeds.

        Serialising the args is part of the check (what JSON cannot hold fails here), so the
        literal comes for free and the call need not build it again.

        Raises:
            InvalidArgsError: as :meth:`check_args`.
        """
        if args is None:
            args = {}
        if not isinstance(args, dict):
            raise InvalidArgsError(
                f"{site_id}/{spec.name} ({spec.path}): args must be a JSON object, "
                f"not {type(args).__name__}",
                field="(args)",
            )
        # Only the top level on the hot path, and the walk that names the key only when one
        # is not a string: a nested one fails the checks below, which then look for it.
        for key in args:
            if not isinstance(key, str):
                _refuse_key(f"{site_id}/{spec.name} ({spec.path})", args, deep=False)
        cached = self._validators.get(id(spec.args))
        # The schema object itself is kept with its validator: an id alone could be reused by
        # a new schema once a reloaded manifest frees the old one.
        try:
            if cached is None or cached[0] is not spec.args:
                cached = (spec.args, validator(spec.args), quick_check(spec.args))
                self._validators[id(spec.args)] = cached
            _, checker, quick = cached
            # The quick check settles plain valid args without jsonschema; is_valid is the
            # next cheapest; the best error is only worth building on a failure.
            if (quick is not None and quick(args)) or checker.is_valid(args):
                error = None
            else:
                error = first_error(checker, args)
        except Exception as exc:
            # A schema that loops through $ref, or args nested past the recursion limit.
            _refuse_key(f"{site_id}/{spec.name} ({spec.path})", args)
            detail = " ".join(str(exc).split())[:200]
            raise InvalidArgsError(
                f"{site_id}/{spec.name} ({spec.path}): the args could not be checked against "
                f"the schema ({type(exc).__name__}: {detail}); nothing was sent to the browser",
                field="(args)",
            ) from None
        if error is not None:
            field = failing_field(error, "(args)")
            raise InvalidArgsError(
                f"{site_id}/{spec.name} ({spec.path}): bad args at {field!r}: {error.message}"
                f"{unknown_args(spec.args, args)}; nothing was sent to the browser",
                field=field,
            )
        try:
            embedded = embed_json(args)
        except TypeError as exc:
            _refuse_key(f"{site_id}/{spec.name} ({spec.path})", args)
            raise InvalidArgsError(
                f"{site_id}/{spec.name} ({spec.path}): args are not JSON: {exc}; "
                "nothing was sent to the browser",
                field="(args)",
            ) from None
        return args, embedded

    def hot_tool(self, site_id: str, tool: str) -> tuple[SiteEntry, ToolSpec, LoadedSource] | None:
        """What :meth:`tool` and then :meth:`browser_source` would answer for a browser tool
        loaded before, with one look at the watcher: the site, the tool, its source, while
        both records are trusted without a stat and nothing watched changed since (see
        :class:`~.freshness.Fresh`). None: ask :meth:`tool` and :meth:`browser_source`,
        which look (and stat) each for itself. Raises nothing, whatever it is given."""
        try:
            hit = self._hot.get((site_id, tool))
        except TypeError:
            return None  # not a name (a list, say): the checked path says what is wrong
        if hit is None:
            return None
        entry, spec, loaded, site, source = hit
        now, seen = monotonic(), generation()
        if seen == site.generation == source.generation and now < site.until and now < source.until:
            return entry, spec, loaded
        return None

    def browser_source(
        self, site_id: str, spec: BrowserToolSpec, entry: SiteEntry | None = None
    ) -> LoadedSource:
        """Read a browser tool's file (cached by its stat stamp) and normalise it.

        ``entry`` is the site as :meth:`tool` returned it, to save looking it up again.

        Raises:
            UnsafePathError: the declared path leaves the site folder.
            ToolLoadError: the file is missing, unreadable, or empty.
        """
        if entry is None:
            entry = self.find(site_id)
        # The hot path: one stat of the declared path. It follows links, so a link switched
        # to another file changes the inode in the stamp and takes the checked path below.
        key = (entry.directory, spec.path)
        hit = self._checked.get(key)
        if hit is not None:
            fresh = hit[3]
            now, seen = monotonic(), generation()
            if seen != fresh.generation or now >= fresh.until:
                if hit[0] != file_stamp(hit[2]):
                    hit = None
                else:
                    fresh.renew(seen, now)
            if hit is not None:
                self._remember_hot(site_id, spec, entry, hit[1], fresh)
                return hit[1]
        what = f"{site_id}/{spec.name}"
        check_relative(spec.path, what=what)
        file = resolve_inside(entry.directory, spec.path, what=what)
        stamp = _stamp(file, what)
        cached = self._sources.get(file)
        declared = str(entry.directory / spec.path)
        fresh = Fresh(watch(source_watch_paths(entry.directory, spec.path, file)))
        if cached is not None and cached[0] == stamp:
            self._checked[key] = (stamp, cached[1], declared, fresh)
            return cached[1]
        try:
            text = file.read_text(encoding="utf-8")
            expression = function_expression(text)
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise ToolLoadError(f"{what}: cannot load {file}: {exc}") from None
        url = source_url(site_id, spec.path)
        loaded = LoadedSource(
            site_id, spec.name, file, url, expression, version_of(url, expression)
        )
        self._sources[file] = (stamp, loaded)
        self._checked[key] = (stamp, loaded, declared, fresh)
        return loaded

    def _remember_hot(
        self, site_id: str, spec: ToolSpec, entry: SiteEntry, loaded: LoadedSource, fresh: Fresh
    ) -> None:
        """Keep what browser_source answered for :meth:`hot_tool`, when the site's record is
        the one that made ``entry`` and ``spec`` is what its manifest declares."""
        found = self._found.get(site_id)
        if (
            found is not None
            and found[3] is entry
            and entry.manifest is not None
            and entry.manifest.browser_tools.get(spec.name) is spec
        ):
            self._hot[(site_id, spec.name)] = (entry, spec, loaded, found[4], fresh)

    def python_callable(self, site_id: str, spec: PythonToolSpec) -> Callable[..., Any]:
        """Import a Python tool's file (re-imported when it changes) and return its ``run``.

        Raises:
            UnsafePathError: the declared path leaves the site folder.
            ToolLoadError: the file is missing, fails to import, or has no callable ``run``.
        """
        entry = self.find(site_id)
        what = f"{site_id}/{spec.name}"
        file = resolve_inside(entry.directory, spec.path, what=what)
        stamp = _stamp(file, what)
        cached = self._modules.get(file)
        if cached is not None and cached[0] == stamp:
            module = cached[1]
        else:
            name = f"ego_learnings.{_identifier(site_id)}.{_identifier(spec.name)}"
            module_spec = importlib.util.spec_from_file_location(name, file)
            if module_spec is None or module_spec.loader is None:
                raise ToolLoadError(f"{what}: {file} is not a Python file")
            module = importlib.util.module_from_spec(module_spec)
            # Registered while it runs: dataclasses (and other code that looks its module up
            # in sys.modules) fail on a module that is not there.
            sys.modules[name] = module
            try:
                # Compiled from the text read now, never from a __pycache__ file: a pack's
                # files are verified, its bytecode is not, and a .pyc whose header matches
                # the source's time and size would run instead of it.
                code = compile(file.read_bytes(), str(file), "exec", dont_inherit=True)
                exec(code, module.__dict__)
            except Exception as exc:
                raise ToolLoadError(
                    f"{what}: importing {file} failed: {type(exc).__name__}: {exc}"
                ) from exc
            finally:
                sys.modules.pop(name, None)
            self._modules[file] = (stamp, module)
        run = getattr(module, "run", None)
        if not callable(run):
            raise ToolLoadError(f"{what}: {file} defines no function run(ctx, args)")
        return run  # type: ignore[no-any-return]

    def notes(self, site_id: str) -> list[Note]:
        """The site's notes, in manifest order. A note that cannot be read is skipped."""
        entry = self.find(site_id)
        manifest = entry.require()
        found = []
        for path in manifest.notes:
            try:
                file = resolve_inside(entry.directory, path, what=f"{site_id} note")
                text = file.read_text(encoding="utf-8")
            except (UnsafePathError, OSError, UnicodeDecodeError):
                continue
            found.append(Note(site_id, path, _title(text, path), text))
        return found


def version_of(url: str, expression: str) -> str:
    """A browser tool's version hash (:attr:`LoadedSource.version`): of what runs and where it
    says it comes from, so it changes exactly when the code sent to the page changes."""
    return hashlib.sha256((url + "\n" + expression).encode()).hexdigest()[:16]


def _stamp(file: Path, what: str) -> FileStamp:
    stamp = file_stamp(file)
    if stamp[0] == -1:
        raise ToolLoadError(f"{what}: the tool file {file} does not exist")
    return stamp


def _identifier(text: str) -> str:
    return re.sub(r"\W", "_", text)


def _title(text: str, path: str) -> str:
    for line in text.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return Path(path).stem.replace("-", " ").replace("_", " ")
