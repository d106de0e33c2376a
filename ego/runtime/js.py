"""Building the JavaScript that runs in the page: the wrapper, embedded args.

Everything here is pure string work; nothing talks to a browser.
"""

from __future__ import annotations

from typing import Any

from ..protocol.literals import MAX_JSON_DEPTH, embed_json

__all__ = [
    "MAX_JSON_DEPTH",
    "embed_json",
    "wrap",
    "wrap_call",
]


def wrap(expression: str, args: Any, *, url: str | None = None) -> str:
    """The plain wrap: an async IIFE that calls the tool with its args and returns the result.

    ``expression`` is a tool's source as one expression
    (:func:`ego.learning.catalog.tool_source.normalize_source`). The prefix shares the first
    line with the tool, so stack lines match the tool file. ``url`` names the script in JS
    stacks.

    Raises:
        TypeError: ``args`` is not JSON.
    """
    return wrap_call(expression, embed_json(args), url=url)


def wrap_call(expression: str, arguments: str, *, url: str | None = None) -> str:
    """Like :func:`wrap`, with the call's JavaScript argument list given as source.

    ``arguments`` is spliced as is: ``'{"q": 1}'`` for a tool, ``'document, {"q": 1}'`` for
    an extractor.
    """
    tail = f"//# sourceURL={url}\n" if url else ""
    return (
        "(async () => { const __ego_tool = "
        + expression
        + f";\nreturn await __ego_tool({arguments}); }})()\n"
        + tail
    )
