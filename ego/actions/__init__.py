"""Page actions kept as a flow a tool can be drafted from: :class:`ActionRecording`, what
:meth:`ego.Tab.record_actions` returns (see :mod:`ego.learning.suggest.flow` for the file and
:mod:`ego.learning.suggest.actions` for the drafting)."""

from __future__ import annotations

from .recording import ActionRecording

__all__ = ["ActionRecording"]
