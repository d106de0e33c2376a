"""Manifests: both args formats, the shipped JSON Schema, the pydantic models."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import ego
from ego.errors import InvalidArgsError, InvalidManifestError
from ego.learning.catalog import manifest as manifest_module
from ego.learning.catalog.manifest import (
    MANIFEST_SCHEMA_PATH,
    BrowserToolSpec,
    Manifest,
    PythonToolSpec,
    args_schema,
    load_manifest,
    manifest_schema,
)
from ego.learning.catalog.registry import Learnings
from ego.learning.catalog.schemas import worded
from ego.site import Site
from tests.helpers.learnings import ECHO, make_site, tool, write_manifest
from tests.helpers.page_server import PageServer

COMPACT_ARGS = {
    "query": {"type": "string", "required": True, "description": "what to look for"},
    "limit": {"type": "integer", "minimum": 1, "default": 10, "description": "at most"},
    "sort": {"type": "string", "enum": ["new", "top"]},
}

FULL_ARGS = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1},
        "filters": {
            "type": "object",
            "properties": {"tags": {"type": "array", "items": {"type": "string"}}},
            "additionalProperties": False,
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}


def _base(**extra: Any) -> dict[str, Any]:
    return {"id": "site", "name": "Site", "domains": ["site.test"], **extra}


def _problems(tmp_path: Path, manifest: Any) -> list[str]:
    site_dir = tmp_path / "site"
    write_manifest(site_dir, manifest)
    with pytest.raises(InvalidManifestError) as info:
        load_manifest(site_dir)
    assert info.value.site_id == "site"
    assert "'site'" in str(info.value)
    assert str(site_dir / "manifest.json") in str(info.value)
    return info.value.problems


def _schema_messages(manifest: Any) -> set[str]:
    schema = json.loads(MANIFEST_SCHEMA_PATH.read_text())
    validator = jsonschema.Draft202012Validator(schema)
    return {worded(error) for error in validator.iter_errors(manifest)}


# --- the shipped schema file ------------------------------------------------------------------


def test_schema_file_is_shipped_in_the_package_and_is_a_valid_schema() -> None:
    assert MANIFEST_SCHEMA_PATH.name == "manifest.schema.json"
    assert MANIFEST_SCHEMA_PATH.parent == Path(ego.__file__).parent / "learning" / "catalog"
    schema = json.loads(MANIFEST_SCHEMA_PATH.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    assert manifest_schema() == schema
    assert set(schema["required"]) == {"id", "name", "domains"}


@pytest.mark.parametrize(
    ("manifest", "needle"),
    [
        pytest.param(
            {"id": "site", "name": "Site"}, '"domains" is a required property', id="no-domains"
        ),
        pytest.param(_base(domains=[]), "domains", id="empty-domains"),
        pytest.param(_base(domains=["https://site.test/"]), "domains/0", id="url-as-domain"),
        pytest.param(
            _base(browserTools={"echo": {"description": "no path"}}),
            '"path" is a required property',
            id="tool-without-path",
        ),
        pytest.param(
            _base(pythonTools={"calc": {"description": "no path"}}),
            "pythonTools/calc",
            id="python-tool-without-path",
        ),
        pytest.param(
            _base(browserTools={"post": {"path": "browser-tools/post.js", "sideEffect": "maybe"}}),
            "browserTools/post/sideEffect",
            id="bad-side-effect",
        ),
        pytest.param(
            _base(browserTools={"bad-name": {"path": "browser-tools/x.js"}}),
            "bad-name",
            id="bad-tool-name",
        ),
        pytest.param(_base(startUrl="ftp://site.test/"), "startUrl", id="bad-start-url"),
        pytest.param(_base(name=""), "name", id="empty-name"),
        pytest.param(["not", "an", "object"], 'not of type "object"', id="not-an-object"),
    ],
)
def test_schema_rejects_a_bad_manifest(tmp_path: Path, manifest: Any, needle: str) -> None:
    problems = _problems(tmp_path, manifest)
    assert any(needle in problem for problem in problems), problems
    # Each problem is the shipped schema's own verdict, with where it happened.
    messages = _schema_messages(manifest)
    assert messages
    assert all(any(problem.endswith(message) for problem in problems) for message in messages)


def test_bad_side_effect_names_the_allowed_values(tmp_path: Path) -> None:
    manifest = _base(browserTools={"post": {"path": "browser-tools/post.js", "sideEffect": "x"}})
    (problem,) = _problems(tmp_path, manifest)
    assert problem.startswith("browserTools/post/sideEffect:")
    assert '["read", "write", "irreversible"]' in problem


def test_every_problem_is_reported(tmp_path: Path) -> None:
    manifest = {"id": "site", "browserTools": {"a": {}}, "domains": 3}
    problems = _problems(tmp_path, manifest)
    text = "\n".join(problems)
    assert '"name" is a required property' in text
    assert 'domains: 3 is not of type "array"' in text
    assert '"path" is a required property' in text
    assert len(problems) == 3


def test_validation_comes_from_the_schema_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Edit a copy of the shipped schema: load_manifest follows the copy, so the file rules."""
    site_dir = tmp_path / "site"
    write_manifest(site_dir, _base())
    assert load_manifest(site_dir).id == "site"

    stricter = json.loads(MANIFEST_SCHEMA_PATH.read_text())
    stricter["required"].append("mustHaveThis")
    copy = tmp_path / "stricter.schema.json"
    copy.write_text(json.dumps(stricter))
    monkeypatch.setattr(manifest_module, "MANIFEST_SCHEMA_PATH", copy)
    manifest_module.manifest_schema.cache_clear()
    manifest_module._manifest_validator.cache_clear()
    try:
        with pytest.raises(InvalidManifestError, match='"mustHaveThis" is a required property'):
            load_manifest(site_dir)
    finally:
        monkeypatch.undo()
        manifest_module.manifest_schema.cache_clear()
        manifest_module._manifest_validator.cache_clear()
    assert load_manifest(site_dir).id == "site"


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('{"id": "site", "name": "Site", "domains": ["a.test"],}', "not JSON"),
        ("", "not JSON"),
        ("\xff\xfe", "not JSON"),
    ],
)
def test_unparseable_manifest(tmp_path: Path, text: str, needle: str) -> None:
    problems = _problems(tmp_path, text)
    assert needle in problems[0]
    assert "line 1" in problems[0]


