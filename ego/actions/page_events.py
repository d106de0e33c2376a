"""Page actions heard in the page itself: what a person does in a headed window, or a script
or an agent drives from another process, which no action log of this process sees.

:class:`PageEvents` adds a binding and a script to every document of the tab (on a CDP
session of its own, as the HAR recorder does): the script listens, in the capture phase, to
clicks and keys that are trusted (a person's input, or CDP's: never what a page's own script
fires) and to changes (a driver's script chooses an option by firing one), and tells the
binding of each action as a user makes it:

- a ``change`` of a text field (``type``, its value), of a ``<select>`` (``select``) or of a
  checkbox or radio (``check``, ``uncheck``);
- a ``click`` on anything else (a button, a link);
- Enter pressed in a one-line field (its value, then ``press``).

Each comes with the element's role and accessible name as the selector engine computes them
(``roles.js``), its tag and input type, a durable selector checked in the page to find it
alone (``role=...[name=...]``, else the CSS :func:`ego.page.durable.selector_for` would give),
and the page's URL.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from importlib import resources
from typing import TYPE_CHECKING, Any, Final

from ..errors import EgoError
from ..page.scripts import page_script

if TYPE_CHECKING:
    from ..page.tab import Tab
    from ..protocol._events import Subscription
    from ..protocol.session import Session

__all__ = ["BINDING", "PageEvents"]

logger = logging.getLogger("ego.actions")

#: The binding the page's script calls with each action (JSON text).
BINDING: Final = "__egoPageAction"

_SCRIPT: Final = "page_events.js"


def listener_source() -> str:
    """The script every document of the tab runs."""
    text = resources.files(__package__).joinpath(_SCRIPT).read_text(encoding="utf-8")
    return text.replace("__DOM__", page_script("dom")).replace("__BINDING__", BINDING)


class PageEvents:
    """Tell ``on_action`` of each action heard in ``tab``'s pages (see the module docstring).

    Args:
        tab: the tab.
        on_action: called with each action's data (``verb``, ``value``, ``role``, ``name``,
            ``tag``, ``input_type``, ``selector``, ``url``).
        timeout: seconds each CDP command may take.
    """

    def __init__(
        self, tab: Tab, on_action: Callable[[dict[str, Any]], None], *, timeout: float = 10.0
    ) -> None:
        self.tab = tab
        self.on_action = on_action
        self.timeout = timeout
        self._session: Session | None = None
        self._subscription: Subscription | None = None
        self._script_id: str | None = None

    async def start(self) -> None:
        """Listen in the page now and in every document it loads next.

        Raises:
            TabClosedError, BrowserClosedError, CommandTimeoutError, ProtocolError: the tab
                could not be attached.
        """
        await self.tab.attach()  # fails early, with the tab's own message, if it is closed
        connection = self.tab.connection
        attached = await connection.send(
            "Target.attachToTarget",
            {"targetId": self.tab.target_id, "flatten": True},
            timeout=self.timeout,
        )
        self._session = connection.session(str(attached["sessionId"]))
        self._subscription = self._session.subscribe("Runtime.bindingCalled", self._called)
        # A script for new documents runs only where Page is enabled, and bindings are
        # heard where Runtime is: both on this session of our own.
        await self._send("Page.enable", {})
        await self._send("Runtime.enable", {})
        await self._send("Runtime.addBinding", {"name": BINDING})
        source = listener_source()
        added = await self._send("Page.addScriptToEvaluateOnNewDocument", {"source": source})
        self._script_id = str(added.get("identifier", ""))
        await self._send("Runtime.evaluate", {"expression": source})

    async def stop(self) -> None:
        """Stop listening (the script already in the page stays, its binding gone)."""
        if self._subscription is not None:
            self._subscription.close()
            self._subscription = None
        session = self._session
        if session is None:
            return
        try:
            if self._script_id:
                await self._send(
                    "Page.removeScriptToEvaluateOnNewDocument", {"identifier": self._script_id}
                )
            await self._send("Runtime.removeBinding", {"name": BINDING})
            # Only this session detaches: the tab's own stays (the tab hears its own detach).
            await self.tab.connection.send(
                "Target.detachFromTarget", {"sessionId": session.id}, timeout=self.timeout
            )
        except EgoError:
            pass  # the tab went: nothing is left to undo
        self._session = None

    async def _send(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self._session is not None
        answer: dict[str, Any] = await self._session.send(method, params, timeout=self.timeout)
        return answer

    def _called(self, params: dict[str, Any]) -> None:
        if params.get("name") != BINDING:
            return
        try:
            data = json.loads(str(params.get("payload", "")))
        except ValueError:
            return
        if isinstance(data, dict):
            try:
                self.on_action(data)
            except Exception:
                logger.warning("a page action could not be kept", exc_info=True)
