"""What both channels to the browser share: the interface a connection talks through, and the
receiving side they do the same way.

:class:`Channel` is what :class:`~ego.protocol.transport.Connection` needs of a channel.
:class:`ChannelBase` is the common part of :class:`~ego.protocol.wire.Wire` and
:class:`~ego.protocol.pipe.PipeWire`: messages that arrive before a connection attaches are
kept and handed over, in order, when it does; the close is reported once, with its reason, to
the handler attached (at once to one that attaches after the close).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol

__all__ = ["Channel", "ChannelBase", "CloseHandler", "MessageHandler"]

MessageHandler = Callable[[bytes], None]
CloseHandler = Callable[[str], None]


class Channel(Protocol):
    """What a :class:`~ego.protocol.transport.Connection` talks through: a
    :class:`~ego.protocol.wire.Wire`, a :class:`~ego.protocol.pipe.PipeWire`, or anything else
    that carries CDP messages the same way (an in-process fake in tests).

    Messages go out with :meth:`send` and come in, whole and in order, through the
    ``on_message`` handler given to :meth:`attach`; ``on_close`` is called once, with a
    reason, when the channel is gone, whoever closed it.
    """

    def attach(self, on_message: MessageHandler, on_close: CloseHandler) -> None:
        """Start delivering messages (and any that arrived before) to the handlers."""

    def send(self, message: bytes) -> bool:
        """Send one message; False when the channel is no longer open (nothing was sent)."""

    def fail(self, code: int, reason: str) -> None:
        """Close because of a protocol problem on our side (``code`` is a websocket close
        code; a channel without close codes, such as the pipe, drops the connection)."""

    async def close(self) -> None:
        """Close in an orderly way and wait until closed."""

    def abort(self) -> None:
        """Drop the channel at once."""


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
