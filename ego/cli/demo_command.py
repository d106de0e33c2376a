"""``ego demo``: the bundled demo shop and a tour of a learning on it."""

from __future__ import annotations

from typing import Any

import click
import orjson

from ..learning.context import LearnContext
from .common import (
    Settings,
    common,
    pass_settings,
    run_async,
)
from .learning_commands import context_text

__all__ = ["demo"]


@click.command()
@click.option(
    "--port", default=0, show_default=True, help="Port for the demo shop (0: any free one)."
)
@common
@pass_settings
def demo(settings: Settings, port: int) -> None:
    """Serve the bundled demo shop, launch Chrome, show learn_context and run its tools."""
    from ..demo import DemoServer
    from ..demo.tour import tour

    async def go() -> tuple[LearnContext, list[Any]]:
        with DemoServer(port=port) as shop:
            settings.output.info(f"demo shop at {shop.url}")
            async with settings.browser() as browser:
                with settings.output.progress("running the demo shop's tools"):
                    return await tour(browser, shop.url)

    context, steps = run_async(settings, go())
    data = {"learn_context": context.model_dump(mode="json"), "steps": [s.as_dict() for s in steps]}

    def human(_: Any) -> str:
        lines = ["learn_context:", context_text(context), "", "runs:"]
        for step in steps:
            mark = "ok " if step.ok else "-- "
            lines.append(
                f"{mark} {step.call}  [{step.ms:.1f} ms{', ' + step.note if step.note else ''}]"
            )
            lines.append(f"      {_short(step.result)}")
        return "\n".join(lines)

    settings.output.result(data, human)


def _short(value: Any, limit: int = 160) -> str:
    text = orjson.dumps(value, default=str).decode() if not isinstance(value, str) else value
    return text if len(text) <= limit else text[: limit - 1] + "…"
