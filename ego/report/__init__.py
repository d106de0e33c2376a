"""The health report: every site and tool with its health per version over time, its last
failures with their traces, and the versions a heal promoted, as one HTML page (``ego
report``) or as JSON (``ego report --json``).

- :mod:`.data`: what the report says, read from the run record, the tools' histories and the
  index of kept traces (:func:`report_data`).
- :mod:`.page`: the page, charts as inline SVG, nothing fetched (:func:`write_report`).
"""

from __future__ import annotations

from .data import HealthReport, report_data
from .page import render_report, write_report

__all__ = ["HealthReport", "render_report", "report_data", "write_report"]
