"""What ``ego validate`` checks: learnings sites and SKILL.md skills, from any starting folder."""

from __future__ import annotations

import os
from pathlib import Path

from .learning.catalog.registry import Learnings
from .learning.catalog.validate import Problem, validate_learnings, validate_site
from .skills.catalog import SkillCatalog, catalog_for, skills_roots

__all__ = ["Problem", "validate_path", "validate_skills"]


def validate_skills(catalog: SkillCatalog) -> list[Problem]:
    """One problem per line for every invalid skill in ``catalog``."""
    return [
        Problem(str(entry.directory / "SKILL.md"), problem)
        for entry in catalog.entries()
        for problem in entry.problems
    ]


def validate_path(
    path: str | os.PathLike[str] | None = None,
    *,
    workspace: str | os.PathLike[str] | None = None,
) -> list[Problem]:
    """Every problem under ``path``, or in every root when ``path`` is None.

    ``path`` may be a site folder (holds manifest.json), a skill folder (holds SKILL.md), a
    learnings or skills root, or a workspace holding ``learnings/`` and/or ``skills/``.
    Nothing runs: manifests and skills are parsed and checked, tool files are read.
    """
    if path is None:
        learnings = Learnings(workspace=workspace)
        return validate_learnings(learnings) + validate_skills(catalog_for(learnings))
    folder = Path(path).expanduser()
    if (folder / "manifest.json").is_file():
        return validate_site(Learnings(roots=[folder.parent]).find(folder.name))
    if (folder / "SKILL.md").is_file():
        catalog = SkillCatalog([folder.parent.parent])
        return [
            problem for problem in validate_skills(catalog) if Path(problem.where).parent == folder
        ]
    if (folder / "learnings").is_dir() or (folder / "skills").is_dir():
        learnings = Learnings(roots=[folder / "learnings"])
        return validate_learnings(learnings) + validate_skills(
            SkillCatalog(skills_roots(learnings))
        )
    if any(child.is_dir() and (child / "manifest.json").exists() for child in folder.iterdir()):
        return validate_learnings(Learnings(roots=[folder]))
    return validate_skills(SkillCatalog([folder]))
