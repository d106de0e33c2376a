"""The limits an operator sets on ``ego mcp``: where its pages may go, which files its tools may
read and write, and which tools it serves.

Files: every path an MCP tool writes or reads (a screenshot's or PDF's ``path``,
``upload_file``'s ``paths``, a SKILL.md to import, the downloads folder) must lie inside the
client's MCP roots or the server's output folder (``--output-dir``, by default a folder ego
makes for each server under its state folder). A relative path resolves inside the output
folder; a path is resolved with its links before it is checked, so a link cannot lead out; a
file is written only where no file is, or over one this server wrote. ``--allow-unrestricted-
file-access`` lifts all of it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal
from urllib.parse import unquote, urlsplit

from ..errors import FileAccessError
from ..page.policy import NavigationPolicy

__all__ = ["GROUPS", "SITE_TOOLS", "FileAccess", "ServerLimits", "SiteTools", "ToolGroup"]

ToolGroup = Literal["learnings", "pages", "input", "network", "saving"]

#: Which sites' own tools ``tools/list`` holds (``--site-tools``): every site's, those of the
#: sites on the current tab's origin, or none (``run_browser_tool`` runs them all the same).
SiteTools = Literal["all", "matching", "none"]
SITE_TOOLS: Final[tuple[SiteTools, ...]] = ("all", "matching", "none")

#: The tool groups ``--tools`` chooses from, and what each holds (docs/mcp.md lists them).
GROUPS: Final[tuple[ToolGroup, ...]] = ("learnings", "pages", "input", "network", "saving")


@dataclass(frozen=True)
class ServerLimits:
    """What ``ego mcp`` lets an agent reach.

    Attributes:
        allowed_origins: when not empty, the origin patterns its pages (every frame) may load
            documents from (see :mod:`ego.page.policy`).
        blocked_origins: origin patterns refused even when allowed.
        allow_file_urls: whether ``file:``, ``chrome:``, ``devtools:`` and ``view-source:``
            URLs may be opened.
        output_dir: the folder its tools write into (and may read from); None: a folder of
            its own under ego's state folder.
        unrestricted_files: any path may be read or written.
        read_only: serve navigation, the reading tools and read-only site tools only.
        groups: the tool groups served.
        start_urls: where a site's tools open a tab, by site id.
        site_tools: which sites' own tools are listed (:data:`SiteTools`).
    """

    allowed_origins: tuple[str, ...] = ()
    blocked_origins: tuple[str, ...] = ()
    allow_file_urls: bool = False
    output_dir: Path | None = None
    unrestricted_files: bool = False
    read_only: bool = False
    groups: frozenset[ToolGroup] = frozenset(GROUPS)
    start_urls: tuple[tuple[str, str], ...] = ()
    site_tools: SiteTools = "all"

    @property
    def policy(self) -> NavigationPolicy:
        """The navigation policy these limits make.

        Raises:
            ValueError: an origin pattern is malformed.
        """
        return NavigationPolicy.of(
            self.allowed_origins, self.blocked_origins, allow_local=self.allow_file_urls
        )


class FileAccess:
    """Resolves the paths MCP tools are given against the allowed folders.

    Args:
        output_dir: the server's own folder (made when missing).
        unrestricted: allow any path.
    """

    def __init__(self, output_dir: Path, *, unrestricted: bool = False) -> None:
        self.output_dir = output_dir
        self.unrestricted = unrestricted
        self._roots: list[Path] = []
        self._written: set[Path] = set()

    def set_client_roots(self, uris: Sequence[str]) -> None:
        """The ``file://`` roots the client declared (other schemes are ignored); the server
        asks for them (:func:`.sdk.client_roots`) before a tool that reads or writes a file."""
        roots = []
        for uri in uris:
            parts = urlsplit(uri)
            if parts.scheme == "file" and parts.path:
                roots.append(Path(unquote(parts.path)).resolve())
        self._roots = roots

    @property
    def roots(self) -> list[Path]:
        """Where files may be: the client's roots, then the output folder."""
        return [*self._roots, self.output_dir.resolve()]

    def _resolve(self, path: str | os.PathLike[str], what: str) -> Path:
        given = Path(path).expanduser()
        if not given.is_absolute():
            given = self.output_dir / given
        # resolve() follows every link that exists, so a link cannot lead out unseen.
        resolved = given.resolve()
        if self.unrestricted:
            return resolved
        if not any(resolved.is_relative_to(root) for root in self.roots):
            allowed = ", ".join(str(root) for root in self.roots)
            raise FileAccessError(
                f"{what} {os.fspath(path)!r} is outside the folders this server may use "
                f"({allowed}): give a path inside one (a relative path lands in "
                f"{self.output_dir})",
                path=str(resolved),
            )
        return resolved

    def for_writing(self, path: str | os.PathLike[str]) -> Path:
        """Where to write ``path``: inside the allowed folders, and not over a file this
        server did not write.

        Raises:
            FileAccessError: outside the folders, or a file that is not this server's.
        """
        resolved = self._resolve(path, "the path")
        if not self.unrestricted and resolved.exists() and resolved not in self._written:
            raise FileAccessError(
                f"{os.fspath(path)!r} exists and this server did not write it: give a new "
                "name (an existing file is never overwritten)",
                path=str(resolved),
            )
        resolved.parent.mkdir(parents=True, exist_ok=True)
        self._written.add(resolved)
        return resolved

    def for_reading(self, path: str | os.PathLike[str]) -> Path:
        """``path`` resolved, when it lies inside the allowed folders.

        Raises:
            FileAccessError: it does not.
        """
        return self._resolve(path, "the file")
