"""The facade agent scripts use: ``learn_context``, ``run_browser_tool``, ``run_tool``.

One job per module, each class the base of the next: ``placement`` chooses the tab or frame a
site's call runs in; ``running`` is the one call path (cache layer, error contract, the run's
record); ``saving`` keeps tools and notes through the learning layer; ``facade`` is
:class:`Site`, the front door on top of them.
"""

from __future__ import annotations

from .facade import Site, ToolContext, context_for, describe_tool
from .running import tool_error

__all__ = ["Site", "ToolContext", "context_for", "describe_tool", "tool_error"]
