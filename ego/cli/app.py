"""The ``ego`` command. Each command calls the same functions an agent script does.

A command's module is imported when that command runs (or help lists it), not before: ``ego
run`` does not pay for importing the recorder, the batch runner or the MCP server.
"""

from __future__ import annotations

import importlib
import os

import click
from click.core import ParameterSource

from .common import Settings, accept_global_options

__all__ = ["COMMANDS", "Settings", "cli", "main"]

#: Every command: its name -> (module in ego.cli, attribute).
COMMANDS: dict[str, tuple[str, str]] = {
    "launch": ("browser_commands", "launch"),
    "close": ("browser_commands", "close"),
    "login": ("browser_commands", "login"),
    "tabs": ("browser_commands", "tabs"),
    "tools": ("learning_commands", "tools"),
    "sites": ("learning_commands", "sites"),
    "run": ("learning_commands", "run"),
    "skill": ("skill_commands", "skill"),
    "validate": ("learning_commands", "validate"),
    "script": ("script_command", "script"),
    "shell": ("shell_command", "shell"),
    "doctor": ("doctor_command", "doctor"),
    "demo": ("demo_command", "demo"),
    "mcp": ("mcp_command", "mcp"),
    "batch": ("batch_command", "batch"),
    "save-tool": ("save_commands", "save_tool"),
    "save-note": ("save_commands", "save_note"),
    "history": ("save_commands", "history"),
    "restore": ("save_commands", "restore"),
    "record": ("replay_commands", "record"),
    "test": ("replay_commands", "test"),
    "pack": ("pack_commands", "pack"),
    "catalog": ("catalog_commands", "catalog"),
}


class _Group(click.Group):
    """The ``ego`` group: imports a command when it is asked for; each command added also
    takes the global options after its name."""

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        accept_global_options(cmd)
        super().add_command(cmd, name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module, attribute = COMMANDS[cmd_name]
            command = getattr(importlib.import_module(f"{__package__}.{module}"), attribute)
            self.add_command(command, cmd_name)
        return self.commands.get(cmd_name)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--endpoint",
    envvar="EGO_ENDPOINT",
    metavar="URL",
    help="Attach to this browser (http://host:port or ws://...) instead of the one "
    "`ego launch` keeps or a new one.",
)
@click.option(
    "--new-browser",
    is_flag=True,
    envvar="EGO_NEW_BROWSER",
    help="Start a fresh Chrome even when `ego launch` keeps one.",
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
    metavar="DIR",
    type=click.Path(file_okay=False),
    help="Agent workspace whose learnings/ and skills/ come first.",
)
@click.version_option(package_name="ego")
@click.pass_context
def cli(
    ctx: click.Context,
    endpoint: str | None,
    new_browser: bool,
    json_mode: bool | None,
    workspace: str | None,
) -> None:
    """ego: run site learnings in a real Chrome over the DevTools Protocol.

    The options above work before or after a command's name. Commands that need a browser
    attach to --endpoint, else to the one `ego launch` keeps, else start a fresh Chrome.
    """
    settings = Settings(endpoint, json_mode, workspace, new_browser)
    if endpoint and ctx.get_parameter_source("endpoint") == ParameterSource.ENVIRONMENT:
        settings.endpoint_source = "EGO_ENDPOINT"
    ctx.obj = settings


def main() -> None:
    """Console entry point."""
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    cli(prog_name="ego")
