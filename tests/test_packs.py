"""Learning packs as a user meets them: sites of a workspace built into wheels, installed with
pip into a fresh venv, then listed, searched, verified and run there from another folder; a
file changed in the installed pack makes only its site invalid; the shadowing order holds.

The module builds two packs once (``alpha-tools`` 1.0 with the CLI, ``beta-tools`` 2.0 with
the Python API) and installs them, with ego's own wheel (built once per session:
tests/wheel_fixture.py), into one venv outside the checkout, as tests/test_packaging.py does.
Both packs hold a site ``packsite`` (alpha's is used: packs are searched by name), alpha holds
a ``wikipedia`` that shadows the bundled one, and beta a ``shared-ws`` that the workspace of
the runs shadows.
"""

from __future__ import annotations

import json
import shutil
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp.client.stdio import StdioServerParameters

from ego.errors import PackBuildError, PackIntegrityError
from ego.learning.catalog.pack_build import build_pack
from ego.learning.catalog.packs import installed_packs
from ego.learning.catalog.registry import Learnings
from ego.replay.har import Har, build_entry
from tests.helpers.commands import Result, ego_env, ego_sync
from tests.helpers.learnings import make_site, tool
from tests.helpers.mcp_client import McpClient, value_of
from tests.helpers.packaging import lend_dependencies, new_venv, pip_into, run, site_packages
from tests.helpers.page_server import PageServer

# Tests that run a tool, offline cases included, start Chrome: they are marked one by one.

PAGE_TITLE = (
    "async () => ({title: document.title, "
    "marker: document.querySelector('#m') ? document.querySelector('#m').textContent : null})\n"
)
TITLE_WORDS = (
    "async def run(ctx, args):\n"
    '    found = await ctx.site.run_browser_tool("packsite", "page_title", {}, tab=ctx.tab)\n'
    '    return found["title"].split()\n'
)
HOME = "https://packsite.test/"
TOOL_FILE = "browser-tools/page_title.js"


def write_packsite(learnings: Path, name: str) -> Path:
    """The site ``packsite``: a browser tool, a Python tool, a note and offline cases."""
    site = make_site(
        learnings,
        "packsite",
        name=name,
        domains=["packsite.test"],
        start_url=HOME,
        browser_tools={"page_title": tool(PAGE_TITLE, description="The page's title.")},
        python_tools={"title_words": tool(TITLE_WORDS, description="The title's words.")},
        notes={"notes/overview.md": "# Packsite\nThe pack site's quasar is its title.\n"},
    )
    tests = site / "tests"
    tests.mkdir()
    har = Har()
    har.add(build_entry(HOME, "<title>Pack Site Home</title><p id=m>m1</p>"))
    har.save(tests / "page.har")
    cases = {
        "defaults": {"har": "page.har", "url": HOME},
        "cases": [
            {
                "name": "title of the home page",
                "tool": "page_title",
                "expect": {"title": "Pack Site Home", "marker": "m1"},
            },
            {
                "name": "the title's words",
                "tool": "title_words",
                "expect": ["Pack", "Site", "Home"],
            },
        ],
    }
    (tests / "cases.json").write_text(json.dumps(cases, indent=2), encoding="utf-8")
    return site


def simple_site(learnings: Path, site_id: str, name: str, domains: list[str]) -> Path:
    return make_site(
        learnings,
        site_id,
        name=name,
        domains=domains,
        browser_tools={"page_title": tool(PAGE_TITLE, description="The page's title.")},
    )


@dataclass(frozen=True)
class Packs:
    """The venv with ego and both packs, and the folders its commands run with."""

    python: Path
    site_packages: Path
    home: Path
    cwd: Path
    workspace: Path
    alpha: Path
    beta: Path
    built: dict[str, Any]

    def env(self, **extra: str) -> dict[str, str]:
        env = ego_env(self.home / "profiles", workspace=self.workspace, **extra)
        env["HOME"] = str(self.home)
        for key in ("PYTHONPATH", "VIRTUAL_ENV", "EGO_HOME"):
            env.pop(key, None)
        return env

    def ego(self, *args: str, timeout: float = 120, **extra: str) -> Result:
        """``ego ARGS`` of the venv, run from a folder outside the checkout."""
        return run(
            [str(self.python.with_name("ego")), *args],
            cwd=self.cwd,
            env=self.env(**extra),
            timeout=timeout,
        )

    def site_folder(self, package: str, site_id: str) -> Path:
        return self.site_packages / package / "learnings" / site_id


