"""What every channel to the browser does the same way on the receiving side.

:class:`ChannelBase` is the common part of :class:`~ego.protocol.wire.Wire` and
:class:`~ego.protocol.pipe.PipeWire`: messages that arrive before a connection attaches are
kept and handed over, in order, when it does; the close is reported once, with its reason, to
the handler attached (at once to one that attaches after the close).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["ChannelBase", "CloseHandler", "MessageHandler"]

MessageHandler = Callable[[bytes], None]
CloseHandler = Callable[[str], None]


class ChannelBase:
    """The receiving side shared by the channels: early messages and the close report.

    Runs on the event loop that created it, like everything of a connection.
    """

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._closed: asyncio.Future[None] = self._loop.create_future()
        self._close_reason = ""
        self._early: list[bytes] = []
        self._on_message: MessageHandler | None = None
        self._on_close: CloseHandler | None = None

    def attach(self, on_message: MessageHandler, on_close: CloseHandler) -> None:
        """Start delivering messages (and any that arrived before) to the handlers."""
        self._on_message = on_message
        self._on_close = on_close
        early, self._early = self._early, []
        for message in early:
            on_message(message)
        if self._closed.done():
            on_close(self._close_reason)

    def _hand_over(self, message: bytes) -> None:
        """Give one whole message to the connection, or keep it until one attaches."""
        if self._on_message is None:
            self._early.append(message)
        else:
            self._on_message(message)

    def _report_closed(self, reason: str) -> None:
        """Record that the channel is gone and tell the connection, once."""
        if self._closed.done():
            return
        self._close_reason = reason
        self._closed.set_result(None)
        if self._on_close is not None:
            self._on_close(reason)
