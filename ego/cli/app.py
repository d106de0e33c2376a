"""The ``ego`` command. Each command calls the same functions an agent script does."""

from __future__ import annotations

import asyncio
import os
import runpy
import sys
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

import click
import orjson

from .. import api
from ..api import Browser
from ..errors import EgoError
from ..learning.context import LearnContext, SiteSummary
from ..site import context_for
from ..tab import Tab
from .batch_command import batch
from .common import (
    Settings,
    common,
    endpoint_option,
    json_option,
    parse_args,
    pass_settings,
    run_async,
)
from .output import EXIT_OK, EXIT_TOOL
from .replay_commands import REPLAY_COMMANDS
from .save_commands import SAVE_COMMANDS

__all__ = ["cli", "main"]

T = TypeVar("T")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--endpoint",
    envvar="EGO_ENDPOINT",
    help="Attach to this browser (http://host:port or ws://...) instead of launching one.",
)
@click.option(
    "--json/--no-json",
    "json_mode",
    default=None,
    help="JSON output (the default when stdout is not a terminal).",
)
@click.option(
    "--workspace",
    envvar="EGO_WORKSPACE",
    type=click.Path(file_okay=False),
    help="Agent workspace whose learnings/ and skills/ come first.",
)
@click.version_option(package_name="ego")
@click.pass_context
def cli(
    ctx: click.Context, endpoint: str | None, json_mode: bool | None, workspace: str | None
) -> None:
    """ego: run site learnings in a real Chrome over the DevTools Protocol."""
    ctx.obj = Settings(endpoint, json_mode, workspace)


# -- browser -----------------------------------------------------------------------------


@cli.command()
@click.option(
    "--profile",
    default="default",
    show_default=True,
    help="Persistent profile under chrome_profiles/.",
)
@click.option("--headed", is_flag=True, help="Open a real window.")
@json_option
@pass_settings
def launch(settings: Settings, profile: str, headed: bool) -> None:
    """Start Chrome with a persistent profile and print the endpoint to attach to.

    Chrome runs until you press Ctrl+C or close it; other commands and scripts attach with
    --endpoint.
    """

    async def go() -> None:
        with settings.output.progress("starting Chrome"):
            browser = await api.launch(profile=profile, headless=not headed)
        assert browser.process is not None
        info = {
            "endpoint": _http_endpoint(browser),
            "websocket": browser.endpoint,
            "profile": str(browser.process.user_data_dir),
            "pid": browser.process.pid,
        }
        settings.output.result(
            info,
            lambda data: (
                f"Chrome is running (pid {data['pid']}, profile {data['profile']}).\n"
                f"Attach with: --endpoint {data['endpoint']}\nPress Ctrl+C to stop it."
            ),
            one_line=True,
        )
        sys.stdout.flush()
        try:
            await _closed(browser)
        finally:
            await browser.close()

    run_async(settings, go())


@cli.command()
@click.argument("site_id")
@click.option("--profile", default="default", show_default=True, help="Profile to log in with.")
@click.option("--url", help="Page to open instead of the site's start URL.")
@click.option("--headless", is_flag=True, help="No window (for machines without a display).")
@json_option
@pass_settings
def login(settings: Settings, site_id: str, profile: str, url: str | None, headless: bool) -> None:
    """Open a window on SITE_ID's page so that a person can log in by hand.

    The session is kept in the profile; close the window (or press Ctrl+C) when done.
    """

    async def go() -> None:
        manifest = settings.learnings().site(site_id)
        start = url or manifest.start_url
        if not start:
            raise click.UsageError(f"site {site_id!r} has no startUrl: pass --url")
        async with settings.browser(profile=profile, headless=headless) as browser:
            tab = await browser.new_tab(start, wait_until="domcontentloaded")
            settings.output.result(
                {
                    "site": site_id,
                    "url": start,
                    "profile": profile,
                    "tab": tab.target_id,
                    "endpoint": settings.endpoint or _http_endpoint(browser),
                },
                f"Log in to {manifest.name} in the window, then close it (profile {profile}).",
                one_line=True,
            )
            sys.stdout.flush()
            await _closed(browser)

    run_async(settings, go())


