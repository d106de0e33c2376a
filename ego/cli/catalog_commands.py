"""``ego catalog search|show``: find tools and notes across every root, and show one."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from ..errors import EgoError
from ..learning.describe.search import CatalogSearch, CatalogSite, CatalogTool, catalog_search, show
from .common import Settings, json_option, pass_settings

__all__ = ["catalog"]


@click.group()
def catalog() -> None:
    """Search the tools and notes of every site (workspace, packs, bundled); show one."""


@catalog.command("search")
@click.argument("query", nargs=-1)
@click.option("--domain", metavar="HOST", help="Only sites whose domains match HOST (x.com).")
@click.option(
    "--limit", type=click.IntRange(min=1), default=10, show_default=True, help="Hits to show."
)
@json_option
@pass_settings
def catalog_search_command(
    settings: Settings, query: tuple[str, ...], domain: str | None, limit: int
) -> None:
    """Rank tools and notes by QUERY: names, descriptions, domains and notes.

    Each hit shows its site, tool (or note), where it comes from, its side effect and an
    example call. With --domain and no QUERY, every tool and note of that domain.
    """
    if not query and domain is None:
        raise click.UsageError("give words to search for, or --domain HOST")
    try:
        found = catalog_search(settings.learnings(), " ".join(query), domain=domain, limit=limit)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--domain") from None
    settings.output.result(found.model_dump(mode="json"), lambda _: _search_text(found))


def _search_text(found: CatalogSearch) -> str:
    if not found.hits:
        where = f" on {found.domain}" if found.domain else ""
        return f"nothing matches {found.query!r}{where}"
    lines = []
    for hit in found.hits:
        effect = hit.side_effect or ""
        what = f"{hit.site_id}/{hit.name}" if hit.kind == "tool" else f"{hit.site_id} {hit.name}"
        lines.append(f"{what}  [{hit.kind}, {hit.source}{', ' + effect if effect else ''}]")
        lines.append(f"    {hit.description}")
        if not hit.valid:
            lines.append(f"    INVALID: {'; '.join(hit.problems)}")
        elif hit.example:
            lines.append(f"    {hit.example}")
    shown = len(found.hits)
    if found.total > shown:
        lines.append(f"({shown} of {found.total} matches; --limit N shows more)")
    return "\n".join(lines)


@catalog.command("show")
@click.argument("ref", metavar="SITE[/TOOL]")
@json_option
@pass_settings
def catalog_show(settings: Settings, ref: str) -> None:
    """Print one site (its notes and every tool) or one tool in full."""
    try:
        found = show(settings.learnings(), ref)
    except EgoError as exc:
        sys.exit(settings.output.error(exc))
    settings.output.result(found.model_dump(mode="json"), lambda _: _show_text(found))


def _show_text(found: CatalogSite | CatalogTool) -> str:
    if isinstance(found, CatalogTool):
        tool = found.tool
        lines = [
            f"{found.site_id}/{tool.tool_name}  [{tool.kind} tool, {found.source}]",
            f"  {tool.description}",
            f"  side effect: {tool.side_effect}, auth: {tool.auth}",
            f"  file: {found.file}",
            f"  args: {_json(tool.args)}",
            f"  returns: {_json(tool.returns)}",
            f"  example: {tool.example}",
        ]
        return "\n".join(lines)
    lines = [
        f"{found.name} ({found.site_id})  [{found.source}]",
        f"  {found.description}" if found.description else "",
        f"  domains: {', '.join(found.domains)}",
        f"  start URL: {found.start_url or '-'}",
        f"  folder: {found.directory}",
    ]
    if found.shadows:
        lines.append(f"  shadows: {', '.join(found.shadows)}")
    for tool in found.tools:
        lines.append(f"  {tool.kind:7} {tool.tool_name} ({tool.side_effect}): {tool.description}")
        lines.append(f"          {tool.example}")
    for note in found.notes:
        lines.append(f"  note    {note.path}: {note.title}")
        lines.extend(f"          {line}" for line in note.text.splitlines())
    return "\n".join(line for line in lines if line)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
