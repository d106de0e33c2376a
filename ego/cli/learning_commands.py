"""``ego tools``, ``ego sites``, ``ego run`` and ``ego validate``: the learnings and their tools."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import orjson

from ..errors import EgoError
from ..learning.catalog.matching import as_url
from ..learning.health.origin import front_end
from .common import (
    Settings,
    args_options,
    common,
    json_option,
    parse_args,
    pass_settings,
    run_async,
    state_bounds,
    storage_state_bounds_options,
)
from .output import EXIT_OK, EXIT_TOOL, heal_hint
from .trace_commands import trace_option, traced

if TYPE_CHECKING:
    from ..calls import CallOptions, ToolCall
    from ..learning.catalog.registry import Learnings
    from ..learning.describe.compact import CompactContext
    from ..learning.describe.context import LearnContext, SiteSummary, ToolInfo
    from ..site import Site
    from .output import Output

__all__ = [
    "CLI_PROFILE_HINT",
    "RUN_PROFILE_HINT",
    "as_url",
    "checked_call",
    "compact_text",
    "context_text",
    "prepare_call",
    "run",
    "run_prepared",
    "sites",
    "tools",
    "validate",
]

#: How a NEEDS_LOGIN message tells a command-line user to use a persistent profile.
CLI_PROFILE_HINT = "run the command again with --profile NAME"
#: The same for ``ego run``, which also takes a login saved in a file.
RUN_PROFILE_HINT = (
    "run the command again with --profile NAME, or with --storage-state FILE, a login saved "
    "by `ego login SITE --save-state FILE`"
)


@click.command()
@click.argument("url")
@click.option(
    "--full",
    is_flag=True,
    help="Everything: each tool's whole description, args and returns schemas, example and "
    "health record, and the notes in full.",
)
@json_option
@pass_settings
def tools(settings: Settings, url: str, full: bool) -> None:
    """What learn_context says for URL, in a few lines; --full for everything.

    Per site its tools (args, an example, side effect, health) and its notes.

    URL may be a bare host (``google.com`` means ``https://google.com/``).
    """
    from ..learning.describe.compact import compact
    from ..site import context_for

    context = context_for(settings.learnings(), as_url(url), dict(settings.start_urls()))
    if full:
        settings.output.result(context.model_dump(mode="json"), lambda _: context_text(context))
        return
    short = compact(context)
    settings.output.result(short.model_dump(mode="json"), lambda _: compact_text(short))


def checked_call(
    settings: Settings,
    site_id: str,
    tool: str,
    args_json: str | None,
    pairs: tuple[str, ...],
    options: CallOptions,
) -> ToolCall:
    """:func:`prepare_call` before a browser is started: a typo costs no Chrome. An ego
    error ends the command with its one line and exit code."""
    try:
        # A refusal here (an irreversible tool without --confirm) is the command line's.
        with front_end("cli"):
            return prepare_call(settings.learnings(), site_id, tool, args_json, pairs, options)
    except EgoError as exc:
        sys.exit(settings.output.error(exc))


def prepare_call(
    learnings: Learnings,
    site_id: str,
    tool: str,
    args_json: str | None,
    pairs: tuple[str, ...],
    options: CallOptions,
) -> ToolCall:
    """Every check of a command line's tool call that needs no browser.

    The site, the tool, the confirmation (``resolve``), then the args read by the tool's
    schema (``--arg k=v`` takes the type the schema gives ``k``) and checked against it, and
    the tool's code loaded (``bind``).

    Raises:
        click.BadParameter: ``--args`` is not a JSON object or an ``--arg`` is not ``k=v``.
        EgoError: everything :func:`ego.calls.resolve` and :func:`ego.calls.bind` raise.
    """
    from ..calls import bind, resolve

    ref = resolve(learnings, site_id, tool, options)
    return bind(learnings, ref, parse_args(args_json, pairs, ref.spec.args))


async def run_prepared(
    site: Site,
    call: ToolCall,
    url: str | None,
    start_urls: tuple[tuple[str, str], ...],
    output: Output | None = None,
) -> Any:
    """Run a command line's prepared call: ``--start-url`` set, ``--url`` opened, the call
    made, with progress on ``output``'s terminal.

    Raises:
        EgoError: everything :meth:`ego.site.Site.run_call` and ``Browser.new_tab`` raise.
    """
    site.profile_hint = RUN_PROFILE_HINT
    for start_site, start_url in start_urls:
        site.set_start_url(start_site, start_url)
    tab = None
    if url:
        with _progress(output, f"loading {url}"):
            tab = await site.browser.new_tab(url)
    with _progress(output, f"running {call.ref.subject}"):
        return await site.run_call(call, tab)


def _progress(output: Output | None, label: str) -> contextlib.AbstractContextManager[None]:
    return contextlib.nullcontext() if output is None else output.progress(label)


def compact_text(context: CompactContext) -> str:
    """The compact learn_context as ``ego tools`` prints it."""
    return context.text(
        tools_header=lambda site_id: (
            f"tools (ego run {site_id} NAME --args JSON; * required, =example):"
        ),
        skills_header=lambda domain: f"{domain} skills (ego skill run {domain}/NAME --args JSON):",
        notes_header="notes (ego tools URL --full prints them whole):",
    )


def context_text(context: LearnContext) -> str:
    """The full learn_context as ``ego tools --full`` prints it: per site its description,
    every tool with its whole description, args and returns schemas, a command line to
    paste and its health record, then its notes in full; then the skills alike."""
    if not context.matched:
        return f"no learnings match {context.url}"
    lines: list[str] = []
    for site in context.sites:
        start = f" {site.start_url}" if site.start_url else ""
        lines += [f"{site.name} ({site.site_id}){start}, matched {site.matched_domain}"]
        lines += _indented(site.description, 2)
        for tool in site.tools:
            lines += ["", *_tool_text(tool)]
        for note in site.notes:
            lines += ["", f"note {note.path}: {note.title}", *_indented(note.text.strip(), 2)]
        lines.append("")
    for skill in context.skills:
        lines += [*_tool_text(skill), ""]
    return "\n".join(lines).rstrip()


def _tool_text(tool: ToolInfo) -> list[str]:
    kind = "skill" if tool.kind == "skill" else f"{tool.kind} tool"
    lines = [f"{kind} {tool.tool_name} ({tool.side_effect}, auth {tool.auth})"]
    lines += _indented(tool.description, 2)
    if not tool.runnable:
        return [*lines, f"  not runnable here: {tool.reason}"]
    lines += ["  args:", *_indented(_schema_text(tool.args), 4)]
    if tool.returns is not None:
        lines += ["  returns:", *_indented(_schema_text(tool.returns), 4)]
    lines.append(f"  example: {cli_example(tool)}")
    if tool.health is not None:
        hint = f"; {heal_hint(tool.site_id, tool.tool_name)}" if tool.health.suspect else ""
        lines.append(f"  health: {tool.health.line()}{hint}")
    return lines


def cli_example(tool: ToolInfo) -> str:
    """The command line that runs ``tool`` with example args."""
    import shlex

    from ..learning.describe.context import example_args

    args = example_args(tool.args) if isinstance(tool.args, dict) else {}
    if tool.kind == "skill":
        words = ["ego", "skill", "run", f"{tool.site_id}/{tool.tool_name}"]
    else:
        words = ["ego", "run", tool.site_id, tool.tool_name]
    if args:
        words += ["--args", orjson.dumps(args).decode()]
    if tool.side_effect == "irreversible":
        words.append("--confirm")
    return shlex.join(words)


def _schema_text(schema: Any) -> str:
    return orjson.dumps(schema, option=orjson.OPT_INDENT_2).decode()


def _indented(text: str, width: int) -> list[str]:
    return [" " * width + line if line else "" for line in text.splitlines()]


@click.command()
@json_option
@pass_settings
def sites(settings: Settings) -> None:
    """Every site (and skill), valid or not; invalid ones say why.

    A tool that has run shows its health on a line of its own (see `ego health`).
    """
    from ..learning.describe.context import summarize_site
    from ..learning.health.view import ran_tools
    from ..protocol.gc_pause import gc_paused
    from ..skills import catalog_for
    from ..skills.catalog import SkillSummary

    learnings = settings.learnings()
    ran = ran_tools()
    # Objects for every site that last to the end (protocol/gc_pause.py): with 10,000 sites
    # the collector would walk every manifest again and again.
    with gc_paused(lasting=True):
        summaries = [summarize_site(entry, learnings, ran) for entry in learnings.sites()]
        skills = [SkillSummary.of(entry) for entry in catalog_for(learnings).entries()]
        data = {
            "sites": [s.model_dump(mode="json") for s in summaries],
            "skills": [s.model_dump(mode="json") for s in skills],
        }

    def human(_: Any) -> str:
        lines = [_sites_text(summaries), "", "skills:"]
        for skill in skills:
            if skill.valid:
                lines.append(f"  {skill.skill_id:36} {skill.side_effect:12} {skill.description}")
            else:
                lines.append(f"  {skill.skill_id:36} INVALID: {'; '.join(skill.problems)}")
        return "\n".join(lines)

    for summary in summaries:
        if summary.warning:
            click.echo(f"warning: {summary.warning}", err=True)
    settings.output.result(data, human)


def _sites_text(summaries: list[SiteSummary]) -> str:
    lines = []
    for summary in summaries:
        if summary.valid:
            tools = ", ".join([*summary.browser_tools, *summary.python_tools])
            source: str = summary.source
            if summary.pack:
                source = f"pack {summary.pack} {summary.pack_version}"
            line = f"{summary.site_id:16} {summary.name}  [{tools}]  ({source})"
            if summary.node_tools:
                line += f"  (not runnable here: {', '.join(summary.node_tools)})"
            lines.append(line)
            lines += [
                f"  {name}: {health.line()}"
                + (f"; {heal_hint(summary.site_id, name)}" if health.suspect else "")
                for name, health in summary.health.items()
            ]
        else:
            lines.append(f"{summary.site_id:16} INVALID: {'; '.join(summary.problems)}")
    return "\n".join(lines) or "no sites"


@click.command()
@click.argument("site_id")
@click.argument("tool", required=False)
@args_options("Tool args", "arg", "the tool's")
@click.option("--confirm", is_flag=True, help="Allow an irreversible tool to run.")
@click.option("--url", help="Open this page first (else a matching tab or the site's start URL).")
@click.option("--profile", help="Persistent profile to launch with.")
@click.option(
    "--headed", is_flag=True, help="Run in a Chrome with a window, to watch (with --slow-mo)."
)
@click.option(
    "--slow-mo",
    type=click.FloatRange(min=0),
    default=0,
    metavar="MS",
    help="Pause this many milliseconds before each input and navigation, to follow the run.",
)
@click.option("--timeout", type=float, help="Seconds the tool may run.")
@click.option("--no-cache", is_flag=True, help="Do not use the localStorage cache.")
@click.option(
    "--storage-state",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="Run logged in with this saved login (ego login SITE --save-state FILE), in a "
    "browser context of its own.",
)
@storage_state_bounds_options
@trace_option
@common
@pass_settings
def run(
    settings: Settings,
    site_id: str,
    tool: str | None,
    args_json: str | None,
    pairs: tuple[str, ...],
    confirm: bool,
    url: str | None,
    profile: str | None,
    headed: bool,
    slow_mo: float,
    timeout: float | None,
    no_cache: bool,
    storage_state: Path | None,
    max_state_mb: int,
    max_state_items: int,
    trace_path: Path | None,
    trace_options: dict[str, Any],
) -> None:
    """Run TOOL of SITE_ID (a browser or a Python tool) and print its result.

    Site, tool, args and --confirm are checked before a browser starts. With
    --storage-state the tool runs in a browser context of its own, loaded with that login
    (and closed after), whichever browser the command uses. --headed runs it in a Chrome
    with a window (the kept browser when it has one) and --slow-mo MS pauses before each
    input and navigation, so that a person can watch. Without TOOL, lists the site's tools.

    With --trace FILE the run is traced (the page's steps, a screenshot after each, its
    requests and console, the tool's result or error), secrets redacted, into FILE (0600,
    at most --trace-max-size); `ego show-trace FILE` shows it.
    """
    if tool is None:
        sys.exit(_missing_tool(settings, site_id))
    start_urls = settings.start_urls(site_id)
    url = as_url(url) if url else None
    if storage_state is None and trace_path is None and not (headed or slow_mo):
        # Through the browser `ego launch` keeps, when it serves calls: no imports, no attach.
        from .call_client import run_through_service

        words = (site_id, tool, args_json, pairs, confirm, timeout, not no_cache, url, start_urls)
        code = run_through_service(settings, profile, *words)
        if code is not None:
            sys.exit(code)
    from ..calls import CallOptions

    options = CallOptions(timeout=timeout, confirm=confirm, cache=not no_cache)
    call = checked_call(settings, site_id, tool, args_json, pairs, options)

    subject = f"ego run {site_id} {tool}"

    async def go() -> Any:
        state = None
        if storage_state is not None:
            from ..page.storage_state import read_storage_state

            # Read within the bounds before a browser starts: a bad file costs nothing.
            bounds = state_bounds(max_state_mb, max_state_items)
            state = read_storage_state(storage_state, **bounds)
        async with settings.browser(
            profile=profile, headless=not headed, site_id=site_id, slow_mo=slow_mo
        ) as browser:
            if state is None:
                async with traced(browser, trace_path, trace_options, subject, settings.output):
                    return await run_prepared(browser.site, call, url, start_urls, settings.output)
            async with (
                await browser.new_context(storage_state=state) as context,
                traced(context, trace_path, trace_options, subject, settings.output),
            ):
                return await run_prepared(context.site, call, url, start_urls, settings.output)

    result = run_async(settings, go())
    settings.output.result(result)


def _missing_tool(settings: Settings, site_id: str) -> int:
    """Say which tools SITE_ID has when a command line names none; the exit code."""
    try:
        manifest = settings.learnings().site(site_id)
    except EgoError as exc:
        return settings.output.error(exc)
    names = [*manifest.browser_tools, *manifest.python_tools]
    return settings.output.error(
        click.UsageError(
            f"missing argument TOOL: {site_id}'s tools are {', '.join(names) or 'none'} "
            f"(`ego catalog show {site_id}` describes each)"
        )
    )


@click.command()
@click.argument("path", required=False, type=click.Path(exists=True, path_type=Path))
@json_option
@pass_settings
def validate(settings: Settings, path: Path | None) -> None:
    """Check manifests, paths, schemas and skills; one line per problem.

    PATH may be a site folder, a learnings folder, or a workspace holding learnings/ (and
    skills/). Without PATH every root is checked. Exits 3 when anything is wrong; warnings
    (tools ego lists but cannot run) do not change the exit code.
    """
    from ..checks import validate_path

    found = validate_path(path, workspace=settings.workspace)
    problems = [str(problem) for problem in found if not problem.warning]
    warnings = [str(problem) for problem in found if problem.warning]
    if settings.output.json:
        settings.output.result({"ok": not problems, "problems": problems, "warnings": warnings})
    else:
        for line in [*problems, *warnings]:
            click.echo(line)
        summary = f"{len(problems)} problem(s)" if problems else "all valid"
        click.echo(summary + (f", {len(warnings)} warning(s)" if warnings else ""), err=True)
    sys.exit(EXIT_TOOL if problems else EXIT_OK)
