"""The facade agent scripts use: ``learn_context``, ``run_browser_tool``, ``run_tool``."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from time import perf_counter
from typing import TYPE_CHECKING, Any, Literal

from .calls import DEFAULTS, CallOptions, ToolCall, case_call, prepare
from .errors import (
    BrowserToolError,
    ConfirmationRequiredError,
    JavaScriptError,
    NavigationError,
    NoTabError,
    ReturnsMismatchError,
    SiteMismatchError,
)
from .learning.health.recorder import record_as, record_failure, record_ok
from .learning.manifest import Manifest
from .learning.matching import domain_of, match_domain
from .learning.registry import Learnings, LoadedSource
from .runtime.cache import RunStats, cache_key, run_cached
from .runtime.contract import signal_in_exception, signal_in_result

if TYPE_CHECKING:
    # Saving, skills and learn_context's models are imported where they are used: a tool
    # call (and a command that makes one) does not pay for them.
    from .learning import notes as _notes
    from .learning import store as _store
    from .learning.cases.format import LearningCase
    from .learning.cases.verdict import GateReport
    from .learning.context import LearnContext, SiteSummary
    from .learning.draft import ToolDraft
    from .learning.history import ToolVersion
    from .learning.save_plan import ToolPlan
    from .page.browser import Browser
    from .page.frame import Frame
    from .page.tab import Tab
    from .skills import SkillSummary

__all__ = ["Site", "ToolContext", "context_for", "tool_error"]

logger = logging.getLogger("ego.site")


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
    browser: Browser
    tab: Tab
    site_id: str
    tool: str


class Site:
    """Learnings on a browser: discover tools for a URL, run them in the right tab.

    Every check happens before anything reaches the browser: the site must exist and be
    valid, the tool must be declared (no file is read otherwise), its path must stay in the
    site folder, and the args must fit the tool's schema.

    Available as ``browser.site`` on a browser from :func:`ego.launch` or :func:`ego.connect`,
    and as ``ctx.site`` inside a Python-side tool.

    Args:
        browser: the browser to run tools in.
        learnings: where sites are found; by default the workspace's ``learnings/`` (from
            ``$EGO_WORKSPACE``) then the project's.
    """

    def __init__(self, browser: Browser, learnings: Learnings | None = None) -> None:
        self.browser = browser
        self.learnings = learnings if learnings is not None else Learnings()
        self._start_urls: dict[str, str] = {}
        # Each asyncio task sees the runs it made itself (see last_run). One variable per
        # Site: a module-wide one would show a run on one browser as another's.
        self._last_run: ContextVar[RunStats | None] = ContextVar(
            f"ego.site.last_run.{id(self)}", default=None
        )
        # The run that started last in any task: what a reader that made none sees.
        self._latest_run: RunStats | None = None
        # The domain of each start URL, parsed once: the hot call asks for it on every run.
        self._start_domains: dict[str, tuple[str, ...]] = {}
        #: How a NEEDS_LOGIN message on a throwaway profile says to use a persistent one, in
        #: the caller's words (the command line sets ``--profile NAME``).
        self.profile_hint = "launch with profile=NAME"

    @property
    def last_run(self) -> RunStats | None:
        """What the latest browser tool (or skill) run of the reading task did: ``mode``
        (cache hit, store or plain wrap), ``evaluations``, ``bytes_sent``, ``fallback``.

        Each run keeps its stats in the asyncio task that made it (a ``contextvars`` value),
        so calls running at once never overwrite each other's: read ``last_run`` in the task
        that awaited the call (each task of an ``asyncio.gather`` sees its own call's). A
        reader that made no run itself (the task that gathered others, code that runs each
        call with its own ``asyncio.run``) sees the run that started last on this Site in any
        task; None before any run.
        """
        own = self._last_run.get()
        return own if own is not None else self._latest_run

    def set_start_url(self, site_id: str, url: str) -> None:
        """Use ``url`` instead of the manifest's ``startUrl`` when a tab must be opened.

        Only tabs (and frames) on ``url``'s host and port then count as the site's, in place
        of the manifest's domains: the copy of the site that was named is used, never another
        program on the port the manifest's ``startUrl`` fixes.
        """
        self._start_urls[site_id] = url
        own = domain_of(url)
        if own is None:
            self._start_domains.pop(site_id, None)
        else:
            self._start_domains[site_id] = (own,)

    def domains(self, manifest: Manifest) -> tuple[str, ...]:
        """The domains ``manifest``'s site runs on here: its own, or, after
        :meth:`set_start_url`, the start URL's host and port."""
        return self._start_domains.get(manifest.id, manifest.domains)

    def sites(self) -> list[SiteSummary]:
        """Every site in the learnings roots, valid or not (invalid ones list their problems),
        each with the health of its tools that have recorded runs."""
        from .learning.context import summarize_site

        return [summarize_site(entry, self.learnings) for entry in self.learnings.sites()]

    async def learn_context(self, url: str) -> LearnContext:
        """What the learnings offer for ``url``: matching sites, their notes and tools.

        Each tool comes with its description, args schema, returns schema, side effect and a
        ready-to-paste example call. Sites with a broken manifest are left out (see
        :meth:`sites`). Reads only local files; the browser is not involved.
        """
        return context_for(self.learnings, url)

    async def tab_for(self, site_id: str, tab: Tab | None = None) -> Tab:
        """The tab to run ``site_id``'s tools in.

        ``tab`` when given; else the first open tab whose host matches the site's domains;
        else a new tab at the site's start URL, loaded.

        Raises:
            UnknownSiteError, InvalidManifestError: no such usable site.
            NoTabError: nothing matches and the site has no start URL.
        """
        manifest = self.learnings.site(site_id)
        return await self._tab_for(manifest, tab)

    async def _tab_for(self, manifest: Manifest, tab: Tab | None) -> Tab:
        if tab is not None:
            return tab
        for candidate in await self.browser.tabs():
            if match_domain(candidate.url, self.domains(manifest)):
                return candidate
        return await self._new_tab(manifest)

    async def _page_for(self, manifest: Manifest, tab: Tab | None) -> Tab | Frame:
        """Where a browser tool of ``manifest``'s site runs: ``tab`` when its page is on the
        site, else the frame of ``tab`` that is; without a tab, an open tab on the site, else
        a frame on the site in an open tab, else a new tab at the start URL.

        Raises:
            SiteMismatchError: ``tab`` is not on the site and no frame of it is.
            NoTabError, NavigationError: as :meth:`tab_for`.
        """
        domains = self.domains(manifest)
        if tab is not None:
            if _on_site(tab.url, domains):
                return tab
            frame = await _frame_on_site(tab, domains)
            if frame is None:
                raise SiteMismatchError(
                    f"site {manifest.id!r} runs on {', '.join(domains)}, but the tab given shows "
                    f"{_host(tab.url)} and none of its frames is on the site: pass a tab on the "
                    "site (or one that embeds it), or leave tab out to let ego find or open one",
                    host=_host(tab.url),
                    domains=list(domains),
                )
            return frame
        tabs = await self.browser.tabs()
        for candidate in tabs:
            if match_domain(candidate.url, domains):
                return candidate
        for candidate in await self._embedding(tabs, manifest):
            frame = await _frame_on_site(candidate, domains)
            if frame is not None:
                return frame
        return await self._new_tab(manifest)

    async def _embedding(self, tabs: list[Tab], manifest: Manifest) -> list[Tab]:
        """The open tabs that may embed the site: those ego attached to already (their
        frames are known), and those whose cross-site frames Chrome lists on the site."""
        known = [tab for tab in tabs if tab.session_id is not None]
        targets = await self.browser.connection.send("Target.getTargets")
        parents: dict[str, str] = {}
        wanted: list[str] = []
        for info in targets.get("targetInfos", []):
            if info.get("type") == "iframe":
                parents[str(info.get("targetId"))] = str(info.get("parentFrameId", ""))
                if match_domain(str(info.get("url", "")), self.domains(manifest)):
                    wanted.append(str(info.get("targetId")))
        pages = {tab.target_id: tab for tab in tabs}
        for frame_id in wanted:
            seen: set[str] = set()
            while frame_id in parents and frame_id not in seen:
                seen.add(frame_id)
                frame_id = parents[frame_id]
            page = pages.get(frame_id)
            if page is not None and page not in known:
                known.append(page)
        return known

    async def _new_tab(self, manifest: Manifest) -> Tab:
        try:
            return await self.browser.new_tab(self.start_url(manifest))
        except NavigationError as exc:
            # A site served locally (the demo shop) says in its manifest how to start it.
            hint = (manifest.model_extra or {}).get("startUrlRefused")
            if isinstance(hint, str) and hint and "ERR_CONNECTION_REFUSED" in str(exc):
                raise NavigationError(f"{exc}: {hint}") from None
            raise

    def start_url(self, manifest: Manifest) -> str:
        """Where a tab for ``manifest``'s site opens: :meth:`set_start_url`'s, else ``startUrl``.

        Raises:
            NoTabError: neither is set.
        """
        start = self._start_urls.get(manifest.id) or manifest.start_url
        if not start:
            raise NoTabError(
                f"no open tab on {', '.join(manifest.domains)} for site {manifest.id!r}, and "
                "its manifest has no startUrl: open one (browser.new_tab(url)) and pass tab=, "
                f"or call set_start_url({manifest.id!r}, url)"
            )
        return start

    def on_site(self, tab: Tab, manifest: Manifest) -> bool:
        """Whether ``tab``'s page is on ``manifest``'s site here (see :meth:`domains`).

        Remembered per URL and domains, so asking again for a hot tab costs a lookup.
        """
        return _on_site(tab.url, self.domains(manifest))

    async def visit(self, tab: Tab, manifest: Manifest) -> None:
        """Load the site's start URL in ``tab`` unless it is on the site's domains already.

        Raises:
            NoTabError: the tab is elsewhere and the site has no start URL.
            NavigationError, CommandTimeoutError: as :meth:`ego.Tab.navigate`.
        """
        if not self.on_site(tab, manifest):
            await tab.navigate(self.start_url(manifest))

    def prepare(
        self,
        site_id: str,
        tool: str,
        args: Any = None,
        options: CallOptions = DEFAULTS,
        *,
        browser_only: bool = False,
    ) -> ToolCall:
        """Check a call without a browser: site, tool, confirmation, args, the tool's code.

        Raises:
            Everything :meth:`run_tool` raises before anything is sent.
        """
        return prepare(self.learnings, site_id, tool, args, options, browser_only=browser_only)

    async def run_call(self, call: ToolCall, tab: Tab | None = None) -> Any:
        """Run a prepared call (see :meth:`prepare`) and return its result.

        The one path every tool call takes, whichever front end made it: the tab (``tab``,
        else a matching open tab, else the start URL), then a browser tool through the cache
        layer and the error contract, or a Python tool's ``run(ctx, args)``; then the
        ``returns`` check when the options ask for it. Its outcome is recorded against the
        tool's version (see :mod:`ego.learning.health`).

        Raises:
            Everything :meth:`run_browser_tool` raises from the tab choice on.
        """
        started = perf_counter()
        try:
            result = await self._run_call(call, tab)
        except Exception as exc:
            record_failure(call, started, exc)
            raise
        record_ok(call, started)
        return result

    async def _run_call(self, call: ToolCall, tab: Tab | None) -> Any:
        ref = call.ref
        options = ref.options
        if call.source is not None:
            # A given tab on the site needs no lookup: the hot call names its tab.
            page = (
                tab
                if tab is not None and _on_site(tab.url, self.domains(ref.manifest))
                else await self._page_for(ref.manifest, tab)
            )
            result = await self._run_source(
                page,
                call.source,
                call.embedded,
                timeout=options.timeout or ref.spec.timeout,
                cache=options.cache,
            )
        else:
            assert call.function is not None
            target = tab if tab is not None else await self._tab_for(ref.manifest, tab)
            context = ToolContext(self, self.browser, target, ref.site_id, ref.tool)
            result = call.function(context, call.args)
            if inspect.isawaitable(result):
                result = await result
        if options.check_returns and ref.spec.returns is not None:
            from .learning.schemas import mismatch

            problem = mismatch(ref.spec.returns, result)
            if problem:
                raise ReturnsMismatchError(
                    f"{ref.subject} returned data that does not match its returns schema {problem}"
                )
        return result

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
        call = prepare(self.learnings, site_id, tool, args, options, browser_only=True)
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
        return await self.run_call(prepare(self.learnings, site_id, tool, args, options), tab)

    async def _run_source(
        self,
        tab: Tab | Frame,
        loaded: LoadedSource,
        arguments: str,
        *,
        timeout: float | None = None,
        cache: bool = True,
    ) -> Any:
        """Run loaded code through the cache layer and apply the error contract.

        ``arguments`` is the JavaScript argument list (``embed_json(args)`` for a tool).
        Skills share this step with browser tools.

        Raises:
            NeedsLoginError, SkillBrokenError, BrowserToolError: as :meth:`run_browser_tool`.
        """
        stats = RunStats()
        self._last_run.set(stats)
        self._latest_run = stats
        try:
            result = await run_cached(
                tab,
                key=cache_key(loaded.site_id, loaded.tool),
                version=loaded.version,
                expression=loaded.expression,
                arguments=arguments,
                url=loaded.url,
                timeout=timeout,
                use_cache=cache,
                stats=stats,
            )
        except JavaScriptError as exc:
            signal = signal_in_exception(
                exc,
                site_id=loaded.site_id,
                tool=loaded.tool,
                profile=self.profile_description,
                login=self.login_command(loaded.site_id),
            )
            raise (signal or tool_error(loaded, exc)) from None
        # Only a result with an "error" can carry a signal: the messages are built for it.
        if isinstance(result, dict) and "error" in result:
            signal_in_result(
                result,
                site_id=loaded.site_id,
                tool=loaded.tool,
                profile=self.profile_description,
                login=self.login_command(loaded.site_id),
            )
        return result

    def skills(self) -> list[SkillSummary]:
        """Every SKILL.md skill beside the learnings roots, valid or not (with its problems)."""
        from .skills import SkillSummary, catalog_for

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
        from .skills import catalog_for, loaded_source, prepare_skill, skill_tab
        from .skills import check_returns as check_skill_returns

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

    @property
    def profile_description(self) -> str:
        """How to name this browser's profile in a NEEDS_LOGIN message."""
        process = self.browser.process
        if process is None:
            return "the browser ego is attached to"
        if process.temporary:
            return f"a persistent profile (this browser has a throwaway one: {self.profile_hint})"
        return f"the Chrome profile {process.user_data_dir.name!r} ({process.user_data_dir})"

    def login_command(self, site_id: str) -> str | None:
        """The ``ego login`` command that opens this browser's profile on ``site_id``; None
        for a browser ego is attached to (the person logs in in that browser) or a skill."""
        process = self.browser.process
        from .skills import NAMESPACE as SKILL_NAMESPACE

        if process is None or site_id == SKILL_NAMESPACE:
            return None
        name = "NAME" if process.temporary else process.user_data_dir.name
        return f"ego login {site_id} --profile {name}"

    async def save_browser_tool(
        self,
        site_id: str,
        tool: str,
        source: str,
        description: str | None = None,
        args: dict[str, Any] | None = None,
        returns: dict[str, Any] | bool | None = None,
        side_effect: Literal["read", "write", "irreversible"] | None = None,
        *,
        auth: Literal["none", "session"] | None = None,
        domains: Sequence[str] | None = None,
        tab: Tab | None = None,
        try_args: dict[str, Any] | None = None,
        name: str | None = None,
        clear: Sequence[str] = (),
        force: bool = False,
    ) -> _store.SavedTool:
        """Keep a browser tool that worked, in the agent workspace's learnings.

        Nothing is written unless every check passes: valid site id and tool name, no
        snapshot-only references in the source, valid args/returns schemas and manifest, the
        source parses in the browser (compiled, not run, in a fresh about:blank tab), and with
        ``try_args`` one plain run in the page that neither throws nor signals. A site that
        is new gets a folder and manifest (domains from the tab's host, with its port, unless
        given); a site that exists only in the project is copied into the workspace first
        (the copy shadows it; the project is never modified). A replaced tool's previous
        version is kept (see :meth:`tool_history`). :meth:`learn_context` lists the tool at
        once, and its next run stores the new source in the page's localStorage (its content
        hash changed).

        When the site carries offline cases for the tool (``tests/cases.json``), they run
        against the new source on their recordings first; a case that passes with the
        current version and fails with the new one refuses the save (``force`` saves
        anyway). The result's ``cases`` says which ran and how they went.

        Saving a tool the site already has changes only what is given: every argument left
        at None keeps the tool's current value (and keys this call cannot name, such as
        ``timeout``, stay); ``clear`` removes a field explicitly.

        Args:
            site_id: the site's id (its folder name), e.g. ``"x-com"``.
            tool: the tool's name, an identifier.
            source: the JavaScript: ``async (args) => {...}``, ``async function (args)
                {...}``, or a module with ``export default async function``.
            description: what the tool does; required for a new tool, None keeps an
                existing tool's.
            args: compact ``{name: {type, required, description}}`` or a full JSON Schema;
                None keeps the tool's args (a new tool takes none).
            returns: a JSON Schema for the result; None keeps the tool's (a new tool has
                none).
            side_effect: ``"read"``, ``"write"`` or ``"irreversible"``; None keeps the tool's
                (a new tool is ``"read"``).
            auth: ``"session"`` when the tool needs the logged-in session; None keeps the
                tool's (a new tool is ``"none"``).
            domains: the site's domains (a new site defaults to the tab's host, with its
                port when the URL names one). A bare ``localhost``, ``127.0.0.1`` or
                ``[::1]`` without a port is refused as too broad.
            tab: the tab the tool was found in; ``try_args`` runs there. By default an open
                tab on the site's domains.
            try_args: run the tool once with these args before keeping it.
            name: the site's display name (a new site defaults to its id).
            clear: fields to remove from the tool's entry: ``"args"`` (then it takes no
                args), ``"returns"``, ``"timeout"``.
            force: save even if the new source breaks offline cases of the tool that pass
                with its current version (``cases.broken`` in the result names them).

        Returns:
            What was written (file, whether the site was created or shadowed, the history id
            of the replaced version, what changed, the try run's result, the offline cases
            run).

        Raises:
            WorkspaceRequiredError: no workspace (set EGO_WORKSPACE or pass workspace=).
            SaveRefusedError: a check failed; nothing was written (``reason``, ``problems``).
            SnapshotReferenceError: the source uses snapshot refs or pixel coordinates.
            CaseRegressionError: the new source fails offline cases that pass with the
                current version (``cases`` names them); nothing was written.
            BrowserError: the browser failed during the checks; nothing was written.
            OSError: the write failed; the site stays consistent.
        """
        from .learning.draft import ToolDraft

        draft = ToolDraft(
            site_id=site_id,
            tool=tool,
            source=source,
            description=description,
            args=args,
            returns=returns,
            side_effect=side_effect,
            auth=auth,
            domains=domains,
            try_args=try_args,
            name=name,
            clear=tuple(clear) if not isinstance(clear, str) else (clear,),
            force=force,
        )
        return await self.save_tool(draft, tab=tab)

    async def save_tool(self, draft: ToolDraft, *, tab: Tab | None = None) -> _store.SavedTool:
        """Keep a browser tool described by a ready :class:`~ego.learning.draft.ToolDraft`.

        The same save as :meth:`save_browser_tool`, for a front end that built the draft,
        gated by the tool's offline cases the same way (``draft.force`` goes past them).

        Args:
            draft: what to save.
            tab: the tab the tool was found in; ``draft.try_args`` runs there. By default an
                open tab on the site's domains.

        Returns:
            What was written.

        Raises:
            WorkspaceRequiredError: no workspace (set EGO_WORKSPACE or pass workspace=).
            SaveRefusedError: a check failed; nothing was written (``reason``, ``problems``).
            SnapshotReferenceError: the source uses snapshot refs or pixel coordinates.
            CaseRegressionError: the new source breaks offline cases; nothing was written.
            BrowserError: the browser failed during the checks; nothing was written.
            OSError: the write failed; the site stays consistent.
        """
        from .learning import save as _save

        return await _save.save_browser_tool(
            self.learnings,
            self.browser,
            draft,
            tab=tab,
            profile=self.profile_description,
            gate=self._gate,
        )

    async def _gate(self, plan: ToolPlan) -> GateReport | None:
        """The save gate: the planned tool's offline cases, run through :meth:`run_call`
        with its new source (and with the current version where the new one fails)."""
        # Imported here: the replay layer it brings is needed by a save, not by a call.
        from .learning.cases.gate import run_gate

        async def invoke(
            case: LearningCase, tab: Tab, timeout: float, source: LoadedSource | None
        ) -> Any:
            candidate = (plan, source) if source is not None else None
            return await self.run_call(case_call(self.learnings, case, timeout, candidate), tab)

        return await run_gate(self.browser, self.learnings, plan, invoke)

    async def save_note(
        self,
        site_id: str,
        name: str,
        text: str,
        *,
        domains: Sequence[str] | None = None,
        tab: Tab | None = None,
        site_name: str | None = None,
    ) -> _notes.SavedNote:
        """Keep a note (markdown for agents) as ``notes/<name>.md`` in the workspace's site.

        Args:
            site_id: the site's id.
            name: the note's name (letters, digits, ``_``, ``-``).
            text: the markdown; its first ``# Title`` line names it.
            domains: the domains of a new site.
            tab: a tab on the site: gives a new site its domain and start URL.
            site_name: a new site's display name (defaults to its id).

        Raises:
            WorkspaceRequiredError: no workspace (set EGO_WORKSPACE or pass workspace=).
            SaveRefusedError: invalid id or name, empty text, a new site without domains, or
                a broken manifest; nothing was written.
            OSError: the write failed; the site stays consistent.
        """
        from .learning import notes as _notes
        from .learning import save as _save

        url = await _save.current_url(tab)
        return _notes.save_note(
            self.learnings,
            site_id,
            name,
            text,
            domains=domains,
            page_url=url,
            site_name=site_name,
        )

    def tool_history(self, site_id: str, tool: str) -> list[ToolVersion]:
        """A browser tool's versions: the current one first, then the kept ones, newest first.

        Empty when the site or tool does not exist.
        """
        from .learning.history import list_versions

        return list_versions(self.learnings, site_id, tool)

    def restore_tool(self, site_id: str, tool: str, version: str) -> _store.SavedTool:
        """Bring back a kept version of a tool (from :meth:`tool_history`); keep the current.

        Raises:
            WorkspaceRequiredError: no workspace.
            UnknownVersionError: no such kept version (the message lists them).
            SaveRefusedError: the restored manifest would be invalid.
            OSError: the write failed; the site stays consistent.
        """
        from .learning import store as _store

        return _store.restore_tool(self.learnings, site_id, tool, version)


def _options(timeout: float | None, confirm: bool, check_returns: bool, cache: bool) -> CallOptions:
    # The common call names no option: share the one DEFAULTS rather than build its twin.
    if timeout is None and not confirm and not check_returns and cache:
        return DEFAULTS
    return CallOptions(timeout, confirm, check_returns, cache)


def context_for(learnings: Learnings, url: str) -> LearnContext:
    """What :meth:`Site.learn_context` answers, from ``learnings`` alone (no browser needed)."""
    from .learning.context import build_context
    from .skills import skills_for_url

    return build_context(learnings, url, skills_for_url(learnings, url))


def tool_error(loaded: LoadedSource, exc: JavaScriptError) -> BrowserToolError:
    """Turn a JS error from a tool into a BrowserToolError that names its file and line."""
    line = exc.line if exc.url == loaded.url else None
    file = _display_path(loaded.file)
    where = f"{file}:{line}" if line is not None else file
    return BrowserToolError(
        f"{loaded.site_id}/{loaded.tool} threw {exc.name}: {exc.js_message} ({where})",
        site_id=loaded.site_id,
        tool=loaded.tool,
        file=str(loaded.file),
        name=exc.name,
        js_message=exc.js_message,
        stack=exc.stack,
        url=exc.url,
        line=line,
        column=exc.column if line is not None else None,
        value=exc.value,
    )


def _display_path(file: Path) -> str:
    try:
        return str(file.relative_to(Path.cwd()))
    except ValueError:
        return str(file)


# Whether a URL is on a site's domains, for the hot call: the same tab and site ask again and
# again. Bounded: emptied when it grows past the limit.
_ON_SITE: dict[tuple[str, tuple[str, ...]], bool] = {}
_MAX_ON_SITE = 4096


def _on_site(url: str, domains: tuple[str, ...]) -> bool:
    key = (url, domains)
    known = _ON_SITE.get(key)
    if known is None:
        if len(_ON_SITE) >= _MAX_ON_SITE:
            _ON_SITE.clear()
        known = _ON_SITE[key] = match_domain(url, domains) is not None
    return known


async def _frame_on_site(tab: Tab, domains: tuple[str, ...]) -> Frame | None:
    """The first frame of ``tab`` whose document is on ``domains``."""
    for frame in await tab.frames():
        if not frame.is_main and _on_site(frame.url, domains):
            return frame
    return None


def _host(url: str) -> str:
    return domain_of(url) or url or "about:blank"
