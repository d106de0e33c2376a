"""The health report as a person sees it: ``ego report`` writes one page that Chromium opens
from disk with every request but ``file:`` refused. The tool that fails comes first, its
charts have one line per version, its last failures link to their traces, and the version a
heal promoted says so; ``--json`` gives the same data. The picture in docs/ is taken here.

The record is the one a real session leaves: runs of an older version of the demo shop's
search on earlier days (written to the run record as its writer would), then today's runs of
the current one, live, through the shop's broken-site switch, each failure traced.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import ego
from ego.cli import cli
from ego.demo import DemoServer
from ego.errors import SkillBrokenError
from ego.learning.health.recorder import flush
from ego.learning.health.store import Run, connect, store_path, write_runs
from ego.learning.health.view import SUSPECT_AFTER, health_table
from ego.learning.plan.history import archive_file, content_hash, keep_provenance
from ego.report import report_data, write_report
from ego.trace.failures import FailureTraces
from tests.helpers.health import isolated_store
from tests.helpers.paths import ROOT
from tests.helpers.trace_demo import offline_tab

pytestmark = pytest.mark.chrome

#: The picture of the report docs/tracing.md and the README show.
PICTURE = ROOT / "docs" / "images" / "health-report.png"


def picture_path(scratch: Path) -> Path:
    """Where the test's screenshot goes: the docs' picture only when asked
    (EGO_WRITE_DOC_IMAGES=1), so a test run leaves the checkout as it was."""
    return PICTURE if os.environ.get("EGO_WRITE_DOC_IMAGES") == "1" else scratch / PICTURE.name


DAY = 24 * 3600


@pytest.fixture(scope="module")
def shop() -> Iterator[DemoServer]:
    server = DemoServer(port=0).start()
    yield server
    server.close()


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    yield from isolated_store(monkeypatch, tmp_path / "state")


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace holding the demo shop's learnings, whose search has an older version in
    its history and a current one a heal promoted."""
    root = tmp_path / "workspace"
    site = root / "learnings" / "demo-shop"
    shutil.copytree(ROOT / "learnings" / "demo-shop", site)
    manifest = json.loads((site / "manifest.json").read_text())
    entry = manifest["browserTools"]["search_products"]
    source = site / entry["path"]
    archive_file(site, "search_products", source, entry)
    healed = source.read_text() + "\n// healed: the search moved\n"
    source.write_text(healed)
    keep_provenance(
        site,
        "search_products",
        content_hash(healed.encode()),
        {
            "healed_at": "2026-01-05T10:00:00+00:00",
            "replaced_version": "the version before",
            "changed": ["/api/products moved"],
            "cases_passed": ["search_lamp", "search_desk"],
        },
    )
    monkeypatch.setenv("EGO_WORKSPACE", str(root))
    return root


@pytest.fixture
async def context(browser: ego.Browser, shop: DemoServer) -> AsyncIterator[Any]:
    async with await browser.new_context() as made:
        yield made


async def a_record(
    learnings: ego.Learnings, context: Any, shop: DemoServer, traces: Path
) -> dict[str, str]:
    """The runs of the older version on four earlier days, then today's live ones: two pass,
    then the shop breaks and the search fails until it is suspect, each failure traced."""
    versions = {row.version: row.health.version for row in
                health_table(learnings, "demo-shop", "search_products")}  # fmt: skip
    older = next(label for label in versions if label != "current")
    now = time.time()
    runs = []
    for days_ago, (ok, failed) in zip(
        range(6, 2, -1), [(5, 0), (4, 1), (6, 0), (3, 2)], strict=True
    ):
        at = now - days_ago * DAY
        runs += [Run("demo-shop", "search_products", versions[older], "OK", "", at + i, 0.05,
                     "batch") for i in range(ok)]  # fmt: skip
        runs += [Run("demo-shop", "search_products", versions[older], "JS_ERROR",
                     "TypeError: products is undefined", at + 60 + i, 0.05, "batch")
                 for i in range(failed)]  # fmt: skip
    runs.append(Run("demo-shop", "search_products", versions["current"], "NEEDS_LOGIN",
                    "NEEDS_LOGIN: logged out", now - 2 * DAY, 0.04, "mcp"))  # fmt: skip
    conn = connect(store_path(), create=True)
    assert conn is not None
    write_runs(conn, runs)
    conn.close()
    site = ego.Site(context, learnings)
    site.set_start_url("demo-shop", shop.url)
    tab = await context.new_tab(shop.url)
    async with FailureTraces(traces):
        for query in ("lamp", "desk"):
            await site.run_browser_tool("demo-shop", "search_products", {"query": query}, tab=tab)
        shop.api_changed = True
        try:
            for _ in range(SUSPECT_AFTER):
                with pytest.raises(SkillBrokenError):
                    await site.run_browser_tool(
                        "demo-shop", "search_products", {"query": "lamp"}, tab=tab
                    )
        finally:
            shop.api_changed = False
    assert flush()
    return {"older": older, **versions}


