"""The health report as one HTML page: charts as inline SVG, no script, nothing fetched.

Each tool has a section: its versions in a table (health, runs, failures, NEEDS_LOGIN, and
for a version ``ego heal`` promoted, its provenance), three charts of its runs per day
(runs, failures, NEEDS_LOGIN), one line per version, and its last failures with their error
and a link to the trace that holds each, when one was kept. A link opens the trace's viewer,
written beside the report (``<report>-traces/``). Tools with a suspect version come first.
The page's Content-Security-Policy allows nothing to be loaded, and the file is made 0600
(error messages may say what a page held).
"""

from __future__ import annotations

import os
from datetime import date
from html import escape
from importlib.resources import files
from pathlib import Path
from typing import Final

from ..trace.file import open_private
from ..trace.viewer import write_viewer
from .data import HealthReport, ToolReport, VersionReport

__all__ = ["CHARTS", "render_report", "write_report"]

#: The charts of each tool: (what is counted, the title).
CHARTS: Final = (
    ("runs", "Runs per day"),
    ("failures", "Failures per day"),
    ("needs_login", "NEEDS_LOGIN per day"),
)
#: One colour per version, the current one first.
_COLOURS: Final = ("#1f5fbf", "#c2410c", "#15803d", "#7e22ce", "#b91c1c", "#0e7490", "#a16207")
_WIDTH, _HEIGHT = 340, 150
_LEFT, _RIGHT, _TOP, _BOTTOM = 34, 12, 12, 26


def _style() -> str:
    return files(__package__).joinpath("report.css").read_text(encoding="utf-8")


def _colour(index: int) -> str:
    return _COLOURS[index % len(_COLOURS)]


def _chart(metric: str, title: str, tool: ToolReport) -> str:
    """One chart: a line per version, days across, counts up."""
    days = sorted({day.day for version in tool.versions for day in version.days})
    counts = {
        version.version: {day.day: getattr(day, metric) for day in version.days}
        for version in tool.versions
    }
    top = max([1, *(int(n) for per in counts.values() for n in per.values())])
    plot_w, plot_h = _WIDTH - _LEFT - _RIGHT, _HEIGHT - _TOP - _BOTTOM

    ordinals = {day: date.fromisoformat(day).toordinal() for day in days}
    first, last = (min(ordinals.values()), max(ordinals.values())) if days else (0, 0)

    def x(day: str) -> float:
        # Days as they fall in time: a day with no run leaves its gap.
        if last == first:
            return _LEFT + plot_w / 2
        return float(_LEFT + (ordinals[day] - first) * plot_w / (last - first))

    def y(value: int) -> float:
        return _TOP + plot_h - value * plot_h / top

    parts = [
        f'<svg class="chart" data-metric="{metric}" width="{_WIDTH}" height="{_HEIGHT}" '
        f'viewBox="0 0 {_WIDTH} {_HEIGHT}" role="img" '
        f'aria-label="{escape(title)} of {escape(tool.tool)}, one line per version">',
        f"<title>{escape(title)}</title>",
        f'<line x1="{_LEFT}" y1="{_TOP + plot_h}" x2="{_WIDTH - _RIGHT}" y2="{_TOP + plot_h}" '
        'stroke="#9aa3b2"/>',
        f'<line x1="{_LEFT}" y1="{_TOP}" x2="{_LEFT}" y2="{_TOP + plot_h}" stroke="#9aa3b2"/>',
        f'<text x="{_LEFT - 4}" y="{_TOP + 4}" text-anchor="end">{top}</text>',
        f'<text x="{_LEFT - 4}" y="{_TOP + plot_h}" text-anchor="end">0</text>',
    ]
    if days:
        parts.append(f'<text x="{_LEFT}" y="{_HEIGHT - 8}">{escape(days[0])}</text>')
        if len(days) > 1:
            parts.append(
                f'<text x="{_WIDTH - _RIGHT}" y="{_HEIGHT - 8}" text-anchor="end">'
                f"{escape(days[-1])}</text>"
            )
    else:
        parts.append(f'<text x="{_LEFT + 8}" y="{_TOP + plot_h / 2}">no runs kept</text>')
    for index, version in enumerate(tool.versions):
        per = counts[version.version]
        if not per:
            continue
        colour = _colour(index)
        points = " ".join(f"{x(day):.1f},{y(n):.1f}" for day, n in sorted(per.items()))
        parts.append(
            f'<g class="series" data-version="{escape(version.version)}">'
            f"<title>{escape(version.version)}</title>"
            f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"/>'
        )
        for day, n in sorted(per.items()):
            parts.append(
                f'<circle cx="{x(day):.1f}" cy="{y(n):.1f}" r="3" fill="{colour}">'
                f"<title>{escape(version.version)} {escape(day)}: {n}</title></circle>"
            )
        parts.append("</g>")
    parts.append("</svg>")
    return f"<figure>{''.join(parts)}<figcaption>{escape(title)}</figcaption></figure>"


def _provenance(version: VersionReport) -> str:
    promoted = version.promoted
    if not promoted:
        return ""
    passed = promoted.get("cases_passed") or []
    summary = (
        f"healed {promoted.get('healed_at', '?')}, replacing "
        f"{promoted.get('replaced_version') or 'the version before'}; "
        f"{len(passed)} case(s) passed"
    )
    details = escape(_json(promoted))
    return (
        f'<span class="badge promoted">PROMOTED BY A HEAL</span> {escape(summary)}'
        f"<details><summary>provenance</summary><pre>{details}</pre></details>"
    )


