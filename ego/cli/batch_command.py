"""``ego batch``: one tool over a JSONL file of inputs, resumable, through a browser pool.

Registered on the ``ego`` group by ``cli.add_command(batch)``. The work is
:func:`ego.batch.run_batch`; this module only turns options into a pool, shows progress and
prints the summary.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import signal
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import orjson

from ..batch import BatchProgress, BatchSummary, run_batch
from ..errors import EgoError, StorageStateError
from ..learning.catalog.registry import Learnings
from ..pool import BrowserPool, Endpoint
from ..trace.options import TraceOptions
from .common import parse_start_urls, state_bounds, storage_state_bounds_options
from .output import EXIT_INTERRUPTED, EXIT_OTHER, EXIT_TERMINATED, Output, cli_words
from .trace_commands import trace_bound_options

if TYPE_CHECKING:
    from ..page.storage_state import StorageState

__all__ = ["batch"]


class _Progress:
    """The progress display, on stderr whatever the summary's format: a line rewritten in
    place when stderr is a terminal, else a plain line at every tenth of the work."""

    def __init__(self) -> None:
        self.live = sys.stderr.isatty()
        self.plain = not self.live
        self._shown = 0.0
        self._step = -1
        self.last: BatchProgress | None = None

    def __call__(self, state: BatchProgress) -> None:
        self.last = state
        todo = state.total - state.skipped
        if self.live:
            now = time.monotonic()
            if now - self._shown < 0.1 and state.remaining:
                return  # a terminal cannot show more than ~10 updates a second anyway
            self._shown = now
            sys.stderr.write("\r\033[K" + _progress_line(state))
            sys.stderr.flush()
        elif self.plain and todo:
            step = state.done * 10 // todo
            if step != self._step:
                self._step = step
                click.echo(_progress_line(state), err=True)

    def finish(self) -> None:
        if self.live and self._shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def _say_stopped(output: Output, cause: str, state: BatchProgress | None) -> None:
    """Tell where a stopped run got to and how to go on; every finished result is kept."""
    command = shlex.join(["ego", *sys.argv[1:]])
    if state is None:
        where = "before any result"
    else:
        finished = state.skipped + state.done
        where = f"at {finished}/{state.total} ({state.done} this run, {state.failed} failed)"
    message = (
        f"stopped by {cause} {where}; every finished result is in the output: "
        f"run the same command to resume: {command}"
    )
    if output.json:
        click.echo(orjson.dumps({"error": message, "type": "Stopped"}).decode(), err=True)
    else:
        click.echo(f"ego: {message}", err=True)


def _progress_line(state: BatchProgress) -> str:
    todo = state.total - state.skipped
    eta, rate = state.eta, state.rate
    left = _duration(eta) if eta is not None else "?"
    speed = f"{rate:.1f}/s" if rate is not None else "?/s"
    return f"{state.done}/{todo} done, {state.failed} failed, {speed}, {left} left" + (
        f" ({state.skipped} done before)" if state.skipped else ""
    )


def _duration(value: float) -> str:
    seconds = round(value)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _summary_text(summary: BatchSummary) -> str:
    parts = [f"{summary.total} inputs"]
    if summary.skipped:
        before = f" ({summary.failed_before} failed)" if summary.failed_before else ""
        parts.append(f"{summary.skipped} done before{before}")
    ran = f"{summary.ran} ran ({summary.ok} ok, {summary.failed} failed)"
    if summary.interrupted:
        ran += f", {summary.interrupted} cut short by an earlier stop"
    parts.append(ran)
    pace = ""
    if summary.first_result is not None:
        pace = f" (the first result after {summary.first_result:.1f} s"
        pace += f", then {summary.rate:.1f}/s)" if summary.rate is not None else ")"
    return f"{', '.join(parts)} in {summary.seconds:.1f} s{pace} -> {summary.output}"


def _headers(values: tuple[str, ...]) -> dict[str, str] | None:
    headers: dict[str, str] = {}
    for value in values:
        name, sep, content = value.partition(":")
        if not sep or not name.strip():
            raise click.BadParameter(f"{value!r} is not 'Name: value'", param_hint="--header")
        headers[name.strip()] = content.strip()
    return headers or None


def _root_settings() -> Any:
    """The ``ego`` group's settings object (endpoint, workspace, output), if any."""
    context = click.get_current_context(silent=True)
    return context.find_root().obj if context is not None else None


