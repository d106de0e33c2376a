"""Packs as other harnesses write them: node tools are reported, sources get one shape check.

A pack shaped like the TypeScript harness's x-com pack carries ``browserTools`` and
``nodeTools`` (Node-side, with a ``callable``); ego lists the node tools as not runnable. A
browser tool that is not a function is refused the same way by ``ego validate``, by loading
it to run, and by saving.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ego
from ego.errors import SaveRefusedError, ToolLoadError
from ego.learning.catalog.jslint import NOT_A_FUNCTION, check_source
from ego.learning.catalog.manifest import BrowserToolSpec
from ego.learning.catalog.registry import Learnings
from ego.learning.catalog.validate import validate_site
from ego.site import Site, context_for
from tests.helpers.commands import ego_env, ego_sync

PACK = {
    "id": "x-com",
    "name": "X",
    "domains": ["x.com", "*.x.com"],
    "startUrl": "https://x.com/home",
    "browserTools": {
        "get_timeline_posts": {
            "description": "Posts on the home timeline.",
            "path": "browser-tools/get_timeline_posts.js",
            "args": {"max_posts": {"type": "integer", "required": False}},
        }
    },
    "nodeTools": {
        "export_thread": {
            "description": "Open a thread and save it as markdown.",
            "path": "node-tools/export_thread.ts",
            "callable": "exportThread",
            "args": {"url": {"type": "string", "required": True}},
        },
        "scroll_and_collect": {"description": "Scroll the timeline.", "callable": "collect"},
    },
}


def write_pack(root: Path, manifest: dict[str, object], sources: dict[str, str]) -> Path:
    site = root / str(manifest["id"])
    (site / "browser-tools").mkdir(parents=True)
    (site / "manifest.json").write_text(json.dumps(manifest))
    for path, text in sources.items():
        (site / path).write_text(text)
    return site


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "learnings"
    write_pack(
        root,
        PACK,
        {"browser-tools/get_timeline_posts.js": "async ({max_posts = 5}) => [max_posts]"},
    )
    return root


def test_learn_context_lists_node_tools_as_not_runnable(root: Path) -> None:
    context = context_for(Learnings(roots=[root]), "https://x.com/home")
    kinds = {tool.tool_name: (tool.kind, tool.runnable) for tool in context.tools}
    assert kinds == {
        "get_timeline_posts": ("browser", True),
        "export_thread": ("node", False),
        "scroll_and_collect": ("node", False),
    }
    node = next(tool for tool in context.tools if tool.tool_name == "export_thread")
    assert "TypeScript harness" in node.reason
    assert "Python tool" in node.reason
    assert node.args["required"] == ["url"]
    assert node.example.startswith("# not runnable in ego")


def test_validate_warns_once_per_site_and_still_passes(root: Path, tmp_path: Path) -> None:
    found = validate_site(Learnings(roots=[root]).find("x-com"))
    assert [problem.warning for problem in found] == [True]
    assert "2 nodeTools (export_thread, scroll_and_collect)" in found[0].message

    result = ego_sync("validate", str(root), env=ego_env(tmp_path / "profiles"))
    assert result.returncode == 0, result.stderr
    report = result.json()
    assert report["ok"] is True
    assert report["problems"] == []
    assert len(report["warnings"]) == 1
    assert "warning: 2 nodeTools" in report["warnings"][0]

    listed = ego_sync("--json", "sites", env=ego_env(tmp_path / "profiles", workspace=tmp_path))
    summary = next(s for s in listed.json()["sites"] if s["site_id"] == "x-com")
    assert summary["node_tools"] == ["export_thread", "scroll_and_collect"]


NOT_FUNCTIONS = ["console.log(1)", "document.title", "42", "const x = 1;"]


@pytest.mark.parametrize("source", NOT_FUNCTIONS)
def test_a_source_that_is_not_a_function_is_refused_everywhere(tmp_path: Path, source: str) -> None:
    manifest = {**PACK, "nodeTools": {}}
    root = tmp_path / "learnings"
    write_pack(root, manifest, {"browser-tools/get_timeline_posts.js": source})
    learnings = Learnings(roots=[root])

    found = validate_site(learnings.find("x-com"))
    assert len(found) == 1
    assert not found[0].warning
    assert "browser tool get_timeline_posts: the source is not a function" in found[0].message

    entry, spec = learnings.tool("x-com", "get_timeline_posts")
    assert isinstance(spec, BrowserToolSpec)
    with pytest.raises(ToolLoadError, match="the source is not a function"):
        learnings.browser_source("x-com", spec, entry)  # what a run loads

    with pytest.raises(SaveRefusedError) as caught:
        check_source("x-com", "get_timeline_posts", source)
    assert caught.value.problems == [NOT_A_FUNCTION]


async def test_running_a_source_that_is_not_a_function_raises_tool_load_error(
    browser: ego.Browser, tmp_path: Path
) -> None:
    root = tmp_path / "learnings"
    write_pack(root, {**PACK, "nodeTools": {}}, {"browser-tools/get_timeline_posts.js": "1+1"})
    site = Site(browser, Learnings(roots=[root]))
    with pytest.raises(ToolLoadError, match="not a function"):
        await site.run_browser_tool("x-com", "get_timeline_posts", {})
