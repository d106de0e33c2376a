"""Where the tests find things: the checkout, ego's entry points in this interpreter."""

from __future__ import annotations

import sys
from pathlib import Path

#: The checkout (the folder holding pyproject.toml).
ROOT = Path(__file__).resolve().parents[2]
#: The ``ego`` console script of the interpreter running the tests (``.venv/bin/ego``).
EGO_SCRIPT = Path(sys.executable).with_name("ego")
PYTHON_EGO = [sys.executable, "-m", "ego"]
#: The learnings the pool tests run (tests/pool_learnings).
POOL_LEARNINGS = ROOT / "tests" / "pool_learnings"
