"""SKILL.md skills without a browser: format, validation, catalog, learn_context, export/import.

The helpers here (:func:`write_skill`, :func:`skill_text`) are shared with
``test_skills_browser.py``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, cast

import jsonschema
import pytest

from ego.errors import (
    ConfirmationRequiredError,
    InvalidArgsError,
    InvalidSkillError,
    MissingCapabilityError,
    SkillExistsError,
    UnknownSkillError,
)
from ego.learning import Learnings
from ego.site import Site
from ego.skills import (
    CAPABILITIES,
    SKILL_SCHEMA_PATH,
    catalog_for,
    export_skill,
    import_skill,
    load_skill,
    parse_document,
    skill_url,
    skills_roots,
)
from ego.skills.catalog import SkillCatalog
from ego.skills.portable import extractor_block
from tests.helpers.skills import ECHO, SECTIONS_TEXT, blocks, problems_of, skill_text, write_skill

ROOT = Path(__file__).resolve().parent.parent
PROJECT_SKILLS = ROOT / "skills"


# -- the format ---------------------------------------------------------------------------------


def test_schema_file_is_a_valid_json_schema() -> None:
    schema = json.loads(SKILL_SCHEMA_PATH.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["properties"]["needs"]["items"]["enum"] == list(CAPABILITIES)
    assert set(schema["required"]) >= {"name", "site", "needs", "side_effect", "auth", "params"}


def test_shipped_skills_are_valid() -> None:
    catalog = SkillCatalog([PROJECT_SKILLS])
    entries = {entry.skill_id: entry for entry in catalog.entries()}
    assert {
        "shop.localhost/search-products",
        "shop.localhost/get-orders",
        "shop.localhost/post-review",
    } <= set(entries)
    for entry in entries.values():
        assert entry.valid, (entry.skill_id, entry.problems)
    orders = entries["shop.localhost/get-orders"].require()
    assert (orders.auth, orders.side_effect) == ("session", "read")
    assert orders.url == "http://shop.localhost:8765/account"
    review = entries["shop.localhost/post-review"].require()
    assert review.side_effect == "irreversible"
    search = entries["shop.localhost/search-products"].require()
    assert search.auth == "none"
    assert search.key == "ego:skill:shop.localhost/search-products"


def test_a_valid_skill_loads_with_compact_params(tmp_path: Path) -> None:
    skill = load_skill(write_skill(tmp_path))
    assert skill.id == "shop.localhost/echo"
    assert skill.params == {
        "type": "object",
        "properties": {"q": {"type": "string", "examples": ["desk"]}},
        "additionalProperties": False,
        "required": ["q"],
    }
    assert skill.url == "https://shop.localhost/"  # the default url
    assert skill.version == "1"
    assert re.fullmatch(r"[0-9a-f]{16}", skill.version_hash)
    assert skill.section("success ASSERTION") == "`returns` holds."


def test_version_hash_follows_the_extractor(tmp_path: Path) -> None:
    folder = write_skill(tmp_path)
    before = load_skill(folder).version_hash
    assert load_skill(folder).version_hash == before
    (folder / "evaluate.js").write_text(ECHO.replace("title", "heading"))
    assert load_skill(folder).version_hash != before


def test_unknown_capability_is_rejected(tmp_path: Path) -> None:
    problems = problems_of(write_skill(tmp_path, needs=["navigate", "evaluate", "teleport"]))
    assert problems == [
        "needs: 'teleport' is not a capability; use navigate, evaluate, snapshot, click, type, "
        "network"
    ]


def test_needs_must_hold_evaluate(tmp_path: Path) -> None:
    problems = problems_of(write_skill(tmp_path, needs=["navigate"]))
    assert problems == ["needs: must include evaluate (the extractor runs through it)"]


def test_bad_name_and_folder_mismatches(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "shop.localhost", "echo", name="Echo_Tool", site="other.test")
    problems = problems_of(folder)
    assert any(p.startswith("name: 'Echo_Tool' is not kebab-case") for p in problems)
    assert "name: 'Echo_Tool' must equal the skill's folder name 'echo'" in problems
    assert "site: 'other.test' must equal the domain folder name 'shop.localhost'" in problems
    assert len(problems) == 3


def test_missing_sections_are_each_reported(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, drop_sections=("Errors", "Success assertion"))
    assert problems_of(folder) == [
        "missing section: ## Success assertion",
        "missing section: ## Errors",
    ]


def test_a_heading_inside_a_code_fence_is_not_a_section(tmp_path: Path) -> None:
    text = skill_text(drop_sections=("Errors",), extra_sections={"Execute": "```\n## Errors\n```"})
    assert problems_of(write_skill(tmp_path, text=text)) == ["missing section: ## Errors"]


def test_missing_and_empty_extractor(tmp_path: Path) -> None:
    assert problems_of(write_skill(tmp_path, task="a", source=None)) == ["evaluate.js is missing"]
    assert problems_of(write_skill(tmp_path, task="b", source="  \n")) == ["evaluate.js is empty"]


def test_extractor_symlinked_outside_the_folder_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "secret.js"
    outside.write_text(ECHO)
    folder = write_skill(tmp_path / "root", source=None)
    os.symlink(outside, folder / "evaluate.js")
    problems = problems_of(folder)
    assert len(problems) == 1
    assert problems[0].startswith("evaluate.js: unsafe path:")
    assert "outside the site folder" in problems[0]


def test_frontmatter_problems_one_line_each(tmp_path: Path) -> None:
    folder = write_skill(
        tmp_path, auth="session", side_effect="sometimes", description=None, url=None
    )
    problems = problems_of(folder)
    assert "url: required with auth: session (the page that holds the session)" in problems
    assert 'frontmatter: "description" is a required property' in problems
    assert any(p.startswith('side_effect: "sometimes" is not one of') for p in problems)
    assert all("\n" not in p for p in problems)


def test_url_must_be_on_the_site(tmp_path: Path) -> None:
    problems = problems_of(write_skill(tmp_path, url="https://evil.test/"))
    assert problems == ["url: 'https://evil.test/' is not on shop.localhost (or a subdomain of it)"]


def test_params_and_returns_must_be_schemas(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, params={"q": "string"}, returns={"type": "nonsense"})
    problems = problems_of(folder)
    assert problems[0] == 'params: arg \'q\' must be an object like {"type": "string"}'
    assert problems[1].startswith("returns: not a valid JSON Schema")


def test_no_frontmatter_and_bad_yaml(tmp_path: Path) -> None:
    bare = write_skill(tmp_path, task="bare", text="## Preconditions\nnone\n")
    problems = problems_of(bare)
    assert problems[0] == "no YAML frontmatter: SKILL.md must start with ---"
    assert 'frontmatter: "name" is a required property' not in problems
    broken = write_skill(tmp_path, task="broken", text="---\nname: [unclosed\n---\n## X\n")
    assert problems_of(broken)[0].startswith("frontmatter: not valid YAML:")
    listed = write_skill(tmp_path, task="listed", text="---\n- a\n---\n## X\n")
    assert problems_of(listed)[0] == "frontmatter: must be a mapping of fields, not a list"


def test_parse_document_keeps_sections_in_order() -> None:
    doc = parse_document(skill_text(extra_sections={"Notes": "free text"}))
    assert [title for title, _ in doc.sections] == [*SECTIONS_TEXT, "Notes"]
    assert doc.metadata["name"] == "echo"
    assert doc.problems == []


# -- the catalog --------------------------------------------------------------------------------


def test_roots_come_from_the_learnings_roots(tmp_path: Path) -> None:
    learnings = Learnings(roots=[tmp_path / "ws" / "learnings", tmp_path / "proj" / "learnings"])
    assert skills_roots(learnings) == [tmp_path / "ws" / "skills", tmp_path / "proj" / "skills"]
    default = Learnings(workspace=tmp_path / "ws")
    assert skills_roots(default) == [tmp_path / "ws" / "skills", PROJECT_SKILLS]


def test_workspace_shadows_project_and_underscore_folders_are_skipped(tmp_path: Path) -> None:
    write_skill(tmp_path / "proj" / "skills", task="echo", description="from the project")
    write_skill(tmp_path / "proj" / "skills", task="other")
    write_skill(tmp_path / "ws" / "skills", task="echo", description="from the workspace")
    write_skill(tmp_path / "ws" / "skills", task="_draft")
    write_skill(tmp_path / "ws" / "skills", "_parked.test", task="echo", site="parked.test")
    learnings = Learnings(roots=[tmp_path / "ws" / "learnings", tmp_path / "proj" / "learnings"])
    catalog = catalog_for(learnings)
    assert [e.skill_id for e in catalog.entries()] == [
        "shop.localhost/echo",
        "shop.localhost/other",
    ]
    assert catalog.skill("shop.localhost/echo").description == "from the workspace"
    assert catalog.find("shop.localhost/other").root == tmp_path / "proj" / "skills"
    with pytest.raises(UnknownSkillError, match=re.escape("known skills: shop.localhost/echo")):
        catalog.find("shop.localhost/_draft")


def test_a_broken_skill_is_reported_while_the_others_work(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, task="good")
    write_skill(root, task="bad-name", name="Bad_Name", drop_sections=("Errors",))
    site = Site(cast(Any, None), Learnings(roots=[tmp_path / "learnings"]))
    summaries = {s.skill_id: s for s in site.skills()}
    assert summaries["shop.localhost/good"].valid
    bad = summaries["shop.localhost/bad-name"]
    assert not bad.valid
    assert "missing section: ## Errors" in bad.problems
    assert any("not kebab-case" in p for p in bad.problems)
    catalog = catalog_for(site.learnings)
    assert catalog.skill("shop.localhost/good").name == "good"
    with pytest.raises(InvalidSkillError) as info:
        catalog.skill("shop.localhost/bad-name")
    assert info.value.skill_id == "shop.localhost/bad-name"


def test_ids_are_checked_before_the_disk(tmp_path: Path) -> None:
    write_skill(tmp_path / "skills", task="echo")
    catalog = SkillCatalog([tmp_path / "skills"])
    for bad in ("../shop.localhost/echo", "shop.localhost/../x", "shop.localhost", "a/b/c", ""):
        with pytest.raises(UnknownSkillError):
            catalog.find(bad)


def test_catalog_rereads_changed_files(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "skills", task="echo")
    catalog = SkillCatalog([tmp_path / "skills"])
    assert catalog.find("shop.localhost/echo").valid
    (folder / "evaluate.js").write_text("")
    assert catalog.find("shop.localhost/echo").problems == ["evaluate.js is empty"]


# -- learn_context ------------------------------------------------------------------------------


async def test_learn_context_lists_skills_of_the_host(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, task="echo")
    write_skill(root, task="post-it", side_effect="irreversible")
    write_skill(root, "other.test", task="echo", site="other.test")
    site = Site(cast(Any, None), Learnings(roots=[tmp_path / "learnings"]))
    context = await site.learn_context("http://shop.localhost:5000/account", detail="full")
    assert context.matched
    assert [(t.site_id, t.tool_name) for t in context.skills] == [
        ("shop.localhost", "echo"),
        ("shop.localhost", "post-it"),
    ]
    echo = context.skills[0]
    assert echo.kind == "skill"
    assert echo.example == "await site.run_skill(\"shop.localhost/echo\", {'q': 'desk'})"
    assert context.skills[1].example.endswith(", confirm=True)")
    assert context.tools[-2:] == context.skills
    sub = await site.learn_context("https://eu.shop.localhost/", detail="full")
    assert [t.tool_name for t in sub.skills] == ["echo", "post-it"]
    other = await site.learn_context("https://notshop.localhost/", detail="full")
    assert other.skills == []
    assert not other.matched


# -- running: the checks that send nothing ------------------------------------------------------


def no_browser_site(tmp_path: Path) -> Site:
    """A Site whose browser is None: any attempt to use it fails loudly."""
    return Site(cast(Any, None), Learnings(roots=[tmp_path / "learnings"]))


async def test_bad_params_are_refused_before_anything_is_sent(tmp_path: Path) -> None:
    write_skill(tmp_path / "skills", task="echo")
    site = no_browser_site(tmp_path)
    with pytest.raises(InvalidArgsError) as info:
        await site.run_skill("shop.localhost/echo", {"q": 3})
    assert info.value.field == "q"
    with pytest.raises(InvalidArgsError) as info:
        await site.run_skill("shop.localhost/echo", {})
    assert info.value.field == "q"
    with pytest.raises(InvalidArgsError) as info:
        await site.run_skill("shop.localhost/echo", {"q": "x", "extra": 1})
    assert info.value.field == "extra"


async def test_params_that_are_not_json_are_refused_before_anything_is_sent(
    tmp_path: Path,
) -> None:
    """A key that is not a string (named, with where it is), NaN, a set or a nesting past the
    limit is InvalidArgsError, as for a tool's args, even where the schema lets it through."""
    # ``r`` is checked level by level: jsonschema recurses past Python's limit on ``deep``.
    nested = {"anyOf": [{"type": "integer"}, {"type": "array", "items": {"$ref": "#/$defs/n"}}]}
    params = {"type": "object", "properties": {"r": {"$ref": "#/$defs/n"}}, "$defs": {"n": nested}}
    write_skill(tmp_path / "skills", task="free", params=params)
    site = no_browser_site(tmp_path)
    deep: Any = 1
    for _ in range(10_000):
        deep = [deep]
    for params, expected, field in (
        ({"q": "x", 1: "y"}, "params key 1 (int) is not a string", "(params)"),
        ({"q": {"a": [{2: 3}]}}, "params key 2 (int) in 'q/a/0' is not a string", "q/a/0"),
        ({"q": float("nan")}, "params are not JSON: not a JSON value: NaN", "(params)"),
        ({"q": {1, 2}}, "params are not JSON", "(params)"),
        ({"q": deep}, "params are not JSON: nested 10001 levels deep", "(params)"),
        ({"r": deep}, "params could not be checked against the schema", "(params)"),
    ):
        with pytest.raises(InvalidArgsError) as info:
            await site.run_skill("shop.localhost/free", params)
        assert expected in str(info.value)
        assert str(info.value).endswith("nothing was sent to the browser")
        assert info.value.field == field
    with pytest.raises(InvalidArgsError, match="params key 1 "):
        export_skill("shop.localhost/free", learnings=site.learnings, params={1: "x"})


