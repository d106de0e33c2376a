"""The manifest of a learnings site: its JSON Schema, pydantic models, and loading."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from ...errors import InvalidManifestError
from .checked import CheckedManifests
from .schemas import json_depth, schema_problems, validator, worded

__all__ = [
    "CHECKS",
    "MANIFEST_SCHEMA_PATH",
    "MAX_MANIFEST_BYTES",
    "MAX_MANIFEST_DEPTH",
    "MAX_SITE_ID",
    "BrowserToolSpec",
    "Manifest",
    "ManifestRead",
    "NodeToolSpec",
    "PythonToolSpec",
    "ToolSpec",
    "args_schema",
    "is_site_id",
    "load_manifest",
    "manifest_schema",
    "parse_json",
]

#: The JSON Schema every manifest.json is validated against (shipped with the package).
MANIFEST_SCHEMA_PATH = Path(__file__).with_name("manifest.schema.json")
#: The files that make a manifest's checks: the schema, this module and the schema checks
#: (what :class:`~.checked.CheckedManifests` keys its verdicts by).
CHECKS: Final = (MANIFEST_SCHEMA_PATH, Path(__file__), Path(__file__).with_name("schemas.py"))
#: The largest manifest.json read, in bytes (1 MiB); a larger one makes its site invalid.
MAX_MANIFEST_BYTES = 1 << 20
#: The deepest a manifest may nest (objects and arrays; the top-level object is 1).
MAX_MANIFEST_DEPTH = 64

SideEffect = Literal["read", "write", "irreversible"]
Auth = Literal["none", "session"]


class ToolSpec(BaseModel):
    """One tool as the manifest declares it. ``args`` is always a full JSON Schema here."""

    model_config = ConfigDict(populate_by_name=True, extra="allow", frozen=True)

    name: str
    description: str = ""
    path: str
    args: dict[str, Any] = Field(default_factory=lambda: dict(_EMPTY_ARGS))
    returns: dict[str, Any] | bool | None = None
    side_effect: SideEffect = Field("read", alias="sideEffect")
    auth: Auth = "none"
    timeout: float | None = None


class BrowserToolSpec(ToolSpec):
    """A tool whose JavaScript runs in the page."""

    kind: Literal["browser"] = "browser"


class PythonToolSpec(ToolSpec):
    """A tool whose Python ``run(ctx, args)`` runs in the harness."""

    kind: Literal["python"] = "python"


class NodeToolSpec(BaseModel):
    """A Node-side tool of the TypeScript harness: listed, never run (ego has no Node side).

    Such a tool gets a Playwright ``ctx.page`` and runs in Node; ego reports it (in
    ``learn_context`` and ``ego validate``) so that a pack's tools are never dropped without
    a word. Porting one means writing a Python tool whose ``run(ctx, args)`` uses ``ctx.tab``.
    """

    model_config = ConfigDict(populate_by_name=True, extra="allow", frozen=True)

    name: str
    description: str = ""


class Manifest(BaseModel):
    """A parsed, validated ``manifest.json``."""

    model_config = ConfigDict(populate_by_name=True, extra="allow", frozen=True)

    id: str
    name: str
    description: str = ""
    version: str | int | None = None
    domains: tuple[str, ...]
    start_url: str | None = Field(None, alias="startUrl")
    notes: tuple[str, ...] = ()
    browser_tools: dict[str, BrowserToolSpec] = Field(default_factory=dict, alias="browserTools")
    python_tools: dict[str, PythonToolSpec] = Field(default_factory=dict, alias="pythonTools")
    node_tools: dict[str, NodeToolSpec] = Field(default_factory=dict, alias="nodeTools")


_EMPTY_ARGS: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}


@cache
def manifest_schema() -> dict[str, Any]:
    """The manifest JSON Schema, parsed."""
    schema: dict[str, Any] = json.loads(MANIFEST_SCHEMA_PATH.read_text())
    return schema


# The site-id rule is written once, as the schema's "id" property; folder lookups and saves
# read it from there.
_ID_RULE: Final = manifest_schema()["properties"]["id"]
#: The longest site id (a folder name, and part of every tool's sourceURL).
MAX_SITE_ID: Final[int] = _ID_RULE["maxLength"]
_SITE_ID: Final = re.compile(_ID_RULE["pattern"])


def is_site_id(value: object) -> bool:
    """Whether ``value`` can name a site: the manifest schema's rule for ``id`` (lower-case
    letters, digits, ``.``, ``_`` and ``-``, starting with a letter or digit, at most
    :data:`MAX_SITE_ID` characters). A whole match: a final newline is no part of an id."""
    return (
        isinstance(value, str)
        and len(value) <= MAX_SITE_ID
        and _SITE_ID.fullmatch(value) is not None
    )


@cache
def _manifest_validator() -> Any:
    return validator(manifest_schema())


def args_schema(args: dict[str, Any] | None) -> dict[str, Any]:
    """Return ``args`` as a full JSON Schema for the args object.

    A manifest may give the compact map ``{name: {type, required, description, ...}}`` (as
    packs for the TypeScript harness do) or a full JSON Schema. It is a full schema when it
    has a string ``type`` (it must be ``"object"``) or a ``$schema`` key. Compact entries keep
    any other JSON Schema keywords they carry (``enum``, ``default``, ``items``, ``minimum``);
    ``required`` defaults to false; unknown args are refused.

    Raises:
        ValueError: the compact map has an entry that is not an object.
    """
    if not args:
        return dict(_EMPTY_ARGS)
    if isinstance(args.get("type"), str) or "$schema" in args:
        return args
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, entry in args.items():
        if not isinstance(entry, dict):
            raise ValueError(f'arg {name!r} must be an object like {{"type": "string"}}')
        prop = {key: value for key, value in entry.items() if key != "required"}
        properties[name] = prop
        if entry.get("required") is True:
            required.append(name)
    schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        schema["required"] = required
    return schema


def _check_tool_schemas(kind: str, tools: dict[str, Any], problems: list[str]) -> None:
    for name, tool in tools.items():
        if not isinstance(tool, dict):
            continue  # the manifest schema has said so
        args = tool.get("args")
        if args is not None and not isinstance(args, dict):
            continue  # likewise
        try:
            schema = args_schema(args)
        except ValueError as exc:
            problems.append(f"{kind}.{name}.args: {exc}")
            continue
        if schema.get("type") != "object":
            problems.append(f'{kind}.{name}.args: a full JSON Schema must have "type": "object"')
            continue
        problems.extend(f"{kind}.{name}.args: {problem}" for problem in schema_problems(schema))
        if "returns" in tool and tool["returns"] is not None:
            problems.extend(
                f"{kind}.{name}.returns: {problem}" for problem in schema_problems(tool["returns"])
            )


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_json(data: bytes) -> Any:
    """The value ``data`` holds as a manifest's JSON: UTF-8 JSON, ``NaN`` and ``Infinity``
    refused.

    (orjson would read a manifest in two thirds of the time but reads an integer past 64 bits
    as a float; telling such bytes apart costs the difference.)

    Raises:
        UnicodeDecodeError: ``data`` is not UTF-8.
        json.JSONDecodeError: ``data`` is not JSON.
        ValueError: it holds ``NaN`` or ``Infinity``, or an integer of more digits than
            Python reads.
        RecursionError: it nests deeper than json can read.
    """
    return json.loads(data.decode("utf-8"), parse_constant=_reject_constant)


@dataclass(frozen=True)
class ManifestRead:
    """A manifest.json as read once: the stamp it had, its bytes and the object they hold
    (:func:`parse_json`). The domain index reads every manifest it lists; handing its reads to
    :func:`load_manifest` makes a listing read and parse each manifest once."""

    stamp: tuple[int, int, int, int]
    data: bytes
    raw: dict[str, Any]


def load_manifest(
    site_dir: Path,
    *,
    root: Path | None = None,
    checked: CheckedManifests | None = None,
    read: ManifestRead | None = None,
) -> Manifest:
    """Read and validate ``site_dir/manifest.json``.

    Whatever the file holds, the only error is this site's InvalidManifestError: a failure of
    the checks themselves is reported as one more problem, so one broken site never stops
    the others from loading.

    Args:
        site_dir: the site folder.
        root: the learnings root it was found in; when given, the folder and its manifest
            must not resolve (through a symlink) outside it.
        checked: the manifests that passed before: one whose bytes passed the schema checks
            is not checked against the schemas again, and one that passes now is added.
        read: the manifest as already read (by the domain index), used instead of reading
            it again; the folder and link checks are made all the same.

    Raises:
        InvalidManifestError: the file is missing, not JSON, larger than
            :data:`MAX_MANIFEST_BYTES` or deeper than :data:`MAX_MANIFEST_DEPTH`, links
            outside ``root``, fails the manifest schema, its ``id`` differs from the folder
            name, or a tool's ``args``/``returns`` is not a usable JSON Schema (see
            :func:`ego.learning.catalog.schemas.schema_problems`). ``problems`` lists every
            problem found, one line each.
    """
    path = site_dir / "manifest.json"
    try:
        return _load(site_dir, path, root, checked, read)
    except InvalidManifestError:
        raise
    except Exception as exc:  # any other failure is still only this site's problem
        text = " ".join(str(exc).split())[:300]
        raise _invalid(
            site_dir.name, path, [f"cannot load manifest.json: {type(exc).__name__}: {text}"]
        ) from None


def _load(
    site_dir: Path,
    path: Path,
    root: Path | None,
    checked: CheckedManifests | None,
    read: ManifestRead | None,
) -> Manifest:
    site_id = site_dir.name
    # A folder of the root that is no link, holding a manifest that is none, is inside the
    # root whatever the root resolves to: only a link is followed to see where it leads.
    plain = site_dir.parent == root and site_dir.name != ".." and not os.path.islink(site_dir)
    if root is not None and not (plain and not os.path.islink(path)):
        base = os.path.realpath(root)
        folder = os.path.realpath(site_dir)
        for what, target in (
            ("the site folder", folder),
            ("manifest.json", os.path.realpath(path)),
        ):
            if not _inside(target, base):
                raise _invalid(
                    site_id,
                    path,
                    [f"{what} links to {target}, outside the learnings root {base}"],
                )
    if read is not None:
        data, raw = read.data, read.raw
    else:
        data, raw = _read(site_id, path)
    # Bytes that passed every check of their content before need none of them again.
    digest = checked.digest(data) if checked is not None else None
    passed = digest is not None and checked is not None and checked.passed(digest)
    if not passed and json_depth(raw, MAX_MANIFEST_DEPTH) > MAX_MANIFEST_DEPTH:
        raise _invalid(site_id, path, [_too_deep()])
    problems = [] if passed else _schema_errors(raw)
    if isinstance(raw, dict):
        if isinstance(raw.get("id"), str) and raw["id"] != site_id:
            problems.append(f"id: {raw['id']!r} must equal the folder name {site_id!r}")
        for kind in ("browserTools", "pythonTools"):
            tools = raw.get(kind)
            if isinstance(tools, dict) and not passed:
                _check_tool_schemas(kind, tools, problems)
    if problems:
        raise _invalid(site_id, path, problems)
    if digest is not None and checked is not None and not passed:
        checked.remember(digest)
    data_out = dict(raw)
    for kind in ("browserTools", "pythonTools"):
        data_out[kind] = {
            name: {**tool, "name": name, "args": args_schema(tool.get("args"))}
            for name, tool in (raw.get(kind) or {}).items()
        }
    data_out["nodeTools"] = {
        name: {**tool, "name": name} for name, tool in (raw.get("nodeTools") or {}).items()
    }
    return Manifest.model_validate(data_out)


def _read(site_id: str, path: Path) -> tuple[bytes, Any]:
    """``path``'s bytes and the JSON they hold."""
    try:
        with path.open("rb") as file:
            data = file.read(MAX_MANIFEST_BYTES + 1)
    except FileNotFoundError:
        raise _invalid(site_id, path, ["manifest.json is missing"]) from None
    except OSError as exc:
        raise _invalid(site_id, path, [f"cannot read manifest.json: {exc}"]) from None
    if len(data) > MAX_MANIFEST_BYTES:
        raise _invalid(site_id, path, [f"manifest.json is larger than {MAX_MANIFEST_BYTES} bytes"])
    try:
        raw = parse_json(data)
    except UnicodeDecodeError as exc:
        raise _invalid(site_id, path, [f"cannot read manifest.json: {exc}"]) from None
    except json.JSONDecodeError as exc:
        raise _invalid(
            site_id, path, [f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"]
        ) from None
    except RecursionError:
        raise _invalid(site_id, path, [_too_deep()]) from None
    except ValueError as exc:  # NaN, Infinity, an integer of more digits than Python reads
        raise _invalid(site_id, path, [f"not JSON: {exc}"]) from None
    return data, raw


def _schema_errors(raw: Any) -> list[str]:
    """Where a parsed manifest fails the manifest schema, one line per problem."""
    problems = []
    for error in sorted(_manifest_validator().iter_errors(raw), key=lambda e: list(e.path)):
        where = "/".join(str(part) for part in error.absolute_path) or "(top level)"
        problems.append(f"{where}: {worded(error)}")
    # One line per problem: jsonschema reports each missing required property apart, and
    # worded() names them all in each.
    return list(dict.fromkeys(problems))


def _inside(target: str, base: str) -> bool:
    """Whether the resolved path ``target`` is ``base`` or under it."""
    return target == base or target.startswith(base.rstrip(os.sep) + os.sep)


def _too_deep() -> str:
    return f"manifest.json nests more than {MAX_MANIFEST_DEPTH} levels deep"


def _invalid(site_id: str, path: Path, problems: list[str]) -> InvalidManifestError:
    return InvalidManifestError(
        f"site {site_id!r} is invalid ({path}): {problems[0]}"
        + (f" (+{len(problems) - 1} more)" if len(problems) > 1 else "")
        + "; fix the manifest or run `ego validate`",
        site_id=site_id,
        problems=problems,
    )
