"""A browser tab: one page target reached through a flattened CDP session."""

from __future__ import annotations

import asyncio
import base64
import logging
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal
from urllib.parse import urlsplit

from ..errors import (
    CommandTimeoutError,
    FrameNotFoundError,
    NavigationError,
    OriginBlockedError,
    ProtocolError,
    TabClosedError,
)
from . import history, locate
from .console import ConsoleLog, ConsoleMessage
from .dialogs import Dialog, DialogExpectation, DialogPolicy, DialogTracker
from .downloads import Download, DownloadExpectation, Downloads
from .evaluation import evaluate, stop_spinning
from .frame import Frame
from .frames import FrameTree
from .network import NetworkLog, Request
from .policy import OPEN, NavigationPolicy
from .verbs import PageVerbs
from .waits import url_matcher

if TYPE_CHECKING:
    from ..protocol.transport import Connection
    from .history import HistoryWait

__all__ = ["CLOSE_ATTEMPTS", "Tab", "WaitUntil"]

logger = logging.getLogger("ego.page.tab")

WaitUntil = Literal["commit", "domcontentloaded", "load", "networkidle"]

_LIFECYCLE: Final[dict[str, str]] = {
    "domcontentloaded": "DOMContentLoaded",
    "load": "load",
    "networkidle": "networkIdle",
}

_DEFAULT: Final = object()

#: How many times :meth:`Tab.close` asks Chrome to close a tab that stays open.
CLOSE_ATTEMPTS: Final = 8
#: Seconds a close waits for the tab to go before asking again.
_CLOSE_WAIT: Final = 0.25
#: Seconds between checks on a tab this connection is not attached to.
_CLOSE_POLL: Final = 0.05


