"""The domain index: which sites' domains can match a host, without loading every manifest.

``learn_context(url)`` needs only the sites whose domains match the URL. The index reads
just the ``domains`` of each manifest (a JSON parse, no schema check, no pydantic) and files
every entry by its exact host or its wildcard's domain, so a lookup costs a few dict reads
however many sites are installed; only the candidates it answers are loaded in full.

It is kept fresh the way the tool sources are (:mod:`.watch`): the roots and every site
folder are watched, and the index is trusted without a stat while the watcher's generation
stands still, for at most :data:`~.watch.REVALIDATE_SECONDS`. Otherwise (a change, the
bound passed, no inotify) the next lookup rescans: one directory listing per root and one
stat per manifest; only a manifest whose stamp changed is read again. (A folder's watch sees
its files change; a manifest that links to a file elsewhere is seen by the bound.)

What a rescan read is kept until the next one, for the loader to take
(:meth:`DomainIndex.take`): a listing, which loads every manifest in full right after, reads
and parses each once.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from time import monotonic
from typing import Any

from .manifest import MAX_MANIFEST_BYTES, ManifestRead, parse_json
from .matching import host_suffixes, index_keys
from .watch import REVALIDATE_SECONDS, generation, watch
from .watch import epoch as watcher_epoch

__all__ = ["DomainIndex", "IndexedSite", "read_domains", "read_raw"]

Stamp = tuple[int, int, int, int]


@dataclass(frozen=True)
class IndexedSite:
    """A site folder as the index knows it: where it is and the domains its manifest lists.

    ``stamp`` is the manifest's stamp when ``domains`` were read; ``domains`` is empty when
    the manifest is missing or unreadable (such a site is invalid and never matches).
    """

    site_id: str
    root: Path
    directory: Path
    stamp: Stamp
    domains: tuple[str, ...]


def read_raw(manifest_file: str) -> dict[str, Any] | None:
    """A manifest's JSON object, read cheaply (a parse, no schema check, no models); None
    when it cannot be read, is not JSON, is past the size limit or is not an object."""
    read = _read(manifest_file)
    return read[1] if read is not None else None


def _read(manifest_file: str) -> tuple[bytes, dict[str, Any], bool] | None:
    """A manifest's bytes, its JSON object, and whether that is the loader's parse
    (:func:`~.manifest.parse_json`: not when the object holds ``NaN`` or ``Infinity``, which
    only the plain parse reads); None as :func:`read_raw`."""
    try:
        with open(manifest_file, "rb") as file:
            # Read by its size: a read of the largest allowed size would allocate 1 MiB for
            # every manifest. A file that grows meanwhile is caught by the length check.
            size = os.fstat(file.fileno()).st_size
            data = file.read(min(size, MAX_MANIFEST_BYTES) + 1)
    except OSError:
        return None
    if len(data) > MAX_MANIFEST_BYTES:
        return None
    loaders = True
    try:
        raw = parse_json(data)
    except (ValueError, RecursionError):  # ValueError covers bad UTF-8 and JSON
        loaders = False
        try:
            raw = json.loads(data.decode("utf-8"))
        except (ValueError, RecursionError):
            return None
    return (data, raw, loaders) if isinstance(raw, dict) else None


def read_domains(manifest_file: str) -> tuple[str, ...]:
    """The ``domains`` a manifest lists, read cheaply; empty when they cannot be read.

    A manifest that loads is parsed exactly like this before its checks, so its validated
    ``domains`` are these: the index may answer sites that then fail to load (skipped), but
    never misses one that loads.
    """
    return _domains(read_raw(manifest_file))


def _domains(raw: dict[str, Any] | None) -> tuple[str, ...]:
    domains = raw.get("domains") if raw is not None else None
    if not isinstance(domains, list):
        return ()
    return tuple(entry for entry in domains if isinstance(entry, str))


class DomainIndex:
    """The sites of a list of roots, filed by the hosts their domains can match.

    Args:
        stamp: what tells a changed manifest from an unchanged one (the registry's
            :func:`~.registry.file_stamp`); ``(-1, -1, -1, -1)`` for a missing file.
    """

    def __init__(self, stamp: Callable[[str], Stamp]) -> None:
        self._stamp = stamp
        self._roots: tuple[Path, ...] = ()
        self._sites: dict[str, IndexedSite] = {}
        self._exact: dict[str, list[IndexedSite]] = {}
        self._suffix: dict[str, list[IndexedSite]] = {}
        # Trusted while the watcher (of this epoch) stays at this generation, until `until`.
        self._epoch = -1
        self._generation = -2
        self._until = 0.0
        #: How many manifests the index has read (for tests and the benchmark).
        self.reads = 0
        # What the last rescan read, by site id, until the loader takes it (see take).
        self._read: dict[str, ManifestRead] = {}

    def sites(self, roots: Sequence[Path]) -> list[IndexedSite]:
        """Every site folder of ``roots``, one per id (from the first root), sorted by id.

        Folders whose name starts with ``_`` or ``.`` are skipped; so is anything that is
        not a folder.

        Args:
            roots: the learnings roots, in order.
        """
        self._refresh(tuple(roots))
        return [self._sites[site_id] for site_id in sorted(self._sites)]

    def candidates(self, roots: Sequence[Path], host: str) -> list[IndexedSite]:
        """The sites, sorted by id, with a domain entry that ``host`` may match.

        ``host`` is normalised (see :func:`~.matching.url_host`); the port, and whether the
        site loads at all, are for the caller to check.

        Args:
            roots: the learnings roots, in order (a site id is taken from the first).
            host: the URL's host.
        """
        self._refresh(tuple(roots))
        found = {site.site_id: site for site in self._exact.get(host, ())}
        for suffix in host_suffixes(host):
            for site in self._suffix.get(suffix, ()):
                found[site.site_id] = site
        return [found[site_id] for site_id in sorted(found)]

    def take(self, site: IndexedSite) -> ManifestRead | None:
        """The manifest of ``site`` as the last rescan read it, once (the next call answers
        None): so that loading it reads and parses it no more. None when it was not read
        then, or not as the loader parses it.

        Args:
            site: a site the index answered.
        """
        read = self._read.pop(site.site_id, None)
        return read if read is not None and read.stamp == site.stamp else None

    def forget_reads(self) -> None:
        """Drop what the last rescan read and no loader took (the manifests of a lookup's
        other sites): the index keeps only the domains."""
        self._read.clear()

    def _refresh(self, roots: tuple[Path, ...]) -> None:
        # The generation is read before the scan: a change during it moves it on again.
        now, seen = monotonic(), generation()
        if (
            roots == self._roots
            and seen == self._generation
            and now < self._until
            and self._epoch == watcher_epoch()
        ):
            return
        self._rescan(roots, seen, now)

    def _rescan(self, roots: tuple[Path, ...], seen: int, now: float) -> None:
        # Everything is watched before it is read, so a change after the read is an event
        # (the generation moves on) and a change before it is what the read finds.
        current = watcher_epoch()
        rewatch = self._epoch < 0 or self._epoch != current  # a new watcher watches nothing
        watched = watch([_nearest_folder(root) for root in roots])
        self._read.clear()
        chosen: dict[str, IndexedSite] = {}
        changed = roots != self._roots
        for root in roots:
            try:
                listing = os.scandir(root)
            except OSError:
                continue
            with listing:
                for child in listing:
                    name = child.name
                    if name.startswith(("_", ".")) or name in chosen:
                        continue
                    try:
                        if not child.is_dir():  # follows a symlinked site folder
                            continue
                    except OSError:
                        continue
                    # Once a watch failed (the user's limit reached), the index is rescanned
                    # on every lookup anyway: the rest are not tried.
                    site, epoch = self._site(root, name, child.path, rewatch, watched >= 0)
                    watched = min(watched, epoch)
                    changed = changed or site is not self._sites.get(name)
                    chosen[name] = site
        if changed or len(chosen) != len(self._sites):
            self._file(chosen)
        self._roots = roots
        # A path that could not be watched leaves the index untrusted (rescanned every
        # lookup), and every path is watched again on the next rescan.
        self._epoch = watched
        if watched >= 0 and seen >= 0 and self._epoch == watcher_epoch():
            self._generation, self._until = seen, now + REVALIDATE_SECONDS
        else:
            self._generation, self._until = -2, 0.0

    def _site(
        self, root: Path, name: str, path: str, rewatch: bool, can_watch: bool
    ) -> tuple[IndexedSite, int]:
        """The site in ``path``, re-read when its manifest changed, and the watch epoch
        (-1: it is not watched)."""
        manifest_file = os.path.join(path, "manifest.json")
        known = self._sites.get(name)
        if known is not None and known.root != root:
            known = None
        epoch = watcher_epoch() if can_watch else -1
        if can_watch and (known is None or rewatch):
            epoch = watch([path])
        stamp = self._stamp(manifest_file)
        if known is not None and known.stamp == stamp:
            return known, epoch
        if can_watch and known is not None and not rewatch:
            # The folder may have been made again (a new inode no watch follows): watching
            # it again costs nothing when it is the same folder.
            epoch = watch([path])
            stamp = self._stamp(manifest_file)
        domains: tuple[str, ...] = ()
        if stamp[0] != -1:
            self.reads += 1
            read = _read(manifest_file)
            if read is not None:
                data, raw, loaders = read
                domains = _domains(raw)
                if loaders:
                    self._read[name] = ManifestRead(stamp, data, raw)
        return IndexedSite(name, root, root / name, stamp, domains), epoch

    def _file(self, sites: dict[str, IndexedSite]) -> None:
        exact: dict[str, list[IndexedSite]] = {}
        suffix: dict[str, list[IndexedSite]] = {}
        for site in sites.values():
            for entry in site.domains:
                kind, key = index_keys(entry)
                (exact if kind == "exact" else suffix).setdefault(key, []).append(site)
        self._sites, self._exact, self._suffix = sites, exact, suffix


def _nearest_folder(path: Path) -> str:
    """``path`` if it is a folder, else its nearest ancestor that is (where it would appear)."""
    for candidate in (path, *path.parents):
        if candidate.is_dir():
            return str(candidate)
    return str(path.anchor or ".")
