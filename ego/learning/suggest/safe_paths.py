"""Which recorded paths a drafted tool may take as its template: only ones that keep the URL it
builds on the page's origin.

A drafted tool builds its URL as ``new URL(path, location.origin)``. The WHATWG URL parser
reads ``\\`` as ``/`` in an http(s) URL, drops ASCII tab and newline wherever they are, and
takes a path that starts with two slashes (``//``, ``\\\\``, ``/\\``, ``\\/``) as the start of
another host: ``new URL("/\\\\evil.example/x", "http://shop.example")`` is
``http://evil.example/x``. A recording is data from a page (a hostile one too), so a path that
holds any of these, literally or percent-encoded (``%2F%2F``, ``%5C``: a server that decodes
them sees the same), never becomes a template: ``ego suggest`` skips its entry with
:data:`REASON` and ``ego heal`` proposes no such endpoint. Such paths have no use in a site's
own API anyway.
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import unquote

__all__ = ["REASON", "path_problem"]

#: The reason ``ego suggest`` gives for an entry whose path is refused.
REASON: Final = "path leaves the origin"

# C0 controls, DEL and C1 controls: the URL parser drops tab and newline, and a server or a
# proxy may cut a path at any of the others.
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f-\x9f]")
#: How many rounds of percent-decoding are looked through (``%252F`` is ``/`` after two).
_DECODINGS: Final = 3


def path_problem(path: str) -> str | None:
    """Why ``path`` cannot be a drafted tool's path template, or None when it can.

    Args:
        path: a URL's path as recorded (``/api/products/3``), or a template.

    Returns:
        One line naming what was found (a backslash, a control character, two slashes, a
        path that does not start with ``/``), each also when percent-encoded; None for a
        path that stays on the origin whatever the parser or the server decodes.
    """
    if not path.startswith("/"):
        return f"{path[:60]!r} does not start with /"
    seen = path
    for _ in range(_DECODINGS + 1):
        encoded = "" if seen == path else " (percent-encoded)"
        if "\\" in seen:
            return f"{path[:80]!r} holds a backslash{encoded}, which a browser reads as /"
        if _CONTROL.search(seen):
            return f"{path[:80]!r} holds a control character{encoded}"
        if "//" in seen:
            return f"{path[:80]!r} holds two slashes{encoded}, which can name another host"
        decoded = unquote(seen) if "%" in seen else seen
        if decoded == seen:
            return None
        seen = decoded
    return f"{path[:80]!r} is percent-encoded more than {_DECODINGS} times"
