"""The facade agent scripts use: ``learn_context``, ``run_browser_tool``, ``run_tool``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from time import perf_counter
from typing import TYPE_CHECKING, Any, Literal, overload

from ..calls import DEFAULTS, CallOptions, prepare
from ..errors import ConfirmationRequiredError, UnknownSiteError, UnknownSkillError
from ..learning.health.recorder import record_as
from .loop import Loop

if TYPE_CHECKING:
    # Skills and learn_context's models are imported where they are used: a tool call (and a
    # command that makes one) does not pay for them.
    from ..learning.catalog.registry import Learnings
    from ..learning.describe.compact import CompactContext
    from ..learning.describe.context import LearnContext, NoteInfo, SiteSummary, ToolInfo
    from ..page.browser import TabHost
    from ..page.tab import Tab
    from ..skills import SkillSummary

__all__ = ["Detail", "Site", "ToolContext", "context_for", "describe_tool"]

#: How much ``learn_context`` says: a few lines per site (``compact``), or everything.
Detail = Literal["compact", "full"]


@dataclass
class ToolContext:
    """What a Python-side tool's ``run(ctx, args)`` receives.

    Attributes:
        site: the facade, to call other tools (``await ctx.site.run_browser_tool(...)``).
        browser: the browser.
        tab: the tab the call runs in (a tab on the site: given, found or opened).
        site_id: the id of the tool's site.
        tool: the tool's name.
    """

    site: Site
    browser: TabHost
    tab: Tab
    site_id: str
    tool: str


class Site(Loop):
    """Learnings on a browser: discover tools for a URL, run them in the right tab.

    Every check happens before anything reaches the browser: the site must exist and be
    valid, the tool must be declared (no file is read otherwise), its path must stay in the
    site folder, and the args must fit the tool's schema.

    Available as ``browser.site`` on a browser from :func:`ego.launch` or :func:`ego.connect`,
    and as ``ctx.site`` inside a Python-side tool.

    Its methods come in layers, one module each: where a call runs
    (:class:`~ego.site.placement.Placement`), the call path
    (:class:`~ego.site.running.Running`), keeping tools and notes
    (:class:`~ego.site.saving.Saving`), keeping drafted tools and healing broken ones
    (:class:`~ego.site.loop.Loop`), and the front door here.

    Args:
        browser: the browser to run tools in.
        learnings: where sites are found; by default the workspace's ``learnings/`` (from
            ``$EGO_WORKSPACE``) then the project's.
    """

    def _tool_context(self, tab: Tab, site_id: str, tool: str) -> ToolContext:
        return ToolContext(self, self.browser, tab, site_id, tool)

    def sites(self) -> list[SiteSummary]:
        """Every site in the learnings roots, valid or not (invalid ones list their problems),
        each with the health of its tools that have recorded runs."""
        from ..learning.describe.context import summarize_site
        from ..learning.health.view import ran_tools

        ran = ran_tools()
        return [summarize_site(entry, self.learnings, ran) for entry in self.learnings.sites()]

    @overload
    async def learn_context(self, url: str, detail: Literal["compact"] = ...) -> CompactContext: ...

    @overload
    async def learn_context(self, url: str, detail: Literal["full"]) -> LearnContext: ...

    async def learn_context(
        self, url: str, detail: Detail = "compact"
    ) -> CompactContext | LearnContext:
        """What the learnings offer for ``url``: matching sites, their tools and notes.

        By default in a few lines (:mod:`ego.learning.describe.compact`): per site its name,
        start URL and one line; per tool its one-line description, args signature with an
        example, side effect, auth and one word of health; per note its title and first
        paragraph.
        ``detail="full"`` gives everything: each tool's whole description, args and returns
        schemas, example call and health record, and the notes in full. Sites with a broken
        manifest are left out (see :meth:`sites`). Reads only local files; the browser is not
        involved. A site's start URL is where this facade opens its tools: the one
        :meth:`set_start_url` set, else its manifest's.

        Args:
            url: the page.
            detail: ``"compact"`` or ``"full"``.

        Raises:
            ValueError: ``detail`` is neither.
        """
        context = context_for(self.learnings, url, self.start_urls())
        if detail == "full":
            return context
        if detail != "compact":
            raise ValueError(f"detail must be 'compact' or 'full', not {detail!r}")
        from ..learning.describe.compact import compact

        return compact(context)

    def describe_tool(self, site_id: str, tool: str) -> ToolInfo:
        """One tool in full: description, args and returns schemas, side effect, auth, an
        example call and its health record. A skill is named by its domain and task
        (``describe_tool("shop.localhost", "search-products")``).

        Raises:
            UnknownSiteError: no site (nor skill domain) of that name.
            InvalidManifestError: the site's manifest is broken.
            UnknownToolError: the site declares no such tool (the message lists them).
            UnknownSkillError, InvalidSkillError: the skill asked for is missing or broken.
        """
        return describe_tool(self.learnings, site_id, tool)

    def read_note(self, site_id: str, note: str) -> NoteInfo:
        """One of a site's notes in full, named by its path (``notes/api.md``), file name
        (``api.md`` or ``api``) or title.

        Raises:
            UnknownSiteError, InvalidManifestError: no such usable site.
            UnknownNoteError: the site has no such note (the message lists its notes).
        """
        from ..learning.describe.context import read_note

        return read_note(self.learnings, site_id, note)

    async def run_browser_tool(
        self,
        site_id: str,
        tool: str,
        args: dict[str, Any] | None = None,
        *,
        tab: Tab | None = None,
        timeout: float | None = None,
        confirm: bool = False,
        check_returns: bool = False,
        cache: bool = True,
    ) -> Any:
        """Run a browser tool in the page and return its JSON result.

        The tool's source is cached in the site's localStorage: a run sends the small Call
        snippet and only sends the full source when the cache misses (see :mod:`ego.runtime.cache`).
        :attr:`last_run`, read in the same task after the call, tells what the run did.

        Args:
            site_id: the site's id (its folder name).
            tool: a browser tool the manifest declares.
            args: the tool's args; checked against its schema first.
            tab: where to run; by default a matching open tab, else a new one at the start URL.
            timeout: seconds the tool may run (the manifest's ``timeout``, else the tab's).
            confirm: must be True for a tool whose side effect is ``irreversible``.
            check_returns: validate the result against the manifest's ``returns`` schema.
            cache: False runs the plain wrap and leaves localStorage alone.

        Raises:
            UnknownSiteError: no such site (lists the roots searched).
            InvalidManifestError: the site's manifest is broken.
            UnknownToolError: the tool is not declared (lists the declared tools); no file read.
            ToolLoadError: the tool is a Python tool, or its file is missing or empty.
            ConfirmationRequiredError: an irreversible tool without ``confirm=True``.
            InvalidArgsError: the args fail the schema (names the field); nothing sent.
            UnsafePathError: the tool's path leaves the site folder.
            NoTabError: no tab to run in and no start URL.
            NeedsLoginError: the tool signalled NEEDS_LOGIN (log in by hand, then retry).
            SkillBrokenError: the tool signalled SKILL_BROKEN (it needs a new version).
            BrowserToolError: the tool threw; names site, tool, file and line.
            ReturnsMismatchError: ``check_returns`` and the result does not fit.
            CommandTimeoutError, ContextDestroyedError, TabClosedError, BrowserClosedError:
                as :meth:`ego.Tab.evaluate`.
        """
        options = _options(timeout, confirm, check_returns, cache)
        call = prepare(
            self.learnings, site_id, tool, args, options, browser_only=True, refs=self._tool_refs
        )
        return await self.run_call(call, tab)

    async def run_tool(
        self,
        site_id: str,
        tool: str,
        args: dict[str, Any] | None = None,
        *,
        tab: Tab | None = None,
        timeout: float | None = None,
        confirm: bool = False,
        check_returns: bool = False,
        cache: bool = True,
    ) -> Any:
        """Run any declared tool: a Python-side tool here, a browser tool in the page.

        A Python tool's ``run(ctx, args)`` gets a :class:`ToolContext` whose ``tab`` is chosen
        as for browser tools. Exceptions it raises propagate unchanged.

        Raises:
            Everything :meth:`run_browser_tool` raises, and ToolLoadError when the Python
            file fails to import or has no ``run``.
        """
        options = _options(timeout, confirm, check_returns, cache)
        return await self.run_call(self.prepare(site_id, tool, args, options), tab)

    def skills(self) -> list[SkillSummary]:
        """Every SKILL.md skill beside the learnings roots, valid or not (with its problems)."""
        from ..skills import SkillSummary, catalog_for

        return [SkillSummary.of(entry) for entry in catalog_for(self.learnings).entries()]

    async def run_skill(
        self,
        skill_id: str,
        params: dict[str, Any] | None = None,
        *,
        tab: Tab | None = None,
        confirm: bool = False,
        cache: bool = True,
        timeout: float | None = None,
    ) -> Any:
        """Run a SKILL.md skill (``"<domain>/<task>"``) in the page and return its result.

        Checks first, sending nothing: the params against the skill's schema, its ``needs``
        against the capabilities this harness provides, and ``confirm`` for an irreversible
        skill. Then the tab: ``tab``, else an open tab on the site (its host or a subdomain),
        else a new one at the skill's ``url``; :meth:`set_start_url` with the skill's domain
        replaces that url's scheme, host and port. An ``auth: session`` skill has its ``url``
        loaded first unless the tab is on that origin already. The extractor runs through the
        cache layer (KEY ``ego:skill:<domain>/<task>``, VER a hash of its source) with
        ``document`` and the params, and a successful result is checked against ``returns``.
        Its outcome is recorded in the skill's health (front end ``skill``).

        Args:
            skill_id: ``<domain>/<task>``, e.g. ``"shop.localhost/search-products"``.
            params: the skill's params.
            tab: where to run.
            confirm: must be True for a skill whose side effect is ``irreversible``.
            cache: False runs the plain wrap and leaves localStorage alone.
            timeout: seconds the extractor may run.

        Raises:
            UnknownSkillError: no such skill (lists the known ones).
            InvalidSkillError: the skill is broken (``problems`` lists why).
            InvalidArgsError: the params fail the schema; nothing sent.
            MissingCapabilityError: the skill needs a capability the harness lacks.
            ConfirmationRequiredError: an irreversible skill without ``confirm=True``.
            NeedsLoginError: the skill signalled NEEDS_LOGIN (log in by hand, then retry).
            SkillBrokenError: the skill signalled SKILL_BROKEN (it needs a new version).
            BrowserToolError: the extractor threw; names the skill, file and line.
            ReturnsMismatchError: a successful result fails the skill's ``returns``.
            NavigationError, CommandTimeoutError, ContextDestroyedError, TabClosedError,
                BrowserClosedError: as :meth:`ego.Tab.navigate` and :meth:`ego.Tab.evaluate`.
        """
        from ..skills import catalog_for, loaded_source, prepare_skill, skill_tab
        from ..skills import check_returns as check_skill_returns

        catalog = catalog_for(self.learnings)
        try:
            skill, arguments = prepare_skill(
                catalog,
                skill_id,
                params,
                tab_type=type(tab) if tab is not None else None,
                confirm=confirm,
            )
        except ConfirmationRequiredError as exc:
            record_as("skill", loaded_source(catalog.skill(skill_id)), perf_counter(), exc)
            raise
        loaded = loaded_source(skill)
        started = perf_counter()
        try:
            target = await skill_tab(self.browser, skill, tab, self._start_urls)
            result = await self._run_source(
                target, loaded, arguments, timeout=timeout or skill.timeout, cache=cache
            )
            check_skill_returns(skill, result)
        except Exception as exc:
            record_as("skill", loaded, started, exc)
            raise
        record_as("skill", loaded, started)
        return result


def _options(timeout: float | None, confirm: bool, check_returns: bool, cache: bool) -> CallOptions:
    # The common call names no option: share the one DEFAULTS rather than build its twin.
    if timeout is None and not confirm and not check_returns and cache:
        return DEFAULTS
    return CallOptions(timeout, confirm, check_returns, cache)


def describe_tool(learnings: Learnings, site_id: str, tool: str) -> ToolInfo:
    """What :meth:`Site.describe_tool` answers, from ``learnings`` alone (no browser needed).

    Raises:
        Everything :meth:`Site.describe_tool` raises.
    """
    from ..learning.describe.context import describe_tool as describe_site_tool
    from ..skills import describe_skill

    try:
        return describe_site_tool(learnings, site_id, tool)
    except UnknownSiteError as exc:
        try:
            return describe_skill(learnings, f"{site_id}/{tool}")
        except UnknownSkillError:
            raise exc from None


def context_for(
    learnings: Learnings, url: str, start_urls: Mapping[str, str] | None = None
) -> LearnContext:
    """What :meth:`Site.learn_context` answers, from ``learnings`` alone (no browser needed).

    Args:
        learnings: the roots.
        url: the page.
        start_urls: start URLs set in place of the manifests' (``set_start_url``), by site.
    """
    from ..learning.describe.context import build_context
    from ..skills import skills_for_url

    context = build_context(learnings, url, skills_for_url(learnings, url))
    for site in context.sites:
        site.start_url = (start_urls or {}).get(site.site_id, site.start_url)
    return context
