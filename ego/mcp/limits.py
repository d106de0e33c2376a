"""The limits an operator sets on ``ego mcp``: where its pages may go, which files its tools may
read and write (held by :mod:`.files`), which tools it serves, and how much memory a page's
script may take.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

from ..page.policy import NavigationPolicy
from ..trace.options import TraceOptions

__all__ = ["GROUPS", "SITE_TOOLS", "ServerLimits", "SiteTools", "ToolGroup"]

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
        read_only: serve navigation, the reading tools and read-only site tools only; no
            ``javascript:`` or ``data:`` URL is opened, and no reload sends a form again.
        groups: the tool groups served.
        start_urls: where a site's tools open a tab, by site id.
        site_tools: which sites' own tools are listed (:data:`SiteTools`).
        max_js_heap_mb: the JavaScript heap each renderer of a Chrome the server starts may
            take, in MB (None: Chrome's own limit).
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
    trace_options: TraceOptions = field(default_factory=TraceOptions)

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
