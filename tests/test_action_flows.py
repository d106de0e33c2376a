"""Tools drafted from page actions: ``tab.record_actions()`` on the demo shop's order desk
(pages rendered on the server), ``ego suggest --actions``, the save gate, live runs."""

from __future__ import annotations

import asyncio
import json
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

import ego
from ego.demo import DemoServer
from ego.demo.desk import DESK_PASSWORD
from ego.errors import LearningError
from ego.learning.catalog.registry import Learnings
from ego.learning.suggest.flow import load_flow
from ego.site import Site
from tests.helpers.browsers import websocket_url
from tests.helpers.commands import background, ego_async, ego_env, http_endpoint
from tests.helpers.desk_flows import record_order, record_search
from tests.helpers.page_server import PageServer
from tests.helpers.paths import ROOT

pytestmark = pytest.mark.chrome


@pytest.fixture(scope="module")
def shop() -> Iterator[DemoServer]:
    with DemoServer(port=0) as server:
        yield server


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
    assert typed.selector == 'testid="desk-customer"'  # its test id, as selector_for names it
    assert typed.element is not None
    assert (typed.element["role"], typed.element["name"]) == ("textbox", "Customer name")
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


def no_secret_in(folder: Path) -> list[Path]:
    """The files under ``folder`` holding the desk's password."""
    return [
        file
        for file in folder.rglob("*")
        if file.is_file() and DESK_PASSWORD.encode() in file.read_bytes()
    ]


async def test_a_search_that_posts_is_drafted_saved_and_runs_live(
    browser: ego.Browser, tab: ego.Tab, shop: DemoServer, tmp_path: Path
) -> None:
    # Its heal, once the button is renamed, is test_action_heal's: the same flow, drafted and
    # kept the same way.
    await record_search(tab, shop, tmp_path / "search.actions.json")
    learnings = Learnings(workspace=tmp_path / "ws")
    report = ego.suggest_actions("desk", tmp_path / "search.actions.json", learnings=learnings)
    (draft,) = report.drafts
    assert draft.kind == "python"
    assert draft.side_effect == "irreversible"  # the form posts: a write unless said
    assert any("POST /desk/results" in note for note in draft.notes)
    assert draft.args["words"]["examples"] == ["desk"]
    assert "# step 4: click '[data-testid=desk-search-submit]' (button \"Look up\")" in draft.source
    assert "await tab.click('testid=\"desk-search-submit\"')" in draft.source
    site = Site(browser, learnings)
    (checked,) = await site.check_draft("desk", draft.tool)
    assert checked.passed, checked.reason
    saved = await site.save_draft("desk", draft.tool, side_effect="read")
    assert saved.file.name == "desk_search.py"
    assert learnings.site("desk").python_tools["desk_search"].side_effect == "read"

    shown = await site.run_tool("desk", "desk_search", {"words": "kettle", "category": "kitchen"})
    assert "1 result(s) for “kettle”" in shown
    assert "Pour-Over Coffee Kettle: 38.90" in shown


