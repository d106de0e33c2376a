"""Learning tests: cases.json against replayed HARs, pass and fail, never a hang."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

import ego
from ego.casetests import add_case, load_cases, run_learning_tests
from ego.errors import InvalidCasesError
from ego.learning.catalog.registry import Learnings, project_learnings_dir
from ego.replay import Har, build_entry
from tests.helpers.learnings import make_site, tool

SHIPPED = ("x-com", "google-com", "wikipedia")


async def test_shipped_learnings_pass_offline(browser: ego.Browser) -> None:
    learnings = Learnings(roots=[project_learnings_dir()])
    report = await run_learning_tests(browser, learnings, SHIPPED)

    assert report.failures == [], report.format()
    assert report.passed
    # Every tool of these sites has at least one case.
    assert report.uncovered == {}
    for site_id in SHIPPED:
        manifest = learnings.site(site_id)
        ran = {r.tool for r in report.results if r.site_id == site_id}
        assert ran == set(manifest.browser_tools) | set(manifest.python_tools)
    # Nothing reached for the network: strict replay reported no unmatched request.
    assert all(not r.unmatched for r in report.results)
    # The irreversible post ran (confirmed) against the recorded compose page.
    post = next(r for r in report.results if r.tool == "post_from_active_element" and r.result)
    assert post.result["status"] == "posted"


async def test_the_demo_shop_ships_offline_cases_of_its_read_tools(browser: ego.Browser) -> None:
    learnings = Learnings(roots=[project_learnings_dir()])
    report = await run_learning_tests(browser, learnings, ["demo-shop"])
    assert report.untested == [], report.format()
    shop = [r for r in report.results if r.site_id == "demo-shop"]
    assert all(r.passed for r in shop), report.format()
    assert {r.tool for r in shop} >= {"list_products", "get_product", "search_products", "get_cart"}
    assert any(r.tool == "get_orders" for r in shop)  # NEEDS_LOGIN, expected as such
    assert all(not r.unmatched for r in shop)


def _copy_site(tmp_path: Path, site_id: str) -> Path:
    target = tmp_path / "learnings" / site_id
    shutil.copytree(project_learnings_dir() / site_id, target)
    return target


def _edit_har(path: Path, url: str, old: str, new: str) -> None:
    har = Har.load(path)
    entry = next(e for e in har.entries if e.request.url == url)
    body = entry.response.body().decode("utf-8")
    assert old in body
    entry.response.content.text = body.replace(old, new)
    entry.response.content.encoding = None
    har.save(path)


async def test_markup_change_shows_up_as_skill_broken(browser: ego.Browser, tmp_path: Path) -> None:
    # X renamed its timeline column: the recorded page no longer has the hook the tool uses.
    site = _copy_site(tmp_path, "x-com")
    _edit_har(
        site / "tests" / "x-home.har",
        "https://x.com/home",
        'data-testid="primaryColumn"',
        'data-testid="primaryColumnV2"',
    )
    report = await run_learning_tests(
        browser,
        Learnings(roots=[tmp_path / "learnings"]),
        ["x-com"],
        names={"home timeline: posts, a repost with media, an ad"},
    )
    [result] = report.results
    assert not result.passed
    assert result.error == "SKILL_BROKEN"
    assert result.reason.startswith("SKILL_BROKEN")
    assert "primaryColumn" in result.reason
    assert not report.passed


async def test_content_change_shows_up_as_a_failed_expectation(
    browser: ego.Browser, tmp_path: Path
) -> None:
    site = _copy_site(tmp_path, "wikipedia")
    _edit_har(
        site / "tests" / "wikipedia-article.har",
        "https://en.wikipedia.org/wiki/Python_(programming_language)",
        '<h2 id="History">History</h2>',
        '<h2 id="Origins">Origins</h2>',
    )
    report = await run_learning_tests(
        browser,
        Learnings(roots=[tmp_path / "learnings"]),
        ["wikipedia"],
        names={"outline of the article in the tab"},
    )
    [result] = report.results
    assert not result.passed
    assert result.error is None
    assert result.reason == (
        'result differs from expect at /sections/0/title: expected "History", got "Origins"'
    )


HANGS = "async (args) => new Promise(() => {})\n"
ESCAPES = "async (args) => (await fetch('/not-recorded')).status\n"


def _tiny_site(root: Path, cases: list[dict[str, Any]], har: Har) -> Path:
    site = make_site(
        root,
        "tiny",
        domains=["tiny.replay.test"],
        browser_tools={"hangs": tool(HANGS), "escapes": tool(ESCAPES)},
    )
    (site / "tests").mkdir()
    har.save(site / "tests" / "tiny.har")
    (site / "tests" / "cases.json").write_text(json.dumps({"cases": cases}), encoding="utf-8")
    return site


async def test_a_hanging_tool_or_an_unrecorded_request_fails_the_case(
    browser: ego.Browser, tmp_path: Path
) -> None:
    har = Har(entries=[build_entry("https://tiny.replay.test/", "<title>tiny</title>")])
    base = {"har": "tiny.har", "url": "https://tiny.replay.test/"}
    _tiny_site(
        tmp_path,
        [
            {**base, "name": "hangs", "tool": "hangs", "timeout": 1},
            {**base, "name": "escapes", "tool": "escapes"},
        ],
        har,
    )
    # A hang bound only: the case's own timeout ends the hanging tool, as its reason says.
    report = await asyncio.wait_for(
        run_learning_tests(browser, Learnings(roots=[tmp_path]), ["tiny"]), 60
    )

    hangs, escapes = report.results
    assert not hangs.passed
    assert hangs.error == "TIMEOUT"
    assert "1 s" in hangs.reason
    # The fetch failed like a network error (the tool threw), and strict replay names it.
    assert not escapes.passed
    assert escapes.unmatched == ["GET https://tiny.replay.test/not-recorded"]
    assert "strict replay: no HAR entry for GET https://tiny.replay.test/not-recorded" in (
        escapes.reason
    )
    assert report.uncovered == {}
    assert "2 failed" in report.format()


def test_broken_cases_file_lists_every_problem(tmp_path: Path) -> None:
    har = Har(entries=[build_entry("https://tiny.replay.test/", "ok")])
    site = _tiny_site(
        tmp_path,
        [
            {"name": "a", "tool": "hangs", "har": "tiny.har", "url": "https://tiny.replay.test/"},
            {
                "name": "a",
                "tool": "hangs",
                "har": "missing.har",
                "url": "https://tiny.replay.test/",
            },
            {"name": "b", "tool": "hangs", "har": "../../escape.har", "url": "https://x.test/"},
            {"name": "c", "tool": "hangs"},
        ],
        har,
    )
    entry = Learnings(roots=[tmp_path]).find("tiny")
    with pytest.raises(InvalidCasesError) as caught:
        load_cases(entry)
    problems = "\n".join(caught.value.problems)
    assert "same name" in problems
    assert "tests/missing.har does not exist" in problems
    assert "'..'" in problems
    assert "no 'har'" in problems

    (site / "tests" / "cases.json").write_text('{"cases": [{"name": "x"}]}', encoding="utf-8")
    with pytest.raises(InvalidCasesError, match='"tool" is a required property'):
        load_cases(entry)


def test_a_site_without_tests_has_no_cases(tmp_path: Path) -> None:
    make_site(tmp_path, "plain", domains=["plain.test"], browser_tools={"t": tool(HANGS)})
    assert load_cases(Learnings(roots=[tmp_path]).find("plain")) == []


def test_a_recorded_case_is_added_to_its_cases_file(tmp_path: Path) -> None:
    cases = tmp_path / "tests" / "cases.json"
    cases.parent.mkdir()
    first = {"name": "get_product as recorded", "har": "a.har", "tool": "get_product"}
    assert add_case(cases, first) is False  # created
    other = {"name": "by hand", "har": "b.har", "tool": "t", "description": "kept as it is"}
    data = json.loads(cases.read_text())
    data["defaults"] = {"url": "https://shop.example/"}
    data["cases"].append(other)
    cases.write_text(json.dumps(data))
    again = {**first, "args": {"id": 3}}
    assert add_case(cases, again) is True  # the case of that name, replaced in place
    assert json.loads(cases.read_text()) == {
        "cases": [again, other],
        "defaults": {"url": "https://shop.example/"},
    }
    cases.write_text('["not", "a", "cases", "file"]')
    with pytest.raises(ValueError, match=r"not a cases file .* the case was not added"):
        add_case(cases, first)
    assert cases.read_text() == '["not", "a", "cases", "file"]'
