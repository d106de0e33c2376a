"""The learning loop: keep a browser tool or a note that worked, checked before it is kept.

An agent that found a way to do something on a site (a stable selector, an in-page API
call) saves it with :func:`save_browser_tool`; the next run is one call. Everything is
checked before a single byte is written:

1. the site id and the tool name are valid, the source is not empty;
2. the source holds no snapshot-only references (ephemeral element refs such as
   ``ref=e12``, pixel coordinates such as ``elementFromPoint(``): see :func:`find_snapshot_refs`;
3. the args and returns schemas are valid JSON Schema and the resulting manifest passes the
   same validation as loading it;
4. the source parses in the browser: ``Runtime.compileScript`` (``persistScript`` false) on
   the wrapped source and on the form the cache evals, in a fresh about:blank tab, which
   compiles without running anything;
5. with ``try_args``, the tool runs once in the page (plain wrap, no cache) and must neither
   throw nor signal NEEDS_LOGIN or SKILL_BROKEN, and its result must fit ``returns``.

Saves go to the agent workspace's learnings root, never to the project's: a site that exists
only in the project is first copied to the workspace (the copy shadows it) and the copy is
changed. Writes are atomic: a new site (or a workspace copy) is assembled in a hidden folder
and renamed into place; replacing a tool in a workspace site keeps the previous version in
``browser-tools/.history/<tool>/`` (see :mod:`ego.learning.history`) and then, for a tool
file whose name does not change, points the manifest at that kept copy before the live file
is replaced, so that whatever step a crash interrupts, the manifest names a file that exists
and holds the source that goes with its entry.
"""

from __future__ import annotations

import bisect
import contextlib
import copy
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

import jsonschema

from ..errors import (
    BrowserError,
    InvalidManifestError,
    JavaScriptError,
    SaveRefusedError,
    SnapshotReferenceError,
    WorkspaceRequiredError,
)
from ..js import normalize_source, source_url, wrap, wrap_call
from ..signals import signal_error
from .history import (
    HISTORY_DIR,
    ToolVersion,
    archive_file,
    content_hash,
    load_version,
    write_atomic,
)
from .manifest import Manifest, args_schema, load_manifest
from .matching import match_domain, normalize_host
from .registry import Learnings

if TYPE_CHECKING:
    from ..browser import Browser
    from ..tab import Tab

__all__ = [
    "SavedNote",
    "SavedTool",
    "ToolPlan",
    "check_note_name",
    "check_site_id",
    "check_tool_name",
    "compile_check",
    "current_url",
    "find_snapshot_refs",
    "plan_browser_tool",
    "restore_tool",
    "save_browser_tool",
    "save_note",
    "try_run",
    "workspace_root",
    "write_tool",
]

SideEffect = Literal["read", "write", "irreversible"]
Auth = Literal["none", "session"]

_SITE_ID = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_TOOL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_NOTE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")
_MAX_NAME = 64
_TMP_PREFIX = ".ego-saving-"

# -- checks that need nothing but the text ---------------------------------------------------


def _refuse(
    site_id: str, name: str, reason: str, problems: list[str], lead: str = ""
) -> SaveRefusedError:
    head = lead or problems[0]
    more = f" (+{len(problems) - 1} more: {'; '.join(problems[1:])})" if len(problems) > 1 else ""
    return SaveRefusedError(
        f"not saved {site_id}/{name}: {head}{more}; nothing was written",
        site_id=site_id,
        name=name,
        reason=reason,
        problems=problems,
    )


def check_site_id(site_id: str, *, name: str = "") -> None:
    """Refuse a site id that cannot be a learnings folder name.

    Raises:
        SaveRefusedError: ``site_id`` is not lower-case letters, digits, ``.``, ``_`` and
            ``-``, starting with a letter or digit (reason ``"site id"``).
    """
    if not isinstance(site_id, str) or not _SITE_ID.match(site_id) or len(site_id) > 100:
        raise _refuse(
            str(site_id),
            name,
            "site id",
            [
                f"site id {site_id!r} is not valid: use lower-case letters, digits, '.', '_' "
                "and '-', starting with a letter or digit (e.g. 'x-com')"
            ],
        )


def check_tool_name(site_id: str, tool: str) -> None:
    """Refuse a tool name that is not an identifier.

    Raises:
        SaveRefusedError: ``tool`` is not ``[A-Za-z_][A-Za-z0-9_]*`` of at most 64
            characters (reason ``"name"``).
    """
    if not isinstance(tool, str) or not _TOOL_NAME.match(tool) or len(tool) > _MAX_NAME:
        raise _refuse(
            site_id,
            str(tool),
            "name",
            [
                f"tool name {tool!r} is not a valid identifier: use letters, digits and '_', "
                f"not starting with a digit, at most {_MAX_NAME} characters "
                "(e.g. 'get_timeline_posts')"
            ],
        )


def check_note_name(site_id: str, name: str) -> str:
    """The note's file name stem (``name`` without a trailing ``.md``), checked.

    Raises:
        SaveRefusedError: the name is not letters, digits, ``_`` and ``-`` (reason ``"name"``).
    """
    stem = name[:-3] if isinstance(name, str) and name.lower().endswith(".md") else name
    if not isinstance(stem, str) or not _NOTE_NAME.match(stem) or len(stem) > _MAX_NAME:
        raise _refuse(
            site_id,
            str(name),
            "name",
            [
                f"note name {name!r} is not valid: use letters, digits, '_' and '-' "
                f"(at most {_MAX_NAME}), e.g. 'search-api'"
            ],
        )
    return stem


# -- snapshot-only references ----------------------------------------------------------------

_CODE, _STRING, _COMMENT, _REGEX = "c", "s", "m", "r"
_REGEX_AFTER_WORDS = {
    "return",
    "typeof",
    "instanceof",
    "case",
    "do",
    "else",
    "in",
    "of",
    "new",
    "delete",
    "void",
    "throw",
    "yield",
    "await",
}
_REGEX_AFTER_CHARS = set("(,=:[!&|?{};+-*%<>~^")


