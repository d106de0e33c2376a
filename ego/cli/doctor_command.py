"""``ego doctor``: what this machine has and where ego keeps things."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

import click

from .. import api
from ..errors import EgoError
from ..places import WORKSPACE_ENV, Place, places
from . import state
from .common import (
    Settings,
    common,
    pass_settings,
)

__all__ = ["doctor"]


@click.command()
@common
@pass_settings
def doctor(settings: Settings) -> None:
    """Say what Chrome was found, its version, whether it starts here, and where things live.

    Each place (home, profiles, state, workspace, the bundled learnings and skills) is printed
    with what chose it: an environment variable, the checkout, or the user data dir. With
    --endpoint it checks that browser answers instead of starting one; the browser `ego launch`
    keeps, if any, is named.
    """
    from ..protocol.chrome import find_chrome, profiles_root

    report: dict[str, Any] = {"python": sys.version.split()[0]}
    learnings = settings.learnings()
    report["learnings_roots"] = [str(root) for root in learnings.roots]
    report["profiles"] = str(profiles_root())
    # --workspace also reads $EGO_WORKSPACE: name the variable when that is where it came from.
    given = settings.workspace if settings.workspace != os.environ.get(WORKSPACE_ENV) else None
    report["places"] = {name: _place(place) for name, place in places(given).items()}
    try:
        report["chrome"] = find_chrome()
    except EgoError as exc:
        report["chrome"] = None
        report["problem"] = str(exc)

    kept = state.kept()
    report["kept_browser"] = kept.describe() if kept is not None else None
    if settings.endpoint:
        # With --endpoint the question is whether that browser answers, not whether one starts.
        report["endpoint"] = settings.endpoint

    async def probe() -> None:
        starter = api.connect(settings.endpoint) if settings.endpoint else api.launch()
        async with starter as browser:
            version = await browser.version()
            report["chrome_version"] = version.get("product")
            report["starts"] = True

    if report["chrome"] or settings.endpoint:
        try:
            label = f"connecting to {settings.endpoint}" if settings.endpoint else "starting Chrome"
            with settings.output.progress(label):
                asyncio.run(probe())
        except EgoError as exc:
            report["starts"] = False
            report["problem"] = str(exc)
    settings.output.result(report, _human)
    if not report.get("starts"):
        sys.exit(4)


def _place(place: Place) -> dict[str, str | None]:
    return {"path": None if place.path is None else str(place.path), "source": place.source}


def _human(report: dict[str, Any]) -> str:
    lines = [f"{k:16} {v}" for k, v in report.items() if k not in {"places", "profiles"}]
    lines.append("places:")
    for name, place in report["places"].items():
        where = f"{place['path']}  (from {place['source']})" if place["path"] else place["source"]
        lines.append(f"  {name:14} {where}")
    return "\n".join(lines)
