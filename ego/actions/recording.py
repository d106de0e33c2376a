"""Recording the page actions of a tab as a flow (:meth:`ego.Tab.record_actions`).

An :class:`ActionRecording` observes the tab's action log (:meth:`ego.Tab.observe_actions`)
while its block runs and keeps each acting verb (navigate, click, type, select, check,
uncheck, press) as a :class:`~ego.learning.suggest.flow.FlowStep`: the target as written, a
durable selector for the element it named (:func:`ego.page.durable.selector_for`, checked to
find that node alone), the value typed or chosen, the URL before. The last snapshot read after
the last step is the flow's result. The file is written when the block ends, private.

The durable selector is asked for as the action starts, beside it: a click that submits a
form may take its button away before an answer comes, and then the selector is the element's
role and name as the action log saw them, marked ``checked: false``. ``tab.evaluate`` is no
page verb: the action log does not report it, so a flow's result is a snapshot.

With ``source="page"`` the steps are heard in the page instead (:mod:`.page_events`): what a
person does in a headed window, or a script drives from another process (``ego record
--session --actions FILE``); the first step is then the page the first action was made on.

Secrets are redacted as a trace redacts them (:class:`ego.trace.secrets.TraceSecrets`, which
uses the recording's redaction): text typed into a password field, or a field whose selector
or accessible name reads as a secret's, becomes ``REDACTED`` and is cut out of every URL and
read the flow keeps; with ``har=``, the HAR recorded alongside (:meth:`ego.Tab.record_har`,
secrets stripped) has those values cut out too.
"""

from __future__ import annotations

import asyncio
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final

from ..errors import EgoError
from ..learning.suggest.flow import ACTING_VERBS, FlowRead, FlowStep, RecordedFlow, outline_text
from ..page.durable import selector_for
from ..page.refs import parse_ref
from ..replay.secret_values import strip_values
from ..trace.file import open_private
from ..trace.secrets import REDACTED, TYPING_VERBS, TraceSecrets
from .page_events import PageEvents

if TYPE_CHECKING:
    from ..page.action_log import Action, Observation
    from ..page.tab import Tab

__all__ = ["SELECTOR_SECONDS", "ActionRecording"]

#: Seconds a durable selector may take to be found for one action.
SELECTOR_SECONDS: Final = 5.0


