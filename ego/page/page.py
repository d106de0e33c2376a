"""What the tab's verbs need of a tab, as one structural type (``ego.Tab`` is one).

The verbs' modules sit below ``ego.page.tab`` and must not import it; they take anything with
these members, which also lets a test hand them a stand-in.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

__all__ = ["Page"]


class Page(Protocol):
    """A tab as the verbs use it: its URL, a CDP command on its session, an evaluate."""

    @property
    def url(self) -> str: ...

    async def send(
        self, method: str, params: Mapping[str, Any] | None = None
    ) -> dict[str, Any]: ...

    async def evaluate(
        self, expression: str, *, timeout: float | None = None, describe: bool = True
    ) -> Any: ...
