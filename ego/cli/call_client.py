"""``ego run`` through the call service of the browser ``ego launch`` keeps.

The service (:mod:`.call_service`) has everything a call needs loaded; this side imports only
the standard library's socket and what printing needs, sends the command line's words and
prints the reply as the command itself would. Whenever the service cannot take the call
(there is none, it is gone, it serves another ego, the tool is a Python tool, click would
refuse the command line), :func:`run_through_service` answers None before anything ran, and
the command runs in its own process.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from typing import TYPE_CHECKING, Any

from ..protocol.jsontext import json_bytes, json_loads
from .output import EXIT_BROWSER, EXIT_INTERRUPTED

if TYPE_CHECKING:
    from .common import Settings

__all__ = ["PROTOCOL", "install_key", "run_through_service"]

#: The request format's version: a client and a service that differ take the long way.
PROTOCOL = 1

#: Seconds to reach the service before taking the long way.
_CONNECT_TIMEOUT = 2.0
#: Seconds to wait for a reply. The service bounds every step of a call itself (a tool's
#: timeout, a navigation's); this bound is for a service that stopped answering.
_REPLY_TIMEOUT = 3600.0


def run_through_service(
    settings: Settings,
    profile: str | None,
    site_id: str,
    tool: str,
    args_json: str | None,
    pairs: tuple[str, ...],
    confirm: bool,
    timeout: float | None,
    cache: bool,
    url: str | None,
    start_urls: tuple[tuple[str, str], ...],
) -> int | None:
    """Make an ``ego run`` call in the kept browser's service and print its outcome.

    Returns:
        The command's exit code, or None when the service did not take the call (nothing
        ran): the caller runs it itself.
    """
    kept = settings.kept_browser(profile=profile, checked=False)
    if kept is None or kept.calls is None:
        return None
    workspace = settings.workspace or os.environ.get("EGO_WORKSPACE") or ""
    request = {
        "protocol": PROTOCOL,
        "install": install_key(),
        # Absolute: the service runs in another working folder.
        "workspace": os.path.abspath(os.path.expanduser(workspace)) if workspace else "",
        "site": site_id,
        "tool": tool,
        "args_json": args_json,
        "pairs": list(pairs),
        "confirm": confirm,
        "timeout": timeout,
        "cache": cache,
        "url": url,
        "start_urls": [list(pair) for pair in start_urls],
    }
    try:
        channel = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    except (AttributeError, OSError):
        return None
    with channel:
        try:
            channel.settimeout(_CONNECT_TIMEOUT)
            channel.connect(kept.calls)
            # json_bytes: an argument the shell gave as undecodable bytes holds a lone surrogate.
            channel.sendall(json_bytes(request) + b"\n")
        except OSError:
            return None  # no service (a stale record, an ego launch that just ended): nothing ran
        try:
            with settings.output.progress(f"running {site_id}/{tool}"):
                raw = _reply(channel)
        except KeyboardInterrupt:
            # Closing the socket cancels the call in the service, as Ctrl+C does in-process.
            return EXIT_INTERRUPTED
        except (OSError, TimeoutError) as exc:
            settings.output.error_line(
                "BrowserError",
                f"the browser `ego launch` keeps (pid {kept.pid}) did not answer the call "
                f"({exc or 'no reply'}): run `ego close`, then `ego launch` again",
            )
            return EXIT_BROWSER
    try:
        reply = _loads(raw)
    except ValueError as exc:
        settings.output.error_line("BrowserError", f"the call service's reply is unreadable: {exc}")
        return EXIT_BROWSER
    if "fallback" in reply:
        return None
    settings.say_attached(kept)
    error = reply.get("error")
    if isinstance(error, dict):
        settings.output.error_line(
            str(error.get("type")), str(error.get("message")), ego=bool(error.get("ego"))
        )
        return int(error.get("exit", 1))
    settings.output.result(reply.get("result"))
    return 0


def install_key() -> list[str]:
    """What must match between a client and the service for a call to run the same in both:
    the ego package's folder, the interpreter (a venv's ``python`` and ``python3`` are one),
    and the import path (where learning packs are
    found). The import path's first entry is the script's folder or the working folder,
    which differs between any two commands and holds no packs."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return [package, os.path.realpath(sys.executable), *sys.path[1:]]


def _reply(channel: socket.socket) -> bytes:
    """The reply's line. Raises: OSError: the connection failed or ended before the line;
    TimeoutError: no line within :data:`_REPLY_TIMEOUT`."""
    chunks: list[bytes] = []
    deadline = time.monotonic() + _REPLY_TIMEOUT
    while True:
        channel.settimeout(max(deadline - time.monotonic(), 0.001))
        chunk = channel.recv(1 << 16)
        if not chunk:
            raise OSError("the service closed the connection during the call")
        chunks.append(chunk)
        if chunk.endswith(b"\n"):
            return b"".join(chunks)


def _loads(raw: bytes) -> dict[str, Any]:
    data = json_loads(raw)
    if not isinstance(data, dict):
        raise ValueError("the service's reply is not a JSON object")
    return data
