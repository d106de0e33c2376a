"""The ``ego`` command line, each command through a real subprocess and real headless Chromium.

Commands run as ``python -m ego ...`` (and once as the ``ego`` console script) with stdout piped,
so their output is JSON. Commands that need a browser attach with ``--endpoint`` to one Chrome
this module launches, except where launching is the point (``run`` once, ``doctor``, ``demo``,
``launch``, ``login``). Profiles live under a temporary ``EGO_PROFILES_DIR``.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import signal
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psutil
import pytest
import yaml

import ego
from ego.demo import SESSION_COOKIE, DemoServer
from ego.protocol.chrome import find_chrome
from tests.helpers.browsers import websocket_url
from tests.helpers.commands import (
    Result,
    background,
    ego_async,
    ego_env,
    ego_sync,
    free_port,
    http_endpoint,
    read_json_line,
)
from tests.helpers.paths import EGO_SCRIPT, ROOT
from tests.helpers.processes import alive, profile_pids, wait_gone, with_descendants

# The commands under test launch Chrome, or attach to this module's own.
# Tests that start Chrome are marked `chrome` one by one (or through a browser fixture);
# the rest need none and run in the fast tier.

DEMO_TOOLS = {
    "list_products",
    "get_product",
    "search_products",
    "get_orders",
    "get_cart",
    "add_to_cart",
    "post_review",
    "fill_contact_form",
    "whoami",
    "cheapest_in_category",
}
SHOP_SKILLS = {
    "shop.localhost/search-products",
    "shop.localhost/get-orders",
    "shop.localhost/post-review",
}


# -- fixtures ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shop() -> Iterator[DemoServer]:
    with DemoServer() as server:
        yield server


@pytest.fixture(scope="module")
def profiles(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("profiles")


@pytest.fixture(scope="module")
def env(profiles: Path) -> dict[str, str]:
    return ego_env(profiles)


@pytest.fixture(scope="module")
def cwd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Commands run from an unrelated folder: nothing may depend on the working directory."""
    return tmp_path_factory.mktemp("cwd")


@pytest.fixture(scope="module")
async def chrome() -> AsyncIterator[ego.Browser]:
    """A headless Chrome of this module's own, that commands attach to with --endpoint."""
    async with ego.launch(port=0) as browser:
        yield browser


@pytest.fixture(scope="module")
def endpoint(chrome: ego.Browser) -> str:
    return http_endpoint(websocket_url(chrome))


BAD_SKILL_NAME = "Bad_Name"


