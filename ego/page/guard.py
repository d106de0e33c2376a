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
``<link rel=prefetch>`` is held the same way: Chrome sends it as a request of its own kind
(``Fetch``, with ``Sec-Purpose: prefetch``), which no page script makes (their ``fetch`` and
XHR are ``XHR``; measured on Chromium 156).

It fails closed: when a page or frame that still exists cannot be set up (Chrome refuses
``Fetch.enable`` or the frames' auto-attach), the page is closed (a new one before it ran at
all) and a warning logged; :meth:`NavigationGuard.ready` tells whoever opened the page, which
``Browser`` turns into :class:`~ego.errors.OriginLimitsError`. The pages open when the guard
starts are set up (or closed) before :meth:`NavigationGuard.start` returns.

It covers documents and prefetches only: the requests a page's scripts make (``fetch``, XHR,
images, WebSockets), ``<link rel=preload>`` (requested as the image, script, style or font it
preloads, the same request an ``<img>`` or ``<script>`` makes) and service workers are not
watched. The guard is a convenience that keeps an agent on the sites it was given, not a
security boundary against a hostile page.

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

from ..errors import CommandTimeoutError, EgoError, OriginLimitsError, ProtocolError
from .attach import GUARDED, auto_attach, prepare_paused
from .closing import close_target
from .policy import NavigationPolicy

if TYPE_CHECKING:
    from ..protocol.session import Session
    from ..protocol.transport import Connection, Subscription

__all__ = ["NavigationGuard"]

logger = logging.getLogger("ego.page.guard")

