"""``ego pack build|verify|list``: learning packs, sites shared as Python wheels."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ..errors import EgoError, PackIntegrityError
from ..learning.cases.format import CASES_FILE
from ..learning.catalog.packs import (
    Pack,
    conflict_message,
    find_pack,
    installed_packs,
    pack_conflicts,
)
from ..learning.catalog.registry import Learnings
from .common import Settings, common, json_option, pass_settings, run_async
from .output import EXIT_OK, EXIT_TOOL

__all__ = ["pack"]


@click.group()
def pack() -> None:
    """Learning packs: build sites into a wheel, list and verify the installed ones."""


@pack.command("build")
@click.argument("site_ids", nargs=-1, required=True, metavar="SITE...")
@click.option("--name", required=True, help="The pack's distribution name (shop-tools).")
@click.option("--version", required=True, help="The pack's version (1.0.0).")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("dist"),
    show_default=True,
    help="Folder to write the wheel into.",
)
@json_option
@pass_settings
def pack_build(
    settings: Settings, site_ids: tuple[str, ...], name: str, version: str, out: Path
) -> None:
    """Build a wheel of SITE... (from the workspace or the shipped sites) with hatchling.

    Each site goes in with its notes, tools and offline cases (tests/), after the checks
    `ego validate` makes; an invalid site stops the build and says why.
    """
    from ..learning.catalog.pack_build import build_pack

    try:
        built = build_pack(
            site_ids, name=name, version=version, out=out, learnings=settings.learnings()
        )
    except EgoError as exc:
        sys.exit(settings.output.error(exc))
    settings.output.result(
        built.as_dict(),
        lambda _: (
            f"built {built.wheel} (pack {built.name} {built.version}: "
            f"{', '.join(built.sites)}; {built.files} files)\n"
            f"install it: pip install {built.wheel}\n"
            f"publish it: python -m twine upload {built.wheel}"
        ),
    )


@pack.command("list")
@json_option
@pass_settings
def pack_list(settings: Settings) -> None:
    """The installed packs, their versions and sites, and which copy of each site is used."""
    learnings = settings.learnings()
    packs = installed_packs()
    listings = [_listing(learnings, found) for found in packs]
    warnings = _warnings(packs)
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)

    def human(_: Any) -> str:
        lines = []
        for listed in listings:
            lines.append(f"{listed['name']} {listed['version']}  {listed['root'] or ''}")
            if listed["problem"]:
                lines.append(f"  BROKEN: {listed['problem']}")
            for site in listed["sites"]:
                used = "used" if site["used"] else f"shadowed by {site['used_from']}"
                lines.append(f"  {site['site_id']:24} {used}")
        return "\n".join(lines) or "no learning packs are installed"

    settings.output.result({"packs": listings, "warnings": warnings}, human)


def _listing(learnings: Learnings, found: Pack) -> dict[str, Any]:
    sites = []
    for site_id in found.site_ids():
        holder = next(root for root in learnings.roots if (root / site_id).is_dir())
        sites.append(
            {
                "site_id": site_id,
                "used": holder == found.root,
                "used_from": learnings.origin(holder).label,
            }
        )
    return {
        "name": found.name,
        "version": found.version,
        "entry_point": found.entry_point,
        "root": str(found.root) if found.root else None,
        "problem": found.problem,
        "sites": sites,
    }


def _warnings(packs: list[Pack]) -> list[str]:
    return [
        conflict_message(site_id, [holder.label for holder in holders])
        for site_id, holders in pack_conflicts(packs).items()
    ]


@pack.command("verify")
@click.argument("name", required=False)
@click.option("--no-cases", is_flag=True, help="Check the hashes only; run no offline case.")
@common
@pass_settings
def pack_verify(settings: Settings, name: str | None, no_cases: bool) -> None:
    """Check installed packs (or pack NAME) against the hashes their installer recorded,
    then run their sites' offline cases (tests/cases.json with HARs).

    One line per site and per case; exits 3 when a file differs or a case fails. A site
    whose files differ runs no case.
    """
    from ..casetests import run_learning_tests

    try:
        packs = [find_pack(name)] if name else installed_packs()
    except EgoError as exc:
        sys.exit(settings.output.error(exc))
    checked = [_verify(found) for found in packs]
    ok = all(item["ok"] for item in checked)
    runs = [
        (found, item)
        for found, item in zip(packs, checked, strict=True)
        if item["with_cases"] and not no_cases
    ]
    reports: list[Any] = []
    if runs:

        async def go() -> list[Any]:
            async with settings.browser() as browser:
                done = []
                for found, item in runs:
                    learnings = Learnings(roots=[found.root or Path()], packs=[found])
                    with settings.output.progress(f"running the cases of {found.label}"):
                        done.append(
                            await run_learning_tests(browser, learnings, item["with_cases"])
                        )
                return done

        reports = run_async(settings, go())
    for item in checked:
        item.pop("with_cases")
    passed = ok and all(report.passed for report in reports)
    data = {
        "passed": passed,
        "packs": checked,
        "cases": [report.to_dict() for report in reports],
    }

    def human(_: Any) -> str:
        lines = []
        for item in checked:
            label = f"{item['name']} {item['version']}"
            if item["problem"]:
                lines.append(f"FAIL {label}: {item['problem']}")
            for site in item["sites"]:
                if site["ok"]:
                    lines.append(
                        f"ok   {label} {site['site_id']}: {site['files']} files as recorded"
                    )
                else:
                    lines.append(f"FAIL {label} {site['site_id']}: {'; '.join(site['problems'])}")
        lines.extend(report.format() for report in reports)
        return "\n".join(lines) or "no learning packs are installed"

    settings.output.result(data, human)
    sys.exit(EXIT_OK if passed else EXIT_TOOL)


def _verify(found: Pack) -> dict[str, Any]:
    """One pack's sites checked against its RECORD, and those with cases to run."""
    item: dict[str, Any] = {
        "name": found.name,
        "version": found.version,
        "problem": found.problem,
        "sites": [],
        "with_cases": [],
    }
    if found.root is None:
        item["ok"] = False
        return item
    learnings = Learnings(roots=[found.root], packs=[found])
    for entry in learnings.sites():
        intact = not isinstance(entry.error, PackIntegrityError)
        item["sites"].append(
            {
                "site_id": entry.site_id,
                "ok": entry.valid,
                "files": len(found.recorded(entry.site_id)),
                "problems": entry.problems,
                "intact": intact,
            }
        )
        if entry.valid and (entry.directory / CASES_FILE).is_file():
            item["with_cases"].append(entry.site_id)
    item["ok"] = all(site["ok"] for site in item["sites"])
    return item
