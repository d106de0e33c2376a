"""JSON text for any value ego prints or serves: what orjson writes, and for a string holding an
unpaired UTF-16 surrogate (text a page or a tool cut in the middle of an emoji, which JSON
escapes can carry and UTF-8 cannot) the same text with that surrogate as a ``\\ud83d`` escape;
and such text read back.

The connection to Chrome does the same for the messages it sends and reads
(:mod:`ego.protocol._codec`); the command line, the MCP server and batch files use this.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import orjson

from ._codec import decode_lenient

__all__ = ["json_bytes", "json_loads", "json_text"]


def json_bytes(
    value: Any, *, option: int = 0, default: Callable[[Any], Any] | None = None
) -> bytes:
    """``value`` as UTF-8 JSON; lone surrogates as ``\\uXXXX`` escapes, integers of any size.

    Args:
        value: any JSON-like value.
        option: orjson's options (``OPT_INDENT_2``, ``OPT_NON_STR_KEYS``, ...).
        default: turns what JSON cannot hold into something it can (as orjson's).

    Raises:
        TypeError: ``value`` holds something JSON cannot, and ``default`` does not help.
    """
    try:
        return orjson.dumps(value, default=default, option=option)
    except TypeError as exc:
        refused = exc
    # What orjson refuses and JSON holds: a lone surrogate ("str is not valid UTF-8:
    # surrogates not allowed"), an integer beyond 64 bits (a manifest may hold one).
    indent = 2 if option & orjson.OPT_INDENT_2 else None
    try:
        text = json.dumps(
            value, ensure_ascii=True, indent=indent, default=default, allow_nan=False,
            separators=(",", ": ") if indent else (",", ":"),
        )  # fmt: skip
    except (TypeError, ValueError, RecursionError):
        raise refused from None
    return text.encode("ascii")


def json_text(value: Any, *, option: int = 0, default: Callable[[Any], Any] | None = None) -> str:
    """:func:`json_bytes` as a ``str``.

    Raises:
        TypeError: as :func:`json_bytes`.
    """
    return json_bytes(value, option=option, default=default).decode("utf-8")


def json_loads(data: bytes) -> Any:
    """Parse JSON text as :func:`json_bytes` writes it: a lone surrogate escape comes back as
    the same lone code point, an integer of any size as an ``int``.

    Raises:
        ValueError: ``data`` is not JSON.
    """
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        # What orjson does not read and JSON holds; the connection reads Chrome's the same way.
        return decode_lenient(data)