def _http_endpoint(browser: Browser) -> str:
    """``http://127.0.0.1:PORT`` of a launched browser (what ``--endpoint`` takes)."""
    port = browser.endpoint.split(":")[2].split("/")[0]
    return f"http://127.0.0.1:{port}"


async def _closed(browser: Browser) -> None:
    """Wait until the browser goes away (its window closed, Chrome quit, Ctrl+C)."""
    closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def done() -> None:
        if not closed.done():
            closed.set_result(None)

    browser.connection.on_close(done)
    await closed


@cli.command()
@common
@pass_settings
def tabs(settings: Settings) -> None:
    """List the open tabs."""

    async def go() -> list[dict[str, str]]:
        async with settings.browser() as browser:
            return [_tab_row(tab) for tab in await browser.tabs()]

    rows = run_async(settings, go())
    settings.output.result(
        rows,
        lambda data: (
            "\n".join(f"{row['id'][:8]}  {row['title'][:40]:40}  {row['url']}" for row in data)
            or "no tabs"
        ),
    )


def _tab_row(tab: Tab) -> dict[str, str]:
    return {"id": tab.target_id, "url": tab.url, "title": tab.title}


# -- learnings ---------------------------------------------------------------------------


@cli.command()
@click.argument("url")
@json_option
@pass_settings
def tools(settings: Settings, url: str) -> None:
    """What learn_context says for URL: matching sites, notes and tools."""
    context = context_for(settings.learnings(), url)
    settings.output.result(context.model_dump(mode="json"), lambda _: _context_text(context))


def _context_text(context: LearnContext) -> str:
    if not context.matched:
        return f"no learnings match {context.url}"
    lines = []
    for site in context.sites:
        lines.append(f"{site.name} ({site.site_id}, matched {site.matched_domain})")
        for note in site.notes:
            lines.append(f"  note  {note.path}: {note.title}")
        for tool in site.tools:
            lines.append(f"  {tool.kind:7} {tool.tool_name}: {tool.description}")
            lines.append(f"          {tool.example}")
    return "\n".join(lines)


@cli.command()
@json_option
@pass_settings
def sites(settings: Settings) -> None:
    """Every site (and skill), valid or not; invalid ones say why."""
    from ..learning.context import summarize_site
    from ..skills import catalog_for
    from ..skills.catalog import SkillSummary

    learnings = settings.learnings()
    summaries = [summarize_site(entry) for entry in learnings.sites()]
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

    settings.output.result(data, human)


def _sites_text(summaries: list[SiteSummary]) -> str:
    lines = []
    for summary in summaries:
        if summary.valid:
            tools = ", ".join([*summary.browser_tools, *summary.python_tools])
            line = f"{summary.site_id:16} {summary.name}  [{tools}]"
            if summary.node_tools:
                line += f"  (not runnable here: {', '.join(summary.node_tools)})"
            lines.append(line)
        else:
            lines.append(f"{summary.site_id:16} INVALID: {'; '.join(summary.problems)}")
    return "\n".join(lines) or "no sites"


@cli.command()
@click.argument("site_id")
@click.argument("tool")
@click.option("--args", "args_json", help="Tool args as a JSON object.")
@click.option(
    "--arg",
    "pairs",
    multiple=True,
    metavar="K=V",
    help="One arg (V parsed as JSON when it can be).",
)
@click.option("--confirm", is_flag=True, help="Allow an irreversible tool to run.")
@click.option("--url", help="Open this page first (else a matching tab or the site's start URL).")
@click.option("--profile", help="Persistent profile to launch with.")
@click.option("--timeout", type=float, help="Seconds the tool may run.")
@click.option("--no-cache", is_flag=True, help="Do not use the localStorage cache.")
@common
@pass_settings
def run(
    settings: Settings,
    site_id: str,
    tool: str,
    args_json: str | None,
    pairs: tuple[str, ...],
    confirm: bool,
    url: str | None,
    profile: str | None,
    timeout: float | None,
    no_cache: bool,
) -> None:
    """Run TOOL of SITE_ID (a browser or a Python tool) and print its result."""
    args = parse_args(args_json, pairs)

    async def go() -> Any:
        async with settings.browser(profile=profile) as browser:
            tab = None
            if url:
                with settings.output.progress(f"loading {url}"):
                    tab = await browser.new_tab(url)
            with settings.output.progress(f"running {site_id}/{tool}"):
                return await browser.site.run_tool(
                    site_id,
                    tool,
                    args,
                    tab=tab,
                    timeout=timeout,
                    confirm=confirm,
                    cache=not no_cache,
                )

    result = run_async(settings, go())
    settings.output.result(result)