def _previous_code(source: str, kinds: list[str], index: int) -> str:
    """The code token before ``index``: a punctuation character, a word, or ``""``."""
    i = index - 1
    while i >= 0 and (kinds[i] == _COMMENT or (kinds[i] == _CODE and source[i].isspace())):
        i -= 1
    if i < 0:
        return ""
    if kinds[i] != _CODE:
        return '"'  # a string, template or regex literal: a slash after it divides
    if source[i].isalnum() or source[i] in "_$":
        end = i + 1
        while i >= 0 and kinds[i] == _CODE and (source[i].isalnum() or source[i] in "_$"):
            i -= 1
        return source[i + 1 : end]
    return source[i]


def _classify(source: str) -> list[str]:
    """Mark each character of JavaScript source as code, string, comment or regex.

    A lexer good enough to tell a selector in a string from a word in a comment: it follows
    quotes, template literals with nested ``${...}``, comments, and regex literals (a ``/``
    where an expression may start).
    """
    n = len(source)
    kinds = [_CODE] * n
    templates: list[int] = []  # brace depth at each open ``${``
    depth = 0
    i = 0
    in_template = False
    while i < n:
        ch = source[i]
        if in_template:
            kinds[i] = _STRING
            if ch == "\\":
                if i + 1 < n:
                    kinds[i + 1] = _STRING
                i += 2
                continue
            if ch == "`":
                in_template = False
            elif ch == "$" and i + 1 < n and source[i + 1] == "{":
                kinds[i] = kinds[i + 1] = _CODE
                templates.append(depth)
                depth += 1
                in_template = False
                i += 2
                continue
            i += 1
            continue
        if ch in "'\"":
            j = i + 1
            while j < n and source[j] != ch and source[j] != "\n":
                j += 2 if source[j] == "\\" else 1
            end = min(j + 1, n)
            kinds[i:end] = [_STRING] * (end - i)
            i = end
        elif ch == "`":
            kinds[i] = _STRING
            in_template = True
            i += 1
        elif ch == "/" and i + 1 < n and source[i + 1] == "/":
            end = source.find("\n", i)
            end = n if end < 0 else end
            kinds[i:end] = [_COMMENT] * (end - i)
            i = end
        elif ch == "/" and i + 1 < n and source[i + 1] == "*":
            end = source.find("*/", i + 2)
            end = n if end < 0 else end + 2
            kinds[i:end] = [_COMMENT] * (end - i)
            i = end
        elif ch == "/":
            before = _previous_code(source, kinds, i)
            if before == "" or before in _REGEX_AFTER_CHARS or before in _REGEX_AFTER_WORDS:
                j, in_class = i + 1, False
                while j < n and source[j] != "\n":
                    if source[j] == "\\":
                        j += 2
                        continue
                    if source[j] == "[":
                        in_class = True
                    elif source[j] == "]":
                        in_class = False
                    elif source[j] == "/" and not in_class:
                        break
                    j += 1
                if j < n and source[j] == "/":
                    j += 1
                    while j < n and (source[j].isalnum() or source[j] in "_$"):
                        j += 1  # flags
                    kinds[i:j] = [_REGEX] * (j - i)
                    i = j
                    continue
            i += 1
        elif ch == "{":
            depth += 1
            i += 1
        elif ch == "}":
            depth -= 1
            if templates and depth == templates[-1]:
                templates.pop()
                in_template = True
            i += 1
        else:
            i += 1
    return kinds


def _mask(source: str, kinds: list[str], hide: set[str]) -> str:
    return "".join(
        (" " if c != "\n" else c) if k in hide else c for c, k in zip(source, kinds, strict=True)
    )


def _string_spans(kinds: list[str]) -> list[tuple[int, int]]:
    spans = []
    i, n = 0, len(kinds)
    while i < n:
        if kinds[i] == _STRING:
            j = i
            while j < n and kinds[j] == _STRING:
                j += 1
            spans.append((i, j))
            i = j
        else:
            i += 1
    return spans


_REF_ATTRIBUTE = re.compile(r"(?<![\w?&$-])ref\s*=\s*[\"']?e\d+\b")
_ARIA_REF = re.compile(r"\baria-ref\b")
_BARE_REF = re.compile(r"^#?e\d+$")
_SELECTOR_CALL = re.compile(
    r"(?:\bquerySelector(?:All)?|\bclosest|\bmatches|\blocator|(?<![\w$])\$\$?)\s*\(\s*$"
)
_REF_KEY = re.compile(r"(?:(?<![\w$])ref|[\"']ref[\"'])\s*:\s*$")
_FROM_POINT = re.compile(
    r"\b(elementsFromPoint|elementFromPoint|caretPositionFromPoint|caretRangeFromPoint)\s*\("
)
_CDP_INPUT = re.compile(r"\bInput\.(dispatchMouseEvent|dispatchTouchEvent|synthesizeTapGesture)\b")
_COORD_LITERAL = re.compile(
    r"[\"']?\b(clientX|clientY|pageX|pageY|screenX|screenY|offsetX|offsetY)\b[\"']?"
    r"\s*:\s*(-?\d+(?:\.\d+)?)(?![\w.])"
)
_XY_PAIR = re.compile(
    r"[\"']?\bx\b[\"']?\s*:\s*(\d+(?:\.\d+)?)\s*,\s*[\"']?\by\b[\"']?\s*:\s*(\d+(?:\.\d+)?)(?![\w.])"
)
_POINTER_WORDS = re.compile(r"(?i)mouse|pointer|click|touch|\btap\b")


