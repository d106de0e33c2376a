"""Traces on the command line: the options that bound one (``--trace-max-size``,
``--trace-scale``, ``--trace-quality``, taken by ``ego run``, ``ego record``, ``ego batch`` and
``ego mcp``), and ``ego show-trace``, which writes the one-file viewer of a trace."""

from __future__ import annotations

import contextlib
import functools
import shlex
import webbrowser
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from ..trace.options import MAX_BYTES, MIN_BYTES, SCREENSHOT_QUALITY, SCREENSHOT_SCALE
from .common import json_option, pass_settings
from .sizes import ByteSize

if TYPE_CHECKING:
    from .output import Output

__all__ = ["show_trace", "trace_bound_options", "trace_option", "traced"]

F = TypeVar("F", bound=Callable[..., Any])


def trace_bound_options(function: F) -> F:
    """``--trace-max-size``, ``--trace-scale`` and ``--trace-quality``, handed to the command
    as one ``trace_options`` dict of :class:`ego.trace.TraceOptions` fields."""

    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> Any:
        options = {
            "max_bytes": kwargs.pop("trace_max_size"),
            "screenshot_scale": kwargs.pop("trace_scale"),
            "screenshot_quality": kwargs.pop("trace_quality"),
        }
        if options["max_bytes"] < MIN_BYTES:
            raise click.BadParameter(
                f"a trace needs at least {MIN_BYTES // 1024}K", param_hint="--trace-max-size"
            )
        kwargs["trace_options"] = options
        return function(*args, **kwargs)

    command = click.option(
        "--trace-quality",
        type=click.IntRange(1, 100),
        default=SCREENSHOT_QUALITY,
        show_default=True,
        help="The JPEG quality of a trace's screenshots.",
    )(run)
    command = click.option(
        "--trace-scale",
        type=click.FloatRange(0, 1),
        default=SCREENSHOT_SCALE,
        show_default=True,
        help="A trace's screenshots against the page's size (0: no screenshots).",
    )(command)
    command = click.option(
        "--trace-max-size",
        type=ByteSize(),
        default=MAX_BYTES,
        show_default="50M",
        help="The most a trace file takes (512K, 50M, 1G); what goes over is left out, and "
        "said in the trace.",
    )(command)
    return command  # type: ignore[return-value]


def trace_option(function: F) -> F:
    """``--trace FILE`` and the options that bound it."""
    command = trace_bound_options(function)
    return click.option(
        "--trace",
        "trace_path",
        type=click.Path(dir_okay=False, path_type=Path),
        help="Trace the run into FILE: each step with a screenshot, the network and the "
        "console, secrets redacted (ego show-trace FILE shows it).",
    )(command)


@contextlib.asynccontextmanager
async def traced(
    host: Any,
    path: Path | None,
    options: dict[str, Any],
    subject: str,
    output: Output,
) -> AsyncIterator[None]:
    """Trace every tab of ``host`` (a browser or a context) into ``path`` while the block
    runs (nothing when ``path`` is None); then say on stderr where the trace is and how to
    see it, whether the block failed or not."""
    if path is None:
        yield
        return
    trace = host.trace(path, subject=subject, **options)
    await trace.start()
    try:
        yield
    finally:
        summary = await trace.stop()
        left = sum(summary.omitted.values())
        output.info(
            f"trace: {summary.path} ({summary.steps} step{'s' if summary.steps != 1 else ''}"
            + (f", {summary.failed} failed" if summary.failed else "")
            + (f", {left} part(s) left out to stay within its bound" if left else "")
            + f"); see it with: ego show-trace {shlex.quote(str(summary.path))} --open"
        )


@click.command("show-trace")
@click.argument("trace", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where to write the viewer (default: beside the trace, with .html).",
)
@click.option("--open", "open_it", is_flag=True, help="Open the viewer in a web browser.")
@json_option
@pass_settings
def show_trace(settings: Any, trace: Path, out: Path | None, open_it: bool) -> None:
    """Write the viewer of TRACE: one HTML file that shows it offline, nothing fetched.

    The timeline lists the steps (actions, tool runs, pages loaded), failures marked; the
    step selected shows the screenshot after it, the snapshot around its target, its
    arguments, result or error, and its requests and console messages. The file can be
    opened from disk, attached to a bug report as it is, and holds what the trace holds
    (made 0600 like it).
    """
    from ..errors import EgoError
    from ..trace.viewer import write_viewer

    try:
        written = write_viewer(trace, out)
    except (EgoError, OSError) as exc:
        raise SystemExit(settings.output.error(exc)) from None
    data: dict[str, Any] = {"trace": str(trace), "viewer": str(written), "opened": False}
    if open_it:
        data["opened"] = webbrowser.open(written.resolve().as_uri())
        if not data["opened"]:
            settings.output.info(f"no web browser to open it with here: open {written}")
    settings.output.result(data, lambda found: f"wrote {found['viewer']}")
