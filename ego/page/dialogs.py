"""Page dialogs (``alert``, ``confirm``, ``prompt``, ``beforeunload``): the policy that answers
them, and each tab's record of the ones it saw.

A dialog stops its page: until it is answered the renderer runs nothing, so every evaluate,
click or tool call on the tab would wait out its timeout. Each tab has a
:class:`DialogTracker` that hears ``Page.javascriptDialogOpening``/``Closed`` and either
answers the dialog at once as the policy says, or (``"manual"``) suspends the tab's session on
the connection: pending and new calls fail at once with
:class:`~ego.errors.DialogOpenError` until :meth:`DialogTracker.handle` answers it.

A page that opens one dialog after another (each answer opens the next) would hold a caller
who answers them one by one forever: once a page has opened more than :data:`FLOOD_DIALOGS`
within :data:`FLOOD_SECONDS`, the tracker answers its further dialogs itself as ``"auto"``
would, and :meth:`DialogTracker.take_flood_note` says so once. A loop of dialogs in one
script never yields, so the page cannot load another document: :meth:`DialogTracker.end_loop`
ends its renderer (as a crash would) for a navigation or reload to go ahead.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Generator, Mapping
from dataclasses import asdict, dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, Literal, cast, get_args

from ..errors import CommandTimeoutError, DialogOpenError, EgoError, ProtocolError, TabClosedError

if TYPE_CHECKING:
    from ..protocol.session import Session
    from ..protocol.transport import Subscription

__all__ = [
    "DEFAULT_DIALOG_ACTIONS",
    "FLOOD_DIALOGS",
    "FLOOD_SECONDS",
    "MAX_RECORDED_DIALOGS",
    "Dialog",
    "DialogAction",
    "DialogExpectation",
    "DialogPolicy",
    "DialogTracker",
    "DialogType",
    "dialog_actions",
]

logger = logging.getLogger("ego.page.dialogs")

DialogType = Literal["alert", "beforeunload", "confirm", "prompt"]
DialogAction = Literal["accept", "dismiss", "manual"]

#: A dialog policy: ``"auto"`` (the default answers below), ``"accept"`` or ``"dismiss"``
#: (every dialog), ``"manual"`` (none: the caller answers with ``tab.handle_dialog``), or a
#: mapping from dialog type to ``"accept"``/``"dismiss"``/``"manual"`` that overrides
#: ``"auto"`` for the types it names, e.g. ``{"beforeunload": "accept"}``.
DialogPolicy = Literal["auto", "accept", "dismiss", "manual"] | Mapping[str, str]

#: What ``"auto"`` does: the page goes on as a user who clicks the safe button would let it.
#: A ``beforeunload`` dismissed keeps the page (the navigation fails with net::ERR_ABORTED).
DEFAULT_DIALOG_ACTIONS: Final[Mapping[str, DialogAction]] = {
    "alert": "accept",
    "beforeunload": "dismiss",
    "confirm": "dismiss",
    "prompt": "dismiss",
}

#: How many dialogs a tab remembers (the oldest are forgotten first).
MAX_RECORDED_DIALOGS: Final = 50

#: A page that opens more dialogs than this within :data:`FLOOD_SECONDS` is in a dialog
#: loop: the tracker answers the rest itself.
FLOOD_DIALOGS: Final = 5
FLOOD_SECONDS: Final = 10.0

# Seconds after the last dialog of a loop during which a navigation counts it as running.
_LOOP_RUNNING: Final = 2.0

_TYPES: Final = frozenset(get_args(DialogType))
_ACTIONS: Final = frozenset(get_args(DialogAction))

# What a session suspended by an open dialog still takes: the answer itself, and the Fetch
# domain, which the browser runs without the renderer (a replay must keep serving requests).
_ALLOWED_WHILE_OPEN: Final = frozenset({"Page.handleJavaScriptDialog", "Fetch."})

_EVENTS: Final = (
    "Page.javascriptDialogOpening",
    "Page.javascriptDialogClosed",
    "Inspector.targetCrashed",
)

# Seconds an answer the policy sends may take; Chrome answers it from the browser process.
_ANSWER_TIMEOUT: Final = 10.0


def dialog_actions(policy: DialogPolicy) -> dict[str, DialogAction]:
    """The action for each dialog type under ``policy``.

    Raises:
        ValueError: ``policy`` is not a known name, or a mapping names an unknown dialog type
            or action.
    """
    if isinstance(policy, str):
        if policy == "auto":
            return dict(DEFAULT_DIALOG_ACTIONS)
        if policy in _ACTIONS:
            return dict.fromkeys(sorted(_TYPES), policy)
        raise ValueError(
            f"dialogs={policy!r}: use 'auto', 'accept', 'dismiss', 'manual' or a mapping such "
            "as {'beforeunload': 'accept'}"
        )
    actions = dict(DEFAULT_DIALOG_ACTIONS)
    for kind, action in policy.items():
        if kind not in _TYPES:
            raise ValueError(
                f"dialogs: unknown dialog type {kind!r}; use {', '.join(sorted(_TYPES))}"
            )
        if action not in _ACTIONS:
            raise ValueError(f"dialogs: {kind}={action!r}; use 'accept', 'dismiss' or 'manual'")
        actions[kind] = cast(DialogAction, action)
    return actions


@dataclass
class Dialog:
    """One dialog a page opened, and how it ended.

    Attributes:
        type: ``"alert"``, ``"confirm"``, ``"prompt"`` or ``"beforeunload"``.
        message: the text the page showed.
        url: the page (or frame) that opened it.
        default_prompt: a prompt's default text (``""`` otherwise).
        opened_at: when it opened (``time.time()``).
        answer: ``"accepted"`` or ``"dismissed"``; None while open, or when it closed
            without an answer known.
        prompt_text: the text a prompt was accepted with.
        handled_by: ``"policy"`` (the dialog policy answered), ``"caller"``
            (``tab.handle_dialog`` or ``tab.expect_dialog(accept=...)``) or ``"elsewhere"``
            (a navigation, a crash or another client closed it); None while open.
        closed_at: when it was answered or closed; None while open.
    """

    type: str
    message: str
    url: str
    default_prompt: str
    opened_at: float
    answer: Literal["accepted", "dismissed"] | None = None
    prompt_text: str | None = None
    handled_by: Literal["policy", "caller", "elsewhere"] | None = None
    closed_at: float | None = None

    @property
    def is_open(self) -> bool:
        """True while the dialog blocks its page."""
        return self.closed_at is None

    def as_dict(self) -> dict[str, Any]:
        """The record as JSON data (for a front end's result)."""
        return {**asdict(self), "open": self.is_open}

    def _close(
        self,
        answer: Literal["accepted", "dismissed"] | None,
        prompt_text: str | None,
        by: Literal["policy", "caller", "elsewhere"],
    ) -> None:
        self.answer = answer
        self.prompt_text = prompt_text if answer == "accepted" and self.type == "prompt" else None
        self.handled_by = by
        self.closed_at = time.time()


class DialogTracker:
    """One tab's dialogs: answers them by the policy, records them, and blocks the tab's
    session while one waits for the caller.

    Made by :class:`ego.Tab`; :meth:`attach` once its session exists. Chrome reports a dialog
    that a cross-site frame opens on the tab's session too (with that frame's id), and while it
    is open only that frame's process is held: the session blocked is the one the frame lives
    in (``frame_session``), the tab's own for a frame in the tab's process.
    """

    def __init__(
        self,
        target_id: str,
        session: Callable[[], Awaitable[Session]],
        policy: DialogPolicy = "auto",
        frame_session: Callable[[str], Session | None] = lambda frame_id: None,
    ) -> None:
        self._target_id = target_id
        self._session = session
        self._frame_session = frame_session
        self._blocked: Session | None = None
        self._policy: DialogPolicy = policy
        self._actions = dialog_actions(policy)
        self._tab_session: Session | None = None
        self._subscription: Subscription | None = None
        self._current: Dialog | None = None
        self._history: deque[Dialog] = deque(maxlen=MAX_RECORDED_DIALOGS)
        self._expected: list[DialogExpectation] = []
        self._closed = False
        #: Dialogs of a loop the tracker answered in the caller's place, not yet told, and
        #: the pages whose loop was told (once a loop, until the page's dialogs slow down).
        self._flood_answered: list[Dialog] = []
        self._flood_told: set[str] = set()
        #: When the last dialog of a loop opened (monotonic), and the session it holds.
        self._flood_at: float | None = None
        self._flood_session: Session | None = None

    @property
    def policy(self) -> DialogPolicy:
        """The policy answering this tab's dialogs (settable)."""
        return self._policy

    @policy.setter
    def policy(self, policy: DialogPolicy) -> None:
        self._actions = dialog_actions(policy)
        self._policy = policy

    @property
    def current(self) -> Dialog | None:
        """The dialog that blocks the page now, if any."""
        current = self._current
        return current if current is not None and current.is_open else None

    @property
    def history(self) -> list[Dialog]:
        """The dialogs seen since attach, oldest first (the last :data:`MAX_RECORDED_DIALOGS`)."""
        return list(self._history)

    def attach(self, session: Session) -> None:
        """Start hearing the tab session's dialog events (before ``Page.enable``)."""
        if self._subscription is not None:
            self._subscription.close()
        self._tab_session = session
        self._subscription = session.subscribe_all(_EVENTS, self._on_event)

    def close(self) -> None:
        """Stop: the tab closed. Waiting :meth:`expect` calls fail with TabClosedError."""
        self._closed = True
        if self._subscription is not None:
            self._subscription.close()
        for expectation in self._expected:
            expectation._fail(
                TabClosedError(f"tab {self._target_id} closed before a dialog opened")
            )
        self._expected.clear()

    async def handle(self, accept: bool, prompt_text: str | None = None) -> Dialog:
        """Answer the open dialog. See :meth:`ego.Tab.handle_dialog`."""
        await self._session()
        session = self._tab_session
        assert session is not None
        if self._subscription is not None:
            await self._subscription.drain()  # every dialog event received so far is seen
        dialog = self.current
        params: dict[str, Any] = {"accept": bool(accept)}
        if prompt_text is not None:
            params["promptText"] = prompt_text
        try:
            await session.send("Page.handleJavaScriptDialog", params)
        except ProtocolError as exc:
            if "No dialog is showing" not in str(exc):
                raise
            raise ProtocolError(
                f"no dialog is open on tab {self._target_id[:8]}: nothing to answer"
                + self._last_words(),
                method="Page.handleJavaScriptDialog",
                code=exc.code,
            ) from None
        if dialog is None:
            # Chrome had a dialog whose event is still on its way: record what is known.
            dialog = Dialog("unknown", "", "", "", time.time())
            self._history.append(dialog)
        dialog._close("accepted" if accept else "dismissed", prompt_text, "caller")
        if self._current is dialog:
            self._current = None
            self._unblock()
        return dialog

    def expect(
        self, accept: bool | None, prompt_text: str | None, timeout: float
    ) -> DialogExpectation:
        """A waiter for the next dialog. See :meth:`ego.Tab.expect_dialog`."""
        return DialogExpectation(self, accept, prompt_text, timeout)

    def stayed(self, since: float) -> str:
        """Why a navigation since ``since`` was aborted, when a dismissed ``beforeunload``
        dialog kept the page; ``""`` otherwise."""
        for dialog in reversed(self._history):
            if dialog.opened_at < since:
                break
            if dialog.type == "beforeunload" and dialog.answer != "accepted":
                return (
                    ": the page's beforeunload dialog was dismissed, so the page stayed; to "
                    "leave it, navigate inside `async with tab.expect_dialog(accept=True):`, "
                    "or launch with dialogs={'beforeunload': 'accept'}"
                )
        return ""

    def take_flood_note(self) -> str | None:
        """What the tracker did about a dialog loop since last asked (None: nothing): the
        page, how many of its dialogs it answered in the caller's place, and what to do."""
        answered = [dialog for dialog in self._flood_answered if dialog.url not in self._flood_told]
        self._flood_answered = []
        if not answered:
            return None
        self._flood_told.update(dialog.url for dialog in answered)
        last = answered[-1]
        where = last.url if len(last.url) <= 100 else last.url[:99] + "…"
        return (
            f"{where} opened more than {FLOOD_DIALOGS} dialogs within {FLOOD_SECONDS:g} s, "
            f"each answer opening the next: ego answered the rest itself ({len(answered)} so "
            "far) as "
            "dialogs='auto' would (an alert accepted, the rest dismissed; the last said "
            f"{last.message[:80]!r}); navigate away or close the tab"
        )

    async def end_loop(self) -> bool:
        """End the page's renderer when it is in a dialog loop now (a dialog of the loop
        opened in the last seconds), so that a navigation can go ahead; True when it did.

        A loop such as ``for (;;) alert()`` never yields: answered or not, the page runs no
        task, and a document of the same site cannot replace it. ``Page.crash`` ends the
        renderer that runs it, as a crash would; the navigation then brings the tab back.
        Never raises.
        """
        at, session = self._flood_at, self._flood_session or self._tab_session
        if at is None or session is None or time.monotonic() - at > _LOOP_RUNNING:
            return False
        self._flood_at = None
        logger.info("ending the renderer of a page caught in a dialog loop")
        try:
            await session.send("Page.crash", timeout=_ANSWER_TIMEOUT)
        except EgoError:
            pass  # the crash cuts the command short: that is the answer
        return True

    def _flooding(self, dialog: Dialog, frame_id: str) -> bool:
        """Whether ``dialog`` (just recorded) makes its page's dialogs a loop."""
        since = dialog.opened_at - FLOOD_SECONDS
        count = sum(
            1 for seen in self._history if seen.url == dialog.url and seen.opened_at >= since
        )
        if count <= FLOOD_DIALOGS:
            return False
        self._flood_at = time.monotonic()
        self._flood_session = self._frame_session(frame_id) or self._tab_session
        return True

    def _last_words(self) -> str:
        if not self._history:
            return ""
        last = self._history[-1]
        how = f"{last.answer} by {last.handled_by}" if last.answer else "closed"
        return f" (the last one, {last.type} {last.message!r}, was {how})"

    # -- events ---------------------------------------------------------------------------

    async def _on_event(self, method: str, params: dict[str, Any]) -> None:
        if method == "Page.javascriptDialogOpening":
            await self._opened(params)
        elif self._current is not None and self._current.is_open:
            # Closed: by our answer (already recorded), a navigation, or another client.
            # A crash: the renderer and its dialog are gone.
            dialog, self._current = self._current, None
            if method == "Page.javascriptDialogClosed":
                accepted = bool(params.get("result"))
                dialog._close(
                    "accepted" if accepted else "dismissed",
                    str(params.get("userInput", "")),
                    "elsewhere",
                )
            else:
                dialog._close(None, None, "elsewhere")
            self._unblock()

    async def _opened(self, params: dict[str, Any]) -> None:
        dialog = Dialog(
            type=str(params.get("type", "alert")),
            message=str(params.get("message", "")),
            url=str(params.get("url", "")),
            default_prompt=str(params.get("defaultPrompt", "")),
            opened_at=time.time(),
        )
        self._current = dialog
        self._history.append(dialog)
        expectation = self._expected.pop(0) if self._expected else None
        if expectation is not None and expectation.accept is not None:
            await self._answer(dialog, expectation.accept, expectation.prompt_text, "caller")
        else:
            frame_id = str(params.get("frameId") or "")
            action = self._actions.get(dialog.type, "dismiss")
            if not self._flooding(dialog, frame_id):
                self._flood_told.discard(dialog.url)  # its loop, if any, is over
            elif action == "manual":
                action = DEFAULT_DIALOG_ACTIONS.get(dialog.type, "dismiss")
                self._flood_answered.append(dialog)
            if action == "manual":
                self._suspend(dialog, frame_id)
            else:
                prompt = dialog.default_prompt if action == "accept" else None
                await self._answer(dialog, action == "accept", prompt, "policy")
        if expectation is not None:
            expectation._deliver(dialog)

    async def _answer(
        self,
        dialog: Dialog,
        accept: bool,
        prompt_text: str | None,
        by: Literal["policy", "caller"],
    ) -> None:
        params: dict[str, Any] = {"accept": accept}
        if prompt_text is not None:
            params["promptText"] = prompt_text
        try:
            assert self._tab_session is not None
            await self._tab_session.send(
                "Page.handleJavaScriptDialog", params, timeout=_ANSWER_TIMEOUT
            )
        except EgoError as exc:
            # Gone already (another client answered, the tab closed): its Closed event, if
            # any, records how it ended.
            logger.debug("could not answer a %s dialog: %s", dialog.type, exc)
            return
        dialog._close("accepted" if accept else "dismissed", prompt_text, by)
        if self._current is dialog:
            self._current = None

    def _suspend(self, dialog: Dialog, frame_id: str) -> None:
        if self._tab_session is None:
            return
        tab = self._target_id[:8]
        prompt = ", prompt_text='...'" if dialog.type == "prompt" else ""
        where = dialog.url if len(dialog.url) <= 100 else dialog.url[:99] + "…"

        def error(what: str) -> DialogOpenError:
            return DialogOpenError(
                f"{what}: a {dialog.type} dialog blocks tab {tab} ({where}) saying "
                f"{dialog.message!r}; the page runs nothing until it is answered: call "
                f"tab.handle_dialog(accept=True{prompt}) or tab.handle_dialog(accept=False) "
                "(or launch with dialogs='auto' to have dialogs answered for you)",
                dialog_type=dialog.type,
                dialog_message=dialog.message,
                url=dialog.url,
            )

        self._blocked = self._frame_session(frame_id) or self._tab_session
        self._blocked.suspend(error, allow=_ALLOWED_WHILE_OPEN)

    def _unblock(self) -> None:
        blocked, self._blocked = self._blocked, None
        if blocked is not None:
            blocked.resume()


class DialogExpectation:
    """The next dialog of a tab, from :meth:`ego.Tab.expect_dialog`.

    Await it (``dialog = await tab.expect_dialog()``) to wait for the next dialog, or the one
    open now, and get its :class:`Dialog`. Or use it as an async context manager around the
    call that opens the dialog: the block's calls run as the answer lets them, and on leaving
    the block it waits for the dialog (the same bound); :attr:`dialog` holds it after::

        async with tab.expect_dialog(accept=True, prompt_text="Ada") as expected:
            await tab.click("#rename")  # the prompt is answered at once: the click returns
        print(expected.dialog.message)

    Attributes:
        accept: how to answer (None: as the policy says, and ``"manual"`` leaves it open).
        prompt_text: the text to accept a prompt with.
        timeout: seconds to wait for the dialog.
        dialog: the dialog, once it opened.
    """

    def __init__(
        self,
        tracker: DialogTracker,
        accept: bool | None,
        prompt_text: str | None,
        timeout: float,
    ) -> None:
        self._tracker = tracker
        self.accept = accept
        self.prompt_text = prompt_text
        self.timeout = timeout
        self.dialog: Dialog | None = None
        self._future: asyncio.Future[Dialog] | None = None

    def __repr__(self) -> str:
        # What a person printing it in a shell wants: how it answers and what it caught.
        answer = {None: "as the policy says", True: "accept", False: "dismiss"}[self.accept]
        if self.prompt_text is not None:
            answer += f" with {self.prompt_text!r}"
        dialog = self.dialog
        if dialog is None:
            state = f"no dialog yet (waits up to {self.timeout:g} s)"
        else:
            state = f"{dialog.type} {dialog.message!r}, " + (
                "open" if dialog.is_open else f"{dialog.answer or 'closed'} by {dialog.handled_by}"
            )
        return f"<DialogExpectation {answer}: {state}>"

    def __await__(self) -> Generator[Any, None, Dialog]:
        return self._next().__await__()

    async def __aenter__(self) -> DialogExpectation:
        await self._register()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if exc_type is not None:
            self._forget()
            return
        await self._wait()

    async def _next(self) -> Dialog:
        tracker = self._tracker
        await tracker._session()
        if tracker._subscription is not None:
            await tracker._subscription.drain()
        current = tracker.current
        if current is not None:
            if self.accept is not None:
                return await tracker.handle(self.accept, self.prompt_text)
            self.dialog = current
            return current
        await self._register()
        return await self._wait()

    async def _register(self) -> None:
        tracker = self._tracker
        await tracker._session()
        if tracker._closed:
            raise TabClosedError(f"tab {tracker._target_id} is closed: open a new tab")
        self._future = asyncio.get_running_loop().create_future()
        tracker._expected.append(self)

    async def _wait(self) -> Dialog:
        assert self._future is not None
        try:
            self.dialog = await asyncio.wait_for(asyncio.shield(self._future), self.timeout)
        except TimeoutError:
            self._forget()
            raise CommandTimeoutError(
                f"no dialog opened on tab {self._tracker._target_id[:8]} within "
                f"{self.timeout:g} s; pass a larger timeout if the page is slow"
            ) from None
        except BaseException:
            self._forget()
            raise
        return self.dialog

    def _forget(self) -> None:
        if self in self._tracker._expected:
            self._tracker._expected.remove(self)
        if self._future is not None and not self._future.done():
            self._future.cancel()

    def _deliver(self, dialog: Dialog) -> None:
        self.dialog = dialog
        if self._future is not None and not self._future.done():
            self._future.set_result(dialog)

    def _fail(self, error: Exception) -> None:
        if self._future is not None and not self._future.done():
            self._future.set_exception(error)
            self._future.exception()  # read: nobody may be waiting any more
