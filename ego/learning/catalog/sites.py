"""Finding sites in the learnings roots: the workspace's, each installed pack's, the project's."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from time import monotonic

from ...errors import InvalidManifestError, UnknownSiteError, UnknownToolError
from ...places import WORKSPACE_ENV, bundled_root, expand, state_dir
from ...protocol.gc_pause import gc_paused
from .checked import CHECKED_NAME, CheckedManifests
from .freshness import FileStamp, Fresh, file_stamp, nearest_folder
from .index import DomainIndex
from .manifest import CHECKS, Manifest, ManifestRead, ToolSpec, is_site_id, load_manifest
from .matching import match_host, url_host
from .packs import Integrity, Origin, Pack, installed_packs
from .watch import generation, watch

__all__ = ["SiteEntry", "SiteFinder", "project_learnings_dir"]


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


class SiteFinder:
    """The learnings roots and the sites in them: the base of
    :class:`~.registry.Learnings`, which documents the arguments and the search order.

    A site found is remembered with its manifest's stamp and trusted, while nothing watched
    changed, without a stat (:meth:`find`); the listing (:meth:`sites`) is the domain index's.
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
        # Per site id: the same folder in earlier roots (which must stay absent, or it would
        # shadow this one), the manifest's path and stamp, and the entry. One stat per call.
        self._found: dict[str, tuple[tuple[str, ...], str, FileStamp, SiteEntry, Fresh]] = {}
        #: Every site folder of the roots, filed by domain (the listing of :meth:`sites`).
        self.index = DomainIndex(file_stamp)
        #: The manifests that passed their schema checks, in this process or an earlier one:
        #: a manifest whose bytes passed is read without checking its schemas again.
        self.checked_manifests = CheckedManifests(state_dir() / CHECKED_NAME, CHECKS)

    @property
    def workspace_root(self) -> Path | None:
        """The workspace's ``learnings/`` root (with ``roots=``: the first of several roots
        when it is no pack's), else None."""
        return self._workspace

    def origin(self, root: Path) -> Origin:
        """Where the sites of ``root`` come from: the workspace, a pack, bundled, or a folder."""
        return self._origins.get(root) or Origin("folder")

    def _entry(
        self,
        root: Path,
        directory: Path,
        stamp: FileStamp | None = None,
        read: ManifestRead | None = None,
    ) -> SiteEntry:
        manifest_path = directory / "manifest.json"
        if stamp is None:
            stamp = file_stamp(manifest_path)
        cached = self._manifests.get(manifest_path)
        if cached is not None and cached[0] == stamp:
            entry = cached[1]
        else:
            origin = self.origin(root)
            try:
                manifest = load_manifest(
                    directory, root=root, checked=self.checked_manifests, read=read
                )
                entry = SiteEntry(directory.name, root, directory, manifest, None, origin)
            except InvalidManifestError as exc:
                entry = SiteEntry(directory.name, root, directory, None, _kept(exc), origin)
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
        tool's source; every manifest is loaded in full, from the bytes the index read.
        """
        found = []
        # Each root's folders, listed once: a look per site and root would stat them all.
        folders = {root: _folders(root) for root in self.roots[1:]}
        # Tens of thousands of lasting objects and no cycle among them (protocol/gc_pause.py).
        with gc_paused(lasting=True):
            for site in self.index.sites(self.roots):
                entry = self._entry(site.root, site.directory, site.stamp, self.index.take(site))
                later = self.roots[self.roots.index(site.root) + 1 :]
                shadows = tuple(
                    self.origin(root) for root in later if site.site_id in folders[root]
                )
                found.append(replace(entry, shadows=shadows) if shadows else entry)
        self.index.forget_reads()
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
            entry = self._entry(site.root, site.directory, site.stamp, self.index.take(site))
            if entry.manifest is not None:
                matched = match_host(host, port, entry.manifest.domains)
                if matched is not None:
                    found.append((entry, matched))
        self.index.forget_reads()
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


def _kept(error: InvalidManifestError) -> InvalidManifestError:
    """``error`` as an entry keeps it: without the traceback of where it was raised, whose
    frames hold this finder (a cycle that keeps every manifest alive until a full collection)
    and what the load had read. ``require`` raises it with a traceback of its own."""
    error.__traceback__ = None
    if error.__suppress_context__:  # raised "from None": the context is never shown
        error.__context__ = None
    return error


def _folders(root: Path) -> set[str]:
    """The names of the folders in ``root`` (links to folders included); none when it cannot
    be listed."""
    names = set()
    try:
        with os.scandir(root) as listing:
            for child in listing:
                try:
                    if child.is_dir():
                        names.add(child.name)
                except OSError:
                    continue
    except OSError:
        pass
    return names
