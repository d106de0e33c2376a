"""``ego demo``: the bundled demo shop and a tour of a learning on it."""

from __future__ import annotations

import signal
import sys
import threading
from typing import TYPE_CHECKING, Any

import click
import orjson

from ..learning.describe.compact import CompactContext

if TYPE_CHECKING:
    from ..demo import DemoServer
from .common import (
    Settings,
    common,
    pass_settings,
    run_async,
)
from .learning_commands import compact_text

__all__ = ["demo"]


#: Where ``--serve`` serves the shop: the port the demo-shop learning's ``startUrl`` names.
SERVE_PORT = 8765
#: The learning the demo shop's tools are in.
_SITE = "demo-shop"


@click.command()
@click.option(
    "--port",
    type=int,
    help=f"Port for the demo shop (default: any free one; {SERVE_PORT} with --serve).",
)
@click.option(
    "--serve",
    is_flag=True,
    help="Only serve the shop until Ctrl+C, where `ego run demo-shop ...` finds it.",
)
@click.option(
    "--changed-api",
    is_flag=True,
    help="Serve the shop with its API changed on purpose (with --serve): the product search "
    "moves to /api/catalog/search and its products say title for name.",
)
@click.option(
    "--changed-pages",
    is_flag=True,
    help="Serve the order desk redesigned on purpose (with --serve): its search button is "
    "renamed (its test id too) and the order's email field moves to the second step.",
)
@common
@pass_settings
def demo(
    settings: Settings, port: int | None, serve: bool, changed_api: bool, changed_pages: bool
) -> None:
    """Serve the bundled demo shop, launch Chrome, show learn_context and run its tools.

    With --serve, serve the shop alone on http://shop.localhost:8765/ (the demo-shop
    learning's start URL) until Ctrl+C, so that `ego run demo-shop TOOL` and scripts can use
    it from another terminal; `python -m ego.demo` does the same. --changed-api breaks the
    shop's API as a redesign would, for `ego heal` to mend (docs/learning-loop.md);
    --changed-pages the order desk's pages.
    """
    from ..demo.tour import tour

    if serve:
        _serve(settings, SERVE_PORT if port is None else port, changed_api, changed_pages)
        return
    if changed_api or changed_pages:
        raise click.UsageError("--changed-api and --changed-pages go with --serve")
    port = port or 0

    shop = _started(settings, port, False)

    async def go() -> tuple[CompactContext, list[Any]]:
        with shop:
            settings.output.info(f"demo shop at {shop.url}")
            async with settings.browser() as browser:
                with settings.output.progress("running the demo shop's tools"):
                    return await tour(browser, shop.url)

    context, steps = run_async(settings, go())
    data = {"learn_context": context.model_dump(mode="json"), "steps": [s.as_dict() for s in steps]}

    def human(_: Any) -> str:
        lines = ["learn_context:", compact_text(context), "", "runs:"]
        for step in steps:
            mark = "ok " if step.ok else "-- "
            lines.append(
                f"{mark} {step.call}  [{step.ms:.1f} ms{', ' + step.note if step.note else ''}]"
            )
            lines.append(f"      {_short(step.result)}")
        return "\n".join(lines)

    settings.output.result(data, human)


def _serve(
    settings: Settings, port: int, changed_api: bool = False, changed_pages: bool = False
) -> None:
    """Serve the demo shop on ``port`` until Ctrl+C (or SIGTERM)."""
    server = _started(settings, port, changed_api, changed_pages)
    # Commands open the shop at the learning's start URL: elsewhere, they need telling.
    moved = None if server.port == SERVE_PORT else f"{_SITE}={server.url}"
    try:
        settings.output.result(
            {
                "url": server.url,
                "local_url": server.local_url,
                "port": server.port,
                "api_changed": changed_api,
                "pages_changed": changed_pages,
                "start_url": moved,
            },
            lambda data: (
                f"demo shop at {data['url']} (also {data['local_url']}); log in with demo / "
                "demo."
                + (" Its API is changed (search moved, name is title)." if changed_api else "")
                + (
                    f" ego commands open it at :{SERVE_PORT}: give them --start-url {moved}, "
                    f'or export EGO_START_URL="{moved} shop.localhost={server.url}" (its '
                    "skills too)."
                    if moved
                    else ""
                )
                + " Press Ctrl+C to stop."
            ),
            one_line=True,
        )
        sys.stdout.flush()
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        threading.Event().wait()
    except KeyboardInterrupt:
        settings.output.info("stopped")
    finally:
        server.close()


def _started(
    settings: Settings, port: int, changed_api: bool, changed_pages: bool = False
) -> DemoServer:
    """The demo shop serving on ``port``; a port it cannot have ends the command with one
    line naming --port."""
    from ..demo import DemoServer
    from ..errors import ListenError

    try:
        return DemoServer(port=port, api_changed=changed_api, pages_changed=changed_pages).start()
    except ListenError as exc:
        sys.exit(settings.output.error(exc))


def _short(value: Any, limit: int = 160) -> str:
    text = orjson.dumps(value, default=str).decode() if not isinstance(value, str) else value
    return text if len(text) <= limit else text[: limit - 1] + "…"
