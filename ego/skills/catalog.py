"""The skill catalog: skills roots beside the learnings roots, one entry per ``<domain>/<task>``.

The skills roots are the ``skills/`` folders beside the learnings roots: the workspace's
``skills/`` (from ``$EGO_WORKSPACE``) first, then the project's own ``skills/``. A skill id
found in several roots is taken from the first (the workspace shadows the project). Folders
whose name starts with ``_`` or ``.`` are skipped. A broken skill is reported invalid and
every other skill keeps working. Skills are re-read when their files change on disk.
"""

from __future__ import annotations

import os
import re
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from ..errors import InvalidSkillError, UnknownSkillError
from ..learning.catalog.matching import host_suffixes, match_domain, url_host
from ..learning.catalog.registry import FileStamp, Learnings, file_stamp
from ..learning.describe.context import ToolInfo, example_args
from ..learning.health.view import ToolHealth, health_of
from .format import EXTRACTOR_FILE, NAMESPACE, SKILL_FILE, Skill, is_kebab, is_site, load_skill

__all__ = [
    "SkillCatalog",
    "SkillEntry",
    "SkillSummary",
    "catalog_for",
    "skill_example",
    "skill_tool_info",
    "skills_for_url",
    "skills_roots",
]

_ID = re.compile(r"^([^/]+)/([^/]+)$")


def skills_roots(learnings: Learnings) -> list[Path]:
    """The skills roots of ``learnings``: each root's parent folder + ``skills``, in order.

    Args:
        learnings: the learnings whose roots (workspace first, then project) are followed.
    """
    found: list[Path] = []
    for root in learnings.roots:
        candidate = Path(root).parent / "skills"
        if candidate not in found:
            found.append(candidate)
    return found


@dataclass(frozen=True)
class SkillEntry:
    """A skill folder found in a skills root, valid or not."""

    skill_id: str
    root: Path
    directory: Path
    skill: Skill | None
    error: InvalidSkillError | None

    @property
    def valid(self) -> bool:
        """True when the skill loaded without problems."""
        return self.skill is not None

    @property
    def problems(self) -> list[str]:
        """Every problem of an invalid skill, one line each (empty when valid)."""
        return self.error.problems if self.error is not None else []

    def require(self) -> Skill:
        """The skill.

        Raises:
            InvalidSkillError: the skill is broken.
        """
        if self.skill is None:
            assert self.error is not None
            raise self.error
        return self.skill


class SkillSummary(BaseModel):
    """A skill as ``site.skills()`` lists it, valid or not (invalid ones list their problems)."""

    skill_id: str
    site: str
    name: str
    valid: bool
    problems: list[str]
    root: str
    directory: str
    description: str | None = None
    side_effect: Literal["read", "write", "irreversible"] | None = None
    auth: Literal["none", "session"] | None = None
    needs: list[str] = []

    @classmethod
    def of(cls, entry: SkillEntry) -> SkillSummary:
        """Summarise ``entry``.

        Args:
            entry: a catalog entry, valid or not.
        """
        skill = entry.skill
        domain, _, task = entry.skill_id.partition("/")
        return cls(
            skill_id=entry.skill_id,
            site=domain,
            name=task,
            valid=entry.valid,
            problems=entry.problems,
            root=str(entry.root),
            directory=str(entry.directory),
            description=skill.description if skill else None,
            side_effect=skill.side_effect if skill else None,
            auth=skill.auth if skill else None,
            needs=list(skill.needs) if skill else [],
        )


Stamp = tuple[FileStamp, FileStamp]


