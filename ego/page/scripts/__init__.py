"""JavaScript run in the page by the tab's capabilities (snapshot, click, type, wait)."""

from __future__ import annotations

from functools import cache
from importlib import resources

__all__ = ["page_script"]


@cache
def page_script(name: str) -> str:
    """The source of ``page/scripts/<name>.js``: one function expression, comments stripped
    from its head so that it can be called in place."""
    text = resources.files(__package__).joinpath(f"{name}.js").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if not line.startswith("//")]
    return "\n".join(lines).strip().rstrip(";")
