"""The learnings roots as one object: finding sites, loading what they declare, checking args.

Each job is a module of its own: :mod:`.sites` finds the sites in the roots,
:mod:`.loading` reads a tool's source, imports a Python tool and reads notes, :mod:`.args`
checks a call's args against its tool's schema. :class:`Learnings` is the three together.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from ...places import WORKSPACE_ENV
from .args import ArgsChecker
from .freshness import FileStamp, file_stamp
from .loading import LoadedSource, Note, ToolLoader, version_of
from .manifest import MAX_SITE_ID
from .packs import Pack
from .sites import SiteEntry, project_learnings_dir

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


class Learnings(ToolLoader, ArgsChecker):
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

    Finding sites (:meth:`find`, :meth:`tool`, :meth:`sites`, :meth:`sites_for_url`) comes
    from :class:`~.sites.SiteFinder`; loading tools and notes (:meth:`browser_source`,
    :meth:`hot_tool`, :meth:`python_callable`, :meth:`notes`) from
    :class:`~.loading.ToolLoader`; checking args (:meth:`check_args`, :meth:`checked_args`)
    from :class:`~.args.ArgsChecker`.

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
        ToolLoader.__init__(self, workspace=workspace, project=project, roots=roots, packs=packs)
        ArgsChecker.__init__(self)
