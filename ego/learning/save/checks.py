"""The checks of a planned save that need the browser: it compiles, and (optionally) it runs.

:func:`compile_check` parses the wrapped tool with ``Runtime.compileScript`` in a fresh
about:blank tab, so nothing runs. :func:`run_trial` runs it once in a page, with the plain
wrap and no cache, and refuses the save when it throws, signals NEEDS_LOGIN or SKILL_BROKEN,
or returns something that does not fit its ``returns`` schema.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from ...errors import BrowserError, JavaScriptError, SaveRefusedError
from ...runtime.contract import signal_error
from ...runtime.js import wrap, wrap_call
from ..catalog.naming import refuse
from ..catalog.schemas import mismatch
from ..plan.save_plan import ToolPlan

if TYPE_CHECKING:
    from ...page.browser import TabHost
    from ...page.tab import Tab

__all__ = ["compile_check", "run_trial"]


def _module_prefix(plan: ToolPlan) -> int:
    prefix = "(() => { "
    if plan.expression.startswith(prefix) and not plan.source.lstrip().startswith(prefix):
        return len(prefix)
    return 0


async def compile_check(browser: TabHost, plan: ToolPlan) -> None:
    """Parse the wrapped tool in a fresh about:blank tab without running it.

    ``Runtime.compileScript`` with ``persistScript`` false compiles the script and reports a
    syntax error, and nothing executes. The tab is closed afterwards.

    Raises:
        SaveRefusedError: the source does not parse (reason ``"syntax"``; the message names
            the line of the tool file and the column).
        BrowserError: the browser failed.
    """
    url = plan.url
    script = wrap_call(plan.expression, "{}", url=url)
    # The cache's Call evals the stored source as '(' + source + '\n)': check that form too.
    cached_form = "(" + plan.expression.rstrip("\n") + "\n)"
    tab = await browser.new_tab("about:blank", background=True)
    try:
        await tab.send("Runtime.enable")
        details = None
        for expression in (script, cached_form):
            result = await tab.send(
                "Runtime.compileScript",
                {"expression": expression, "sourceURL": url, "persistScript": False},
            )
            details = result.get("exceptionDetails")
            if details is not None:
                if expression is cached_form:
                    script = cached_form
                break
    finally:
        with contextlib.suppress(BrowserError):
            await tab.close()
    if details is None:
        return
    exception = details.get("exception") or {}
    text = str(exception.get("description") or details.get("text") or "SyntaxError").splitlines()[0]
    line = int(details.get("lineNumber", 0)) + 1
    column = int(details.get("columnNumber", 0)) + 1
    if line == 1:
        # The wrapper (and a module's own prefix) share the first line with the source.
        column = max(1, column - script.index(plan.expression) - _module_prefix(plan))
    problem = f"{text} at line {line}, column {column} of the tool source"
    raise refuse(plan.site_id, plan.tool, "syntax", [problem], lead=f"it does not parse: {problem}")


async def run_trial(
    tab: Tab,
    plan: ToolPlan,
    try_args: dict[str, Any],
    *,
    profile: str = "the browser profile",
    timeout: float | None = None,
) -> Any:
    """Run the planned tool once in ``tab`` with the plain wrap (no cache) and check the result.

    Args:
        tab: a tab on the site, where the tool runs.
        plan: the planned save (:func:`ego.learning.plan.save_plan.plan_browser_tool`).
        try_args: the args to run it with; they must fit the tool's args schema.
        profile: how to name the browser profile in a NEEDS_LOGIN message.
        timeout: seconds the run may take (None: the evaluate default).

    Returns:
        What the tool returned.

    Raises:
        SaveRefusedError: (reason ``"try run"``) the args fail the tool's schema, the tool
            threw, it signalled NEEDS_LOGIN or SKILL_BROKEN (thrown or returned as
            ``{error: "SIGNAL: ..."}``), the page went away or the run timed out, or the
            result does not fit ``returns``.
    """
    site_id, tool = plan.site_id, plan.tool

    def failed(problem: str) -> SaveRefusedError:
        return refuse(site_id, tool, "try run", [problem], lead=f"the try run failed: {problem}")

    if not isinstance(try_args, dict):
        raise failed(f"try_args must be a JSON object, not {type(try_args).__name__}")
    problem = mismatch(plan.args_schema, try_args, "(args)")
    if problem:
        raise failed(f"try_args fail the args schema {problem}")
    try:
        code = wrap(plan.expression, try_args, url=plan.url)
    except TypeError as exc:
        raise failed(f"try_args are not JSON: {exc}") from None
    try:
        result = await tab.evaluate(code, timeout=timeout)
    except JavaScriptError as exc:
        signal = signal_error(exc.js_message, site_id=site_id, tool=tool, profile=profile)
        if signal is not None:
            raise failed(f"it signalled {signal}") from None
        where = f" (line {exc.line} of the tool source)" if exc.url == plan.url and exc.line else ""
        raise failed(f"it threw {exc.name}: {exc.js_message}{where}") from None
    except BrowserError as exc:
        raise failed(f"{type(exc).__name__}: {exc}") from None
    if isinstance(result, dict) and isinstance(result.get("error"), str):
        signal = signal_error(result["error"], site_id=site_id, tool=tool, profile=profile)
        if signal is not None:
            raise failed(f"it returned a signal: {signal}")
    returns = plan.entry.get("returns")
    if returns is not None:
        problem = mismatch(returns, result, "(result)")
        if problem:
            raise failed(f"its result does not fit returns {problem}")
    return result