@pytest.fixture(scope="module")
def packs(tmp_path_factory: pytest.TempPathFactory, ego_wheel: Path) -> Packs:
    """Two packs built from workspaces and installed with ego's wheel into a fresh venv."""
    base = tmp_path_factory.mktemp("packs")
    alpha_ws, beta_ws, workspace = base / "alpha-ws", base / "beta-ws", base / "workspace"
    site = write_packsite(alpha_ws / "learnings", "Alpha Packsite")
    # What a workspace holds besides the site and a pack must not carry.
    (site / "browser-tools" / ".history").mkdir()
    (site / "browser-tools" / ".history" / "old.js").write_text("async () => 0\n")
    (site / "tools" / "__pycache__").mkdir()
    (site / "tools" / "__pycache__" / "title_words.cpython-311.pyc").write_bytes(b"\0")
    simple_site(alpha_ws / "learnings", "wikipedia", "Pack Wikipedia", ["en.wikipedia.org"])
    write_packsite(beta_ws / "learnings", "Beta Packsite")
    simple_site(beta_ws / "learnings", "shared-ws", "Beta Shared", ["shared.test"])
    simple_site(workspace / "learnings", "shared-ws", "Workspace Shared", ["shared.test"])

    dist = base / "dist"
    argv = ["pack", "build", "packsite", "wikipedia", "--name", "alpha-tools"]
    argv += ["--version", "1.0", "--out", str(dist), "--json"]
    built = ego_sync(*argv, env=ego_env(base / "profiles", workspace=alpha_ws), cwd=base)
    assert built.returncode == 0, built
    beta = build_pack(
        ["packsite", "shared-ws"],
        name="beta_tools",
        version="2.0",
        out=dist,
        learnings=Learnings(roots=[beta_ws / "learnings"]),
    )

    python = new_venv(base / "venv")
    alpha = Path(built.json()["wheel"])
    pip_into(python, str(ego_wheel), str(alpha), str(beta.wheel))
    lend_dependencies(python)
    home, cwd = base / "home", base / "elsewhere"
    home.mkdir()
    cwd.mkdir()
    return Packs(
        python, site_packages(python), home, cwd, workspace, alpha, beta.wheel, built.json()
    )


# -- building -----------------------------------------------------------------------------------


def test_build_makes_a_wheel_with_the_sites_notes_tools_and_cases(packs: Packs) -> None:
    assert packs.built["name"] == "alpha-tools"
    assert packs.built["version"] == "1.0"
    assert packs.built["sites"] == ["packsite", "wikipedia"]
    with zipfile.ZipFile(packs.alpha) as wheel:
        names = set(wheel.namelist())
        entry_points = wheel.read("alpha_tools-1.0.dist-info/entry_points.txt").decode()
        generator = wheel.read("alpha_tools-1.0.dist-info/WHEEL").decode()
    site = "ego_pack_alpha_tools/learnings/packsite/"
    for name in ("manifest.json", "notes/overview.md", TOOL_FILE, "tools/title_words.py"):
        assert site + name in names, sorted(names)
    assert {site + "tests/cases.json", site + "tests/page.har"} <= names
    assert "ego_pack_alpha_tools/learnings/wikipedia/manifest.json" in names
    assert not [name for name in names if "/.history/" in name or "__pycache__" in name]
    assert "[ego.learnings]\nalpha-tools = ego_pack_alpha_tools.learnings" in entry_points
    assert "Generator: hatchling" in generator
    assert packs.beta.name == "beta_tools-2.0-py3-none-any.whl"


