"""``ego script``: run an agent script with a browser, a tab and the site facade ready."""

from __future__ import annotations

import ast
import builtins
import contextlib
import inspect
import sys
import traceback
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import click

from ..errors import EgoError
from ..learning.catalog.matching import as_url
from .common import (
    Settings,
    endpoint_option,
    pass_settings,
    run_async,
)
from .learning_commands import CLI_PROFILE_HINT

__all__ = ["ScriptError", "run_script", "script", "script_traceback"]


class ScriptError(Exception):
    """A script ended with an exception that is not an ego error (its type and message)."""


@click.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--url", help="Open this page in the tab first.")
@click.option("--profile", help="Persistent profile to launch with.")
@endpoint_option
@pass_settings
def script(settings: Settings, file: Path, url: str | None, profile: str | None) -> None:
    """Run an agent script with `browser`, `tab` and `site` ready.

    `ego` is imported for it too. The script is plain Python and may use `await` at the top level
    (`print(await site.run_tool("demo-shop", "get_product", {"id": 1}))`). It may also
    define `async def main(browser, tab, site)`, which is awaited after the top level ran.
    An exception prints the script's own frames and one error line.
    """
    try:
        code = _compile(file)
    except SyntaxError as exc:
        traceback.print_exception(SyntaxError, exc, None, limit=0)
        sys.exit(settings.output.error(ScriptError(f"SyntaxError: {exc.msg} ({file})")))

    async def go() -> BaseException | None:
        async with settings.browser(profile=profile) as browser:
            browser.site.profile_hint = CLI_PROFILE_HINT
            tab = await browser.new_tab(as_url(url)) if url else await browser.new_tab()
            try:
                await run_script(code, file, browser=browser, tab=tab, site=browser.site)
            except Exception as exc:
                # Reported after the browser closed, outside click and asyncio.
                return exc
            finally:
                # An attached browser outlives the script: leave no tab behind in it.
                with contextlib.suppress(EgoError):
                    await tab.close()
        return None

    failure = run_async(settings, go())
    if failure is not None:
        text = script_traceback(failure, file)
        if text:
            click.echo(text, err=True, nl=False)
        reported = (
            failure
            if isinstance(failure, EgoError)
            else ScriptError(f"{type(failure).__name__}: {failure}")
        )
        sys.exit(settings.output.error(reported))


def _compile(file: Path) -> Any:
    """``file``'s code, compiled so that ``await`` works at the top level."""
    source = file.read_text(encoding="utf-8")
    return compile(source, str(file), "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


async def run_script(code: Any, file: Path, **names: Any) -> dict[str, Any]:
    """Run compiled script ``code`` with ``names`` (browser, tab, site) as globals.

    A top-level ``await`` makes the code a coroutine, which is awaited; then a ``main``
    the script defines is called with ``browser``, ``tab`` and ``site`` and awaited when it
    returns an awaitable.

    Returns:
        The script's globals once it ran.
    """
    import ego  # the package itself, as an agent script imports it

    namespace: dict[str, Any] = {
        "__name__": "__ego_script__",
        "__file__": str(file),
        "__builtins__": builtins,
        "ego": ego,
        **names,
    }
    result = eval(code, namespace)  # the user's own script, compiled above
    if inspect.isawaitable(result):
        await result
    entry = namespace.get("main")
    if callable(entry):
        called = entry(names.get("browser"), names.get("tab"), names.get("site"))
        if isinstance(called, Awaitable):
            await called
    return namespace


def script_traceback(exc: BaseException, file: Path) -> str:
    """The traceback of ``exc`` cut to the script's own frames ("" when it has none).

    The frames of click, asyncio and ego itself say nothing about the script's mistake; the
    last line (the exception) is left to the one error line printed after this.
    """
    name = str(file)
    frames = [frame for frame in traceback.extract_tb(exc.__traceback__) if frame.filename == name]
    if not frames:
        return ""
    return "Traceback (the script's frames):\n" + "".join(traceback.format_list(frames))
