"""``ego launch``, ``ego close``, ``ego login`` and ``ego tabs``: a browser to keep, end, log
in with, look at.

``ego launch`` records the Chrome it starts in ego's state (:mod:`.state`); other commands
attach to it by default, and ``ego close`` ends it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import orjson
import psutil

from .. import api
from ..api import Browser
from ..errors import BrowserError, ChromeLaunchError, EgoError, StorageStateError
from ..learning.catalog.matching import as_url
from ..page.tab import Tab
from ..protocol._proctree import kill_tree, wait_ended
from . import state
from .call_service import CallService
from .common import (
    Settings,
    common,
    pass_settings,
    run_async,
)
from .display import check_display, no_display_error
from .login_state import LoginSaver
from .output import EXIT_OK

__all__ = ["close", "launch", "login", "tabs"]

#: Seconds ``ego launch --detach`` waits for the background Chrome to be up.
_DETACH_TIMEOUT = 90.0
#: Seconds a background ``ego launch`` that closed its stdout gets to exit with its error.
_EXIT_GRACE = 10.0
#: Seconds ``ego close`` gives Chrome, then its ``ego launch``, to end by themselves.
_CLOSE_GRACE = 10.0


def _refuse_endpoint(settings: Settings, command: str, why: str) -> None:
    """Exit 2 with one line when an endpoint is given to a command that cannot use one."""
    if not settings.endpoint:
        return
    if settings.endpoint_source == "EGO_ENDPOINT":
        fix = f"unset EGO_ENDPOINT for `ego {command}`"
    else:
        fix = "drop --endpoint"
    sys.exit(settings.output.error(click.UsageError(f"ego {command} {why}: {fix}")))


@click.command()
@click.option(
    "--profile",
    default="default",
    show_default=True,
    help="Persistent profile in the profiles folder (`ego doctor` shows where).",
)
@click.option("--headed", is_flag=True, help="Open a real window.")
@click.option(
    "--detach",
    is_flag=True,
    help="Return once Chrome is up and leave it running in the background (`ego close` ends it).",
)
@click.option("--background-child", "child", is_flag=True, hidden=True)
@common
@pass_settings
def launch(settings: Settings, profile: str, headed: bool, detach: bool, child: bool) -> None:
    """Start Chrome with a persistent profile and keep it for the commands that follow.

    Commands that need a browser attach to it by themselves (--new-browser opts out); scripts
    and other tools attach with the printed endpoint. This command waits until Chrome ends
    (Ctrl+C, `ego close`, or its window closed); with --detach it returns once Chrome is up.
    """
    _refuse_endpoint(settings, "launch", "starts a browser of its own and takes no endpoint")
    if headed:
        try:
            check_display("ego launch")
        except ChromeLaunchError as exc:
            sys.exit(settings.output.error(exc))
    existing = state.kept()
    if existing is not None:
        if detach and (existing.profile, existing.headless) == (profile, not headed):
            settings.output.result({**_info(existing), "already": True}, _detached_text)
            return
        error = BrowserError(
            f"ego already keeps a browser ({existing.describe()}): commands attach to it; "
            "`ego close` ends it"
        )
        sys.exit(settings.output.error(error))
    if detach:
        _detach(settings, profile, headed)
        return
    run_async(settings, _keep(settings, profile, headed, child))


async def _keep(settings: Settings, profile: str, headed: bool, child: bool) -> None:
    """Launch, record, print the endpoint, wait until Chrome ends; then remove the record."""
    with settings.output.progress("starting Chrome"):
        # The one browser ego opens a port for by itself: later commands attach to it. Any
        # local process can, too (docs/install.md says what that exposes).
        try:
            browser = await api.launch(profile=profile, headless=not headed, port=0)
        except ChromeLaunchError as exc:
            raise (no_display_error(exc, "ego launch") if headed else exc) from None
    kept: state.KeptBrowser | None = None
    service: CallService | None = None
    try:
        service = await CallService.start(browser)
        process = browser.process
        http_endpoint = _http_endpoint(browser)
        assert process is not None
        assert browser.endpoint is not None
        assert http_endpoint is not None
        kept = state.KeptBrowser(
            endpoint=http_endpoint,
            websocket=browser.endpoint,
            profile=profile,
            profile_dir=str(process.user_data_dir),
            pid=process.pid,
            started=psutil.Process(process.pid).create_time(),
            owner=os.getpid(),
            headless=not headed,
            calls=service.path if service is not None else None,
        )
        state.record(kept)
        settings.output.result(_info(kept), _launch_text, one_line=True)
        sys.stdout.flush()
        if child:
            _quiet_stdio()
        await _closed(browser, signals=True)
    finally:
        try:
            if service is not None:
                await service.close()
            await browser.close()
        finally:
            if kept is not None:
                state.forget(kept.pid)


def _info(kept: state.KeptBrowser) -> dict[str, Any]:
    """What ``ego launch`` prints: the endpoint to attach to, the profile folder, Chrome's pid."""
    return {
        "endpoint": kept.endpoint,
        "websocket": kept.websocket,
        "profile": kept.profile_dir,
        "pid": kept.pid,
        "headless": kept.headless,
    }