async def test_a_missing_capability_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ego.page.records import TabRecords

    # The tab's network() is its records' (a base of Tab): without it no tab offers it.
    monkeypatch.delattr(TabRecords, "network")
    write_skill(tmp_path / "skills", task="echo", needs=["navigate", "evaluate", "network"])
    site = no_browser_site(tmp_path)
    with pytest.raises(MissingCapabilityError) as info:
        await site.run_skill("shop.localhost/echo", {"q": "x"})
    assert info.value.capability == "network"
    assert info.value.missing == ["network"]
    assert "needs network" in str(info.value)


async def test_irreversible_needs_confirm(tmp_path: Path) -> None:
    write_skill(tmp_path / "skills", task="post-it", side_effect="irreversible")
    site = no_browser_site(tmp_path)
    with pytest.raises(ConfirmationRequiredError, match="confirm=True"):
        await site.run_skill("shop.localhost/post-it", {"q": "x"})


async def test_unknown_and_invalid_skills_refuse_to_run(tmp_path: Path) -> None:
    write_skill(tmp_path / "skills", task="broken", source="")
    site = no_browser_site(tmp_path)
    with pytest.raises(UnknownSkillError, match=re.escape("known skills: shop.localhost/broken")):
        await site.run_skill("shop.localhost/nope")
    with pytest.raises(InvalidSkillError, match=re.escape("evaluate.js is empty")):
        await site.run_skill("shop.localhost/broken")


