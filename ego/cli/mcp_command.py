"""``ego mcp``: serve ego's tools to MCP clients over stdio, or over HTTP with a browser context
per session (``--http``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

import click

from .common import (
    Settings,
    endpoint_option,
    pass_settings,
    run_async,
)
from .display import check_display

if TYPE_CHECKING:
    from ..mcp.limits import SiteTools, ToolGroup
    from ..page.dialogs import DialogPolicy

__all__ = ["mcp"]

_GROUPS = ("learnings", "pages", "input", "network", "saving")


def _patterns(values: tuple[str, ...], option: str) -> tuple[str, ...]:
    """Origin patterns given repeatedly or separated by ``;`` or ``,``.

    Raises:
        click.BadParameter: the option was given but names no pattern (an empty list would
            lift the limit the operator asked for).
    """
    patterns = tuple(
        part.strip()
        for value in values
        for part in value.replace(";", ",").split(",")
        if part.strip()
    )
    if values and not patterns:
        raise click.BadParameter(
            "names no origin pattern: give at least one (https://shop.example, "
            "shop.example:8765, [::1]:8765, *.shop.example)",
            param_hint=option,
        )
    return patterns


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
@click.option(
    "--max-js-heap",
    "max_js_heap",
    type=click.IntRange(min=16),
    metavar="MB",
    help="The most JavaScript heap each page's renderer may take, in MB "
    "(--js-flags=--max-old-space-size): a page that wants more crashes its tab instead of "
    "taking the machine's memory. Only for a Chrome this server starts.",
)
@click.option(
    "--storage-state",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="A saved login (ego login --save-state FILE) the browser starts with; with --http, "
    "every new session's context.",
)
@click.option(
    "--http",
    "http",
    is_flag=True,
    help="Serve MCP over streamable HTTP instead of stdio: several agents at once, each "
    "session in a browser context of its own in one Chrome.",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="With --http: the address to listen on.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="With --http: the port (0: a free one, said on stderr).",
)
@click.option(
    "--token",
    envvar="EGO_MCP_TOKEN",
    help="With --http: the bearer token every request must carry (default: a new one, "
    "printed to stderr and written to the state folder, readable by you only).",
)
@click.option(
    "--session-idle",
    type=click.FloatRange(min=0, min_open=True),
    metavar="SECONDS",
    help="With --http: close a session (and its browser context) after this long without a "
    "request.",
)
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
    max_js_heap: int | None,
    storage_state: Path | None,
    http: bool,
    host: str,
    port: int,
    token: str | None,
    session_idle: float | None,
) -> None:
    """Serve ego's tools to MCP clients, over stdio (or HTTP with --http).

    Chrome starts on the first tool call and ends when the client disconnects; with
    --endpoint, or when `ego launch` keeps a browser (and --new-browser is not given), that
    one is attached instead and left running. docs/mcp.md ("Running ego mcp for an agent")
    says what each limit protects.

    With --http, one server serves several agents: each MCP session gets a browser context
    of its own (tabs, cookies, storage, downloads) in one shared Chrome, and every request
    must carry the bearer token (docs/mcp.md, "Several agents").
    """
    from ..mcp import serve
    from ..mcp.limits import ServerLimits
    from ..page.policy import OriginPattern

    limits = ServerLimits(
        allowed_origins=_patterns(allowed, "--allowed-origins"),
        blocked_origins=_patterns(blocked, "--blocked-origins"),
        allow_file_urls=allow_file_urls,
        output_dir=output_dir,
        unrestricted_files=unrestricted,
        read_only=read_only,
        groups=frozenset(cast("tuple[ToolGroup, ...]", groups)),
        start_urls=settings.start_urls(),
        site_tools=cast("SiteTools", site_tools),
        max_js_heap_mb=max_js_heap,
    )
    for option, patterns in (("--allowed-origins", allowed), ("--blocked-origins", blocked)):
        for pattern in _patterns(patterns, option):
            try:
                OriginPattern.parse(pattern)
            except ValueError as exc:
                # A pattern that would never match is refused before anything starts.
                raise click.BadParameter(str(exc), param_hint=option) from None
    policy = dialogs or ("auto" if read_only else "manual")

    http_only = {"--host": host != "127.0.0.1", "--port": port != 8765, "--token": token}
    given = [name for name, value in http_only.items() if value] + (
        ["--session-idle"] if session_idle is not None else []
    )
    if given and not http:
        raise click.UsageError(f"{', '.join(given)} only work with --http")

    async def go() -> None:
        kept = settings.kept_browser(profile=profile, headless=not headed)
        endpoint = settings.endpoint or (kept.websocket if kept is not None else None)
        if headed and endpoint is None:
            check_display("ego mcp")  # refused now, not at the agent's first call
        if endpoint is not None and max_js_heap is not None:
            raise click.UsageError(
                "--max-js-heap applies to a Chrome this server starts, and it would attach to "
                f"{'--endpoint' if settings.endpoint else 'the browser ego launch keeps'}: "
                "start that Chrome with --js-flags=--max-old-space-size=MB, or pass "
                "--new-browser"
            )
        if http:
            from ..mcp import serve_http

            await serve_http(
                endpoint=endpoint,
                profile=profile,
                headless=not headed,
                learnings=settings.learnings(),
                dialogs=cast("DialogPolicy", policy),
                limits=limits,
                storage_state=storage_state,
                host=host,
                port=port,
                token=token,
                session_idle=session_idle,
            )
            return
        await serve(
            endpoint=endpoint,
            profile=profile,
            headless=not headed,
            learnings=settings.learnings(),
            dialogs=cast("DialogPolicy", policy),
            limits=limits,
            storage_state=storage_state,
        )

    run_async(settings, go())
