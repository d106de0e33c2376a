"""A pool whose members are browser contexts of one Chrome (``contexts=True``), each logged in
as an account of its own from a saved state: several accounts side by side, nothing shared."""

from __future__ import annotations

import json
from pathlib import Path

import psutil
import pytest

import ego
from ego.learning.catalog.registry import Learnings
from tests.helpers.commands import ego_async, ego_env
from tests.helpers.learnings import make_site, tool
from tests.helpers.page_server import PageServer

ACCOUNTS = ("ann", "ben", "cat")
WHOAMI = "async () => ({who: localStorage.getItem('who'), cookie: document.cookie})\n"


def login_page(server: PageServer, user: str) -> str:
    return server.route(
        f"/pool/login/{user}",
        f"<title>{user}</title><script>localStorage.setItem('who', '{user}')</script>",
        headers={"Set-Cookie": f"user={user}; Path=/; Max-Age=3600"},
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"launch": 2, "storage_state": {"cookies": []}}, "storage_state needs contexts=True"),
        (
            {"launch": 2, "contexts": True, "storage_state": [{"cookies": []}]},
            "1 states for a pool of 2 members",
        ),
        ({"launch": 1, "contexts": True, "profiles": ["p"]}, "not in a profile"),
    ],
)
def test_pool_contexts_options_are_checked(options: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ego.BrowserPool(**options)  # type: ignore[arg-type]


@pytest.mark.chrome
async def test_a_pool_of_contexts_runs_several_accounts_side_by_side(
    browser: ego.Browser, server: PageServer, tmp_path: Path
) -> None:
    home = server.route("/pool/home", "<title>home</title>")
    states = []
    for user in ACCOUNTS:
        async with await browser.new_context() as context:
            await context.new_tab(login_page(server, user))
            path = tmp_path / f"{user}.json"
            await context.storage_state(path=path)
            states.append(path)
    make_site(
        tmp_path / "learnings",
        "pooled",
        domains=["127.0.0.1"],
        start_url=home,
        browser_tools={"whoami": tool(WHOAMI, description="who is logged in")},
    )
    pool = ego.BrowserPool(
        launch=len(ACCOUNTS),
        contexts=True,
        storage_state=states,
        per_browser=2,
        learnings=Learnings(roots=[tmp_path / "learnings"]),
    )
    async with pool:
        members = pool.members
        assert [m.source for m in members] == ["launch (context)"] * len(ACCOUNTS)
        # One Chrome for every account: each member is a context of it.
        [pid] = {m.pid for m in members}
        assert pid is not None
        contexts = {
            m.browser.context_id for m in members if isinstance(m.browser, ego.BrowserContext)
        }
        assert len(contexts) == len(ACCOUNTS)
        results = await pool.map("pooled", "whoami", [{}] * 30)
    assert all(item.ok for item in results), [item.error for item in results if not item.ok]
    crossed = [
        item
        for item in results
        if item.result
        != {"who": ACCOUNTS[item.browser], "cookie": f"user={ACCOUNTS[item.browser]}"}
    ]
    assert crossed == []
    assert {item.browser for item in results} == set(range(len(ACCOUNTS)))
    # Closing the pool ended its one Chrome.
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


@pytest.mark.chrome
async def test_ego_batch_with_contexts_runs_one_account_per_context(
    browser: ego.Browser, server: PageServer, tmp_path: Path
) -> None:
    home = server.route("/pool/home", "<title>home</title>")
    states = []
    for user in ACCOUNTS[:2]:
        async with await browser.new_context() as context:
            await context.new_tab(login_page(server, user))
            states.append(await context.storage_state(path=tmp_path / f"{user}.json"))
    workspace = tmp_path / "ws"
    make_site(
        workspace / "learnings",
        "pooled",
        domains=["127.0.0.1"],
        start_url=home,
        browser_tools={"whoami": tool(WHOAMI, description="who is logged in")},
    )
    inputs = tmp_path / "in.jsonl"
    inputs.write_text("{}\n" * 12)
    output = tmp_path / "out.jsonl"
    result = await ego_async(
        "batch",
        "pooled",
        "whoami",
        "--input",
        str(inputs),
        "--output",
        str(output),
        "--browsers",
        "2",
        "--contexts",
        "--storage-state",
        str(tmp_path / "ann.json"),
        "--storage-state",
        str(tmp_path / "ben.json"),
        "--json",
        env=ego_env(tmp_path / "profiles", workspace=workspace),
        cwd=tmp_path,
        timeout=180,
    )
    assert result.returncode == 0, result
    lines = [json.loads(line) for line in output.read_text().splitlines()]
    assert len(lines) == 12
    seen = {(line["result"]["who"], line["result"]["cookie"]) for line in lines}
    # Both accounts ran, each answer one account's whole (its storage and its cookie).
    assert seen == {("ann", "user=ann"), ("ben", "user=ben")}
    assert json.loads(result.stdout)["ok"] == 12
