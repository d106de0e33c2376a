"""ego: drive a real Chrome over raw CDP and run site learnings inside the page.

    async with ego.launch() as browser:
        ctx = await browser.site.learn_context(url)
        result = await browser.site.run_browser_tool(site_id, tool, args)

Every exception ego raises derives from :class:`EgoError`; see :mod:`ego.errors`.

``import ego`` loads only the exception types: each other public name imports its module
the first time it is used, so a command or a script pays for what it touches (the learnings'
schemas, the pool, pydantic's models) and nothing else.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .errors import *  # noqa: F403  (the exception types are part of the top-level API)
from .errors import __all__ as _error_names

if TYPE_CHECKING:
    from .api import Browser, BrowserContext, BrowserStarter, connect, launch
    from .learning.catalog.registry import Learnings
    from .learning.describe.compact import CompactContext
    from .learning.describe.context import LearnContext, ToolInfo
    from .learning.suggest import suggest, suggest_actions
    from .page.scripts import set_test_id_attribute
    from .page.storage_state import read_storage_state
    from .page.tab import Tab
    from .pool import BrowserPool, Endpoint, PoolResult
    from .protocol.chrome import find_chrome
    from .site import Site, ToolContext

#: Where each public name lives; imported on first use (PEP 562).
_LAZY: dict[str, str] = {
    "Browser": ".api",
    "BrowserContext": ".api",
    "BrowserStarter": ".api",
    "connect": ".api",
    "launch": ".api",
    "CompactContext": ".learning.describe.compact",
    "LearnContext": ".learning.describe.context",
    "ToolInfo": ".learning.describe.context",
    "Learnings": ".learning.catalog.registry",
    "Tab": ".page.tab",
    "read_storage_state": ".page.storage_state",
    "set_test_id_attribute": ".page.scripts",
    "BrowserPool": ".pool",
    "Endpoint": ".pool",
    "PoolResult": ".pool",
    "find_chrome": ".protocol.chrome",
    "Site": ".site",
    "ToolContext": ".site",
    "suggest": ".learning.suggest",
    "suggest_actions": ".learning.suggest",
}

__all__ = [
    "Browser",
    "BrowserContext",
    "BrowserPool",
    "BrowserStarter",
    "CompactContext",
    "Endpoint",
    "LearnContext",
    "PoolResult",
    "Learnings",
    "Site",
    "Tab",
    "ToolContext",
    "ToolInfo",
    "connect",
    "find_chrome",
    "launch",
    "read_storage_state",
    "set_test_id_attribute",
    "suggest",
    "suggest_actions",
    *_error_names,
]

#: The one place the version is written: pyproject.toml reads it from here.
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ego' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # the next lookup is a plain one
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