def test_missing_manifest(tmp_path: Path) -> None:
    (tmp_path / "site").mkdir()
    with pytest.raises(InvalidManifestError) as info:
        load_manifest(tmp_path / "site")
    assert info.value.problems == ["manifest.json is missing"]


def test_id_must_equal_the_folder(tmp_path: Path) -> None:
    problems = _problems(tmp_path, {**_base(), "id": "other"})
    assert problems == ["id: 'other' must equal the folder name 'site'"]


def test_args_that_are_not_a_schema_are_refused(tmp_path: Path) -> None:
    problems = _problems(
        tmp_path,
        _base(
            browserTools={
                "a": {"path": "a.js", "args": {"q": "string"}},
                "b": {"path": "b.js", "args": {"type": "array"}},
                "c": {"path": "c.js", "args": {"type": "object", "properties": 3}},
                "d": {"path": "d.js", "returns": {"type": "no-such-type"}},
            }
        ),
    )
    text = "\n".join(problems)
    assert "browserTools.a.args" in text
    assert "browserTools.b.args" in text
    assert "browserTools.c.args: not a valid JSON Schema" in text
    assert "browserTools.d.returns: not a valid JSON Schema" in text


# --- the pydantic models ----------------------------------------------------------------------


def test_models_expose_the_fields(tmp_path: Path) -> None:
    site_dir = make_site(
        tmp_path,
        "shop",
        name="The Shop",
        description="A shop for tests",
        version=3,
        domains=["shop.test", "*.shop.test:8443"],
        start_url="https://shop.test/",
        browser_tools={
            "search": tool(
                ECHO,
                description="Search the shop",
                args=COMPACT_ARGS,
                returns={"type": "object"},
                timeout=5,
                auth="session",
            ),
            "buy": tool(ECHO, "browser-tools/nested/buy.js", sideEffect="irreversible"),
        },
        python_tools={"report": tool("def run(ctx, args):\n    return 1\n", args=FULL_ARGS)},
        notes={"notes/shop.md": "# Shop\n"},
        owner="someone",
    )
    manifest = load_manifest(site_dir)
    assert isinstance(manifest, Manifest)
    assert manifest.id == "shop"
    assert manifest.name == "The Shop"
    assert manifest.description == "A shop for tests"
    assert manifest.version == 3
    assert manifest.domains == ("shop.test", "*.shop.test:8443")
    assert manifest.start_url == "https://shop.test/"
    assert manifest.notes == ("notes/shop.md",)
    assert manifest.model_extra == {"owner": "someone"}

    search = manifest.browser_tools["search"]
    assert isinstance(search, BrowserToolSpec)
    assert search.kind == "browser"
    assert search.name == "search"
    assert search.path == "browser-tools/search.js"
    assert search.description == "Search the shop"
    assert search.returns == {"type": "object"}
    assert search.side_effect == "read"
    assert search.auth == "session"
    assert search.timeout == 5
    assert search.args["type"] == "object"

    buy = manifest.browser_tools["buy"]
    assert buy.path == "browser-tools/nested/buy.js"
    assert buy.side_effect == "irreversible"
    assert buy.args == {"type": "object", "properties": {}, "additionalProperties": False}
    assert buy.returns is None

    report = manifest.python_tools["report"]
    assert isinstance(report, PythonToolSpec)
    assert report.kind == "python"
    assert report.args == FULL_ARGS
    assert manifest.model_dump(by_alias=True)["browserTools"]["buy"]["sideEffect"] == "irreversible"


