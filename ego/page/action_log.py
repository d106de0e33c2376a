"""The action log: each verb a page runs, and each navigation, told to whoever observes the tab.

One hook does it. :func:`observed` wraps a verb; :func:`observed_verbs` wraps every public
coroutine method a class defines (it decorates :class:`~ego.page.verbs.PageVerbs`, whose
implementation is the frame's and to which a tab hands its verbs, so a verb added there later
is observed with no more code), and the tab's ``navigate``, ``reload``, ``back`` and
``forward`` carry :func:`observed` each. :func:`observed_device` does the same for a page's
mouse and keyboard: ``tab.mouse.click(x, y)`` is the action ``mouse.click`` of the page the
mouse belongs to. A tab holds one list of observers, which its frames share
(``page._action_observers``); :meth:`ego.Tab.observe_actions` adds one (an
:class:`Observation`).

When nobody observes the tab, the wrapper reads that one attribute, finds the list empty and
returns the verb's own coroutine: no coroutine, record or task of its own. When someone
does, the verb's call becomes an :class:`Action`: the verb's name, its target as written
(the selector, or the URL of a navigation) and the element it names when the action starts
(its role and name as Chrome computes them, and its ref: :class:`Element`), the other
arguments, when it started and how long it took, and what it returned or raised. Each
observer is called with it once the verb ended, and awaited when it returns an awaitable
(an observer may also hear that it starts);
the verb's own error is raised after them. An observer that fails is logged and never
changes what the verb did. Verbs a verb runs itself, and those an observer runs (a trace's
screenshot), are not reported: only what the caller asked for.

Tabs made by any browser of this process are told to :func:`watch_new_tabs`' callbacks, so a
trace of a whole browser (or a process that keeps the traces of failures) sees a tab opened
after it started.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from contextvars import ContextVar
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, Self, TypeVar, cast

from ..errors import EgoError
from .axtree import role_name
from .locate import element_object, locate, resolve_ref
from .refs import parse_ref

if TYPE_CHECKING:
    from .page import Page

__all__ = [
    "READING_VERBS",
    "TARGETS",
    "Action",
    "ActionObserver",
    "Element",
    "Observation",
    "Registration",
    "StartObserver",
    "TabWatcher",
    "observe",
    "observed",
    "observed_device",
    "observed_verbs",
    "tab_made",
    "watch_new_tabs",
]

logger = logging.getLogger("ego.page.actions")

#: Verbs that only read the page: reported like the others, marked ``reads``.
READING_VERBS: Final = frozenset({"snapshot", "selector_for", "screenshot"})
#: The parameters that name a verb's target, in the order they are looked for: the element
#: acted on (``selector``; ``source`` for a drag), or where a navigation goes (``url``).
TARGETS: Final = ("selector", "source", "url")
#: Seconds the element a target names may take to be described before the action runs.
ELEMENT_SECONDS: Final = 2.0

#: Set while an observed action runs: the verbs it runs, and its observers', are not reported.
_acting: ContextVar[bool] = ContextVar("ego.page.acting", default=False)

F = TypeVar("F", bound=Callable[..., Any])
C = TypeVar("C", bound=type)


@dataclass(frozen=True, slots=True)
class Element:
    """The element a target named when the action started, as the accessibility tree has it.

    Attributes:
        role: its role as a snapshot names it (``button``, ``textbox``, ...), or its tag
            when the tree gives it none a selector can name.
        name: its accessible name (``""`` when it has none).
        ref: its ref in the tab's registry (``e12``): ``tab.selector_for(ref)`` gives a
            selector to keep, while the node lives.
        tag: its tag name, lower case.
        input_type: the ``type`` attribute of an ``<input>`` (``"password"``, ...), or None.
    """

    role: str
    name: str
    ref: str
    tag: str
    input_type: str | None = None

    def describe(self) -> str:
        """``button "Add to cart" [ref=e3]``, as a snapshot line shows it."""
        named = f' "{self.name}"' if self.name else ""
        return f"{self.role}{named} [ref={self.ref}]"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "role": self.role,
            "name": self.name,
            "ref": self.ref,
            "tag": self.tag,
            "input_type": self.input_type,
        }


@dataclass(slots=True)
class Action:
    """One verb a page ran, as its observers get it.

    Attributes:
        verb: the method's name (``click``, ``type``, ``navigate``, ...; ``mouse.click``,
            ``keyboard.type`` for the page's mouse and keyboard).
        page: the frame it ran on (a tab's page verbs are its main frame's:
            ``tab.main_frame``), or the tab for a navigation.
        target: the selector or ref as the caller wrote it, the URL of a navigation, or None.
        args: the other arguments, by name, as given (defaults left out).
        started: when it started (seconds since the epoch).
        url: the page's URL when it started.
        element: what ``target`` named when the action started (None when it named nothing
            yet, or is no selector).
        seconds: how long the verb took.
        result: what it returned (None on an error).
        error: what it raised, or None.
        reads: True for a verb that only reads the page (:data:`READING_VERBS`).
    """

    verb: str
    page: Any
    target: str | None
    args: dict[str, Any]
    started: float
    url: str
    element: Element | None = None
    seconds: float = 0.0
    result: Any = None
    error: BaseException | None = None
    reads: bool = False

    @property
    def ok(self) -> bool:
        """True when the verb returned."""
        return self.error is None

    @property
    def navigation(self) -> bool:
        """True for ``navigate``, ``reload``, ``back`` and ``forward``."""
        return self.verb in ("navigate", "reload", "back", "forward")


#: What observes a tab's actions: called with each :class:`Action` once its verb ended;
#: awaited when it returns an awaitable.
ActionObserver = Callable[[Action], Awaitable[None] | None]


#: What hears that an action starts: called with its :class:`Action` before the verb runs
#: (``element`` is known; ``result``, ``error`` and ``seconds`` are not yet). A coroutine
#: function is awaited, so it may read the page as it is before the verb changes it.
StartObserver = Callable[[Action], Awaitable[None] | None]


class Registration:
    """An entry in a list of callbacks (a tab's observers, the watchers of new tabs or of tool
    runs): :meth:`stop` (or leaving a ``with`` block) takes it out."""

    def __init__(self, registry: list[Any]) -> None:
        self._registry = registry
        registry.append(self)

    @property
    def active(self) -> bool:
        """True until :meth:`stop`."""
        return any(found is self for found in self._registry)

    def stop(self) -> None:
        """Take it out (idempotent)."""
        for index, found in enumerate(self._registry):
            if found is self:
                del self._registry[index]
                return

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()


class Observation(Registration):
    """An observer added to a tab: :meth:`stop` (or leaving a ``with`` block) removes it.

    Attributes:
        ended: called with each action once its verb ended.
        started: called with each action before its verb runs, or None.
    """

    def __init__(
        self,
        observers: list[Observation],
        ended: ActionObserver,
        started: StartObserver | None = None,
    ) -> None:
        self.ended = ended
        self.started = started
        super().__init__(observers)


def observe(
    observers: list[Observation], ended: ActionObserver, started: StartObserver | None = None
) -> Observation:
    """Add an observer to a tab's list (what :meth:`ego.Tab.observe_actions` does)."""
    return Observation(observers, ended, started)


