"""A pool of browsers: many tool calls at once over local Chromes or a browserless fleet.

:class:`BrowserPool` holds browsers launched locally or attached to endpoints (a browserless
host gives every websocket connection its own Chrome, so one endpoint may hold several pool
browsers). Calls are spread over the browsers, one tab per concurrent slot on each, and tabs
are reused from call to call.

When a browser dies, the pool replaces it (relaunches or reconnects) and retries the calls it
was running on another browser, bounded by ``retries``, as far as the tool's side effect
allows: ``read`` tools are retried; ``write`` and ``irreversible`` tools that were already
sent are not, they fail with :class:`~ego.errors.NotRetriedError` (the tool may or may not
have run, and only the caller can check).

Example::

    async with ego.BrowserPool(launch=2) as pool:
        pool.set_start_url("demo-shop", server.url)
        async for item in pool.map("demo-shop", "get_product", [{"id": i} for i in ids]):
            print(item.index, item.result if item.ok else item.error)

The modules, by job: :mod:`~ego.pool.types` (the public records), :mod:`~ego.pool.sources`
(browser factories from the keywords), :mod:`~ego.pool.members` (browser life cycle),
:mod:`~ego.pool.scheduling` (slots and tabs), :mod:`~ego.pool.retry` (one call with the retry
rules), :mod:`~ego.pool.map` (many calls) and :mod:`~ego.pool.browser_pool` (the front).
"""

from __future__ import annotations

from .browser_pool import BrowserPool
from .map import PoolMap
from .sources import MemberFactory, MemberSpec
from .types import Endpoint, MemberInfo, PoolResult, PoolStats

__all__ = [
    "BrowserPool",
    "Endpoint",
    "MemberFactory",
    "MemberInfo",
    "MemberSpec",
    "PoolMap",
    "PoolResult",
    "PoolStats",
]