def _launch_text(data: dict[str, Any]) -> str:
    return (
        f"Chrome is running (pid {data['pid']}, profile {data['profile']}).\n"
        "ego commands attach to it by themselves; scripts attach with: "
        f"--endpoint {data['endpoint']}\nPress Ctrl+C (or run `ego close`) to stop it."
    )


def _detached_text(data: dict[str, Any]) -> str:
    already = "already " if data.get("already") else ""
    return (
        f"Chrome is {already}running in the background (pid {data['pid']}, profile "
        f"{data['profile']}).\nego commands attach to it by themselves; scripts attach with: "
        f"--endpoint {data['endpoint']}\n`ego close` stops it."
    )


def _quiet_stdio() -> None:
    """Point stdout and stderr at a log file: the ``--detach`` parent that read them is gone."""
    log = state.state_path().with_name("launch.log")
    handle = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(handle, 1)
    os.dup2(handle, 2)
    os.close(handle)


def _detach(settings: Settings, profile: str, headed: bool) -> None:
    """Run ``ego launch`` in a session of its own, wait for its endpoint line, print it, return.

    The background ``ego launch`` owns Chrome as a foreground one does (its watchdog, the
    record removed when Chrome ends); it is only not waited for.
    """
    argv = [sys.executable, "-m", "ego", "--json", "launch", "--profile", profile]
    argv += ["--background-child", *(["--headed"] if headed else [])]
    with settings.output.progress("starting Chrome"):
        child = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # no Ctrl+C or hang-up of this terminal reaches it
        )
        line, ended = _first_json_line(child, _DETACH_TIMEOUT)
    if line is None:
        if ended:
            # Its stdout closed without the line: it is exiting, and its stderr says why.
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(timeout=_EXIT_GRACE)
        if child.poll() is None:
            child.kill()
            child.wait()
            error = BrowserError(f"Chrome did not start within {_DETACH_TIMEOUT:g} s")
            sys.exit(settings.output.error(error))
        assert child.stderr is not None
        sys.exit(_relay_error(settings, child.stderr.read().decode(errors="replace"), child))
    settings.output.result(orjson.loads(line), _detached_text)


def _first_json_line(child: subprocess.Popen[bytes], timeout: float) -> tuple[str | None, bool]:
    """The first line of ``child``'s stdout that is a JSON object (None when there was none)
    and whether its stdout ended (False: ``timeout`` seconds passed first)."""
    found: list[str] = []

    def read() -> None:
        assert child.stdout is not None
        for raw in child.stdout:
            text = raw.decode(errors="replace").strip()
            if text.startswith("{"):
                found.append(text)
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout)
    return (found[0] if found else None), not reader.is_alive()


def _relay_error(settings: Settings, stderr: str, child: subprocess.Popen[bytes]) -> int:
    """Print the background ``ego launch``'s error line as this command's; its exit code."""
    code = child.wait()
    for line in stderr.splitlines():
        try:
            data = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(data, dict) and "error" in data:
            if settings.output.json:
                click.echo(line, err=True)
            else:
                click.echo(f"ego: {data.get('type', 'error')}: {data['error']}", err=True)
            return code or 4
    click.echo(stderr.rstrip() or f"ego: the background ego launch exited {code}", err=True)
    return code or 4