class Tab(PageVerbs):
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
    ) -> None:
        self._connection = connection
        self.target_id = target_id
        self._url = url
        self.title = title
        self.default_timeout = default_timeout
        self._session_id: str | None = None
        self._attaching: asyncio.Future[str] | None = None
        self._closed = False
        self._documents = 0
        self._loader = ""
        self._network = NetworkLog()
        self._console = ConsoleLog()
        self._frames = FrameTree(self, connection)
        self._dialogs = DialogTracker(
            connection, target_id, self.session, dialogs, self._frames.session_of
        )
        self._downloads = downloads
        self._policy = policy

    def __repr__(self) -> str:
        return f"<Tab {self.target_id[:8]} {self._url!r}>"

    @property
    def url(self) -> str:
        """The URL last seen for this tab (refreshed by navigate and Browser.tabs)."""
        return self._url

    @property
    def origin(self) -> str:
        """``scheme://host[:port]`` of :attr:`url`, or ``""`` for an opaque URL."""
        parts = urlsplit(self._url)
        return f"{parts.scheme}://{parts.netloc}" if parts.netloc else ""

    @property
    def documents(self) -> int:
        """How many main-frame documents this tab has shown since it attached: it changes on
        every navigation and reload (not on a ``#fragment`` or ``pushState``), which is how
        long page globals live. The cache layer keys its page-side memo on it."""
        return self._documents

    @property
    def closed(self) -> bool:
        """True once the tab is known to be closed."""
        return self._closed

    @property
    def crashed(self) -> bool:
        """True while the tab's renderer is crashed: calls fail with TargetCrashedError until
        :meth:`reload` or :meth:`navigate`."""
        session_id = self._session_id
        return session_id is not None and self._connection.session_crashed(session_id)

    @property
    def connection(self) -> Connection:
        """The browser's CDP connection (to subscribe to this tab's events with
        ``session_id=tab.session_id``)."""
        return self._connection

    @property
    def session_id(self) -> str | None:
        """The flattened CDP session id, once attached."""
        return self._session_id

    @property
    def network_log(self) -> NetworkLog:
        """The tab's network log (what :meth:`network` reads)."""
        return self._network

    @property
    def is_main(self) -> bool:
        """True: a tab is its own main frame (a :class:`Frame` may not be)."""
        return True

    @property
    def _frame_id(self) -> str:
        # A page target's main frame bears the target's id.
        return self.target_id

    def _mark_closed(self) -> None:
        self._closed = True
        self._network.close()
        self._console.close()
        self._dialogs.close()
        self._frames.close()

    async def session(self) -> str:
        """Attach to the tab if needed and return its CDP session id.

        Raises:
            TabClosedError: the tab is closed.
            BrowserClosedError: the browser connection is closed.
        """
        if self._closed:
            raise TabClosedError(f"tab {self.target_id} is closed: open a new tab")
        if self._session_id is not None:
            return self._session_id
        if self._attaching is None:
            self._attaching = asyncio.get_running_loop().create_future()
            try:
                session_id = await self._attach()
            except BaseException as exc:
                self._attaching.set_exception(exc)
                # Read the exception so that asyncio does not warn when nobody else waited.
                self._attaching.exception()
                self._attaching = None
                raise
            self._attaching.set_result(session_id)
            return session_id
        return await asyncio.shield(self._attaching)

    async def _attach(self) -> str:
        try:
            result = await self._connection.send(
                "Target.attachToTarget", {"targetId": self.target_id, "flatten": True}
            )
        except ProtocolError as exc:
            self._closed = True
            raise TabClosedError(
                f"could not attach to tab {self.target_id} ({exc}): it is probably closed"
            ) from None
        session_id: str = result["sessionId"]
        # The network log listens before Network.enable so that no request slips by.
        self._network.attach(self._connection, session_id)
        # Likewise the console log before Runtime.enable, which replays what Chrome kept.
        self._console.attach(self._connection, session_id)
        # Before Page.enable, like the logs: no dialog slips by.
        self._dialogs.attach(session_id)
        # Likewise the frames, before Page and Runtime report them.
        self._frames.attach(session_id)
        self._connection.subscribe(
            "Page.frameNavigated", self._on_frame_navigated, session_id=session_id
        )
        # Lifecycle events carry the loader id, which lets navigate() wait for *its* load
        # rather than the previous document's.
        await asyncio.gather(
            self._connection.send("Page.enable", session_id=session_id),
            self._connection.send(
                "Page.setLifecycleEventsEnabled", {"enabled": True}, session_id=session_id
            ),
            self._connection.send("Network.enable", session_id=session_id),
            # For console(): Runtime.consoleAPICalled and Runtime.exceptionThrown.
            self._connection.send("Runtime.enable", session_id=session_id),
            # For Inspector.targetCrashed, which fails this tab's calls at once after a
            # crash. Chrome sends it without this too; older builds may not.
            self._enable_quietly("Inspector.enable", session_id),
            # Cross-site iframes attach as child sessions; frames already there are listed.
            self._frames.start(session_id),
        )
        self._session_id = session_id
        return session_id

    async def _enable_quietly(self, method: str, session_id: str) -> None:
        """Send ``method``, tolerating an endpoint that does not offer its domain."""
        try:
            await self._connection.send(method, session_id=session_id)
        except ProtocolError:
            pass

    async def send(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout: float | object | None = _DEFAULT,
    ) -> dict[str, Any]:
        """Send a raw CDP command to this tab's session and return its result.

        Raises:
            ProtocolError, CommandTimeoutError, TabClosedError, TargetCrashedError,
            CommandTooLargeError, BrowserClosedError: as
            :meth:`ego.protocol.transport.Connection.send`.
        """
        session_id = await self.session()
        return await self._connection.send(
            method,
            params,
            session_id=session_id,
            timeout=self.default_timeout if timeout is _DEFAULT else timeout,
        )

    async def evaluate(
        self,
        expression: str,
        *,
        await_promise: bool = True,
        timeout: float | None = None,
        user_gesture: bool = False,
        describe: bool = True,
    ) -> Any:
        """Evaluate a JavaScript expression in the page and return its value.

        JSON values come back as Python ones: objects and arrays become dicts and lists,
        ``undefined`` becomes ``None``; NaN, ±Infinity and -0 become floats and a BigInt an
        int. What JSON cannot carry comes back described (``describe=True``, the default): a
        ``Date`` as its ISO string, a DOM node as ``{"tag", "id", "classes", "text",
        "selector"}``, a ``Map`` as a list of ``[key, value]`` pairs, a ``Set`` as a list, a
        cycle as ``"[Circular $.path]"``; docs/architecture.md ("Values from evaluate") has
        every rule. Top-level ``await`` works (``(await fetch(url)).status``).

        Args:
            expression: JavaScript source; its completion value is the result.
            await_promise: if the value is a promise, wait for it and return what it resolves to.
            timeout: seconds to wait; the tab's default if omitted.
            user_gesture: run as if the user had clicked (lets code open popups, play
                media). Off by default: it costs Chrome measurable work on every call.
            describe: False takes the raw path, one round trip that returns the value as JSON
                carries it (a Date becomes ``{}``, a cycle raises): what tool calls use. True
                costs one more round trip when the value is an object.

        Raises:
            JavaScriptError: the code threw or the promise rejected; carries the JS message,
                stack and line. With ``describe=False``, also a value (returned or thrown)
                that cannot come back by value: a Symbol, a BigInt inside an object, a cycle,
                nesting past ~300 levels.
            DialogOpenError: a page dialog blocks the tab (the ``"manual"`` dialog policy);
                answer it with :meth:`handle_dialog`.
            ContextDestroyedError: the page navigated away or reloaded before the result.
            TabClosedError: the tab closed before the result.
            TargetCrashedError: the tab's renderer crashed (before or during the call);
                :meth:`reload` it or close it.
            CommandTimeoutError: no result within ``timeout``. When the page's thread was
                busy (a spinning script), the script was stopped and the message says so;
                otherwise a promise never settled and the page still answers.
            BrowserClosedError: the browser connection is closed.

        Cancelling the call abandons the result; a script still spinning in the page is then
        stopped in the background (``Runtime.terminateExecution``), as after a timeout.
        """
        session_id = await self.session()
        return await evaluate(
            self._connection,
            session_id,
            expression,
            await_promise=await_promise,
            timeout=self.default_timeout if timeout is None else timeout,
            user_gesture=user_gesture,
            describe=describe,
            tab=self.target_id,
        )

    # -- dialogs --------------------------------------------------------------------------

    @property
    def dialog_policy(self) -> DialogPolicy:
        """How this tab's page dialogs are answered (see :data:`ego.page.dialogs.DialogPolicy`);
        the browser's ``dialogs=`` unless set here."""
        return self._dialogs.policy

    @dialog_policy.setter
    def dialog_policy(self, policy: DialogPolicy) -> None:
        self._dialogs.policy = policy

    @property
    def dialogs(self) -> list[Dialog]:
        """The page dialogs seen since attach, oldest first (at most the last 50), each with
        its type, message, URL, default prompt, answer, who answered and when."""
        return self._dialogs.history

    @property
    def dialog(self) -> Dialog | None:
        """The dialog that blocks the page now, if any (only the ``"manual"`` policy leaves
        one open)."""
        return self._dialogs.current

    async def handle_dialog(self, accept: bool, prompt_text: str | None = None) -> Dialog:
        """Answer the dialog that blocks the page; the tab works again at once.

        Args:
            accept: True clicks OK (leaves the page, for ``beforeunload``); False cancels.
            prompt_text: the text a ``prompt`` is accepted with.

        Returns:
            the dialog, with its answer recorded.

        Raises:
            ProtocolError: no dialog is open (the message says how the last one ended).
            TabClosedError: the tab is closed.
        """
        return await self._dialogs.handle(accept, prompt_text)

    def expect_dialog(
        self,
        *,
        accept: bool | None = None,
        prompt_text: str | None = None,
        timeout: float | None = None,
    ) -> DialogExpectation:
        """Wait for the next dialog, and answer it as given: ``dialog = await
        tab.expect_dialog()`` (the one open now, or the next), or ``async with
        tab.expect_dialog(accept=True) as expected:`` around the call that opens it (see
        :class:`~ego.page.dialogs.DialogExpectation`).

        Args:
            accept: True accepts, False dismisses; None leaves it to the policy.
            prompt_text: the text to accept a prompt with.
            timeout: seconds to wait for the dialog; the tab's default if omitted.

        Raises:
            CommandTimeoutError: no dialog opened within ``timeout`` (raised by the await, or
                on leaving the block).
            TabClosedError: the tab closed first.
        """
        seconds = self.default_timeout if timeout is None else timeout
        return self._dialogs.expect(accept, prompt_text, seconds)

    def _load_budget(self, wait_until: str, timeout: float | None) -> tuple[float, float]:
        """Seconds a load may take and its deadline; ``wait_until`` checked first."""
        if wait_until not in ("commit", *_LIFECYCLE):
            raise ValueError(
                f"wait_until={wait_until!r}: use commit, domcontentloaded, load or networkidle"
            )
        seconds = self.default_timeout if timeout is None else timeout
        return seconds, time.monotonic() + seconds

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
        seconds, deadline = self._load_budget(wait_until, timeout)
        self._policy.check(url)
        session_id = await self.session()
        # A script spinning in the page would keep a same-site navigation from committing.
        await stop_spinning(self._connection, session_id)
        lifecycle = _LIFECYCLE.get(wait_until)
        started = time.time()
        seen: set[tuple[str, str]] = set()
        loader: list[str] = []

        def reached(params: dict[str, Any]) -> bool:
            seen.add((params.get("loaderId", ""), params.get("name", "")))
            return (
                bool(loader)
                and params.get("loaderId") == loader[0]
                and (params.get("name") == lifecycle)
            )

        waiter = (
            self._connection.expect("Page.lifecycleEvent", session_id=session_id, predicate=reached)
            if lifecycle is not None
            else None
        )
        try:
            params: dict[str, Any] = {"url": url}
            if referrer:
                params["referrer"] = referrer
            try:
                result = await self._connection.send(
                    "Page.navigate", params, session_id=session_id, timeout=seconds
                )
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
            self._url = url
            loader_id = result.get("loaderId")
            if loader_id is not None:
                self._new_document(str(loader_id))  # committed: the new document is there
            if waiter is None or loader_id is None:
                return  # "commit", or a same-document navigation (a #fragment)
            loader.append(loader_id)
            if (loader_id, lifecycle) in seen:
                return
            await _reach(waiter, deadline, f"navigation to {url}", wait_until, seconds)
        finally:
            if waiter is not None and not waiter.done():
                waiter.cancel()

    async def reload(self, *, wait_until: WaitUntil = "load", timeout: float | None = None) -> None:
        """Reload the page and wait until the new document reaches ``wait_until``.

        A real reload (``Page.reload``): the page is fetched and run again even when its URL
        has a ``#fragment``, where navigating to the same URL would only scroll. It is also
        how a tab whose renderer crashed comes back (see :attr:`crashed`).

        Args:
            wait_until: as :meth:`navigate` (``"commit"``: the new document started).
            timeout: seconds for the whole reload; the tab's default if omitted.

        Raises:
            CommandTimeoutError: ``wait_until`` was not reached in time.
            TabClosedError: the tab closed meanwhile.
        """
        seconds, deadline = self._load_budget(wait_until, timeout)
        session_id = await self.session()
        if not self._connection.session_crashed(session_id):
            # A script spinning in the page would keep the reload from committing.
            await stop_spinning(self._connection, session_id)
        if self._connection.session_crashed(session_id):
            # A crashed renderer answers nothing; a page target's main frame bears its id.
            main_frame = self.target_id
        else:
            tree = await self._connection.send(
                "Page.getFrameTree", session_id=session_id, timeout=seconds
            )
            main_frame = tree["frameTree"]["frame"]["id"]
        # Page.reload answers without a loader id: the new document's "init" lifecycle event
        # names it, and only that loader's events count (not the old page's late ones).
        lifecycle = _LIFECYCLE.get(wait_until, "init")
        loader: list[str] = []

        def reached(params: dict[str, Any]) -> bool:
            if params.get("frameId") != main_frame:
                return False
            if not loader:
                if params.get("name") != "init":
                    return False
                loader.append(str(params.get("loaderId", "")))
            return params.get("loaderId") == loader[0] and params.get("name") == lifecycle

        waiter = self._connection.expect(
            "Page.lifecycleEvent", session_id=session_id, predicate=reached
        )
        try:
            try:
                await self._connection.send(
                    "Page.reload", {}, session_id=session_id, timeout=seconds
                )
            except CommandTimeoutError:
                raise CommandTimeoutError(
                    f"reload of {self._url} got no response within {seconds:g} s"
                ) from None
            await _reach(waiter, deadline, f"reload of {self._url}", wait_until, seconds)
            self._new_document(loader[0])
        finally:
            if not waiter.done():
                waiter.cancel()

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
        session = self._session_id
        # Registered before the first close: the detach may arrive with its answer.
        detached = (
            self._connection.expect(
                "Target.detachedFromTarget",
                predicate=lambda params: params.get("sessionId") == session,
            )
            if session is not None
            else None
        )
        try:
            for _ in range(CLOSE_ATTEMPTS):
                try:
                    await self._connection.send("Target.closeTarget", {"targetId": self.target_id})
                except ProtocolError:
                    return  # already gone
                if await self._gone(detached):
                    return
            logger.warning(
                "tab %s is still open after %d closes: Chrome dropped them",
                self.target_id,
                CLOSE_ATTEMPTS,
            )
        finally:
            if detached is not None:
                detached.cancel()

    async def _gone(self, detached: asyncio.Future[Any] | None) -> bool:
        """Whether the tab is gone within :data:`_CLOSE_WAIT` seconds of a close."""
        if detached is not None:
            done, _ = await asyncio.wait({detached}, timeout=_CLOSE_WAIT)
            if done:
                detached.result()  # the connection's end is an error, not a closed tab
            return bool(done)
        # A connection not attached to the tab hears no detach: ask for the target instead.
        deadline = time.monotonic() + _CLOSE_WAIT
        while True:
            try:
                await self._connection.send("Target.getTargetInfo", {"targetId": self.target_id})
            except ProtocolError:
                return True
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(_CLOSE_POLL)

    def _on_frame_navigated(self, params: dict[str, Any]) -> None:
        frame = params.get("frame", {})
        if not frame.get("parentId"):
            self._url = frame.get("url", self._url)
            self._new_document(str(frame.get("loaderId", "")))

    def _new_document(self, loader_id: str) -> None:
        """Count a main-frame document once, by its loader: this event's handler may run
        after the navigation that made it returned, and both count it."""
        if loader_id and loader_id == self._loader:
            return
        self._loader = loader_id
        self._documents += 1

    # -- what only a tab has: its frames, requests, console, history, downloads, PDF ---------

    async def _target(self) -> tuple[str, int | None]:
        # The main frame's default context is the session's: no context id needed.
        return await self.session(), None

    async def top_send(
        self, method: str, params: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """Send a raw CDP command on the tab's session (as :meth:`send`)."""
        return await self.send(method, params)

    async def viewport_offset(self) -> tuple[float, float]:
        """Where the page's viewport sits in the tab's: the origin."""
        return 0.0, 0.0

    async def frames(self) -> list[Frame]:
        """Every frame of the page, the main frame first, each frame before its children:
        same-process and cross-site (out-of-process) iframes alike, as they are now.

        Raises:
            TabClosedError: the tab is closed.
        """
        await self.session()
        main = self._frames.main
        if not main.url:
            main._url = self._url
        return self._frames.frames()

    async def child_frames(self) -> list[Frame]:
        """The frames whose parent is the main frame."""
        return [frame for frame in await self.frames() if frame.parent is self._frames.main]

    async def child_frame(self, frame_id: str, timeout: float) -> Frame:
        """The frame with ``frame_id``, waiting up to ``timeout`` for it to be known."""
        return await self.frame(frame_id=frame_id, timeout=timeout)

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
            found = await locate.enter(self, selector, seconds)
            assert isinstance(found, Frame)
            return found
        if name is None and url is None and frame_id is None:
            raise ValueError("tab.frame() needs name=, url=, frame_id= or selector=")
        matches = url_matcher(url) if url is not None else None
        deadline = time.monotonic() + seconds
        while True:
            for frame in await self.frames():
                if (
                    (frame_id is None or frame.id == frame_id)
                    and (name is None or frame.name == name)
                    and (matches is None or matches(frame.url))
                ):
                    return frame
            left = deadline - time.monotonic()
            if left <= 0 or not await self._frames.changed(left):
                break
        wanted = ", ".join(
            f"{key}={value!r}"
            for key, value in (("name", name), ("url", url), ("frame_id", frame_id))
            if value is not None
        )
        listed = "; ".join(
            f"{frame.name or '(no name)'} {frame.url}" for frame in self._frames.frames()
        )
        raise FrameNotFoundError(
            f"no frame with {wanted} in tab {self.target_id[:8]} within {seconds:g} s; its "
            f"frames: {listed or 'none'}"
        )

    async def changed(self, timeout: float) -> bool:
        """Wait until a frame of the tab changes; False when ``timeout`` passed first."""
        return await self._frames.changed(timeout)

    async def network(self) -> list[Request]:
        """The requests the page made since it loaded, in the order they started.

        Each has method, URL, resource type, status (None while pending or failed), MIME
        type and, for a failed one, Chrome's error text. A navigation starts a new list. The
        list keeps the latest :data:`ego.page.network.MAX_REQUESTS` (1,000) requests of a
        page; older ones are dropped and counted, so a tab reused for many calls stays small.
        Requests of same-process frames are in it; a cross-site frame's are not.

        Raises:
            TabClosedError: the tab is closed.
        """
        await self.session()
        return await self._network.requests()

    async def response_body(
        self, request: str | Request, *, timeout: float | None = None
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

    async def console(self, *, clear: bool = False) -> list[ConsoleMessage]:
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
    def console_dropped(self) -> int:
        """Console messages dropped because the buffer was full (since attach or the last
        ``console(clear=True)``)."""
        return self._console.dropped

    async def back(self, *, wait_until: HistoryWait = "load", timeout: float | None = None) -> None:
        """Go back one page in the tab's history and wait for it (as :meth:`navigate`).

        Raises:
            NavigationError: the tab is at the first page of its history.
            CommandTimeoutError: the page did not reach ``wait_until`` in time.
        """
        session_id = await self.session()
        self._url = await history.go(
            self._connection, session_id, -1, wait_until=wait_until,
            timeout=self.default_timeout if timeout is None else timeout,
        )  # fmt: skip

    async def forward(
        self, *, wait_until: HistoryWait = "load", timeout: float | None = None
    ) -> None:
        """Go forward one page in the tab's history and wait for it (as :meth:`navigate`).

        Raises:
            NavigationError: the tab is at the last page of its history.
            CommandTimeoutError: the page did not reach ``wait_until`` in time.
        """
        session_id = await self.session()
        self._url = await history.go(
            self._connection, session_id, 1, wait_until=wait_until,
            timeout=self.default_timeout if timeout is None else timeout,
        )  # fmt: skip

    def expect_download(self, *, timeout: float | None = None) -> DownloadExpectation:
        """Wait for a download started by this tab (any of its frames), saved and complete.

        ``async with tab.expect_download() as download:`` around the call that starts it
        (``download`` is a :class:`~ego.page.downloads.Download` whose ``path``,
        ``suggested_filename``, ``url`` and ``size`` are filled in when the block ends), or
        ``download = await tab.expect_download()`` for the next one. Files land in the
        browser's downloads folder (``downloads=`` on launch or connect) under a safe name
        that never replaces another file.

        Args:
            timeout: seconds for the download to start and finish; the tab's default if
                omitted.

        Raises:
            CommandTimeoutError: no download started, or it did not finish, in time.
            DownloadFailedError: the download was cancelled or failed.
        """
        if self._downloads is None:
            raise RuntimeError("this tab has no downloads folder: open it through a Browser")
        seconds = self.default_timeout if timeout is None else timeout
        return self._downloads.expect(self._owns_download, seconds)

    async def keep_downloads(self) -> None:
        """Make sure a download this tab starts next lands in the browser's downloads folder
        (see :meth:`ego.page.downloads.Downloads.renew`)."""
        if self._downloads is not None:
            await self._downloads.renew()

    def downloads(self) -> list[Download]:
        """The downloads this tab's pages (any of its frames) started, oldest first."""
        if self._downloads is None:
            return []
        return [download for download in self._downloads.list() if self._owns_download(download)]

    def _owns_download(self, download: Download) -> bool:
        return (
            download.frame_id == self.target_id or self._frames.get(download.frame_id) is not None
        )

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
        if not 0.1 <= scale <= 2:
            raise ValueError(f"pdf scale={scale!r}: give 0.1 to 2")
        result = await self.send(
            "Page.printToPDF",
            {"landscape": landscape, "printBackground": print_background, "scale": scale},
            timeout=self.default_timeout if timeout is None else timeout,
        )
        data = base64.b64decode(result["data"])
        if path is not None:
            await asyncio.to_thread(Path(path).write_bytes, data)
        return data


async def _reach(
    waiter: asyncio.Future[Any], deadline: float, what: str, wait_until: str, seconds: float
) -> None:
    """Wait for a load's lifecycle ``waiter`` until ``deadline``.

    The waiter is shielded: on a timeout its owner cancels it in its own ``finally``.

    Raises:
        CommandTimeoutError: ``wait_until`` was not reached in time; ``what`` names the load.
    """
    try:
        await asyncio.wait_for(asyncio.shield(waiter), max(0.0, deadline - time.monotonic()))
    except TimeoutError:
        raise CommandTimeoutError(
            f"{what} did not reach {wait_until!r} within {seconds:g} s; "
            "pass a larger timeout or an earlier wait_until"
        ) from None