class ActionRecording:
    """The page actions of one tab while the block runs (see the module docstring)::

        async with tab.record_actions("search.actions.json", har=True) as recording:
            await tab.navigate("https://shop.example/search")
            await tab.type("#q", "lamp")
            await tab.click("text=Search")
            await tab.snapshot(selector="#results")
        print(len(recording.flow.steps))      # 3; search.actions.json and .har written

    Args:
        tab: the tab.
        path: where the flow is written when the block ends (None: kept in memory,
            :attr:`flow`).
        har: also record what the tab loads, for the draft's offline case: True writes it
            beside ``path`` (``<name>.har``), a path writes it there.
        source: ``"verbs"`` (the page verbs this process runs, from the tab's action log) or
            ``"page"`` (the actions heard in the page: a person's, another process's).

    Raises:
        ValueError: ``har=True`` without a ``path``, or another ``source``.
    """

    def __init__(
        self,
        tab: Tab,
        path: str | os.PathLike[str] | None = None,
        *,
        har: bool | str | os.PathLike[str] = False,
        source: str = "verbs",
    ) -> None:
        if source not in ("verbs", "page"):
            raise ValueError(f"source={source!r}: say 'verbs' or 'page'")
        self.tab = tab
        self.source = source
        self.path = Path(path) if path is not None else None
        if har is True:
            if self.path is None:
                raise ValueError("har=True writes the HAR beside the flow: give a path too")
            self.har_path: Path | None = self.path.with_name(_stem(self.path) + ".har")
        elif har:
            self.har_path = Path(har)
        else:
            self.har_path = None
        self.flow = RecordedFlow()
        self.secrets = TraceSecrets()
        self._observation: Observation | None = None
        self._selectors: dict[int, asyncio.Future[str]] = {}
        self._har_recorder: Any = None
        self._page_events: PageEvents | None = None

    async def __aenter__(self) -> ActionRecording:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.stop()

    async def start(self) -> ActionRecording:
        """Start observing the tab (and recording its HAR, with ``har=``)."""
        if self._observation is not None or self._page_events is not None:
            return self
        if self.har_path is not None:
            self._har_recorder = self.tab.record_har(None)
            await self._har_recorder.start()
        self.flow.recorded_at = datetime.now(UTC).isoformat(timespec="seconds")
        if self.source == "page":
            self._page_events = PageEvents(self.tab, self._heard)
            await self._page_events.start()
        else:
            self._observation = self.tab.observe_actions(self._ended, started=self._started)
        return self

    async def stop(self) -> RecordedFlow:
        """Stop observing and write the files (the flow, then its HAR).

        Raises:
            OSError: a file could not be written.
        """
        if self._observation is None and self._page_events is None:
            return self.flow
        if self._observation is not None:
            self._observation.stop()
            self._observation = None
        if self._page_events is not None:
            await self._page_events.stop()
            self._page_events = None
        for pending in self._selectors.values():
            pending.cancel()
        self._selectors.clear()
        self.flow.end_url = self.secrets.url(self.tab.url)
        if self._har_recorder is not None:
            await self._har_recorder.stop()
            har = self._har_recorder.har
            strip_values(har, self.secrets.values)
            assert self.har_path is not None
            _write_private(self.har_path, har.dumps())
            self.flow.har = (
                self.har_path.name
                if self.path is not None and self.har_path.parent == self.path.parent
                else str(self.har_path)
            )
        if self.path is not None:
            self.flow.path = self.path
            data = json.dumps(self.flow.as_dict(), indent=2, ensure_ascii=False) + "\n"
            _write_private(self.path, data)
        return self.flow

    def beside(self, har_path: str | os.PathLike[str]) -> None:
        """Name the HAR recorded beside the flow by someone else (``ego record --session``)."""
        har = Path(har_path)
        same = self.path is not None and har.parent.resolve() == self.path.parent.resolve()
        self.flow.har = har.name if same else str(har)

    def cut_secrets(self, har: Any) -> bool:
        """Cut what was typed into secret fields out of ``har`` (an :class:`ego.replay.Har`
        recorded beside); True when there was something to cut."""
        if not self.secrets.values:
            return False
        strip_values(har, self.secrets.values)
        return True

    # -- actions heard in the page -----------------------------------------------------------

    def _heard(self, data: dict[str, Any]) -> None:
        """One action :class:`.page_events.PageEvents` heard, as a step."""
        verb, url = str(data.get("verb", "")), self.secrets.url(str(data.get("url", "")))
        if verb not in ACTING_VERBS:
            return
        if not self.flow.steps:
            self.flow.steps.append(FlowStep(verb="navigate", target=url, url="about:blank"))
        element = None
        if data.get("tag"):
            element = {k: data.get(k) for k in ("role", "name", "tag", "input_type")}
        step = FlowStep(
            verb=verb, target=data.get("selector"), url=url, selector=data.get("selector"),
            element=element,
        )  # fmt: skip
        value = data.get("value")
        if verb in TYPING_VERBS:
            text = str(value or "")
            name = str(data.get("name") or "")
            kept = self.secrets.typed(text, step.selector, name, data.get("input_type"))
            if kept == REDACTED and text:
                step.secret = True
                self.flow.secrets.append(name or str(step.selector))
            step.value = kept
        elif verb == "select":
            step.value = value if isinstance(value, list) else str(value or "")
        elif verb == "press":
            step.value, step.target, step.selector, step.element = str(value), None, None, None
        self.flow.steps.append(step)

    # -- the action log's hook ----------------------------------------------------------------

    async def _started(self, action: Action) -> None:
        if action.element is None or (
            action.verb not in ACTING_VERBS and action.verb != "snapshot"
        ):
            return
        # From the tab's main frame, whichever frame ran the verb (a tab's verbs run on its
        # main frame, a frame's on itself): the tool the flow drafts acts on the tab, so a node
        # in an iframe gets a frame-qualified selector. Awaited before the verb runs: a click
        # that submits a form takes its button's page with it.
        found = asyncio.ensure_future(
            asyncio.wait_for(
                selector_for(
                    self.tab.main_frame,
                    action.element.ref,
                    by_content=action.verb != "snapshot",  # a read's content is its answer
                ),
                SELECTOR_SECONDS,
            )
        )
        await asyncio.wait([found])
        self._selectors[id(action)] = found

    async def _ended(self, action: Action) -> None:
        pending = self._selectors.pop(id(action), None)
        left_out = action.ok and _left_out(action)
        if left_out:
            # Said in the flow (and so in the draft's notes), never dropped unsaid.
            where = f" {self.secrets.url(action.target)}" if action.target else ""
            gesture = f" ({_gesture(action)})" if action.verb == "click" else ""
            self.flow.left_out.append(f"{action.verb}{where}{gesture}")
        if (
            left_out
            or not action.ok
            or (action.verb not in ACTING_VERBS and action.verb != "snapshot")
        ):
            if pending is not None:
                pending.cancel()
            return
        selector, checked = await self._selector(action, pending)
        url = self.secrets.url(action.url)
        if action.verb == "snapshot":
            find = action.args.get("find")
            if action.target is not None and parse_ref(action.target) is None:
                # The agent named what it read: a durable selector of its own could be its
                # text (text="10 USD is 5.00 EUR"), which is the result and changes with it.
                selector = action.target
            self.flow.read = FlowRead(
                verb="snapshot",
                text=self.secrets.text(outline_text(str(action.result))),
                url=url,
                target=action.target,
                selector=selector,
                find=self.secrets.text(find) if isinstance(find, str) else None,
            )
            return
        step = FlowStep(
            verb=action.verb,
            target=self.secrets.url(action.target)
            if action.navigation and action.target
            else action.target,
            url=url,
            selector=selector,
            checked=checked,
            element=_element(action),
        )
        step.value = self._value(action, step)
        self.flow.steps.append(step)
        self.flow.read = None  # a read before the last step is not the flow's result

    async def _selector(
        self, action: Action, pending: asyncio.Future[str] | None
    ) -> tuple[str | None, bool]:
        """The durable selector of the action's element, and whether it was checked."""
        if action.navigation or action.target is None:
            return None, True
        if pending is not None:
            try:
                return await pending, True
            except (EgoError, TimeoutError, ValueError, KeyError):
                pass  # the element went with the page it submitted: its role and name
        element = action.element
        if element is not None and element.role and element.name:
            return f"role={element.role}[name={json.dumps(element.name)}]", False
        if parse_ref(action.target) is None:
            return action.target, False
        return None, False

    def _value(self, action: Action, step: FlowStep) -> Any:
        """What the step typed, chose or pressed, secrets redacted and noted."""
        args = action.args
        if action.verb in TYPING_VERBS:
            element = action.element
            text = str(args.get("text", ""))
            kept = self.secrets.typed(
                text,
                action.target,
                element.name if element is not None else "",
                element.input_type if element is not None else None,
            )
            if kept == REDACTED and text:
                step.secret = True
                self.flow.secrets.append(
                    (element.name if element is not None else "") or str(action.target)
                )
            return kept
        if action.verb == "select":
            values = args.get("values")
            if isinstance(values, str):
                return self.secrets.text(values)
            return [self.secrets.text(str(value)) for value in values or []]
        if action.verb == "press":
            return str(args.get("key", ""))
        return None


