"""What the change note costs an action through ``ego mcp``: each action on a 200-row issue
tracker (``bench/_tracker_site.py``) timed with its note and with ``diff: false``, interleaved
in the same server, through the MCP SDK's stdio client as an agent's client calls it.

    .venv/bin/python bench/bench_change_notes.py                # 15 rounds, 200 rows
    .venv/bin/python bench/bench_change_notes.py --rounds 30 --rows 500
    mkdir /tmp/ego-then && git archive COMMIT ego | tar -x -C /tmp/ego-then  # ego as it was
    .venv/bin/python bench/bench_change_notes.py --against /tmp/ego-then

The actions: ``select_option`` on the Priority select (a value it does not hold), ``check``
and ``uncheck`` of the "Only mine" box, and ``navigate`` to the page again. Each round runs
every action once with its note and once with ``diff: false``, in an order that alternates
round by round, so a burst of machine noise hits both alike; an untimed call with a note
follows each ``diff: false`` one, so that every timed note starts from the snapshot an
agent's previous call left, as it does when an agent keeps its notes on. Target (issue 39):
an action with its note within 1.5 times the same action with ``diff: false`` (the ratio of
medians).
Beside the times, the CPU each call took in the server's Python and in its Chrome's
processes (psutil, counted in ticks of 10 ms: their means), which the machine's load changes
far less than the times.
``--against DIR`` runs a second server on the ``ego`` package in ``DIR`` (another version's
source, put first on its ``PYTHONPATH``), the two servers taking turns action by action (the
first turning each round), so that a change is measured against what it changed in the same
run.
The machine's load is printed before and after: compare the figures of one run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
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


@dataclass(frozen=True, slots=True)
class Server:
    """An ``ego mcp`` server's client session and its process (its Chrome under it)."""

    session: ClientSession
    process: psutil.Process

    def cpu(self) -> tuple[float, float]:
        """CPU seconds so far of the server's Python and of its Chrome's processes."""
        return _cpu([self.process]), _cpu(self.process.children(recursive=True))


def _cpu(processes: list[psutil.Process]) -> float:
    total = 0.0
    for process in processes:
        with contextlib.suppress(psutil.Error):
            times = process.cpu_times()
            total += times.user + times.system
    return total


#: One timed call: its seconds, and the CPU seconds of the server's Python and its Chrome.
Sample = tuple[float, float, float]


async def _timed(server: Server, name: str, arguments: dict[str, Any]) -> Sample:
    python, chrome = server.cpu()
    started = time.perf_counter()
    result = await asyncio.wait_for(server.session.call_tool(name, arguments), 120)
    took = time.perf_counter() - started
    if result.is_error:
        raise RuntimeError(f"{name} {arguments} failed: {_text(result)}")
    python_after, chrome_after = server.cpu()
    return took, python_after - python, chrome_after - chrome


#: Each action's samples with its note and with ``diff: false``.
Found = dict[str, tuple[list[Sample], list[Sample]]]


async def measure(url: str, rounds: int, sources: list[Path | None]) -> list[Found]:
    """Each action's samples with its note and with ``diff: false``, for a server on each of
    ``sources`` (None: this tree's ``ego``), the servers taking turns action by action."""
    found: list[Found] = [{} for _ in sources]
    with open(os.devnull, "w") as errlog:
        async with contextlib.AsyncExitStack() as stack:
            servers = [await _server(stack, source, errlog, url) for source in sources]
            values = ["Low", "Medium", "High"]
            turns = list(zip(servers, found, strict=True))
            for index in range(rounds):
                for label, steps in _steps(url, values, index).items():
                    for server, times in turns if index % 2 == 0 else reversed(turns):
                        noted, plain = times.setdefault(label, ([], []))
                        for tool, arguments, diff, timed in steps:
                            took = await _timed(server, tool, {**arguments, "diff": diff})
                            if timed:
                                (noted if diff else plain).append(took)
    return found


async def _server(
    stack: contextlib.AsyncExitStack, source: Path | None, errlog: Any, url: str
) -> Server:
    """A started ``ego mcp`` (on the ``ego`` in ``source``, if given) showing ``url``."""
    state = Path(tempfile.mkdtemp(prefix="ego-bench-notes-"))
    env = dict(os.environ, EGO_STATE_DIR=str(state), EGO_PROFILES_DIR=str(state / "profiles"))
    if source is not None:
        env["PYTHONPATH"] = str(source)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "ego", "mcp"], env=env, cwd=state
    )
    before = {child.pid for child in psutil.Process().children()}
    read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    (process,) = [child for child in psutil.Process().children() if child.pid not in before]
    server = Server(session, process)
    await _timed(server, "navigate", {"url": url})
    return server


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
    parser.add_argument("--against", type=Path, help="another version's source tree of ego")
    options = parser.parse_args()
    sources: list[Path | None] = [None]
    if options.against is not None:
        if not (options.against / "ego" / "__init__.py").is_file():
            parser.error(f"--against {options.against}: no ego package in it")
        sources.append(options.against.resolve())
    server = PageServer()
    try:
        url = server.route("/tracker", tracker(options.rows))
        load = os.getloadavg()[0]
        found = asyncio.run(measure(url, options.rounds, sources))
    finally:
        server.close()
    print(f"change notes on a {options.rows}-row tracker, medians of {options.rounds} rounds")
    print(f"1-minute load: {load:.2f} before, {os.getloadavg()[0]:.2f} after")
    for source, times in zip(sources, found, strict=True):
        print(f"ego from {source or ROOT}:")
        _table(times)
    if len(found) == 2:
        print("with note, this tree against --against (ratio of medians; of CPU, of means):")
        for label, (noted, _) in found[0].items():
            then = found[1][label][0]
            print(
                f"  {label:15} {_median(noted, 0) / _median(then, 0):6.2f}"
                f"   ego's Python CPU {_median(noted, 1) / _median(then, 1):5.2f}"
                f"   Chrome's CPU {_median(noted, 2) / _median(then, 2):5.2f}"
            )


def _table(found: Found) -> None:
    print(
        f"{'action':15} {'with note':>10} {'diff false':>11} {'ratio':>6}  target <= {TARGET}"
        "   CPU (means) with note / diff false: ego's Python, Chrome"
    )
    for label, (noted, plain) in found.items():
        mine, other = _median(noted, 0), _median(plain, 0)
        verdict = "PASS" if mine / other <= TARGET else "MISS"
        print(
            f"{label:15} {mine * 1000:8.0f}ms {other * 1000:9.0f}ms {mine / other:6.2f}  {verdict}"
            f"{'':12}{_median(noted, 1) * 1000:5.0f} / {_median(plain, 1) * 1000:3.0f} ms, "
            f"{_median(noted, 2) * 1000:5.0f} / {_median(plain, 2) * 1000:3.0f} ms"
        )


def _median(samples: list[Sample], field: int) -> float:
    """The median of a field; for CPU seconds (counted in ticks of 10 ms), the mean."""
    values = [sample[field] for sample in samples]
    return statistics.median(values) if field == 0 else statistics.fmean(values)


if __name__ == "__main__":
    main()
