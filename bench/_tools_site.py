"""The site ``bench_tools.py`` runs: a learnings folder with two browser tools that compute the
same thing, ``async (args) => args.n + 1``, one of them padded with source it does not need.
"""

from __future__ import annotations

import hashlib
import itertools
from pathlib import Path
from typing import Any

import orjson

import ego
from ego.learning.catalog.manifest import BrowserToolSpec
from ego.learning.catalog.registry import LoadedSource

__all__ = ["FUNCTION", "SITE_ID", "TOOLS", "loaded_source", "padded_source", "write_site"]

SITE_ID = "bench-tools"
FUNCTION = "async (args) => args.n + 1"
TOOLS = {"small": "add_one", "padded": "add_one_padded"}


def padded_source(size: int, padding: str) -> str:
    """``FUNCTION`` padded to at least ``size`` bytes with source it does not need.

    ``comment``: a block of ``//`` lines of hex data before the function (the page only has
    to scan it). ``table``: the same data as an unused ``const`` array inside the function
    body (the page builds the array on every call).
    """
    if padding == "table":
        head, separator, tail = (
            "async (args) => {\n  const TABLE = [\n    ",
            "\n    ",
            "\n  ];\n  return args.n + 1;\n}\n",
        )
    else:
        head, separator, tail = "", "\n", "\n" + FUNCTION + "\n"
    rows: list[str] = []
    total = len(head) + len(tail)
    for index in itertools.count():
        digest = hashlib.sha256(str(index).encode()).hexdigest()
        row = f'[{index}, "{digest}"],' if padding == "table" else f"// {index:06d} {digest}"
        total += len(row) + (len(separator) if rows else 0)
        rows.append(row)
        if total >= size:
            break
    return head + separator.join(rows) + tail


def write_site(root: Path, url: str, padded: str) -> Path:
    """A learnings folder with the bench site; returns the learnings root."""
    learnings = root / "learnings"
    site = learnings / SITE_ID
    (site / "browser-tools").mkdir(parents=True)
    args = {"n": {"type": "integer", "required": True, "description": "any integer"}}
    tools: dict[str, Any] = {}
    for kind, name in TOOLS.items():
        path = f"browser-tools/{name}.js"
        source = padded if kind == "padded" else FUNCTION + "\n"
        (site / path).write_text(source, encoding="utf-8")
        tools[name] = {
            "description": f"answers n + 1 ({kind} source)",
            "path": path,
            "args": args,
            "returns": {"type": "integer"},
            "sideEffect": "read",
        }
    host = url.split("//", 1)[1].rstrip("/")
    manifest = {
        "id": SITE_ID,
        "name": "ego tools bench",
        "domains": [host],
        "startUrl": url,
        "browserTools": tools,
    }
    (site / "manifest.json").write_bytes(orjson.dumps(manifest, option=orjson.OPT_INDENT_2))
    return learnings


def loaded_source(site: ego.Site, tool: str) -> LoadedSource:
    """The tool as ego loads it: what the raw and Playwright contenders wrap."""
    _, spec = site.learnings.tool(SITE_ID, tool)
    assert isinstance(spec, BrowserToolSpec)
    return site.learnings.browser_source(SITE_ID, spec)