@cli.group()
def skill() -> None:
    """SKILL.md skills: run, export, import."""


@skill.command("run")
@click.argument("skill_id", metavar="DOMAIN/TASK")
@click.option("--args", "args_json", help="Params as a JSON object.")
@click.option(
    "--arg",
    "pairs",
    multiple=True,
    metavar="K=V",
    help="One param (V parsed as JSON when it can be).",
)
@click.option("--confirm", is_flag=True, help="Allow an irreversible skill to run.")
@click.option("--url", help="Use this page (scheme, host and port) instead of the skill's url.")
@click.option("--profile", help="Persistent profile to launch with.")
@click.option("--timeout", type=float, help="Seconds the extractor may run.")
@common
@pass_settings
def skill_run(
    settings: Settings,
    skill_id: str,
    args_json: str | None,
    pairs: tuple[str, ...],
    confirm: bool,
    url: str | None,
    profile: str | None,
    timeout: float | None,
) -> None:
    """Run a skill by its catalog id and print its result."""
    params = parse_args(args_json, pairs)

    async def go() -> Any:
        async with settings.browser(profile=profile) as browser:
            if url:
                browser.site.set_start_url(skill_id.partition("/")[0], url)
            with settings.output.progress(f"running {skill_id}"):
                return await browser.site.run_skill(
                    skill_id, params, confirm=confirm, timeout=timeout
                )

    settings.output.result(run_async(settings, go()))


@skill.command("export")
@click.argument("ref", metavar="SITE/TOOL|DOMAIN/TASK")
@click.option(
    "--out", type=click.Path(dir_okay=False, path_type=Path), help="Write here instead of stdout."
)
@click.option("--args", "args_json", help="Params for the Call snippet (default: examples).")
@pass_settings
def skill_export(settings: Settings, ref: str, out: Path | None, args_json: str | None) -> None:
    """Print a portable SKILL.md (with Call and Store snippets) for a browser tool or skill."""
    from ..skills import export_skill

    try:
        text = export_skill(
            ref, learnings=settings.learnings(), params=parse_args(args_json, ()) or None
        )
    except EgoError as exc:
        sys.exit(settings.output.error(exc))
    if out is None:
        click.echo(text, nl=False)
    else:
        out.write_text(text, encoding="utf-8")
        settings.output.info(f"wrote {out}")


@skill.command("import")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--overwrite", is_flag=True, help="Replace a skill with the same id.")
@json_option
@pass_settings
def skill_import(settings: Settings, path: Path, overwrite: bool) -> None:
    """Import a SKILL.md into the workspace's skills/ (needs --workspace or EGO_WORKSPACE)."""
    from ..skills import import_skill

    if not settings.workspace:
        raise click.UsageError("importing needs a workspace: pass --workspace or set EGO_WORKSPACE")
    try:
        folder = import_skill(path, settings.workspace, overwrite=overwrite)
    except EgoError as exc:
        sys.exit(settings.output.error(exc))
    settings.output.result({"imported": str(folder)}, f"imported into {folder}")


@cli.command()
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


# -- scripts and diagnostics --------------------------------------------------------------