def test_models_are_frozen(tmp_path: Path) -> None:
    manifest = load_manifest(make_site(tmp_path, "shop", domains=["shop.test"]))
    with pytest.raises(ValueError, match="frozen"):
        manifest.name = "changed"


def test_compact_args_become_a_full_schema() -> None:
    schema = args_schema(COMPACT_ARGS)
    assert schema == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "what to look for"},
            "limit": {"type": "integer", "minimum": 1, "default": 10, "description": "at most"},
            "sort": {"type": "string", "enum": ["new", "top"]},
        },
        "additionalProperties": False,
        "required": ["query"],
    }
    jsonschema.Draft202012Validator.check_schema(schema)
    assert args_schema(FULL_ARGS) is FULL_ARGS
    assert (
        args_schema(None)
        == args_schema({})
        == {
            "type": "object",
            "properties": {},
            "additionalProperties": False,
        }
    )
    with pytest.raises(ValueError, match="'q'"):
        args_schema({"q": "string"})


# --- both args formats, end to end ------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({}, "query"),
        ({"query": 3}, "query"),
        ({"query": "x", "limit": 0}, "limit"),
        ({"query": "x", "limit": "ten"}, "limit"),
        ({"query": "x", "sort": "old"}, "sort"),
        ({"query": "x", "unknown": 1}, "unknown"),
    ],
)
def test_compact_args_are_validated(tmp_path: Path, args: dict[str, Any], field: str) -> None:
    make_site(
        tmp_path,
        "shop",
        domains=["shop.test"],
        browser_tools={"search": tool(ECHO, args=COMPACT_ARGS)},
    )
    learnings = Learnings(roots=[tmp_path])
    _, spec = learnings.tool("shop", "search")
    with pytest.raises(InvalidArgsError) as info:
        learnings.check_args("shop", spec, args)
    assert info.value.field == field
    assert repr(field) in str(info.value)


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({}, "query"),
        ({"query": ""}, "query"),
        ({"query": "x", "filters": {"tags": ["a", 2]}}, "filters/tags/1"),
        ({"query": "x", "filters": {"colour": "red"}}, "filters/colour"),
        ({"query": "x", "other": True}, "other"),
    ],
)
def test_full_schema_args_are_validated(tmp_path: Path, args: dict[str, Any], field: str) -> None:
    make_site(
        tmp_path,
        "shop",
        domains=["shop.test"],
        browser_tools={"search": tool(ECHO, args=FULL_ARGS)},
    )
    learnings = Learnings(roots=[tmp_path])
    _, spec = learnings.tool("shop", "search")
    with pytest.raises(InvalidArgsError) as info:
        learnings.check_args("shop", spec, args)
    assert info.value.field == field


async def test_both_args_formats_run_in_the_browser(
    tmp_path: Path, browser: ego.Browser, tab: ego.Tab, server: PageServer
) -> None:
    make_site(
        tmp_path,
        "shop",
        domains=["127.0.0.1"],  # the page the tab shows: a tool runs on its own site
        browser_tools={
            "compact": tool(ECHO, args=COMPACT_ARGS),
            "full": tool(ECHO, args=FULL_ARGS),
        },
    )
    site = Site(browser, Learnings(roots=[tmp_path]))
    await tab.navigate(server.route("/learning-manifest", "<p>page</p>"))
    compact = {"query": "shoes", "limit": 3, "sort": "top"}
    full = {"query": "shoes", "filters": {"tags": ["red", "blue"]}}
    assert await site.run_browser_tool("shop", "compact", compact, tab=tab) == compact
    assert await site.run_browser_tool("shop", "full", full, tab=tab) == full
    # the optional args may be left out; None means no args
    assert await site.run_browser_tool("shop", "compact", {"query": "q"}, tab=tab) == {"query": "q"}
    with pytest.raises(InvalidArgsError):
        await site.run_browser_tool("shop", "compact", None, tab=tab)


def test_the_validators_kept_for_schemas_are_bounded_and_still_check() -> None:
    # Each reload of a manifest brings new schema objects; a server whose manifests are
    # edited all day must not keep a validator (and its schema) for every one it ever saw.
    from ego.learning.catalog.args import ArgsChecker
    from ego.learning.catalog.manifest import BrowserToolSpec

    checker = ArgsChecker()
    limit = ArgsChecker.VALIDATORS_KEPT
    for number in range(limit + 5):
        spec = BrowserToolSpec(
            name="t",
            path="tools/t.js",
            args={"type": "object", "properties": {"n": {"type": "integer", "maximum": number}}},
        )
        assert checker.check_args("s", spec, {"n": number}) == {"n": number}
        with pytest.raises(InvalidArgsError, match="bad args at 'n'"):
            checker.check_args("s", spec, {"n": number + 1})
        assert len(checker._validators) <= limit
    assert len(checker._validators) == 5
