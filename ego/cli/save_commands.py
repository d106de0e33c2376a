"""``ego save-tool``, ``ego save-note``, ``ego history``, ``ego restore``: the learning loop.

Each command calls what an agent script calls (``site.save_tool`` and friends); the checks
and the writing live in :mod:`ego.learning` (:mod:`ego.learning.save.tool` orders them). Saves go
to the agent workspace (``--workspace`` or ``$EGO_WORKSPACE``), never to the project's
learnings.

Registered on the ``ego`` group by ``ego.cli.app``."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

import click
import orjson

from ..errors import EgoError, UnknownToolError
from ..learning.catalog.manifest import args_schema
from ..learning.catalog.matching import as_url
from ..learning.catalog.registry import Learnings
from ..learning.health.view import ToolHealth, current_health
from ..learning.plan.draft import CLEARABLE, Auth, SideEffect, ToolDraft
from ..learning.plan.history import list_versions
from ..learning.plan.save_plan import check_domains, workspace_root
from ..learning.save import notes
from ..learning.save.store import restore_tool
from .common import Settings, common, json_option, pass_settings, run_async

__all__ = ["SAVE_COMMANDS", "history", "restore", "save_note", "save_tool"]

T = TypeVar("T")


def _run(settings: Settings, action: Callable[[], T]) -> T:
    """Run a command that needs no browser; turn an ego or disk error into one line and a code."""
    try:
        return action()
    except (EgoError, OSError) as exc:
        sys.exit(settings.output.error(exc))


def _read_text(path: str, what: str) -> str:
    """The text of ``path`` (``-`` reads stdin)."""
    if path == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise click.BadParameter(f"cannot read {path}: {exc}", param_hint=what) from None


def _json_option(value: str | None, hint: str, *, kinds: tuple[type, ...] = (dict,)) -> Any:
    if value is None:
        return None
    try:
        loaded = orjson.loads(value)
    except orjson.JSONDecodeError as exc:
        raise click.BadParameter(f"not JSON: {exc}", param_hint=hint) from None
    if not isinstance(loaded, kinds):
        raise click.BadParameter("must be a JSON object", param_hint=hint)
    return loaded


def _saved_text(data: dict[str, Any]) -> str:
    what = "created site" if data["created_site"] else "saved"
    if data.get("unchanged"):
        return f"{data['site_id']}/{data['tool']} is unchanged ({data['hash']}); nothing written"
    lines = [f"{what} {data['site_id']}/{data['tool']} -> {data['file']} ({data['hash']})"]
    if data.get("changed"):
        lines.append("  changed: " + ", ".join(data["changed"]))
    if data["shadowed"]:
        lines.append(f"  copied the project's {data['site_id']} to the workspace (it shadows it)")
    if data["previous_version"]:
        lines.append(f"  previous version kept as {data['previous_version']} (ego history)")
    if data.get("try_result") is not None:
        lines.append("  try run returned: " + orjson.dumps(data["try_result"]).decode()[:300])
    lines += _cases_lines(data.get("cases"))
    return "\n".join(lines)


def _cases_lines(cases: dict[str, Any] | None) -> list[str]:
    """What the save gate ran, for a person: a count, and each case the save broke."""
    if not cases:
        return []
    if cases.get("problem"):
        return [f"  offline cases not run: {cases['problem']}"]
    ran = cases.get("ran") or []
    lines = [f"  offline cases: {sum(c['passed'] for c in ran)} of {len(ran)} passed"]
    lines += [
        f"  saved with --force, breaking case {c['name']!r}: {c['reason']}"
        for c in ran
        if c.get("broken")
    ]
    return lines


@click.command("save-tool")
@click.argument("site_id")
@click.argument("tool")
@click.option(
    "--file",
    "file",
    required=True,
    metavar="PATH",
    help="The tool's JavaScript (- reads stdin).",
)
@click.option(
    "--description", help="What the tool does (required for a new tool; else kept if omitted)."
)
@click.option(
    "--args",
    "args_json",
    help="Args schema: compact map or full JSON Schema (kept if omitted; a new tool has none).",
)
@click.option("--returns", "returns_json", help="JSON Schema of the result (kept if omitted).")
@click.option(
    "--side-effect",
    type=click.Choice(["read", "write", "irreversible"]),
    help="Kept if omitted; a new tool is read.",
)
@click.option(
    "--auth", type=click.Choice(["none", "session"]), help="Kept if omitted; a new tool is none."
)
@click.option(
    "--clear",
    "clear",
    multiple=True,
    type=click.Choice(CLEARABLE),
    help="Remove this field from the tool's entry (repeatable); args cleared means no args.",
)
@click.option("--try-args", "try_json", help="Run the tool once with these args before saving.")
@click.option("--url", help="A page of the site: opened first; gives a new site its domain.")
@click.option("--domain", "domains", multiple=True, help="A domain of the site (repeatable).")
@click.option("--name", help="The site's display name (a new site defaults to its id).")
@click.option(
    "--force",
    is_flag=True,
    help="Save even if the new source fails offline cases the current version passes.",
)
@click.option("--profile", help="Persistent profile to launch with.")
@common
@pass_settings
def save_tool(
    settings: Settings,
    site_id: str,
    tool: str,
    file: str,
    description: str | None,
    args_json: str | None,
    returns_json: str | None,
    side_effect: str | None,
    auth: str | None,
    clear: tuple[str, ...],
    try_json: str | None,
    url: str | None,
    domains: tuple[str, ...],
    name: str | None,
    force: bool,
    profile: str | None,
) -> None:
    """Check TOOL's JavaScript and keep it in SITE_ID of the agent workspace's learnings.

    The source must parse in the browser, use no snapshot refs or pixel coordinates, and
    (with --try-args) run once without error; when the site has offline cases for TOOL
    (tests/cases.json), they run against the new source on their recordings, and one that
    passes with the current version and fails with the new one refuses the save (--force
    saves anyway). Nothing is written when a check fails. A replaced version is kept: see
    `ego history SITE_ID TOOL`. Saving a tool the site has changes only what is given:
    omitted options keep the tool's values, --clear removes one.
    """
    source = _read_text(file, "--file")
    draft = ToolDraft(
        site_id=site_id,
        tool=tool,
        source=source,
        description=description,
        args=_json_option(args_json, "--args"),
        returns=_json_option(returns_json, "--returns", kinds=(dict, bool)),
        side_effect=cast(SideEffect | None, side_effect),
        auth=cast(Auth | None, auth),
        domains=list(domains) or None,
        try_args=_json_option(try_json, "--try-args"),
        name=name,
        clear=clear,
        front_end="cli",
        force=force,
    )

    async def go() -> dict[str, Any]:
        # The checks that need no browser fail before Chrome starts.
        workspace_root(settings.learnings())
        check_domains(site_id, tool, domains, front_end="cli")
        async with settings.browser(profile=profile, site_id=site_id) as browser:
            tab = None
            if url:
                with settings.output.progress(f"loading {url}"):
                    tab = await browser.new_tab(as_url(url))
            with settings.output.progress(f"checking {site_id}/{tool}"):
                saved = await browser.site.save_tool(draft, tab=tab)
            return saved.as_dict()

    data = run_async(settings, go())
    settings.output.result(data, _saved_text)


@click.command("save-note")
@click.argument("site_id")
@click.argument("name")
@click.option("--file", "file", required=True, metavar="PATH", help="The markdown (- for stdin).")
@click.option("--url", help="A page of the site: gives a new site its domain and start URL.")
@click.option("--domain", "domains", multiple=True, help="A domain of a new site (repeatable).")
@click.option("--site-name", help="A new site's display name (defaults to its id).")
@json_option
@pass_settings
def save_note(
    settings: Settings,
    site_id: str,
    name: str,
    file: str,
    url: str | None,
    domains: tuple[str, ...],
    site_name: str | None,
) -> None:
    """Keep a note (markdown) as notes/NAME.md of SITE_ID in the agent workspace."""
    text = _read_text(file, "--file")

    def go() -> dict[str, Any]:
        check_domains(site_id, name, domains, front_end="cli")  # refused in --domain's words
        saved = notes.save_note(
            settings.learnings(),
            site_id,
            name,
            text,
            domains=list(domains) or None,
            page_url=as_url(url) if url else None,
            site_name=site_name,
        )
        return saved.as_dict()

    data = _run(settings, go)
    settings.output.result(
        data,
        lambda d: (
            f"saved note {d['site_id']}/{d['name']} -> {d['file']}"
            + (f" (previous text kept in {d['previous_file']})" if d["previous_file"] else "")
        ),
    )


def _args_summary(args: Any) -> str:
    """An entry's args in a few characters: ``id*,limit`` (``*`` marks required), or ``-``."""
    try:
        schema = args_schema(args if isinstance(args, dict) else None)
    except ValueError:
        return "?"
    properties, wanted = schema.get("properties"), schema.get("required")
    names = list(properties) if isinstance(properties, dict) else []
    required = {n for n in wanted if isinstance(n, str)} if isinstance(wanted, list) else set()
    return ",".join(n + ("*" if n in required else "") for n in names) or "-"