@pytest.fixture(scope="module")
def broken_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace with one good site and three problems: a manifest that is not JSON, a tool
    path that escapes its site folder, and a skill whose name is not kebab-case."""
    root = tmp_path_factory.mktemp("broken-workspace")
    learnings = root / "learnings"
    (learnings / "broken-site").mkdir(parents=True)
    (learnings / "broken-site" / "manifest.json").write_text('{"id": "broken-site", "name": ')

    def site(site_id: str, path: str) -> Path:
        folder = learnings / site_id
        (folder / "browser-tools").mkdir(parents=True)
        manifest = {
            "id": site_id,
            "name": site_id.title(),
            "domains": [f"{site_id}.example"],
            "browserTools": {"ping": {"description": "answers 1", "path": path, "args": {}}},
        }
        (folder / "manifest.json").write_text(json.dumps(manifest))
        return folder

    good = site("good-site", "browser-tools/ping.js")
    (good / "browser-tools" / "ping.js").write_text("async () => 1\n")
    site("escape-site", "../x.js")
    (learnings / "x.js").write_text("async () => 'outside'\n")

    # A complete, valid skill (the shipped one) whose only fault is its name.
    shipped = ROOT / "skills" / "shop.localhost" / "search-products"
    bad = root / "skills" / "shop.localhost" / BAD_SKILL_NAME
    bad.mkdir(parents=True)
    text = (shipped / "SKILL.md").read_text("utf-8")
    text = re.sub(r"(?m)^name: search-products$", f"name: {BAD_SKILL_NAME}", text, count=1)
    assert f"name: {BAD_SKILL_NAME}" in text
    (bad / "SKILL.md").write_text(text, encoding="utf-8")
    for extra in shipped.iterdir():
        if extra.name != "SKILL.md":
            shutil.copy(extra, bad / extra.name)
    return root


def error_json(result: Result) -> dict[str, Any]:
    """The one-line JSON error a piped command prints on stderr."""
    data: dict[str, Any] = json.loads(result.error_line())
    assert set(data) >= {"error", "type"}, result
    return data


# -- learnings: tools, sites ------------------------------------------------------------------


def test_tools_for_demo_shop_url_is_json_when_piped(env: dict[str, str], cwd: Path) -> None:
    result = ego_sync("tools", "http://shop.localhost:1234/", env=env, cwd=cwd)
    assert result.returncode == 0, result
    context = result.json()
    assert context["url"] == "http://shop.localhost:1234/"
    assert context["matched"] is True
    assert [site["site_id"] for site in context["sites"]] == ["demo-shop"]
    assert context["sites"][0]["matched_domain"] == "shop.localhost"
    assert {note["path"] for note in context["notes"]} >= {"notes/overview.md"}
    names = {tool["tool_name"] for tool in context["tools"]}
    assert names >= DEMO_TOOLS
    assert {tool["site_id"] for tool in context["tools"]} >= {"demo-shop"}
    search = next(tool for tool in context["tools"] if tool["tool_name"] == "search_products")
    assert search["example"] == {"query": "desk"}
    assert search["args"]["query"] == "str"
    full = ego_sync("tools", "http://shop.localhost:1234/", "--full", env=env, cwd=cwd).json()
    assert {note["path"] for note in full["sites"][0]["notes"]} >= {"notes/overview.md"}
    assert all(note["text"] for note in full["sites"][0]["notes"])


def test_sites_lists_every_site_and_skill(env: dict[str, str], cwd: Path) -> None:
    result = ego_sync("sites", env=env, cwd=cwd)
    assert result.returncode == 0, result
    data = result.json()
    sites = {site["site_id"]: site for site in data["sites"]}
    assert set(sites) >= {"demo-shop", "x-com", "google-com"}
    for site_id in ("demo-shop", "x-com", "google-com"):
        assert sites[site_id]["valid"] is True, sites[site_id]
    assert set(sites["demo-shop"]["browser_tools"]) >= DEMO_TOOLS - {"cheapest_in_category"}
    skills = {skill["skill_id"]: skill for skill in data["skills"]}
    assert set(skills) >= SHOP_SKILLS
    assert skills["shop.localhost/post-review"]["side_effect"] == "irreversible"


def test_sites_marks_invalid_sites_with_the_reason(
    env: dict[str, str], cwd: Path, broken_workspace: Path
) -> None:
    result = ego_sync("--workspace", str(broken_workspace), "sites", env=env, cwd=cwd)
    assert result.returncode == 0, result
    data = result.json()
    sites = {site["site_id"]: site for site in data["sites"]}
    assert sites["good-site"]["valid"] is True
    assert sites["demo-shop"]["valid"] is True  # one broken site leaves the others working
    assert sites["broken-site"]["valid"] is False
    assert any("JSON" in problem for problem in sites["broken-site"]["problems"])
    skills = {skill["skill_id"]: skill for skill in data["skills"]}
    bad = skills[f"shop.localhost/{BAD_SKILL_NAME}"]
    assert bad["valid"] is False
    assert any("kebab" in problem for problem in bad["problems"])


# -- run --------------------------------------------------------------------------------------


@pytest.mark.chrome
async def test_run_list_products_via_console_script(
    env: dict[str, str], cwd: Path, shop: DemoServer
) -> None:
    assert EGO_SCRIPT.is_file(), f"no console script at {EGO_SCRIPT}"
    result = await ego_async(
        "run",
        "demo-shop",
        "list_products",
        "--url",
        shop.url,
        "--arg",
        "limit=2",
        env=env,
        cwd=cwd,
        command=[str(EGO_SCRIPT)],
    )
    assert result.returncode == 0, result
    data = result.json()
    assert data["count"] == 2
    assert len(data["products"]) == 2
    assert data["total"] == 12
    assert all(product["url"].startswith(shop.origin + "/") for product in data["products"])
    assert [product["id"] for product in data["products"]] == [1, 2]


@pytest.mark.chrome
async def test_run_with_bad_args_exits_3_naming_the_field(
    env: dict[str, str], cwd: Path, endpoint: str
) -> None:
    args = ("run", "demo-shop", "list_products", "--endpoint", endpoint, "--arg", "limit=abc")
    result = await ego_async("--no-json", *args, env=env, cwd=cwd)
    assert result.returncode == 3, result
    assert result.stdout == ""
    line = result.error_line()
    assert line.startswith("ego: InvalidArgsError: "), line
    assert "'limit'" in line

    piped = await ego_async(*args, env=env, cwd=cwd)
    assert piped.returncode == 3, piped
    error = error_json(piped)
    assert error["type"] == "InvalidArgsError"
    assert "limit" in error["error"]


def test_run_with_a_malformed_arg_is_a_usage_error(env: dict[str, str], cwd: Path) -> None:
    result = ego_sync("run", "demo-shop", "list_products", "--arg", "limit", env=env, cwd=cwd)
    assert result.returncode == 2, result
    assert "k=v" in result.stderr


@pytest.mark.chrome
async def test_run_unknown_tool_exits_3_listing_the_declared_ones(
    env: dict[str, str], cwd: Path, endpoint: str
) -> None:
    result = await ego_async(
        "run", "demo-shop", "no_such_tool", "--endpoint", endpoint, env=env, cwd=cwd
    )
    assert result.returncode == 3, result
    error = error_json(result)
    assert error["type"] == "UnknownToolError"
    assert "no_such_tool" in error["error"]
    assert "list_products" in error["error"]


@pytest.mark.chrome
async def test_run_irreversible_tool_needs_confirm(
    env: dict[str, str], cwd: Path, endpoint: str, shop: DemoServer
) -> None:
    reviews_before = len(shop.state.reviews)
    result = await ego_async(
        "run",
        "demo-shop",
        "post_review",
        "--endpoint",
        endpoint,
        "--args",
        '{"product_id": 3, "rating": 5, "text": "Lovely."}',
        env=env,
        cwd=cwd,
    )
    assert result.returncode == 3, result
    error = error_json(result)
    assert error["type"] == "ConfirmationRequiredError"
    assert "confirm" in error["error"]
    assert len(shop.state.reviews) == reviews_before


# -- skills -----------------------------------------------------------------------------------


@pytest.mark.chrome
async def test_skill_run_search_products(
    env: dict[str, str], cwd: Path, endpoint: str, shop: DemoServer
) -> None:
    result = await ego_async(
        "skill",
        "run",
        "shop.localhost/search-products",
        "--endpoint",
        endpoint,
        "--url",
        shop.url,
        "--arg",
        "query=desk",
        env=env,
        cwd=cwd,
    )
    assert result.returncode == 0, result
    data = result.json()
    assert data["query"] == "desk"
    assert data["total"] == 2
    assert {product["name"] for product in data["products"]} == {
        "Mechanical Desk Clock",
        "Felt Desk Mat",
    }
    assert all(product["url"].startswith(shop.origin + "/") for product in data["products"])


@pytest.fixture(scope="module")
def exported_skill(
    env: dict[str, str], cwd: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Result, Path]:
    result = ego_sync("skill", "export", "demo-shop/search_products", env=env, cwd=cwd)
    path = tmp_path_factory.mktemp("export") / "SKILL.md"
    path.write_text(result.stdout, encoding="utf-8")
    return result, path


def _js_block(text: str, heading: str) -> str:
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```js\n(.*?)\n```", section, re.S)
    assert match, f"no js block under ## {heading}"
    return match.group(1)


@pytest.mark.chrome
async def test_skill_export_prints_skill_md_with_call_and_store(
    exported_skill: tuple[Result, Path], chrome: ego.Browser, shop: DemoServer
) -> None:
    result, _ = exported_skill
    assert result.returncode == 0, result
    text = result.stdout
    assert text.startswith("---\n")
    front = yaml.safe_load(text.split("---\n", 2)[1])
    assert front["name"] == "search-products"
    assert front["site"] == "shop.localhost"
    assert front["side_effect"] == "read"
    for heading in ("Extractor", "Call", "Store", "Errors", "Success assertion"):
        assert f"\n## {heading}\n" in text, heading
    call, store = _js_block(text, "Call"), _js_block(text, "Store")
    assert "ego:skill:shop.localhost/search-products" in call

    # The snippets work as printed: Call misses, Store stores, Call answers.
    tab = await chrome.new_tab(shop.url)
    try:
        await tab.evaluate("localStorage.clear()")
        assert await tab.evaluate(call) == {"__ego_cache__": "NEEDS_STORE"}
        assert await tab.evaluate(store) == "stored"
        answer = await tab.evaluate(call)
        assert answer["query"] == "desk"
        assert answer["total"] == 2
    finally:
        await tab.close()


@pytest.mark.chrome
async def test_skill_import_into_workspace_then_run(
    exported_skill: tuple[Result, Path],
    env: dict[str, str],
    cwd: Path,
    endpoint: str,
    shop: DemoServer,
    tmp_path: Path,
) -> None:
    _, skill_file = exported_skill
    workspace = tmp_path / "workspace"
    workspace.mkdir()

    refused = ego_sync("skill", "import", str(skill_file), env=env, cwd=cwd)
    assert refused.returncode == 2, refused
    assert "workspace" in refused.stderr

    imported = ego_sync(
        "--workspace", str(workspace), "skill", "import", str(skill_file), env=env, cwd=cwd
    )
    assert imported.returncode == 0, imported
    folder = workspace / "skills" / "shop.localhost" / "search-products"
    assert Path(imported.json()["imported"]) == folder
    assert (folder / "SKILL.md").is_file()

    # The workspace's copy is the one the catalog now resolves.
    listed = ego_sync("--workspace", str(workspace), "sites", env=env, cwd=cwd)
    skills = {skill["skill_id"]: skill for skill in listed.json()["skills"]}
    assert Path(skills["shop.localhost/search-products"]["directory"]) == folder
    assert skills["shop.localhost/search-products"]["valid"] is True

    ran = await ego_async(
        "skill",
        "run",
        "shop.localhost/search-products",
        "--endpoint",
        endpoint,
        "--url",
        shop.url,
        "--arg",
        "query=mat",
        env=ego_env(Path(env["EGO_PROFILES_DIR"]), workspace=workspace),
        cwd=cwd,
    )
    assert ran.returncode == 0, ran
    data = ran.json()
    assert data["query"] == "mat"
    assert "Felt Desk Mat" in {product["name"] for product in data["products"]}


# -- validate ---------------------------------------------------------------------------------


def test_validate_prints_one_line_per_problem(
    env: dict[str, str], cwd: Path, broken_workspace: Path
) -> None:
    result = ego_sync("--no-json", "validate", str(broken_workspace), env=env, cwd=cwd)
    assert result.returncode == 3, result
    lines = result.stdout.splitlines()
    assert len(lines) == 3, result
    broken = [line for line in lines if "broken-site" in line]
    escape = [line for line in lines if "escape-site" in line]
    bad_skill = [line for line in lines if BAD_SKILL_NAME in line]
    assert len(broken) == len(escape) == len(bad_skill) == 1, result
    assert "manifest.json" in broken[0]
    assert "JSON" in broken[0]
    assert "../x.js" in escape[0]
    assert "kebab" in bad_skill[0]
    assert "good-site" not in result.stdout
    assert "3 problem(s)" in result.stderr

    piped = ego_sync("validate", str(broken_workspace), env=env, cwd=cwd)
    assert piped.returncode == 3, piped
    data = piped.json()
    assert data["ok"] is False
    assert sorted(data["problems"]) == sorted(lines)


def test_validate_shipped_learnings_and_skills(env: dict[str, str], cwd: Path) -> None:
    result = ego_sync("validate", env=env, cwd=cwd)
    assert result.json() == {"ok": True, "problems": [], "warnings": []}, result
    assert result.returncode == 0, result


# -- browser commands -------------------------------------------------------------------------


@pytest.mark.chrome
async def test_doctor_names_chrome_and_its_version(
    env: dict[str, str], cwd: Path, profiles: Path, chrome: ego.Browser
) -> None:
    result = await ego_async("doctor", env=env, cwd=cwd)
    assert result.returncode == 0, result
    report = result.json()
    assert report["chrome"] == find_chrome()
    assert report["starts"] is True
    assert report["chrome_version"] == (await chrome.version())["product"]
    assert re.fullmatch(r"\S*Chrome/\d+(\.\d+)+", report["chrome_version"])
    assert report["profiles"] == str(profiles)
    assert str(ROOT / "learnings") in report["learnings_roots"]


AGENT_SCRIPT = """
import json

