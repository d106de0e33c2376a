"""A flow of page actions that never leaves its page (a converter whose script asks an API
and writes the answer in place) is drafted, passes its offline case replayed from the
recording, is kept through the save gate and, run live with other values, returns what the
page shows for them."""

from __future__ import annotations

from pathlib import Path

import pytest

import ego
from ego.learning.catalog.registry import Learnings
from ego.learning.suggest.flow import load_flow, outline_text
from ego.site import Site
from tests.helpers.page_server import PageServer

pytestmark = pytest.mark.chrome

RATES = {"EUR": 0.5, "GBP": 0.25}

PAGE = """<!doctype html><title>Converter</title>
<main>
  <label for=amount>Amount in USD</label> <input id=amount inputmode=decimal>
  <label for=to>Currency</label>
  <select id=to><option value=EUR>Euro</option><option value=GBP>Pound</option></select>
  <button id=convert type=button>Convert</button>
  <section id=answer></section>
</main>
<script>
convert.addEventListener('click', async () => {
  const to = document.getElementById('to').value;
  const {rate} = await (await fetch('/one-page/api/rate?to=' + to)).json();
  const out = document.createElement('a');  // a result to follow, named by what it says
  out.id = 'out';
  out.href = '#' + to;
  out.textContent = `${amount.value} USD is ${(Number(amount.value) * rate).toFixed(2)} ${to}`;
  answer.replaceChildren(out);
});
</script>"""


def serve(server: PageServer) -> str:
    for currency, rate in RATES.items():
        server.route(
            f"/one-page/api/rate?to={currency}",
            f'{{"rate": {rate}}}',
            content_type="application/json",
        )
    return server.route("/one-page/convert", PAGE)


async def test_a_one_page_flow_is_drafted_kept_and_returns_what_the_page_shows(
    browser: ego.Browser, tab: ego.Tab, server: PageServer, tmp_path: Path
) -> None:
    url = serve(server)
    path = tmp_path / "convert.actions.json"
    async with tab.record_actions(path, har=True):
        await tab.navigate(url)
        await tab.type("#amount", "10")
        await tab.select("#to", "EUR")
        await tab.click("#convert")
        await tab.wait_for(selector="#out")
        await tab.snapshot(selector="#out")
    flow = load_flow(path)
    assert [step.verb for step in flow.steps] == ["navigate", "type", "select", "click"]
    assert flow.read is not None
    assert "10 USD is 5.00 EUR" in flow.read.text

    learnings = Learnings(workspace=tmp_path / "ws")
    report = ego.suggest_actions("converter", path, learnings=learnings, name="convert")
    (draft,) = report.drafts
    assert draft.side_effect == "read"  # a GET asked from the page: nothing was sent
    assert set(draft.args) == {"amount_in_usd", "currency"}  # named by the fields' labels
    site = Site(browser, learnings)
    (checked,) = await site.check_draft("converter", "convert")
    assert checked.passed, checked.reason
    await site.save_draft("converter", "convert")

    args = {"amount_in_usd": "4", "currency": "GBP"}
    shown = await site.run_tool("converter", "convert", args)
    assert "4 USD is 1.00 GBP" in shown
    await tab.navigate(url)
    await tab.type("#amount", "4")
    await tab.select("#to", "GBP")
    await tab.click("#convert")
    await tab.wait_for(selector="#out")
    assert outline_text(await tab.snapshot(selector="#out")) in shown


async def test_what_the_agent_read_by_ref_is_kept_by_a_selector_not_its_text(
    tab: ego.Tab, server: PageServer, tmp_path: Path
) -> None:
    url = serve(server)
    path = tmp_path / "by-ref.actions.json"
    async with tab.record_actions(path):
        await tab.navigate(url)
        await tab.type("#amount", "10")
        await tab.click("#convert")
        await tab.wait_for(selector="#out")
        outline = await tab.snapshot(find="USD is")
        ref = outline.split("[ref=")[1].split("]")[0]  # the link's, as an agent reads it
        await tab.snapshot(selector=f"ref={ref}")
    flow = load_flow(path)
    assert flow.read is not None
    assert "10 USD is 5.00 EUR" in flow.read.text
    assert flow.read.selector == "#out"  # by its id: its text is the answer, not its name
    clicked = flow.steps[-1]
    assert clicked.selector == 'role=button[name="Convert"]'  # an acted-on node keeps its name
