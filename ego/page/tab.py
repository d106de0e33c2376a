"""A browser tab: one page target reached through a flattened CDP session.

The tab owns its session, what it records of its page and its closing; its page verbs are its
main frame's (:class:`~ego.page.main_frame.OnMainFrame`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..errors import (
    CommandTimeoutError,
    NavigationError,
    OriginBlockedError,
    ProtocolError,
    ResendRefusedError,
    TabClosedError,
)
from . import history, locate, screenshots
from .action_log import Observation, observed
from .closing import CLOSE_ATTEMPTS, close_target
from .console import ConsoleLog
from .dialogs import DialogPolicy, DialogTracker
from .downloads import Downloads
from .frame import Frame
from .frames import FrameTree
from .hands import InputState
from .loads import LoadWait, WaitUntil, check_wait_until
from .main_frame import OnMainFrame
from .network import SAFE_METHODS, NetworkLog
from .policy import OPEN, NavigationPolicy
from .records import TabRecords
from .refs import RefRegistry
from .spinning import stop_spinning
from .workers import TabWorkers, Worker, origin_of

if TYPE_CHECKING:
    from ..protocol.session import Session
    from ..protocol.transport import Connection

__all__ = ["CLOSE_ATTEMPTS", "Tab", "WaitUntil"]

logger = logging.getLogger("ego.page.tab")


class Tab(TabRecords, OnMainFrame):
    """One page target: navigate it, evaluate in it, close it.

    Tabs come from :meth:`ego.Browser.tabs`, :meth:`ego.Browser.new_tab` and
    :meth:`ego.Browser.find_tab`. A tab attaches its CDP session on first use. Calls on one tab
    may run concurrently; each is independent. Once the tab closes (by :meth:`close`, by the
    page, or by the user) every pending and later call raises
    :class:`~ego.errors.TabClosedError`. When its renderer crashes (or is killed), every
    pending call fails at once with :class:`~ego.errors.TargetCrashedError`, and so does every
    later one until :meth:`reload` or :meth:`navigate` brings the page back. A page dialog
    (``alert``, ``confirm``, ...) is answered by the :attr:`dialog_policy` and recorded in
    :attr:`dialogs`; under ``"manual"`` calls fail at once with
    :class:`~ego.errors.DialogOpenError` until :meth:`handle_dialog` answers it.

    The page verbs (``evaluate``, ``click``, ``snapshot``, ...) are its main frame's
    (:attr:`main_frame`): the tab hands each to it.
    """

    def __init__(
        self,
        connection: Connection,
        target_id: str,
        *,
        url: str = "",
        title: str = "",
        default_timeout: float = 30.0,
        dialogs: DialogPolicy = "auto",
        downloads: Downloads | None = None,
        policy: NavigationPolicy = OPEN,
        on_closed: Callable[[Tab], None] | None = None,
    ) -> None:
        self._connection = connection
        self.target_id = target_id
        self.title = title
        self.default_timeout = default_timeout
        self._session: Session | None = None
        self._attaching: asyncio.Future[Session] | None = None
        self._closed = False
        self._ended = False
        self._on_closed = on_closed
        self._network = NetworkLog()
        self._console = ConsoleLog()
        # Before the frames: each frame shares the list (tab.observe_actions adds to it).
        self._action_observers: list[Observation] = []
        self._frames = FrameTree(self, connection)
        self._frames.main._seen(url)
        self._workers = TabWorkers(connection, target_id, lambda: self.default_timeout)
        self._frames.watchers.append(self._workers.watch)
        self._dialogs = DialogTracker(target_id, self.attach, dialogs, self._frames.session_of)
        self._downloads = downloads
        self._policy = policy
        #: The refs this tab's snapshots gave out (``ref=e12`` in any verb).
        self.refs = RefRegistry()
        #: Where its mouse is and what is held down (``tab.mouse``, ``tab.keyboard``).
        self.input_state = InputState()

    def __repr__(self) -> str:
        return f"<Tab {self.target_id[:8]} {self.url!r}>"

    @property
    def main_frame(self) -> Frame:
        """The tab's main frame: its document, URL and history of documents. The tab's own
        verbs act on it."""
        return self._frames.main

    @property
    def origin(self) -> str:
        """``scheme://host[:port]`` of :attr:`url`, or ``""`` for an opaque URL."""
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}" if parts.netloc else ""

    @property
    def closed(self) -> bool:
        """True once the tab is known to be closed."""
        return self._closed

    @property
    def crashed(self) -> bool:
        """True while the tab's renderer is crashed: calls fail with TargetCrashedError until
        :meth:`reload` or :meth:`navigate`."""
        return self._session is not None and self._session.crashed

    @property
    def connection(self) -> Connection:
        """The browser's CDP connection (the tab's own events: :attr:`session`)."""
        return self._connection

    @property
    def session(self) -> Session | None:
        """The tab's :class:`~ego.protocol.session.Session` once attached (:meth:`attach`):
        it owns what is subscribed on the tab. Once the tab closed it is detached (None when
        Chrome kept it past the closes it dropped)."""
        return self._session

    def known_frame(self, frame_id: str) -> Frame | None:
        """The frame with this id, if the tab has it now (no waiting)."""
        return self._frames.get(frame_id)

    def _mark_closed(self) -> None:
        """The tab is gone: end everything it holds (idempotent)."""
        if self._ended:
            return
        self._ended = True
        self._closed = True
        self._network.close()
        self._console.close()
        self._dialogs.close()
        self._frames.close()
        self._workers.close()
        if self._session is not None and not self._session.detached:
            # Closed while Chrome still has the session (the closes were dropped): the tab's
            # calls must fail as a closed tab's, not go out on it.
            self._session = None
        if self._on_closed is not None:
            self._on_closed(self)

    def _listed(self, info: Mapping[str, Any]) -> None:
        """What the browser's target list says of the tab now."""
        self.title = str(info.get("title", self.title))
        if "url" in info:
            self._frames.main._seen(str(info["url"]))

    async def attach(self) -> Session:
        """Attach to the tab if needed and return its session; concurrent callers share the
        one attach. Every verb attaches by itself.

        Raises:
            TabClosedError: the tab is closed.
            BrowserClosedError: the browser connection is closed.
        """
        if self._closed:
            raise TabClosedError(f"tab {self.target_id} is closed: open a new tab")
        if self._session is not None:
            return self._session
        if self._attaching is None:
            self._attaching = asyncio.get_running_loop().create_future()
            try:
                session = await self._attach()
            except BaseException as exc:
                self._attaching.set_exception(exc)
                # Read the exception so that asyncio does not warn when nobody else waited.
                self._attaching.exception()
                self._attaching = None
                raise
            self._attaching.set_result(session)
            self._attaching = None
            return session
        return await asyncio.shield(self._attaching)

    async def _attach(self) -> Session:
        try:
            result = await self._connection.send(
                "Target.attachToTarget", {"targetId": self.target_id, "flatten": True}
            )
        except ProtocolError as exc:
            self._closed = True
            raise TabClosedError(
                f"could not attach to tab {self.target_id} ({exc}): it is probably closed"
            ) from None
        session = self._connection.session(str(result["sessionId"]))
        if session.detached:
            # Chrome detached it before this answer was read (the tab closed as it attached):
            # the tab keeps it, detached, and nothing listens on it.
            self._session = session
            self._mark_closed()
            raise TabClosedError(f"tab {self.target_id} closed as ego attached: open a new tab")
        session.target_id = self.target_id
        # Everything below listens through the session, so it all ends when the tab does.
        session.on_detach(self._mark_closed)
        # The network log listens before Network.enable so that no request slips by.
        self._network.attach(session)
        # Likewise the console log before Runtime.enable, which replays what Chrome kept.
        self._console.attach(session)
        # Before Page.enable, like the logs: no dialog slips by.
        self._dialogs.attach(session)
        # Likewise the frames, before Page and Runtime report them.
        self._frames.attach(session)
        try:
            # Lifecycle events carry the loader id, which lets a load wait for *its*
            # document rather than the previous one's.
            await asyncio.gather(
                session.enable("Page", "Network", "Runtime"),
                session.send("Page.setLifecycleEventsEnabled", {"enabled": True}),
                # For Inspector.targetCrashed, which fails this tab's calls at once after a
                # crash. Chrome sends it without this too; older builds may not.
                self._enable_quietly("Inspector.enable", session),
                # Cross-site iframes attach as child sessions; frames already there are listed.
                self._frames.start(session),
            )
        except BaseException:
            if session.detached:
                self._session = session  # the tab closed meanwhile: it keeps its session
            else:
                # A half-made attach leaves nothing behind: the next call attaches afresh.
                self._forget_session(session)
            raise
        self._session = session
        return session

    def _forget_session(self, session: Session) -> None:
        """Drop a session whose setup failed, and what listens on it; the browser's session
        holds the detach until Chrome answers it."""
        self._network.close()
        self._console.close()
        self._frames.close_session(session)
        self._connection.root.send_unawaited("Target.detachFromTarget", {"sessionId": session.id})

    async def _enable_quietly(self, method: str, session: Session) -> None:
        """Send ``method``, tolerating an endpoint that does not offer its domain."""
        try:
            await session.send(method)
        except ProtocolError:
            pass

    @observed
    async def navigate(
        self,
        url: str,
        *,
        wait_until: WaitUntil = "load",
        timeout: float | None = None,
        referrer: str | None = None,
    ) -> None:
        """Go to ``url`` and wait until the new document reaches ``wait_until``.

        Args:
            url: where to go.
            wait_until: ``"commit"`` (the response started), ``"domcontentloaded"``,
                ``"load"`` or ``"networkidle"``.
            timeout: seconds for the whole navigation; the tab's default if omitted.
            referrer: an optional Referer.

        Raises:
            OriginBlockedError: the browser's limits refuse ``url`` (nothing was sent), or a
                redirect led to an origin they refuse.
            NavigationError: the navigation failed (DNS, refused, aborted); the message holds
                Chrome's error text such as ``net::ERR_CONNECTION_REFUSED``.
            CommandTimeoutError: ``wait_until`` was not reached in time.
            TabClosedError: the tab closed meanwhile.
        """
        check_wait_until(wait_until)
        seconds = self.default_timeout if timeout is None else timeout
        self._policy.check(url)
        session = await self.attach()
        # A script spinning in the page would keep a same-site navigation from committing.
        if not await self._dialogs.end_loop():
            await stop_spinning(session)
        started = time.time()
        with LoadWait(session, self.target_id, wait_until, seconds, f"navigation to {url}") as load:
            params: dict[str, Any] = {"url": url}
            if referrer:
                params["referrer"] = referrer
            try:
                result = await session.send("Page.navigate", params, timeout=load.left())
            except CommandTimeoutError:
                raise CommandTimeoutError(
                    f"navigation to {url} got no response within {seconds:g} s"
                ) from None
            error_text = result.get("errorText")
            if error_text == "net::ERR_BLOCKED_BY_CLIENT" and self._policy.limits_origins:
                # A redirect to a refused origin: the guard failed it.
                self._policy.check(url)
                raise OriginBlockedError(
                    f"navigation to {url} refused: it led to an origin the browser's limits refuse",
                    url=url,
                )
            if error_text:
                raise NavigationError(
                    f"navigation to {url} failed: {error_text}" + self._dialogs.stayed(started)
                )
            loader_id = result.get("loaderId")
            if loader_id is None:
                return  # a same-document navigation (a #fragment): nothing loads
            # Committed: the new document is there, whether or not its event came first.
            self._frames.main._committed(url, str(loader_id))
            load.commit(str(loader_id))
            await load.reached()

    @observed
    async def reload(
        self, *, wait_until: WaitUntil = "load", timeout: float | None = None, resend: bool = True
    ) -> None:
        """Reload the page and wait until the new document reaches ``wait_until``.

        A real reload (``Page.reload``): the page is fetched and run again even when its URL
        has a ``#fragment``, where navigating to the same URL would only scroll. It is also
        how a tab whose renderer crashed comes back (see :attr:`crashed`).

        Args:
            wait_until: as :meth:`navigate` (``"commit"``: the new document started).
            timeout: seconds for the whole reload; the tab's default if omitted.
            resend: False refuses to reload a page that is the answer to a form (a POST):
                the reload would send the form again.

        Raises:
            ResendRefusedError: ``resend`` is False and the page came from a POST (or
                another request that is not safe to repeat); nothing was sent.
            CommandTimeoutError: ``wait_until`` was not reached in time.
            TabClosedError: the tab closed meanwhile.
        """
        check_wait_until(wait_until)
        seconds = self.default_timeout if timeout is None else timeout
        session = await self.attach()
        method = None if resend else await self._network.document_method()
        if method is not None and method not in SAFE_METHODS:
            raise ResendRefusedError(
                f"reload of {self.url} refused: the page is the answer to a {method} request "
                "(a form sent), and reloading would send it again; navigate to its URL for "
                "a fresh copy (a GET), or reload with resend=True to send the form again",
                url=self.url,
                method=method,
            )
        if not session.crashed and not await self._dialogs.end_loop():
            # A script spinning in the page would keep the reload from committing.
            await stop_spinning(session)
        what = f"reload of {self.url}"
        with LoadWait(session, self.target_id, wait_until, seconds, what) as load:
            try:
                await session.send("Page.reload", {}, timeout=load.left())
            except CommandTimeoutError:
                raise CommandTimeoutError(f"{what} got no response within {seconds:g} s") from None
            await load.committed()
            await load.reached()

    async def activate(self) -> None:
        """Bring the tab to the front (matters for a headed browser).

        Raises:
            TabClosedError: the tab is closed.
        """
        if self._closed:
            raise TabClosedError(f"tab {self.target_id} is closed: open a new tab")
        try:
            await self._connection.send("Target.activateTarget", {"targetId": self.target_id})
        except ProtocolError:
            self._closed = True
            raise TabClosedError(f"tab {self.target_id} is closed: open a new tab") from None

    async def close(self) -> None:
        """Close the tab and return once Chrome has closed it. Calls still pending on it fail
        with TabClosedError. Idempotent.

        Chrome acknowledges a close that meets a navigation's commit and then drops it, leaving
        the tab open (a page that redirects as it loads, a form just sent): the close is asked
        again until the tab is gone, :data:`CLOSE_ATTEMPTS` times at most, after which a
        warning is logged (the tab may still be open).

        Raises:
            BrowserClosedError: the connection closed before the tab did.
        """
        if self._closed:
            return
        self._closed = True
        try:
            await close_target(self._connection, self.target_id, self._session)
        finally:
            self._mark_closed()

    # -- what only a tab has: frames, workers, requests, console, history, downloads, PDF ---

    async def frames(self) -> list[Frame]:
        """Every frame of the page, the main frame first, each frame before its children:
        same-process and cross-site (out-of-process) iframes alike, as they are now.

        Raises:
            TabClosedError: the tab is closed.
        """
        await self.attach()
        return self._frames.frames()

    async def frame(
        self,
        *,
        name: str | None = None,
        url: str | None = None,
        frame_id: str | None = None,
        selector: str | None = None,
        timeout: float | None = None,
    ) -> Frame:
        """The first frame (in :meth:`frames` order) whose ``name`` equals ``name`` and whose
        URL contains ``url`` (or matches it as a glob with ``*``), waiting up to ``timeout``
        seconds for one to appear; or the frame the iframe ``selector`` matches shows.

        Args:
            name: the frame's name attribute.
            url: part of the frame's URL, or a glob.
            frame_id: Chrome's frame id.
            selector: a CSS selector of the iframe element (``>>`` between the iframes of
                a frame inside a frame, as the snapshot prints them).
            timeout: seconds to wait; the tab's default if omitted (0: do not wait).

        Raises:
            ValueError: none of ``name``, ``url``, ``frame_id`` or ``selector`` given.
            FrameNotFoundError: no such frame within ``timeout`` (the message lists the
                frames there are).
            ElementNotFoundError: ``selector`` matches no iframe within ``timeout``.
            TabClosedError: the tab is closed.
        """
        seconds = self.default_timeout if timeout is None else timeout
        if selector is not None:
            found = await locate.enter(self.main_frame, selector, seconds)
            assert isinstance(found, Frame)
            return found
        await self.attach()
        return await self._frames.find(
            name=name, url=url, frame_id=frame_id, timeout=seconds, tab=self.target_id
        )

    async def workers(self) -> list[Worker]:
        """The tab's workers running now, each with ``url``, ``type`` (``"worker"``,
        ``"shared_worker"``, ``"service_worker"``) and ``evaluate``: the dedicated workers
        of the page and its frames (and those they start), the service workers Chrome relates
        to it, and the shared workers of an origin one of its frames shows.

        Raises:
            TabClosedError: the tab is closed.
        """
        await self.attach()
        return await self._workers.running({origin_of(f.url) for f in self._frames.frames()})

    async def changed(self, timeout: float) -> bool:
        """Wait until a frame of the tab changes; False when ``timeout`` passed first."""
        return await self._frames.changed(timeout)

    @observed
    async def back(self, *, wait_until: WaitUntil = "load", timeout: float | None = None) -> None:
        """Go back one page in the tab's history and wait for it (as :meth:`navigate`).

        Raises:
            NavigationError: the tab is at the first page of its history.
            CommandTimeoutError: the page did not reach ``wait_until`` in time.
        """
        await history.go(
            await self.attach(), self.target_id, -1, wait_until=wait_until,
            timeout=self.default_timeout if timeout is None else timeout,
        )  # fmt: skip

    @observed
    async def forward(
        self, *, wait_until: WaitUntil = "load", timeout: float | None = None
    ) -> None:
        """Go forward one page in the tab's history and wait for it (as :meth:`navigate`).

        Raises:
            NavigationError: the tab is at the last page of its history.
            CommandTimeoutError: the page did not reach ``wait_until`` in time.
        """
        await history.go(
            await self.attach(), self.target_id, 1, wait_until=wait_until,
            timeout=self.default_timeout if timeout is None else timeout,
        )  # fmt: skip

    async def pdf(
        self,
        *,
        path: str | os.PathLike[str] | None = None,
        landscape: bool = False,
        print_background: bool = True,
        scale: float = 1.0,
        timeout: float | None = None,
    ) -> bytes:
        """Print the page to PDF (``Page.printToPDF``) and return the file's bytes.

        Args:
            path: also write the PDF to this file.
            landscape: print in landscape orientation.
            print_background: print background colours and images.
            scale: 0.1 to 2, the page's scale on paper.
            timeout: seconds; the tab's default if omitted.

        Raises:
            ValueError: ``scale`` out of range.
            ProtocolError: Chrome cannot print this page (a headed Chrome may refuse).
            OSError: ``path`` cannot be written.
        """
        return await screenshots.print_pdf(
            self,
            path=path,
            landscape=landscape,
            print_background=print_background,
            scale=scale,
            timeout=self.default_timeout if timeout is None else timeout,
        )