def find_snapshot_refs(source: str) -> list[str]:
    """The snapshot-only references in a tool's source, one line each (empty when clean).

    A saved tool runs again tomorrow on a freshly loaded page, so it must find elements by
    stable selectors or use the site's own API. Refused, with the line they are on:

    - ephemeral element refs from an accessibility snapshot: ``ref=e12`` or ``[ref="e5"]``
      in a string, anything with ``aria-ref``, a bare ``e123`` (or ``#e123``) given to
      ``querySelector``/``closest``/``matches``/``$``/``locator``, or ``ref: "e12"``;
    - pixel coordinates: ``elementFromPoint(`` (and its relatives), CDP's
      ``Input.dispatchMouseEvent``/``dispatchTouchEvent``, a non-zero number literal for
      ``clientX``/``clientY``/``pageX``/``screenX``/``offsetX`` (and Y), and ``x: 120, y: 48``
      literals in code that clicks, taps or sends mouse, pointer or touch events.

    Comments are not looked at, nor are names that merely look alike (``event.clientX``,
    ``data-ref``, ``?ref=e5`` in a URL, ``{x: 0, y: 0}``, a variable ``e1``).
    """
    kinds = _classify(source)
    no_comments = _mask(source, kinds, {_COMMENT})
    code_only = _mask(source, kinds, {_COMMENT, _STRING, _REGEX})
    line_starts = [0] + [i + 1 for i, ch in enumerate(source) if ch == "\n"]

    def line(pos: int) -> int:
        return bisect.bisect_right(line_starts, pos)

    found: list[tuple[int, str]] = []
    for start, end in _string_spans(kinds):
        text = source[start:end]
        for match in _REF_ATTRIBUTE.finditer(text):
            found.append(
                (
                    start + match.start(),
                    f"ephemeral element ref {match.group(0)!r} from a page snapshot",
                )
            )
        for match in _ARIA_REF.finditer(text):
            found.append((start + match.start(), "an 'aria-ref' selector from a page snapshot"))
        inner = text.strip("'\"`").strip()
        if _BARE_REF.match(inner):
            before = no_comments[max(0, start - 200) : start]
            if _SELECTOR_CALL.search(before) or _REF_KEY.search(before):
                found.append(
                    (start, f"snapshot ref {inner!r} used as an element reference or selector")
                )
    for match in _FROM_POINT.finditer(code_only):
        found.append((match.start(), f"pixel coordinates: {match.group(1)}("))
    for match in _CDP_INPUT.finditer(no_comments):
        found.append((match.start(), f"pixel coordinates: Input.{match.group(1)}"))
    for match in _COORD_LITERAL.finditer(no_comments):
        if float(match.group(2)) != 0:
            found.append(
                (match.start(), f"pixel coordinate literal {match.group(1)}: {match.group(2)}")
            )
    if _POINTER_WORDS.search(code_only):
        for match in _XY_PAIR.finditer(no_comments):
            if kinds[match.start()] == _CODE and (
                float(match.group(1)) != 0 or float(match.group(2)) != 0
            ):
                found.append(
                    (
                        match.start(),
                        f"click coordinates x: {match.group(1)}, y: {match.group(2)}",
                    )
                )
    found.sort()
    return [f"line {line(pos)}: {what}" for pos, what in found]


_FUNCTION_START = re.compile(
    r"^\s*(?:async\s+)?(?:function\b|\(|[A-Za-z_$][\w$]*\s*=>)|^\(\(\) => \{ ", re.S
)


def _leading_comments_stripped(expression: str) -> str:
    kinds = _classify(expression)
    i = 0
    while i < len(expression) and (kinds[i] == _COMMENT or expression[i].isspace()):
        i += 1
    return expression[i:]


def check_source(site_id: str, tool: str, source: str) -> str:
    """Check a tool's source without a browser and return it normalised (one expression).

    Raises:
        SaveRefusedError: the source is empty or not a function (reason ``"source"``).
        SnapshotReferenceError: it holds snapshot-only references (reason
            ``"snapshot refs"``); ``problems`` lists each with its line.
    """
    if not isinstance(source, str) or not source.strip():
        raise _refuse(site_id, tool, "source", ["the tool source is empty"])
    try:
        expression = normalize_source(source)
    except ValueError as exc:
        raise _refuse(site_id, tool, "source", [str(exc)]) from None
    if not _FUNCTION_START.match(_leading_comments_stripped(expression)):
        raise _refuse(
            site_id,
            tool,
            "source",
            [
                "the source is not a function: give an async function expression "
                "(async (args) => {...}), a function (async function (args) {...}) or a module "
                "with export default async function name(args) {...}"
            ],
        )
    findings = find_snapshot_refs(source)
    if findings:
        raise SnapshotReferenceError(
            f"not saved {site_id}/{tool}: the source holds references that only exist in one "
            f"snapshot of the page ({'; '.join(findings)}); a saved tool must find elements by "
            "stable selectors (ids, names, data-* or aria attributes, text) or use the site's "
            "own API; nothing was written",
            site_id=site_id,
            name=tool,
            reason="snapshot refs",
            problems=findings,
        )
    return expression


def _check_schemas(
    site_id: str, tool: str, args: dict[str, Any] | None, returns: dict[str, Any] | bool | None
) -> dict[str, Any]:
    problems = []
    schema: dict[str, Any] = {}
    if args is not None and not isinstance(args, dict):
        problems.append(f"args must be a JSON object (a schema), not {type(args).__name__}")
    else:
        try:
            schema = args_schema(args)
        except ValueError as exc:
            problems.append(f"args: {exc}")
        else:
            if schema.get("type") != "object":
                problems.append('args: a full JSON Schema must have "type": "object"')
            else:
                try:
                    jsonschema.validators.validator_for(schema).check_schema(schema)
                except jsonschema.SchemaError as exc:
                    where = "/".join(str(p) for p in exc.path)
                    problems.append(
                        f"args is not a valid JSON Schema: {exc.message}"
                        + (f" (at {where})" if where else "")
                    )
    if returns is not None:
        if not isinstance(returns, (dict, bool)):
            problems.append(f"returns must be a JSON Schema object, not {type(returns).__name__}")
        else:
            try:
                jsonschema.validators.validator_for(returns).check_schema(returns)
            except jsonschema.SchemaError as exc:
                problems.append(f"returns is not a valid JSON Schema: {exc.message}")
    if problems:
        raise _refuse(site_id, tool, "args schema", problems)
    return schema


# -- planning: what would be written, validated before anything is -----------------------------


def workspace_root(learnings: Learnings) -> Path:
    """The learnings root saves go to: the workspace's ``learnings/``.

    Raises:
        WorkspaceRequiredError: ``learnings`` has no workspace root, or it is one of the
            project roots too.
    """
    root = learnings.workspace_root
    if root is not None and any(_same_folder(root, other) for other in learnings.roots[1:]):
        raise WorkspaceRequiredError(
            f"cannot save a learning: the workspace's learnings/ ({root}) is also a project "
            "root, and built-in learnings are never modified; point EGO_WORKSPACE (or "
            "--workspace, workspace=) at a folder of the agent's own"
        )
    if root is None:
        searched = ", ".join(str(r) for r in learnings.roots) or "none"
        raise WorkspaceRequiredError(
            "cannot save a learning: no agent workspace is set (roots: "
            f"{searched}); set EGO_WORKSPACE (or --workspace), or pass workspace= to "
            "ego.launch()/Learnings(): learnings are saved into <workspace>/learnings/, the "
            "project's own learnings/ are never modified"
        )
    return root