def _json(value: object) -> str:
    from ..protocol.jsontext import json_text

    return json_text(value, option=1)  # orjson.OPT_INDENT_2


def _versions_table(tool: ToolReport) -> str:
    rows = []
    for index, version in enumerate(tool.versions):
        health = version.health
        status = "SUSPECT: " + health.reason if health.suspect else health.line()
        rows.append(
            f'<tr class="{"suspect" if health.suspect else ""}" '
            f'data-version="{escape(version.version)}">'
            f'<td><i style="display:inline-block;width:9px;height:9px;border-radius:2px;'
            f'background:{_colour(index)}"></i> {escape(version.version)}</td>'
            f"<td>{escape(version.hash)}</td>"
            f'<td class="n">{health.runs}</td><td class="n">{health.ok}</td>'
            f'<td class="n">{health.failures}</td><td class="n">{health.needs_login}</td>'
            f"<td>{escape(status)}{_provenance(version)}</td></tr>"
        )
    return (
        "<table><thead><tr><th>Version</th><th>Hash</th><th>Runs</th><th>OK</th>"
        "<th>Failed</th><th>NEEDS_LOGIN</th><th>Health</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _failures(tool: ToolReport, links: dict[str, str]) -> str:
    if not tool.failures:
        return '<p class="muted">No failure kept.</p>'
    items = []
    for failure in tool.failures:
        link = links.get(failure.trace or "")
        trace = (
            f' <a class="trace" href="{escape(link)}">trace</a>'
            if link
            else ' <span class="muted">(no trace kept)</span>'
        )
        items.append(
            f'<li><span class="muted">{escape(failure.at)} {escape(failure.version)}</span> '
            f'<span class="outcome">{escape(failure.outcome)}</span> '
            f"{escape(failure.message)}{trace}</li>"
        )
    return f'<ul class="failures">{"".join(items)}</ul>'


def _section(tool: ToolReport, links: dict[str, str]) -> str:
    badges = f'<span class="badge kind">{escape(tool.kind)}</span>'
    if tool.suspect:
        badges += '<span class="badge suspect">SUSPECT</span>'
    legend = "".join(
        f'<span><i style="background:{_colour(i)}"></i>{escape(v.version)}</span>'
        for i, v in enumerate(tool.versions)
    )
    charts = "".join(_chart(metric, title, tool) for metric, title in CHARTS)
    return (
        f'<section class="tool{" suspect" if tool.suspect else ""}" '
        f'data-tool="{escape(tool.site_id)}/{escape(tool.tool)}">'
        f"<h2>{escape(tool.site_id)}/{escape(tool.tool)}{badges}</h2>"
        f"{_versions_table(tool)}"
        f'<div class="charts">{charts}</div><p class="legend">{legend}</p>'
        f"<h3>Last failures</h3>{_failures(tool, links)}</section>"
    )


def _ran(tool: ToolReport) -> bool:
    """Whether any version of ``tool`` has a run on record, of any kind."""
    return any(
        version.days or version.health.runs or version.health.needs_login
        for version in tool.versions
    )


def render_report(report: HealthReport, links: dict[str, str] | None = None) -> str:
    """The report's HTML; ``links`` maps a trace's path to the href of its viewer."""
    links = links or {}
    suspect = len(report.suspect)
    lead = (
        f"{len(report.tools)} tool(s); "
        + (f"{suspect} with a suspect version, listed first" if suspect else "none suspect")
        + f". Generated {report.generated}. A version is suspect when its last 3 counted runs "
        "failed; NEEDS_LOGIN does not count. The charts show the runs the record keeps (the "
        "latest 50 per version that count, and 50 that do not)."
    )
    ran = [tool for tool in report.tools if _ran(tool)]
    idle = [tool for tool in report.tools if not _ran(tool)]
    body = "".join(_section(tool, links) for tool in ran) or (
        '<p class="muted">No tool has run yet.</p>'
    )
    if idle:
        names = ", ".join(f"{escape(t.site_id)}/{escape(t.tool)}" for t in idle)
        body += f'<section class="idle"><h2>Not run yet</h2><p class="muted">{names}</p></section>'

    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'\">"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>ego health report</title><style>{_style()}</style></head><body>"
        f'<h1>ego health report</h1><p class="lead">{escape(lead)}</p>{body}</body></html>'
    )


def write_report(report: HealthReport, out: str | os.PathLike[str]) -> Path:
    """Write the report to ``out`` (``0600``), and beside it, in ``<name>-traces/``, the
    viewer of each trace it links to; return where.

    Raises:
        OSError: a file cannot be written.
    """
    target = Path(out)
    folder = target.with_name(f"{target.stem}-traces")
    links: dict[str, str] = {}
    for tool in report.tools:
        for failure in tool.failures:
            if failure.trace is None or failure.trace in links:
                continue
            folder.mkdir(mode=0o700, exist_ok=True)
            viewer = folder / (Path(failure.trace).name.removesuffix(".jsonl") + ".html")
            try:
                write_viewer(failure.trace, viewer)
            except Exception:  # a trace gone or unreadable since: the failure shows unlinked
                continue
            links[failure.trace] = f"{folder.name}/{viewer.name}"
    with os.fdopen(open_private(target), "wb") as handle:
        handle.write(render_report(report, links).encode("utf-8"))
    return target