def test_build_refuses_an_invalid_site_and_says_why(tmp_path: Path) -> None:
    learnings = tmp_path / "ws" / "learnings"
    make_site(learnings, "broken", domains=["b.test"], browser_tools={"gone": tool(None)})
    with pytest.raises(
        PackBuildError, match=r"site 'broken' .* is invalid: .*gone.* does not exist"
    ):
        build_pack(
            ["broken"],
            name="x",
            version="1",
            out=tmp_path / "out",
            learnings=Learnings(roots=[learnings]),
        )
    assert not (tmp_path / "out").exists()
    with pytest.raises(PackBuildError, match="pass version= a PEP 440 version"):
        build_pack(["broken"], name="x", version="one", learnings=Learnings(roots=[learnings]))

    env = ego_env(tmp_path / "profiles", workspace=tmp_path / "ws")
    refused = ego_sync(
        "pack", "build", "broken", "--name", "x", "--version", "1", "--json", env=env, cwd=tmp_path
    )
    assert refused.returncode == 3, refused
    error = json.loads(refused.error_line())
    assert error["type"] == "PackBuildError"
    assert "site 'broken'" in error["error"]
    assert "ego validate" in error["error"]
    named = ego_sync(
        "pack",
        "build",
        "broken",
        "--name",
        "-x-",
        "--version",
        "1",
        "--json",
        env=env,
        cwd=tmp_path,
    )
    assert named.returncode == 3, named
    assert "pass --name letters" in json.loads(named.error_line())["error"]


# -- listing, shadowing, searching --------------------------------------------------------------


def test_sites_say_where_each_site_comes_from_in_the_shadowing_order(packs: Packs) -> None:
    result = packs.ego("sites", "--json")
    assert result.returncode == 0, result
    sites = {site["site_id"]: site for site in result.json()["sites"]}
    packsite, wikipedia, shared = sites["packsite"], sites["wikipedia"], sites["shared-ws"]
    # Two packs hold packsite: alpha's is used (by name), beta's is listed as shadowed.
    assert (packsite["source"], packsite["pack"], packsite["pack_version"]) == (
        "pack",
        "alpha-tools",
        "1.0",
    )
    assert packsite["name"] == "Alpha Packsite"
    assert packsite["shadows"] == ["pack beta_tools 2.0"]
    assert "pack alpha-tools 1.0 is used" in packsite["warning"]
    assert "warning: site 'packsite' is in more than one pack" in result.stderr
    # A pack shadows a bundled site; the workspace shadows a pack.
    assert (wikipedia["source"], wikipedia["name"], wikipedia["shadows"]) == (
        "pack",
        "Pack Wikipedia",
        ["bundled"],
    )
    assert (shared["source"], shared["name"], shared["shadows"]) == (
        "workspace",
        "Workspace Shared",
        ["pack beta_tools 2.0"],
    )
    assert (sites["demo-shop"]["source"], sites["demo-shop"]["pack"]) == ("bundled", None)
    assert all(site["valid"] for site in sites.values()), sites

    text = packs.ego("sites", "--no-json")
    line = next(line for line in text.stdout.splitlines() if line.startswith("packsite"))
    assert line.endswith("(pack alpha-tools 1.0)"), text


def test_pack_list_shows_packs_versions_and_which_copy_is_used(packs: Packs) -> None:
    result = packs.ego("pack", "list", "--json")
    assert result.returncode == 0, result
    listed = {pack["name"]: pack for pack in result.json()["packs"]}
    assert list(listed) == ["alpha-tools", "beta_tools"]
    assert listed["alpha-tools"]["version"] == "1.0"
    assert listed["alpha-tools"]["sites"] == [
        {"site_id": "packsite", "used": True, "used_from": "pack alpha-tools 1.0"},
        {"site_id": "wikipedia", "used": True, "used_from": "pack alpha-tools 1.0"},
    ]
    assert listed["beta_tools"]["sites"] == [
        {"site_id": "packsite", "used": False, "used_from": "pack alpha-tools 1.0"},
        {"site_id": "shared-ws", "used": False, "used_from": "workspace"},
    ]
    assert len(result.json()["warnings"]) == 1
    assert "packsite" in result.stderr


