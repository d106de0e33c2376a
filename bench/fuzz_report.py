"""Print the fuzz counts (per category and per kind) for a seed and a number of cases.

Runs the cases of tests/helpers/fuzz_cases.py (through tests/helpers/fuzz_run.py) against
whichever ``ego`` Python imports, so the same cases give before/after figures for two checkouts::

    .venv/bin/python bench/fuzz_report.py --seed 12 --cases 400
    PYTHONPATH=/path/to/other/checkout .venv/bin/python bench/fuzz_report.py --seed 12 --cases 400

The ``tests`` package is always this checkout's (it is bound by file path before anything
imports it), so ``PYTHONPATH`` decides only where ``ego`` comes from; the first line printed
names it. Options: ``--seed``, ``--cases``, ``--bound`` (seconds per case), ``--quiet`` (no
list of bad cases). Exits 1 when any case crashed, hung, lost the connection, did collateral
damage, ran a tool twice or fetched a URL.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

__all__ = ["main"]

TESTS = Path(__file__).resolve().parent.parent / "tests"


def main() -> int:
    """Bind ``tests`` to this checkout's folder, then run ``tests.helpers.fuzz_run.main``."""
    spec = importlib.util.spec_from_file_location(
        "tests", TESTS / "__init__.py", submodule_search_locations=[str(TESTS)]
    )
    assert spec is not None
    assert spec.loader is not None
    package = importlib.util.module_from_spec(spec)
    sys.modules["tests"] = package
    spec.loader.exec_module(package)
    code: int = importlib.import_module("tests.helpers.fuzz_run").main(sys.argv[1:])
    return code


if __name__ == "__main__":
    raise SystemExit(main())
