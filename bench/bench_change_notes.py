"""What the change note costs an action through ``ego mcp``: each action on a 200-row issue
tracker (``bench/_tracker_site.py``) timed with its note and with ``diff: false``, interleaved
in the same server, through the MCP SDK's stdio client as an agent's client calls it.

    .venv/bin/python bench/bench_change_notes.py                # 15 rounds, 200 rows
    .venv/bin/python bench/bench_change_notes.py --rounds 30 --rows 500

The actions: ``select_option`` on the Priority select (a value it does not hold), ``check``
and ``uncheck`` of the "Only mine" box, and ``navigate`` to the page again. Each round runs
every action once with its note and once with ``diff: false``, in an order that alternates
round by round, so a burst of machine noise hits both alike; an untimed call with a note
follows each ``diff: false`` one, so that every timed note starts from the snapshot an
agent's previous call left, as it does when an agent keeps its notes on. Target (issue 39):
an action with its note within 1.5 times the same action with ``diff: false`` (the ratio of
medians).
The machine's load is printed before and after: compare the figures of one run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import CallToolResult, TextContent

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _tracker_site import tracker  # noqa: E402

from tests.helpers.page_server import PageServer  # noqa: E402

#: The issue's bound: an action with its note, over the same action with ``diff: false``.
TARGET = 1.5


def _text(result: CallToolResult) -> str:
    return "\n".join(part.text for part in result.content if isinstance(part, TextContent))


async def _timed(session: ClientSession, name: str, arguments: dict[str, Any]) -> float:
    started = time.perf_counter()
    result = await asyncio.wait_for(session.call_tool(name, arguments), 120)
    took = time.perf_counter() - started
    if result.is_error:
        raise RuntimeError(f"{name} {arguments} failed: {_text(result)}")
    return took


async def measure(url: str, rounds: int) -> dict[str, tuple[list[float], list[float]]]:
    """Each action's seconds with its note and with ``diff: false``."""
    state = Path(tempfile.mkdtemp(prefix="ego-bench-notes-"))
    env = dict(os.environ, EGO_STATE_DIR=str(state), EGO_PROFILES_DIR=str(state / "profiles"))
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "ego", "mcp"], env=env, cwd=state
    )
    found: dict[str, tuple[list[float], list[float]]] = {}
    with open(os.devnull, "w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            await _timed(session, "navigate", {"url": url})
            values = ["Low", "Medium", "High"]
            for index in range(rounds):
                for label, steps in _steps(url, values, index).items():
                    noted, plain = found.setdefault(label, ([], []))
                    for tool, arguments, diff, timed in steps:
                        took = await _timed(session, tool, {**arguments, "diff": diff})
                        if timed:
                            (noted if diff else plain).append(took)
    return found


def _steps(
    url: str, values: list[str], index: int
) -> dict[str, list[tuple[str, dict[str, Any], bool, bool]]]:
    """Each action's calls in one round: (tool, arguments, diff, timed). The timed call with
    its note and the one with ``diff: false`` take turns going first; an untimed call with
    a note follows a ``diff: false`` one, so that each timed note has the last snapshot an
    agent's previous call left (``diff: false`` drops it)."""
    choose = [{"selector": "#prio", "values": [values[(index + n) % 3]]} for n in range(3)]
    mine = {"selector": "#mine"}
    page = {"url": url}
    if index % 2 == 0:  # with its note first, then diff: false, then a note untimed
        select = [
            ("select_option", choose[0], True, True),
            ("select_option", choose[1], False, True),
            ("select_option", choose[2], True, False),
        ]
        navigate = [
            ("navigate", page, True, True),
            ("navigate", page, False, True),
            ("navigate", page, True, False),
        ]
        check = [
            ("check", mine, True, True),
            ("uncheck", mine, True, False),
            ("check", mine, False, True),
            ("uncheck", mine, True, False),
        ]
        uncheck = [
            ("check", mine, True, False),
            ("uncheck", mine, True, True),
            ("check", mine, True, False),
            ("uncheck", mine, False, True),
            ("check", mine, True, False),
            ("uncheck", mine, True, False),
        ]
    else:  # diff: false first, a note untimed, then with its note
        select = [
            ("select_option", choose[0], False, True),
            ("select_option", choose[1], True, False),
            ("select_option", choose[2], True, True),
        ]
        navigate = [
            ("navigate", page, False, True),
            ("navigate", page, True, False),
            ("navigate", page, True, True),
        ]
        check = [
            ("check", mine, False, True),
            ("uncheck", mine, True, False),
            ("check", mine, True, True),
            ("uncheck", mine, True, False),
        ]
        uncheck = [
            ("check", mine, True, False),
            ("uncheck", mine, False, True),
            ("check", mine, True, False),
            ("uncheck", mine, True, False),
            ("check", mine, True, False),
            ("uncheck", mine, True, True),
        ]
    return {"select_option": select, "check": check, "uncheck": uncheck, "navigate": navigate}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--rows", type=int, default=200)
    options = parser.parse_args()
    server = PageServer()
    try:
        url = server.route("/tracker", tracker(options.rows))
        load = os.getloadavg()[0]
        found = asyncio.run(measure(url, options.rounds))
    finally:
        server.close()
    print(f"change notes on a {options.rows}-row tracker, medians of {options.rounds} rounds")
    print(f"1-minute load: {load:.2f} before, {os.getloadavg()[0]:.2f} after")
    print(f"{'action':15} {'with note':>10} {'diff false':>11} {'ratio':>6}  target <= {TARGET}")
    for label, (noted, plain) in found.items():
        mine, other = statistics.median(noted), statistics.median(plain)
        verdict = "PASS" if mine / other <= TARGET else "MISS"
        print(
            f"{label:15} {mine * 1000:8.0f}ms {other * 1000:9.0f}ms {mine / other:6.2f}  {verdict}"
        )


if __name__ == "__main__":
    main()
