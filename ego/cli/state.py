"""The browser ``ego launch`` keeps: its record in ego's state folder, and whether it still runs.

``ego launch`` writes one small JSON file (``browser.json`` in :func:`ego.places.state_dir`)
once its Chrome is up, and removes it when that Chrome ends. Later commands read it to attach
to that Chrome instead of starting a cold one. A record whose Chrome is gone (the launcher was
killed, the machine rebooted) is stale: :func:`kept` removes it silently and answers None.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import orjson

__all__ = [
    "STATE_FILE",
    "KeptBrowser",
    "forget",
    "kept",
    "pid_alive",
    "read",
    "record",
    "state_path",
]

#: The record's file name inside the state folder.
STATE_FILE = "browser.json"


@dataclass(frozen=True)
class KeptBrowser:
    """What ``ego launch`` recorded about the Chrome it keeps running.

    Attributes:
        endpoint: ``http://127.0.0.1:PORT``, what ``--endpoint`` takes.
        websocket: the browser's websocket URL (attaching with it skips an HTTP round trip).
        profile: the profile's name (``--profile``).
        profile_dir: the profile's folder.
        pid: Chrome's main process.
        started: that process's start time (guards against a reused pid).
        owner: the ``ego launch`` process that owns Chrome and removes this record.
        headless: False when Chrome has a window (``--headed``).
        calls: the Unix socket on which ``ego launch`` serves ``ego run`` (see
            :mod:`.call_service`); None where it serves none.
    """

    endpoint: str
    websocket: str
    profile: str
    profile_dir: str
    pid: int
    started: float
    owner: int
    headless: bool
    calls: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> KeptBrowser:
        """Raises: ValueError: ``data`` is not a record of this shape."""
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        try:
            return cls(
                endpoint=_typed(data, "endpoint", str),
                websocket=_typed(data, "websocket", str),
                profile=_typed(data, "profile", str),
                profile_dir=_typed(data, "profile_dir", str),
                pid=_typed(data, "pid", int),
                started=float(_typed(data, "started", (int, float))),
                owner=_typed(data, "owner", int),
                headless=_typed(data, "headless", bool),
                calls=_typed(data, "calls", str) if data.get("calls") is not None else None,
            )
        except KeyError as exc:
            raise ValueError(f"no {exc.args[0]!r}") from None

    def describe(self) -> str:
        """``pid 123, profile default, http://127.0.0.1:9222`` (for messages)."""
        window = "" if self.headless else ", with a window"
        return f"pid {self.pid}, profile {self.profile}{window}, {self.endpoint}"


def _typed(data: dict[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    value = data[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ValueError(f"{key!r} has the wrong type")
    return value


def state_path() -> Path:
    """Where the record lives: ``browser.json`` in ego's state folder."""
    return _state_dir() / STATE_FILE


def _state_dir() -> Path:
    from ..places import state_dir

    return state_dir()


def record(browser: KeptBrowser) -> None:
    """Write the record atomically: a reader sees the old file or the whole new one."""
    path = state_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    data = orjson.dumps(browser.as_dict(), option=orjson.OPT_INDENT_2)
    handle, temporary = tempfile.mkstemp(prefix=".browser-", suffix=".json", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def read() -> KeptBrowser | None:
    """The record as written, alive or not; None when there is none (or it is unreadable,
    which is removed: nothing else could use it)."""
    path = state_path()
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    try:
        return KeptBrowser.from_dict(orjson.loads(raw))
    except (orjson.JSONDecodeError, ValueError):
        with contextlib.suppress(OSError):
            path.unlink()
        return None


def forget(pid: int | None = None) -> None:
    """Remove the record; with ``pid``, only if it still names that Chrome (a newer
    ``ego launch`` may have recorded another meanwhile)."""
    path = state_path()
    if pid is not None:
        current = read()
        if current is None or current.pid != pid:
            return
    with contextlib.suppress(OSError):
        path.unlink()


def pid_alive(browser: KeptBrowser) -> bool:
    """True while the recorded Chrome process runs (the same process, not a reused pid)."""
    # Imported here: reading the record (as `ego run` does first) needs no psutil.
    from ..protocol.chrome import still_running

    # The start time went through JSON: a looser match than the launcher's own.
    return still_running(browser.pid, browser.started, tolerance=0.5)


def kept() -> KeptBrowser | None:
    """The recorded browser when its Chrome still runs; a stale record is removed silently."""
    browser = read()
    if browser is None:
        return None
    if not pid_alive(browser):
        forget(browser.pid)
        return None
    return browser
