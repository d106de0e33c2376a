"""``ego heal``: a tool that stopped working turned into a tested candidate version.

- :mod:`.run`: the diagnosis and the candidate (:func:`heal`), its check against the old
  cases and a new one from the live recording (:func:`check_candidate`), the promotion
  through the save gate with provenance in the tool's history (:func:`promote`);
- :mod:`.compare`: what changed between a recorded exchange and the live one;
- :mod:`.selectors`: a tool's selectors on the live page;
- :mod:`.steps`, :mod:`.action_candidate`: the step of a tool drafted from page actions whose
  selector went, and its candidate (the step on the nearest element, the recorded one kept);
- :mod:`.candidate`: the report, the check and where they are kept.
"""

from __future__ import annotations

from .candidate import (
    CANDIDATE_JS,
    CANDIDATE_PY,
    HEAL_DIR,
    CaseOutcome,
    HealCheck,
    HealReport,
    heal_folder,
)
from .compare import Change
from .run import MIN_SHAPE_SCORE, Promoted, check_candidate, heal, promote

__all__ = [
    "CANDIDATE_JS",
    "CANDIDATE_PY",
    "HEAL_DIR",
    "MIN_SHAPE_SCORE",
    "CaseOutcome",
    "Change",
    "HealCheck",
    "HealReport",
    "Promoted",
    "check_candidate",
    "heal",
    "heal_folder",
    "promote",
]
