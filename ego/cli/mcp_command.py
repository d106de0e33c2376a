"""``ego mcp``: serve ego's tools to an MCP client over stdio."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import click

from .common import (
    Settings,
    endpoint_option,
    pass_settings,
    run_async,
)

if TYPE_CHECKING:
    from ..page.dialogs import DialogPolicy

__all__ = ["mcp"]


@click.command()
@click.option("--profile", help="Persistent profile to launch with (default: a temporary one).")
@click.option("--headed", is_flag=True, help="Open a real window.")
@click.option(
    "--dialogs",
    type=click.Choice(["manual", "auto", "accept", "dismiss"]),
    default="manual",
    show_default=True,
    help="How page dialogs are answered: manual leaves each for the agent's handle_dialog; "
    "auto accepts an alert and dismisses the rest.",
)
@endpoint_option
@pass_settings
def mcp(settings: Settings, profile: str | None, headed: bool, dialogs: str) -> None:
    """Serve ego's tools to an MCP client over stdio.

    Chrome starts on the first tool call and ends when the client disconnects; with
    --endpoint, or when `ego launch` keeps a browser (and --new-browser is not given), that
    one is attached instead and left running.
    """
    from ..mcp import serve

    async def go() -> None:
        kept = settings.kept_browser(profile=profile, headless=not headed)
        await serve(
            endpoint=settings.endpoint or (kept.websocket if kept is not None else None),
            profile=profile,
            headless=not headed,
            learnings=settings.learnings(),
            dialogs=cast("DialogPolicy", dialogs),
        )

    run_async(settings, go())
