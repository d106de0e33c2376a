"""``ego skill run|export|import``: SKILL.md skills."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ..errors import EgoError
from .common import (
    Settings,
    args_options,
    common,
    json_option,
    parse_args,
    pass_settings,
    run_async,
)
from .learning_commands import CLI_PROFILE_HINT

__all__ = ["skill"]


@click.group()
def skill() -> None:
    """SKILL.md skills: run, export, import."""


@skill.command("run")
@click.argument("skill_id", metavar="DOMAIN/TASK")
@args_options("Params", "param", "the skill's")
@click.option("--confirm", is_flag=True, help="Allow an irreversible skill to run.")
# The spelling before --start-url, kept for scripts: a bare --start-url for the skill.
@click.option("--url", hidden=True)
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
    """Run a skill by its catalog id and print its result.

    The skill, its params and --confirm are checked before a browser starts. --start-url
    URL opens it on URL's scheme, host and port instead of the skill's url.
    """
    from ..skills import catalog_for, prepare_skill

    try:
        catalog = catalog_for(settings.learnings())
        found = catalog.skill(skill_id)
        params = parse_args(args_json, pairs, found.params)
        prepare_skill(catalog, skill_id, params, confirm=confirm)
    except EgoError as exc:
        sys.exit(settings.output.error(exc))

    if url:
        settings.start_url_values.append(url)
    domain = skill_id.partition("/")[0]

    async def go() -> Any:
        # A skill's start URL is set under its domain (a bare --start-url is for it).
        async with settings.browser(profile=profile, site_id=domain) as browser:
            browser.site.profile_hint = CLI_PROFILE_HINT
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
