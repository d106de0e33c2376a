"""Loading what a site declares: a browser tool's source, a Python tool's ``run``, its notes."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from time import monotonic
from types import ModuleType
from typing import Any

from ...errors import ToolLoadError, UnsafePathError
from .freshness import FileStamp, Fresh, file_stamp, source_watch_paths
from .jslint import function_expression
from .manifest import BrowserToolSpec, PythonToolSpec, ToolSpec
from .packs import Pack
from .paths import check_relative, resolve_inside
from .sites import SiteEntry, SiteFinder
from .tool_source import source_url
from .watch import generation, watch

__all__ = ["LoadedSource", "Note", "ToolLoader", "version_of"]


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


class ToolLoader(SiteFinder):
    """Loading the tools and notes of the sites found: the base of
    :class:`~.registry.Learnings`, which documents it.

    A tool's source and a Python tool's module are kept with their file's stamp and read again
    when it changes; a browser tool called before is answered with one look at the watcher
    (:meth:`hot_tool`).
    """

    def __init__(
        self,
        *,
        workspace: str | os.PathLike[str] | None = None,
        project: str | os.PathLike[str] | None = None,
        roots: Sequence[str | os.PathLike[str]] | None = None,
        packs: Sequence[Pack] | None = None,
    ) -> None:
        super().__init__(workspace=workspace, project=project, roots=roots, packs=packs)
        self._sources: dict[Path, tuple[FileStamp, LoadedSource]] = {}
        self._modules: dict[Path, tuple[FileStamp, ModuleType]] = {}
        self._checked: dict[tuple[Path, str], tuple[FileStamp, LoadedSource, str, Fresh]] = {}
        # Per (site id, tool): what the last browser_source found, with the records of the
        # site and of the source, for hot_tool's one look (see there).
        self._hot: dict[tuple[str, str], tuple[SiteEntry, ToolSpec, LoadedSource, Fresh, Fresh]]
        self._hot = {}

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
            module = compile_tool_module(
                "ego_learnings", site_id, spec.name, file, file.read_bytes()
            )
            self._modules[file] = (stamp, module)
        return run_of(module, what, file)

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


def compile_tool_module(
    package: str, site_id: str, tool: str, file: Path, source: str | bytes
) -> ModuleType:
    """A Python tool's module, run from ``source`` as the file ``file`` (so an error names it)
    under the module name ``package.<site>.<tool>``.

    Raises:
        ToolLoadError: it is no Python file, or running it failed.
    """
    what = f"{site_id}/{tool}"
    name = f"{package}.{_identifier(site_id)}.{_identifier(tool)}"
    module_spec = importlib.util.spec_from_file_location(name, file)
    if module_spec is None or module_spec.loader is None:
        raise ToolLoadError(f"{what}: {file} is not a Python file")
    module = importlib.util.module_from_spec(module_spec)
    # Registered while it runs: dataclasses (and other code that looks its module up in
    # sys.modules) fail on a module that is not there.
    sys.modules[name] = module
    try:
        # Compiled from the text given, never from a __pycache__ file: a pack's files are
        # verified, its bytecode is not, and a .pyc whose header matches the source's time
        # and size would run instead of it.
        code = compile(source, str(file), "exec", dont_inherit=True)
        exec(code, module.__dict__)
    except Exception as exc:
        failed = f"{type(exc).__name__}: {exc}"
        raise ToolLoadError(f"{what}: importing {file} failed: {failed}") from exc
    finally:
        sys.modules.pop(name, None)
    return module


def run_of(module: ModuleType, what: str, file: Path) -> Callable[..., Any]:
    """The ``run`` a Python tool's module defines.

    Raises:
        ToolLoadError: it defines none.
    """
    run = getattr(module, "run", None)
    if not callable(run):
        raise ToolLoadError(f"{what}: {file} defines no function run(ctx, args)")
    return run  # type: ignore[no-any-return]


def _identifier(text: str) -> str:
    return re.sub(r"\W", "_", text)


def _title(text: str, path: str) -> str:
    for line in text.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return Path(path).stem.replace("-", " ").replace("_", " ")
