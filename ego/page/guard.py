"""Holding every frame of every page to a :class:`~ego.page.policy.NavigationPolicy`'s origins.

``Tab.navigate`` checks the URL it is given, but a page navigates by itself too (a link, a
form, ``location.href``, an iframe's ``src``, a popup). The guard sees every document request
of every frame before it leaves the browser: on the browser's session it asks Chrome to attach
each page as it is created (``Target.setAutoAttach`` with ``waitForDebuggerOnStart``), and on
each page (and each cross-site frame inside one) it enables ``Fetch`` for document requests and
the same auto-attach for frames, then lets the target run. That auto-attach holds the page's
dedicated workers too (see :mod:`ego.page.attach`), so it names them, and the guard lets each
run; it watches nothing in them. A document request to a refused
origin fails with ``BlockedByClient`` (the frame shows Chrome's error page; a ``navigate`` to it
raises :class:`~ego.errors.OriginBlockedError`); everything else continues untouched.

It covers documents only: the requests a page's scripts make (``fetch``, XHR, images,
WebSockets) and service workers are not watched. The guard is a convenience that keeps an agent
on the sites it was given, not a security boundary against a hostile page.

Preloading (speculation rules' prefetch and prerender) fetches a document that no ``Fetch``
interception sees, and a navigation to it later shows that document without a new request: a
Chrome that ego starts has it turned off (:mod:`ego.protocol._preferences`). A browser ego
attached to keeps its own setting; each page tells (``Preload.preloadEnabledStateUpdated``),
and when one says preloading is on, :attr:`NavigationGuard.preloading` is set and a warning
logged once, since the limits cannot hold there.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Final

from ..errors import EgoError
from .attach import GUARDED, auto_attach, prepare_paused
from .policy import NavigationPolicy

if TYPE_CHECKING:
    from ..protocol.session import Session
    from ..protocol.transport import Connection, Subscription

__all__ = ["NavigationGuard"]

logger = logging.getLogger("ego.page.guard")

_DOCUMENTS: Final = {"patterns": [{"urlPattern": "*", "resourceType": "Document"}]}


class NavigationGuard:
    """Fails the document requests a policy refuses, on every page and frame of a browser.

    Args:
        connection: the browser's connection.
        policy_for: the policy of the pages of a browser context (Chrome's
            ``browserContextId``; each context may have limits of its own).
    """

    def __init__(
        self, connection: Connection, policy_for: Callable[[str | None], NavigationPolicy]
    ) -> None:
        self._connection = connection
        self._policy_for = policy_for
        self._subscription: Subscription | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        #: True once a page said that this browser preloads pages (see the module docstring).
        self.preloading = False

    async def start(self) -> None:
        """Watch every page there is and every page created from now on.

        Raises:
            ProtocolError: the browser refuses auto-attach (some remote endpoints do).
        """
        root = self._connection.root
        self._subscription = root.subscribe("Target.attachedToTarget", self._on_attached)
        await root.send("Target.setAutoAttach", auto_attach("page"))

    def close(self) -> None:
        if self._subscription is not None:
            self._subscription.close()
        for task in self._tasks:
            task.cancel()

    def _on_attached(self, params: dict[str, Any]) -> None:
        session_id = str(params.get("sessionId", ""))
        info = params.get("targetInfo", {})
        kind = info.get("type")
        if not session_id:
            return
        if kind == "worker":
            # Let it run, and keep the session, which ends with the worker: a detach (sent
            # on the parent) would end the tab's own session of the worker too.
            self._start(prepare_paused(self._connection.session(session_id)))
        elif kind in ("page", "iframe"):
            policy = self._policy_for(info.get("browserContextId"))
            session = self._connection.session(session_id)
            if policy.limits_origins:
                self._watch(session, policy)
                if kind == "page":
                    session.subscribe("Preload.preloadEnabledStateUpdated", self._on_preload_state)
                    self._start(self._watch_preloading(session))
            else:  # a page of a context with no limits of its own: let it run
                self._start(prepare_paused(session))

    def _watch(self, session: Session, policy: NavigationPolicy) -> None:
        # The guard's own session of the page or frame: what it subscribes to there ends
        # with it, when the page closes or the frame goes.
        session.subscribe("Fetch.requestPaused", self._on_paused(session, policy))
        session.subscribe("Target.attachedToTarget", self._on_attached)
        self._start(self._prepare(session))

    def _start(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _watch_preloading(self, session: Session) -> None:
        # Apart from the paused target's setup: the page runs whatever this answers.
        try:
            await session.send("Preload.enable")
        except EgoError as exc:
            logger.debug("cannot hear whether page %s preloads: %s", session.id, exc)

    def _on_preload_state(self, params: dict[str, Any]) -> None:
        if self.preloading or any(params.get(key) for key in params if key.startswith("disabled")):
            return
        self.preloading = True
        logger.warning(
            "this browser preloads pages (speculation rules): a page can bring in a document "
            "of a refused origin without a request the origin limits see; turn off 'Preload "
            "pages' in its settings (chrome://settings/performance), or let ego start Chrome"
        )

    async def _prepare(self, session: Session) -> None:
        setup = asyncio.gather(
            session.send("Fetch.enable", _DOCUMENTS),
            session.send("Target.setAutoAttach", GUARDED),
        )
        await prepare_paused(session, setup)

    def _on_paused(self, session: Session, policy: NavigationPolicy) -> Any:
        async def decide(params: dict[str, Any]) -> None:
            request_id = params.get("requestId")
            url = str(params.get("request", {}).get("url", ""))
            reason = policy.refusal(url)
            try:
                if reason is None:
                    await session.send("Fetch.continueRequest", {"requestId": request_id})
                else:
                    logger.info("refused %s: %s", url, reason)
                    await session.send(
                        "Fetch.failRequest",
                        {"requestId": request_id, "errorReason": "BlockedByClient"},
                    )
            except EgoError as exc:
                logger.debug("answering paused request %s: %s", url, exc)

        return decide