async def main(browser, tab, site):
    version = await browser.version()
    context = await site.learn_context(tab.url)
    found = await site.run_browser_tool("demo-shop", "search_products", {"query": "desk"}, tab=tab)
    print(json.dumps({
        "product": version["product"],
        "title": await tab.evaluate("document.title"),
        "url": tab.url,
        "sites": [s.site_id for s in context.sites],
        "found": sorted(p["name"] for p in found["products"]),
    }))
"""


@pytest.mark.chrome
async def test_script_runs_an_agent_script(
    env: dict[str, str], cwd: Path, endpoint: str, shop: DemoServer, tmp_path: Path
) -> None:
    script = tmp_path / "agent.py"
    script.write_text(AGENT_SCRIPT)
    result = await ego_async(
        "script", str(script), "--endpoint", endpoint, "--url", shop.url, env=env, cwd=cwd
    )
    assert result.returncode == 0, result
    data = json.loads(result.stdout.strip().splitlines()[-1])
    assert "Chrome/" in data["product"]
    assert data["title"] == "Products · Ego Demo Shop"
    assert data["url"] == shop.url
    assert data["sites"] == ["demo-shop"]
    assert data["found"] == ["Felt Desk Mat", "Mechanical Desk Clock"]


@pytest.mark.chrome
async def test_demo_runs_the_tour(env: dict[str, str], cwd: Path) -> None:
    result = await ego_async("demo", env=env, cwd=cwd, timeout=90)
    assert result.returncode == 0, result
    data = result.json()
    context = data["learn_context"]
    assert context["matched"] is True
    assert [site["site_id"] for site in context["sites"]] == ["demo-shop"]
    # The start URL shown is where the tour's shop runs (a free port), not the manifest's.
    [shown] = re.findall(r"demo shop at (\S+)", result.stderr) or [None]
    start = context["sites"][0]["start_url"]
    assert start != "http://shop.localhost:8765/", start
    assert shown in (None, start)
    steps = data["steps"]
    by_tool: dict[str, list[dict[str, Any]]] = {}
    for step in steps:
        by_tool.setdefault(step["call"].split("(", 1)[0], []).append(step)
    listed = by_tool["list_products"]
    assert listed, steps
    assert all(step["ok"] and step["result"]["count"] == 3 for step in listed), listed
    assert by_tool["search_products"][0]["ok"] is True
    orders = by_tool["get_orders"][0]
    assert orders["ok"] is False
    assert "NEEDS_LOGIN" in orders["result"]
    review = by_tool["post_review"][0]
    assert review["ok"] is False
    assert "confirm" in review["result"]
    refused = {"get_orders", "post_review"}
    assert all(step["ok"] for step in steps if step["call"].split("(", 1)[0] not in refused)


@pytest.mark.chrome
async def test_tabs_lists_the_tabs_of_an_endpoint(
    env: dict[str, str], cwd: Path, chrome: ego.Browser, endpoint: str, shop: DemoServer
) -> None:
    assert endpoint.startswith("http://127.0.0.1:")
    url = shop.url_for("/contact")
    tab = await chrome.new_tab(url)
    try:
        result = await ego_async("--endpoint", endpoint, "tabs", env=env, cwd=cwd)
        assert result.returncode == 0, result
        rows = {row["id"]: row for row in result.json()}
        assert tab.target_id in rows, rows
        assert rows[tab.target_id]["url"] == url
        assert "Contact" in rows[tab.target_id]["title"]

        human = await ego_async("--no-json", "tabs", "--endpoint", endpoint, env=env, cwd=cwd)
        assert human.returncode == 0, human
        assert any(line.endswith(url) for line in human.stdout.splitlines()), human
    finally:
        await tab.close()


def test_dead_endpoint_exits_4_with_one_line(env: dict[str, str], cwd: Path) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    result = ego_sync("tabs", "--endpoint", dead, env=env, cwd=cwd, timeout=30)
    assert result.returncode == 4, result
    assert result.stdout == ""
    error = error_json(result)
    assert error["type"] == "ConnectionFailedError"
    assert dead in error["error"]


# -- long-running commands: launch, login ----------------------------------------------------


@pytest.mark.chrome
async def test_launch_prints_endpoint_and_stops_on_sigint(tmp_path: Path, cwd: Path) -> None:
    env = ego_env(tmp_path)
    profile_dir = tmp_path / "bg"
    async with background("launch", "--profile", "bg", env=env, cwd=cwd) as process:
        assert process.stdout is not None
        assert process.stderr is not None
        info = await read_json_line(process.stdout, timeout=60)
        assert Path(info["profile"]) == profile_dir
        assert info["endpoint"].startswith("http://127.0.0.1:")

        async with ego.connect(info["endpoint"]) as attached:
            assert "Chrome/" in (await attached.version())["product"]
            tab = await attached.new_tab()
            assert await tab.evaluate("6 * 7") == 42

        chrome_main = psutil.Process(info["pid"])
        chromes = with_descendants([chrome_main, *profile_pids(profile_dir)])
        assert alive(chromes)
        assert (profile_dir / "SingletonLock").is_symlink()

        process.send_signal(signal.SIGINT)
        code = await asyncio.wait_for(process.wait(), 30)
        stderr = (await process.stderr.read()).decode()
    assert code in (0, 130), stderr
    assert "Traceback" not in stderr
    assert await wait_gone(chromes, timeout=15) == []
    assert profile_pids(profile_dir) == []
    # Chrome quit cleanly: the profile is not left locked.
    assert not (profile_dir / "SingletonLock").is_symlink()


@pytest.mark.chrome
async def test_login_without_a_window_says_how_to_reach_its_tab_and_saves_the_login(
    tmp_path: Path, cwd: Path, shop: DemoServer
) -> None:
    env = ego_env(tmp_path)
    state = tmp_path / "login.json"
    args = ("login", "demo-shop", "--headless", "--profile", "alone", "--no-json")
    args += ("--url", shop.url_for("/login?next=/account"), "--save-state", str(state))
    async with background(*args, env=env, cwd=cwd) as process:
        assert process.stdout is not None
        assert process.stderr is not None
        line = (await asyncio.wait_for(process.stdout.readline(), 60)).decode()
        while line and "Chrome has no window here" not in line:  # past a wrapper's line
            line = (await asyncio.wait_for(process.stdout.readline(), 60)).decode()
        # No window: the way to its tab is a port on 127.0.0.1, said with how to reach it.
        endpoint = re.search(r"--endpoint (http://127\.0\.0\.1:\d+)", line)
        assert endpoint, line
        port = endpoint.group(1).rsplit(":", 1)[1]
        assert f"ssh -L {port}:127.0.0.1:{port}" in line
        assert "chrome://inspect" in line
        chromes = with_descendants(profile_pids(tmp_path / "alone"))
        [main] = [each for each in chromes if "--type=" not in " ".join(each.cmdline())]
        listening = [
            conn.laddr
            for conn in main.net_connections(kind="tcp")
            if conn.status == psutil.CONN_LISTEN
        ]
        assert [address.ip for address in listening] == ["127.0.0.1"]
        # A person (played here through CDP) logs in in that tab, then closes it.
        async with ego.connect(endpoint.group(1)) as reached:
            [tab] = [t for t in await reached.tabs() if t.url.startswith(shop.url)]
            await tab.type('[data-testid="login-username"]', "demo")
            await tab.type('[data-testid="login-password"]', "demo")
            await tab.click('[data-testid="login-submit"]')
            await tab.wait_for(url=shop.url_for("/account"), timeout=30)
            await tab.close()
        code = await asyncio.wait_for(process.wait(), 30)
        stderr = (await process.stderr.read()).decode()
    assert code == 0, stderr
    assert "ego: saved the login to" in stderr
    saved = json.loads(state.read_text())
    assert SESSION_COOKIE in {cookie["name"] for cookie in saved["cookies"]}
    assert await wait_gone(chromes, timeout=15) == []


@pytest.mark.chrome
async def test_login_ended_before_anyone_logged_in_keeps_no_empty_login(
    tmp_path: Path, cwd: Path, shop: DemoServer
) -> None:
    env = ego_env(tmp_path)
    state = tmp_path / "login.json"
    args = ("login", "demo-shop", "--headless", "--profile", "quitter", "--url", shop.url_for("/x"))
    async with background(*args, "--save-state", str(state), env=env, cwd=cwd) as process:
        assert process.stdout is not None
        assert process.stderr is not None
        info = await read_json_line(process.stdout, timeout=60)
        assert info["endpoint"].startswith("http://127.0.0.1:")
        process.send_signal(signal.SIGINT)  # Ctrl+C: done, with nobody logged in
        code = await asyncio.wait_for(process.wait(), 30)
        stderr = (await process.stderr.read()).decode()
    assert code not in (0, 130), stderr  # ended by Ctrl+C as asked, and failed
    [error] = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    assert error["type"] == "StorageStateError"
    assert "no login was saved" in error["error"]
    assert not state.exists()
    assert profile_pids(tmp_path / "quitter") == []


@pytest.mark.chrome
async def test_login_keeps_the_session_in_the_profile(
    tmp_path: Path, cwd: Path, shop: DemoServer
) -> None:
    env = ego_env(tmp_path)
    login_url = shop.url_for("/login")
    # The test plays the person through CDP, so the login runs in the browser `ego launch`
    # keeps on that profile, which has a port (a Chrome `ego login` starts has none).
    async with background("launch", "--profile", "shopper", env=env, cwd=cwd) as keeper:
        assert keeper.stdout is not None
        assert keeper.stderr is not None
        kept = await read_json_line(keeper.stdout, timeout=60)
        args = ("login", "demo-shop", "--headless", "--profile", "shopper", "--url", login_url)
        async with background(*args, env=env, cwd=cwd) as process:
            assert process.stdout is not None
            assert process.stderr is not None
            info = await read_json_line(process.stdout, timeout=60)
            assert info["site"] == "demo-shop"
            assert info["url"] == login_url
            assert info["profile"] == "shopper"
            assert info["endpoint"] == kept["endpoint"]

            # A person logs in by hand: here the test plays the person, through CDP.
            async with ego.connect(info["endpoint"]) as attached:
                tab = next(t for t in await attached.tabs() if t.target_id == info["tab"])
                session = await tab.attach()
                left_login = session.expect(
                    "Page.frameNavigated",
                    lambda params: (
                        not params["frame"].get("parentId")
                        and urlsplit(params["frame"]["url"]).path != "/login"
                    ),
                )
                await tab.type('[data-testid="login-username"]', "demo")
                await tab.type('[data-testid="login-password"]', "demo")
                await tab.click('[data-testid="login-submit"]')
                await asyncio.wait_for(left_login, 30)
                cookies = (await tab.send("Network.getCookies", {"urls": [shop.url]}))["cookies"]
                assert SESSION_COOKIE in {cookie["name"] for cookie in cookies}
                # The person closes the tab: `ego login` is done.
                await tab.close()
            code = await asyncio.wait_for(process.wait(), 30)
            stderr = (await process.stderr.read()).decode()
        assert code == 0, stderr
        # Ending the kept browser lets Chrome write the session to the profile.
        keeper.send_signal(signal.SIGINT)
        code = await asyncio.wait_for(keeper.wait(), 30)
        stderr = (await keeper.stderr.read()).decode()
    assert code in (0, 130), stderr
    assert profile_pids(tmp_path / "shopper") == []

    # A relaunch of the same profile rides on the session.
    whoami = await ego_async(
        "run", "demo-shop", "whoami", "--profile", "shopper", "--url", shop.url, env=env, cwd=cwd
    )
    assert whoami.returncode == 0, whoami
    assert whoami.json() == {"logged_in": True, "username": "demo", "display_name": "Demo Shopper"}
