"""The limits an operator sets on ``ego mcp``: where its pages may go, which files its tools may
read and write (held by :mod:`.files`), which tools it serves, how much memory a page's
script may take, how many tabs an HTTP session may open, and how large a storage state it
reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

from ..page.policy import NavigationPolicy
from ..page.storage_state import (
    MAX_STATE_BYTES,
    MAX_STATE_ITEMS,
    StateSource,
    StorageState,
    read_storage_state,
)
from ..trace.options import TraceOptions

__all__ = ["GROUPS", "MAX_TABS", "SITE_TOOLS", "ServerLimits", "SiteTools", "ToolGroup"]

ToolGroup = Literal["learnings", "pages", "input", "network", "saving"]

#: Which sites' own tools ``tools/list`` holds (``--site-tools``): every site's, those of the
#: sites on the current tab's origin, or none (``run_browser_tool`` runs them all the same).
SiteTools = Literal["all", "matching", "none"]
SITE_TOOLS: Final[tuple[SiteTools, ...]] = ("all", "matching", "none")

#: The tool groups ``--tools`` chooses from, and what each holds (docs/mcp.md lists them).
GROUPS: Final[tuple[ToolGroup, ...]] = ("learnings", "pages", "input", "network", "saving")

#: The most tabs one session of ``ego mcp --http`` may have open at once (``--max-tabs``).
MAX_TABS: Final = 20


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
        file_roots: more folders its tools may read and write (``--file-root``), for every
            session alike.
        client_roots_are_server_paths: over HTTP, the roots a client declares are folders of
            this machine too (over stdio they always are; see :mod:`.files`).
        unrestricted_files: any path may be read or written.
        read_only: serve navigation, the reading tools and read-only site tools only; no
            ``javascript:`` or ``data:`` URL is opened, and no reload sends a form again.
        groups: the tool groups served.
        start_urls: where a site's tools open a tab, by site id.
        site_tools: which sites' own tools are listed (:data:`SiteTools`).
        max_js_heap_mb: the JavaScript heap each renderer of a Chrome the server starts may
            take, in MB (None: Chrome's own limit).
        max_tabs: the most tabs an HTTP session may have open at once.
        max_storage_state_bytes, max_storage_state_items: the largest storage-state file
            (``--storage-state``, ``load_storage_state``) read, and the most items it may hold.
        trace_tools: serve ``start_trace`` and ``stop_trace`` (off by default, as
            playwright-mcp's tracing tools are: a trace holds a screenshot of every step, and
            the two definitions stay out of an agent's context unless the operator wants
            them).
        trace_options: the bounds of the traces its agents start (``start_trace``) and of
            those it keeps of failures.
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
    max_js_heap_mb: int | None = None
    file_roots: tuple[Path, ...] = ()
    client_roots_are_server_paths: bool = False
    max_tabs: int = MAX_TABS
    max_storage_state_bytes: int = MAX_STATE_BYTES
    max_storage_state_items: int = MAX_STATE_ITEMS
    trace_tools: bool = False
    trace_options: TraceOptions = field(default_factory=TraceOptions)

    def check(self) -> None:
        """Refuse limits that could not hold, before anything starts.

        Raises:
            ValueError: an origin pattern is malformed, or would never match what it seems to
                name; a file root is not a folder; a bound is not positive.
        """
        NavigationPolicy.of(
            self.allowed_origins,
            self.blocked_origins,
            allow_local=self.allow_file_urls,
            allow_script_urls=not self.read_only,
        )
        for root in self.file_roots:
            if not root.expanduser().is_dir():
                raise ValueError(f"the file root {root} is not a folder: give an existing one")
        bounds = (self.max_tabs, self.max_storage_state_bytes, self.max_storage_state_items)
        if min(bounds) < 1:
            raise ValueError("max_tabs and the storage state bounds must be at least 1")

    def read_storage_state(self, source: StateSource) -> StorageState:
        """A storage state read within these limits' bounds.

        Raises:
            StorageStateTooLargeError: the file is over a bound (nothing of it was parsed).
            StorageStateError: it is not a storage state.
        """
        return read_storage_state(
            source,
            max_bytes=self.max_storage_state_bytes,
            max_items=self.max_storage_state_items,
        )

    @property
    def policy(self) -> NavigationPolicy:
        """The navigation policy these limits make.

        Raises:
            ValueError: an origin pattern is malformed, or would never match what it seems
                to name (the message quotes it and says why).
        """
        return NavigationPolicy.of(
            self.allowed_origins,
            self.blocked_origins,
            allow_local=self.allow_file_urls,
            allow_script_urls=not self.read_only,
        )
