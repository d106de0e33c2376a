"""Sizes on the command line: ``--max-har-bytes 256M``, ``--trace-max-size 50M``."""

from __future__ import annotations

import re
from typing import Any, Final

import click

__all__ = ["ByteSize"]

_UNITS: Final = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}
_SIZE: Final = re.compile(r"^\s*(\d+)\s*([kmg]?)(i?b)?\s*$", re.IGNORECASE)


class ByteSize(click.ParamType[int]):
    """A number of bytes: ``300000000``, ``512K``, ``256M``, ``1G`` (``MiB``, ``MB`` alike:
    units of 1024)."""

    name = "SIZE"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        found = _SIZE.match(str(value))
        if found is None or int(found.group(1)) < 1:
            self.fail(
                f"{value!r} is not a size: give bytes, or a number with K, M or G", param, ctx
            )
        return int(found.group(1)) * _UNITS[found.group(2).lower()]
