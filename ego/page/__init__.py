"""The page layer: a browser, its tabs, and every verb a page offers.

:class:`Browser` holds the connection and the tabs; :class:`Tab` is one page target. The
verbs (evaluate, click, type, waits, screenshots, ...) each live in a module of their own
here and are written once for every kind of page.
"""

from __future__ import annotations

from .browser import Browser, BrowserContext
from .tab import Tab, WaitUntil

__all__ = ["Browser", "BrowserContext", "Tab", "WaitUntil"]