@click.command()
@common
@pass_settings
def close(settings: Settings) -> None:
    """End the browser `ego launch` keeps (and say so when there is none)."""
    _refuse_endpoint(
        settings, "close", "ends the browser `ego launch` keeps, not one given by endpoint"
    )
    kept = state.kept()
    if kept is None:
        settings.output.result(
            {"closed": False, "reason": "no browser is kept"},
            "no browser is kept (`ego launch` keeps one)",
        )
        return
    run_async(settings, _close(kept))
    settings.output.result(
        {"closed": True, **_info(kept)}, f"closed the browser ego kept ({kept.describe()})"
    )


async def _close(kept: state.KeptBrowser) -> None:
    """Ask Chrome to quit (so the profile saves its cookies), wait, kill what is left."""
    with contextlib.suppress(EgoError):
        async with api.connect(kept.websocket, timeout=3) as browser:
            with contextlib.suppress(EgoError):
                await browser.connection.send("Browser.close", timeout=5)
    chrome = _process(kept.pid, kept.started)
    if chrome is not None and await asyncio.to_thread(_still_running, chrome, _CLOSE_GRACE):
        await asyncio.to_thread(kill_tree, kept.pid, create_time=kept.started)
    # The `ego launch` that owned Chrome sees it end, cleans up and removes the record.
    owner = _process(kept.owner, None)
    if owner is not None:
        await asyncio.to_thread(_still_running, owner, _CLOSE_GRACE)
    state.forget(kept.pid)


def _process(pid: int, started: float | None) -> psutil.Process | None:
    try:
        process = psutil.Process(pid)
        if started is not None and abs(process.create_time() - started) > 0.5:
            return None
        return process
    except psutil.Error:
        return None


def _still_running(process: psutil.Process, timeout: float) -> bool:
    """Wait up to ``timeout`` seconds for ``process`` to end; True if it still runs."""
    return not wait_ended(process, timeout)


@click.command()
@click.argument("site_id")
@click.option("--profile", default="default", show_default=True, help="Profile to log in with.")
@click.option("--url", help="The page to open (default: the site's start URL).")
@click.option("--headless", is_flag=True, help="No window (for machines without a display).")
@click.option(
    "--save-state",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also keep the login in FILE (cookies and localStorage, readable by you only) for "
    "`ego run --storage-state`, `ego mcp --storage-state` or another machine.",
)
@common
@pass_settings
def login(
    settings: Settings,
    site_id: str,
    profile: str,
    url: str | None,
    headless: bool,
    save_state: Path | None,
) -> None:
    """Open a window on SITE_ID's page so that a person can log in by hand.

    The session is kept in the profile; close the window (or press Ctrl+C) when done. With
    the browser `ego launch --headed` keeps on that profile (or --endpoint), the page opens
    in a tab of it: close that tab when done. With --headless, Chrome has no window and
    listens on a local port: the command prints how to reach its tab (chrome://inspect on a
    machine with a screen, over an ssh tunnel) or drive it from a script; close the tab or
    press Ctrl+C when done. With --save-state FILE the login is also kept in FILE, saved at
    each page the login tab shows; a FILE that ends up holding no cookie is an error.
    """

    async def go() -> int:
        manifest = settings.learnings().site(site_id)
        start = as_url(url) if url else settings.start_url(site_id, manifest.start_url)
        if not start:
            raise click.UsageError(f"site {site_id!r} has no startUrl: pass --url")
        # Without a window, a Chrome of its own listens on a port: the way to reach its tab.
        async with settings.browser(
            profile=profile, headless=headless, site_id=site_id, port=0 if headless else None
        ) as browser:
            tab = await browser.new_tab(start, wait_until="domcontentloaded")
            endpoint = settings.endpoint or _http_endpoint(browser)
            window = browser.process is not None and not headless
            saver = LoginSaver(browser, tab, save_state) if save_state is not None else None
            if saver is not None:
                await saver.start()
            # Listening before the line is printed: whoever reads it may close the tab, or
            # press Ctrl+C, at once.
            closing = _closed(browser) if window else _tab_closed(browser, tab)
            text = _login_text(manifest.name, profile, tab, endpoint, window, headless)
            with _stop_on_signals() as stop:
                settings.output.result(
                    {
                        "site": site_id,
                        "url": start,
                        "profile": profile,
                        "tab": tab.target_id,
                        "endpoint": endpoint,
                        "save_state": str(save_state) if save_state is not None else None,
                    },
                    text,
                    one_line=True,
                )
                sys.stdout.flush()
                try:
                    await _first_of([closing, stop.wait()])
                finally:
                    if saver is not None:
                        await saver.finish()
            if saver is not None and save_state is not None and saver.empty:
                # A file with no login would load as a logged-out browser, without a word.
                with contextlib.suppress(OSError):
                    save_state.unlink()
                error = StorageStateError(
                    f"no login was saved: the browser held no cookie when the login ended (was "
                    f"it finished in tab {tab.target_id[:8]}?), so {save_state} was not kept; "
                    "run the command again and log in before closing the tab"
                )
                return settings.output.error(error)
        return EXIT_OK

    sys.exit(run_async(settings, go()))


