"""Checks at the CDP level: a call that fails before suspending, a session attached to a target."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

import pytest

from ego.protocol.session import Session
from ego.protocol.transport import Connection
from tests.helpers.browsers import HANG


def fails_at_once(call: Coroutine[Any, Any, Any], error: type[Exception]) -> Exception:
    """Run ``call`` up to its first suspension; it must raise ``error`` before suspending.

    This is how "fails immediately" is checked without a clock: a call that waited for
    anything (a socket, a timer) would suspend instead of raising on its first step.
    """
    try:
        call.send(None)
    except error as exc:
        return exc
    call.close()
    pytest.fail("the call suspended instead of failing at once")


async def attach(connection: Connection, target_id: str) -> Session:
    result = await connection.send(
        "Target.attachToTarget", {"targetId": target_id, "flatten": True}, timeout=HANG
    )
    return connection.session(result["sessionId"])
