"""``ego mcp``: serve ego's tools to an MCP client over stdio."""

from __future__ import annotations

import click

from .common import (
    Settings,
    endpoint_option,
    pass_settings,
    run_async,
)

__all__ = ["mcp"]


@click.command()
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
