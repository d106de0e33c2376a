"""Learning tests: run a site's tools against recorded pages, offline, and report per case.

A site folder may carry ``tests/``: one or more HAR files and ``tests/cases.json``. Each case
runs in a fresh tab of its own browser context, with its HAR replayed in strict mode, and its
result is judged against what the case expects. This package sits above the site layer: it
runs tools through :class:`ego.site.Site`, like any other front end.

- :mod:`.runner`: running cases against replayed pages (:func:`run_learning_tests`).
- :mod:`.report`: :class:`LearningTestReport`.
- :mod:`.update`: new expectations from actual results (``ego test --update``), and a
  recorded case added to a cases file (``ego record --run``).

What a case is and how one runs live below the site layer, in :mod:`ego.learning.cases`
(the ``cases.json`` format, judging, the replayed run, :class:`CaseResult`), because saving a
tool runs its cases too (the save gate); they are re-exported here.

See ``docs/replay.md``.
"""

from __future__ import annotations

from ..learning.cases.format import (
    CASES_FILE,
    CASES_SCHEMA,
    ERROR_KINDS,
    LearningCase,
    load_cases,
)
from ..learning.cases.judge import error_kind, judge
from ..learning.cases.result import CaseResult
from .report import LearningTestReport
from .runner import run_case, run_learning_tests
from .update import ExpectationUpdate, add_case, expectation_updates, write_updates

__all__ = [
    "CASES_FILE",
    "CASES_SCHEMA",
    "ERROR_KINDS",
    "CaseResult",
    "ExpectationUpdate",
    "LearningCase",
    "LearningTestReport",
    "add_case",
    "error_kind",
    "expectation_updates",
    "judge",
    "load_cases",
    "run_case",
    "run_learning_tests",
    "write_updates",
]
