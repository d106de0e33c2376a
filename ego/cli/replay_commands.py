"""``ego record`` and ``ego test``: HAR recordings and the learnings' offline test cases."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..calls import CallOptions, ToolCall
from ..casetests import (
    CASES_FILE,
    ERROR_KINDS,
    LearningTestReport,
    add_case,
    error_kind,
    expectation_updates,
    run_learning_tests,
    write_updates,
)
from ..errors import EgoError
from ..learning.catalog.matching import as_url
from ..protocol.jsontext import json_text
from ..replay import HarBounds, Omitted, Recorder
from ..replay import record as record_har
from .common import Settings, args_options, common, pass_settings, run_async
from .har_options import har_bound_options, har_bounds, reading
from .learning_commands import CLI_PROFILE_HINT, checked_call
from .output import EXIT_OK, EXIT_TOOL
from .trace_commands import trace_option

if TYPE_CHECKING:
    from ..api import Browser

__all__ = ["REPLAY_COMMANDS", "record", "test"]

#: Seconds the page load, and again the settling after it or after the tool, may take.
_RECORD_TIMEOUT = 30.0
#: The cases file a recorded case goes to, beside its HAR (the site's ``tests/cases.json``).
CASES_FILE_NAME = Path(CASES_FILE).name


@click.command()
@click.argument("url", required=False)
@click.option(
    "--har",
    "har_path",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where to write the HAR file.",
)
@click.option(
    "--run",
    "run_tool",
    nargs=2,
    metavar="SITE TOOL",
    help="After the page loaded, run this tool in it and record its requests too.",
)
@args_options("The tool's args", "arg", "the tool's", " (with --run)")
@click.option("--confirm", is_flag=True, help="Allow an irreversible tool to run (with --run).")
@click.option(
    "--keep-secrets",
    is_flag=True,
    help="Keep cookies, auth headers and secret values in URLs and bodies (redacted by default).",
)
@click.option(
    "--wait-until",
    type=click.Choice(["commit", "domcontentloaded", "load", "networkidle"]),
    default="load",
    show_default=True,
)
@click.option(
    "--settle",
    type=float,
    default=1.0,
    show_default=True,
    help="Seconds of network silence that end the recording (after the load, and the tool).",
)
@click.option(
    "--session",
    "session_site",
    metavar="SITE",
    help="Record a session of work on SITE (from URL, else its start URL): everything the "
    "tab loads while a person or a script works in it, until Ctrl+C, --until-url or "
    "--duration. `ego suggest SITE --har FILE` drafts tools from it.",
)
@click.option(
    "--until-url",
    metavar="PATTERN",
    help="With --session: end once the tab's URL matches (a glob, or a part of it).",
)
@click.option(
    "--duration",
    type=click.FloatRange(min=0, min_open=True),
    metavar="SECONDS",
    help="With --session: end after this many seconds.",
)
@click.option(
    "--actions",
    "actions_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="With --session: also keep the page actions made in the tab (a person's clicks and "
    "typing, a script's verbs) in this file; `ego suggest SITE --actions FILE` drafts a tool.",
)
@click.option("--profile", help="Persistent profile to launch with (to record a logged-in page).")
@har_bound_options("writes")
@trace_option
@common
@pass_settings
def record(
    settings: Settings,
    url: str | None,
    har_path: Path,
    run_tool: tuple[str, str] | None,
    args_json: str | None,
    pairs: tuple[str, ...],
    confirm: bool,
    keep_secrets: bool,
    wait_until: Any,
    settle: float,
    session_site: str | None,
    until_url: str | None,
    duration: float | None,
    actions_path: Path | None,
    profile: str | None,
    max_har_entries: int,
    max_har_bytes: int,
    trace_path: Path | None,
    trace_options: dict[str, Any],
) -> None:
    """Record what URL loads into a HAR 1.2 file (no session secrets unless asked).

    With --run SITE TOOL, URL defaults to the site's start URL; the tool runs in the loaded
    page and every request it makes is recorded too, and a test case that replays the HAR
    and expects what the tool did is added to cases.json beside the HAR (created when
    missing; a case of the same name is replaced). Record into the site's tests/ folder and
    `ego test SITE` runs it. The tool is checked (site, tool, args, --confirm) before a
    browser starts.

    With --session SITE, the tab stays open for a person (in a browser `ego launch --headed`
    keeps) or a script (attached with --endpoint) to work in, and everything it loads is
    recorded until Ctrl+C, --until-url or --duration.

    The recording keeps at most --max-har-entries requests and --max-har-bytes (as written);
    what goes over them is left out, and said in the HAR (log._omitted) and on stderr.

    With --session, --trace FILE also traces the session: each page the tab loads, with a
    screenshot, its requests and console, secrets redacted (`ego show-trace FILE`).
    """
    bounds = har_bounds(max_har_entries, max_har_bytes)
    if trace_path is not None and session_site is None:
        raise click.UsageError("--trace goes with --session SITE (ego run --trace traces a tool)")
    if actions_path is not None and session_site is None:
        raise click.UsageError("--actions goes with --session SITE")
    if session_site is not None:
        if run_tool is not None or args_json or pairs or confirm:
            raise click.UsageError("--session records a session of work: not with --run")
        _record_session(
            settings,
            session_site,
            url,
            har_path,
            keep_secrets,
            until_url,
            duration,
            profile,
            bounds,
            trace_path,
            trace_options,
            actions_path,
        )
        return
    if until_url is not None or duration is not None:
        raise click.UsageError("--until-url and --duration go with --session SITE")
    if run_tool is None:
        if url is None:
            raise click.UsageError("give the URL to record, or --run SITE TOOL")
        if args_json or pairs or confirm:
            raise click.UsageError("--args, --arg and --confirm go with --run SITE TOOL")
        _record_page(
            settings, as_url(url), har_path, keep_secrets, wait_until, settle, profile, bounds
        )
        return
    site_id, tool = run_tool
    call = checked_call(settings, site_id, tool, args_json, pairs, CallOptions(confirm=confirm))
    start = as_url(url) if url else settings.start_url(site_id, call.ref.manifest.start_url)
    if not start:
        raise click.UsageError(f"site {site_id!r} has no startUrl: give the URL to load first")

    async def go() -> tuple[dict[str, Any], EgoError | None]:
        async with settings.browser(profile=profile, site_id=site_id) as browser:
            browser.site.profile_hint = CLI_PROFILE_HINT
            tab = await browser.new_tab()
            recorder = Recorder(tab, strip_secrets=not keep_secrets, bounds=bounds)
            failure: EgoError | None = None
            result: Any = None
            try:
                async with recorder:
                    with settings.output.progress(f"recording {start}"):
                        await tab.navigate(start, wait_until=wait_until, timeout=_RECORD_TIMEOUT)
                        await recorder.wait_idle(quiet=settle, timeout=_RECORD_TIMEOUT)
                    with settings.output.progress(f"recording {site_id}/{tool}"):
                        try:
                            result = await browser.site.run_call(call, tab)
                        except EgoError as exc:
                            failure = exc  # a recorded NEEDS_LOGIN or throw is a case too
                        await recorder.wait_idle(quiet=settle, timeout=_RECORD_TIMEOUT)
            finally:
                # An attached browser outlives the command: leave no tab behind in it.
                with contextlib.suppress(EgoError):
                    await tab.close()
            # Written only after the page loaded: a failed navigation leaves no half HAR.
            har = recorder.har
            har.save(har_path)
        data = {
            "har": str(har_path),
            "entries": len(har.entries),
            "secrets_stripped": not keep_secrets,
            "tool": f"{site_id}/{tool}",
            "result": result,
            "error": None if failure is None else str(failure),
            "case": _case(call, har_path, start, result, failure),
            "cases_file": None,
            "case_replaced": False,
            **_omitted(recorder.omitted, bounds),
        }
        return data, failure

    data, failure = run_async(settings, go())
    refused: ValueError | None = None
    if data["case"] is not None:
        cases_file = har_path.parent / CASES_FILE_NAME
        try:
            data["case_replaced"] = add_case(cases_file, data["case"])
            data["cases_file"] = str(cases_file)
        except ValueError as exc:
            refused = exc
        except OSError as exc:
            refused = ValueError(f"cannot write {cases_file}: {exc}; the case was not added")
    settings.output.result(data, _recorded_text)
    if refused is not None:
        sys.exit(settings.output.error(refused))
    if failure is not None:
        sys.exit(settings.output.error(failure))


def _record_page(
    settings: Settings,
    url: str,
    har_path: Path,
    keep_secrets: bool,
    wait_until: Any,
    settle: float,
    profile: str | None,
    bounds: HarBounds,
) -> None:
    """``ego record URL``: the page load alone."""

    async def go() -> dict[str, Any]:
        async with settings.browser(profile=profile) as browser:
            with settings.output.progress(f"recording {url}"):
                har = await record_har(
                    browser,
                    url,
                    har_path,
                    strip_secrets=not keep_secrets,
                    wait_until=wait_until,
                    settle=settle,
                    bounds=bounds,
                )
        return {
            "har": str(har_path),
            "entries": len(har.entries),
            "secrets_stripped": not keep_secrets,
            **_omitted(Omitted.of(har), bounds),
        }

    result = run_async(settings, go())
    settings.output.result(
        result, lambda data: f"recorded {data['entries']} request(s) into {data['har']}"
    )


def _record_session(
    settings: Settings,
    site_id: str,
    url: str | None,
    har_path: Path,
    keep_secrets: bool,
    until_url: str | None,
    duration: float | None,
    profile: str | None,
    bounds: HarBounds,
    trace_path: Path | None = None,
    trace_options: dict[str, Any] | None = None,
    actions_path: Path | None = None,
) -> None:
    """``ego record --session SITE``: a tab recorded (and traced, with ``trace_path``; its
    page actions kept, with ``actions_path``) while someone works in it."""
    start = as_url(url) if url else None
    if start is None:
        try:
            default = settings.learnings().site(site_id).start_url
        except EgoError:
            default = None  # a site with no learning yet: the URL must be given
        start = settings.start_url(site_id, default)
    if not start:
        raise click.UsageError(
            f"give the URL to start the session on: site {site_id!r} has no learning with a "
            "startUrl yet"
        )

    async def go() -> dict[str, Any]:
        import asyncio
        import signal

        from ..replay.session import record_session

        # With no browser to attach to, a Chrome of its own listens on a port: the only way
        # for anyone to reach the tab it records.
        async with settings.browser(profile=profile, site_id=site_id, port=0) as browser:
            tab = await browser.new_tab()
            trace_summary: Any = None
            stop = asyncio.Event()
            endpoint = settings.endpoint or _http_endpoint(browser)
            reach = (
                f"; it has no window: a script reaches it with --endpoint {endpoint} (to work in "
                "it by hand, keep a browser with a window first: `ego launch --headed`)"
                if browser.process is not None
                else ""
            )
            loop = asyncio.get_running_loop()
            signals = (signal.SIGINT, signal.SIGTERM)
            for number in signals:
                with contextlib.suppress(NotImplementedError, RuntimeError):
                    loop.add_signal_handler(number, stop.set)
            try:
                ends = ["Ctrl+C"]
                if until_url:
                    ends.append(f"a URL matching {until_url}")
                if duration:
                    ends.append(f"{duration:g} s")

                def started() -> None:
                    if settings.output.json:
                        # What a script needs to work in the tab, as one JSON line.
                        line = {"recording": start, "tab": tab.target_id, "endpoint": endpoint}
                        click.echo(json_text(line), err=True)
                        return
                    settings.output.info(
                        f"recording a session on {start} in tab {tab.target_id}; it ends on "
                        + " or ".join(ends)
                        + reach
                    )

                traced = (
                    tab.trace(
                        trace_path,
                        subject=f"ego record --session {site_id}",
                        page_events=True,
                        **(trace_options or {}),
                    )
                    if trace_path is not None
                    else None
                )
                if traced is not None:
                    await traced.start()
                # The actions are heard in the page: whoever makes them, in whatever process.
                actions = (
                    tab.record_actions(actions_path, source="page")
                    if actions_path is not None
                    else None
                )
                if actions is not None:
                    actions.beside(har_path)
                    await actions.start()
                try:
                    end = await record_session(
                        tab,
                        har_path,
                        start_url=start,
                        until_url=until_url,
                        duration=duration,
                        stop=stop,
                        strip_secrets=not keep_secrets,
                        on_start=started,
                        bounds=bounds,
                    )
                finally:
                    if actions is not None:
                        await actions.stop()
                    if traced is not None:
                        trace_summary = await traced.stop()
                if actions is not None and actions.cut_secrets(end.har):
                    end.har.save(har_path)  # what was typed into a secret field, cut out
            finally:
                for number in signals:
                    with contextlib.suppress(NotImplementedError, RuntimeError):
                        loop.remove_signal_handler(number)
                with contextlib.suppress(EgoError):
                    await tab.close()
        return {
            "har": str(har_path),
            "entries": len(end.har.entries),
            "secrets_stripped": not keep_secrets,
            "site": site_id,
            "ended": end.reason,
            "url": end.url,
            "seconds": round(end.seconds, 1),
            "next": (
                f"ego suggest {site_id} --actions {actions_path}"
                if actions_path is not None
                else f"ego suggest {site_id} --har {har_path}"
            ),
            "endpoint": endpoint,
            **_omitted(end.omitted, bounds),
            **({"trace": trace_summary.as_dict()} if trace_path is not None else {}),
            **(
                {"actions": str(actions_path), "steps": len(actions.flow.steps)}
                if actions is not None and actions_path is not None
                else {}
            ),
        }

    data = run_async(settings, go())
    settings.output.result(
        data,
        lambda d: (
            f"recorded {d['entries']} request(s) of a session on {d['site']} into {d['har']} "
            f"(ended: {d['ended']}, {d['seconds']} s); draft tools from it with `{d['next']}`"
            + (
                f"\ntraced {d['trace']['steps']} page(s) into {d['trace']['trace']}: "
                f"ego show-trace {d['trace']['trace']} --open"
                if "trace" in d
                else ""
            )
        ),
    )


def _http_endpoint(browser: Browser) -> str | None:
    """``http://127.0.0.1:PORT`` of a browser with a debugging port (what --endpoint takes)."""
    if browser.endpoint is None:
        return None
    return "http://" + browser.endpoint.split("://", 1)[1].split("/", 1)[0]