def _login_text(
    name: str, profile: str, tab: Tab, endpoint: str | None, window: bool, headless: bool
) -> str:
    """What ``ego login`` tells the person: where to log in, and how to say it is done."""
    if window:
        return f"Log in to {name} in the window, then close it (profile {profile})."
    if not headless or endpoint is None:
        return f"Log in to {name} in the tab it opened, then close that tab (profile {profile})."
    port = endpoint.rsplit(":", 1)[-1]
    return (
        f"Chrome has no window here: log in to {name} in its tab {tab.target_id[:8]} from a "
        f"machine with a screen (`ssh -L {port}:127.0.0.1:{port}` to this one, then "
        f"chrome://inspect there with 127.0.0.1:{port} under Configure, and inspect the tab), "
        f"or from a script (--endpoint {endpoint}); then close the tab or press Ctrl+C "
        f"(profile {profile})."
    )


@contextlib.contextmanager
def _stop_on_signals() -> Iterator[asyncio.Event]:
    """An event Ctrl+C or SIGTERM sets while the block runs (the person says the login is
    done), in place of stopping the command."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    caught = (signal.SIGINT, signal.SIGTERM)
    for number in caught:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(number, stop.set)
    try:
        yield stop
    finally:
        for number in caught:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(number)


async def _first_of(waits: list[Any]) -> None:
    """Wait until the first of ``waits`` ends (an ego error ends it too); cancel the rest."""
    tasks = [asyncio.ensure_future(wait) for wait in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        results = await asyncio.gather(*tasks, return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException) and not isinstance(
            result, (asyncio.CancelledError, EgoError)
        ):
            raise result


def _http_endpoint(browser: Browser) -> str | None:
    """``http://127.0.0.1:PORT`` of a local browser (what ``--endpoint`` takes); None for one
    that has no port (ego launched it and talks to it over a pipe)."""
    if browser.endpoint is None:
        return None
    port = browser.endpoint.split(":")[2].split("/")[0]
    return f"http://127.0.0.1:{port}"


async def _closed(browser: Browser, *, signals: bool = False) -> None:
    """Wait until the browser goes away (its window closed, Chrome quit, Ctrl+C); with
    ``signals``, SIGTERM and SIGHUP end the wait too, so that the caller cleans up."""
    loop = asyncio.get_running_loop()
    closed: asyncio.Future[None] = loop.create_future()

    def done() -> None:
        if not closed.done():
            closed.set_result(None)

    browser.connection.on_close(done)
    caught = (signal.SIGTERM, signal.SIGHUP) if signals and hasattr(signal, "SIGHUP") else ()
    for number in caught:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(number, done)
    try:
        await closed
    finally:
        for number in caught:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(number)


def _tab_closed(browser: Browser, tab: Tab) -> asyncio.Future[dict[str, Any]]:
    """A future that is done when ``tab`` closes (an ego error when the browser goes away)."""
    return browser.connection.expect(
        "Target.detachedFromTarget",
        predicate=lambda params: params.get("targetId") == tab.target_id,
    )


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