def _version_line(row: dict[str, Any]) -> str:
    """One version of ``ego history``: id, time, hash, side effect, args, what changed."""
    entry = row.get("entry") or {}
    changed = row.get("changed")
    change = "(oldest)" if changed is None else ", ".join(changed) or "(no change)"
    side = str(entry.get("sideEffect", "read")) + (
        "+session" if entry.get("auth") == "session" else ""
    )
    args = _args_summary(entry.get("args"))
    return (
        f"{row['version']:26} {row['saved_at'][:19]:19}  {row['hash']}  {side:12} "
        f"{args[:18]:18} {change:28} {row['description'][:50]}"
    )


@click.command("history")
@click.argument("site_id")
@click.argument("tool")
@json_option
@pass_settings
def history(settings: Settings, site_id: str, tool: str) -> None:
    """List TOOL's versions: the current one, then the kept ones, newest first.

    Each line gives the version's side effect and args (``*`` marks a required one) and what
    changed from the version below it (source, args, sideEffect, returns, description, ...).
    --json gives each version's whole manifest entry.
    """

    def go() -> list[dict[str, Any]]:
        learnings = settings.learnings()
        versions = list_versions(learnings, site_id, tool)
        if not versions:
            _require_tool(learnings, site_id, tool)
        return [v.as_dict() for v in versions]

    rows = _run(settings, go)

    def text(data: list[dict[str, Any]]) -> str:
        if not data:
            return f"no versions of {site_id}/{tool}"
        lines = [
            f"{'VERSION':26} {'SAVED':19}  HASH          {'SIDE EFFECT':12} {'ARGS':18} "
            f"{'CHANGED':28} DESCRIPTION"
        ]
        lines += [_version_line(row) for row in data]
        return "\n".join(lines)

    settings.output.result(rows, text)


