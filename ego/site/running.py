"""The one call path: a prepared call run in its tab or frame, the cache layer, the error
contract, the ``returns`` check and the run's record."""

from __future__ import annotations

import inspect
from contextvars import ContextVar
from pathlib import Path
from time import perf_counter, time
from typing import TYPE_CHECKING, Any, Final

from ..calls import DEFAULTS, CallOptions, ToolCall, ToolRef, ToolRefs, prepare
from ..errors import (
    BrowserToolError,
    EgoError,
    JavaScriptError,
    ReturnsMismatchError,
    SiteUnreachableError,
)
from ..learning.health.recorder import record_failure, record_ok
from ..learning.health.watch import RUN_WATCHERS, tool_ran
from ..page.network import Request, unreachable
from ..runtime.cache import RunStats, cache_key, run_cached
from ..runtime.contract import signal_in_exception, signal_in_result, tool_error_type
from .placement import Placement, url_on_site

if TYPE_CHECKING:
    from ..learning.catalog.registry import Learnings, LoadedSource
    from ..page.browser import TabHost
    from ..page.frame import Frame
    from ..page.tab import Tab

__all__ = ["Running", "tool_error"]


class Running(Placement):
    """Running prepared calls: the base of :class:`ego.site.Site`, which documents it.

    Args:
        browser: the browser to run tools in.
        learnings: where sites are found (see :class:`ego.site.Site`).
    """

    def __init__(self, browser: TabHost, learnings: Learnings | None = None) -> None:
        super().__init__(browser, learnings)
        # Each asyncio task sees the runs it made itself (see last_run). One variable per
        # Site: a module-wide one would show a run on one browser as another's.
        self._last_run: ContextVar[RunStats | None] = ContextVar(
            f"ego.site.last_run.{id(self)}", default=None
        )
        # The run that started last in any task: what a reader that made none sees.
        self._latest_run: RunStats | None = None
        #: How a NEEDS_LOGIN message on a throwaway profile says to use a persistent one, in
        #: the caller's words (the command line sets ``--profile NAME``).
        self.profile_hint = "launch with profile=NAME"
        # The tools this Site called with the default options, found, declared and confirmed:
        # a repeat call checks only its args (see ego.calls.ToolRefs).
        self._tool_refs = ToolRefs()

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
        return prepare(
            self.learnings,
            site_id,
            tool,
            args,
            options,
            browser_only=browser_only,
            refs=self._tool_refs,
        )

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
        ref = call.ref
        options = ref.options
        page: Tab | Frame | None = tab
        try:
            loaded = call.source
            if loaded is not None:
                # A given tab on the site needs no lookup: the hot call names its tab.
                page = (
                    tab
                    if tab is not None and url_on_site(tab.url, self.domains(ref.manifest))
                    else await self._page_for(ref.manifest, tab)
                )
                result = await self._run_source(
                    page,
                    loaded,
                    call.embedded,
                    timeout=options.timeout or ref.spec.timeout,
                    cache=options.cache,
                )
            else:
                result = await self._run_python(call, tab)
            if options.check_returns and ref.spec.returns is not None:
                _check_returns(ref, result)
        except Exception as exc:
            record_failure(call, started, exc)
            if RUN_WATCHERS:  # the run's hook (ego.learning.health.watch): a trace
                await tool_ran(call, started, page, self.browser, error=exc)
            raise
        record_ok(call, started)
        if RUN_WATCHERS:  # the run's hook (ego.learning.health.watch): a trace
            await tool_ran(call, started, page, self.browser, result=result)
        return result

    async def _run_python(self, call: ToolCall, tab: Tab | None) -> Any:
        """A Python tool's ``run(ctx, args)``, in ``tab`` or the site's tab."""
        ref = call.ref
        assert call.function is not None
        target = tab if tab is not None else await self._tab_for(ref.manifest, tab)
        context = self._tool_context(target, ref.site_id, ref.tool)
        result = call.function(context, call.args)
        if inspect.isawaitable(result):
            result = await result
        return result

    def _tool_context(self, tab: Tab, site_id: str, tool: str) -> Any:
        """What a Python tool's ``run(ctx, args)`` gets: the facade builds it, since the
        tool gets the whole facade (:class:`ego.site.ToolContext`)."""
        raise NotImplementedError("a Site builds the context of a Python tool")

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
        stats = self._new_run()
        since = time()
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
            raise await self._failure(tab, loaded, exc, since) from None
        # Only a result with an "error" can carry a signal: the messages are built for it.
        if isinstance(result, dict) and "error" in result:
            self._signalled(loaded, result)
        return result

    def _new_run(self) -> RunStats:
        """The stats of a run starting now, as :attr:`last_run` shows them."""
        stats = RunStats()
        self._last_run.set(stats)
        self._latest_run = stats
        return stats

    async def _failure(
        self, page: Tab | Frame, loaded: LoadedSource, exc: JavaScriptError, since: float
    ) -> EgoError:
        """What a run of ``loaded`` that threw ``exc`` raises: the signal it carries, else a
        SiteUnreachableError when a request the page made since ``since`` (seconds since the
        epoch) found no server (the tool's ``fetch`` threw for the site's sake, which says
        nothing about the tool), else a BrowserToolError naming the file and line (for code
        that does not compile too)."""
        if exc.name == "SyntaxError" and not exc.url:
            exc = await _placed(page, loaded, exc)
        thrown = self._thrown(loaded, exc)
        if not isinstance(thrown, BrowserToolError):
            return thrown
        failed = await _unreachable_request(page, since)
        if failed is None:
            return thrown
        reason = unreachable(failed.failed) or failed.failed
        return SiteUnreachableError(
            f"{loaded.site_id}/{loaded.tool} could not reach the site: {failed.method} "
            f"{failed.url} failed with {reason} (the tool threw {exc.name}: "
            f"{exc.js_message}); its server is not answering, which says nothing about the "
            "tool: start the site or check the network, then retry",
            url=failed.url,
            reason=reason,
        )

    def _thrown(self, loaded: LoadedSource, exc: JavaScriptError) -> EgoError:
        """What a run of ``loaded`` that threw ``exc`` raises: the signal it carries
        (NEEDS_LOGIN, SKILL_BROKEN), else a BrowserToolError naming the file and line."""
        signal = signal_in_exception(
            exc,
            site_id=loaded.site_id,
            tool=loaded.tool,
            profile=self.profile_description,
            login=self.login_command(loaded.site_id),
        )
        return signal or tool_error(loaded, exc)

    def _signalled(self, loaded: LoadedSource, result: dict[str, Any]) -> None:
        """Raise the signal a result with an ``error`` carries, if it carries one."""
        signal_in_result(
            result,
            site_id=loaded.site_id,
            tool=loaded.tool,
            profile=self.profile_description,
            login=self.login_command(loaded.site_id),
        )

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
        from ..skills import NAMESPACE as SKILL_NAMESPACE

        if process is None or site_id == SKILL_NAMESPACE:
            return None
        name = "NAME" if process.temporary else process.user_data_dir.name
        return f"ego login {site_id} --profile {name}"