@click.command()
@click.argument("site_id")
@click.argument("tool")
@click.option(
    "--input",
    "input_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="JSONL: one JSON args object per line.",
)
@click.option(
    "--output",
    "output_path",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="JSONL results, appended; run again to continue an interrupted run.",
)
@click.option(
    "--endpoint",
    "endpoints",
    multiple=True,
    metavar="URL",
    help="Attach to this browser or fleet (ws://host:3000?token=T); repeat for several hosts.",
)
@click.option(
    "--header",
    "header_values",
    multiple=True,
    metavar="'NAME: VALUE'",
    help="Handshake header for every endpoint (auth behind a proxy).",
)
@click.option(
    "--browsers",
    type=click.IntRange(min=1),
    default=None,
    help="Local Chromes to launch [1]; with --endpoint, connections per endpoint [1].",
)
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=None,
    help="Calls in flight in total [4 tabs per browser, times --per-tab].",
)
@click.option(
    "--per-tab",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Calls in flight in one tab; more than 1 needs fewer tabs for --concurrency.",
)
@click.option(
    "--contexts",
    is_flag=True,
    help="Each of the --browsers a browser context of one Chrome (with --endpoint, of one "
    "connection per endpoint) instead of a Chrome of its own: cookies and storage each.",
)
@click.option(
    "--storage-state",
    "storage_states",
    multiple=True,
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    metavar="FILE",
    help="With --contexts: a saved login (ego login --save-state) every context starts "
    "from; repeat it once per context for several accounts side by side.",
)
@storage_state_bounds_options
# The spelling before --start-url, kept for scripts: a bare --start-url for SITE_ID.
@click.option("--url", hidden=True)
@click.option("--confirm", is_flag=True, help="Allow an irreversible tool to run.")
@click.option("--timeout", type=float, help="Seconds each call may run.")
@click.option(
    "--retries",
    type=click.IntRange(min=0),
    default=2,
    show_default=True,
    help="Repeats of a read call whose browser died.",
)
@click.option(
    "--replace-attempts",
    type=click.IntRange(min=0),
    default=3,
    show_default=True,
    help="Attempts to relaunch or reconnect a dead browser (the first at once, then after "
    "0.5 s, 2 s, and 5 s for any further one).",
)
@click.option(
    "--retry-failed", is_flag=True, help="Run the inputs whose earlier result failed again."
)
@click.option(
    "--json/--no-json",
    "json_flag",
    default=None,
    help="Print the summary (and errors) as JSON [the default when stdout is not a terminal].",
)
@click.option(
    "--trace-failures",
    type=click.Path(file_okay=False, path_type=Path),
    metavar="DIR",
    help="Keep a trace of each input that fails in DIR (its line in --output names it); "
    "passing inputs keep none.",
)
@trace_bound_options
def batch(
    site_id: str,
    tool: str,
    input_path: Path,
    output_path: Path,
    endpoints: tuple[str, ...],
    header_values: tuple[str, ...],
    browsers: int | None,
    concurrency: int | None,
    per_tab: int,
    contexts: bool,
    storage_states: tuple[Path, ...],
    max_state_mb: int,
    max_state_items: int,
    url: str | None,
    confirm: bool,
    timeout: float | None,
    retries: int,
    replace_attempts: int,
    retry_failed: bool,
    json_flag: bool | None,
    trace_failures: Path | None,
    trace_options: dict[str, Any],
) -> None:
    """Run TOOL of SITE_ID once per line of --input, over a pool of browsers.

    Each result is appended to --output as one JSON line (index, args, ok, result or error,
    ms) the moment it arrives, so a run stopped at any point loses nothing it finished, and
    the same command run again skips what is done and continues. Exit code: 0 when every
    input succeeded, 3 when some failed, 4 when a failure came from the browsers (or none
    could be started or reached).

    With --trace-failures DIR, each input that fails leaves a trace in DIR (the tool's run
    with a screenshot of its page, the requests and console of its call, secrets redacted;
    `ego show-trace FILE` shows it), named in its output line; passing inputs leave none.
    """
    settings = _root_settings()
    output: Output = getattr(settings, "output", None) or Output(None)
    if json_flag is not None:
        output = Output(json_flag)
    if not endpoints and getattr(settings, "endpoint", None):
        endpoints = (settings.endpoint,)
    workspace = getattr(settings, "workspace", None)
    learnings = Learnings(workspace=workspace)
    headers = _headers(header_values)
    count = browsers or 1
    per_browser = 4
    total = count * (len(endpoints) or 1)
    if concurrency is not None:
        # Spread the total over the browsers' tabs; the pool caps the sum at `concurrency`.
        per_browser = max(1, -(-concurrency // (total * per_tab)))
    if storage_states and not contexts:
        raise click.UsageError("--storage-state needs --contexts (a context per login)")
    states = _read_states(storage_states, state_bounds(max_state_mb, max_state_items))
    try:
        browser_pool = BrowserPool(
            launch=0 if endpoints else count,
            endpoints=[Endpoint(e, headers, count) for e in endpoints],
            per_browser=per_browser,
            per_tab=per_tab,
            concurrency=concurrency,
            retries=retries,
            replace_attempts=replace_attempts,
            learnings=learnings,
            contexts=contexts,
            storage_state=(None if not states else states[0] if len(states) == 1 else list(states)),
        )
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    start_urls = parse_start_urls(
        [*getattr(settings, "start_url_values", ()), *([url] if url else [])], site_id
    )
    for start_site, start_url in start_urls:
        browser_pool.set_start_url(start_site, start_url)
    progress = _Progress()

    async def go() -> BatchSummary:
        task = asyncio.current_task()
        loop = asyncio.get_running_loop()
        if task is not None:
            # SIGTERM ends the run like Ctrl+C: calls are cancelled and the browsers closed;
            # every finished result is already in the output.
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(signal.SIGTERM, task.cancel)
        return await run_batch(
            browser_pool,
            site_id,
            tool,
            input_path,
            output_path,
            confirm=confirm,
            timeout=timeout,
            retry_failed=retry_failed,
            progress=progress,
            trace_failures=trace_failures,
            trace_options=TraceOptions(**trace_options),
        )

    try:
        summary = asyncio.run(go())
    except EgoError as exc:
        progress.finish()
        sys.exit(output.error(exc))
    except KeyboardInterrupt:
        progress.finish()
        _say_stopped(output, "Ctrl+C", progress.last)
        sys.exit(EXIT_INTERRUPTED)
    except asyncio.CancelledError:
        progress.finish()
        _say_stopped(output, "SIGTERM", progress.last)
        sys.exit(EXIT_TERMINATED)
    except OSError as exc:
        progress.finish()
        output.error(exc)
        sys.exit(EXIT_OTHER)
    progress.finish()
    output.result(summary.as_dict(), lambda _: _summary_text(summary))
    sys.exit(summary.exit_code)


if __name__ == "__main__":  # python -m ego.cli.batch_command, before `ego batch` is registered
    batch(prog_name="ego batch")


def _read_states(paths: tuple[Path, ...], bounds: dict[str, int]) -> list[StorageState]:
    """Each ``--storage-state`` file, read within the bounds before any browser starts.

    Raises:
        click.BadParameter: one cannot be read, is not a storage state, or is over a bound.
    """
    from ..page.storage_state import read_storage_state

    try:
        return [read_storage_state(path, **bounds) for path in paths]
    except StorageStateError as exc:
        raise click.BadParameter(cli_words(exc), param_hint="--storage-state") from None
