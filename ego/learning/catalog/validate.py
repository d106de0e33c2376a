"""Checking learnings on disk without running anything: what ``ego validate`` reports."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from ...errors import UnsafePathError
from .jslint import function_expression
from .jssyntax import syntax_problem
from .manifest import Manifest
from .paths import resolve_inside
from .registry import Learnings, SiteEntry

__all__ = ["Problem", "validate_learnings", "validate_site"]


@dataclass(frozen=True)
class Problem:
    """One thing wrong, with where it is.

    Attributes:
        where: the file.
        message: what is wrong, one line.
        warning: the site still works; this is something it carries that ego does not use
            (node tools of the TypeScript harness).
    """

    where: str
    message: str
    warning: bool = False

    def __str__(self) -> str:
        return f"{self.where}: {'warning: ' if self.warning else ''}{self.message}"


def _check_file(site_dir: Path, site_id: str, path: str, what: str) -> tuple[Path | None, str]:
    try:
        file = resolve_inside(site_dir, path, what=f"{site_id} {what}")
    except UnsafePathError as exc:
        return None, str(exc)
    try:
        exists = file.is_file()
    except OSError as exc:
        return None, f"{what} {path!r} cannot be read ({exc.strerror})"
    if not exists:
        return None, f"{what} {path!r} does not exist"
    return file, ""


def validate_site(entry: SiteEntry) -> list[Problem]:
    """Every problem of one site: its manifest, then each tool and note file.

    Browser tool sources must be non-empty and of an accepted shape (the same check as saving
    and loading: :func:`~ego.learning.catalog.jslint.function_expression`) and parse as JavaScript
    (:mod:`~ego.learning.catalog.jssyntax`); Python tools must parse (they are not imported, so
    nothing runs). Node tools give one warning per site.
    """
    where = str(entry.directory / "manifest.json")
    if entry.manifest is None:
        return [Problem(where, problem) for problem in entry.problems]
    manifest: Manifest = entry.manifest
    problems: list[Problem] = []
    for name, spec in manifest.browser_tools.items():
        file, error = _check_file(entry.directory, manifest.id, spec.path, f"browser tool {name}")
        if file is None:
            problems.append(Problem(where, error))
            continue
        try:
            source = file.read_text(encoding="utf-8")
            expression = function_expression(source)
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            problems.append(Problem(str(file), f"browser tool {name}: {exc}"))
            continue
        syntax = syntax_problem(source, expression)
        if syntax is not None:
            problems.append(Problem(str(file), f"browser tool {name} does not parse: {syntax}"))
    for name, python_spec in manifest.python_tools.items():
        file, error = _check_file(
            entry.directory, manifest.id, python_spec.path, f"python tool {name}"
        )
        if file is None:
            problems.append(Problem(where, error))
            continue
        try:
            tree = ast.parse(file.read_text(encoding="utf-8"), filename=str(file))
        except (OSError, UnicodeDecodeError, SyntaxError) as exc:
            problems.append(Problem(str(file), f"python tool {name} does not parse: {exc}"))
            continue
        if not any(
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "run"
            for node in tree.body
        ):
            problems.append(Problem(str(file), f"python tool {name} defines no run(ctx, args)"))
    for path in manifest.notes:
        file, error = _check_file(entry.directory, manifest.id, path, "note")
        if file is None:
            problems.append(Problem(where, error))
    if manifest.node_tools:
        names = ", ".join(sorted(manifest.node_tools))
        problems.append(
            Problem(
                where,
                f"{len(manifest.node_tools)} nodeTools ({names}) are Node-side tools of the "
                "TypeScript harness that ego lists but cannot run; port each to a Python tool "
                "(pythonTools, run(ctx, args) with ctx.tab; see docs/learnings.md)",
                warning=True,
            )
        )
    return problems


def validate_learnings(learnings: Learnings) -> list[Problem]:
    """The problems of every site in every root (shadowed sites are not checked)."""
    problems: list[Problem] = []
    for entry in learnings.sites():
        problems.extend(validate_site(entry))
    return problems