def _omitted(omitted: Omitted, bounds: HarBounds) -> dict[str, Any]:
    """What a recording left out past its bounds: said on stderr, and as ``omitted``."""
    if not omitted:
        return {"omitted": None}
    line = omitted.describe(bounds) + " (raise --max-har-entries or --max-har-bytes to keep it)"
    click.echo(f"ego: {line}", err=True)
    return {"omitted": omitted.as_dict()}


def _case(
    call: ToolCall, har_path: Path, url: str, result: Any, failure: EgoError | None
) -> dict[str, Any] | None:
    """A ``tests/cases.json`` case that replays this recording and expects what happened
    (None when the tool ended in an error a case cannot expect)."""
    case: dict[str, Any] = {
        "name": f"{call.ref.tool} as recorded",
        "har": har_path.name,
        "url": url,
        "tool": call.ref.tool,
        "args": call.args,
    }
    if failure is None:
        case["expect"] = result
    else:
        kind = error_kind(failure)
        if kind not in ERROR_KINDS:
            return None
        case["expect_error"] = kind
    return case


def _recorded_text(data: dict[str, Any]) -> str:
    lines = [f"recorded {data['entries']} request(s) into {data['har']} (page and {data['tool']})"]
    if data["cases_file"] is not None:
        how = "replaced the case of that name in" if data["case_replaced"] else "added it to"
        lines.append(
            f"a test case of it ({how} {data['cases_file']}):\n"
            + json.dumps(data["case"], indent=2, ensure_ascii=False)
        )
    elif data["case"] is None:
        lines.append("no test case: the tool ended in an error a case cannot expect")
    return "\n".join(lines)