def _same_folder(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


@dataclass
class _Base:
    """Where a site stands before a save: new, only in another root, or in the workspace."""

    kind: Literal["new", "project", "workspace"]
    directory: Path | None
    raw: dict[str, Any]


def _find_base(learnings: Learnings, site_id: str, name: str) -> _Base:
    root = workspace_root(learnings)
    for index, candidate_root in enumerate([root, *learnings.roots[1:]]):
        directory = candidate_root / site_id
        if not directory.is_dir():
            continue
        kind: Literal["project", "workspace"] = "workspace" if index == 0 else "project"
        try:
            load_manifest(directory)
            raw = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
        except InvalidManifestError as exc:
            raise _refuse(
                site_id,
                name,
                "site",
                [f"the site's manifest ({directory}) is broken: {p}" for p in exc.problems],
                lead=f"site {site_id!r} in {candidate_root} has a broken manifest: "
                f"{exc.problems[0]}; fix it (ego validate) or remove the folder",
            ) from None
        return _Base(kind, directory, raw)
    return _Base("new", None, {})


def _host_of(url: str | None) -> str | None:
    if not url:
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    return normalize_host(parts.hostname)


def _start_url(url: str | None) -> str | None:
    if not url or _host_of(url) is None:
        return None
    return url.split("#", 1)[0]


def _candidate(
    base: _Base,
    site_id: str,
    what: str,
    *,
    domains: Sequence[str] | None,
    page_url: str | None,
    site_name: str | None,
) -> dict[str, Any]:
    """The manifest after the save, before the tool or note is put in."""
    if base.kind == "new":
        chosen = list(domains) if domains else []
        if not chosen:
            host = _host_of(page_url)
            if host is None:
                raise _refuse(
                    site_id,
                    what,
                    "domains",
                    [
                        f"site {site_id!r} is new and no domains are known: pass domains= "
                        "(e.g. ['x.com']) or run it with a tab on the site (tab=, or --url)"
                    ],
                )
            chosen = [host]
        raw: dict[str, Any] = {"id": site_id, "name": site_name or site_id, "domains": chosen}
        start = _start_url(page_url)
        if start is not None and match_domain(start, chosen):
            raw["startUrl"] = start
        return raw
    raw = copy.deepcopy(base.raw)
    if site_name:
        raw["name"] = site_name
    if domains:
        known = list(raw.get("domains") or [])
        raw["domains"] = known + [d for d in domains if d not in known]
    return raw


def _validate_candidate(site_id: str, what: str, raw: dict[str, Any]) -> Manifest:
    """Validate a manifest that is not on disk yet, with exactly the checks loading applies."""
    with tempfile.TemporaryDirectory(prefix="ego-manifest-check-") as folder:
        site_dir = Path(folder) / site_id
        site_dir.mkdir()
        (site_dir / "manifest.json").write_text(json.dumps(raw), encoding="utf-8")
        try:
            return load_manifest(site_dir)
        except InvalidManifestError as exc:
            raise _refuse(
                site_id,
                what,
                "manifest",
                [f"the manifest would be invalid: {p}" for p in exc.problems],
            ) from None


def _live_path(tool: str) -> str:
    return f"browser-tools/{tool}.js"


@dataclass(frozen=True)
class ToolPlan:
    """A browser tool save that passed every check that needs no browser.

    Attributes:
        site_id, tool: what is saved.
        source: the tool file's text as given.
        expression: the source normalised to one expression (see :func:`ego.js.normalize_source`).
        entry: the manifest entry to write.
        manifest: the whole manifest to write (raw JSON data).
        parsed: ``manifest`` parsed and validated.
        base: ``"new"`` (no such site yet), ``"project"`` (only in another root: it will be
            copied to the workspace) or ``"workspace"``.
        base_dir: the site folder that exists now (None for a new site).
        workspace: the workspace learnings root.
    """

    site_id: str
    tool: str
    source: str
    expression: str
    entry: dict[str, Any]
    manifest: dict[str, Any]
    parsed: Manifest
    base: Literal["new", "project", "workspace"]
    base_dir: Path | None
    workspace: Path

    @property
    def url(self) -> str:
        """The sourceURL the saved tool will run under."""
        return source_url(self.site_id, self.entry["path"])

    @property
    def args_schema(self) -> dict[str, Any]:
        """The tool's args as a full JSON Schema."""
        return self.parsed.browser_tools[self.tool].args


def plan_browser_tool(
    learnings: Learnings,
    site_id: str,
    tool: str,
    source: str,
    description: str,
    args: dict[str, Any] | None = None,
    returns: dict[str, Any] | bool | None = None,
    side_effect: SideEffect = "read",
    *,
    auth: Auth = "none",
    domains: Sequence[str] | None = None,
    page_url: str | None = None,
    name: str | None = None,
) -> ToolPlan:
    """Check a browser tool save as far as possible without a browser, and plan its writes.

    Args:
        learnings: the roots; the save goes to their workspace root.
        site_id, tool, source, description, args, returns, side_effect, auth, domains, name:
            as :func:`save_browser_tool`.
        page_url: the URL of the page the tool was found on; gives a new site its domain and
            start URL.

    Raises:
        WorkspaceRequiredError: no workspace root.
        SaveRefusedError: a check failed (``reason`` says which); SnapshotReferenceError for
            snapshot-only references.
    """
    check_site_id(site_id, name=str(tool))
    check_tool_name(site_id, tool)
    expression = check_source(site_id, tool, source)
    _check_schemas(site_id, tool, args, returns)
    if not isinstance(description, str) or not description.strip():
        raise _refuse(
            site_id, tool, "manifest", ["the description is empty: say what the tool does"]
        )
    if side_effect not in ("read", "write", "irreversible"):
        raise _refuse(
            site_id,
            tool,
            "manifest",
            [f"side_effect {side_effect!r} must be 'read', 'write' or 'irreversible'"],
        )
    base = _find_base(learnings, site_id, tool)
    raw = _candidate(base, site_id, tool, domains=domains, page_url=page_url, site_name=name)
    python_tools = raw.get("pythonTools") or {}
    if isinstance(python_tools, dict) and tool in python_tools:
        raise _refuse(
            site_id,
            tool,
            "name",
            [f"site {site_id!r} already has a Python tool {tool!r}: pick another name"],
        )
    browser_tools = dict(raw.get("browserTools") or {})
    old = browser_tools.get(tool)
    entry: dict[str, Any] = {}
    if isinstance(old, dict):
        # Keys this API does not set (timeout, anything a person added) stay.
        known = {"description", "path", "args", "returns", "sideEffect", "auth"}
        entry.update({k: v for k, v in old.items() if k not in known})
    entry.update(
        {
            "description": description.strip(),
            "path": _live_path(tool),
            "args": args if args is not None else {},
            "sideEffect": side_effect,
            "auth": auth,
        }
    )
    if returns is not None:
        entry["returns"] = returns
    browser_tools[tool] = entry
    raw["browserTools"] = browser_tools
    parsed = _validate_candidate(site_id, tool, raw)
    return ToolPlan(
        site_id=site_id,
        tool=tool,
        source=source,
        expression=expression,
        entry=entry,
        manifest=raw,
        parsed=parsed,
        base=base.kind,
        base_dir=base.directory,
        workspace=workspace_root(learnings),
    )


# -- checks in the browser ----------------------------------------------------------------------


def _module_prefix(plan: ToolPlan) -> int:
    prefix = "(() => { "
    if plan.expression.startswith(prefix) and not plan.source.lstrip().startswith(prefix):
        return len(prefix)
    return 0


async def compile_check(browser: Browser, plan: ToolPlan) -> None:
    """Parse the wrapped tool in a fresh about:blank tab without running it.

    ``Runtime.compileScript`` with ``persistScript`` false compiles the script and reports a
    syntax error, and nothing executes. The tab is closed afterwards.

    Raises:
        SaveRefusedError: the source does not parse (reason ``"syntax"``; the message names
            the line of the tool file and the column).
        BrowserError: the browser failed.
    """
    url = plan.url
    script = wrap_call(plan.expression, "{}", url=url)
    # The cache's Call evals the stored source as '(' + source + '\n)': check that form too.
    cached_form = "(" + plan.expression.rstrip("\n") + "\n)"
    tab = await browser.new_tab("about:blank", background=True)
    try:
        await tab.send("Runtime.enable")
        details = None
        for expression in (script, cached_form):
            result = await tab.send(
                "Runtime.compileScript",
                {"expression": expression, "sourceURL": url, "persistScript": False},
            )
            details = result.get("exceptionDetails")
            if details is not None:
                if expression is cached_form:
                    script = cached_form
                break
    finally:
        with contextlib.suppress(BrowserError):
            await tab.close()
    if details is None:
        return
    exception = details.get("exception") or {}
    text = str(exception.get("description") or details.get("text") or "SyntaxError").splitlines()[0]
    line = int(details.get("lineNumber", 0)) + 1
    column = int(details.get("columnNumber", 0)) + 1
    if line == 1:
        # The wrapper (and a module's own prefix) share the first line with the source.
        column = max(1, column - script.index(plan.expression) - _module_prefix(plan))
    problem = f"{text} at line {line}, column {column} of the tool source"
    raise _refuse(
        plan.site_id, plan.tool, "syntax", [problem], lead=f"it does not parse: {problem}"
    )


async def try_run(
    tab: Tab,
    plan: ToolPlan,
    try_args: dict[str, Any],
    *,
    profile: str = "the browser profile",
    timeout: float | None = None,
) -> Any:
    """Run the planned tool once in ``tab`` with the plain wrap (no cache) and check the result.

    Returns:
        What the tool returned.

    Raises:
        SaveRefusedError: (reason ``"try run"``) the args fail the tool's schema, the tool
            threw, it signalled NEEDS_LOGIN or SKILL_BROKEN (thrown or returned as
            ``{error: "SIGNAL: ..."}``), the page went away or the run timed out, or the
            result does not fit ``returns``.
    """
    site_id, tool = plan.site_id, plan.tool

    def refuse(problem: str) -> SaveRefusedError:
        return _refuse(site_id, tool, "try run", [problem], lead=f"the try run failed: {problem}")

    if not isinstance(try_args, dict):
        raise refuse(f"try_args must be a JSON object, not {type(try_args).__name__}")
    schema = plan.args_schema
    error = jsonschema.exceptions.best_match(
        jsonschema.validators.validator_for(schema)(schema).iter_errors(try_args)
    )
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(args)"
        raise refuse(f"try_args fail the args schema at {where}: {error.message}")
    try:
        code = wrap(plan.expression, try_args, url=plan.url)
    except TypeError as exc:
        raise refuse(f"try_args are not JSON: {exc}") from None
    try:
        result = await tab.evaluate(code, timeout=timeout)
    except JavaScriptError as exc:
        signal = signal_error(exc.js_message, site_id=site_id, tool=tool, profile=profile)
        if signal is not None:
            raise refuse(f"it signalled {signal}") from None
        where = f" (line {exc.line} of the tool source)" if exc.url == plan.url and exc.line else ""
        raise refuse(f"it threw {exc.name}: {exc.js_message}{where}") from None
    except BrowserError as exc:
        raise refuse(f"{type(exc).__name__}: {exc}") from None
    if isinstance(result, dict) and isinstance(result.get("error"), str):
        signal = signal_error(result["error"], site_id=site_id, tool=tool, profile=profile)
        if signal is not None:
            raise refuse(f"it returned a signal: {signal}")
    returns = plan.entry.get("returns")
    if returns is not None:
        mismatch = jsonschema.exceptions.best_match(
            jsonschema.validators.validator_for(returns)(returns).iter_errors(result)
        )
        if mismatch is not None:
            where = "/".join(str(p) for p in mismatch.absolute_path) or "(result)"
            raise refuse(f"its result does not fit returns at {where}: {mismatch.message}")
    return result


# -- writing ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SavedTool:
    """What a browser tool save (or restore) did.

    Attributes:
        site_id, tool: what was saved.
        file: the tool file now in use.
        manifest: the manifest written.
        created_site: the site did not exist before.
        shadowed: the site existed only in the project; a workspace copy now shadows it.
        replaced: an earlier version of the tool was replaced.
        previous_version: the history id the replaced version was kept under (see
            ``ego history``), or None.
        hash: the first 12 hex digits of the saved source's SHA-256.
        unchanged: source and entry equal the current ones; nothing was written.
        try_result: what the try run returned, when there was one.
    """

    site_id: str
    tool: str
    file: Path
    manifest: Path
    created_site: bool
    shadowed: bool
    replaced: bool
    previous_version: str | None
    hash: str
    unchanged: bool = False
    try_result: Any = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready data (for the CLI and MCP)."""
        return {
            "site_id": self.site_id,
            "tool": self.tool,
            "file": str(self.file),
            "manifest": str(self.manifest),
            "created_site": self.created_site,
            "shadowed": self.shadowed,
            "replaced": self.replaced,
            "previous_version": self.previous_version,
            "hash": self.hash,
            "unchanged": self.unchanged,
            "try_result": self.try_result,
        }


def _manifest_bytes(raw: dict[str, Any]) -> bytes:
    return (json.dumps(raw, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _is_history_path(path: str) -> bool:
    return path.startswith(HISTORY_DIR + "/")


def _archive_old(
    site_dir: Path, tool: str, old_entry: Any, *, folder: Path | None = None
) -> ToolVersion | None:
    """Keep the tool's current version, unless there is none or it is a kept copy already."""
    if not isinstance(old_entry, dict) or not isinstance(old_entry.get("path"), str):
        return None
    if _is_history_path(old_entry["path"]):
        return None
    old_file = site_dir / old_entry["path"]
    if not old_file.is_file():
        return None
    return archive_file(site_dir, tool, old_file, dict(old_entry), folder=folder)


def _assemble_and_rename(
    plan_site: str, workspace: Path, base_dir: Path | None, fill: Callable[[Path], None]
) -> Path:
    """Build a site in a hidden folder of ``workspace`` and rename it into place atomically."""
    workspace.mkdir(parents=True, exist_ok=True)
    target = workspace / plan_site
    staging = Path(tempfile.mkdtemp(prefix=f"{_TMP_PREFIX}{plan_site}-", dir=workspace))
    try:
        if base_dir is not None:
            staging.rmdir()
            shutil.copytree(base_dir, staging, symlinks=True)
        fill(staging)
        if target.exists():
            raise FileExistsError(f"{target} appeared while saving; save again")
        os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    _fsync_parent(target)
    return target


def _fsync_parent(path: Path) -> None:
    with contextlib.suppress(OSError, AttributeError):
        fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _current_entry(raw: dict[str, Any], tool: str) -> Any:
    tools = raw.get("browserTools")
    return tools.get(tool) if isinstance(tools, dict) else None


def write_tool(plan: ToolPlan) -> SavedTool:
    """Write a planned browser tool save. Call only after every check passed.

    A new site, or the workspace copy of a project site, is assembled in a hidden folder of
    the workspace and renamed into place. In a workspace site, the current version is kept in
    the history, the manifest is pointed at that kept copy when the live file name is reused,
    the live file is replaced, and then the manifest is replaced: each step is one
    ``os.replace``, and after any of them the manifest names an existing file holding the
    source that belongs to its entry.

    Raises:
        OSError: a write failed; the site is left consistent (see above).
    """
    data = plan.source.encode("utf-8")
    live = plan.entry["path"]
    workspace_dir = plan.workspace / plan.site_id
    if plan.base == "project" and plan.base_dir is not None:
        unchanged = _unchanged(plan.base_dir, plan.tool, data, plan.manifest)
        if unchanged is not None:
            return unchanged  # the built-in version already is this: no copy needed
    if plan.base in ("new", "project") and not workspace_dir.is_dir():
        kept: list[ToolVersion] = []

        def fill(staging: Path) -> None:
            if plan.base == "project":
                raw = json.loads((staging / "manifest.json").read_text(encoding="utf-8"))
                previous = _archive_old(staging, plan.tool, _current_entry(raw, plan.tool))
                if previous is not None:
                    kept.append(previous)
            write_atomic(staging / live, data)
            write_atomic(staging / "manifest.json", _manifest_bytes(plan.manifest))

        try:
            target = _assemble_and_rename(plan.site_id, plan.workspace, plan.base_dir, fill)
        except OSError:
            if not (workspace_dir / "manifest.json").is_file():
                raise
            # Another save created the workspace site meanwhile: add the tool to it below.
        else:
            return SavedTool(
                site_id=plan.site_id,
                tool=plan.tool,
                file=target / live,
                manifest=target / "manifest.json",
                created_site=plan.base == "new",
                shadowed=plan.base == "project",
                replaced=bool(kept),
                previous_version=kept[0].version if kept else None,
                hash=content_hash(data),
            )
    return _replace_in_workspace(workspace_dir, plan.site_id, plan.tool, data, plan.manifest)


def _unchanged(
    site_dir: Path, tool: str, data: bytes, manifest: dict[str, Any]
) -> SavedTool | None:
    """A SavedTool saying "nothing to do" when ``site_dir`` already holds this very tool."""
    manifest_path = site_dir / "manifest.json"
    try:
        current = json.loads(manifest_path.read_text(encoding="utf-8"))
        entry = _current_entry(current, tool)
        if not isinstance(entry, dict) or current != manifest:
            return None
        file = site_dir / str(entry.get("path"))
        if file.read_bytes() != data:
            return None
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return SavedTool(
        site_id=site_dir.name,
        tool=tool,
        file=file,
        manifest=manifest_path,
        created_site=False,
        shadowed=False,
        replaced=False,
        previous_version=None,
        hash=content_hash(data),
        unchanged=True,
    )


def _overlay(current: dict[str, Any], planned: dict[str, Any]) -> dict[str, Any]:
    """``current`` (as on disk now) with the site-level keys a save may change from ``planned``."""
    merged = copy.deepcopy(current)
    for key in ("name", "domains"):
        if key in planned:
            merged[key] = copy.deepcopy(planned[key])
    return merged


def _replace_in_workspace(
    site_dir: Path, site_id: str, tool: str, data: bytes, manifest: dict[str, Any]
) -> SavedTool:
    manifest_path = site_dir / "manifest.json"
    # Read now, not at planning time: the site may have changed while the browser checked.
    current = json.loads(manifest_path.read_text(encoding="utf-8"))
    old_entry = _current_entry(current, tool)
    new_entry = manifest["browserTools"][tool]
    live = new_entry["path"]
    merged = _overlay(current, manifest)
    tools = dict(merged.get("browserTools") or {})
    tools[tool] = new_entry
    merged["browserTools"] = tools
    if merged != manifest:
        _validate_candidate(site_id, tool, merged)
    if merged == current:
        unchanged = _unchanged(site_dir, tool, data, merged)
        if unchanged is not None:
            return unchanged
    previous = _archive_old(site_dir, tool, old_entry)
    if previous is not None and isinstance(old_entry, dict) and old_entry.get("path") == live:
        # Point the manifest at the kept copy, so that replacing the live file below never
        # leaves the old entry naming the new source.
        pinned = copy.deepcopy(current)
        pinned_tools = dict(pinned["browserTools"])
        pinned_tools[tool] = {**old_entry, "path": previous.file.relative_to(site_dir).as_posix()}
        pinned["browserTools"] = pinned_tools
        write_atomic(manifest_path, _manifest_bytes(pinned))
    write_atomic(site_dir / live, data)
    write_atomic(manifest_path, _manifest_bytes(merged))
    return SavedTool(
        site_id=site_id,
        tool=tool,
        file=site_dir / live,
        manifest=manifest_path,
        created_site=False,
        shadowed=False,
        replaced=previous is not None or isinstance(old_entry, dict),
        previous_version=previous.version if previous is not None else None,
        hash=content_hash(data),
    )


# -- the operations ------------------------------------------------------------------------------


async def current_url(tab: Tab | None) -> str | None:
    """The URL ``tab`` shows now (``location.href``, else its last known URL), or None."""
    if tab is None:
        return None
    with contextlib.suppress(BrowserError, JavaScriptError):
        href = await tab.evaluate("location.href", timeout=5)
        if isinstance(href, str):
            return href
    return tab.url


async def _matching_tab(
    browser: Browser, learnings: Learnings, site_id: str, domains: Sequence[str] | None
) -> Tab | None:
    wanted = list(domains or [])
    if not wanted:
        for root in learnings.roots:
            directory = root / site_id
            if directory.is_dir():
                with contextlib.suppress(InvalidManifestError):
                    wanted = list(load_manifest(directory).domains)
                break
    if not wanted:
        return None
    for candidate in await browser.tabs():
        if match_domain(candidate.url, wanted):
            return candidate
    return None


async def save_browser_tool(
    learnings: Learnings,
    browser: Browser,
    site_id: str,
    tool: str,
    source: str,
    description: str,
    args: dict[str, Any] | None = None,
    returns: dict[str, Any] | bool | None = None,
    side_effect: SideEffect = "read",
    *,
    auth: Auth = "none",
    domains: Sequence[str] | None = None,
    tab: Tab | None = None,
    try_args: dict[str, Any] | None = None,
    name: str | None = None,
    profile: str = "the browser profile",
) -> SavedTool:
    """Check a browser tool and keep it in the workspace's learnings (see the module doc).

    Args:
        learnings: the roots; the tool is written under their workspace root.
        browser: the browser that checks the source (and runs ``try_args``).
        site_id: the site's id, its folder name (``"x-com"``).
        tool: the tool's name, an identifier (``"get_timeline_posts"``).
        source: the tool's JavaScript: an async function expression, an arrow function, or a
            module with ``export default async function``.
        description: what the tool does, for an agent choosing tools.
        args: its args: the compact map ``{name: {type, required, description}}`` or a full
            JSON Schema with ``"type": "object"``; None for no args.
        returns: a JSON Schema for its result, or None.
        side_effect: ``"read"``, ``"write"`` or ``"irreversible"``.
        auth: ``"session"`` when it rides on a logged-in session, else ``"none"``.
        domains: the site's domains; for a new site, by default the host of the tab's URL.
            For an existing site, new entries are added.
        tab: the tab the tool was found in: gives a new site its domain and start URL, and
            is where ``try_args`` runs. By default an open tab on the site's domains.
        try_args: run the tool once with these args before saving.
        name: the site's display name (a new site defaults to its id).
        profile: how to name the browser profile in a NEEDS_LOGIN message.

    Returns:
        What was written.

    Raises:
        WorkspaceRequiredError: no workspace to save into (set EGO_WORKSPACE).
        SaveRefusedError: a check failed; nothing was written (``reason`` and ``problems``
            say why). SnapshotReferenceError when the source uses snapshot-only refs or
            pixel coordinates.
        BrowserError: the browser failed during the checks; nothing was written.
        OSError: the disk write failed (the site stays consistent).
    """
    workspace_root(learnings)
    check_site_id(site_id, name=str(tool))
    check_tool_name(site_id, tool)
    check_source(site_id, tool, source)
    _check_schemas(site_id, tool, args, returns)
    if tab is None:
        tab = await _matching_tab(browser, learnings, site_id, domains)
    page_url_now = await current_url(tab)
    plan = plan_browser_tool(
        learnings,
        site_id,
        tool,
        source,
        description,
        args,
        returns,
        side_effect,
        auth=auth,
        domains=domains,
        page_url=page_url_now,
        name=name,
    )
    await compile_check(browser, plan)
    result: Any = None
    if try_args is not None:
        if tab is None:
            raise _refuse(
                site_id,
                tool,
                "try run",
                [
                    "try_args needs a tab on the site and none is open: open one "
                    "(browser.new_tab(url)) and pass tab=, or --url on the command line"
                ],
            )
        timeout = plan.parsed.browser_tools[tool].timeout
        result = await try_run(tab, plan, try_args, profile=profile, timeout=timeout)
    saved = write_tool(plan)
    return saved if try_args is None else replace(saved, try_result=result)


def restore_tool(learnings: Learnings, site_id: str, tool: str, version: str) -> SavedTool:
    """Bring back a kept version of a browser tool; the current one is kept as a new version.

    The kept source and manifest entry are written back (the entry's path becomes
    ``browser-tools/<tool>.js``) with the same atomic steps as a save.

    Args:
        learnings: the roots; the site must be in their workspace root.
        site_id, tool: the tool.
        version: a version id from ``ego history`` (or a unique prefix of an id or hash).

    Raises:
        WorkspaceRequiredError: no workspace root.
        UnknownVersionError: no such kept version (the message lists them).
        InvalidManifestError: the workspace site's manifest is broken (fix it first).
        SaveRefusedError: the restored manifest would be invalid.
        OSError: the write failed (the site stays consistent).
    """
    root = workspace_root(learnings)
    check_site_id(site_id, name=tool)
    check_tool_name(site_id, tool)
    site_dir = root / site_id
    kept = load_version(Learnings(roots=[root]), site_id, tool, version)
    data = kept.file.read_bytes()
    load_manifest(site_dir)  # a broken manifest is reported, not overwritten
    raw = json.loads((site_dir / "manifest.json").read_text(encoding="utf-8"))
    entry = {**kept.entry, "path": _live_path(tool)}
    tools = dict(raw.get("browserTools") or {})
    tools[tool] = entry
    raw["browserTools"] = tools
    _validate_candidate(site_id, tool, raw)
    return _replace_in_workspace(site_dir, site_id, tool, data, raw)


@dataclass(frozen=True)
class SavedNote:
    """What a note save did.

    Attributes:
        site_id: the site.
        name: the note's name (its file is ``notes/<name>.md``).
        file: the note file.
        manifest: the site's manifest.
        created_site: the site did not exist before.
        shadowed: the site existed only in the project; a workspace copy now shadows it.
        replaced: a note of that name existed; its text was kept in ``notes/.history/``.
        previous_file: where the replaced text was kept, or None.
    """

    site_id: str
    name: str
    file: Path
    manifest: Path
    created_site: bool
    shadowed: bool
    replaced: bool
    previous_file: Path | None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready data (for the CLI and MCP)."""
        return {
            "site_id": self.site_id,
            "name": self.name,
            "file": str(self.file),
            "manifest": str(self.manifest),
            "created_site": self.created_site,
            "shadowed": self.shadowed,
            "replaced": self.replaced,
            "previous_file": str(self.previous_file) if self.previous_file else None,
        }


def _keep_note(site_dir: Path, path: str, stem: str) -> Path | None:
    old = site_dir / path
    if not old.is_file():
        return None
    folder = site_dir / "notes" / ".history" / stem
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
    target = folder / f"{stamp}.md"
    counter = 0
    while target.exists():
        counter += 1
        target = folder / f"{stamp}-{counter}.md"
    write_atomic(target, old.read_bytes())
    return target


def save_note(
    learnings: Learnings,
    site_id: str,
    name: str,
    text: str,
    *,
    domains: Sequence[str] | None = None,
    page_url: str | None = None,
    site_name: str | None = None,
) -> SavedNote:
    """Keep a note (markdown knowledge for agents) as ``notes/<name>.md`` of a site.

    The note is written first, then listed in the manifest (if it is not listed already), so
    a crash in between leaves an unlisted file and a valid site. A replaced note's text is
    kept in ``notes/.history/<name>/``. A new site needs ``domains`` or a ``page_url``.

    Args:
        learnings: the roots; the note is written under their workspace root.
        site_id: the site's id.
        name: the note's name (letters, digits, ``_``, ``-``; a trailing ``.md`` is dropped).
        text: the markdown; a first ``# Title`` line names it in ``learn_context``.
        domains: the site's domains, for a new site (or to add to an existing one).
        page_url: a page of the site: gives a new site its domain and start URL.
        site_name: a new site's display name (defaults to its id).

    Raises:
        WorkspaceRequiredError: no workspace root.
        SaveRefusedError: the site id or name is invalid, the text is empty, the site is new
            and has no domains, or its manifest is broken; nothing was written.
        OSError: the write failed (the site stays consistent).
    """
    workspace_root(learnings)
    check_site_id(site_id, name=str(name))
    stem = check_note_name(site_id, name)
    if not isinstance(text, str) or not text.strip():
        raise _refuse(site_id, stem, "source", ["the note is empty"])
    base = _find_base(learnings, site_id, stem)
    raw = _candidate(base, site_id, stem, domains=domains, page_url=page_url, site_name=site_name)
    path = f"notes/{stem}.md"
    notes = list(raw.get("notes") or [])
    if path not in notes:
        notes.append(path)
    raw["notes"] = notes
    _validate_candidate(site_id, stem, raw)
    data = (text if text.endswith("\n") else text + "\n").encode("utf-8")
    root = workspace_root(learnings)
    if base.kind in ("new", "project"):
        kept: list[Path] = []

        def fill(staging: Path) -> None:
            previous = _keep_note(staging, path, stem)
            if previous is not None:
                kept.append(previous.relative_to(staging))
            write_atomic(staging / path, data)
            write_atomic(staging / "manifest.json", _manifest_bytes(raw))

        target = _assemble_and_rename(site_id, root, base.directory, fill)
        previous_file = target / kept[0] if kept else None
        return SavedNote(
            site_id=site_id,
            name=stem,
            file=target / path,
            manifest=target / "manifest.json",
            created_site=base.kind == "new",
            shadowed=base.kind == "project",
            replaced=bool(kept),
            previous_file=previous_file,
        )
    assert base.directory is not None
    site_dir = base.directory
    # Re-read: only the note's listing (and any name or domains asked for) changes.
    current = json.loads((site_dir / "manifest.json").read_text(encoding="utf-8"))
    merged = _overlay(current, raw)
    listed = list(merged.get("notes") or [])
    if path not in listed:
        listed.append(path)
    merged["notes"] = listed
    if merged != current:
        _validate_candidate(site_id, stem, merged)
    previous = _keep_note(site_dir, path, stem)
    write_atomic(site_dir / path, data)
    if merged != current:
        write_atomic(site_dir / "manifest.json", _manifest_bytes(merged))
    return SavedNote(
        site_id=site_id,
        name=stem,
        file=site_dir / path,
        manifest=site_dir / "manifest.json",
        created_site=False,
        shadowed=False,
        replaced=previous is not None,
        previous_file=previous,
    )