#: The requests the guard decides: documents, and ``<link rel=prefetch>`` (Chrome's
#: ``Fetch`` resource type; a page script's ``fetch`` is ``XHR``, and Chrome 156 refuses
#: ``Prefetch`` in a filter).
_HELD: Final = {
    "patterns": [
        {"urlPattern": "*", "resourceType": "Document"},
        {"urlPattern": "*", "resourceType": "Fetch"},
    ]
}


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
        #: Each page's setup, by target id: None once it runs held, or why it was closed.
        self._pages: dict[str, asyncio.Future[str | None]] = {}
        #: The pages being closed since they cannot be held, and why.
        self._closing: dict[str, str] = {}
        #: True once a page said that this browser preloads pages (see the module docstring).
        self.preloading = False

    async def start(self) -> None:
        """Watch every page there is and every page created from now on; returns once each
        page open now is held (or, when it cannot be, closed).

        Raises:
            ProtocolError: the browser refuses auto-attach (some remote endpoints do).
            CommandTimeoutError: the browser did not answer.
        """
        root = self._connection.root
        self._subscription = root.subscribe("Target.attachedToTarget", self._on_attached)
        await root.send("Target.setAutoAttach", auto_attach("page"))
        targets = await root.send("Target.getTargets")
        pages = [t["targetId"] for t in targets.get("targetInfos", []) if t.get("type") == "page"]
        await asyncio.gather(*(self._settled(page) for page in pages))

    async def ready(self, target_id: str) -> None:
        """Wait until the page ``target_id`` (just created) is held by the guard.

        Raises:
            OriginLimitsError: it could not be, and was closed.
        """
        reason = await self._settled(target_id)
        if reason is not None:
            self._pages.pop(target_id, None)  # closed: nobody else asks
            raise OriginLimitsError(
                f"the origin limits could not be set up on the new tab ({reason}), so it was "
                "closed before it loaded anything; open the tab again, or use a browser that "
                "lets ego intercept requests",
                target_id=target_id,
            )

    async def _settled(self, target_id: str) -> str | None:
        """Why the page was closed, or None once it runs held; a page Chrome never attached
        within the connection's timeout is closed (it may be running unheld)."""
        future = self._page(target_id)
        timeout = self._connection.default_timeout
        try:
            return await asyncio.wait_for(asyncio.shield(future), timeout)
        except TimeoutError:
            reason = f"Chrome did not attach it within {timeout:g} s"
            await self._close(target_id, reason)
            return reason

    def _page(self, target_id: str) -> asyncio.Future[str | None]:
        future = self._pages.get(target_id)
        if future is None:
            future = self._pages[target_id] = asyncio.get_running_loop().create_future()
        return future

    def _settle(self, target_id: str, reason: str | None) -> None:
        future = self._page(target_id)
        if not future.done():
            future.set_result(reason)

    def _forget(self, target_id: str) -> None:
        """The page closed: whoever waits for it learns why the guard closed it, or goes on
        to find it closed."""
        future = self._pages.pop(target_id, None)
        if future is not None and not future.done():
            future.set_result(self._closing.get(target_id))

    def close(self) -> None:
        if self._subscription is not None:
            self._subscription.close()
        for task in self._tasks:
            task.cancel()
        for target_id in list(self._pages):
            self._forget(target_id)
        self._closing.clear()

    def _on_attached(self, params: dict[str, Any], page: str | None = None) -> None:
        """A target Chrome attached to a session of the guard's: ``page`` is the id of the
        page it belongs to (None: it is a page)."""
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
            target_id = str(info.get("targetId", ""))
            policy = self._policy_for(info.get("browserContextId"))
            session = self._connection.session(session_id)
            if kind == "page":
                page = target_id
                self._page(target_id)
                # Forgotten with the page (the guard's session of it ends when it closes).
                session.on_detach(lambda: self._forget(target_id))
            if policy.limits_origins:
                self._watch(session, policy, target_id, page or target_id)
                if kind == "page":
                    session.subscribe("Preload.preloadEnabledStateUpdated", self._on_preload_state)
                    self._start(self._watch_preloading(session))
            else:  # a page of a context with no limits of its own: let it run
                self._start(prepare_paused(session))
                if kind == "page":
                    self._settle(target_id, None)

    def _watch(self, session: Session, policy: NavigationPolicy, target_id: str, page: str) -> None:
        # The guard's own session of the page or frame: what it subscribes to there ends
        # with it, when the page closes or the frame goes.
        session.subscribe("Fetch.requestPaused", self._on_paused(session, policy))
        session.subscribe("Target.attachedToTarget", lambda params: self._on_attached(params, page))
        self._start(self._prepare(session, target_id, page))

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

    async def _prepare(self, session: Session, target_id: str, page: str) -> None:
        """Hold the target's requests, then let it run; when that fails on a target that
        still exists, close its page instead (never resumed: a new page has run nothing)."""
        answers = await asyncio.gather(
            session.send("Fetch.enable", _HELD),
            session.send("Target.setAutoAttach", GUARDED),
            return_exceptions=True,
        )
        failed = next((a for a in answers if isinstance(a, BaseException)), None)
        if failed is not None and not isinstance(failed, EgoError):
            raise failed
        if failed is not None and await self._exists(session, target_id, failed):
            await self._close(page, str(failed))
            return
        await prepare_paused(session)
        if page == target_id:
            self._settle(page, None)

    async def _exists(self, session: Session, target_id: str, error: BaseException) -> bool:
        """Whether the target whose setup failed with ``error`` is still there: a frame
        removed or a page closed meanwhile fails it too, and has nothing left to hold."""
        if session.detached or not isinstance(error, ProtocolError | CommandTimeoutError):
            return False
        try:
            await self._connection.root.send("Target.getTargetInfo", {"targetId": target_id})
        except ProtocolError:
            return False
        except EgoError:
            return True  # no answer: held as though it were there
        return True

    async def _close(self, page: str, reason: str) -> None:
        """Close ``page``, which cannot be held to the limits, and say why; whoever waits
        for it learns once it is closed."""
        self._closing[page] = reason
        logger.warning(
            "closing page %s: its origin limits could not be set up (%s), and it would have "
            "run without them",
            page,
            reason,
        )
        try:
            await close_target(self._connection, page, None)
        except EgoError as exc:
            logger.debug("closing page %s: %s", page, exc)
        finally:
            self._closing.pop(page, None)
            self._settle(page, reason)

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
