"""The case file of a site's learning tests: the schema of ``tests/cases.json`` and loading it.

``cases.json``::

    {
      "defaults": {"har": "x-home.har", "url": "https://x.com/home"},   // optional
      "cases": [
        {
          "name": "home timeline: first three posts",     // unique within the site
          "har": "x-home.har",                            // in tests/
          "url": "https://x.com/home",                    // what the tab loads first
          "tool": "get_timeline_posts",                   // a declared tool (browser or Python)
          "args": {"max_posts": 3, "scroll": false},
          "expect": {...},            // the exact JSON result, or
          "expect_subset": {...},     // these keys (recursively) must be equal, and/or
          "expect_schema": {...},     // a JSON Schema the result must satisfy, or
          "expect_error": "SKILL_BROKEN",   // or NEEDS_LOGIN, or TOOL_ERROR (the tool threw)
          "error_contains": "primaryColumn",  // optional, with expect_error
          "cookies": [{"name": "ct0", "value": "test", "domain": ".x.com", "secure": true}],
          "setup": "document.querySelector('#q').focus()",  // JS run after the page loaded
          "mode": "strict",           // or "fail": unmatched requests fail without failing the case
          "ignore_params": ["hl"],    // query parameters matching ignores (locale, cache-busters)
          "timeout": 20,              // seconds for the tool (default: the manifest's, else 30)
          "wait_until": "load",       // the navigation's lifecycle point
          "check_returns": true       // also check the manifest's returns schema (default)
        }
      ]
    }

Only ``name``, ``har``, ``url`` and ``tool`` are required (``har`` and ``url`` may come from
``defaults``). A case with no ``expect*`` passes when the tool returns without an error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ...errors import InvalidCasesError, UnsafePathError
from ..catalog.paths import resolve_inside
from ..catalog.registry import SiteEntry
from ..catalog.schemas import validator, worded

__all__ = [
    "CASES_FILE",
    "CASES_SCHEMA",
    "ERROR_KINDS",
    "MAX_CASES_BYTES",
    "MISSING",
    "LearningCase",
    "load_cases",
]

#: Where a site keeps its cases, relative to the site folder.
CASES_FILE: Final = "tests/cases.json"

#: The most bytes a ``cases.json`` may take: more is refused unread (its HARs have bounds of
#: their own, :class:`ego.replay.HarBounds`).
MAX_CASES_BYTES: Final = 16 * 1024 * 1024

#: The error kinds ``expect_error`` may name.
ERROR_KINDS: Final = ("SKILL_BROKEN", "NEEDS_LOGIN", "TOOL_ERROR")

#: What an ``expect*`` the case does not give holds (``None`` is a value a tool may return).
MISSING: Final[Any] = object()

_CASE_PROPERTIES: dict[str, Any] = {
    "name": {"type": "string", "minLength": 1},
    "har": {"type": "string", "minLength": 1},
    "url": {"type": "string", "pattern": "^https?://"},
    "tool": {"type": "string", "minLength": 1},
    "args": {"type": "object"},
    "expect": {},
    "expect_subset": {},
    "expect_schema": {"type": ["object", "boolean"]},
    "expect_error": {"enum": list(ERROR_KINDS)},
    "error_contains": {"type": "string"},
    "cookies": {
        "type": "array",
        "items": {
            "type": "object",
            "required": ["name", "value"],
            "properties": {"name": {"type": "string"}, "value": {"type": "string"}},
        },
    },
    "setup": {"type": "string"},
    "mode": {"enum": ["strict", "fail"]},
    "ignore_params": {"type": "array", "items": {"type": "string"}},
    "timeout": {"type": "number", "exclusiveMinimum": 0, "maximum": 600},
    "wait_until": {"enum": ["commit", "domcontentloaded", "load", "networkidle"]},
    "check_returns": {"type": "boolean"},
    "description": {"type": "string"},
}

#: The JSON Schema of ``tests/cases.json``.
CASES_SCHEMA: Final[dict[str, Any]] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["cases"],
    "additionalProperties": False,
    "properties": {
        "$schema": {"type": "string"},
        "description": {"type": "string"},
        "defaults": {
            "type": "object",
            "properties": _CASE_PROPERTIES,
            "additionalProperties": False,
        },
        "cases": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "tool"],
                "properties": _CASE_PROPERTIES,
                "additionalProperties": False,
                "not": {"required": ["expect_error", "expect"]},
            },
        },
    },
}


@dataclass(frozen=True)
class LearningCase:
    """One case of a site's ``tests/cases.json``, with its HAR path resolved.

    An ``expect*`` the file does not give is :data:`MISSING`.
    """

    site_id: str
    name: str
    har: Path
    url: str
    tool: str
    args: dict[str, Any] = field(default_factory=dict)
    expect: Any = MISSING
    expect_subset: Any = MISSING
    expect_schema: Any = MISSING
    expect_error: str | None = None
    error_contains: str | None = None
    cookies: tuple[dict[str, Any], ...] = ()
    setup: str | None = None
    mode: str = "strict"
    ignore_params: tuple[str, ...] = ()
    timeout: float | None = None
    wait_until: str = "load"
    check_returns: bool = True

    @property
    def label(self) -> str:
        """``site/name``."""
        return f"{self.site_id}/{self.name}"


def load_cases(entry: SiteEntry) -> list[LearningCase]:
    """Read and check a site's ``tests/cases.json``; ``[]`` when the site has none.

    Args:
        entry: the site (from :meth:`ego.learning.Learnings.find`).

    Raises:
        InvalidCasesError: the file is not JSON or fails :data:`CASES_SCHEMA`, two cases share
            a name, a case lacks ``har`` or ``url`` (after ``defaults``), or a HAR path leaves
            the site folder or does not exist. ``problems`` lists them all.
    """
    file = entry.directory / CASES_FILE
    if not file.is_file():
        return []
    site_id = entry.site_id
    try:
        with open(file, "rb") as handle:
            raw = handle.read(MAX_CASES_BYTES + 1)
        if len(raw) > MAX_CASES_BYTES:
            raise _invalid(
                site_id,
                file,
                [
                    f"it is larger than {MAX_CASES_BYTES:,} bytes: split the cases or the values "
                    "they expect (expect_subset, expect_schema)"
                ],
            )
        data = json.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _invalid(site_id, file, [f"cannot read it as JSON: {exc}"]) from None
    # Every problem, not only the first: a broken file is fixed in one go.
    problems = list(
        dict.fromkeys(
            f"{'/'.join(str(p) for p in error.absolute_path) or '(top level)'}: {worded(error)}"
            for error in sorted(
                validator(CASES_SCHEMA).iter_errors(data), key=lambda e: list(e.absolute_path)
            )
        )
    )
    if problems:
        raise _invalid(site_id, file, problems)
    defaults: dict[str, Any] = data.get("defaults", {})
    cases: list[LearningCase] = []
    seen: set[str] = set()
    for index, raw in enumerate(data["cases"]):
        merged = {**defaults, **raw}
        where = f"cases/{index} ({merged['name']!r})"
        if merged["name"] in seen:
            problems.append(f"{where}: another case has the same name")
        seen.add(merged["name"])
        for key in ("har", "url"):
            if key not in merged:
                problems.append(f"{where}: no {key!r} (give it in the case or in defaults)")
        if "har" not in merged or "url" not in merged:
            continue
        try:
            har = resolve_inside(entry.directory, f"tests/{merged['har']}", what=where)
        except UnsafePathError as exc:
            problems.append(str(exc))
            continue
        if not har.is_file():
            problems.append(f"{where}: HAR file tests/{merged['har']} does not exist")
            continue
        cases.append(
            LearningCase(
                site_id=site_id,
                name=merged["name"],
                har=har,
                url=merged["url"],
                tool=merged["tool"],
                args=dict(merged.get("args", {})),
                expect=merged.get("expect", MISSING),
                expect_subset=merged.get("expect_subset", MISSING),
                expect_schema=merged.get("expect_schema", MISSING),
                expect_error=merged.get("expect_error"),
                error_contains=merged.get("error_contains"),
                cookies=tuple(dict(c) for c in merged.get("cookies", ())),
                setup=merged.get("setup"),
                mode=merged.get("mode", "strict"),
                ignore_params=tuple(merged.get("ignore_params", ())),
                timeout=merged.get("timeout"),
                wait_until=merged.get("wait_until", "load"),
                check_returns=merged.get("check_returns", True),
            )
        )
    if problems:
        raise _invalid(site_id, file, problems)
    return cases


def _invalid(site_id: str, file: Path, problems: list[str]) -> InvalidCasesError:
    more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
    return InvalidCasesError(
        f"site {site_id!r}: {file} is invalid: {problems[0]}{more}",
        site_id=site_id,
        problems=problems,
    )
