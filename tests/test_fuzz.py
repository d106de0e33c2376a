"""Fuzz: nothing a manifest, a name, args, a tool's source or its result holds takes ego down.

A few hundred seeded cases (tests/fuzz_cases.py) run through the public API with a Chrome of
their own (tests/fuzz_run.py). Every case must end as it expects, within its bound: with a
value, or with the ego error its input calls for (a broken manifest, unsafe path, bad args,
a tool that throws...), so a refusal that turns into a value fails the run as surely as a
crash; none may end the browser connection, break another site or tab, run a tool twice for
one call, or make the harness fetch a URL. bench/fuzz_report.py prints the same counts for
any seed and size, against any checkout.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import PageServer
from tests.fuzz_cases import FAMILIES, PAGE_HTML, SLOW_CAP, generate
from tests.fuzz_run import BAD, CountingServer, Outcome, report, run_cases, summarize

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