@click.command()
@click.argument("site_ids", nargs=-1, metavar="[SITE]...")
@click.option("--case", "names", multiple=True, help="Run only the cases with this name.")
@click.option(
    "--update",
    is_flag=True,
    help="Write each failing case's expect/expect_subset from the tool's actual result "
    "(shows the diff first; asks on a terminal unless --yes).",
)
@click.option("--yes", "-y", is_flag=True, help="With --update: write without asking.")
@har_bound_options("reads")
@common
@pass_settings
def test(
    settings: Settings,
    site_ids: tuple[str, ...],
    names: tuple[str, ...],
    update: bool,
    yes: bool,
    max_har_entries: int,
    max_har_bytes: int,
) -> None:
    """Run the learnings' offline test cases (tests/cases.json + HAR) against replayed pages.

    A case whose HAR is over --max-har-entries or --max-har-bytes fails with the reason,
    unread. Exits 0 when every case passed (or, with --update, was updated), 3 when any failed.
    """
    learnings = settings.learnings()
    try:
        for site_id in site_ids:  # a typo in a site costs no browser start
            learnings.find(site_id)
    except EgoError as exc:
        sys.exit(settings.output.error(exc))

    async def go() -> LearningTestReport:
        async with settings.browser() as browser:
            with settings.output.progress("running learning tests"):
                return await run_learning_tests(
                    browser,
                    learnings,
                    list(site_ids) or None,
                    names=set(names) or None,
                )

    with reading(max_har_entries, max_har_bytes):
        report = run_async(settings, go())
    if not update:
        settings.output.result(report.to_dict(), lambda _: report.format())
        sys.exit(EXIT_OK if report.passed else EXIT_TOOL)
    _update(settings, report, yes)


