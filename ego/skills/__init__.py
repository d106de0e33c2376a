"""SKILL.md skills: one task on one site, an extractor run in the page, portable to any bridge.

A skill lives in ``<skills root>/<domain>/<task>/`` as ``SKILL.md`` (YAML frontmatter and the
sections Preconditions, Execute, Extractor, Success assertion, Errors) plus ``evaluate.js``, an
extractor ``async (root, params) => {...}`` called with ``document`` and the params. Its catalog
id is ``<domain>/<task>``. The skills roots sit beside the learnings roots (the workspace's
``skills/`` first, then the project's). Run one with ``await site.run_skill(id, params)``;
``site.skills()`` lists them all; :func:`export_skill` and :func:`import_skill` move them to and
from agents that drive a browser some other way.
"""

from __future__ import annotations

from .catalog import (
    SkillCatalog,
    SkillEntry,
    SkillSummary,
    catalog_for,
    describe_skill,
    skill_example,
    skill_tool_info,
    skills_for_url,
    skills_roots,
)
from .format import (
    CAPABILITIES,
    EXTRACTOR_FILE,
    NAMESPACE,
    SECTIONS,
    SKILL_FILE,
    SKILL_SCHEMA_PATH,
    Document,
    Skill,
    build_skill,
    load_skill,
    parse_document,
    skill_problems,
    skill_schema,
)
from .portable import browser_tool_skill, export_skill, import_skill, skill_markdown
from .runner import (
    check_needs,
    check_params,
    check_returns,
    loaded_source,
    prepare_skill,
    provided_capabilities,
    skill_tab,
    skill_url,
)

__all__ = [
    "CAPABILITIES",
    "EXTRACTOR_FILE",
    "NAMESPACE",
    "SECTIONS",
    "SKILL_FILE",
    "SKILL_SCHEMA_PATH",
    "Document",
    "Skill",
    "SkillCatalog",
    "SkillEntry",
    "SkillSummary",
    "browser_tool_skill",
    "build_skill",
    "catalog_for",
    "check_needs",
    "check_params",
    "check_returns",
    "describe_skill",
    "export_skill",
    "import_skill",
    "load_skill",
    "loaded_source",
    "parse_document",
    "prepare_skill",
    "provided_capabilities",
    "skill_example",
    "skill_markdown",
    "skill_problems",
    "skill_schema",
    "skill_tab",
    "skill_tool_info",
    "skill_url",
    "skills_for_url",
    "skills_roots",
]
