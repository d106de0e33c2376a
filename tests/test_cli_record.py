"""Record a tool, then test it: ``ego record --run`` and ``ego test --update``.

A copy of the demo-shop learning lives in a workspace; the shop runs only while recording,
so the tests after it replay the HAR with no server at all.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

import ego
from ego.demo import DemoServer
from ego.replay import Har
from tests.helpers.browsers import websocket_url
from tests.helpers.commands import background, ego_async, ego_env, http_endpoint
from tests.helpers.paths import ROOT


@pytest.fixture
def endpoint(ported_browser: ego.Browser) -> str:
    return http_endpoint(websocket_url(ported_browser))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A workspace whose learnings hold a copy of demo-shop (with a tests/ folder)."""
    root = tmp_path / "workspace"
    shutil.copytree(
        ROOT / "learnings" / "demo-shop",
        root / "learnings" / "demo-shop",
        ignore=shutil.ignore_patterns("tests"),  # its own cases: these tests record theirs
    )
    (root / "learnings" / "demo-shop" / "tests").mkdir()
    return root


def _cases(workspace: Path) -> Path:
    return workspace / "learnings" / "demo-shop" / "tests" / "cases.json"


async def _record(workspace: Path, endpoint: str, tmp_path: Path) -> dict[str, Any]:
    env = ego_env(tmp_path / "profiles", workspace=workspace)
    har = workspace / "learnings" / "demo-shop" / "tests" / "product.har"
    with DemoServer(port=0) as shop:
        result = await ego_async(
            "record",
            shop.url,
            "--run",
            "demo-shop",
            "get_product",
            "--arg",
            "id=3",
            "--har",
            str(har),
            "--settle",
            "0.3",
            "--endpoint",
            endpoint,
            env=env,
        )
        assert result.returncode == 0, result
        data: dict[str, Any] = result.json()
        data["shop_url"] = shop.url
    return data


async def test_record_run_records_the_page_and_the_tools_requests(
    workspace: Path, endpoint: str, tmp_path: Path, browser: ego.Browser
) -> None:
    tabs_before = len(await browser.tabs())
    data = await _record(workspace, endpoint, tmp_path)
    har = Har.load(Path(data["har"]))
    paths = [urlsplit(entry.request.url).path for entry in har.entries]
    assert "/" in paths  # the page
    assert "/api/products/3" in paths  # the tool's own fetch
    assert data["entries"] == len(har.entries)
    assert data["tool"] == "demo-shop/get_product"
    assert data["result"]["id"] == 3
    assert data["error"] is None
    assert data["case"] == {
        "name": "get_product as recorded",
        "har": "product.har",
        "url": data["shop_url"],
        "tool": "get_product",
        "args": {"id": 3},
        "expect": data["result"],
    }
    assert len(await browser.tabs()) == tabs_before  # no tab left in the attached browser
    # The case is in the site's tests/cases.json, whole: `ego test` runs it as it is.
    assert (data["cases_file"], data["case_replaced"]) == (str(_cases(workspace)), False)
    assert json.loads(_cases(workspace).read_text()) == {"cases": [data["case"]]}
    env = ego_env(tmp_path / "profiles", workspace=workspace)
    tested = await ego_async("test", "demo-shop", "--endpoint", endpoint, env=env)
    assert tested.returncode == 0, tested
    assert tested.json()["passed"] is True


async def test_test_update_writes_the_actual_result_after_showing_the_diff(
    workspace: Path, endpoint: str, tmp_path: Path
) -> None:
    data = await _record(workspace, endpoint, tmp_path)
    actual = data["result"]
    stale = {**actual, "name": "An Old Name"}
    case = data["case"]
    cases = {
        "cases": [
            {**case, "expect": stale},
            {
                **case,
                "name": "subset",
                "expect": None,
                "expect_subset": {"id": 3, "name": "Another"},
            },
            {**case, "name": "already right"},
        ]
    }
    del cases["cases"][1]["expect"]
    _cases(workspace).write_text(json.dumps(cases, indent=2) + "\n")
    env = ego_env(tmp_path / "profiles", workspace=workspace)

    # The shop is gone: the cases replay the HAR.
    failing = await ego_async("test", "demo-shop", "--endpoint", endpoint, env=env)
    assert failing.returncode == 3, failing
    assert failing.json()["failed"] == 2

    updated = await ego_async("test", "demo-shop", "--update", "--endpoint", endpoint, env=env)
    assert updated.returncode == 0, updated
    report = updated.json()
    assert report["not_updated"] == []
    assert {(u["case"], u["key"]) for u in report["updated"]} == {
        ("get_product as recorded", "expect"),
        ("subset", "expect_subset"),
    }
    # The diff came first (on stderr, as stdout holds the JSON report).
    assert '-  "name": "An Old Name",' in updated.stderr
    assert f'+  "name": {json.dumps(actual["name"])},' in updated.stderr
    written = json.loads(_cases(workspace).read_text())["cases"]
    assert written[0]["expect"] == actual
    assert written[1]["expect_subset"] == {"id": 3, "name": actual["name"]}
    assert written[2] == {**case, "name": "already right"}

    passing = await ego_async("test", "demo-shop", "--endpoint", endpoint, env=env)
    assert passing.returncode == 0, passing
    assert passing.json()["passed"] is True


async def test_test_update_leaves_a_case_without_a_result_alone(
    workspace: Path, endpoint: str, tmp_path: Path
) -> None:
    data = await _record(workspace, endpoint, tmp_path)
    case = {**data["case"], "expect_error": "NEEDS_LOGIN"}
    del case["expect"]
    _cases(workspace).write_text(json.dumps({"cases": [case]}))
    before = _cases(workspace).read_text()
    env = ego_env(tmp_path / "profiles", workspace=workspace)
    result = await ego_async("test", "demo-shop", "--update", "--endpoint", endpoint, env=env)
    assert result.returncode == 3, result
    assert result.json()["updated"] == []
    assert result.json()["not_updated"] == [
        "demo-shop/get_product as recorded: it did not return a result to expect"
    ]
    assert _cases(workspace).read_text() == before


@pytest.mark.chrome
async def test_a_session_recorded_with_no_browser_to_attach_to_says_how_to_reach_it(
    tmp_path: Path,
) -> None:
    env = ego_env(tmp_path / "profiles")
    har = tmp_path / "session.har"
    with DemoServer(port=0) as shop:
        args = ["record", "--session", "demo-shop", "--har", str(har), shop.url, "--no-json"]
        async with background(*args, env=env, cwd=tmp_path) as process:
            assert process.stderr is not None
            line = ""
            seen = []
            while "recording a session" not in line:
                raw = await asyncio.wait_for(process.stderr.readline(), 60)
                assert raw, f"ego record --session ended before it said it was recording: {seen}"
                line = raw.decode()
                seen.append(line)
            # Its own Chrome has no window: the line says how a script reaches the tab.
            assert "ego launch --headed" in line
            endpoint = line.split("--endpoint ", 1)[1].split(" ", 1)[0]
            tab_id = line.split(" in tab ", 1)[1].split(";", 1)[0]
            cart = shop.url_for("/cart")
            async with ego.connect(endpoint) as reached:
                tab = next(t for t in await reached.tabs() if t.target_id == tab_id)
                await tab.navigate(cart)
            process.send_signal(signal.SIGINT)
            out, err = await asyncio.wait_for(process.communicate(), 60)
            assert process.returncode == 0, err.decode()
    assert "recorded" in out.decode(), out
    urls = [e["request"]["url"] for e in json.loads(har.read_text())["log"]["entries"]]
    assert cart in urls
