"""Finding a browser's websocket URL from its DevTools HTTP endpoint.

ego's only ``/json/version`` client: :meth:`ego.Browser.connect` resolves the endpoint a
caller names with it, and a launch on a fixed port asks it for the URL of the Chrome it
started (Chrome writes no ``DevToolsActivePort`` file for a fixed port).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from urllib.parse import urlsplit, urlunsplit

import orjson

from ..errors import ConnectionFailedError
from .wire import redact

__all__ = ["resolve_endpoint"]


async def resolve_endpoint(
    endpoint: str, *, headers: Mapping[str, str] | None = None, timeout: float = 10.0
) -> str:
    """Turn ``http://host:port`` into the browser's websocket URL; pass ``ws://`` through.

    The host and port of the answer are replaced by the ones asked for: behind a proxy or in
    a container Chrome reports the address it sees, not the one the caller can reach.

    Args:
        endpoint: ``http(s)://host:port`` (a path ending in ``/json/version`` and a query,
            such as a fleet's ``?token=T``, are kept), or a ``ws(s)://`` URL to use as it is.
        headers: sent with the ``/json/version`` request.
        timeout: seconds the request may take.

    Raises:
        ConnectionFailedError: the endpoint cannot be reached, refuses, or answers nonsense.
    """
    parts = urlsplit(endpoint)
    if parts.scheme in ("ws", "wss"):
        return endpoint
    if parts.scheme not in ("http", "https"):
        raise ConnectionFailedError(
            f"endpoint {endpoint!r} must start with http://, https://, ws:// or wss://"
        )
    # A fleet may want its token on every request (``http://host:port?token=T``): keep the
    # query on the /json/version request and on the websocket URL.
    path = parts.path.rstrip("/")
    if not path.endswith("/json/version"):
        path += "/json/version"
    version_url = urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))
    body = await asyncio.to_thread(_http_get, version_url, dict(headers or {}), timeout)
    try:
        ws_url = str(orjson.loads(body)["webSocketDebuggerUrl"])
    except (orjson.JSONDecodeError, KeyError, TypeError):
        raise ConnectionFailedError(
            f"{redact(version_url)} did not answer with a webSocketDebuggerUrl: is it a DevTools "
            "endpoint?"
        ) from None
    ws_parts = urlsplit(ws_url)
    scheme = "wss" if parts.scheme == "https" else "ws"
    query = ws_parts.query or parts.query
    return urlunsplit((scheme, parts.netloc, ws_parts.path, query, ""))


def _http_get(url: str, headers: dict[str, str], timeout: float) -> bytes:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return bytes(response.read())
    except urllib.error.HTTPError as exc:
        hint = "check the token or credentials" if exc.code in (401, 403) else "check the URL"
        raise ConnectionFailedError(f"{redact(url)} answered HTTP {exc.code}: {hint}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ConnectionFailedError(
            f"could not reach {redact(url)} ({reason}): is Chrome running with "
            "--remote-debugging-port, and is the address right?"
        ) from None
