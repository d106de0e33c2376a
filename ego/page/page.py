"""What the page verbs need of a page, as one structural type: a tab and a frame are both one.

The verbs' modules sit below ``ego.page.tab`` and ``ego.page.frame`` and must not import them;
they take anything with these members, which also lets a test hand them a stand-in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..protocol.session import Session
    from ..protocol.transport import Connection
    from .hands import InputState
    from .network import NetworkLog
    from .refs import RefRegistry

__all__ = ["Page"]


class Page(Protocol):
    """A document the verbs act on: a tab's main frame, or one of its frames."""

    @property
    def url(self) -> str: ...

    @property
    def default_timeout(self) -> float: ...

    @property
    def connection(self) -> Connection: ...

    @property
    def network_log(self) -> NetworkLog: ...

    async def send(
        self, method: str, params: Mapping[str, Any] | None = None
    ) -> dict[str, Any]: ...

    async def evaluate(
        self,
        expression: str,
        *,
        await_promise: bool = True,
        timeout: float | None = None,
        user_gesture: bool = False,
        describe: bool = True,
    ) -> Any: ...

    async def _target(self) -> tuple[Session, int | None]:
        """The session of the page's document and its execution context id (None: the
        session's main frame, whatever its current context)."""
        ...

    @property
    def is_main(self) -> bool:
        """True for a tab's main frame (the tab itself)."""
        ...

    @property
    def parent(self) -> Page | None:
        """The frame whose document holds this one's iframe; None for a tab's main frame (and
        for a frame whose parent Chrome has not reported yet)."""
        ...

    @property
    def session(self) -> Session | None:
        """The session of the page's document, when known."""
        ...

    @property
    def _frame_id(self) -> str:
        """Chrome's id of the page's frame."""
        ...

    async def top_send(
        self, method: str, params: Mapping[str, Any] | None = None, *, timeout: float | None = None
    ) -> dict[str, Any]:
        """A command on the tab's own session: input events and screenshots go there (within
        ``timeout`` seconds, the tab's default when None)."""
        ...

    async def viewport_offset(self) -> tuple[float, float]:
        """Where the page's viewport sits in the tab's, in CSS pixels ((0, 0) for a tab)."""
        ...

    async def child_frame(self, frame_id: str, timeout: float) -> Page:
        """The frame ``frame_id``, one of this page's iframes, once it is known."""
        ...

    async def child_frames(self) -> Sequence[Page]:
        """The frames whose parent is this page."""
        ...

    @property
    def refs(self) -> RefRegistry:
        """The refs the tab's snapshots gave out (one registry per tab)."""
        ...

    @property
    def id(self) -> str:
        """Chrome's id of the page's frame (a tab's main frame: the tab's target id)."""
        ...

    @property
    def documents(self) -> int:
        """How many documents the page's frame has shown; a ref names a node of one."""
        ...

    def known_frame(self, frame_id: str) -> Page | None:
        """The tab's frame with this id, if the tab has it now (no waiting)."""
        ...

    @property
    def input_state(self) -> InputState:
        """The tab's mouse and keyboard as the page last saw them (one per tab)."""
        ...
