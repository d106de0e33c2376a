"""Updating cases from what their tools returned: ``ego test SITE --update``.

A case whose tool returned a value that differs from its ``expect`` (or ``expect_subset``)
gets the value written as its new expectation, after the caller has shown the diff. Only
those cases change: one that ended in an error, failed ``expect_schema``, or missed requests
in strict replay (its result may be partial) is left for a person to look at.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import EgoError
from ..learning.cases.format import CASES_FILE, MISSING, LearningCase, load_cases
from ..learning.cases.judge import _difference
from ..learning.catalog.registry import Learnings
from .report import LearningTestReport

__all__ = ["ExpectationUpdate", "add_case", "expectation_updates", "write_updates"]


@dataclass(frozen=True)
class ExpectationUpdate:
    """A new expectation for one case.

    Attributes:
        site_id: the case's site.
        name: the case's name.
        file: the site's ``tests/cases.json``.
        key: ``"expect"`` or ``"expect_subset"``.
        old: the expectation the case holds.
        new: the one the tool's result gives.
    """

    site_id: str
    name: str
    file: Path
    key: str
    old: Any
    new: Any

    def diff(self) -> str:
        """A unified diff of the expectation as JSON, old to new."""
        label = f"{self.file} [{self.name}] {self.key}"
        return "".join(
            difflib.unified_diff(
                _lines(self.old),
                _lines(self.new),
                fromfile=f"{label} (now)",
                tofile=f"{label} (actual result)",
            )
        )

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (``ego test --update --json``)."""
        return {"site": self.site_id, "case": self.name, "key": self.key, "file": str(self.file)}


def _lines(value: Any) -> list[str]:
    return [line + "\n" for line in _dumps(value).splitlines()]


def _dumps(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def _projected(expected: Any, actual: Any) -> Any:
    """``actual`` cut to the keys ``expected`` names (recursively): a new ``expect_subset``
    that checks what the old one checked, no more."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        return {
            key: _projected(value, actual[key]) for key, value in expected.items() if key in actual
        }
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        return [_projected(want, got) for want, got in zip(expected, actual, strict=True)]
    return actual


def _updates_for(case: LearningCase, file: Path, value: Any) -> list[ExpectationUpdate]:
    found = []
    if case.expect is not MISSING and _difference(case.expect, value, exact=True):
        found.append(ExpectationUpdate(case.site_id, case.name, file, "expect", case.expect, value))
    if case.expect_subset is not MISSING and _difference(case.expect_subset, value, exact=False):
        new = _projected(case.expect_subset, value)
        found.append(
            ExpectationUpdate(
                case.site_id, case.name, file, "expect_subset", case.expect_subset, new
            )
        )
    return found


def expectation_updates(
    report: LearningTestReport, learnings: Learnings
) -> tuple[list[ExpectationUpdate], list[str]]:
    """The new expectations a test run's results give, and the failed cases left alone.

    Args:
        report: a run of :func:`~ego.casetests.run_learning_tests` (its results keep what
            each tool returned).
        learnings: where the cases' sites are.

    Returns:
        The updates (each with its diff), and ``"site/case: why"`` for each failed case that
        no update can fix (an error, ``expect_schema``, missed requests).
    """
    updates: list[ExpectationUpdate] = []
    skipped: list[str] = []
    cases: dict[str, dict[str, LearningCase]] = {}
    for result in report.failures:
        label = f"{result.site_id}/{result.name}"
        if result.site_id not in cases:
            try:
                entry = learnings.find(result.site_id)
                cases[result.site_id] = {case.name: case for case in load_cases(entry)}
            except EgoError:
                cases[result.site_id] = {}
        case = cases[result.site_id].get(result.name)
        if case is None or result.error is not None or case.expect_error is not None:
            skipped.append(f"{label}: it did not return a result to expect")
            continue
        if result.unmatched and case.mode == "strict":
            skipped.append(f"{label}: requests missing from the HAR (record it again)")
            continue
        file = learnings.find(result.site_id).directory / CASES_FILE
        found = _updates_for(case, file, result.result)
        if not found:
            skipped.append(f"{label}: {result.reason}")
        updates.extend(found)
    return updates, skipped


def write_updates(updates: list[ExpectationUpdate]) -> list[Path]:
    """Write each update into its case in ``cases.json``; return the files written.

    The file is rewritten as JSON with two-space indents; the other cases and keys stay as
    they were.

    Raises:
        OSError: a file cannot be read or written.
        ValueError: a file changed since the run (it is no longer JSON, or lost the case).
    """
    by_file: dict[Path, list[ExpectationUpdate]] = {}
    for update in updates:
        by_file.setdefault(update.file, []).append(update)
    for file, changes in by_file.items():
        data = json.loads(file.read_text(encoding="utf-8"))
        raw_cases = {raw.get("name"): raw for raw in data.get("cases", [])}
        for change in changes:
            raw = raw_cases.get(change.name)
            if raw is None:
                raise ValueError(f"{file} no longer holds the case {change.name!r}")
            raw[change.key] = change.new
        _write(file, data)
    return list(by_file)


def add_case(file: Path, case: dict[str, Any]) -> bool:
    """Add ``case`` to the cases file ``file``, created as ``{"cases": [case]}`` when missing.

    A case of the same name is replaced in place; every other case and key stays.

    Returns:
        True when a case of that name was replaced.

    Raises:
        ValueError: ``file`` exists but is not a cases file (JSON with a ``cases`` list);
            nothing was written.
        OSError: the file cannot be read or written.
    """
    data: Any = {"cases": []}
    if file.exists():
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"{file} is not JSON ({exc}); the case was not added") from None
        if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
            raise ValueError(
                f'{file} is not a cases file (an object with a "cases" list); the case was '
                "not added"
            )
    cases: list[Any] = data["cases"]
    for index, raw in enumerate(cases):
        if isinstance(raw, dict) and raw.get("name") == case["name"]:
            cases[index] = case
            _write(file, data)
            return True
    cases.append(case)
    _write(file, data)
    return False


def _write(file: Path, data: Any) -> None:
    """``data`` as ``file``'s JSON (two-space indents), replacing it in one step."""
    temporary = file.with_name(f".{file.name}.update")
    temporary.write_text(_dumps(data) + "\n", encoding="utf-8")
    temporary.replace(file)
