"""The trace viewer: one self-contained HTML file showing a trace, for a person, offline.

Everything is inline: the styles, the script, the trace's lines as JSON (screenshots as the
base64 JPEG they are, shown as ``data:`` URLs). The page's Content-Security-Policy allows
nothing to be loaded but ``data:`` images, so it works opened from disk with no network and
can be attached to a bug report as it is. It shows a timeline of the steps (actions, tool
runs, pages loaded), failures marked; the step selected (a click, or the arrow keys) shows
its error, the screenshot after it, the snapshot around its target, its arguments and
result, and the requests, console messages, dialogs and downloads of its time.
"""

from __future__ import annotations

import html
import os
from importlib.resources import files
from pathlib import Path
from string import Template

from ..protocol.jsontext import json_text
from .file import open_private
from .reading import TraceData, read_trace

__all__ = ["render", "write_viewer"]


def _asset(name: str) -> str:
    return files(__package__).joinpath("viewer", name).read_text(encoding="utf-8")


def _embedded(text: str) -> str:
    """JSON safe inside a ``<script>`` element: no ``</script>``, no ``<!--``."""
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def render(trace: TraceData) -> str:
    """The viewer's HTML for ``trace``."""
    data = {
        "header": trace.header,
        "records": trace.records,
        "end": trace.end,
        "torn": trace.torn,
    }
    subject = str(trace.header.get("subject") or trace.path.name)
    return Template(_asset("viewer.html")).substitute(
        title=html.escape(f"Trace of {subject}"),
        style=_asset("viewer.css"),
        script=_asset("viewer.js"),
        data=_embedded(json_text(data)),
    )


def write_viewer(
    trace_path: str | os.PathLike[str], out: str | os.PathLike[str] | None = None
) -> Path:
    """Write the viewer of the trace at ``trace_path`` to ``out`` (default: beside it, with
    ``.html``), made ``0600`` like the trace; return where.

    Raises:
        TraceFileError: the trace cannot be read, or is no trace.
        OSError: ``out`` cannot be written.
    """
    trace = read_trace(trace_path)
    target = Path(out) if out is not None else _beside(Path(trace_path))
    page = render(trace).encode("utf-8")
    with os.fdopen(open_private(target), "wb") as handle:
        handle.write(page)
    return target


def _beside(trace_path: Path) -> Path:
    name = trace_path.name
    for suffix in (".trace.jsonl", ".jsonl"):
        if name.endswith(suffix):
            return trace_path.with_name(name[: -len(suffix)] + ".html")
    return trace_path.with_name(name + ".html")
