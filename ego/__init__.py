"""ego: drive a real Chrome over raw CDP and run site learnings inside the page.

    async with ego.launch() as browser:
        ctx = await browser.site.learn_context(url)
        result = await browser.site.run_browser_tool(site_id, tool, args)

Every exception ego raises derives from :class:`EgoError`; see :mod:`ego.errors`.
"""

from __future__ import annotations

from .api import Browser, BrowserStarter, connect, launch
from .errors import *  # noqa: F403  (the exception types are part of the top-level API)
from .errors import __all__ as _error_names
from .learning import LearnContext, Learnings, ToolInfo
from .page.tab import Tab
from .pool import BrowserPool, Endpoint, PoolResult
from .protocol.chrome import find_chrome
from .site import Site, ToolContext

__all__ = [
    "Browser",
    "BrowserPool",
    "BrowserStarter",
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
    *_error_names,
]

#: The one place the version is written: pyproject.toml reads it from here.
__version__ = "0.1.0"
