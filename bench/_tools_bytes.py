"""Section 2 of ``bench_tools.py``: the bytes one call sends, counted on each contender's
connection (ego's wire and socket, the raw loop's frame, Playwright's driver pipe).
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from _tools_contenders import Bench
from _tools_site import SITE_ID, TOOLS

import ego

if TYPE_CHECKING:
    from playwright.async_api import Page

__all__ = [
    "BYTES_N",
    "Sent",
    "cold_and_hot_bytes",
    "contender_bytes",
    "counting_ego",
    "report_lines",
]

BYTES_N = 12345  # the n of the calls whose bytes are counted (as many digits as a timed call)


def ws_frame_bytes(payload: int) -> int:
    """Bytes of one masked client text frame: header, extended length, mask, payload."""
    extended = 0 if payload < 126 else 2 if payload < 65536 else 8
    return 2 + extended + 4 + payload


@dataclass
class Sent:
    """What went out during one call."""

    messages: int = 0
    payload: int = 0  # the CDP JSON messages
    socket: int = 0  # bytes handed to the socket or pipe (frames, headers, masks, NULs)


@contextlib.contextmanager
def counting_ego(browser: ego.Browser) -> Iterator[Sent]:
    """Count what ego's connection sends: its wire's messages and the writes to its socket
    (a websocket) or pipe (a browser ego launched: each message and its NUL)."""
    sent = Sent()
    # ego's Wire or PipeWire behind the connection's Channel interface (reached into, like its
    # socket or pipe transport).
    wire: Any = browser.connection._wire
    transport = getattr(wire, "_transport", None) or getattr(wire, "_writer", None)
    if transport is None:
        raise RuntimeError("ego's wire has no transport")
    send, write = wire.send, transport.write

    def counting_send(message: bytes) -> bool:
        sent.messages += 1
        sent.payload += len(message)
        return bool(send(message))

    def counting_write(data: bytes | bytearray | memoryview) -> None:
        sent.socket += len(data)
        write(data)

    wire.send = counting_send
    transport.write = counting_write
    try:
        yield sent
    finally:
        del wire.send
        del transport.write


@contextlib.contextmanager
def counting_playwright(page: Page) -> Iterator[Sent | None]:
    """Count what Playwright for Python sends to its driver: length-prefixed JSON on a pipe.

    Reaches into Playwright's internals (its connection hands every outgoing message to
    ``onmessage``, which the pipe transport serialises with ``json.dumps``); yields None when
    they are not where expected.
    """
    connection = getattr(getattr(page, "_impl_obj", None), "_connection", None)
    forward = getattr(connection, "onmessage", None)
    if connection is None or forward is None:
        yield None
        return
    sent = Sent()

    def counting_onmessage(message: dict[str, Any]) -> None:
        size = len(json.dumps(message, allow_nan=False).encode())  # as the transport does
        sent.messages += 1
        sent.payload += size
        sent.socket += 4 + size  # the 4-byte length prefix
        forward(message)

    connection.onmessage = counting_onmessage
    try:
        yield sent
    finally:
        connection.onmessage = forward


async def cold_and_hot_bytes(bench: Bench, kind: str) -> dict[str, Any]:
    """The first call (stores the source) and the next (hot), counted on ego's socket."""
    tool = TOOLS[kind]
    out: dict[str, Any] = {}
    for label, n in (("cold", 1), ("hot", BYTES_N)):
        with counting_ego(bench.browser) as sent:
            start = time.perf_counter()
            value = await bench.site.run_browser_tool(SITE_ID, tool, {"n": n}, tab=bench.tab)
            elapsed = time.perf_counter() - start
        stats = bench.site.last_run
        assert stats is not None
        if value != n + 1:
            raise SystemExit(f"ego {tool}: n={n} gave {value!r}")
        want = "stored" if label == "cold" else "cached"
        if stats.mode != want:
            raise SystemExit(f"ego {tool}: the {label} call ran in mode {stats.mode!r}, not {want}")
        out[label] = {
            "mode": stats.mode,
            "stored": stats.stored,
            "evaluations": stats.evaluations,
            "js_bytes": stats.bytes_sent,
            "ws_payload_bytes": sent.payload,
            "ws_messages": sent.messages,
            "socket_bytes": sent.socket,
            "ms": elapsed * 1000,
        }
    return out


async def contender_bytes(bench: Bench, kind: str) -> dict[str, Any]:
    """What raw and Playwright send for one call of the wrapped source."""
    wrapped = bench.wrapped(kind, BYTES_N)
    js_bytes = len(wrapped.encode())
    await bench.raw.evaluate(wrapped, await_promise=True)
    payload = bench.raw.last_message_bytes
    out: dict[str, Any] = {
        "raw": {
            "js_bytes": js_bytes,
            "ws_payload_bytes": payload,
            "socket_bytes": ws_frame_bytes(payload),
        }
    }
    if bench.page is not None:
        with counting_playwright(bench.page) as sent:
            await bench.page.evaluate(wrapped)
        out["playwright"] = {
            "js_bytes": js_bytes,
            "driver_payload_bytes": None if sent is None else sent.payload,
            "driver_messages": None if sent is None else sent.messages,
            "driver_pipe_bytes": None if sent is None else sent.socket,
        }
    return out


def _fmt_bytes(value: int | None) -> str:
    return "n/a" if value is None else f"{value:,}"


def report_lines(results: dict[str, Any], label: dict[str, str]) -> list[str]:
    """The section's lines for the report; ``label`` names each tool in the first column."""
    lines = [
        "2. Bytes sent per call (JS = the JavaScript; payload = the CDP messages; wire = what",
        "   goes into the socket or pipe, frames included)",
        f"   {'tool':<28}{'call':<40}{'JS':>9}{'payload':>10}{'wire':>10}",
    ]
    for kind, figures in results["bytes"].items():
        ego_figures = figures["ego"]
        rows: list[tuple[str, int | None, int | None, int | None]] = []
        for phase in ("hot", "cold"):
            item = ego_figures[phase]
            what = (
                "ego hot (cached, 1 evaluate, pipe)"
                if phase == "hot"
                else f"ego cold ({item['mode']}, {item['evaluations']} evaluates, "
                f"{item['ms']:.0f} ms)"
            )
            rows.append((what, item["js_bytes"], item["ws_payload_bytes"], item["socket_bytes"]))
        raw = figures["raw"]
        rows.append(
            (
                "raw Runtime.evaluate (websocket)",
                raw["js_bytes"],
                raw["ws_payload_bytes"],
                raw["socket_bytes"],
            )
        )
        pw = figures.get("playwright")
        if pw is not None:
            rows.append(
                (
                    "playwright (Python -> driver pipe)",
                    pw["js_bytes"],
                    pw["driver_payload_bytes"],
                    pw["driver_pipe_bytes"],
                )
            )
        for index, (what, js, payload, wire) in enumerate(rows):
            tool = label[kind] if index == 0 else ""
            lines.append(
                f"   {tool:<28}{what:<40}{_fmt_bytes(js):>9}{_fmt_bytes(payload):>10}"
                f"{_fmt_bytes(wire):>10}"
            )
    lines.append(
        "   (Playwright's driver then sends the source to Chrome again, over its own pipe; "
        "not counted)"
    )
    return lines