class SkillCatalog:
    """The skills in a list of roots (see the module docstring for the rules).

    Args:
        roots: the skills roots, searched in order.
    """

    def __init__(self, roots: Sequence[str | os.PathLike[str]]) -> None:
        self.roots = [Path(root) for root in roots]
        self._entries: dict[Path, tuple[Stamp, SkillEntry]] = {}

    def _entry(self, root: Path, directory: Path) -> SkillEntry:
        stamp = (file_stamp(directory / SKILL_FILE), file_stamp(directory / EXTRACTOR_FILE))
        cached = self._entries.get(directory)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        skill_id = f"{directory.parent.name}/{directory.name}"
        try:
            entry = SkillEntry(skill_id, root, directory, load_skill(directory), None)
        except InvalidSkillError as exc:
            entry = SkillEntry(skill_id, root, directory, None, exc)
        self._entries[directory] = (stamp, entry)
        return entry

    def entries(self) -> list[SkillEntry]:
        """Every skill in every root, valid or not, one per id, sorted by id."""
        chosen: dict[str, SkillEntry] = {}
        for root in self.roots:
            for domain_dir in _children(root):
                for task_dir in _children(domain_dir):
                    skill_id = f"{domain_dir.name}/{task_dir.name}"
                    if skill_id not in chosen:
                        chosen[skill_id] = self._entry(root, task_dir)
        return [chosen[skill_id] for skill_id in sorted(chosen)]

    def find(self, skill_id: str) -> SkillEntry:
        """The skill ``skill_id`` (``<domain>/<task>``) from the first root that has it.

        The id is checked before any path is built from it, so ``..`` and the like never
        reach the disk.

        Args:
            skill_id: ``<domain>/<task>``.

        Raises:
            UnknownSkillError: no root has it (the message lists the roots and known skills).
        """
        match = _ID.match(skill_id)
        if match and is_site(match.group(1)) and is_kebab(match.group(2)):
            for root in self.roots:
                directory = root / match.group(1) / match.group(2)
                if directory.is_dir():
                    return self._entry(root, directory)
        searched = ", ".join(str(root) for root in self.roots) or "no roots"
        known = ", ".join(entry.skill_id for entry in self.entries()) or "none"
        raise UnknownSkillError(
            f"no skill {skill_id!r} (ids are <domain>/<task>); searched {searched}; "
            f"known skills: {known}"
        )

    def skill(self, skill_id: str) -> Skill:
        """The valid skill ``skill_id``.

        Args:
            skill_id: ``<domain>/<task>``.

        Raises:
            UnknownSkillError: no such skill.
            InvalidSkillError: the skill is broken (``problems`` lists why).
        """
        return self.find(skill_id).require()

    def for_url(self, url: str) -> list[Skill]:
        """The valid skills whose site is the URL's host or a parent domain of it.

        Args:
            url: a page URL; only http and https URLs match.
        """
        target = url_host(url) if isinstance(url, str) else None
        if target is None:
            return []
        # A skill's site is its domain folder's name, so only the folders named by the host
        # or a parent domain of it can hold one: no scan of every skill.
        chosen: dict[str, SkillEntry] = {}
        for domain in [target[0], *host_suffixes(target[0])]:
            if not is_site(domain):
                continue
            for root in self.roots:
                for task_dir in _children(root / domain):
                    skill_id = f"{domain}/{task_dir.name}"
                    if skill_id not in chosen:
                        chosen[skill_id] = self._entry(root, task_dir)
        return [
            entry.skill
            for _, entry in sorted(chosen.items())
            if entry.skill is not None
            and match_domain(url, [entry.skill.site, f"*.{entry.skill.site}"]) is not None
        ]


def _children(folder: Path) -> list[Path]:
    try:
        children = sorted(folder.iterdir())
    except OSError:
        return []
    return [child for child in children if not child.name.startswith(("_", ".")) and child.is_dir()]


_CATALOGS: weakref.WeakKeyDictionary[Learnings, SkillCatalog] = weakref.WeakKeyDictionary()


def catalog_for(learnings: Learnings) -> SkillCatalog:
    """The skill catalog beside ``learnings`` (kept per Learnings object, roots kept current).

    ``Learnings(roots=[tmp / "learnings"])`` gives a catalog of ``tmp / "skills"``.

    Args:
        learnings: the learnings the skills sit beside.
    """
    catalog = _CATALOGS.get(learnings)
    if catalog is None:
        catalog = SkillCatalog(skills_roots(learnings))
        _CATALOGS[learnings] = catalog
    else:
        catalog.roots = skills_roots(learnings)
    return catalog


def skill_example(skill: Skill, params: dict[str, Any] | None = None) -> str:
    """A ready-to-paste Python call of the skill, with example params.

    Args:
        skill: the skill.
        params: the params to show; by default example values from its params schema.
    """
    example = example_args(skill.params) if params is None else params
    confirm = ", confirm=True" if skill.side_effect == "irreversible" else ""
    return f'await site.run_skill("{skill.id}", {example!r}{confirm})'


def skill_tool_info(skill: Skill, health: ToolHealth | None = None) -> ToolInfo:
    """Describe a skill the way ``learn_context`` describes tools (kind ``"skill"``).

    Args:
        skill: the skill; its domain becomes ``site_id`` and its name ``tool_name``.
        health: the record of its current version, when known.
    """
    return ToolInfo(
        site_id=skill.site,
        tool_name=skill.name,
        kind="skill",
        description=skill.description,
        args=skill.params,
        returns=skill.returns,
        side_effect=skill.side_effect,
        auth=skill.auth,
        example=skill_example(skill),
        health=health,
    )


def describe_skill(learnings: Learnings, skill_id: str) -> ToolInfo:
    """One skill described as a tool, with the health of its current version.

    Raises:
        UnknownSkillError: no such skill.
        InvalidSkillError: the skill is broken.
    """
    skill = catalog_for(learnings).skill(skill_id)
    key = (NAMESPACE, skill.id, skill.version_hash)
    return skill_tool_info(skill, health_of([key]).get(key))


def skills_for_url(learnings: Learnings, url: str) -> list[ToolInfo]:
    """The skills for ``url`` (its host or a parent domain), described as tools, each with
    the health of its current version (runs are recorded under site ``skill``)."""
    skills = catalog_for(learnings).for_url(url)
    keys = [(NAMESPACE, skill.id, skill.version_hash) for skill in skills]
    health = health_of(keys) if keys else {}
    return [
        skill_tool_info(skill, health.get(key)) for skill, key in zip(skills, keys, strict=True)
    ]
