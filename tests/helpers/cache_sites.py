"""Sites and pages of the cache tests: a page, tools whose results are kept, and reads of the
kept entries."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import ego
from ego.learning.catalog.registry import Learnings
from ego.runtime.cache import RunStats
from ego.runtime.js import embed_json
from ego.site import Site
from tests.helpers.learnings import make_site

PAGE = "<!doctype html><title>Cache page</title><h1>Products</h1><p>three items</p>\n"


CSP_HEADERS = {"Content-Security-Policy": "script-src 'self'"}


#: Reads the page and its args, after a later task (so it also proves the tool itself ran).
SUM = """async ({a, b}) => {
  await new Promise((resolve) => setTimeout(resolve, 0));
  return {sum: a + b, title: document.title, h1: document.querySelector('h1')?.textContent ?? null};
}
"""


SUM_ARGS = {"a": {"type": "integer", "required": True}, "b": {"type": "integer", "required": True}}


SUM_EXPECTED = {"sum": 5, "title": "Cache page", "h1": "Products"}


#: The same tool without the page: what it returns is independent of where it runs.
PURE = "async ({a, b}) => ({sum: a + b, product: a * b, text: 'quote \" and \\\\ and \\u2028'})\n"


PURE_EXPECTED = {"sum": 5, "product": 6, "text": 'quote " and \\ and \u2028'}


def new_id(prefix: str) -> str:
    """A site id no other test uses, so that localStorage keys never collide."""
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def site_with(tmp_path: Path, browser: ego.Browser, site_id: str, **tools: Any) -> Site:
    make_site(tmp_path, site_id, domains=["127.0.0.1"], browser_tools=tools)
    return Site(browser, Learnings(roots=[tmp_path]))


def last(site: Site) -> RunStats:
    assert site.last_run is not None
    return site.last_run


async def stored_keys(tab: ego.Tab, site_id: str) -> dict[str, str]:
    """Every localStorage entry of ``site_id``'s tools, by key."""
    prefix = embed_json(f"ego:{site_id}:")
    return await tab.evaluate(
        f"Object.fromEntries(Object.keys(localStorage).filter((k) => k.startsWith({prefix}))"
        ".map((k) => [k, localStorage.getItem(k)]))"
    )