@cli.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--url", help="Open this page in the tab first.")
@click.option("--profile", help="Persistent profile to launch with.")
@endpoint_option
@pass_settings
def script(settings: Settings, file: Path, url: str | None, profile: str | None) -> None:
    """Run an agent script with `browser`, `tab` and `site` ready.

    The script is plain Python; it may define `async def main(browser, tab, site)`, which is
    awaited, or use top-level `await` inside such a function only.
    """

    async def go() -> None:
        async with settings.browser(profile=profile) as browser:
            tab = await browser.new_tab(url) if url else await browser.new_tab()
            namespace = runpy.run_path(
                str(file),
                init_globals={"browser": browser, "tab": tab, "site": browser.site},
                run_name="__ego_script__",
            )
            entry = namespace.get("main")
            if callable(entry):
                result = entry(browser, tab, browser.site)
                if isinstance(result, Awaitable):
                    await result

    run_async(settings, go())


@cli.command()
@json_option
@pass_settings
def doctor(settings: Settings) -> None:
    """Say what Chrome was found, its version, whether it starts here, and where things live."""
    from ..protocol.chrome import find_chrome, profiles_root

    report: dict[str, Any] = {"python": sys.version.split()[0]}
    learnings = settings.learnings()
    report["learnings_roots"] = [str(root) for root in learnings.roots]
    report["profiles"] = str(profiles_root())
    try:
        report["chrome"] = find_chrome()
    except EgoError as exc:
        report["chrome"] = None
        report["problem"] = str(exc)

    async def probe() -> None:
        async with api.launch() as browser:
            version = await browser.version()
            report["chrome_version"] = version.get("product")
            report["starts"] = True

    if report["chrome"]:
        try:
            with settings.output.progress("starting Chrome"):
                asyncio.run(probe())
        except EgoError as exc:
            report["starts"] = False
            report["problem"] = str(exc)
    settings.output.result(report, lambda data: "\n".join(f"{k:16} {v}" for k, v in data.items()))
    if not report.get("starts"):
        sys.exit(4)


@cli.command()
@click.option(
    "--port", default=0, show_default=True, help="Port for the demo shop (0: any free one)."
)
@common
@pass_settings
def demo(settings: Settings, port: int) -> None:
    """Serve the bundled demo shop, launch Chrome, show learn_context and run its tools."""
    from ..demo import DemoServer
    from ..demo.tour import tour

    async def go() -> tuple[LearnContext, list[Any]]:
        with DemoServer(port=port) as shop:
            settings.output.info(f"demo shop at {shop.url}")
            async with settings.browser() as browser:
                with settings.output.progress("running the demo shop's tools"):
                    return await tour(browser, shop.url)

    context, steps = run_async(settings, go())
    data = {"learn_context": context.model_dump(mode="json"), "steps": [s.as_dict() for s in steps]}

    def human(_: Any) -> str:
        lines = ["learn_context:", _context_text(context), "", "runs:"]
        for step in steps:
            mark = "ok " if step.ok else "-- "
            lines.append(
                f"{mark} {step.call}  [{step.ms:.1f} ms{', ' + step.note if step.note else ''}]"
            )
            lines.append(f"      {_short(step.result)}")
        return "\n".join(lines)

    settings.output.result(data, human)


def _short(value: Any, limit: int = 160) -> str:
    text = orjson.dumps(value, default=str).decode() if not isinstance(value, str) else value
    return text if len(text) <= limit else text[: limit - 1] + "…"


@cli.command()
@click.option("--profile", help="Persistent profile to launch with (default: a temporary one).")
@click.option("--headed", is_flag=True, help="Open a real window.")
@endpoint_option
@pass_settings
def mcp(settings: Settings, profile: str | None, headed: bool) -> None:
    """Serve ego's tools to an MCP client over stdio.

    Chrome starts on the first tool call (or --endpoint is attached) and ends when the
    client disconnects.
    """
    from ..mcp import serve

    run_async(
        settings,
        serve(
            endpoint=settings.endpoint,
            profile=profile,
            headless=not headed,
            learnings=settings.learnings(),
        ),
    )


def main() -> None:
    """Console entry point."""
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    cli(prog_name="ego")


cli.add_command(batch)
for _command in (*SAVE_COMMANDS, *REPLAY_COMMANDS):
    cli.add_command(_command)
