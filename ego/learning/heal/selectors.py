"""The selectors a tool's source names, checked on the live page: which match nothing now,
and the element nearest to what each one named.

"Nearest" is the element sharing most of the selector's words: its id, classes, attribute
values (``data-testid="product-title"`` gives ``product`` and ``title``) and tag, each word
of the element's own id, classes, ``data-testid``, ``name`` and ``aria-label`` counting once.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Final

from .compare import Change

if TYPE_CHECKING:
    from ...page.tab import Tab

__all__ = ["check_selectors", "selectors_in"]

_CALL: Final = re.compile(
    r"""(?:querySelectorAll|querySelector|closest|matches)\(\s*(["'`])((?:(?!\1).)+)\1\s*\)"""
)
#: Selectors checked per tool.
MAX_SELECTORS: Final = 30

_NEAREST: Final = r"""
(selectors) => selectors.map((selector) => {
  let count = 0;
  try {
    count = document.querySelectorAll(selector).length;
  } catch (e) {
    return [selector, -1, null];
  }
  if (count > 0) return [selector, count, null];
  const skip = ["data", "testid", "not", "nth", "of", "type", "child", "first", "last"];
  const words = new Set((selector.toLowerCase().match(/[a-z][a-z0-9]*/g) || [])
    .filter((w) => !skip.includes(w)));
  let best = null, bestScore = 0;
  for (const el of document.body ? document.body.querySelectorAll("*") : []) {
    const own = [el.id, el.className && el.className.baseVal === undefined ? el.className : "",
      el.getAttribute("data-testid"), el.getAttribute("name"), el.getAttribute("aria-label")]
      .filter(Boolean).join(" ").toLowerCase().match(/[a-z][a-z0-9]*/g) || [];
    let score = 0;
    for (const w of new Set(own)) if (words.has(w)) score += 1;
    if (words.has(el.localName)) score += 0.5;
    if (score > bestScore) { best = el; bestScore = score; }
  }
  if (!best) return [selector, 0, null];
  const testid = best.getAttribute("data-testid");
  const named = best.id ? "#" + CSS.escape(best.id)
    : testid ? `[data-testid="${testid}"]`
    : best.localName + [...best.classList].map((c) => "." + CSS.escape(c)).join("");
  return [selector, 0, named];
})
"""


def selectors_in(source: str) -> list[str]:
    """The CSS selectors ``source`` passes to ``querySelector``, ``closest`` and the like."""
    found = [match.group(2) for match in _CALL.finditer(source) if "${" not in match.group(2)]
    return list(dict.fromkeys(found))[:MAX_SELECTORS]


async def check_selectors(tab: Tab, source: str) -> list[Change]:
    """A ``selector gone`` change for each selector of ``source`` that matches nothing on
    ``tab``'s page, with the nearest element that does (``new``), if any."""
    selectors = selectors_in(source)
    if not selectors:
        return []
    rows: Any = await tab.evaluate(f"({_NEAREST})({_json(selectors)})", describe=False)
    changes = []
    for selector, count, nearest in rows or []:
        if count != 0:
            continue
        detail = f"{selector} matches nothing on the live page"
        if nearest:
            detail += f"; the nearest element is {nearest}"
        changes.append(Change("selector gone", selector, detail, old=selector, new=nearest))
    return changes


def _json(value: Any) -> str:
    import json

    return json.dumps(value)