def observed(verb: F) -> F:
    """``verb`` reporting each call to the page's observers (see the module docstring).

    The page is the method's ``self``: it has ``_action_observers``, its tab's list.
    """
    name = verb.__name__
    signature = inspect.signature(verb)
    target_name = next((p for p in TARGETS if p in signature.parameters), None)

    @functools.wraps(verb)
    def run(page: Any, *args: Any, **kwargs: Any) -> Any:
        if not page._action_observers:
            return verb(page, *args, **kwargs)
        return _observed(verb, name, signature, target_name, page, page, args, kwargs)

    return cast(F, run)


def observed_verbs(cls: C) -> C:
    """Wrap every public coroutine method ``cls`` defines itself with :func:`observed`."""
    for name, member in list(vars(cls).items()):
        if not name.startswith("_") and inspect.iscoroutinefunction(member):
            setattr(cls, name, observed(member))
    return cls


def observed_device(device: str) -> Callable[[C], C]:
    """A class decorator for a page's input device (its mouse, its keyboard): every public
    coroutine method the class defines reports each call, as the action ``device.method``
    (``mouse.click``, ``keyboard.type``), to the observers of the page the device belongs
    to (the instance's ``_page``)."""

    def wrap(verb: Callable[..., Any]) -> Callable[..., Any]:
        name = f"{device}.{verb.__name__}"
        signature = inspect.signature(verb)

        @functools.wraps(verb)
        def run(held: Any, *args: Any, **kwargs: Any) -> Any:
            page = held._page
            if not page._action_observers:
                return verb(held, *args, **kwargs)
            return _observed(verb, name, signature, None, page, held, args, kwargs)

        return run

    def decorate(cls: C) -> C:
        for name, member in list(vars(cls).items()):
            if not name.startswith("_") and inspect.iscoroutinefunction(member):
                setattr(cls, name, wrap(member))
        return cls

    return decorate


