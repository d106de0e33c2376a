"""The demo shop's server object: :class:`DemoServer` and its lifecycle (start, close, URLs).

The shop itself is a small, strict web shop served from memory by Python's standard library:
server-rendered pages with stable ``data-testid`` markup, a JSON API, a login that sets a
persistent HttpOnly session cookie, forms, and ``Content-Security-Policy: script-src 'self'``
on every page, so inline scripts and late ``eval`` are blocked exactly as on a strict real
site. Its state lives in :mod:`ego.demo.state`, its HTML in :mod:`ego.demo.pages` (and
``templates/``), its routes in :mod:`ego.demo.routes` on :mod:`ego.demo.handler`.

Chrome resolves every ``*.localhost`` name to the loopback address by itself, so
``http://shop.localhost:<port>/`` is an origin of its own (its own cookies and localStorage)
without any DNS; Python never needs to resolve that name (:attr:`DemoServer.local_url` is the
``127.0.0.1`` form for Python-side HTTP clients).
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from string import Template
from types import TracebackType

from ..errors import ListenError
from .handler import CART_COOKIE, CSP, SESSION_COOKIE, ShopHTTPServer
from .routes import ShopHandler
from .state import SITE_DIR, DemoState

# The cookie names, CSP, site folder and state type are re-exported: ``ego.demo.server.<name>``
# was their home before the shop was split by job.
__all__ = [
    "CART_COOKIE",
    "CSP",
    "DEFAULT_PORT",
    "SESSION_COOKIE",
    "SITE_DIR",
    "DemoServer",
    "DemoState",
]

#: The port the demo-shop learning's ``startUrl`` names (``ego demo --serve`` serves there).
DEFAULT_PORT = 8765

# The old name of the request handler class: bench/bench_pool.py toggles its
# ``disable_nagle_algorithm`` through ``ego.demo.server._Handler``.
_Handler = ShopHandler


class DemoServer:
    """The demo shop on a local port.

    ``server = DemoServer().start()`` serves it until ``server.close()``; it is also a context
    manager, sync (``with DemoServer() as server:``) and async (``async with``). The port is
    0 by default: the system picks a free one, see :attr:`port`.

    Attributes:
        state: the shop's in-memory :class:`DemoState` (products, carts, sessions, posted
            reviews, contact messages), fresh for each server.
        hostname: the name pages are served under; ``shop.localhost`` by default, which Chrome
            resolves to loopback by itself and treats as an origin of its own.
        api_changed: the switch that breaks the shop's API on purpose, as a redesign would
            (settable while it serves): the product search moves from ``/api/products`` to
            ``/api/catalog/search`` (the old path answers 404) and its products call their
            ``name`` a ``title``; the shop's own pages follow. A tool learned before the
            change fails until it is healed (docs/learning-loop.md).
        pages_changed: the switch that redesigns the order desk's pages on purpose
            (:mod:`ego.demo.desk`; settable while it serves): its search button is renamed
            and the order's email field moves to the second step.
        desk_orders: the orders the desk placed, oldest first.
    """

    def __init__(
        self,
        port: int = 0,
        *,
        host: str = "127.0.0.1",
        hostname: str = "shop.localhost",
        site_dir: str | Path | None = None,
        verbose: bool = False,
        api_changed: bool = False,
        pages_changed: bool = False,
    ) -> None:
        self.requested_port = port
        self.host = host
        self.hostname = hostname
        self.site_dir = Path(site_dir) if site_dir is not None else SITE_DIR
        self.verbose = verbose
        self.api_changed = api_changed
        self.pages_changed = pages_changed
        self.desk_orders: list[dict[str, object]] = []
        self.state = DemoState.load(self.site_dir)
        self.layout = Template((self.site_dir / "layout.html").read_text("utf-8"))
        self._httpd: ShopHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def __repr__(self) -> str:
        where = self.url if self._httpd is not None else "not started"
        return f"<DemoServer {where}>"

    @property
    def started(self) -> bool:
        return self._httpd is not None

    def start(self) -> DemoServer:
        """Bind the port and serve from a daemon thread; returns ``self``. Idempotent.

        Raises:
            ListenError: the port is taken, or the address cannot be listened on (the
                message names the fix).
        """
        if self._httpd is None:
            try:
                httpd = ShopHTTPServer((self.host, self.requested_port), self, ShopHandler)
            except OSError as exc:
                raise ListenError.of(self.host, self.requested_port, exc) from None
            thread = threading.Thread(
                target=httpd.serve_forever,
                kwargs={"poll_interval": 0.05},
                name=f"ego-demo-shop:{httpd.server_address[1]}",
                daemon=True,
            )
            thread.start()
            self._httpd, self._thread = httpd, thread
        return self

    def close(self) -> None:
        """Stop serving and release the port. Idempotent."""
        httpd, thread = self._httpd, self._thread
        self._httpd = self._thread = None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
        if thread is not None:
            thread.join(timeout=5)

    @property
    def port(self) -> int:
        """The port being served (the one the system picked when asked for 0)."""
        if self._httpd is None:
            raise RuntimeError("the demo server is not started: call start() first")
        return int(self._httpd.server_address[1])

    @property
    def origin(self) -> str:
        """``http://shop.localhost:<port>``"""
        return f"http://{self.hostname}:{self.port}"

    @property
    def url(self) -> str:
        """``http://shop.localhost:<port>/``: the shop's home page, for the browser."""
        return self.origin + "/"

    @property
    def local_url(self) -> str:
        """``http://127.0.0.1:<port>/``: the same server for Python-side clients."""
        return f"http://{self.host}:{self.port}/"

    def url_for(self, path: str = "/") -> str:
        """The browser URL of ``path`` (``"/contact"`` -> ``http://shop.localhost:<port>/contact``)."""
        return self.origin + "/" + path.lstrip("/")

    def local_url_for(self, path: str = "/") -> str:
        """The ``127.0.0.1`` URL of ``path``."""
        return self.local_url + path.lstrip("/")

    def __enter__(self) -> DemoServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    async def __aenter__(self) -> DemoServer:
        return self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await asyncio.to_thread(self.close)
