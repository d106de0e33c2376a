"""The ``ego`` command. Each command calls the same functions an agent script does."""

from __future__ import annotations

import os

import click

from .batch_command import batch
from .browser_commands import launch, login, tabs
from .common import Settings
from .demo_command import demo
from .doctor_command import doctor
from .learning_commands import run, sites, tools, validate
from .mcp_command import mcp
from .replay_commands import REPLAY_COMMANDS
from .save_commands import SAVE_COMMANDS
from .script_command import script
from .skill_commands import skill

__all__ = ["cli", "main"]


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


def main() -> None:
    """Console entry point."""
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    cli(prog_name="ego")


for _command in (
    launch,
    login,
    tabs,
    tools,
    sites,
    run,
    skill,
    validate,
    script,
    doctor,
    demo,
    mcp,
    batch,
    *SAVE_COMMANDS,
    *REPLAY_COMMANDS,
):
    cli.add_command(_command)