def test_catalog_search_finds_pack_tools_and_notes_and_show_prints_one(packs: Packs) -> None:
    found = packs.ego("catalog", "search", "quasar", "--json")
    assert found.returncode == 0, found
    hits = found.json()["hits"]
    assert hits[0]["site_id"] == "packsite"
    assert hits[0]["source"] == "pack alpha-tools 1.0"
    assert {hit["kind"] for hit in hits} == {"tool", "note"}

    titled = packs.ego("catalog", "search", "page", "title", "--domain", "packsite.test", "--json")
    best = titled.json()["hits"][0]
    assert (best["site_id"], best["name"], best["side_effect"]) == (
        "packsite",
        "page_title",
        "read",
    )
    assert best["example"] == "await site.run_browser_tool('packsite', 'page_title', {})"
    assert all(hit["site_id"] == "packsite" for hit in titled.json()["hits"])

    shown = packs.ego("catalog", "show", "packsite/title_words", "--json")
    assert shown.returncode == 0, shown
    tool_data = shown.json()
    assert tool_data["tool"]["kind"] == "python"
    assert tool_data["source"] == "pack alpha-tools 1.0"
    assert Path(tool_data["file"]).is_relative_to(packs.site_packages)
    site_text = packs.ego("catalog", "show", "packsite", "--no-json").stdout
    assert "note    notes/overview.md: Packsite" in site_text
    assert "shadows: pack beta_tools 2.0" in site_text


# -- verifying and running ----------------------------------------------------------------------


@pytest.mark.chrome
def test_verify_checks_the_hashes_and_runs_the_offline_cases(packs: Packs) -> None:
    result = packs.ego("pack", "verify", "alpha-tools", "--no-json", timeout=180)
    assert result.returncode == 0, result
    lines = result.stdout.splitlines()
    assert any(
        line.startswith("ok   alpha-tools 1.0 packsite: 6 files as recorded") for line in lines
    ), result
    assert any(line.startswith("ok   alpha-tools 1.0 wikipedia:") for line in lines), result
    assert any(line.startswith("PASS packsite/title of the home page") for line in lines), result
    assert any(line.startswith("PASS packsite/the title's words") for line in lines), result

    unknown = packs.ego("pack", "verify", "gamma", "--json")
    assert unknown.returncode == 3, unknown
    assert json.loads(unknown.error_line())["type"] == "UnknownPackError"


@pytest.mark.chrome
def test_a_pack_tool_runs_from_another_folder(packs: Packs, server: PageServer) -> None:
    url = server.route("/packsite", "<title>Pack Site Home</title><p id=m>served</p>")
    # The site served here stands for packsite.test: a tool runs only on its site.
    here = ("--url", url, "--start-url", f"packsite={url}", "--json")
    result = packs.ego("run", "packsite", "page_title", *here)
    assert result.returncode == 0, result
    assert result.json() == {"title": "Pack Site Home", "marker": "served"}
    words = packs.ego("run", "packsite", "title_words", *here)
    assert words.returncode == 0, words
    assert words.json() == ["Pack", "Site", "Home"]


@pytest.fixture
def restored(packs: Packs) -> Iterator[Path]:
    """The installed packsite of alpha, put back as installed after the test."""
    folder = packs.site_folder("ego_pack_alpha_tools", "packsite")
    saved = folder.parent / ".packsite-as-installed"
    shutil.copytree(folder, saved)
    try:
        yield folder
    finally:
        shutil.rmtree(folder)
        saved.rename(folder)


@pytest.mark.chrome
def test_a_changed_file_makes_only_its_site_invalid_before_a_browser_starts(
    packs: Packs, restored: Path, server: PageServer
) -> None:
    with (restored / TOOL_FILE).open("a") as file:
        file.write("// changed after the install\n")
    # An endpoint nothing listens on: had the command tried a browser, it would fail with 4.
    run_it = packs.ego(
        "run", "packsite", "page_title", "--endpoint", "http://127.0.0.1:9", "--json"
    )
    assert run_it.returncode == 3, run_it
    error = json.loads(run_it.error_line())
    assert error["type"] == "PackIntegrityError"
    assert f"{TOOL_FILE} was changed after the install" in error["error"]
    assert "pip install --force-reinstall 'alpha-tools==1.0'" in error["error"]

    sites = {site["site_id"]: site for site in packs.ego("sites", "--json").json()["sites"]}
    assert sites["packsite"]["valid"] is False
    assert sites["packsite"]["problems"] == [
        f"{TOOL_FILE} was changed after the install (its sha256 differs from the pack's RECORD)"
    ]
    assert sites["wikipedia"]["valid"] is True

    verified = packs.ego("pack", "verify", "alpha-tools", "--no-cases", "--no-json")
    assert verified.returncode == 3, verified
    assert f"FAIL alpha-tools 1.0 packsite: {TOOL_FILE} was changed" in verified.stdout
    assert "ok   alpha-tools 1.0 wikipedia" in verified.stdout

    # Every other site keeps working: the same pack's wikipedia runs.
    url = server.route("/pack-wiki", "<title>Wiki Page</title>")
    other = packs.ego(
        "run", "wikipedia", "page_title", "--url", url, "--start-url", f"wikipedia={url}",
        "--json",
    )  # fmt: skip
    assert other.returncode == 0, other
    assert other.json()["title"] == "Wiki Page"