def _update(settings: Settings, report: LearningTestReport, yes: bool) -> None:
    """Show the diffs of the new expectations, write them, and report what stays failed."""
    updates, skipped = expectation_updates(report, settings.learnings())
    for change in updates:
        # The diff goes to stderr in JSON mode, so that stdout stays one JSON document.
        click.echo(change.diff(), err=settings.output.json, nl=False)
    written: list[str] = []
    if updates:
        ask = not yes and sys.stdin.isatty() and not settings.output.json
        if not ask or click.confirm(f"write {len(updates)} new expectation(s)?", default=False):
            try:
                written = [str(path) for path in write_updates(updates)]
            except (OSError, ValueError) as exc:
                sys.exit(settings.output.error(exc))
    data = {
        **report.to_dict(),
        "updated": [change.as_dict() for change in updates] if written else [],
        "not_updated": skipped,
        "files": written,
    }

    def human(_: Any) -> str:
        lines = [report.format()]
        if written:
            lines.append(f"updated {len(updates)} expectation(s) in {', '.join(written)}")
        elif updates:
            lines.append("nothing written")
        lines.extend(f"not updated: {line}" for line in skipped)
        return "\n".join(lines)

    settings.output.result(data, human)
    fixed = bool(written) and not skipped
    sys.exit(EXIT_OK if report.passed or fixed else EXIT_TOOL)


REPLAY_COMMANDS = (record, test)