def _element(action: Action) -> dict[str, Any] | None:
    if action.element is None:
        return None
    data = action.element.as_dict()
    data.pop("ref", None)  # lives only in this tab
    return data


def _stem(path: Path) -> str:
    name = path.name
    for suffix in (".actions.json", ".json"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


#: Verbs that leave the page as it was: a flow has nothing to replay of them.
_NO_EFFECT: Final = frozenset({"wait_for", "selector_for", "snapshot", "screenshot"})


#: A click's arguments that make it another gesture than a drafted flow's plain left click.
_CLICK_GESTURE: Final = ("button", "click_count", "modifiers", "position")


def _left_out(action: Action) -> bool:
    """Whether ``action`` changed the page in a way a drafted flow does not replay."""
    if action.verb == "click" and _gesture(action):
        return True  # a double or right click replayed as a left click would be another act
    return not (action.reads or action.verb in ACTING_VERBS or action.verb in _NO_EFFECT)


def _gesture(action: Action) -> str:
    """A click's arguments that a flow's plain left click would not repeat, as words
    (``click_count=2``), or "" for a plain click."""
    plain: dict[str, Any] = {"button": "left", "click_count": 1, "modifiers": ()}
    said = [
        f"{name}={action.args[name]!r}"
        for name in _CLICK_GESTURE
        if name in action.args and action.args[name] not in (plain.get(name), [], None)
    ]
    return ", ".join(said)


def _write_private(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with os.fdopen(open_private(path), "w", encoding="utf-8") as handle:
        handle.write(text)
