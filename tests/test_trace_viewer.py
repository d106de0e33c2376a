"""The trace viewer as a person sees it: one HTML file opened from disk in Chromium with every
request but ``file:`` and ``data:`` refused. The timeline lists the steps in order, a click on
a step shows its screenshot and its network lines, the failing step is marked; the picture of
it in docs/ is taken here.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

import ego
from ego.cli import cli
from ego.demo import DemoServer
from ego.trace.viewer import write_viewer
from tests.helpers.paths import ROOT
from tests.helpers.trace_demo import DemoTrace, offline_tab, trace_demo_session

pytestmark = pytest.mark.chrome

#: The picture of the viewer docs/tracing.md and the README show.
PICTURE = ROOT / "docs" / "images" / "trace-viewer.png"


def picture_path(scratch: Path) -> Path:
    """Where the test's screenshot goes: the docs' picture only when asked
    (EGO_WRITE_DOC_IMAGES=1), so a test run leaves the checkout as it was."""
    return PICTURE if os.environ.get("EGO_WRITE_DOC_IMAGES") == "1" else scratch / PICTURE.name


@pytest.fixture(scope="module")
def shop() -> Iterator[DemoServer]:
    server = DemoServer(port=0).start()
    yield server
    server.close()


@pytest.fixture(scope="module")
async def viewer(
    browser: ego.Browser, shop: DemoServer, tmp_path_factory: pytest.TempPathFactory
) -> tuple[DemoTrace, Path]:
    folder = tmp_path_factory.mktemp("viewer")
    trace = await trace_demo_session(browser, shop, folder / "demo.trace.jsonl")
    return trace, write_viewer(trace.path)


async def texts(tab: ego.Tab, selector: str) -> list[str]:
    found: list[str] = await tab.evaluate(
        f"[...document.querySelectorAll({json.dumps(selector)})].map(e => e.innerText.trim())"
    )
    return found


async def test_the_timeline_lists_the_steps_in_order_and_marks_the_failure(
    browser: ego.Browser, viewer: tuple[DemoTrace, Path], tmp_path: Path
) -> None:
    trace, page = viewer
    assert page == trace.path.with_name("demo.html")
    async with offline_tab(browser) as (tab, refused):
        await tab.navigate(page.as_uri())
        verbs = await texts(tab, "#timeline .step .verb")
        assert verbs == trace.verbs
        numbers = await texts(tab, "#timeline .step .number")
        assert numbers == [f"{n}." for n in range(1, len(verbs) + 1)]
        marked = await texts(tab, "#timeline .step.error")
        assert len(marked) == 1
        assert marked[0].startswith(f"{len(verbs)}.")
        assert "✕" in marked[0]
        # The failure is the step shown first: its error and outcome are on the page.
        heading = (await texts(tab, "#detail h2"))[0]
        assert heading == f"{len(verbs)}. run_tool demo-shop/search_products"
        error = (await texts(tab, "#detail .error-box"))[0]
        assert error.startswith("SkillBrokenError: SKILL_BROKEN from demo-shop/search_products")
        assert "404" in " ".join(await texts(tab, "#detail table.network tr.bad"))
        shot = picture_path(tmp_path)
        await tab.screenshot(path=shot)
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert refused == []


async def test_selecting_a_step_shows_its_screenshot_and_its_network_lines(
    browser: ego.Browser, viewer: tuple[DemoTrace, Path]
) -> None:
    _, page = viewer
    async with offline_tab(browser) as (tab, refused):
        await tab.navigate(page.as_uri())
        await tab.click('#timeline .step[data-step="2"]')  # a person's click
        assert (await texts(tab, "#detail h2"))[0].startswith("2. click ")
        assert (
            await tab.evaluate(
                "document.querySelector('#timeline .step[data-step=\"2\"]')"
                ".getAttribute('aria-selected')"
            )
            == "true"
        )
        image = await tab.evaluate(
            "(() => { const img = document.querySelector('#detail .shot img');"
            " return {src: img.src.slice(0, 23), shown: img.complete && img.naturalWidth}; })()"
        )
        assert image["src"] == "data:image/jpeg;base64,"
        assert image["shown"] > 0  # decoded: a person sees it
        rows = await texts(tab, "#detail table.network tr.request")
        assert any("/product/1" in row and "200" in row for row in rows)
        assert any("/api/products/1" in row for row in rows)
        assert "link" in (await texts(tab, "#detail .facts"))[0]
        await tab.press("ArrowDown")  # the keys move along the timeline
        assert (await texts(tab, "#detail h2"))[0].startswith("3. navigate ")
        assert refused == []


def test_show_trace_writes_the_viewer_where_asked(
    viewer: tuple[DemoTrace, Path], tmp_path: Path
) -> None:
    trace, _ = viewer
    out = tmp_path / "bug-report.html"
    result = CliRunner().invoke(cli, ["show-trace", str(trace.path), "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {"trace": str(trace.path), "viewer": str(out),
                                         "opened": False}  # fmt: skip
    html = out.read_text()
    assert "<script src" not in html
    assert "<link" not in html
    assert "http://" not in html.split('id="trace-data"')[0]  # nothing to fetch before the data
    assert oct(out.stat().st_mode & 0o777) == "0o600"


def test_show_trace_says_a_file_is_no_trace(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("not a trace\n")
    result = CliRunner().invoke(cli, ["show-trace", str(notes), "--no-json"])
    assert result.exit_code != 0
    assert "is not a trace" in result.output


def test_the_viewers_picture_is_in_the_docs() -> None:
    assert PICTURE.is_file()
    assert PICTURE.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
