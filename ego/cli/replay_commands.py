"""``ego record`` and ``ego test``: HAR recordings and the learnings' offline test cases."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ..casetests import LearningTestReport, run_learning_tests
from ..replay import record as record_har
from .common import Settings, common, pass_settings, run_async
from .output import EXIT_OK, EXIT_TOOL

__all__ = ["REPLAY_COMMANDS", "record", "test"]


@click.command()
@click.argument("url")
@click.option(
    "--har",
    "har_path",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where to write the HAR file.",
)
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
    help="Seconds to keep recording after the page loaded (late fetches).",
)
@click.option("--profile", help="Persistent profile to launch with (to record a logged-in page).")
@common
@pass_settings
def record(
    settings: Settings,
    url: str,
    har_path: Path,
    keep_secrets: bool,
    wait_until: Any,
    settle: float,
    profile: str | None,
) -> None:
    """Record what URL loads into a HAR 1.2 file (no session secrets unless asked)."""

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
                )
        return {
            "har": str(har_path),
            "entries": len(har.entries),
            "secrets_stripped": not keep_secrets,
        }

    result = run_async(settings, go())
    settings.output.result(
        result, lambda data: f"recorded {data['entries']} request(s) into {data['har']}"
    )


@click.command()
@click.argument("site_ids", nargs=-1, metavar="[SITE]...")
@click.option("--case", "names", multiple=True, help="Run only the cases with this name.")
@common
@pass_settings
def test(settings: Settings, site_ids: tuple[str, ...], names: tuple[str, ...]) -> None:
    """Run the learnings' offline test cases (tests/cases.json + HAR) against replayed pages.

    Exits 0 when every case passed, 3 when any failed.
    """

    async def go() -> LearningTestReport:
        async with settings.browser() as browser:
            with settings.output.progress("running learning tests"):
                return await run_learning_tests(
                    browser,
                    settings.learnings(),
                    list(site_ids) or None,
                    names=set(names) or None,
                )

    report = run_async(settings, go())
    settings.output.result(report.to_dict(), lambda _: report.format())
    sys.exit(EXIT_OK if report.passed else EXIT_TOOL)


REPLAY_COMMANDS = (record, test)
