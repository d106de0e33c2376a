"""Servers the tests serve pages from on 127.0.0.1: :class:`PageServer` (routes registered by a
test) and :class:`Site` (one address that logs every request: an origin the agent must not
reach), and :class:`QuietHandler`, :func:`serve` and :func:`stop_serving` for the tests'
other servers."""

from __future__ import annotations

import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that speaks HTTP/1.1 (connections kept alive, as a browser keeps
    them) and logs nothing."""

    protocol_version = "HTTP/1.1"
    # A response is written as headers, then body: with Nagle on, on a kept-alive connection
    # the body waits ~40 ms for the browser's delayed ACK of the headers.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: object) -> None:
        pass


def serve(handler: type[BaseHTTPRequestHandler], host: str = "127.0.0.1") -> ThreadingHTTPServer:
    """A threaded HTTP server on a free port of ``host`` running ``handler`` from a daemon
    thread (each request in a daemon thread too), until :func:`stop_serving`."""

    class Server(ThreadingHTTPServer):
        address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
        daemon_threads = True

    httpd = Server((host, 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def stop_serving(httpd: ThreadingHTTPServer) -> None:
    """Stop a server :func:`serve` started and close its socket."""
    httpd.shutdown()
    httpd.server_close()


@dataclass
class Route:
    body: bytes
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "text/html"})


class PageServer:
    """A threaded HTTP server on 127.0.0.1 serving routes registered by tests.

    ``server.route("/x", "<p>hi</p>")`` serves a page; ``server.url("/x")`` gives its URL.
    Every request is recorded in ``server.requests`` as ``(method, path, headers, body)``.
    Routes with a ``hang`` flag never answer (for timeout tests) until the server stops.
    """

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.requests: list[tuple[str, str, dict[str, str], bytes]] = []
        self.hanging: set[str] = set()
        self._arrivals: dict[str, threading.Event] = {}
        self._holds: dict[str, threading.Event] = {}
        self._stop = threading.Event()
        server = self

        class Handler(QuietHandler):
            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                path = self.path
                server.requests.append((self.command, path, dict(self.headers), body))
                key = path.split("?", 1)[0]
                arrived = server._arrivals.pop(key, None)
                if arrived is not None:
                    arrived.set()
                held = server._holds.pop(key, None)
                if held is not None:
                    held.wait(60)
                if key in server.hanging:
                    server._stop.wait(60)
                    return
                route = server.routes.get(path) or server.routes.get(key)
                if route is None:
                    route = Route(b"not found", 404, {"Content-Type": "text/plain"})
                self.send_response(route.status)
                for name, value in route.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(route.body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(route.body)

            do_GET = do_POST = do_PUT = do_HEAD = _serve

        self.httpd = serve(Handler)
        self.port = self.httpd.server_address[1]

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str = "/") -> str:
        return self.origin + path

    def route(
        self,
        path: str,
        body: str | bytes,
        *,
        status: int = 200,
        content_type: str = "text/html; charset=utf-8",
        headers: dict[str, str] | None = None,
    ) -> str:
        data = body.encode() if isinstance(body, str) else body
        all_headers = {"Content-Type": content_type, **(headers or {})}
        self.routes[path] = Route(data, status, all_headers)
        return self.url(path)

    def arrival(self, path: str) -> threading.Event:
        """An event set when the next request for ``path`` arrives (wait for it with
        ``await asyncio.to_thread(event.wait, timeout)``)."""
        event = self._arrivals[path] = threading.Event()
        return event

    def hold(self, path: str) -> threading.Event:
        """Hold the next request for ``path`` until the event returned is set (60 s at most),
        then serve it."""
        event = self._holds[path] = threading.Event()
        return event

    def close(self) -> None:
        for held in self._holds.values():
            held.set()
        self._stop.set()
        stop_serving(self.httpd)


EVIL = "<title>EVIL</title><p>evil document</p>"


class Site:
    """A server on one address that serves pages and logs every request it gets: the origin
    the agent must not reach."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.host = host
        self.pages: dict[str, bytes] = {}
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        site = self

        class Handler(QuietHandler):
            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                site.requests.append((self.command, self.path, dict(self.headers)))
                body = site.pages.get(self.path.split("?")[0], EVIL.encode())
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_HEAD = _serve

        self.httpd = serve(Handler, host)
        self.port: int = self.httpd.server_address[1]

    @property
    def origin(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def url(self, path: str = "/evil.html") -> str:
        return self.origin + path

    def documents(self) -> list[tuple[str, str, dict[str, str]]]:
        """The requests for a document: a page, a frame, or a prefetch or prerender of one
        (``<link rel=prefetch>`` asks for a subresource, ``Sec-Fetch-Dest: empty``)."""
        return [
            request
            for request in self.requests
            if request[2].get("Sec-Fetch-Dest") in ("document", "iframe")
        ]

    def close(self) -> None:
        stop_serving(self.httpd)
