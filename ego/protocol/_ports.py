"""Chrome's debugging port on 127.0.0.1: whether one is free, who listens, when it is ready.

Only a Chrome started with ``LaunchOptions.port`` has a port (see :mod:`ego.protocol.chrome`);
the endpoint it offers there is read through :mod:`ego.protocol.endpoint`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import time
from pathlib import Path

import psutil

from ..errors import ChromeLaunchError, ConnectionFailedError
from ._chrome_log import tail
from .endpoint import resolve_endpoint

__all__ = ["check_port_free", "listening_ports", "wait_for_endpoint"]


def check_port_free(port: int) -> None:
    """Refuse a fixed port that is already taken on 127.0.0.1.

    Chrome itself says nothing then: it runs without its endpoint, so the launch would only
    time out. Another program may still take the port between this check and Chrome's bind;
    the launch then times out, saying so.

    Raises:
        ChromeLaunchError: the port is in use.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        if os.name != "nt":
            # As Chrome binds its own: a port a Chrome that just closed left in TIME_WAIT is
            # free to listen on, and only a socket listening there now takes it. (On Windows
            # the option would let a bind share a port someone listens on.)
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as exc:
            raise ChromeLaunchError(
                f"port {port} on 127.0.0.1 is not available ({exc.strerror}): pass port=0 to "
                "let Chrome choose a free one"
            ) from None


def listening_ports(pid: int) -> set[int]:
    """The TCP ports a process of ``pid``'s tree listens on, on 127.0.0.1."""
    try:
        root = psutil.Process(pid)
        processes = [root, *root.children(recursive=True)]
    except psutil.Error:
        return set()
    ports = set()
    for each in processes:
        with contextlib.suppress(psutil.Error):
            for conn in each.net_connections(kind="tcp"):
                if conn.status == psutil.CONN_LISTEN and conn.laddr.ip == "127.0.0.1":
                    ports.add(conn.laddr.port)
    return ports


async def wait_for_endpoint(
    process: subprocess.Popen[bytes], port_file: Path, log_path: Path, timeout: float, port: int
) -> str:
    """The browser's websocket URL, once Chrome listens on its port.

    With port 0 Chrome picks a free port (so no race with other programs) and writes it, with
    the browser's websocket path, to DevToolsActivePort once it listens. With a fixed port it
    writes no such file (measured on Chromium 156): once a process of Chrome's own tree
    listens on that port (not another program that took it meanwhile), its ``/json/version``
    gives the URL.

    Args:
        process: the Chrome being started.
        port_file: its profile's ``DevToolsActivePort``.
        log_path: its log, quoted when it fails.
        timeout: seconds it may take.
        port: the port asked for (0: Chrome chose one).

    Raises:
        ChromeLaunchError: Chrome exited first, or did not open its port within ``timeout``.
    """
    deadline = time.monotonic() + timeout
    while True:
        if port == 0:
            try:
                text = port_file.read_text()
            except FileNotFoundError:
                text = ""
            lines = text.splitlines()
            if len(lines) >= 2 and lines[0].isdigit():
                return f"ws://127.0.0.1:{lines[0]}{lines[1]}"
        elif port in listening_ports(process.pid):
            # Not answering /json/version yet is not a failure here: the loop asks again.
            with contextlib.suppress(ConnectionFailedError):
                return await resolve_endpoint(
                    f"http://127.0.0.1:{port}",
                    timeout=min(max(0.1, deadline - time.monotonic()), 2.0),
                )
        code = process.poll()
        if code is not None:
            raise ChromeLaunchError(
                f"Chrome exited with code {code} before it was ready: "
                f"{tail(log_path, 5) or 'it printed nothing'}"
            )
        if time.monotonic() >= deadline:
            taken = f" (is port {port} taken?)" if port else ""
            raise ChromeLaunchError(
                f"Chrome did not open its debugging port within {timeout:g} s{taken}: "
                f"{tail(log_path, 5) or 'it printed nothing'}"
            )
        await asyncio.sleep(0.01)
