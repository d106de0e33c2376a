"""Resumable batch runs: one tool over a JSONL file of inputs, through a browser pool.

See :mod:`ego.batch.run` for the guarantees; :mod:`ego.batch.files` keeps them on disk.
"""

from __future__ import annotations

from .files import InputItem, read_inputs, read_results
from .progress import BatchProgress, BatchSummary
from .run import run_batch

__all__ = [
    "BatchProgress",
    "BatchSummary",
    "InputItem",
    "read_inputs",
    "read_results",
    "run_batch",
]
