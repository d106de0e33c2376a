"""``ego launch``, ``ego login`` and ``ego tabs``: a browser to keep, log in with, look at."""

from __future__ import annotations

import asyncio
import sys

import click

from .. import api
from ..api import Browser
from ..tab import Tab
from .common import (
    Settings,
    common,
    json_option,
    pass_settings,
    run_async,
)

__all__ = ["launch", "login", "tabs"]


@click.command()
@click.option(
    "--profile",
    default="default",
    show_default=True,
    help="Persistent profile under chrome_profiles/.",
)
@click.option("--headed", is_flag=True, help="Open a real window.")
@json_option
@pass_settings
def launch(settings: Settings, profile: str, headed: bool) -> None:
    """Start Chrome with a persistent profile and print the endpoint to attach to.

    Chrome runs until you press Ctrl+C or close it; other commands and scripts attach with
    --endpoint.
    """

    async def go() -> None:
        with settings.output.progress("starting Chrome"):
            browser = await api.launch(profile=profile, headless=not headed)
        assert browser.process is not None
        info = {
            "endpoint": _http_endpoint(browser),
            "websocket": browser.endpoint,
            "profile": str(browser.process.user_data_dir),
            "pid": browser.process.pid,
        }
        settings.output.result(
            info,
            lambda data: (
                f"Chrome is running (pid {data['pid']}, profile {data['profile']}).\n"
                f"Attach with: --endpoint {data['endpoint']}\nPress Ctrl+C to stop it."
            ),
            one_line=True,
        )
        sys.stdout.flush()
        try:
            await _closed(browser)
        finally:
            await browser.close()

    run_async(settings, go())


@click.command()
@click.argument("site_id")
@click.option("--profile", default="default", show_default=True, help="Profile to log in with.")
@click.option("--url", help="Page to open instead of the site's start URL.")
@click.option("--headless", is_flag=True, help="No window (for machines without a display).")
@json_option
@pass_settings
def login(settings: Settings, site_id: str, profile: str, url: str | None, headless: bool) -> None:
    """Open a window on SITE_ID's page so that a person can log in by hand.

    The session is kept in the profile; close the window (or press Ctrl+C) when done.
    """

    async def go() -> None:
        manifest = settings.learnings().site(site_id)
        start = url or manifest.start_url
        if not start:
            raise click.UsageError(f"site {site_id!r} has no startUrl: pass --url")
        async with settings.browser(profile=profile, headless=headless) as browser:
            tab = await browser.new_tab(start, wait_until="domcontentloaded")
            settings.output.result(
                {
                    "site": site_id,
                    "url": start,
                    "profile": profile,
                    "tab": tab.target_id,
                    "endpoint": settings.endpoint or _http_endpoint(browser),
                },
                f"Log in to {manifest.name} in the window, then close it (profile {profile}).",
                one_line=True,
            )
            sys.stdout.flush()
            await _closed(browser)

    run_async(settings, go())


def _http_endpoint(browser: Browser) -> str:
    """``http://127.0.0.1:PORT`` of a launched browser (what ``--endpoint`` takes)."""
    port = browser.endpoint.split(":")[2].split("/")[0]
    return f"http://127.0.0.1:{port}"


async def _closed(browser: Browser) -> None:
    """Wait until the browser goes away (its window closed, Chrome quit, Ctrl+C)."""
    closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def done() -> None:
        if not closed.done():
            closed.set_result(None)

    browser.connection.on_close(done)
    await closed


@click.command()
@common
@pass_settings
def tabs(settings: Settings) -> None:
    """List the open tabs."""

    async def go() -> list[dict[str, str]]:
        async with settings.browser() as browser:
            return [_tab_row(tab) for tab in await browser.tabs()]

    rows = run_async(settings, go())
    settings.output.result(
        rows,
        lambda data: (
            "\n".join(f"{row['id'][:8]}  {row['title'][:40]:40}  {row['url']}" for row in data)
            or "no tabs"
        ),
    )


def _tab_row(tab: Tab) -> dict[str, str]:
    return {"id": tab.target_id, "url": tab.url, "title": tab.title}
