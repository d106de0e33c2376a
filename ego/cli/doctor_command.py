"""``ego doctor``: what this machine has and where ego keeps things."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import click

from .. import api
from ..errors import EgoError
from .common import (
    Settings,
    json_option,
    pass_settings,
)

__all__ = ["doctor"]


@click.command()
@json_option
@pass_settings
def doctor(settings: Settings) -> None:
    """Say what Chrome was found, its version, whether it starts here, and where things live."""
    from ..protocol.chrome import find_chrome, profiles_root

    report: dict[str, Any] = {"python": sys.version.split()[0]}
    learnings = settings.learnings()
    report["learnings_roots"] = [str(root) for root in learnings.roots]
    report["profiles"] = str(profiles_root())
    try:
        report["chrome"] = find_chrome()
    except EgoError as exc:
        report["chrome"] = None
        report["problem"] = str(exc)

    async def probe() -> None:
        async with api.launch() as browser:
            version = await browser.version()
            report["chrome_version"] = version.get("product")
            report["starts"] = True

    if report["chrome"]:
        try:
            with settings.output.progress("starting Chrome"):
                asyncio.run(probe())
        except EgoError as exc:
            report["starts"] = False
            report["problem"] = str(exc)
    settings.output.result(report, lambda data: "\n".join(f"{k:16} {v}" for k, v in data.items()))
    if not report.get("starts"):
        sys.exit(4)