async def test_the_report_shows_the_failing_tool_first_with_a_line_per_version_and_its_traces(
    browser: ego.Browser,
    context: Any,
    shop: DemoServer,
    workspace: Path,
    store: Path,
    tmp_path: Path,
) -> None:
    learnings = ego.Learnings(workspace=workspace)
    versions = await a_record(learnings, context, shop, tmp_path / "traces")
    data = report_data(learnings)
    first = data.tools[0]
    assert (first.site_id, first.tool, first.suspect) == ("demo-shop", "search_products", True)
    assert [t.tool for t in data.suspect] == ["search_products"]
    current = first.versions[0]
    assert current.version == "current"
    assert current.health.suspect
    assert current.promoted is not None
    assert current.promoted["cases_passed"] == ["search_lamp", "search_desk"]
    older = next(v for v in first.versions if v.version == versions["older"])
    assert [d.runs for d in older.days] == [5, 5, 6, 5]
    assert [d.failures for d in older.days] == [0, 1, 0, 2]
    assert sum(d.needs_login for d in current.days) == 1
    traced = [f for f in first.failures if f.trace is not None]
    assert len(traced) == SUSPECT_AFTER  # each of today's failures has its trace ...
    assert all(f.outcome == "SKILL_BROKEN" for f in traced)
    untraced = next(f for f in first.failures if f.trace is None)
    assert untraced.outcome == "JS_ERROR"  # ... the older version's have none

    page = write_report(data, tmp_path / "report.html")
    async with offline_tab(browser) as (tab, refused):
        await tab.navigate(page.as_uri())
        shown = await tab.evaluate(
            """(() => {
              const first = document.querySelector('section.tool');
              const series = (metric) => [...first.querySelectorAll(
                `svg.chart[data-metric="${metric}"] g.series`)].map(g => g.dataset.version);
              return {
                tool: first.dataset.tool,
                suspect: first.querySelector('.badge.suspect')?.innerText,
                runs: series('runs'), failures: series('failures'),
                needs_login: series('needs_login'),
                rows: [...first.querySelectorAll('tbody tr')].map(tr => tr.dataset.version),
                promoted: first.querySelector('.badge.promoted')?.innerText,
                links: [...first.querySelectorAll('a.trace')].map(a => a.getAttribute('href')),
              };
            })()"""
        )
        assert shown["tool"] == "demo-shop/search_products"
        assert shown["suspect"] == "SUSPECT"
        assert sorted(shown["runs"]) == sorted(["current", versions["older"]])
        assert sorted(shown["failures"]) == sorted(shown["runs"])  # one line per version
        assert sorted(shown["needs_login"]) == sorted(shown["runs"])
        assert shown["rows"] == ["current", versions["older"]]
        assert shown["promoted"] == "PROMOTED BY A HEAL"
        assert len(shown["links"]) == SUSPECT_AFTER
        shot = picture_path(tmp_path)
        await tab.screenshot(path=shot)
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert refused == []
        # A failure's link opens its trace's viewer, written beside the report.
        await tab.click("section.tool a.trace")
        await tab.wait_for(selector="#timeline .step.error")
        assert tab.url.startswith((tmp_path / "report-traces").as_uri())
        assert refused == []


def test_report_json_gives_the_same_data(workspace: Path, store: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["report", "--json", "--workspace", str(workspace)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    names = [(t["site_id"], t["tool"]) for t in data["tools"]]
    assert ("demo-shop", "search_products") in names
    search = data["tools"][names.index(("demo-shop", "search_products"))]
    assert search["versions"][0]["version"] == "current"
    assert search["versions"][0]["promoted"]["healed_at"] == "2026-01-05T10:00:00+00:00"
    out = tmp_path / "page.html"
    written = CliRunner().invoke(cli, ["report", "--out", str(out), "--workspace", str(workspace)])
    assert written.exit_code == 0, written.output
    assert json.loads(written.output)["report"] == str(out)
    assert "demo-shop/search_products" in out.read_text()  # no run yet: listed as such
    assert oct(out.stat().st_mode & 0o777) == "0o600"


def test_the_reports_picture_is_in_the_docs() -> None:
    assert PICTURE.is_file()
    assert PICTURE.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
