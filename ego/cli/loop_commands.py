"""``ego suggest`` and ``ego heal``: the two ends of the learning loop on the command line."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ..errors import EgoError
from ..learning.catalog.matching import as_url
from .common import Settings, common, pass_settings, run_async
from .har_options import har_bound_options, reading
from .output import EXIT_OK, EXIT_TOOL

__all__ = ["LOOP_COMMANDS", "heal", "suggest"]


def _cases_line(results: list[Any]) -> str:
    passed = sum(r.passed for r in results)
    failed = "; ".join(f"{r.name}: {r.reason}" for r in results if not r.passed)
    return f"{passed} of {len(results)} case(s) pass" + (f" (failing: {failed})" if failed else "")


@click.command()
@click.argument("site_id", metavar="SITE")
@click.option(
    "--har",
    "hars",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A recording to draft from (repeat it: recordings that differ in ids and values "
    "tell args from constants).",
)
@click.option(
    "--actions",
    "flows",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A recording of page actions (tab.record_actions) to draft a Python tool from "
    "(repeat it: recordings of the same flow make one tool).",
)
@click.option("--name", "tool_name", help="With --actions: the drafted tool's name.")
@click.option("--check", is_flag=True, help="Also run each draft's offline cases (a browser).")
@click.option(
    "--save",
    "save_tools",
    multiple=True,
    metavar="TOOL",
    help="Keep this draft: through the save gate, its cases into the site's tests/ (repeat).",
)
@click.option(
    "--side-effect",
    type=click.Choice(["read", "write", "irreversible"]),
    help="With --save: the side effect (a drafted write is irreversible unless said).",
)
@click.option("--description", help="With one --save: a better description than the drafted one.")
@har_bound_options("reads")
@common
@pass_settings
def suggest(
    settings: Settings,
    site_id: str,
    hars: tuple[Path, ...],
    flows: tuple[Path, ...],
    tool_name: str | None,
    check: bool,
    save_tools: tuple[str, ...],
    side_effect: Any,
    description: str | None,
    max_har_entries: int,
    max_har_bytes: int,
) -> None:
    """Draft a browser tool per JSON endpoint of SITE from recordings (--har), or keep drafts.

    Each draft is the site's API call as a same-origin fetch in the page: the path as a
    template (ids become args), query and body fields as args or constants, returns as the
    JSON Schema of what came back, the side effect from the method, the CSRF token read where
    the page keeps it, and offline cases from the recorded calls. With --actions, a Python
    tool per recorded flow of page actions instead (its steps on durable selectors, the
    values typed as args, what the agent read as the result). Drafts wait in the
    workspace's learnings/.drafts/SITE/ and are never live until saved with --save. Without
    --har or --save, lists the drafts. A recording over --max-har-entries or --max-har-bytes
    is refused before it is read whole; a large one shows its progress on stderr.
    """
    if description is not None and len(save_tools) != 1:
        raise click.UsageError("--description goes with exactly one --save TOOL")
    if side_effect is not None and not save_tools:
        raise click.UsageError("--side-effect goes with --save TOOL")
    if (hars or flows) and save_tools:
        raise click.UsageError("draft (--har, --actions) and keep (--save) in two commands")
    if hars and flows:
        raise click.UsageError("draft from traffic (--har) or from page actions (--actions)")
    if tool_name is not None and not flows:
        raise click.UsageError("--name goes with --actions")
    with reading(max_har_entries, max_har_bytes):
        _suggest(
            settings, site_id, hars, check, save_tools, side_effect, description, flows, tool_name
        )


def _suggest(
    settings: Settings,
    site_id: str,
    hars: tuple[Path, ...],
    check: bool,
    save_tools: tuple[str, ...],
    side_effect: Any,
    description: str | None,
    flows: tuple[Path, ...] = (),
    tool_name: str | None = None,
) -> None:
    from ..learning.suggest import SuggestReport, list_drafts, suggest_actions
    from ..learning.suggest import suggest as draft_tools

    learnings = settings.learnings()
    if save_tools:
        _save(settings, site_id, save_tools, side_effect, description)
        return
    if not hars and not flows:
        drafts = [draft.as_dict() for draft in list_drafts(learnings, site_id)]
        settings.output.result(
            drafts,
            lambda d: (
                "\n".join(f"{x['tool']}: {x['entry']['description']}" for x in d)
                or f"no drafts for {site_id}"
            ),
        )
        return
    report: SuggestReport
    try:
        if flows:
            report = suggest_actions(site_id, list(flows), learnings=learnings, name=tool_name)
        else:
            report = draft_tools(site_id, list(hars), learnings=learnings)
    except (EgoError, OSError) as exc:
        sys.exit(settings.output.error(exc))
    except ValueError as exc:
        raise click.UsageError(f"--actions: {exc}") from None
    data = report.as_dict()
    checks: dict[str, Any] = {}
    if check and report.drafts:

        async def go() -> dict[str, Any]:
            async with settings.browser() as browser:
                found = {}
                for draft in report.drafts:
                    with settings.output.progress(f"running the cases of {draft.tool}"):
                        found[draft.tool] = await browser.site.check_draft(site_id, draft.tool)
                return found

        checks = run_async(settings, go())
        data["checked"] = {tool: [r.to_dict() for r in results] for tool, results in checks.items()}

    def text(_: Any) -> str:
        lines = [report.format()]
        lines += [f"{tool}: {_cases_line(results)}" for tool, results in checks.items()]
        if report.drafts:
            lines.append(f"keep one with `ego suggest {site_id} --save TOOL`")
        return "\n".join(lines)

    settings.output.result(data, text)
    failed = any(not r.passed for results in checks.values() for r in results)
    sys.exit(EXIT_TOOL if failed else EXIT_OK)


def _save(
    settings: Settings,
    site_id: str,
    tools: tuple[str, ...],
    side_effect: Any,
    description: str | None,
) -> None:
    async def go() -> list[dict[str, Any]]:
        saved = []
        async with settings.browser() as browser:
            for tool in tools:
                with settings.output.progress(f"saving {site_id}/{tool}"):
                    done = await browser.site.save_draft(
                        site_id,
                        tool,
                        description=description,
                        side_effect=side_effect,
                        front_end="cli",
                    )
                saved.append(done.as_dict())
        return saved

    rows = run_async(settings, go())

    def text(data: list[dict[str, Any]]) -> str:
        lines = []
        for row in data:
            cases = row.get("cases") or {}
            ran = cases.get("ran", [])
            lines.append(
                f"saved {row['site_id']}/{row['tool']} ({row['hash']}): {len(ran)} offline "
                f"case(s) passed through the gate; {row['file']}"
            )
        return "\n".join(lines)

    settings.output.result(rows, text)


@click.command()
@click.argument("site_id", metavar="SITE")
@click.argument("tool")
@click.option("--url", help="The page to run the tool on live (default: its first case's).")
@click.option("--confirm", is_flag=True, help="Allow the live run of an irreversible tool.")
@click.option("--check", is_flag=True, help="Run the old cases and the live one on the candidate.")
@click.option("--promote", is_flag=True, help="Save the candidate through the gate.")
@click.option(
    "--accept-changed-cases",
    "accepted",
    multiple=True,
    metavar="CASE",
    help="With --promote: an old case whose expected result the candidate may change "
    "(repeat; its expect becomes the candidate's result).",
)
@har_bound_options("reads")
@common
@pass_settings
def heal(
    settings: Settings,
    site_id: str,
    tool: str,
    url: str | None,
    confirm: bool,
    check: bool,
    promote: bool,
    accepted: tuple[str, ...],
    max_har_entries: int,
    max_har_bytes: int,
) -> None:
    """Find out why TOOL of SITE fails and open a tested candidate version.

    Runs its offline cases and a recorded live run, and reports what changed (an endpoint
    404 or moved, JSON fields renamed, a selector gone, a login asked); for a drafted API
    tool whose endpoint moved, the candidate uses the endpoint found by the shape of its
    recorded answer. --check runs the old cases plus a new one from the live recording on
    the candidate; --promote saves it through the gate, refusing one that changes an old
    case's expected result unless --accept-changed-cases names it. `ego restore` rolls back.
    The HAR files of its cases are read within --max-har-entries and --max-har-bytes.
    """
    if check and promote:
        raise click.UsageError("--check and --promote are two steps: run one, then the other")
    if accepted and not promote:
        raise click.UsageError("--accept-changed-cases goes with --promote")

    page = as_url(url) if url else None

    async def go() -> tuple[dict[str, Any], str, bool]:
        async with settings.browser(site_id=site_id) as browser:
            site = browser.site
            if promote:
                with settings.output.progress(f"promoting the candidate of {site_id}/{tool}"):
                    done = await site.promote_candidate(
                        site_id, tool, accept_changed_cases=accepted, front_end="cli"
                    )
                data = done.as_dict()
                passed = ", ".join(done.provenance["cases_passed"])
                line = (
                    f"promoted {site_id}/{tool} ({done.saved.hash}); the version it replaced "
                    f"is kept as {done.saved.previous_version} (`ego restore` rolls back); "
                    f"cases passed: {passed}"
                )
                return data, line, True
            if check:
                with settings.output.progress(f"checking the candidate of {site_id}/{tool}"):
                    result = await site.check_candidate(site_id, tool)
                return result.as_dict(), result.format(), result.passed
            with settings.output.progress(f"healing {site_id}/{tool}"):
                report = await site.heal_tool(site_id, tool, confirm=confirm, url=page)
            return report.as_dict(), report.format(), True

    with reading(max_har_entries, max_har_bytes):
        data, line, ok = run_async(settings, go())
    settings.output.result(data, line)
    sys.exit(EXIT_OK if ok else EXIT_TOOL)


#: The commands to add to the ``ego`` group.
LOOP_COMMANDS: tuple[click.Command, ...] = (suggest, heal)
