"""``ego mcp``: serve ego's tools to MCP clients over stdio, or over HTTP with a browser context
per session (``--http``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click
from click.core import ParameterSource

from .common import (
    Settings,
    endpoint_option,
    pass_settings,
    run_async,
    state_bounds,
    storage_state_bounds_options,
)
from .display import check_display
from .trace_commands import trace_bound_options

if TYPE_CHECKING:
    from ..mcp.limits import SiteTools, ToolGroup
    from ..page.dialogs import DialogPolicy

__all__ = ["mcp"]

_GROUPS = ("learnings", "pages", "input", "network", "saving")

#: What the help says of ego.mcp's defaults (importing ego.mcp here would load the MCP SDK
#: for every command: tests/test_mcp_http.py checks they agree).
_PORT = 8790
_SESSIONS = 16
_IDLE = 1800
_TABS = 20

#: The options that mean something only over HTTP.
_HTTP_ONLY = (
    "host",
    "port",
    "token",
    "session_idle",
    "max_sessions",
    "max_tabs",
    "allowed_hosts",
    "allowed_origins_http",
    "client_roots_are_server_paths",
)


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


def _checked_entries(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> tuple[str, ...]:
    """``--allowed-host`` and ``--allowed-origin`` entries, each checked before anything
    starts."""
    if not values:
        return values
    from ..mcp.hosts import check_entries

    hosts = values if param.name == "allowed_hosts" else ()
    try:
        check_entries(hosts, values if not hosts else ())
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
    return values


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
    help="The folder tools write into and read from (default: a folder of this server's own "
    "in ego's state folder); with --http each session gets a folder of its own inside it.",
)
@click.option(
    "--file-root",
    "file_roots",
    multiple=True,
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    metavar="DIR",
    help="Another folder tools may read and write, for every session (repeatable). Over "
    "stdio the client's MCP roots are allowed too; over HTTP they are not (see "
    "--client-roots-are-server-paths).",
)
@click.option(
    "--client-roots-are-server-paths",
    is_flag=True,
    help="With --http: take the folders a client declares as its MCP roots as folders of "
    "this machine, as stdio does. Only for clients on this machine: a remote client's roots "
    "name its own folders, and this lets it read and write those paths here.",
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
    "--test-id-attribute",
    metavar="NAME",
    help="The attribute testid= selectors read (default: data-testid), such as data-qa.",
)
@click.option(
    "--storage-state",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="A saved login (ego login --save-state FILE) the browser starts with; with --http, "
    "every new session's context.",
)
@storage_state_bounds_options
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
    help="With --http: the address to listen on; one other than loopback prints what "
    "protects the server.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=_PORT,
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
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    metavar="NAME[:PORT]",
    callback=_checked_entries,
    help="With --http: another Host a request may name (the server's own address is "
    "allowed; without a port, any port). Repeatable.",
)
@click.option(
    "--allowed-origin",
    "allowed_origins_http",
    multiple=True,
    metavar="ORIGIN",
    callback=_checked_entries,
    help="With --http: a web page's origin (http(s)://HOST[:PORT]) whose requests are "
    "answered; a request with another Origin is refused. Repeatable. (Which origins the "
    "agent's pages may open is --allowed-origins.)",
)
@click.option(
    "--session-idle",
    type=click.FloatRange(min=0, min_open=True),
    default=_IDLE,
    show_default=True,
    metavar="SECONDS",
    help="With --http: close a session (and its browser context) after this long without a "
    "request; an open notification stream counts as one.",
)
@click.option(
    "--max-sessions",
    type=click.IntRange(min=1),
    default=_SESSIONS,
    show_default=True,
    metavar="N",
    help="With --http: the most sessions open at once; one more is answered 503.",
)
@click.option(
    "--max-tabs",
    type=click.IntRange(min=1),
    default=_TABS,
    show_default=True,
    metavar="N",
    help="With --http: the most tabs one session may have open.",
)
@click.option(
    "--trace-tools",
    is_flag=True,
    help="Serve start_trace and stop_trace, with which an agent traces its own session "
    "into a file within the server's folders (off: a trace holds a screenshot of every step).",
)
@click.option(
    "--trace-failures",
    type=click.Path(file_okay=False, path_type=Path),
    metavar="DIR",
    help="Keep a trace of each failing step (an action or a tool run) in DIR, with the "
    "steps before it on its tab.",
)
@trace_bound_options
@endpoint_option
@pass_settings
@click.pass_context
def mcp(
    ctx: click.Context,
    settings: Settings,
    profile: str | None,
    headed: bool,
    dialogs: str | None,
    allowed: tuple[str, ...],
    blocked: tuple[str, ...],
    allow_file_urls: bool,
    output_dir: Path | None,
    file_roots: tuple[Path, ...],
    client_roots_are_server_paths: bool,
    unrestricted: bool,
    read_only: bool,
    groups: tuple[str, ...],
    site_tools: str,
    max_js_heap: int | None,
    test_id_attribute: str | None,
    storage_state: Path | None,
    max_state_mb: int,
    max_state_items: int,
    http: bool,
    host: str,
    port: int,
    token: str | None,
    allowed_hosts: tuple[str, ...],
    allowed_origins_http: tuple[str, ...],
    session_idle: float,
    max_sessions: int,
    max_tabs: int,
    trace_tools: bool,
    trace_failures: Path | None,
    trace_options: dict[str, Any],
) -> None:
    """Serve ego's tools to MCP clients, over stdio (or HTTP with --http).

    Chrome starts on the first tool call and ends when the client disconnects; with
    --endpoint, or when `ego launch` keeps a browser (and --new-browser is not given), that
    one is attached instead and left running. docs/mcp.md ("Running ego mcp for an agent")
    says what each limit protects.

    With --http, one server serves several agents: each MCP session gets a browser context
    of its own (tabs, cookies, storage, downloads) in one shared Chrome, and every request
    must carry the bearer token (docs/mcp.md, "Several agents").

    With --trace-failures DIR, each action or tool run that fails leaves a trace in DIR: it
    and the steps before it on its tab, each with a screenshot, the requests and console,
    secrets redacted (docs/tracing.md); `ego show-trace FILE` shows one. With --trace-tools,
    agents trace a session themselves with start_trace and stop_trace; --trace-max-size,
    --trace-scale and --trace-quality bound both.
    """
    from ..mcp.limits import ServerLimits
    from ..page.policy import OriginPattern
    from ..page.scripts import set_test_id_attribute
    from ..trace.options import TraceOptions

    if test_id_attribute is not None:
        try:
            set_test_id_attribute(test_id_attribute)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--test-id-attribute") from None

    flags = {param.name: param.opts[0] for param in ctx.command.params}
    given = [
        flags[name]
        for name in _HTTP_ONLY
        if ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, None)
    ]
    if given and not http:
        verb = "works" if len(given) == 1 else "work"
        raise click.UsageError(f"{', '.join(given)} only {verb} with --http: add --http")
    bounds = state_bounds(max_state_mb, max_state_items)
    limits = ServerLimits(
        allowed_origins=_patterns(allowed, "--allowed-origins"),
        blocked_origins=_patterns(blocked, "--blocked-origins"),
        allow_file_urls=allow_file_urls,
        output_dir=output_dir,
        file_roots=file_roots,
        client_roots_are_server_paths=client_roots_are_server_paths,
        unrestricted_files=unrestricted,
        read_only=read_only,
        groups=frozenset(cast("tuple[ToolGroup, ...]", groups)),
        start_urls=settings.start_urls(),
        site_tools=cast("SiteTools", site_tools),
        max_js_heap_mb=max_js_heap,
        max_tabs=max_tabs,
        max_storage_state_bytes=bounds["max_bytes"],
        max_storage_state_items=bounds["max_items"],
        trace_tools=trace_tools,
        trace_options=TraceOptions(**trace_options),
    )
    for option, patterns in (("--allowed-origins", allowed), ("--blocked-origins", blocked)):
        for pattern in _patterns(patterns, option):
            try:
                OriginPattern.parse(pattern)
            except ValueError as exc:
                # A pattern that would never match is refused before anything starts.
                raise click.BadParameter(str(exc), param_hint=option) from None
    policy = dialogs or ("auto" if read_only else "manual")

    async def go() -> None:
        if trace_failures is None:
            await serving()
            return
        from ..trace.failures import FailureTraces

        async with FailureTraces(trace_failures, limits.trace_options):
            await serving()

    async def serving() -> None:
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
                allowed_hosts=allowed_hosts,
                allowed_origins=allowed_origins_http,
                session_idle=session_idle,
                max_sessions=max_sessions,
            )
            return
        from ..mcp import serve  # loads the MCP SDK: only once the options hold

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
