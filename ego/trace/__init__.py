"""Traces a person opens: each step of a run (actions, tool runs, navigations) with what the
page showed, the network and the console, in one file; and the page that shows one.

- :mod:`.options`: what a trace keeps and its bounds (:class:`TraceOptions`).
- :mod:`.tracer`: a trace of a tab, or of every tab of a browser (:class:`Trace`).
- :mod:`.failures`: traces of failing steps only, one file each (:class:`FailureTraces`).
- :mod:`.tabs`: one traced tab; :mod:`.network`, :mod:`.capture`: its requests, its
  screenshots and snapshots; :mod:`.records`: the lines; :mod:`.secrets`: what is redacted;
  :mod:`.file`: the file, private and bounded; :mod:`.index`: which traces hold failures.
- :mod:`.reading` and :mod:`.viewer`: a trace read back, and the one-file HTML page showing it.

docs/tracing.md describes the file, what is recorded, what is redacted and the bounds.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .options import TraceOptions
    from .tracer import Trace, TraceSummary, trace_pages, trace_tab

#: Where each public name lives, imported on first use: a command that only takes the
#: options (their defaults) does not load the tracer.
_LAZY = {
    "TraceOptions": ".options",
    "Trace": ".tracer",
    "TraceSummary": ".tracer",
    "trace_pages": ".tracer",
    "trace_tab": ".tracer",
}

__all__ = ["Trace", "TraceOptions", "TraceSummary", "trace_pages", "trace_tab"]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module, __name__), name)
