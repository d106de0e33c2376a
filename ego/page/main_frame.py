"""The page a tab is: its main frame.

:class:`~ego.page.frame.Frame` is the one implementation of the page verbs. A tab hands every
one of them to its main frame: :class:`OnMainFrame`, a base of :class:`ego.Tab`, answers each
public verb of :class:`~ego.page.verbs.PageVerbs` by calling the main frame's (set up below
from what ``PageVerbs`` holds, so a verb added there reaches the tab with no more code), and
what the verbs' modules need of a page (:class:`~ego.page.page.Page`) from the main frame too.
So ``tab.click(...)`` is ``tab.main_frame.click(...)``, with one evaluate and one error model.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any, Final

from .verbs import PageVerbs

if TYPE_CHECKING:
    from ..protocol.session import Session
    from .frame import Frame

__all__ = ["OnMainFrame", "page_verbs"]

_DEFAULT: Final = object()


def page_verbs() -> list[str]:
    """The names of the public verbs (methods and properties) :class:`PageVerbs` offers."""
    return [
        name
        for name, member in vars(PageVerbs).items()
        if not name.startswith("_") and (inspect.isfunction(member) or isinstance(member, property))
    ]


class OnMainFrame(PageVerbs):
    """A page whose verbs are its main frame's (see the module docstring)."""

    @property
    def main_frame(self) -> Frame:
        """The frame whose document is the page's."""
        raise NotImplementedError

    @property
    def id(self) -> str:
        """The main frame's id: a page target's main frame bears the target's id."""
        return self.main_frame.id

    @property
    def url(self) -> str:
        """The URL of the page's document, as Chrome last reported it."""
        return self.main_frame.url

    @property
    def documents(self) -> int:
        """How many documents the page has shown since ego attached: it changes on every
        navigation and reload (not on a ``#fragment`` or ``pushState``), which is how long
        page globals live."""
        return self.main_frame.documents

    @property
    def document_memo(self) -> dict[str, Any]:
        """What layers above keep for the page's current document (see
        :attr:`Frame.document_memo <ego.page.frame.Frame>`)."""
        return self.main_frame.document_memo

    @property
    def is_main(self) -> bool:
        """True: the page is its main frame's."""
        return True

    @property
    def parent(self) -> None:
        """None: a main frame has no frame around it."""
        return None

    @property
    def _frame_id(self) -> str:
        return self.main_frame.id

    def evaluate(
        self,
        expression: str,
        *,
        await_promise: bool = True,
        timeout: float | None = None,
        user_gesture: bool = False,
        describe: bool = True,
    ) -> Coroutine[Any, Any, Any]:
        """Evaluate a JavaScript expression in the page and return its value (await it): the
        main frame's :meth:`Frame.evaluate <ego.page.frame.Frame.evaluate>`, whose docstring
        gives the values, the arguments and the errors. (The main frame's own coroutine: a
        tool call's path has no step of the tab's.)

        Raises:
            as :meth:`Frame.evaluate <ego.page.frame.Frame.evaluate>`.
        """
        return self.main_frame.evaluate(
            expression,
            await_promise=await_promise,
            timeout=timeout,
            user_gesture=user_gesture,
            describe=describe,
        )

    async def send(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout: float | object | None = _DEFAULT,
    ) -> dict[str, Any]:
        """Send a raw CDP command to the page's session and return its result (the tab's
        default timeout unless ``timeout`` says otherwise; None: no bound).

        Raises:
            as :meth:`Frame.send <ego.page.frame.Frame.send>`.
        """
        if timeout is _DEFAULT:
            return await self.main_frame.send(method, params)
        return await self.main_frame.send(method, params, timeout=timeout)

    async def top_send(
        self, method: str, params: Mapping[str, Any] | None = None, *, timeout: float | None = None
    ) -> dict[str, Any]:
        """Send a raw CDP command on the tab's session (as :meth:`send`)."""
        return await self.main_frame.top_send(method, params, timeout=timeout)

    async def _target(self) -> tuple[Session, int | None]:
        return await self.main_frame._target()

    async def viewport_offset(self) -> tuple[float, float]:
        """Where the page's viewport sits in the tab's: the origin."""
        return await self.main_frame.viewport_offset()

    async def child_frame(self, frame_id: str, timeout: float) -> Frame:
        """The frame with ``frame_id``, waiting up to ``timeout`` for it to be known."""
        return await self.main_frame.child_frame(frame_id, timeout)

    async def child_frames(self) -> list[Frame]:
        """The frames whose parent is the main frame."""
        return await self.main_frame.child_frames()


def _on_main_frame(name: str, verb: Any) -> Any:
    """``verb`` of :class:`PageVerbs`, run by the main frame: the same name, signature and
    docstring; the call (or the property's value) is the main frame's."""
    if isinstance(verb, property):
        return property(lambda page: getattr(page.main_frame, name), doc=verb.__doc__)

    @functools.wraps(verb)
    def run(page: OnMainFrame, *args: Any, **kwargs: Any) -> Any:
        member: Callable[..., Any] = getattr(page.main_frame, name)
        return member(*args, **kwargs)

    return run


for _name in page_verbs():
    setattr(OnMainFrame, _name, _on_main_frame(_name, vars(PageVerbs)[_name]))
