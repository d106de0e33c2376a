"""``ego login SITE --save-state FILE``: the login a person makes, kept in a file as it happens.

The state (cookies and each origin's localStorage, :mod:`ego.page.storage_state`) is saved
when the login page opens, again each time the login tab loads a page or moves within one
(the site's redirect after the form, a single-page app's route), and once more when the tab
closes while the browser is still there. A window closed with the browser in it ends Chrome
before a last save could run: what the last load saved is kept, which is the state after the
login.
"""

from __future__ import annotations

import contextlib
import logging
import os
from typing import TYPE_CHECKING, Any

import click

from ..errors import EgoError
from ..page.storage_state import StorageState, describe_state

if TYPE_CHECKING:
    from ..api import Browser
    from ..page.tab import Tab
    from ..protocol._events import Subscription

__all__ = ["LoginSaver"]

logger = logging.getLogger("ego.cli")

_MOVES = ("Page.loadEventFired", "Page.navigatedWithinDocument")


class LoginSaver:
    """Saves ``browser``'s login to ``path`` while a person logs in in ``tab``.

    Args:
        browser: the browser the person logs in with (its default context is saved).
        tab: the login tab.
        path: the file (written ``0600``, never in a learnings folder).
    """

    def __init__(self, browser: Browser, tab: Tab, path: str | os.PathLike[str]) -> None:
        self.browser = browser
        self.tab = tab
        self.path = path
        #: The state last written.
        self.saved: StorageState | None = None
        self._subscription: Subscription | None = None

    async def start(self) -> None:
        """Save now, then at each page the login tab shows.

        Raises:
            StorageStateError: the path is inside a learnings folder.
            OSError: the file cannot be written.
        """
        self.saved = await self.browser.storage_state(path=self.path)
        session = self.tab.session
        if session is not None:
            self._subscription = session.subscribe_all(_MOVES, self._moved)

    async def _moved(self, method: str, params: dict[str, Any]) -> None:
        await self._save()

    async def _save(self) -> None:
        try:
            self.saved = await self.browser.storage_state(path=self.path)
        except (EgoError, OSError) as exc:  # the tab or browser going: the last save stands
            logger.debug("saving the login to %s: %s", self.path, exc)

    @property
    def empty(self) -> bool:
        """True when what was saved holds no cookie at all: no login happened."""
        return self.saved is None or not self.saved["cookies"]

    async def finish(self) -> None:
        """Save once more if the browser is still there; then say what the file holds (on
        stderr, never a value)."""
        if self._subscription is not None:
            self._subscription.close()
        if not self.browser.closed:
            with contextlib.suppress(EgoError, OSError):
                await self._save()
        if self.saved is not None and not self.empty:
            held = describe_state(self.saved)
            origins = ", ".join(entry["origin"] for entry in held["origins"]) or "none"
            click.echo(
                f"ego: saved the login to {self.path}: {held['cookies']} cookies "
                f"({', '.join(held['cookie_domains']) or 'none'}); localStorage of {origins}",
                err=True,
            )
