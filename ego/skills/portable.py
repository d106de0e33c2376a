"""Portable SKILL.md: export a skill or a browser tool for any browser bridge, and import one.

An exported SKILL.md is self-contained: the frontmatter, the sections, the extractor's source in
a ```js block under ``## Extractor``, and two ready-to-paste snippets built exactly as
:mod:`ego.runtime.cache` builds them, ``## Call`` (answers ``{"__ego_cache__": "NEEDS_STORE"}``
when the extractor is not stored yet or is stale, else the result) and ``## Store`` (answers
``"stored"``). VER in both is the content hash ego itself uses, so an extractor stored by
another agent's bridge is a cache hit for ego and the other way round.

A browser tool ``(args) => ...`` becomes the extractor ``async (root, params) => (<tool>)(params)``.

Import reads such a file, checks it as the catalog would, and writes
``<workspace>/skills/<domain>/<task>/SKILL.md`` plus ``evaluate.js`` taken from the Extractor
block (the Call and Store sections are left out: they are derived, and re-exported on demand).
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..errors import (
    InvalidSkillError,
    SkillExistsError,
    ToolLoadError,
    UnknownSiteError,
    UnknownSkillError,
    UnknownToolError,
)
from ..learning.catalog.manifest import BrowserToolSpec
from ..learning.catalog.paths import resolve_inside
from ..learning.catalog.registry import WORKSPACE_ENV, Learnings
from ..learning.describe.context import example_args
from ..learning.plan.locks import site_lock
from ..runtime.cache import PORTABLE_SIGNAL_KEY, call_snippet, store_snippet
from ..runtime.js import embed_json
from .catalog import catalog_for
from .format import (
    EXTRACTOR_FILE,
    SKILL_FILE,
    Document,
    Skill,
    build_skill,
    is_site,
    parse_document,
    render_document,
)
from .runner import check_params

__all__ = [
    "browser_tool_skill",
    "export_skill",
    "extractor_block",
    "import_skill",
    "skill_markdown",
    "tool_task_name",
]

_DERIVED = ("call", "store")
_FENCE_LINE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})[ \t]*([^\s`]*)[^`]*$")

_ERRORS_TEXT = (
    "- `NEEDS_LOGIN: ...` (thrown, or returned as `{error: ...}`): no usable session. The "
    "person logs in by hand in that browser profile, then the call is retried; never automate "
    "the login, never relearn the skill.\n"
    "- `SKILL_BROKEN: ...`: the site no longer matches the skill (an API or selector is gone); "
    "it needs a new version, retrying will not help.\n"
    '- Any other `{error: "..."}` result (not found, rate limited, bad request) is data for the '
    "caller, not protocol."
)


def _fence(code: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", code)), default=0)
    return "`" * max(3, longest + 1)


def _code_block(code: str, lang: str = "js") -> str:
    fence = _fence(code)
    return f"{fence}{lang}\n{code.rstrip(chr(10))}\n{fence}"


def _strip_code(text: str) -> str:
    """``text`` without its fenced code blocks."""
    kept: list[str] = []
    fence: str | None = None
    for line in text.splitlines():
        match = _FENCE_LINE.match(line)
        if fence is None and match:
            fence = match.group(1)
            continue
        if fence is not None:
            if match and _closing(match, fence):
                fence = None
            continue
        kept.append(line)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip("\n")


def _closing(match: re.Match[str], fence: str) -> bool:
    marker = match.group(1)
    return marker[0] == fence[0] and len(marker) >= len(fence) and not match.group(2)


def extractor_block(section: str) -> str | None:
    """The first ```js (or ```javascript, or unlabelled) code block of ``section``, or None.

    Args:
        section: a section's text.
    """
    lines = section.splitlines()
    index = 0
    while index < len(lines):
        match = _FENCE_LINE.match(lines[index])
        if not match:
            index += 1
            continue
        fence, lang = match.group(1), match.group(2).lower()
        body: list[str] = []
        index += 1
        while index < len(lines):
            closing = _FENCE_LINE.match(lines[index])
            if closing and _closing(closing, fence):
                break
            body.append(lines[index])
            index += 1
        else:
            return None  # the block is never closed
        if lang in ("", "js", "javascript", "mjs"):
            return "\n".join(body) + "\n"
        index += 1
    return None


def tool_task_name(tool: str) -> str:
    """A browser tool's name as a kebab-case task name (``get_orders`` -> ``get-orders``).

    Args:
        tool: the tool's name in its manifest.
    """
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", tool).lower()
    return re.sub(r"[^a-z0-9]+", "-", text).strip("-") or "tool"


def _tool_domain(domains: tuple[str, ...], site_id: str) -> str:
    for entry in domains:
        host = entry.strip().split(":", 1)[0].lower().rstrip(".")
        if not host.startswith("*.") and is_site(host):
            return host
    for entry in domains:
        host = entry.strip().split(":", 1)[0].lower().rstrip(".").removeprefix("*.")
        if is_site(host):
            return host
    raise ToolLoadError(f"site {site_id!r} has no domain that can name a skill: {domains}")


def browser_tool_skill(learnings: Learnings, site_id: str, tool: str) -> Skill:
    """A learnings site's browser tool as an (in-memory) skill ``<domain>/<task>``.

    The domain is the site's first exact domain; the task is the tool's name in kebab-case;
    the extractor calls the tool with the params.

    Args:
        learnings: where the site is found.
        site_id: the learnings site.
        tool: one of its browser tools.

    Raises:
        UnknownSiteError, InvalidManifestError, UnknownToolError: no such usable tool.
        ToolLoadError: it is a Python tool, or its file cannot be loaded.
        UnsafePathError: its path leaves the site folder.
        InvalidSkillError: the result is not a valid skill (e.g. a ``returns`` it cannot use).
    """
    entry, spec = learnings.tool(site_id, tool)
    if not isinstance(spec, BrowserToolSpec):
        raise ToolLoadError(f"{site_id}/{tool} is a Python tool: only browser tools export")
    manifest = entry.require()
    loaded = learnings.browser_source(site_id, spec)
    domain = _tool_domain(manifest.domains, site_id)
    task = tool_task_name(tool)
    url = manifest.start_url or ""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if parts.scheme not in ("http", "https") or not (host == domain or host.endswith("." + domain)):
        url = f"https://{domain}/"
    source = "async (root, params) => (" + loaded.expression.rstrip("\n") + "\n)(params)\n"
    metadata: dict[str, Any] = {
        "name": task,
        "description": spec.description or f"{manifest.name}: {tool}",
        "site": domain,
        "needs": ["navigate", "evaluate"],
        "side_effect": spec.side_effect,
        "auth": spec.auth,
        "version": str(manifest.version) if manifest.version is not None else "1",
        "url": url,
        "params": spec.args,
        "returns": spec.returns if spec.returns is not None else True,
    }
    if spec.timeout:
        metadata["timeout"] = spec.timeout
    session = (
        f" A logged-in {domain} session in the browser profile; without one the skill answers "
        "NEEDS_LOGIN and the person logs in by hand, then retries."
        if spec.auth == "session"
        else ""
    )
    sections = [
        (
            "Preconditions",
            f"A tab on {domain} (the extractor's requests are same-origin).{session}",
        ),
        (
            "Execute",
            f"1. navigate to {url} (unless a tab is already on that origin)\n"
            "2. evaluate the Call below with the params; if it answers NEEDS_STORE, evaluate the "
            "Store once and the Call again\n"
            "3. check the result against the Success assertion",
        ),
        (
            "Extractor",
            f"In-page async function `(root, params)` made from the browser tool `{tool}` of the "
            f"learnings site `{site_id}` ({spec.path}): it calls the tool with the params.",
        ),
        (
            "Success assertion",
            "The result matches the `returns` JSON Schema in the frontmatter. A result "
            '`{error: "..."}` is a domain error (see Errors), not a success.',
        ),
        ("Errors", _ERRORS_TEXT),
    ]
    return build_skill(Document(metadata, "", sections), source, domain=domain, task=task)


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def skill_markdown(skill: Skill, params: dict[str, Any] | None = None) -> str:
    """The portable SKILL.md of ``skill``: frontmatter, sections, extractor, Call and Store.

    Args:
        skill: the skill.
        params: the params the Call snippet carries (checked against the schema); by default
            example values from the params schema.

    Raises:
        InvalidArgsError: ``params`` fail the skill's schema.
    """
    example = check_params(skill, params) if params is not None else example_args(skill.params)
    arguments = "document, " + embed_json(example)
    # The fixed signal key: other bridges read it, and an export stays the same run to run.
    signal = PORTABLE_SIGNAL_KEY
    call = call_snippet(skill.key, skill.version_hash, arguments, signal_key=signal)
    store = store_snippet(
        skill.key, skill.version_hash, skill.expression, skill.source_url, signal_key=signal
    )
    sections: list[tuple[str, str]] = []
    for title, text in skill.sections:
        if title.strip().lower() in _DERIVED:
            continue
        if title.strip().lower() == "extractor":
            prose = _strip_code(text)
            prose = re.sub(r"\n*The extractor is `evaluate\.js`[^\n]*", "", prose).strip("\n")
            text = (prose + "\n\n" if prose else "") + _code_block(skill.source)
        sections.append((title, text))
    origin = _origin(skill.url)
    sections.append(
        (
            "Call",
            f"Evaluate this on a tab at {origin} (localStorage and the session are per origin). "
            f"It runs the extractor stored under `{skill.key}` at version `{skill.version_hash}`"
            " with `document` and the params: change only the object after `document,`. If it "
            f'answers `{{"{signal}": "NEEDS_STORE"}}`, evaluate the Store once, then this '
            f'Call again. `{{"{signal}": "NO_STORAGE"}}` or `"NO_EVAL"` means this page '
            "cannot cache it: call the Extractor above directly with `(document, params)`. A "
            "bridge that takes a function rather than an expression (Playwright MCP's "
            "`browser_evaluate`) gets `() => <snippet>`.\n\n" + _code_block(call),
        )
    )
    sections.append(
        (
            "Store",
            "Evaluate once, when the Call answers NEEDS_STORE. It writes the extractor and its "
            'version stamp (two localStorage keys, overwritten in place) and answers `"stored"`.'
            "\n\n" + _code_block(store),
        )
    )
    return render_document(dict(skill.metadata), skill.preamble, sections)


def export_skill(
    ref: str,
    *,
    learnings: Learnings | None = None,
    params: dict[str, Any] | None = None,
) -> str:
    """Export a skill (``<domain>/<task>``) or a browser tool (``<site-id>/<tool>``) as text.

    A skill id is looked up first, then a learnings browser tool.

    Args:
        ref: the skill id or ``site_id/tool``.
        learnings: the learnings (and, beside them, the skills); default :class:`Learnings`.
        params: the params the Call snippet carries; default example values.

    Raises:
        UnknownSkillError: ``ref`` is neither a skill nor a browser tool.
        InvalidSkillError: the skill is broken.
        InvalidManifestError: the tool's site is broken.
        ToolLoadError: ``ref`` is a Python tool, or the tool file cannot be loaded.
        UnsafePathError: the tool's path leaves its site folder.
        InvalidArgsError: ``params`` fail the schema.
    """
    learnings = learnings if learnings is not None else Learnings()
    catalog = catalog_for(learnings)
    try:
        skill = catalog.skill(ref)
    except UnknownSkillError as missing:
        site_id, _, tool = ref.partition("/")
        try:
            skill = browser_tool_skill(learnings, site_id, tool)
        except (UnknownSiteError, UnknownToolError) as exc:
            raise UnknownSkillError(
                f"{ref!r} is neither a skill nor a browser tool: {missing}; and {exc}"
            ) from None
    return skill_markdown(skill, params)


def _workspace(workspace: str | os.PathLike[str] | None) -> Path:
    if workspace is not None:
        return Path(workspace).expanduser()
    value = os.environ.get(WORKSPACE_ENV)
    if not value:
        raise ValueError(f"no workspace to import into: pass one or set ${WORKSPACE_ENV}")
    return Path(value).expanduser()


def import_skill(
    path: str | os.PathLike[str],
    workspace: str | os.PathLike[str] | None = None,
    overwrite: bool = False,
) -> Path:
    """Import a portable SKILL.md into ``<workspace>/skills/<domain>/<task>/``.

    The file is checked as the catalog checks skills (frontmatter schema, naming, sections,
    the ```js block under ``## Extractor``) before anything is written. ``evaluate.js`` gets
    that block; SKILL.md gets the rest, without the derived Call and Store sections. The
    folder appears whole or not at all.

    Args:
        path: the SKILL.md file to import.
        workspace: the agent workspace; default ``$EGO_WORKSPACE``.
        overwrite: replace a skill that is already there.

    Returns:
        The new skill's folder.

    Raises:
        InvalidSkillError: the file cannot be read or is not a valid skill (``problems``).
        SkillExistsError: the skill is already in the workspace and ``overwrite`` is False.
        UnsafePathError: the target folder resolves outside the workspace's skills root.
        SiteBusyError: another import of the same skill held its lock too long.
        ValueError: no workspace given and ``$EGO_WORKSPACE`` is not set.
    """
    source_path = Path(path).expanduser()
    try:
        text = source_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidSkillError(
            f"cannot import {source_path}: {exc}", skill_id="?", problems=[f"cannot read: {exc}"]
        ) from None
    doc = parse_document(text)
    meta = doc.metadata
    domain = meta["site"] if isinstance(meta.get("site"), str) else "(no site)"
    task = meta["name"] if isinstance(meta.get("name"), str) else "(no name)"
    extractor = doc.section("Extractor")
    source = extractor_block(extractor) if extractor is not None else None
    kept = [(t, s) for t, s in doc.sections if t.strip().lower() not in _DERIVED]
    doc = Document(meta, doc.preamble, kept, doc.problems)
    skill = build_skill(
        doc,
        source,
        domain=domain,
        task=task,
        source_what="the ```js block under ## Extractor",
    )
    root = _workspace(workspace) / "skills"
    target = resolve_inside(root, f"{skill.site}/{skill.name}", what=f"import of {skill.id}")
    # Another import of the same skill could retire the folder this one is renaming.
    with site_lock(root, f"{skill.site}/{skill.name}"):
        if target.exists() and not overwrite:
            raise SkillExistsError(
                f"skill {skill.id} is already in {root} ({target}): "
                "pass overwrite=True to replace it"
            )
        sections = []
        for title, body in kept:
            if title.strip().lower() == "extractor":
                prose = _strip_code(body)
                body = (prose + "\n\n" if prose else "") + (
                    f"The extractor is `{EXTRACTOR_FILE}`, beside this file."
                )
            sections.append((title, body))
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = target.parent / f"_import-{skill.name}-{secrets.token_hex(4)}"
        staging.mkdir()
        try:
            (staging / SKILL_FILE).write_text(
                render_document(dict(meta), doc.preamble, sections), encoding="utf-8"
            )
            (staging / EXTRACTOR_FILE).write_text(skill.source, encoding="utf-8")
            # Read back what was written, checked as the catalog will check it.
            build_skill(
                parse_document((staging / SKILL_FILE).read_text(encoding="utf-8")),
                (staging / EXTRACTOR_FILE).read_text(encoding="utf-8"),
                domain=skill.site,
                task=skill.name,
            )
            if target.exists():
                retired = target.parent / f"_old-{skill.name}-{secrets.token_hex(4)}"
                target.rename(retired)
                staging.rename(target)
                shutil.rmtree(retired, ignore_errors=True)
            else:
                staging.rename(target)
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)
        return target
