"""The ``ego`` command. Each command calls the same functions an agent script does.

A command's module is imported when that command runs (or help lists it), not before: ``ego
run`` does not pay for importing the recorder, the batch runner or the MCP server.
"""

from __future__ import annotations

import importlib
import os

import click
from click.core import ParameterSource

from .. import __version__
from .common import START_URL_HELP, Settings, accept_global_options

__all__ = ["COMMANDS", "Settings", "cli", "main"]

#: Every command: its name -> (module in ego.cli, attribute, the first paragraph of its
#: help). The summary lets ``ego --help`` list the commands without importing any of
#: them; tests/test_cli_startup.py holds each one to its command's own help.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "launch": (
        "browser_commands",
        "launch",
        "Start Chrome with a persistent profile and keep it for the commands that follow.",
    ),
    "close": (
        "browser_commands",
        "close",
        "End the browser `ego launch` keeps (and say so when there is none).",
    ),
    "login": (
        "browser_commands",
        "login",
        "Open a window on SITE_ID's page so that a person can log in by hand.",
    ),
    "tabs": (
        "browser_commands",
        "tabs",
        "List the open tabs.",
    ),
    "tools": (
        "learning_commands",
        "tools",
        "What learn_context says for URL, in a few lines; --full for everything.",
    ),
    "sites": (
        "learning_commands",
        "sites",
        "Every site (and skill), valid or not; invalid ones say why.",
    ),
    "run": (
        "learning_commands",
        "run",
        "Run TOOL of SITE_ID (a browser or a Python tool) and print its result.",
    ),
    "skill": (
        "skill_commands",
        "skill",
        "SKILL.md skills: run, export, import.",
    ),
    "validate": (
        "learning_commands",
        "validate",
        "Check manifests, paths, schemas and skills; one line per problem.",
    ),
    "script": (
        "script_command",
        "script",
        "Run an agent script with `browser`, `tab` and `site` ready.",
    ),
    "shell": (
        "shell_command",
        "shell",
        "An asyncio Python prompt with `browser`, `tab` and `site` ready (top-level await works).",
    ),
    "doctor": (
        "doctor_command",
        "doctor",
        "Say what Chrome was found, its version, whether it starts here, and where things live.",
    ),
    "demo": (
        "demo_command",
        "demo",
        "Serve the bundled demo shop, launch Chrome, show learn_context and run its tools.",
    ),
    "mcp": (
        "mcp_command",
        "mcp",
        "Serve ego's tools to MCP clients, over stdio (or HTTP with --http).",
    ),
    "batch": (
        "batch_command",
        "batch",
        "Run TOOL of SITE_ID once per line of --input, over a pool of browsers.",
    ),
    "save-tool": (
        "save_commands",
        "save_tool",
        "Check TOOL's JavaScript and keep it in SITE_ID of the agent workspace's learnings.",
    ),
    "save-note": (
        "save_commands",
        "save_note",
        "Keep a note (markdown) as notes/NAME.md of SITE_ID in the agent workspace.",
    ),
    "history": (
        "save_commands",
        "history",
        "List TOOL's versions: the current one, then the kept ones, newest first.",
    ),
    "restore": (
        "save_commands",
        "restore",
        "Bring back VERSION of TOOL (from `ego history`); the current one is kept.",
    ),
    "health": (
        "health_command",
        "health",
        "Runs, ok, failures, the last failure and whether each tool version is suspect.",
    ),
    "record": (
        "replay_commands",
        "record",
        "Record what URL loads into a HAR 1.2 file (no session secrets unless asked).",
    ),
    "test": (
        "replay_commands",
        "test",
        "Run the learnings' offline test cases (tests/cases.json + HAR) against replayed pages.",
    ),
    "suggest": (
        "loop_commands",
        "suggest",
        "Draft a browser tool per JSON endpoint of SITE from recordings (--har), or keep drafts.",
    ),
    "heal": (
        "loop_commands",
        "heal",
        "Find out why TOOL of SITE fails and open a tested candidate version.",
    ),
    "pack": (
        "pack_commands",
        "pack",
        "Learning packs: build sites into a wheel, list and verify the installed ones.",
    ),
    "show-trace": (
        "trace_commands",
        "show_trace",
        "Write the viewer of TRACE: one HTML file that shows it offline, nothing fetched.",
    ),
    "report": (
        "report_command",
        "report",
        "A page of every tool's health per version over time, its failures and their traces.",
    ),
    "catalog": (
        "catalog_commands",
        "catalog",
        "Search the tools and notes of every site (workspace, packs, bundled); show one.",
    ),
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
            module, attribute, _ = COMMANDS[cmd_name]
            command = getattr(importlib.import_module(f"{__package__}.{module}"), attribute)
            self.add_command(command, cmd_name)
        return self.commands.get(cmd_name)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            import difflib

            close = difflib.get_close_matches(name, self.list_commands(ctx), n=3, cutoff=0.6)
            hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            ctx.fail(f"No such command {name!r}.{hint} `ego --help` lists the commands.")
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # As click lists commands, from the summaries: no command module is imported.
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            loaded = self.commands.get(name)
            if loaded is not None:
                rows.append((name, loaded.get_short_help_str(limit)))
            else:
                # A bare command with the same help shortens it as the real one would.
                summary = click.Command(name, help=COMMANDS[name][2])
                rows.append((name, summary.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


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
@click.option(
    "--start-url",
    "start_urls",
    multiple=True,
    envvar="EGO_START_URL",
    metavar="[SITE=]URL",
    help=START_URL_HELP,
)
# The version as ego writes it, not looked up in the installed metadata (slow to scan).
@click.version_option(version=__version__, prog_name="ego")
@click.pass_context
def cli(
    ctx: click.Context,
    endpoint: str | None,
    new_browser: bool,
    json_mode: bool | None,
    workspace: str | None,
    start_urls: tuple[str, ...],
) -> None:
    """ego: run site learnings in a real Chrome over the DevTools Protocol.

    The options below work before or after a command's name. Commands that need a browser
    attach to --endpoint, else to the one `ego launch` keeps, else start a fresh Chrome.
    """
    settings = Settings(endpoint, json_mode, workspace, new_browser, start_urls)
    if endpoint and ctx.get_parameter_source("endpoint") == ParameterSource.ENVIRONMENT:
        settings.endpoint_source = "EGO_ENDPOINT"
    ctx.obj = settings


def main() -> None:
    """Console entry point."""
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    cli(prog_name="ego")
