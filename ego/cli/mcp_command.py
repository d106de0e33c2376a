"""``ego mcp``: serve ego's tools to an MCP client over stdio."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

import click

from .common import (
    Settings,
    endpoint_option,
    pass_settings,
    run_async,
    start_url_option,
)

if TYPE_CHECKING:
    from ..mcp.limits import SiteTools, ToolGroup
    from ..page.dialogs import DialogPolicy

__all__ = ["mcp"]

_GROUPS = ("learnings", "pages", "input", "network", "saving")


def _patterns(values: tuple[str, ...]) -> tuple[str, ...]:
    """Origin patterns given repeatedly or separated by ``;`` or ``,``."""
    return tuple(
        part.strip()
        for value in values
        for part in value.replace(";", ",").split(",")
        if part.strip()
    )


def _groups(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[str, ...]:
    if value is None:
        return _GROUPS
    chosen = tuple(part.strip() for part in value.split(",") if part.strip())
    unknown = [group for group in chosen if group not in _GROUPS]
    if unknown or not chosen:
        raise click.BadParameter(
            f"{', '.join(unknown) or 'nothing'} is not a group: choose from {', '.join(_GROUPS)}",
            param_hint="--tools",
        )
    return chosen


@click.command()
@click.option("--profile", help="Persistent profile to launch with (default: a temporary one).")
@click.option("--headed", is_flag=True, help="Open a real window.")
@click.option(
    "--dialogs",
    type=click.Choice(["manual", "auto", "accept", "dismiss"]),
    default=None,
    help="How page dialogs are answered: manual (the default) leaves each for the agent's "
    "handle_dialog; auto (the default with --read-only) accepts an alert and dismisses the "
    "rest.",
)
@click.option(
    "--allowed-origins",
    "allowed",
    multiple=True,
    metavar="PATTERNS",
    help="Only these origins may be loaded, in any frame: https://shop.example, "
    "shop.example:8765, *.shop.example (repeat, or separate with ; or ,).",
)
@click.option(
    "--blocked-origins",
    "blocked",
    multiple=True,
    metavar="PATTERNS",
    help="These origins may not be loaded, in any frame, even when allowed.",
)
@click.option(
    "--allow-file-urls",
    is_flag=True,
    help="Let pages open file:, chrome:, devtools: and view-source: URLs (refused otherwise).",
)
@click.option(
    "--output-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="The folder tools write into and read from besides the client's roots (default: a "
    "folder of this server's own in ego's state folder).",
)
@click.option(
    "--allow-unrestricted-file-access",
    "unrestricted",
    is_flag=True,
    help="Let tools read and write any path the server can, and overwrite any file.",
)
@click.option(
    "--read-only",
    is_flag=True,
    help="Serve navigation, the reading tools and read-only site tools only: no input, no "
    "evaluate, no saving.",
)
@click.option(
    "--tools",
    "groups",
    metavar="GROUPS",
    callback=_groups,
    help=f"The tool groups to serve, comma-separated: {', '.join(_GROUPS)} (default: all).",
)
@click.option(
    "--site-tools",
    type=click.Choice(["all", "matching", "none"]),
    default="all",
    show_default=True,
    help="Which sites' own tools (<site>__<tool>) are listed: all, those of the sites on the "
    "current tab's origin (the list changes, with list_changed, as the tab moves), or none "
    "(run_browser_tool runs them all the same).",
)
@start_url_option
@endpoint_option
@pass_settings
def mcp(
    settings: Settings,
    profile: str | None,
    headed: bool,
    dialogs: str | None,
    allowed: tuple[str, ...],
    blocked: tuple[str, ...],
    allow_file_urls: bool,
    output_dir: Path | None,
    unrestricted: bool,
    read_only: bool,
    groups: tuple[str, ...],
    site_tools: str,
    start_urls: tuple[tuple[str, str], ...],
) -> None:
    """Serve ego's tools to an MCP client over stdio.

    Chrome starts on the first tool call and ends when the client disconnects; with
    --endpoint, or when `ego launch` keeps a browser (and --new-browser is not given), that
    one is attached instead and left running. docs/mcp.md ("Running ego mcp for an agent")
    says what each limit protects.
    """
    from ..mcp import serve
    from ..mcp.limits import ServerLimits

    limits = ServerLimits(
        allowed_origins=_patterns(allowed),
        blocked_origins=_patterns(blocked),
        allow_file_urls=allow_file_urls,
        output_dir=output_dir,
        unrestricted_files=unrestricted,
        read_only=read_only,
        groups=frozenset(cast("tuple[ToolGroup, ...]", groups)),
        start_urls=start_urls,
        site_tools=cast("SiteTools", site_tools),
    )
    try:
        limits.policy  # noqa: B018  (a malformed pattern is a usage error, before anything)
    except ValueError as exc:
        raise click.BadParameter(
            str(exc), param_hint="--allowed-origins/--blocked-origins"
        ) from None
    policy = dialogs or ("auto" if read_only else "manual")

    async def go() -> None:
        kept = settings.kept_browser(profile=profile, headless=not headed)
        await serve(
            endpoint=settings.endpoint or (kept.websocket if kept is not None else None),
            profile=profile,
            headless=not headed,
            learnings=settings.learnings(),
            dialogs=cast("DialogPolicy", policy),
            limits=limits,
        )

    run_async(settings, go())
