"""Fuzz: nothing a manifest, a name, args, a tool's source or its result holds takes ego down.

A few hundred seeded cases (tests/helpers/fuzz_cases.py) run through the public API with a Chrome of
their own (tests/helpers/fuzz_run.py). Every case must end as it expects, within its bound: with a
value, or with the ego error its input calls for (a broken manifest, unsafe path, bad args,
a tool that throws...), so a refusal that turns into a value fails the run as surely as a
crash; none may end the browser connection, break another site or tab, run a tool twice for
one call, or make the harness fetch a URL. bench/fuzz_report.py prints the same counts for
any seed and size, against any checkout.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from mcp.types import CallToolResult

from tests.helpers.commands import ego_async, ego_env
from tests.helpers.fuzz_cases import FAMILIES, PAGE_HTML, SLOW_CAP, generate
from tests.helpers.fuzz_run import (
    BAD,
    CountingServer,
    Outcome,
    _prepare_root,
    _setup,
    report,
    run_cases,
    summarize,
)
from tests.helpers.mcp_client import McpClient, text_of, value_of
from tests.helpers.page_server import PageServer

SEED = 12
CASES = 400


def test_cases_are_the_same_for_a_seed_and_cover_every_family() -> None:
    first, second = generate(SEED, CASES), generate(SEED, CASES)
    assert [(c.label, c.detail) for c in first] == [(c.label, c.detail) for c in second]
    assert [(c.label, c.detail) for c in generate(SEED + 1, CASES)] != [
        (c.label, c.detail) for c in first
    ]
    families = Counter(case.family for case in first)
    assert set(families) == set(FAMILIES)
    assert all(count >= 20 for count in families.values()), families
    assert sum(case.slow for case in first) <= SLOW_CAP
    # Every family holds cases that must succeed and cases that must be refused.
    for family in FAMILIES:
        ends = {case.expect == "ok" for case in first if case.family == family}
        assert ends == {True, False}, family


def test_a_case_that_ends_otherwise_than_it_expects_is_bad() -> None:
    refused = next(case for case in generate(SEED, CASES) if case.expect == "InvalidArgsError")
    ran = Outcome(refused, calls=[("run", "ok")])  # a refusal that now returns a value
    ran.check_expectation()
    assert "unexpected" in ran.flags
    assert ran.bad
    assert ran.notes[0] == "expected InvalidArgsError, ended ok"
    as_expected = Outcome(refused, outcome="ego-error", calls=[("run", "InvalidArgsError")])
    as_expected.check_expectation()
    assert not as_expected.bad
    listing = Outcome(refused, outcome="ego-error")
    listing.calls += [("sites", "InvalidManifestError"), ("run", "InvalidArgsError")]
    listing.check_expectation()
    assert "unexpected" in listing.flags  # listing the sites never raises for a broken one


@pytest.mark.chrome
# jsonschema's regex format check warns about the "[[:alpha:]]" pattern a case feeds it.
@pytest.mark.filterwarnings("ignore:Possible nested set:FutureWarning")
async def test_fuzz_nothing_takes_ego_down(tmp_path: Path, server: PageServer) -> None:
    page_url = server.route("/fuzz/page", PAGE_HTML)
    refs = CountingServer()
    try:
        outcomes = await run_cases(
            generate(SEED, CASES), root=tmp_path / "learnings", page_url=page_url, ref_server=refs
        )
    finally:
        refs.close()
    text = report(outcomes)
    print(text)
    total, _ = summarize(outcomes)
    assert total["cases"] == CASES
    ended = [
        (result.case.index, result.case.label, result.case.expect, result.ended)
        for result in outcomes
        if result.ended != result.case.expect
    ]
    assert ended == [], text
    assert {name: total[name] for name in BAD} == dict.fromkeys(BAD, 0), text
    assert refs.hits == [], text


def _broken_workspace(tmp_path: Path) -> Path:
    """Every manifest and name case of the seed, written side by side into one workspace."""
    workspace = tmp_path / "ws"
    root, outside = workspace / "learnings", tmp_path / "outside"
    root.mkdir(parents=True)
    outside.mkdir()
    _prepare_root(root, outside)
    for case in generate(SEED, CASES):
        # Cases that share a folder name (UPPER, ...) take turns in the run above: here the
        # first one holds the folder.
        if "folder" in case.spec and not (root / case.spec["folder"]).exists():
            # A $ref to this dead address must never be fetched, as in the run above.
            _setup(case, root, outside, "http://127.0.0.1:9")
    return workspace


def _within_bound(answer: CallToolResult) -> Any:
    """A tool's value; one over the server's bound (the cases' strings make some answers
    megabytes long) from its text, where it is whole but for its strings, cut and said so."""
    value = value_of(answer)
    if isinstance(value, dict) and set(value) == {"cut"}:
        shown, note = text_of(answer).rsplit("\n… cut at ", 1)
        assert "strings cut" in note, note
        value = json.loads(shown)
    return value


async def test_every_front_end_reads_the_broken_manifests_without_a_traceback(
    tmp_path: Path,
) -> None:
    workspace = _broken_workspace(tmp_path)
    env = ego_env(tmp_path / "profiles", workspace=workspace)
    for args, codes in (
        (["sites", "--json"], {0}),
        (["tools", "http://127.0.0.1:8000/", "--json"], {0}),
        (["validate", "--json"], {3}),
    ):
        result = await ego_async(*args, env=env, cwd=tmp_path, timeout=120)
        assert "Traceback" not in result.stderr, (args, result.stderr[-2000:])
        assert result.returncode in codes, (args, result.returncode, result.stderr[-500:])
        json.loads(result.stdout)  # one complete JSON document, whatever the strings hold

    client = McpClient(env, tmp_path, tmp_path / "mcp-stderr.log")
    await client.start()
    try:
        listed = _within_bound(await client.call("list_sites"))
        assert len(listed) > 50
        context = _within_bound(
            await client.call("learn_context", {"url": "http://127.0.0.1:8000/"})
        )
        assert context["matched"] is True
    finally:
        await client.close()
    assert "Traceback" not in (tmp_path / "mcp-stderr.log").read_text()
