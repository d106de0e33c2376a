"""Tools drafted from page actions: ``tab.record_actions()`` on the demo shop's order desk
(pages rendered on the server), ``ego suggest --actions``, the save gate, live runs."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

import ego
from ego.demo import DemoServer
from ego.demo.desk import DESK_PASSWORD
from ego.learning.suggest.flow import load_flow

pytestmark = pytest.mark.chrome


@pytest.fixture(scope="module")
def shop() -> Iterator[DemoServer]:
    with DemoServer(port=0) as server:
        yield server


async def record_search(tab: ego.Tab, shop: DemoServer, path: Path) -> None:
    async with tab.record_actions(path, har=True):
        await tab.navigate(shop.url_for("/desk/search"))
        await tab.type("#words", "desk")
        await tab.select("#category", "office")
        await tab.click("[data-testid=desk-search-submit]")
        await tab.wait_for(url="/desk/results")
        await tab.snapshot(selector="#results")


async def record_order(tab: ego.Tab, shop: DemoServer, path: Path) -> None:
    async with tab.record_actions(path, har=True):
        await tab.navigate(shop.url_for("/desk/order"))
        await tab.type("#customer", "Ada Lovelace")
        await tab.type("#email", "ada@example.org")
        await tab.click('role=button[name="Next"]')
        await tab.wait_for(url="/desk/order/details")
        await tab.select("#product", "7")
        await tab.type("#quantity", "2")
        await tab.type("#password", DESK_PASSWORD)
        await tab.click("[data-testid=desk-place]")
        await tab.wait_for(url="/desk/order/done")
        await tab.snapshot(selector="#confirmation")


async def test_record_actions_keeps_steps_selectors_values_and_the_read(
    tab: ego.Tab, shop: DemoServer, tmp_path: Path
) -> None:
    path = tmp_path / "order.actions.json"
    await record_order(tab, shop, path)
    flow = load_flow(path)
    assert [step.verb for step in flow.steps] == [
        "navigate", "type", "type", "click", "select", "type", "type", "click",
    ]  # fmt: skip
    typed = flow.steps[1]
    assert typed.target == "#customer"
    assert typed.value == "Ada Lovelace"
    assert typed.selector == 'role=textbox[name="Customer name"]'
    assert flow.steps[3].url.endswith("/desk/order")
    assert flow.steps[4].url.endswith("/desk/order/details")
    password = flow.steps[6]
    assert password.secret
    assert password.value == "REDACTED"
    assert flow.read is not None
    assert "Order D-1 placed for Ada Lovelace" in flow.read.text
    assert flow.end_url.endswith("/desk/order/done")
    har = flow.har_path()
    assert har is not None
    assert har.is_file()
    for file in (path, har):
        assert stat.S_IMODE(file.stat().st_mode) == 0o600
        assert DESK_PASSWORD not in file.read_text(encoding="utf-8")
    assert json.loads(path.read_text())["secrets"] == ["Desk password"]