def test_start_url_override_keeps_the_path(tmp_path: Path) -> None:
    folder = write_skill(
        tmp_path, auth="session", url="http://shop.localhost:8765/account?tab=orders"
    )
    skill = load_skill(folder)
    assert skill_url(skill) == "http://shop.localhost:8765/account?tab=orders"
    assert (
        skill_url(skill, "http://shop.localhost:5123/")
        == "http://shop.localhost:5123/account?tab=orders"
    )


# -- export and import --------------------------------------------------------------------------


def test_export_of_a_skill_holds_extractor_call_and_store(tmp_path: Path) -> None:
    write_skill(tmp_path / "skills", task="echo")
    learnings = Learnings(roots=[tmp_path / "learnings"])
    skill = catalog_for(learnings).skill("shop.localhost/echo")
    text = export_skill("shop.localhost/echo", learnings=learnings, params={"q": "lamp"})
    doc = parse_document(text)
    assert doc.problems == []
    assert doc.metadata["name"] == "echo"
    assert [t for t, _ in doc.sections] == [*SECTIONS_TEXT, "Call", "Store"]
    assert blocks(text, "Extractor") == [ECHO.rstrip("\n")]
    (call,) = blocks(text, "Call")
    (store,) = blocks(text, "Store")
    assert f'"{skill.key}"' in call
    assert f'"{skill.version_hash}"' in call
    assert call.endswith('document, {"q":"lamp"})})()')
    assert f'"{skill.version_hash}"' in store
    assert "'stored'" in store
    with pytest.raises(InvalidArgsError):
        export_skill("shop.localhost/echo", learnings=learnings, params={"q": 1})
    default = export_skill("shop.localhost/echo", learnings=learnings)
    assert '{"q":"desk"}' in blocks(default, "Call")[0]  # the schema's example


