"""The manifest of a learnings site: its JSON Schema, pydantic models, and loading."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any, Literal

import jsonschema
from pydantic import BaseModel, ConfigDict, Field

from ..errors import InvalidManifestError

__all__ = [
    "MANIFEST_SCHEMA_PATH",
    "BrowserToolSpec",
    "Manifest",
    "PythonToolSpec",
    "ToolSpec",
    "args_schema",
    "load_manifest",
    "manifest_schema",
]

#: The JSON Schema every manifest.json is validated against (shipped with the package).
MANIFEST_SCHEMA_PATH = Path(__file__).with_name("manifest.schema.json")

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


_EMPTY_ARGS: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}


@cache
def manifest_schema() -> dict[str, Any]:
    """The manifest JSON Schema, parsed."""
    schema: dict[str, Any] = json.loads(MANIFEST_SCHEMA_PATH.read_text())
    return schema


@cache
def _manifest_validator() -> jsonschema.protocols.Validator:
    schema = manifest_schema()
    validator_class = jsonschema.validators.validator_for(schema)
    return validator_class(schema)


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
        try:
            schema = args_schema(tool.get("args"))
        except ValueError as exc:
            problems.append(f"{kind}.{name}.args: {exc}")
            continue
        if schema.get("type") != "object":
            problems.append(f'{kind}.{name}.args: a full JSON Schema must have "type": "object"')
            continue
        for key, part in (("args", schema), ("returns", tool.get("returns"))):
            if part is None:
                continue
            try:
                jsonschema.validators.validator_for(part).check_schema(part)
            except jsonschema.SchemaError as exc:
                where = "/".join(str(p) for p in exc.path)
                problems.append(
                    f"{kind}.{name}.{key}: not a valid JSON Schema: {exc.message}"
                    + (f" (at {where})" if where else "")
                )


def load_manifest(site_dir: Path) -> Manifest:
    """Read and validate ``site_dir/manifest.json``.

    Raises:
        InvalidManifestError: the file is missing or not JSON, fails the manifest schema, its
            ``id`` differs from the folder name, or a tool's ``args``/``returns`` is not a valid
            JSON Schema. ``problems`` lists every problem found, one line each.
    """
    site_id = site_dir.name
    path = site_dir / "manifest.json"
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise _invalid(site_id, path, ["manifest.json is missing"]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise _invalid(site_id, path, [f"cannot read manifest.json: {exc}"]) from None
    except json.JSONDecodeError as exc:
        raise _invalid(
            site_id, path, [f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"]
        ) from None
    problems = []
    for error in sorted(_manifest_validator().iter_errors(raw), key=lambda e: list(e.path)):
        where = "/".join(str(part) for part in error.absolute_path) or "(top level)"
        problems.append(f"{where}: {error.message}")
    if isinstance(raw, dict):
        if isinstance(raw.get("id"), str) and raw["id"] != site_id:
            problems.append(f"id: {raw['id']!r} must equal the folder name {site_id!r}")
        for kind in ("browserTools", "pythonTools"):
            tools = raw.get(kind)
            if isinstance(tools, dict) and all(isinstance(t, dict) for t in tools.values()):
                _check_tool_schemas(kind, tools, problems)
    if problems:
        raise _invalid(site_id, path, problems)
    data = dict(raw)
    for kind in ("browserTools", "pythonTools"):
        data[kind] = {
            name: {**tool, "name": name, "args": args_schema(tool.get("args"))}
            for name, tool in (raw.get(kind) or {}).items()
        }
    return Manifest.model_validate(data)


def _invalid(site_id: str, path: Path, problems: list[str]) -> InvalidManifestError:
    return InvalidManifestError(
        f"site {site_id!r} is invalid ({path}): {problems[0]}"
        + (f" (+{len(problems) - 1} more)" if len(problems) > 1 else "")
        + "; fix the manifest or run `ego validate`",
        site_id=site_id,
        problems=problems,
    )