def _require_tool(learnings: Learnings, site_id: str, tool: str) -> None:
    """Raise when ``site_id`` or its ``tool`` does not exist (a history with no versions).

    Raises:
        UnknownSiteError, InvalidManifestError: no such site, or its manifest is broken.
        UnknownToolError: the site declares no such browser tool (the message lists them).
    """
    manifest = learnings.site(site_id)
    if tool in manifest.python_tools:
        raise UnknownToolError(
            f"{site_id}/{tool} is a Python tool: only browser tools are saved in versions"
        )
    if tool not in manifest.browser_tools:
        declared = ", ".join(sorted(manifest.browser_tools)) or "none"
        raise UnknownToolError(
            f"site {site_id!r} has no browser tool {tool!r:.200}, so no versions of it; its "
            f"browser tools: {declared}"
        )


@click.command("restore")
@click.argument("site_id")
@click.argument("tool")
@click.argument("version")
@json_option
@pass_settings
def restore(settings: Settings, site_id: str, tool: str, version: str) -> None:
    """Bring back VERSION of TOOL (from `ego history`); the current one is kept.

    The restored version's own health comes back with it (see `ego health`).
    """

    def go() -> dict[str, Any]:
        learnings = settings.learnings()
        data = restore_tool(learnings, site_id, tool, version).as_dict()
        health = current_health(learnings, site_id, tool)
        data["health"] = health.model_dump(mode="json") if health is not None else None
        return data

    def text(data: dict[str, Any]) -> str:
        line = (
            f"restored {site_id}/{tool} ({data['hash']}); the version it replaced is kept as "
            f"{data['previous_version']}"
        )
        if data["health"] is not None:
            line += f"\n  health: {ToolHealth.model_validate(data['health']).line()}"
        return line

    settings.output.result(_run(settings, go), text)


#: The commands to add to the ``ego`` group.
SAVE_COMMANDS: tuple[click.Command, ...] = (save_tool, save_note, history, restore)