#: Seconds a request may seem to have been sent before the run began (two clocks of one
#: machine: Chrome's and Python's).
_CLOCK_SLACK = 0.1


_TOOL_REQUEST_TYPES: Final = frozenset({"Fetch", "XHR"})


async def _unreachable_request(page: Tab | Frame, since: float) -> Request | None:
    """The latest fetch or XHR of ``page``'s tab sent since ``since`` that found no server.

    Only those can be the tool's own: a favicon or an image the page loads meanwhile may fail
    for reasons of its own while the site answers the tool."""
    try:
        requests = await page.network_log.requests()
    except EgoError:
        return None
    for request in reversed(requests):
        if request.sent_at < since - _CLOCK_SLACK:
            return None
        if request.type not in _TOOL_REQUEST_TYPES:
            continue
        if request.failed and unreachable(request.failed) is not None:
            return request
    return None


def _check_returns(ref: ToolRef, result: Any) -> None:
    """Raise ReturnsMismatchError when ``result`` does not fit the tool's ``returns`` schema."""
    from ..learning.catalog.schemas import mismatch

    assert ref.spec.returns is not None
    problem = mismatch(ref.spec.returns, result)
    if problem:
        raise ReturnsMismatchError(
            f"{ref.subject} returned data that does not match its returns schema {problem}"
        )


async def _placed(tab: Tab | Frame, loaded: LoadedSource, exc: JavaScriptError) -> JavaScriptError:
    """``exc``, a tool's code that failed to compile, with the line and column in its file.

    A script that does not compile has no frame to name its place, so the form the cache
    evaluates (``'(' + source + '\n)'``) is compiled again, not run, under the tool's own URL
    (``Runtime.compileScript``, ``persistScript`` false). ``exc`` unchanged when that fails.
    """
    try:
        answer = await tab.send(
            "Runtime.compileScript",
            {
                "expression": "(" + loaded.expression.rstrip("\n") + "\n)",
                "sourceURL": loaded.url,
                "persistScript": False,
            },
        )
    except EgoError:
        return exc
    details = answer.get("exceptionDetails")
    if not isinstance(details, dict) or "lineNumber" not in details:
        return exc
    line = int(details["lineNumber"]) + 1
    column = int(details.get("columnNumber", 0)) + (0 if line == 1 else 1)  # after "("
    return JavaScriptError(
        str(exc),
        name=exc.name,
        js_message=exc.js_message,
        stack=exc.stack,
        url=loaded.url,
        line=line,
        column=column,
        value=exc.value,
    )


def tool_error(loaded: LoadedSource, exc: JavaScriptError) -> BrowserToolError:
    """Turn a JS error from a tool into a BrowserToolError that names its file and line (the
    typed kind its class names: :func:`ego.runtime.contract.tool_error_type`)."""
    line = exc.line if exc.url == loaded.url else None
    file = _display_path(loaded.file)
    where = f"{file}:{line}" if line is not None else file
    return tool_error_type(exc)(
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
