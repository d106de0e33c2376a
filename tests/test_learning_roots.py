"""Learnings roots: the workspace before the project, ``_`` folders skipped, $EGO_WORKSPACE."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import ego
from ego.errors import SaveRefusedError, UnknownSiteError
from ego.learning.catalog.manifest import MAX_SITE_ID, is_site_id, manifest_schema
from ego.learning.catalog.naming import check_site_id
from ego.learning.catalog.registry import WORKSPACE_ENV, Learnings, project_learnings_dir
from ego.learning.catalog.schemas import validator
from ego.site import Site
from tests.helpers.learnings import ECHO, make_site, tool
from tests.helpers.page_server import PageServer


def _two_roots(tmp_path: Path) -> tuple[Path, Path]:
    workspace = tmp_path / "workspace"
    project = tmp_path / "project"
    here = "async () => 'workspace'\n"
    there = "async () => 'project'\n"
    make_site(
        workspace / "learnings",
        "both",
        domains=["both.test"],
        name="From workspace",
        browser_tools={"which": tool(here)},
    )
    make_site(
        project,
        "both",
        domains=["both.test"],
        name="From project",
        browser_tools={"which": tool(there), "only_in_project": tool(there)},
    )
    make_site(workspace / "learnings", "ws-only", domains=["ws.test"])
    make_site(project, "project-only", domains=["project.test"])
    make_site(project, "_template", domains=["template.test"])
    make_site(workspace / "learnings", "_draft", domains=["draft.test"])
    make_site(project, ".hidden", domains=["hidden.test"])
    (project / "not-a-folder").write_text("ignored")
    return workspace, project


def test_workspace_is_searched_before_the_project(tmp_path: Path) -> None:
    workspace, project = _two_roots(tmp_path)
    learnings = Learnings(workspace=workspace, project=project)
    assert learnings.roots == [workspace / "learnings", project]
    assert learnings.workspace_root == workspace / "learnings"

    entry = learnings.find("both")
    assert entry.root == workspace / "learnings"
    assert entry.directory == workspace / "learnings" / "both"
    assert learnings.site("both").name == "From workspace"
    # The project's copy is shadowed as a whole, not merged.
    assert sorted(learnings.site("both").browser_tools) == ["which"]
    assert learnings.site("project-only").name == "Site project-only"
    assert learnings.site("ws-only").name == "Site ws-only"


def test_sites_lists_each_id_once_and_skips_underscore_folders(tmp_path: Path) -> None:
    workspace, project = _two_roots(tmp_path)
    learnings = Learnings(workspace=workspace, project=project)
    entries = learnings.sites()
    assert [entry.site_id for entry in entries] == ["both", "project-only", "ws-only"]
    roots = {entry.site_id: entry.root for entry in entries}
    assert roots == {
        "both": workspace / "learnings",
        "project-only": project,
        "ws-only": workspace / "learnings",
    }
    for hidden in ("_template", "_draft", ".hidden", "not-a-folder"):
        with pytest.raises(UnknownSiteError):
            learnings.find(hidden)


def test_unknown_site_lists_the_roots_searched(tmp_path: Path) -> None:
    workspace, project = _two_roots(tmp_path)
    learnings = Learnings(workspace=workspace, project=project)
    with pytest.raises(UnknownSiteError) as info:
        learnings.find("nowhere")
    message = str(info.value)
    assert "'nowhere'" in message
    assert str(workspace / "learnings") in message
    assert str(project) in message
    assert "both" in message  # the known sites help spot a typo


def test_env_var_names_the_workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    workspace, project = _two_roots(tmp_path)
    monkeypatch.setenv(WORKSPACE_ENV, str(workspace))
    learnings = Learnings(project=project)
    assert learnings.roots == [workspace / "learnings", project]
    assert learnings.site("both").name == "From workspace"

    monkeypatch.delenv(WORKSPACE_ENV)
    learnings = Learnings(project=project)
    assert learnings.roots == [project]
    assert learnings.site("both").name == "From project"
    with pytest.raises(UnknownSiteError):
        learnings.find("ws-only")


def test_an_explicit_workspace_wins_over_the_env_var(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace, project = _two_roots(tmp_path)
    monkeypatch.setenv(WORKSPACE_ENV, str(tmp_path / "elsewhere"))
    learnings = Learnings(workspace=workspace, project=project)
    assert learnings.roots[0] == workspace / "learnings"


def test_default_project_root_is_beside_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(WORKSPACE_ENV, raising=False)
    assert project_learnings_dir() == Path(ego.__file__).resolve().parent.parent / "learnings"
    assert Learnings().roots == [project_learnings_dir()]


def test_missing_roots_are_fine(tmp_path: Path) -> None:
    learnings = Learnings(roots=[tmp_path / "missing", tmp_path / "also-missing"])
    assert learnings.sites() == []
    with pytest.raises(UnknownSiteError, match="also-missing"):
        learnings.find("x")


async def test_the_workspace_tool_is_the_one_that_runs(
    tmp_path: Path,
    browser: ego.Browser,
    tab: ego.Tab,
    server: PageServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    workspace, project = _two_roots(tmp_path)
    # The site's copy served here: a tool runs only in a tab on its site.
    here = server.route("/learning-roots/both", "<p>both</p>")
    await tab.navigate(here)

    def on(site: Site) -> Site:
        site.set_start_url("both", here)
        return site

    site = on(Site(browser, Learnings(workspace=workspace, project=project)))
    assert await site.run_browser_tool("both", "which", tab=tab) == "workspace"
    summary = {s.site_id: s for s in site.sites()}["both"]
    assert summary.root == str(workspace / "learnings")
    assert summary.name == "From workspace"

    monkeypatch.setenv(WORKSPACE_ENV, str(workspace))
    from_env = on(Site(browser, Learnings(project=project)))
    assert await from_env.run_browser_tool("both", "which", tab=tab) == "workspace"
    project_only = on(Site(browser, Learnings(roots=[project])))
    assert await project_only.run_browser_tool("both", "which", tab=tab) == "project"


def test_a_site_found_once_is_looked_up_again_when_the_roots_change(tmp_path: Path) -> None:
    workspace, project = tmp_path / "workspace", tmp_path / "project"
    make_site(project, "later", domains=["later.test"], name="From project")
    learnings = Learnings(workspace=workspace, project=project)
    assert learnings.site("later").name == "From project"
    assert learnings.site("later").name == "From project"  # the quick path

    # The workspace gains the site: it shadows the project's copy from the next call on.
    make_site(workspace / "learnings", "later", domains=["later.test"], name="From workspace")
    assert learnings.find("later").root == workspace / "learnings"
    assert learnings.site("later").name == "From workspace"

    # Both copies gone: the site is unknown again, not served from memory.
    for root in (workspace / "learnings", project):
        shutil.rmtree(root / "later")
    with pytest.raises(UnknownSiteError):
        learnings.find("later")


@pytest.mark.parametrize(
    "candidate",
    ["x-com", "a.b", "a_b", "0", "a" * 100, "a" * 101, "X-com", "-a", "a\n", "a b", "\u00fc"],
    ids=repr,
)
def test_the_site_id_rule_is_the_manifest_schemas_wherever_it_applies(
    tmp_path: Path, candidate: str
) -> None:
    """One rule, written in manifest.schema.json: a manifest's id, a folder taken for a site,
    and a save's site id all follow it."""
    allowed = validator(manifest_schema()["properties"]["id"]).is_valid(candidate)
    assert is_site_id(candidate) == allowed
    if allowed:
        check_site_id(candidate)
    else:
        with pytest.raises(SaveRefusedError, match=f"at most {MAX_SITE_ID} characters"):
            check_site_id(candidate)
    make_site(tmp_path, candidate, domains=["x.test"], browser_tools={"t": tool(ECHO)})
    learnings = Learnings(roots=[tmp_path])
    if allowed:
        assert learnings.find(candidate).valid
    else:
        with pytest.raises(UnknownSiteError):
            learnings.find(candidate)