async def _observed(
    verb: Callable[..., Coroutine[Any, Any, Any]],
    name: str,
    signature: inspect.Signature,
    target_name: str | None,
    page: Any,
    held: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    """Run ``verb`` of ``held`` (the page itself, or its mouse or keyboard) as an action of
    ``page``, told to the page's observers."""
    if _acting.get():
        return await verb(held, *args, **kwargs)
    token = _acting.set(True)
    try:
        bound = signature.bind(held, *args, **kwargs)
        given = dict(bound.arguments)
        given.pop(next(iter(signature.parameters)), None)  # the page (or device) itself
        target = given.pop(target_name, None) if target_name is not None else None
        action = Action(
            verb=name,
            page=page,
            target=target if isinstance(target, str) else None,
            args=given,
            started=time.time(),
            url=str(getattr(page, "url", "")),
            reads=name in READING_VERBS,
        )
        selector = target_name in ("selector", "source") and isinstance(target, str)
        if selector:
            action.element = await describe_element(page, str(target))
        await _starting(page._action_observers, action)
        began = time.perf_counter()
        try:
            action.result = await verb(held, *args, **kwargs)
        except Exception as exc:
            action.error = exc
        action.seconds = time.perf_counter() - began
        if selector and action.element is None and action.ok:
            action.element = await describe_element(page, str(target))
        await _tell(page._action_observers, action)
    finally:
        _acting.reset(token)
    if action.error is not None:
        raise action.error
    return action.result


async def _starting(observers: list[Observation], action: Action) -> None:
    """Tell the observers that want it that ``action`` starts; one that fails is logged."""
    for observation in list(observers):
        if observation.started is not None:
            try:
                outcome = observation.started(action)
                if inspect.isawaitable(outcome):
                    await outcome
            except Exception:
                logger.warning("an observer of %s failed", action.verb, exc_info=True)


async def _tell(observers: list[Observation], action: Action) -> None:
    """Call each observer with ``action``; one that fails is logged, the others still run."""
    for observation in list(observers):
        try:
            outcome = observation.ended(action)
            if inspect.isawaitable(outcome):
                await outcome
        except Exception:
            logger.warning("an observer of %s failed", action.verb, exc_info=True)


async def describe_element(page: Page, selector: str) -> Element | None:
    """What ``selector`` (CSS, frame-qualified, or a ref) names in ``page`` now, without
    waiting: its role and name (``Accessibility.getPartialAXTree``), tag, input type and ref;
    None when it names nothing yet or cannot be read within :data:`ELEMENT_SECONDS`."""
    try:
        return await asyncio.wait_for(_describe(page, selector), ELEMENT_SECONDS)
    except (EgoError, TimeoutError, KeyError, ValueError):
        return None


async def _describe(page: Page, selector: str) -> Element | None:
    ref = parse_ref(selector)
    if ref is not None:
        frame, object_id = await resolve_ref(page, ref)
    else:
        frame, css = await locate(page, selector, 0)
        found = await element_object(frame, css)
        if found is None:
            return None
        object_id = found
    try:
        node = (await frame.send("DOM.describeNode", {"objectId": object_id}))["node"]
    finally:
        await _release(frame, object_id)
    backend = int(node["backendNodeId"])
    tree = await frame.send(
        "Accessibility.getPartialAXTree", {"backendNodeId": backend, "fetchRelatives": False}
    )
    nodes: list[dict[str, Any]] = tree.get("nodes", [])
    ax = next((n for n in nodes if n.get("backendDOMNodeId") == backend), {})
    tag = str(node.get("localName") or node.get("nodeName", "")).lower()
    attributes = node.get("attributes") or []
    pairs = dict(zip(attributes[::2], attributes[1::2], strict=False))
    role = None if ax.get("ignored") else role_name(str(ax.get("role", {}).get("value", "")))
    name = " ".join(str(ax.get("name", {}).get("value", "") or "").split())
    return Element(
        role=role or tag,
        name=name,
        ref=ref if ref is not None else page.refs.ref_for(frame, backend),
        tag=tag,
        input_type=str(pairs["type"]).lower() if tag == "input" and "type" in pairs else None,
    )


async def _release(page: Page, object_id: str) -> None:
    try:
        await page.send("Runtime.releaseObject", {"objectId": object_id})
    except EgoError:
        pass  # the document went, and the object with it


# -- every tab a browser of this process makes ------------------------------------------------

#: Called with each new tab: ``watcher(tab, browser, context)`` (``context``: the browser
#: context it belongs to, of those ego made, or None).
TabWatcher = Callable[[Any, Any, Any], None]


#: The watchers of new tabs, process-wide.
_NEW_TABS: list[TabWatch] = []


class TabWatch(Registration):
    """A callback told of every new tab: :meth:`stop` (or leaving a ``with`` block) ends it."""

    def __init__(self, watcher: TabWatcher) -> None:
        self.watcher = watcher
        super().__init__(_NEW_TABS)


def watch_new_tabs(watcher: TabWatcher) -> TabWatch:
    """Tell ``watcher`` of each tab any browser of this process makes from now on."""
    return TabWatch(watcher)


def tab_made(tab: Any, browser: Any, context: Any) -> None:
    """A browser made the :class:`~ego.Tab` ``tab`` (of ``context``, or its own): tell the
    watchers. One that fails is logged."""
    for watch in list(_NEW_TABS):
        try:
            watch.watcher(tab, browser, context)
        except Exception:
            logger.warning("a watcher of new tabs failed", exc_info=True)