# -- in this process: the cache, missing and added files, the order of the roots ---------------


def test_verification_is_stat_only_after_the_first_check(
    packs: Packs, restored: Path, tmp_path: Path
) -> None:
    found = installed_packs(path=[str(packs.site_packages)])
    assert [pack.name for pack in found] == ["alpha-tools", "beta_tools"]
    learnings = Learnings(workspace=tmp_path, packs=found)
    assert learnings.roots[1:3] == [pack.root for pack in found]
    assert learnings.find("packsite").origin == found[0].origin

    assert all(entry.valid for entry in learnings.sites())
    first = learnings.integrity.hashed
    assert first == sum(len(found[0].recorded(s)) for s in ("packsite", "wikipedia")) + len(
        found[1].recorded("shared-ws")
    )
    learnings.sites()
    learnings.find("packsite")
    assert learnings.integrity.hashed == first  # nothing changed: stats only

    tool_file = restored / TOOL_FILE
    tool_file.write_bytes(tool_file.read_bytes())  # the same bytes, a new stat
    assert learnings.find("packsite").valid
    assert learnings.integrity.hashed == first + 1

    tool_file.rename(restored / "moved.js")
    entry = learnings.find("packsite")
    assert isinstance(entry.error, PackIntegrityError)
    assert entry.problems == [
        f"{TOOL_FILE} is missing (the pack's RECORD lists it)",
        "moved.js was added after the install (not in the pack's RECORD)",
    ]
    assert learnings.find("wikipedia").valid
    (restored / "moved.js").rename(tool_file)
    assert learnings.find("packsite").valid


async def test_mcp_lists_where_sites_come_from_and_searches_the_catalog(packs: Packs) -> None:
    client = McpClient(packs.env(), packs.cwd, packs.cwd / "mcp-stderr.log")
    client.params = StdioServerParameters(
        command=str(packs.python), args=["-m", "ego", "mcp"], env=packs.env(), cwd=str(packs.cwd)
    )
    await client.start()
    try:
        sites = {site["site_id"]: site for site in value_of(await client.call("list_sites"))}
        assert (sites["packsite"]["source"], sites["packsite"]["pack"]) == ("pack", "alpha-tools")
        assert sites["shared-ws"]["source"] == "workspace"
        found = value_of(
            await client.call("search_catalog", {"query": "page title", "domain": "packsite.test"})
        )
        best = found["hits"][0]
        assert (best["site_id"], best["source"]) == ("packsite", "pack alpha-tools 1.0")
        assert best["example"] == "packsite__page_title {}"
    finally:
        await client.close()


def test_skill_export_and_import_keep_working_beside_packs(packs: Packs, tmp_path: Path) -> None:
    skill = tmp_path / "SKILL.md"
    exported = packs.ego("skill", "export", "packsite/page_title", "--out", str(skill))
    assert exported.returncode == 0, exported
    assert "page_title" in skill.read_text()
    imported = packs.ego(
        "skill", "import", str(skill), "--workspace", str(tmp_path / "ws"), "--json"
    )
    assert imported.returncode == 0, imported
    folder = Path(imported.json()["imported"])
    assert (folder / "SKILL.md").is_file()
    assert folder.is_relative_to(tmp_path / "ws" / "skills")