def test_export_of_a_browser_tool(tmp_path: Path) -> None:
    text = export_skill("demo-shop/get_orders", learnings=Learnings(workspace=tmp_path))
    doc = parse_document(text)
    meta = doc.metadata
    assert (meta["name"], meta["site"], meta["auth"]) == ("get-orders", "shop.localhost", "session")
    assert meta["needs"] == ["navigate", "evaluate"]
    assert meta["url"] == "http://shop.localhost:8765/"
    (source,) = blocks(text, "Extractor")
    assert source.startswith("async (root, params) => (async function (args) {")
    assert source.endswith(")(params)")
    assert "ego:skill:shop.localhost/get-orders" in blocks(text, "Call")[0]
    with pytest.raises(UnknownSkillError, match="neither a skill nor a browser tool"):
        export_skill("demo-shop/no_such_tool", learnings=Learnings(workspace=tmp_path))


def test_import_round_trip_keeps_source_and_version(tmp_path: Path) -> None:
    tricky = "async (root, params) => {\n  const s = `a ``` b`;\n  return { s, params };\n}\n"
    write_skill(tmp_path / "proj" / "skills", task="echo", source=tricky)
    learnings = Learnings(roots=[tmp_path / "proj" / "learnings"])
    original = catalog_for(learnings).skill("shop.localhost/echo")
    exported = tmp_path / "echo.SKILL.md"
    exported.write_text(export_skill("shop.localhost/echo", learnings=learnings))
    assert "````js" in exported.read_text()  # a fence longer than the ``` in the source

    folder = import_skill(exported, tmp_path / "ws")
    assert folder == tmp_path / "ws" / "skills" / "shop.localhost" / "echo"
    assert (folder / "evaluate.js").read_text() == tricky
    imported = load_skill(folder)
    assert imported.version_hash == original.version_hash
    assert imported.params == original.params
    written = (folder / "SKILL.md").read_text()
    assert "## Call" not in written
    assert "## Store" not in written
    assert "```" not in written.split("## Extractor", 1)[1].split("##", 1)[0]
    # A re-export of the imported skill carries the same snippets.
    again = export_skill(
        "shop.localhost/echo", learnings=Learnings(roots=[tmp_path / "ws" / "learnings"])
    )
    assert blocks(again, "Call") == blocks(exported.read_text(), "Call")
    assert blocks(again, "Store") == blocks(exported.read_text(), "Store")


