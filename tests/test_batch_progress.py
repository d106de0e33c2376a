"""What ``ego batch`` shows while it runs and when it ends, on a patched clock: the rate
counts from the first result of the calls (not Chrome's start), the time left is unknown
until there is a rate, and the summary gives the rate the last progress line gave."""

from __future__ import annotations

from ego.batch import BatchProgress, BatchSummary
from ego.cli.batch_command import _progress_line, _summary_text


def test_the_rate_counts_from_the_first_result_of_the_calls() -> None:
    state = BatchProgress(total=10, skipped=0)
    state.add(failed=True, now=1.0)  # an input refused before any browser started
    assert (state.rate, state.eta) == (None, None)
    state.started = 2.0  # the browsers are up (Chrome took its time)
    state.add(failed=False, now=5.0)  # the first call also opened the site's page
    assert _progress_line(state) == "2/10 done, 1 failed, ?/s, ? left"
    state.add(failed=False, now=6.0)
    state.add(failed=False, now=7.0)
    assert state.rate == 1.0  # two results in the two seconds after the first
    assert _progress_line(state) == "4/10 done, 1 failed, 1.0/s, 0:06 left"


def test_the_summary_gives_the_rate_of_the_last_progress_line() -> None:
    state = BatchProgress(total=6, skipped=2, started=0.5)
    for now in (3.0, 3.25, 3.5, 3.75):
        state.add(failed=False, now=now)
    summary = BatchSummary(
        "demo-shop", "get_product", "in.jsonl", "out.jsonl", total=6, skipped=2, ran=4, ok=4
    )
    summary.seconds, summary.first_result, summary.rate = 4.0, 3.0, state.rate
    assert _progress_line(state) == "4/4 done, 0 failed, 4.0/s, 0:00 left (2 done before)"
    assert _summary_text(summary) == (
        "6 inputs, 2 done before, 4 ran (4 ok, 0 failed) in 4.0 s (the first result after "
        "3.0 s, then 4.0/s) -> out.jsonl"
    )
    assert (summary.as_dict()["rate"], summary.as_dict()["first_result"]) == (4.0, 3.0)
