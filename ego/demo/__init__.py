"""A demo web shop to drive with ego: ``from ego.demo import DemoServer``.

``DemoServer(port=0).start()`` serves it on ``http://shop.localhost:<port>/`` (an origin of its
own that Chrome resolves to loopback by itself); ``learnings/demo-shop/`` holds its tools. Run
``python -m ego.demo`` to browse it by hand.
"""

from __future__ import annotations

from .handler import CART_COOKIE, CSP, SESSION_COOKIE
from .server import DemoServer
from .state import SITE_DIR, DemoState

__all__ = ["CART_COOKIE", "CSP", "SESSION_COOKIE", "SITE_DIR", "DemoServer", "DemoState"]