async def test_a_three_page_order_is_drafted_saved_and_places_an_order_live(
    browser: ego.Browser, tab: ego.Tab, shop: DemoServer, tmp_path: Path
) -> None:
    await record_order(tab, shop, tmp_path / "order.actions.json")
    learnings = Learnings(workspace=tmp_path / "ws")
    report = ego.suggest_actions("desk", tmp_path / "order.actions.json", learnings=learnings)
    (draft,) = report.drafts
    assert draft.side_effect == "irreversible"
    assert set(draft.args) == {"customer_name", "email", "product", "quantity", "desk_password"}
    assert "examples" not in draft.args["desk_password"]
    assert "wait_for(url='/desk/order/details'" in draft.source
    site = Site(browser, learnings)
    saved = await site.save_draft("desk", draft.tool, side_effect="write")
    assert saved.cases is not None
    assert [c.passed for c in saved.cases.cases] == [True]
    assert no_secret_in(tmp_path) == []

    placed = len(shop.desk_orders)
    args = {
        "customer_name": "Grace Hopper",
        "email": "grace@example.org",
        "product": "10",
        "quantity": "3",
        "desk_password": DESK_PASSWORD,
    }
    shown = await site.run_tool("desk", "desk_order", args)
    order = shop.desk_orders[-1]
    assert len(shop.desk_orders) == placed + 1
    assert order["customer"] == "Grace Hopper"
    assert f"Order {order['id']} placed for Grace Hopper: 3 x Mechanical Desk Clock." in shown

    shop.pages_changed = True  # the email field moves to the second page: nothing near it
    try:
        healed = await site.heal_tool("desk", "desk_order")
    finally:
        shop.pages_changed = False
    (gone,) = [c for c in healed.changes if c["kind"] == "selector gone"]
    assert (gone["step"], gone["old"]) == (3, 'testid="desk-email"')
    assert "new" not in gone
    assert "nothing like it is on that page" in gone["detail"]
    assert healed.candidate == "none"
    assert "not healed: step 3: no element near the one that went" in "\n".join(healed.notes)
    assert "no candidate: edit the tool's file" in healed.format()
    with pytest.raises(LearningError, match="edit the tool's file"):
        await site.check_candidate("desk", "desk_order")


async def test_select_takes_the_role_selector_selector_for_gives(
    tab: ego.Tab, server: PageServer
) -> None:
    await tab.navigate(
        server.route(
            "/actions/select",
            '<label for="c">Colour</label><select id="c"><option>red</option>'
            "<option>blue</option></select>",
        )
    )
    ref = (await tab.snapshot(find="Colour")).split("[ref=")[1].split("]")[0]
    selector = await tab.selector_for(ref)
    assert selector == 'role=combobox[name="Colour"]'
    assert await tab.select(selector, "blue") == ["blue"]


async def test_ego_suggest_actions_drafts_from_a_recording_on_the_command_line(
    tab: ego.Tab, shop: DemoServer, tmp_path: Path
) -> None:
    flow = tmp_path / "search.actions.json"
    await record_search(tab, shop, flow)
    env = ego_env(tmp_path / "profiles", workspace=tmp_path / "ws")
    args = ["suggest", "desk", "--actions", str(flow), "--name", "look_up"]
    suggested = await ego_async(*args, env=env)
    assert suggested.returncode == 0, suggested
    (found,) = suggested.json()["found"]
    assert found["tool"] == "look_up"
    assert found["side_effect"] == "irreversible"
    assert (tmp_path / "ws/learnings/.drafts/desk/look_up/look_up.py").is_file()
    wrong = await ego_async("suggest", "desk", "--actions", str(flow), "--har", str(flow), env=env)
    assert wrong.returncode != 0
    assert "--har" in wrong.stderr


async def test_actions_heard_in_the_page_make_the_same_flow(
    tab: ego.Tab, shop: DemoServer, tmp_path: Path
) -> None:
    path = tmp_path / "heard.actions.json"
    async with tab.record_actions(path, source="page"):
        await tab.navigate(shop.url_for("/desk/order"))
        await tab.type("#customer", "Ada Lovelace")
        await tab.type("#email", "ada@example.org")
        await tab.click('role=button[name="Next"]')
        await tab.wait_for(url="/desk/order/details")
        await tab.select("#product", "7")
        await tab.type("#password", DESK_PASSWORD)
        await tab.press("Enter")
        await tab.wait_for(url="/desk/order/done")
    flow = load_flow(path)
    assert [(s.verb, s.selector) for s in flow.steps] == [
        ("navigate", None),
        ("type", 'role=textbox[name="Customer name"]'),
        ("type", 'role=textbox[name="Email"]'),
        ("click", 'role=button[name="Next"]'),
        ("select", 'role=combobox[name="Product"]'),
        ("type", 'role=textbox[name="Desk password"]'),
        ("press", None),
    ]
    assert flow.steps[0].target == shop.url_for("/desk/order")
    assert flow.steps[2].value == "ada@example.org"
    assert flow.steps[4].value == "7"
    assert flow.steps[5].secret
    assert DESK_PASSWORD not in path.read_text(encoding="utf-8")


