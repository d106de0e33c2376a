"""Writing SKILL.md folders for the skill tests, and reading them back."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from ego.errors import (
    InvalidSkillError,
)
from ego.skills import (
    load_skill,
    parse_document,
)

ECHO = "async (root, params) => ({ params, title: root.title })\n"


SECTIONS_TEXT = {
    "Preconditions": "A tab on the site.",
    "Execute": "1. navigate to the url\n2. evaluate the Extractor with the params",
    "Extractor": "Hands its params back. Source: `evaluate.js`.",
    "Success assertion": "`returns` holds.",
    "Errors": "- `SKILL_BROKEN`: never.",
}


def skill_text(
    *,
    name: str = "echo",
    site: str = "shop.localhost",
    drop_sections: tuple[str, ...] = (),
    extra_sections: dict[str, str] | None = None,
    **meta: Any,
) -> str:
    """A SKILL.md text; ``meta`` overrides frontmatter fields (None removes one)."""
    front: dict[str, Any] = {
        "name": name,
        "description": "Hands its params back, for tests.",
        "site": site,
        "needs": ["navigate", "evaluate"],
        "side_effect": "read",
        "auth": "none",
        "version": 1,
        "params": {"q": {"type": "string", "required": True, "examples": ["desk"]}},
        "returns": {"type": "object", "required": ["params"]},
    }
    for key, value in meta.items():
        if value is None:
            front.pop(key, None)
        else:
            front[key] = value
    sections = {k: v for k, v in SECTIONS_TEXT.items() if k not in drop_sections}
    sections.update(extra_sections or {})
    body = "\n\n".join(f"## {title}\n{text}" for title, text in sections.items())
    return "---\n" + yaml.safe_dump(front, sort_keys=False) + "---\n\n" + body + "\n"


def write_skill(
    root: Path,
    domain: str = "shop.localhost",
    task: str = "echo",
    *,
    text: str | None = None,
    source: str | None = ECHO,
    **meta: Any,
) -> Path:
    """Write ``root/domain/task/SKILL.md`` (+ evaluate.js unless ``source`` is None)."""
    folder = root / domain / task
    folder.mkdir(parents=True, exist_ok=True)
    if text is None:
        meta.setdefault("name", task)
        meta.setdefault("site", domain)
        text = skill_text(**meta)
    (folder / "SKILL.md").write_text(text, encoding="utf-8")
    if source is not None:
        (folder / "evaluate.js").write_text(source, encoding="utf-8")
    return folder


def problems_of(folder: Path) -> list[str]:
    with pytest.raises(InvalidSkillError) as info:
        load_skill(folder)
    assert info.value.problems, "an invalid skill must list its problems"
    return info.value.problems


def blocks(text: str, section: str) -> list[str]:
    """The code blocks of ``section`` in a SKILL.md text."""
    body = parse_document(text).section(section)
    assert body is not None, f"no ## {section}"
    return [m.group(2) for m in re.finditer(r"^(`{3,})js\n(.*?)\n\1$", body, re.S | re.M)]
