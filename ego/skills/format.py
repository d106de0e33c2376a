"""The SKILL.md format: parse the frontmatter and sections, check them, build a :class:`Skill`.

A skill folder ``<skills root>/<domain>/<task>/`` holds ``SKILL.md`` (YAML frontmatter, then the
sections ``## Preconditions``, ``## Execute``, ``## Extractor``, ``## Success assertion`` and
``## Errors``) and ``evaluate.js``, the extractor ``async (root, params) => {...}`` that runs in
the page with ``document`` and the params. The frontmatter is checked against the JSON Schema
shipped beside this module (:data:`SKILL_SCHEMA_PATH`); every problem found is reported on a
line of its own.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Final, Literal

import frontmatter
import jsonschema
import yaml
from frontmatter.default_handlers import YAMLHandler
from pydantic import BaseModel, ConfigDict

from ..errors import InvalidSkillError, UnsafePathError
from ..learning.catalog.manifest import args_schema
from ..learning.catalog.matching import match_domain
from ..learning.catalog.paths import resolve_inside
from ..learning.catalog.schemas import schema_problems, worded
from ..learning.catalog.tool_source import normalize_source

__all__ = [
    "CAPABILITIES",
    "EXTRACTOR_FILE",
    "NAMESPACE",
    "SECTIONS",
    "SKILL_FILE",
    "SKILL_SCHEMA_PATH",
    "Document",
    "Skill",
    "build_skill",
    "content_hash",
    "invalid_skill",
    "is_kebab",
    "is_site",
    "load_skill",
    "parse_document",
    "render_document",
    "skill_problems",
    "skill_schema",
    "skill_source_url",
    "source_problems",
]

#: The six capabilities a skill may name in ``needs`` (the catalog's verbs).
CAPABILITIES: Final = ("navigate", "evaluate", "snapshot", "click", "type", "network")
#: The sections every SKILL.md must have, in their usual order.
SECTIONS: Final = ("Preconditions", "Execute", "Extractor", "Success assertion", "Errors")
SKILL_FILE: Final = "SKILL.md"
EXTRACTOR_FILE: Final = "evaluate.js"
#: The cache namespace of skills: their localStorage key is ``ego:skill:<domain>/<task>``.
NAMESPACE: Final = "skill"
#: The JSON Schema of the frontmatter (shipped with the package).
SKILL_SCHEMA_PATH: Final = Path(__file__).with_name("skill.schema.json")

SideEffect = Literal["read", "write", "irreversible"]
Auth = Literal["none", "session"]
Capability = Literal["navigate", "evaluate", "snapshot", "click", "type", "network"]

_KEBAB = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_LABEL = r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?"
_SITE = re.compile(rf"^{_LABEL}(?:\.{_LABEL})*$")
_HEADING = re.compile(r"^##[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})(.*)$")


def is_kebab(name: str) -> bool:
    """True for a kebab-case name: lower-case letters and digits, single hyphens between.

    Args:
        name: the name to test.
    """
    return len(name) <= 64 and bool(_KEBAB.match(name))


def is_site(domain: str) -> bool:
    """True for a lower-case host name such as ``shop.localhost`` (no port, no scheme).

    Args:
        domain: the name to test.
    """
    return len(domain) <= 253 and bool(_SITE.match(domain))


@cache
def skill_schema() -> dict[str, Any]:
    """The frontmatter JSON Schema, parsed."""
    schema: dict[str, Any] = json.loads(SKILL_SCHEMA_PATH.read_text(encoding="utf-8"))
    return schema


@cache
def _schema_validator() -> jsonschema.protocols.Validator:
    schema = skill_schema()
    validator: jsonschema.protocols.Validator = jsonschema.validators.validator_for(schema)(schema)
    return validator


@dataclass
class Document:
    """A parsed SKILL.md: the frontmatter mapping and the body cut into ``##`` sections.

    Attributes:
        metadata: the frontmatter (empty when there is none).
        preamble: body text before the first ``##`` heading.
        sections: ``(title, text)`` in file order; headings inside code fences do not count.
        problems: what went wrong reading the frontmatter (no frontmatter, bad YAML, ...).
    """

    metadata: dict[str, Any]
    preamble: str = ""
    sections: list[tuple[str, str]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def section(self, title: str) -> str | None:
        """The text of the first section called ``title`` (case-insensitive), or None.

        Args:
            title: the section's heading without ``##``.
        """
        wanted = title.strip().lower()
        for name, text in self.sections:
            if name.strip().lower() == wanted:
                return text
        return None


def _split_sections(body: str) -> tuple[str, list[tuple[str, str]]]:
    preamble: list[str] = []
    sections: list[tuple[str, list[str]]] = []
    fence: str | None = None
    for line in body.splitlines():
        match = _FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)
        elif fence is not None and match and _closes(match, fence):
            fence = None
        elif fence is None:
            heading = _HEADING.match(line)
            if heading:
                sections.append((heading.group(1).strip(), []))
                continue
        (sections[-1][1] if sections else preamble).append(line)
    return (
        "\n".join(preamble).strip("\n"),
        [(title, "\n".join(lines).strip("\n")) for title, lines in sections],
    )


def _closes(match: re.Match[str], fence: str) -> bool:
    marker = match.group(1)
    return marker[0] == fence[0] and len(marker) >= len(fence) and not match.group(2).strip()


def parse_document(text: str) -> Document:
    """Parse SKILL.md text into frontmatter and sections. Never raises: see ``problems``.

    The frontmatter is read with python-frontmatter's YAML handler (YAML's safe loader).

    Args:
        text: the SKILL.md text.
    """
    handler = YAMLHandler()
    text = text.lstrip("\ufeff")
    if not handler.detect(text):
        preamble, sections = _split_sections(text)
        return Document(
            {}, preamble, sections, ["no YAML frontmatter: SKILL.md must start with ---"]
        )
    try:
        raw_meta, body = handler.split(text)
    except ValueError:
        return Document({}, "", [], ["the frontmatter is not closed by a --- line"])
    problems: list[str] = []
    try:
        loaded = handler.load(raw_meta)
    except yaml.YAMLError as exc:
        loaded = {}
        problems.append("frontmatter: not valid YAML: " + " ".join(str(exc).split()))
    if loaded is None:
        loaded = {}
    if not isinstance(loaded, dict):
        problems.append(f"frontmatter: must be a mapping of fields, not a {type(loaded).__name__}")
        loaded = {}
    preamble, sections = _split_sections(body)
    return Document(
        {str(key): value for key, value in loaded.items()}, preamble, sections, problems
    )


def render_document(
    metadata: dict[str, Any], preamble: str, sections: list[tuple[str, str]]
) -> str:
    """SKILL.md text: the frontmatter (keys in the given order) and the sections.

    Args:
        metadata: the frontmatter fields.
        preamble: text before the first section (may be empty).
        sections: ``(title, text)`` pairs, written as ``## title``.
    """
    parts = [preamble.strip("\n")] if preamble.strip() else []
    parts += [f"## {title}\n\n{text.strip(chr(10))}".rstrip() for title, text in sections]
    post = frontmatter.Post("\n\n".join(parts), **metadata)
    return frontmatter.dumps(post, sort_keys=False, width=100, default_flow_style=None) + "\n"


def _schema_problems(metadata: dict[str, Any]) -> list[str]:
    problems = []
    errors = sorted(_schema_validator().iter_errors(metadata), key=lambda e: list(e.path))
    for error in errors:
        path = [str(part) for part in error.absolute_path]
        where = "/".join(path) or "frontmatter"
        if path == ["name"] and error.validator == "pattern":
            problems.append(
                f"name: {error.instance!r} is not kebab-case (lower-case letters and digits "
                "with single hyphens, e.g. search-products)"
            )
        elif path[:1] == ["needs"] and error.validator == "enum":
            problems.append(
                f"needs: {error.instance!r} is not a capability; use " + ", ".join(CAPABILITIES)
            )
        elif path == ["site"] and error.validator == "pattern":
            problems.append(
                f"site: {error.instance!r} is not a lower-case host name like shop.example.com"
            )
        elif error.validator == "required" and error.validator_value == ["url"]:
            problems.append("url: required with auth: session (the page that holds the session)")
        elif error.validator in ("if", "allOf"):
            continue
        else:
            problems.append(f"{where}: {worded(error)}")
    # worded() names every missing required property in each of their errors.
    return list(dict.fromkeys(problems))


def skill_problems(doc: Document, *, domain: str, task: str) -> list[str]:
    """Every problem of a parsed SKILL.md in folder ``<domain>/<task>``, one line each.

    Checks the frontmatter schema, the kebab-case name, name equal to the folder, site equal
    to the domain folder, needs drawn from the six capabilities (and holding ``evaluate``),
    params and returns being valid JSON Schemas, the url being on the site, and the required
    sections being present.

    Args:
        doc: the parsed SKILL.md.
        domain: the domain folder's name (``site`` must equal it).
        task: the skill folder's name (``name`` must equal it).
    """
    problems = list(doc.problems)
    meta = doc.metadata
    if meta or not doc.problems:  # no frontmatter at all: one line says so, not nine
        problems += _schema_problems(meta)
    name, site = meta.get("name"), meta.get("site")
    if isinstance(name, str) and name != task:
        problems.append(f"name: {name!r} must equal the skill's folder name {task!r}")
    if isinstance(site, str) and site != domain:
        problems.append(f"site: {site!r} must equal the domain folder name {domain!r}")
    needs = meta.get("needs")
    if isinstance(needs, list) and needs and "evaluate" not in needs:
        problems.append("needs: must include evaluate (the extractor runs through it)")
    if "params" in meta and isinstance(meta["params"], dict):
        try:
            schema = args_schema(meta["params"])
        except ValueError as exc:
            problems.append(f"params: {exc}")
        else:
            if schema.get("type") != "object":
                problems.append('params: a full JSON Schema must have "type": "object"')
            else:
                problems += _schema_check("params", schema)
    if isinstance(meta.get("returns"), dict | bool):
        problems += _schema_check("returns", meta["returns"])
    url = meta.get("url")
    host = site if isinstance(site, str) and is_site(site) else None
    if isinstance(url, str) and host and match_domain(url, [host, f"*.{host}"]) is None:
        problems.append(f"url: {url!r} is not on {site} (or a subdomain of it)")
    for title in SECTIONS:
        if doc.section(title) is None:
            problems.append(f"missing section: ## {title}")
    return problems


def _schema_check(key: str, schema: Any) -> list[str]:
    # schema_problems also refuses remote $refs and patterns RE2 cannot run.
    return [f"{key}: {problem}" for problem in schema_problems(schema)]


def source_problems(source: str | None, *, what: str = EXTRACTOR_FILE) -> list[str]:
    """Problems of an extractor's source text.

    Args:
        source: the text, or None when it is missing.
        what: how to name the source in a problem.
    """
    if source is None:
        return [f"{what} is missing"]
    if not source.strip():
        return [f"{what} is empty"]
    return []


def skill_source_url(domain: str, task: str) -> str:
    """The ``sourceURL`` a skill's extractor runs under, so that a JS stack names its file.

    Args:
        domain, task: the skill's folders.
    """
    return f"ego-skills/{domain}/{task}/{EXTRACTOR_FILE}"


def content_hash(url: str, expression: str) -> str:
    """The cache stamp (VER): a digest of what runs, so source and stamp cannot disagree.

    Args:
        url: the sourceURL the code is stored with.
        expression: the normalised extractor.
    """
    return hashlib.sha256((url + "\n" + expression).encode()).hexdigest()[:16]


class Skill(BaseModel):
    """A parsed, valid skill.

    Attributes:
        id: the catalog id ``<domain>/<task>``.
        params: the params as a full JSON Schema (a compact map is converted).
        url: the page to open first (``https://<site>/`` when the frontmatter has none).
        version: the frontmatter's version label, as text.
        version_hash: the cache stamp VER, a hash of the normalised extractor and its url.
        metadata: the frontmatter as written, every key kept.
        sections: the body's ``##`` sections, ``(title, text)`` in file order.
        source: the text of ``evaluate.js``; ``expression`` is it normalised to one
            JavaScript expression that evaluates to the extractor.
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    id: str
    name: str
    description: str
    site: str
    needs: tuple[Capability, ...]
    side_effect: SideEffect
    auth: Auth
    version: str
    params: dict[str, Any]
    returns: dict[str, Any] | bool
    url: str
    timeout: float | None = None
    directory: Path | None = None
    metadata: dict[str, Any]
    preamble: str = ""
    sections: tuple[tuple[str, str], ...] = ()
    source: str
    expression: str
    source_url: str
    version_hash: str

    @property
    def key(self) -> str:
        """The localStorage key of the cached extractor: ``ego:skill:<domain>/<task>``."""
        return f"ego:{NAMESPACE}:{self.id}"

    def section(self, title: str) -> str | None:
        """The text of section ``title`` (case-insensitive), or None.

        Args:
            title: the section's heading without ``##``.
        """
        wanted = title.lower()
        return next((text for name, text in self.sections if name.lower() == wanted), None)


def build_skill(
    doc: Document,
    source: str | None,
    *,
    domain: str,
    task: str,
    directory: Path | None = None,
    source_what: str = EXTRACTOR_FILE,
) -> Skill:
    """Check a parsed SKILL.md and its extractor source and build the :class:`Skill`.

    Args:
        doc: the parsed SKILL.md.
        source: the extractor's text (None when missing).
        domain, task: the folder names the skill lives in (or will).
        directory: the skill folder, when it is on disk.
        source_what: how to name the source in a problem (``evaluate.js``, or the Extractor
            block of an imported file).

    Raises:
        InvalidSkillError: one or more problems; ``problems`` lists them, one line each.
    """
    skill_id = f"{domain}/{task}"
    problems = skill_problems(doc, domain=domain, task=task)
    problems += source_problems(source, what=source_what)
    expression = ""
    if source is not None and source.strip():
        try:
            expression = normalize_source(source)
        except ValueError as exc:
            problems.append(f"{source_what}: {exc}")
    if problems:
        raise invalid_skill(skill_id, problems, where=directory)
    assert source is not None
    meta = doc.metadata
    url = str(meta.get("url") or f"https://{meta['site']}/")
    source_url = skill_source_url(domain, task)
    timeout = meta.get("timeout")
    return Skill(
        id=skill_id,
        name=meta["name"],
        description=str(meta["description"]).strip(),
        site=meta["site"],
        needs=tuple(meta["needs"]),
        side_effect=meta["side_effect"],
        auth=meta["auth"],
        version=str(meta["version"]),
        params=args_schema(meta["params"]),
        returns=meta["returns"],
        url=url,
        timeout=float(timeout) if isinstance(timeout, int | float) else None,
        directory=directory,
        metadata=dict(meta),
        preamble=doc.preamble,
        sections=tuple(doc.sections),
        source=source,
        expression=expression,
        source_url=source_url,
        version_hash=content_hash(source_url, expression),
    )


def invalid_skill(skill_id: str, problems: list[str], *, where: Path | None) -> InvalidSkillError:
    """The InvalidSkillError for ``problems`` (first one in the message, all in ``problems``).

    Args:
        skill_id: the skill's id.
        problems: one line each; at least one.
        where: the skill folder, when there is one.
    """
    place = f" ({where})" if where is not None else ""
    more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
    return InvalidSkillError(
        f"skill {skill_id!r} is invalid{place}: {problems[0]}{more}; fix its SKILL.md / "
        "evaluate.js (site.skills() lists every problem)",
        skill_id=skill_id,
        problems=problems,
    )


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def load_skill(directory: Path) -> Skill:
    """Read and check the skill in ``directory`` (``<root>/<domain>/<task>``).

    Both files must resolve inside the folder, symlinks included.

    Args:
        directory: the skill folder.

    Raises:
        InvalidSkillError: the skill has problems (listed in ``problems``, one line each):
            a file missing, unreadable or outside the folder, the frontmatter failing its
            schema or naming rules, a section missing, an empty extractor.
    """
    domain, task = directory.parent.name, directory.name
    skill_id = f"{domain}/{task}"
    problems: list[str] = []
    texts: dict[str, str | None] = {}
    for name in (SKILL_FILE, EXTRACTOR_FILE):
        try:
            path = resolve_inside(directory, name, what=f"{skill_id} {name}")
            texts[name] = _read(path)
        except UnsafePathError as exc:
            problems.append(f"{name}: unsafe path: {exc}")
            texts[name] = ""
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(f"{name}: cannot read: {exc}")
            texts[name] = ""
    skill_text = texts[SKILL_FILE]
    if skill_text is None:
        problems.append(f"{SKILL_FILE} is missing")
        skill_text = ""
    if problems:
        # Still report what the rest of the folder gets wrong, when it can be read.
        doc = parse_document(skill_text) if skill_text else None
        if doc is not None:
            problems += skill_problems(doc, domain=domain, task=task)
        if texts[EXTRACTOR_FILE] is None:
            problems += source_problems(None)
        raise invalid_skill(skill_id, problems, where=directory)
    return build_skill(
        parse_document(skill_text),
        texts[EXTRACTOR_FILE],
        domain=domain,
        task=task,
        directory=directory,
    )