async def test_ego_record_session_keeps_the_actions_a_script_makes_in_its_tab(
    ported_browser: ego.Browser, shop: DemoServer, tmp_path: Path
) -> None:
    env = ego_env(tmp_path / "profiles", workspace=tmp_path / "ws")
    har, flow = tmp_path / "desk.har", tmp_path / "desk.actions.json"
    args = ["record", "--session", "desk", "--har", str(har), "--actions", str(flow)]
    args += [shop.url_for("/desk/search"), "--no-json", "--until-url", "*/desk/results*"]
    args += ["--endpoint", http_endpoint(websocket_url(ported_browser))]
    async with background(*args, env=env, cwd=ROOT) as process:
        assert process.stderr is not None
        line = ""
        while "recording a session" not in line:
            raw = await asyncio.wait_for(process.stderr.readline(), 60)
            assert raw, "ego record --session ended before it said it was recording"
            line = raw.decode()
        tab_id = line.split(" in tab ", 1)[1].split(";", 1)[0]
        tab = next(t for t in await ported_browser.tabs() if t.target_id == tab_id)
        await tab.type("#words", "lamp")  # another process's verbs, heard in the page
        await tab.click('role=button[name="Look up"]')
        out, err = await asyncio.wait_for(process.communicate(), 60)
        assert process.returncode == 0, err.decode()
    assert "ego suggest desk --actions" in out.decode()
    recorded = load_flow(flow)
    assert [(s.verb, s.value) for s in recorded.steps] == [
        ("navigate", None),
        ("type", "lamp"),
        ("click", None),
    ]
    assert recorded.steps[2].selector == 'role=button[name="Look up"]'
    assert recorded.har_path() == har


async def test_a_step_in_an_iframe_keeps_a_selector_the_tab_finds_it_by(
    tab: ego.Tab, server: PageServer, tmp_path: Path
) -> None:
    """A frame's verb is recorded with a frame-qualified selector: the drafted tool acts on
    the tab."""
    inner = server.route("/flows/inner", '<button id="deep" data-testid="deep">Deep</button>')
    url = server.route("/flows/outer", f'<iframe id="inner" src="{inner}"></iframe>')
    await tab.navigate(url)
    frame = await tab.frame(selector="#inner")
    async with tab.record_actions(tmp_path / "frame.actions.json") as recording:
        await frame.click("#deep")
    (step,) = recording.flow.steps
    assert step.target == "#deep"
    assert step.checked
    assert step.selector is not None
    assert " >> " in step.selector
    await tab.click(step.selector)  # the tab finds the button by it


async def test_actions_a_flow_cannot_replay_are_kept_as_left_out(
    tab: ego.Tab, server: PageServer, tmp_path: Path
) -> None:
    page = server.route(
        "/flows/gestures",
        "<title>gestures</title><input id=q aria-label=Words>"
        "<p id=cell ondblclick=\"this.textContent='editing'\">cell</p>",
    )
    path = tmp_path / "gestures.actions.json"
    async with tab.record_actions(path):
        await tab.navigate(page)
        await tab.type("#q", "lamp")
        await tab.dblclick("#cell")
        await tab.click("#cell", click_count=2)  # a plain click would be another act
        await tab.click("#cell", button="right", modifiers=["Shift"])
        await tab.click("#cell")
        await tab.mouse.wheel(0, 40)
        await tab.wait_for(selector="#cell")
    flow = load_flow(path)
    assert [step.verb for step in flow.steps] == ["navigate", "type", "click"]
    assert flow.left_out == [
        "dblclick #cell",
        "click #cell (click_count=2)",
        "click #cell (button='right', modifiers=['Shift'])",
        "mouse.wheel",
    ]
