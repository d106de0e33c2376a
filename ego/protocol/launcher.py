"""Starting a local Chrome and opening ego's connection to it, as one step.

ego talks to a Chrome it starts over the debugging pipe (:mod:`ego.protocol.pipe`) where the
system allows it: no other process can attach to that. A TCP port is opened only when the
caller asks for one (``LaunchOptions.port``), for other processes to attach; ego's own
connection still goes over the pipe then.
"""

from __future__ import annotations

import asyncio
import time

from ..errors import BrowserClosedError, ChromeLaunchError, CommandTimeoutError
from .chrome import PIPE_SUPPORTED, ChromeProcess, LaunchOptions
from .transport import Connection

__all__ = ["launch_chrome"]

#: Seconds given to a Chrome whose pipe closed during start-up to exit, so that the error can
#: name its exit code.
_EXIT_GRACE = 2.0


async def launch_chrome(options: LaunchOptions) -> tuple[ChromeProcess, Connection]:
    """Start Chrome as ``options`` say and connect to it; both are ready for commands.

    Over the pipe, Chrome is ready when it answers a first command (``Browser.getVersion``):
    it reads what waits in the pipe as soon as it can. With a port, Chrome is also ready for
    other clients at :attr:`ChromeProcess.ws_url` when this returns.

    Args:
        options: how to start Chrome (``timeout`` bounds the start, ``default_timeout`` the
            connection's commands).

    Raises:
        ChromeNotFoundError: no Chrome binary.
        ProfileInUseError: a running Chrome holds the profile folder.
        ChromeLaunchError: Chrome exited before it was ready, did not answer within
            ``options.timeout``, or its port could not be had.
        ConnectionFailedError: with no pipe (Windows), the websocket could not be opened.

    Cancelling it ends the Chrome being started; nothing is left running.
    """
    started = time.monotonic()
    process = await ChromeProcess.start(options)
    try:
        if not PIPE_SUPPORTED:
            assert process.ws_url is not None  # started with a port instead
            connection = await Connection.open(
                process.ws_url,
                open_timeout=options.timeout,
                default_timeout=options.default_timeout,
            )
        else:
            read_fd, write_fd = process.take_pipe()
            connection = await Connection.open_pipe(
                read_fd, write_fd, default_timeout=options.default_timeout
            )
            remaining = max(0.0, options.timeout - (time.monotonic() - started))
            try:
                await _first_answer(connection, process, remaining, options.timeout)
            except BaseException:
                await connection.close()
                raise
    except BaseException:
        await asyncio.to_thread(process.abandon)
        raise
    return process, connection


async def _first_answer(
    connection: Connection, process: ChromeProcess, remaining: float, timeout: float
) -> None:
    """Wait for Chrome's answer to a first command over the pipe.

    Raises:
        ChromeLaunchError: Chrome closed the pipe (it exited) or did not answer in time.
    """
    try:
        await connection.send("Browser.getVersion", timeout=remaining)
    except BrowserClosedError:
        await process.wait_exit(_EXIT_GRACE)
        code = process.process.poll()
        what = "closed its debugging pipe" if code is None else f"exited with code {code}"
        raise ChromeLaunchError(
            f"Chrome {what} before it was ready: {process.log_tail(5) or 'it printed nothing'}"
        ) from None
    except CommandTimeoutError:
        raise ChromeLaunchError(
            f"Chrome did not answer on its debugging pipe within {timeout:g} s: "
            f"{process.log_tail(5) or 'it printed nothing'}"
        ) from None
