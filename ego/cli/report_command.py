"""``ego report``: the health report as one HTML page (or ``--json``), from the run record.

Registered on the ``ego`` group by ``ego.cli.app``; no browser is involved.
"""

from __future__ import annotations

import sys
import webbrowser
from pathlib import Path

import click
import orjson

from ..errors import EgoError
from ..protocol.jsontext import json_text
from .common import Settings, pass_settings

__all__ = ["report"]


@click.command()
@click.argument("site_id", required=False)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("health-report.html"),
    show_default=True,
    help="Where to write the page (the viewers of the traces it links go beside it, in "
    "<name>-traces/).",
)
@click.option("--open", "open_it", is_flag=True, help="Open the page in a web browser.")
@click.option(
    "--json/--no-json",
    "as_json",
    default=None,
    help="--json prints the report's data as JSON and writes no page.",
)
@pass_settings
def report(
    settings: Settings, site_id: str | None, out: Path, open_it: bool, as_json: bool | None
) -> None:
    """A page of every tool's health per version over time, its failures and their traces.

    For each tool of every site (of SITE_ID only, when given), suspect ones first: each
    version's health, its runs, failures and NEEDS_LOGIN per day as charts (one line per
    version), which versions `ego heal` promoted and from what, and the last failures with
    their error and a link to the trace that holds each, when one was kept (ego run
    --trace, ego batch --trace-failures, ...). The page is one file, fetching nothing.
    --json prints the same data instead of writing the page.
    """
    from ..report import report_data, write_report

    try:
        data = report_data(settings.learnings(), site_id)
    except EgoError as exc:
        sys.exit(settings.output.error(exc))
    if as_json:
        click.echo(json_text(data.model_dump(mode="json"), option=orjson.OPT_INDENT_2))
        return
    try:
        written = write_report(data, out)
    except OSError as exc:
        sys.exit(settings.output.error(exc))
    suspect = len(data.suspect)
    settings.output.result(
        {"report": str(written), "tools": len(data.tools), "suspect": suspect},
        lambda found: f"wrote {found['report']}: {found['tools']} tool(s), {suspect} suspect",
    )
    if open_it and not webbrowser.open(written.resolve().as_uri()):
        settings.output.info(f"no web browser to open it with here: open {written}")
