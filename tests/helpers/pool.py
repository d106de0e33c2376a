"""Pools of fake browsers over a mock CDP channel (:class:`Fleet`) and a server that holds requests
until released (:class:`HoldServer`)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ego.api import Browser
from ego.errors import (
    ConnectionFailedError,
)
from ego.learning.catalog.registry import Learnings
from ego.pool import BrowserPool, MemberFactory, MemberInfo
from tests.helpers.page_server import QuietHandler, serve, stop_serving
from tests.helpers.paths import POOL_LEARNINGS

from .cdp_mock import Evaluation, MockChannel, PageError, mock_browser


class HoldServer:
    """``/page`` is an empty page; ``POST /hold?id=X`` is counted and held until released.

    ``wait_arrived(id)`` blocks until a request for ``id`` came in; ``release()`` lets every
    held request (and later ones) answer. With ``hold_only``, other ids answer after ``delay``
    seconds instead (at once by default). ``pages`` counts the loads of the page.
    """

    def __init__(self, hold_only: set[str] | None = None, delay: float = 0.0) -> None:
        self.hold_only = hold_only
        self.delay = delay
        self.counts: Counter[str] = Counter()
        self.pages = 0  # loads of the page: one per tab that opened it
        self._arrived: dict[str, threading.Event] = {}
        self._lock = threading.Lock()
        self.released = threading.Event()
        holder = self

        class Handler(QuietHandler):
            def _reply(self, status: int, body: bytes, kind: str) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", kind)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass  # the browser that asked was killed meanwhile

            def do_GET(self) -> None:
                if urlsplit(self.path).path == "/page":  # not /favicon.ico
                    with holder._lock:
                        holder.pages += 1
                self._reply(200, b"<!doctype html><title>pool test</title>", "text/html")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                parts = urlsplit(self.path)
                if parts.path != "/hold":
                    self._reply(404, b"not found", "text/plain")
                    return
                key = parse_qs(parts.query).get("id", [""])[0]
                with holder._lock:
                    holder.counts[key] += 1
                    event = holder._arrived.setdefault(key, threading.Event())
                event.set()
                if holder.hold_only is None or key in holder.hold_only:
                    holder.released.wait(60)
                elif holder.delay:
                    time.sleep(holder.delay)  # a slow server, not synchronisation
                self._reply(200, b"released", "text/plain")

        self.httpd = serve(Handler)

    def url(self, path: str = "/page") -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"

    def wait_arrived(self, key: str, timeout: float = 30) -> bool:
        with self._lock:
            event = self._arrived.setdefault(key, threading.Event())
        return event.wait(timeout)

    def release(self) -> None:
        self.released.set()

    def close(self) -> None:
        self.released.set()
        stop_serving(self.httpd)


START = "http://127.0.0.1:1/page"


#: A bound on every wait, so that a broken pool fails the test instead of hanging it.
WAIT = 10.0


class Fleet:
    """Mock browsers for a pool, and the page side of the ``pool-test`` tools.

    Attributes:
        channels: every channel started, replacements included.
        arrivals: (id, channel) for each tool call the pages received, in order.
        counts: calls received per id.
        completed: ids whose call returned, in order.
        peak_total, peak_member: the most calls running at once in all and on one browser.
        refuse: when True, starting a browser fails (a host that is down).
        starts: when set to an event, starting a browser waits for it (a slow host).
    """

    def __init__(self) -> None:
        self.channels: list[MockChannel] = []
        self.member_of: dict[MockChannel, int] = {}
        self.arrivals: list[tuple[str, MockChannel]] = []
        self.counts: Counter[str] = Counter()
        self.completed: list[str] = []
        self.running: Counter[int] = Counter()
        self.peak_total = 0
        self.peak_member = 0
        self.refuse = False
        self.starts: asyncio.Event | None = None
        self._gates: dict[str, asyncio.Event] = {}
        self._all_released = False
        self._browsers: dict[int, MockChannel] = {}
        self._changed = asyncio.Event()

    # -- the pool's side -------------------------------------------------------------------

    def factory(self, index: int) -> MemberFactory:
        async def start() -> Browser:
            if self.starts is not None:
                await self.starts.wait()
            if self.refuse:
                raise ConnectionFailedError(f"mock browser {index} refused to start")
            channel = MockChannel(self.evaluate, name=f"b{index}g{len(self.channels)}")
            self.channels.append(channel)
            self.member_of[channel] = index
            browser = mock_browser(channel)
            self._browsers[id(browser)] = channel
            return browser

        return start

    def pool(self, browsers: int, **options: Any) -> BrowserPool:
        specs = [(f"mock://{index}", self.factory(index)) for index in range(browsers)]
        made = BrowserPool.from_factories(
            specs, learnings=Learnings(roots=[POOL_LEARNINGS]), **options
        )
        made.set_start_url("pool-test", START)
        return made

    def channel_of(self, member: MemberInfo) -> MockChannel:
        assert member.browser is not None
        return self._browsers[id(member.browser)]

    # -- the page's side -------------------------------------------------------------------

    async def evaluate(self, evaluation: Evaluation) -> Any:
        assert evaluation.tool_url is not None, evaluation.expression[:80]
        args = evaluation.tool_args
        if evaluation.tool_url.endswith("echo.js"):
            return {"args": args, "origin": "http://127.0.0.1:1"}
        key = str(args["id"])
        member = self.member_of[evaluation.channel]
        self.counts[key] += 1
        self.arrivals.append((key, evaluation.channel))
        self.running[member] += 1
        self.peak_total = max(self.peak_total, self.total_running)
        self.peak_member = max(self.peak_member, self.running[member])
        self._notify()
        try:
            if key == "boom":
                raise PageError("the page broke", "TypeError")
            if key.startswith("h"):
                await self._gate(key).wait()
            self.completed.append(key)
            return {"id": key, "status": 200, "body": "released"}
        finally:
            self.running[member] -= 1
            self._notify()

    @property
    def total_running(self) -> int:
        return sum(self.running.values())

    def where(self, key: str) -> MockChannel:
        """The channel of ``key``'s latest arrival."""
        return next(channel for seen, channel in reversed(self.arrivals) if seen == key)

    def release(self, key: str) -> None:
        self._gate(key).set()

    def release_all(self) -> None:
        self._all_released = True
        for gate in self._gates.values():
            gate.set()

    async def until(self, predicate: Callable[[], bool]) -> None:
        """Wait until ``predicate()`` holds; it is checked whenever a page call starts or ends."""

        async def wait() -> None:
            while not predicate():
                await self._changed.wait()

        await asyncio.wait_for(wait(), WAIT)

    async def arrived(self, key: str, times: int = 1) -> None:
        """Wait until the pages received ``key``'s call ``times`` times."""
        await self.until(lambda: self.counts[key] >= times)

    async def finished(self, key: str) -> None:
        """Wait until ``key``'s call returned in the page."""
        await self.until(lambda: key in self.completed)

    def _gate(self, key: str) -> asyncio.Event:
        gate = self._gates.setdefault(key, asyncio.Event())
        if self._all_released:
            gate.set()
        return gate

    def _notify(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()


def product(key: str) -> dict[str, Any]:
    return {"id": key, "status": 200, "body": "released"}


def hold(pool: BrowserPool, key: str, tool: str = "hold_read", **options: Any) -> asyncio.Task[Any]:
    return asyncio.create_task(pool.run_browser_tool("pool-test", tool, {"id": key}, **options))
