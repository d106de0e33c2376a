"""``ego health [SITE[/TOOL]]``: whether the learnings still work, version by version.

Reads the run record (:mod:`ego.learning.health`) for every version each tool's history
keeps; no browser is involved.

Registered on the ``ego`` group by ``ego.cli.app``.
"""

from __future__ import annotations

import sys

import click

from ..errors import EgoError
from ..learning.health.view import ToolHealth, VersionHealth, health_table
from .common import Settings, json_option, pass_settings
from .output import heal_hint

__all__ = ["health", "health_text"]


@click.command()
@click.argument("target", required=False, metavar="[SITE[/TOOL]]")
@json_option
@pass_settings
def health(settings: Settings, target: str | None) -> None:
    """Runs, ok, failures, the last failure and whether each tool version is suspect.

    Every version a tool's history keeps gets a line (the current one first); a new version
    starts at zero and the older ones keep their record. SITE lists one site's tools,
    SITE/TOOL one tool. A version is SUSPECT when its last 3 counted runs failed (NEEDS_LOGIN,
    calls refused for want of --confirm, and runs the site, the network or the tab failed do
    not count); an ok run clears it. A tool whose latest run found the site's server not
    answering says "site unreachable". --json adds each version's latest runs.
    """
    site_id, _, tool = (target or "").partition("/")
    try:
        rows = health_table(settings.learnings(), site_id or None, tool or None)
    except EgoError as exc:
        sys.exit(settings.output.error(exc))
    settings.output.result(
        [row.model_dump(mode="json") for row in rows], lambda _: health_text(rows)
    )


def health_text(rows: list[VersionHealth]) -> str:
    """The table ``ego health`` prints: one line per tool version."""
    if not rows:
        return "no tools"
    lines = [
        f"{'TOOL':34} {'VERSION':26} {'HASH':12} {'RUNS':>5} {'OK':>5} {'FAILED':>6} "
        f"{'LOGIN':>5}  {'LAST OK':20}  STATUS"
    ]
    for row in rows:
        health = row.health
        lines.append(
            f"{row.site_id + '/' + row.tool:34} {row.version:26} {row.hash:12} "
            f"{health.runs:>5} {health.ok:>5} {health.failures:>6} {health.needs_login:>5}  "
            f"{health.last_ok or '-':20}  {_status(health, row.site_id, row.tool)}"
        )
    return "\n".join(lines)


def _status(health: ToolHealth, site_id: str, tool: str) -> str:
    unreachable = health.last_site_failure if health.unreachable else None
    if unreachable is not None:
        return f"site unreachable at {unreachable.at}: {unreachable.message[:80]}"
    if health.suspect:
        restore = f"; version {health.last_passed} last passed" if health.last_passed else ""
        return f"SUSPECT: {health.reason}{restore}; {heal_hint(site_id, tool)}"
    failure = health.last_failure
    if failure is not None:
        return f"last failure {failure.kind} {failure.at}: {failure.message[:80]}"
    return "ok" if health.runs else "no runs"
