"""What every ``ego`` command shares: settings, the browser to use, options, arg parsing."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any, TypeVar

import click
import orjson

from .. import api
from ..api import Browser
from ..errors import EgoError
from ..learning.registry import Learnings
from .output import Output

__all__ = [
    "Settings",
    "common",
    "endpoint_option",
    "json_option",
    "parse_args",
    "pass_settings",
    "run_async",
]

T = TypeVar("T")


class Settings:
    """Options every command shares."""

    def __init__(self, endpoint: str | None, json_mode: bool | None, workspace: str | None) -> None:
        self.endpoint = endpoint
        self.output = Output(json_mode)
        self.workspace = workspace

    def learnings(self) -> Learnings:
        return Learnings(workspace=self.workspace)

    @contextlib.asynccontextmanager
    async def browser(
        self, *, profile: str | None = None, headless: bool = True
    ) -> AsyncIterator[Browser]:
        """The browser to use: attached to ``--endpoint``, else a launched Chrome."""
        learnings = self.learnings()
        if self.endpoint:
            with self.output.progress(f"connecting to {self.endpoint}"):
                browser = await api.connect(self.endpoint, learnings=learnings)
        else:
            with self.output.progress("starting Chrome"):
                browser = await api.launch(profile=profile, headless=headless, learnings=learnings)
        try:
            yield browser
        finally:
            await browser.close()


def run_async(settings: Settings, coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a command's coroutine; turn an ego error into one line and an exit code."""
    try:
        return asyncio.run(coroutine)
    except EgoError as exc:
        sys.exit(settings.output.error(exc))
    except KeyboardInterrupt:
        sys.exit(130)


pass_settings = click.make_pass_decorator(Settings)


def endpoint_option(function: Callable[..., Any]) -> Callable[..., Any]:
    """``--endpoint`` on a subcommand too, so it reads naturally after the command name."""

    def remember(ctx: click.Context, _: click.Parameter, value: str | None) -> None:
        if value:
            ctx.ensure_object(Settings).endpoint = value

    return click.option(
        "--endpoint",
        expose_value=False,
        callback=remember,
        help="Attach to this browser instead of launching one.",
    )(function)


def json_option(function: Callable[..., Any]) -> Callable[..., Any]:
    """``--json`` on a subcommand too."""

    def remember(ctx: click.Context, _: click.Parameter, value: bool) -> None:
        if value:
            ctx.ensure_object(Settings).output = Output(True)

    return click.option(
        "--json",
        "json_flag",
        is_flag=True,
        expose_value=False,
        callback=remember,
        help="Print JSON.",
    )(function)


def common(function: Callable[..., Any]) -> Callable[..., Any]:
    return endpoint_option(json_option(function))


def parse_args(args_json: str | None, pairs: tuple[str, ...]) -> dict[str, Any]:
    """Tool args from ``--args JSON`` and ``--arg k=v`` (v is JSON when it parses, else text)."""
    args: dict[str, Any] = {}
    if args_json:
        try:
            loaded = orjson.loads(args_json)
        except orjson.JSONDecodeError as exc:
            raise click.BadParameter(f"not JSON: {exc}", param_hint="--args") from None
        if not isinstance(loaded, dict):
            raise click.BadParameter("must be a JSON object", param_hint="--args")
        args.update(loaded)
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{pair!r} is not k=v", param_hint="--arg")
        try:
            args[key] = orjson.loads(value)
        except orjson.JSONDecodeError:
            args[key] = value
    return args
