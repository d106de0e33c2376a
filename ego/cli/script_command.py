"""``ego script``: run an agent script with a browser, a tab and the site facade ready."""

from __future__ import annotations

import runpy
from collections.abc import Awaitable
from pathlib import Path

import click

from .common import (
    Settings,
    endpoint_option,
    pass_settings,
    run_async,
)

__all__ = ["script"]


@click.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--url", help="Open this page in the tab first.")
@click.option("--profile", help="Persistent profile to launch with.")
@endpoint_option
@pass_settings
def script(settings: Settings, file: Path, url: str | None, profile: str | None) -> None:
    """Run an agent script with `browser`, `tab` and `site` ready.

    The script is plain Python; it may define `async def main(browser, tab, site)`, which is
    awaited, or use top-level `await` inside such a function only.
    """

    async def go() -> None:
        async with settings.browser(profile=profile) as browser:
            tab = await browser.new_tab(url) if url else await browser.new_tab()
            namespace = runpy.run_path(
                str(file),
                init_globals={"browser": browser, "tab": tab, "site": browser.site},
                run_name="__ego_script__",
            )
            entry = namespace.get("main")
            if callable(entry):
                result = entry(browser, tab, browser.site)
                if isinstance(result, Awaitable):
                    await result

    run_async(settings, go())