def test_import_refuses_to_overwrite_unless_asked(tmp_path: Path) -> None:
    write_skill(tmp_path / "proj" / "skills", task="echo")
    learnings = Learnings(roots=[tmp_path / "proj" / "learnings"])
    exported = tmp_path / "SKILL.md"
    exported.write_text(export_skill("shop.localhost/echo", learnings=learnings))
    folder = import_skill(exported, tmp_path / "ws")
    (folder / "evaluate.js").write_text("async (root, params) => 'edited'\n")
    with pytest.raises(SkillExistsError, match="overwrite=True"):
        import_skill(exported, tmp_path / "ws")
    assert (folder / "evaluate.js").read_text() == "async (root, params) => 'edited'\n"
    assert import_skill(exported, tmp_path / "ws", overwrite=True) == folder
    assert (folder / "evaluate.js").read_text() == ECHO
    assert sorted(p.name for p in folder.parent.iterdir()) == ["echo"]  # no staging left


def test_import_validates_before_writing(tmp_path: Path) -> None:
    no_block = tmp_path / "a.md"
    no_block.write_text(skill_text())
    with pytest.raises(InvalidSkillError) as info:
        import_skill(no_block, tmp_path / "ws")
    assert info.value.problems == ["the ```js block under ## Extractor is missing"]
    bad = tmp_path / "b.md"
    bad.write_text(
        skill_text(
            name="../../escape",
            needs=["evaluate", "teleport"],
            extra_sections={"Extractor": "```js\nasync (root, params) => 1\n```"},
        )
    )
    with pytest.raises(InvalidSkillError) as info:
        import_skill(bad, tmp_path / "ws")
    assert any("not kebab-case" in p for p in info.value.problems)
    assert any("'teleport' is not a capability" in p for p in info.value.problems)
    assert not (tmp_path / "ws").exists()


def test_extractor_block_picks_the_js_block() -> None:
    section = "prose\n\n```text\nnot this\n```\n\n```javascript\nasync () => 1\n```\n"
    assert extractor_block(section) == "async () => 1\n"
    assert extractor_block("```js\nnever closed\n") is None
