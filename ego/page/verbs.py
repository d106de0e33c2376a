"""The tab's verbs beyond navigate, evaluate and the six capabilities, as methods of ``Tab``.

:class:`TabVerbs` is a base of :class:`ego.Tab`: each method is a short wrapper over the
module that does the work (screenshots, console_log, waits, input_actions, history,
network), so that ``ego/page/tab.py`` keeps to sessions, navigation and evaluation.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from . import history as nav_history
from . import input as input_actions
from . import screenshots, waits
from .page import Page

if TYPE_CHECKING:
    from ..protocol.transport import Connection
    from .console import ConsoleLog, ConsoleMessage
    from .history import HistoryWait
    from .network import NetworkLog, Request
    from .screenshots import ImageFormat

__all__ = ["TabVerbs"]


class _Core(Page, Protocol):
    """What the verbs use of a tab beyond :class:`~ego.page.page.Page`; :class:`ego.Tab`
    provides it."""

    default_timeout: float
    _url: str
    _connection: Connection
    _network: NetworkLog
    _console: ConsoleLog

    async def session(self) -> str: ...


class TabVerbs:
    """Screenshots, console messages, waits, keys, hover, select, upload, history and
    response bodies. Selectors are CSS, as everywhere in ego."""

    async def screenshot(
        self: _Core,
        *,
        full_page: bool = False,
        selector: str | None = None,
        format: ImageFormat = "png",
        quality: int | None = None,
        path: str | os.PathLike[str] | None = None,
    ) -> bytes:
        """Capture the viewport (or the whole page, or one element) and return the image.

        Args:
            full_page: the whole scrollable page instead of the viewport.
            selector: a CSS selector: capture only the first matching element's box.
            format: ``"png"``, ``"jpeg"`` or ``"webp"``.
            quality: 0-100, for JPEG and WebP.
            path: also write the image to this file.

        Raises:
            ElementNotFoundError: ``selector`` matches nothing (or only a hidden element).
            ValueError: a bad format or quality, or both ``full_page`` and ``selector``.
        """
        return await screenshots.capture(
            self, full_page=full_page, selector=selector, format=format, quality=quality,
            path=path,
        )  # fmt: skip

    async def console(self: _Core, *, clear: bool = False) -> list[ConsoleMessage]:
        """The page's console messages and uncaught exceptions since ego attached to the tab.

        Kept across navigations in a buffer of the newest 1,000
        (:data:`ego.page.console.MAX_MESSAGES`); :attr:`console_dropped` counts the older
        ones dropped. Each has level, text, source URL, 1-based line and column, and for an
        exception ``exception=True`` and its stack.

        Args:
            clear: empty the buffer (and the dropped count) after reading it.

        Raises:
            TabClosedError: the tab is closed (and never attached).
        """
        await self.session()
        return await self._console.messages(clear=clear)

    @property
    def console_dropped(self: _Core) -> int:
        """Console messages dropped because the buffer was full (since attach or the last
        ``console(clear=True)``)."""
        return self._console.dropped

    async def wait_for(
        self: _Core,
        *,
        text: str | None = None,
        selector: str | None = None,
        url: str | None = None,
        network_idle: bool = False,
        timeout: float | None = None,
    ) -> float:
        """Wait until one condition holds: ``text`` shows, ``selector`` matches, the URL
        contains ``url`` (or matches it as a glob with ``*``), or the network is idle (no
        request in flight for 0.5 s); return the seconds waited.

        Text and elements are watched by a ``MutationObserver`` in the page (again in the
        new document if the page navigates); URLs and the network by the tab's events.

        Args:
            timeout: seconds; the tab's default if omitted.

        Raises:
            ValueError: not exactly one condition given.
            CommandTimeoutError: it did not hold in time; the message names the condition.
        """
        session_id = await self.session()
        return await waits.wait_for(
            self, self._connection, session_id, self._network, text=text, selector=selector,
            url=url, network_idle=network_idle,
            timeout=self.default_timeout if timeout is None else timeout,
        )  # fmt: skip

    async def press(self: _Core, key: str) -> None:
        """Press a key in the focused element, as the keyboard would.

        ``key`` is one character (``"a"``, ``"A"``, ``"/"``) or a key name (``"Enter"``,
        ``"Tab"``, ``"Escape"``, ``"Backspace"``, ``"ArrowDown"``, ``"PageUp"``, ``"F5"``,
        ...), after modifiers joined by ``+``: ``"Control+A"``, ``"Shift+Tab"``,
        ``"Control+Shift+ArrowLeft"``. Focus a field first (``click``) to type in it.

        Raises:
            ValueError: an unknown key or modifier.
        """
        await input_actions.press(self, key)

    async def hover(self: _Core, selector: str, *, wait: float = 5.0) -> None:
        """Scroll the element into view and move the mouse over its centre.

        Args:
            selector: a CSS selector.
            wait: seconds to wait for the element to appear (0: not at all).

        Raises:
            ElementNotFoundError: nothing matches within ``wait``, or the element is hidden.
        """
        await input_actions.hover(self, selector, wait=wait)

    async def select(
        self: _Core, selector: str, values: str | Sequence[str], *, wait: float = 5.0
    ) -> list[str]:
        """Choose options of a ``<select>`` by value (or else by visible label), firing
        ``input`` and ``change``; return the values now selected.

        Args:
            selector: a CSS selector for the ``<select>``.
            values: one value or several (for a ``multiple`` select); ``[]`` clears it.
            wait: seconds to wait for the element to appear (0: not at all).

        Raises:
            ElementNotFoundError: nothing matches, it is not a ``<select>``, or no option
                has one of ``values`` (the message lists the options).
            ValueError: several values for a single select, or a disabled select.
        """
        return await input_actions.select(self, selector, values, wait=wait)

    async def upload(
        self: _Core,
        selector: str,
        paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
        *,
        wait: float = 5.0,
    ) -> None:
        """Put local files into an ``<input type=file>`` (``DOM.setFileInputFiles``); the
        page gets ``input`` and ``change`` as if the user had picked them.

        Raises:
            FileNotFoundError: a path is not an existing file; nothing is set.
            ElementNotFoundError: nothing matches within ``wait``, or not a file input.
            ValueError: several files for an input without ``multiple``.
        """
        await input_actions.upload(self, selector, paths, wait=wait)

    async def back(
        self: _Core, *, wait_until: HistoryWait = "load", timeout: float | None = None
    ) -> None:
        """Go back one page in the tab's history and wait for it (as :meth:`navigate`).

        Raises:
            NavigationError: the tab is at the first page of its history.
            CommandTimeoutError: the page did not reach ``wait_until`` in time.
        """
        session_id = await self.session()
        self._url = await nav_history.go(
            self._connection, session_id, -1, wait_until=wait_until,
            timeout=self.default_timeout if timeout is None else timeout,
        )  # fmt: skip

    async def forward(
        self: _Core, *, wait_until: HistoryWait = "load", timeout: float | None = None
    ) -> None:
        """Go forward one page in the tab's history and wait for it (as :meth:`navigate`).

        Raises:
            NavigationError: the tab is at the last page of its history.
            CommandTimeoutError: the page did not reach ``wait_until`` in time.
        """
        session_id = await self.session()
        self._url = await nav_history.go(
            self._connection, session_id, 1, wait_until=wait_until,
            timeout=self.default_timeout if timeout is None else timeout,
        )  # fmt: skip

    async def response_body(
        self: _Core, request: str | Request, *, timeout: float | None = None
    ) -> bytes | str:
        """The response body of a request from :meth:`network` (or its ``request_id``).

        Text comes back as ``str``, binary bodies (images, fonts, ...) as ``bytes``. A
        request still loading is waited for. Chrome keeps bodies of the current document
        only, within its buffer: read them before navigating away.

        Raises:
            ProtocolError: Chrome no longer has the body (the page navigated since, or it
                was evicted), the id is unknown, or the request failed or was a redirect.
            CommandTimeoutError: the request was still loading after ``timeout``.
        """
        await self.session()
        request_id = request if isinstance(request, str) else request.request_id
        return await self._network.response_body(
            request_id, timeout=self.default_timeout if timeout is None else timeout
        )
