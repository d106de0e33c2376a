"""Benchmark a hot, cached ``run_browser_tool`` call against raw CDP and Playwright, in one run.

Run from the project root::

    .venv/bin/python bench/bench_tools.py [--calls N] [--json PATH]

A learnings site is written to a temporary folder with two browser tools that compute the
same thing, ``async (args) => args.n + 1``: ``small`` is just that, ``padded`` carries about
100 KB of source the function does not need (a big comment by default). The page is served
from a thread of this script on 127.0.0.1 (a real http origin, so localStorage works), and
the same Chromium binary runs every contender. Each call passes ``{"n": i}`` with a fresh i:

* ``ego-hot``: ``site.run_browser_tool(site_id, tool, {"n": i}, tab=tab)``, cached: it sends
  the small hot Call only (checked: ``site.last_run.mode == "cached"``);
* ``raw``: ``Runtime.evaluate`` (awaitPromise, returnByValue) of ``ego.runtime.js.wrap(expression,
  {"n": i}, url=...)``, the plain wrap a harness without the cache sends every time, from a
  minimal websockets + orjson client with its own flattened session on ego's page;
* ``ego-eval``: ego's ``Tab.evaluate`` of that same wrapped source;
* ``playwright``: Playwright for Python's ``page.evaluate`` of that same wrapped source, on a
  Chromium that Playwright launched itself from the same binary;
* ``raw-pipe`` (section 5): a minimal raw pipe loop on a Chromium of its own started with
  ``--remote-debugging-pipe`` (NUL-separated JSON on its descriptors 3 and 4, orjson, one
  reader resolving futures by id), at the same page, sending ego's hot Call (its page primed
  once with the Store and the full Call), so that the page does the same work as for
  ``ego-hot``.

ego talks to the Chrome it launched over ``--remote-debugging-pipe``. With ``--websocket``,
``ego-hot-ws`` and ``ego-eval-ws`` make the same calls as ``ego-hot`` and ``ego-eval`` on the
same tab through a second ego browser attached over the websocket (``ego.connect`` to the
launched browser's port), taking turns with every other contender: pipe against websocket in
one run.

Sections, one module each: (1) hot call latency for both tools, in rounds where the
contenders take turns call by call (``_tools_contenders.py``); (2) bytes sent per call
(``_tools_bytes.py``); (3) what the hot call costs step by step on this machine, to explain a
miss (``_tools_breakdown.py``); (4) many hot calls in flight on one tab (``_inflight.py``);
(5) ego's default pipe at its limit: ``ego-hot`` against ``raw-pipe`` alone, one call after
another and 1,000 in flight, the ratios round by round (``_pipe_pair.py``; ``--pipe-only``
runs this section alone).
The site is ``_tools_site.py``; the targets and the report ``_tools_report.py``. Every Chrome
started here is ended and the script checks that none it started is left running.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from _common import (
    ChromeTracker,
    PageServer,
    RawCDP,
    RawPipeCDP,
    chrome_args_for_playwright,
    environment,
    run_benchmark,
)
from _inflight import InFlight, run_inflight
from _pipe_pair import run_pipe_pair
from _tools_breakdown import run_breakdown
from _tools_bytes import cold_and_hot_bytes, contender_bytes
from _tools_contenders import Bench, CallWith, Entry, check, run_rounds
from _tools_report import add_ratios_and_targets, report
from _tools_site import TOOLS, loaded_source, padded_source, write_site

import ego

if TYPE_CHECKING:
    from playwright.async_api import Page


async def benchmark(args: argparse.Namespace, tracker: ChromeTracker) -> dict[str, Any]:
    chrome = args.chrome or ego.find_chrome()
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        async_playwright = None  # type: ignore[assignment]
        print("playwright is not installed (pip install -e '.[bench]'): its columns are skipped")

    results: dict[str, Any] = {
        "environment": environment(chrome),
        "config": {
            "calls": args.calls,
            "warmup": args.warmup,
            "rounds": args.rounds,
            "padding": args.padding,
            "tool_kb": args.tool_kb,
            "breakdown": args.breakdown,
            "inflight": args.inflight,
            "inflight_rounds": args.inflight_rounds,
            "pipe_rounds": args.pipe_rounds,
            "pipe_batches": args.pipe_batches,
            "pipe_only": args.pipe_only,
            "websocket": args.websocket,
        },
    }

    with PageServer() as server, tempfile.TemporaryDirectory(prefix="ego-bench-") as tmp:
        padded = padded_source(args.tool_kb * 1024, args.padding)
        learnings = write_site(Path(tmp), server.url, padded)
        results["config"]["page"] = server.url
        async with contextlib.AsyncExitStack() as stack:
            # AsyncExitStack: every Chrome (and the Playwright driver) is ended even when
            # another clean-up step fails. ego talks over the pipe; the port is for the raw
            # loop (and ego's websocket contenders).
            browser = await ego.launch(
                executable=chrome, learnings=ego.Learnings(roots=[learnings]), port=0
            )
            stack.push_async_callback(browser.close)
            tracker.note_ego(browser)
            tab = await browser.new_tab(server.url)
            tracker.note_ego(browser)
            version = await browser.version()
            results["environment"]["chrome"] = version.get("product", "?")
            endpoint = browser.endpoint
            assert endpoint is not None
            raw = await RawCDP.attach(endpoint, tab.target_id)
            stack.push_async_callback(raw.close)
            # The raw pipe loop needs a Chrome of its own: a pipe has one client.
            raw_pipe = await RawPipeCDP.launch(chrome, server.url)
            stack.push_async_callback(raw_pipe.close)
            tracker.note_pid(raw_pipe.chrome.pid)
            ws_browser: ego.Browser | None = None
            ws_tab: ego.Tab | None = None
            if args.websocket:
                ws_browser = await ego.connect(endpoint, learnings=ego.Learnings(roots=[learnings]))
                stack.push_async_callback(ws_browser.close)
                ws_tab = await ws_browser.find_tab(
                    predicate=lambda found: found.target_id == tab.target_id
                )
                assert ws_tab is not None
            page: Page | None = None
            if async_playwright is not None:
                pw = await stack.enter_async_context(async_playwright())
                pw_browser = await pw.chromium.launch(
                    executable_path=chrome, headless=True, args=chrome_args_for_playwright()
                )
                stack.push_async_callback(pw_browser.close)
                tracker.note_playwright()
                page = await pw_browser.new_page()
                await page.goto(server.url)
                tracker.note_playwright()

            site = browser.site
            sources = {kind: loaded_source(site, tool) for kind, tool in TOOLS.items()}
            bench = Bench(
                browser,
                site,
                tab,
                raw,
                page,
                sources,
                ws_site=None if ws_browser is None else ws_browser.site,
                ws_tab=ws_tab,
                raw_pipe=raw_pipe,
            )
            await bench.prime_raw_pipe()
            results["config"]["tools"] = {
                kind: {
                    "name": TOOLS[kind],
                    "source_bytes": len(sources[kind].expression.encode()),
                    "wrapped_bytes": len(bench.wrapped(kind, 1).encode()),
                }
                for kind in TOOLS
            }

            if not args.pipe_only:
                await sections(args, bench, results, ws_browser=ws_browser, page=page)
            if args.pipe_rounds:
                print(
                    f"5/5 the pipe at its limit: ego-hot against raw-pipe alone, "
                    f"{args.pipe_rounds} rounds of {args.calls} calls and of {args.pipe_batches} "
                    f"batches of {args.inflight:,} "
                    "in flight ...",
                    flush=True,
                )
                results["pipe"] = await run_pipe_pair(
                    bench,
                    args.calls,
                    args.warmup,
                    args.pipe_rounds,
                    args.inflight,
                    args.pipe_batches,
                )
    return results


async def sections(
    args: argparse.Namespace,
    bench: Bench,
    results: dict[str, Any],
    *,
    ws_browser: ego.Browser | None,
    page: Page | None,
) -> None:
    """Sections 1 to 4: bytes, latency, breakdown, in flight (everything but the pipe pair)."""
    browser, raw = bench.browser, bench.raw
    print("1/5 bytes: the cold (storing) call and a hot call of each tool ...", flush=True)
    byte_figures: dict[str, Any] = {}
    for kind in TOOLS:
        byte_figures[kind] = {"ego": await cold_and_hot_bytes(bench, kind)}
    contenders: dict[str, CallWith] = {
        "raw": bench.raw_call,
        "ego-eval": bench.ego_eval,
        "ego-hot": bench.ego_hot,
    }
    if ws_browser is not None:
        contenders["ego-eval-ws"] = bench.ego_eval_ws
        contenders["ego-hot-ws"] = bench.ego_hot_ws
    if page is not None:
        contenders["playwright"] = bench.playwright_call
    for kind in TOOLS:
        await check(bench, kind, contenders)
    for kind in TOOLS:
        byte_figures[kind].update(await contender_bytes(bench, kind))
    results["bytes"] = byte_figures

    print(
        f"2/5 latency: {args.calls} calls per tool and contender, "
        f"{args.rounds} interleaved rounds ...",
        flush=True,
    )
    entries = [
        Entry(kind, name, functools.partial(call, kind))
        for kind in TOOLS
        for name, call in contenders.items()
    ]
    await run_rounds(entries, args.calls, args.warmup, args.rounds)
    if bench.not_cached:
        raise SystemExit(f"{bench.not_cached} timed ego calls were not cached")
    for kind in TOOLS:
        await check(bench, kind, contenders)  # still right, and still hot
    results["latency"] = {
        kind: {e.contender: e.stats() for e in entries if e.tool == kind} for kind in TOOLS
    }
    results["ego_hot_calls_not_cached"] = bench.not_cached

    if args.breakdown:
        print("3/5 breakdown of a hot call, step by step ...", flush=True)
        calls = max(args.rounds, args.calls // 4)
        results["config"]["breakdown_calls"] = calls
        results.update(await run_breakdown(bench, calls, max(1, args.warmup // 2), args.rounds))
    if args.inflight:
        print(
            f"4/5 in flight: {args.inflight} calls at once, {args.inflight_rounds} "
            "interleaved rounds ...",
            flush=True,
        )
        inflight_calls: dict[str, Callable[[int], Awaitable[Any]]] = {
            "raw": functools.partial(bench.raw_concurrent, "small"),
            "ego-eval": functools.partial(bench.ego_eval, "small"),
            "ego-hot": functools.partial(bench.ego_hot, "small"),
        }
        hot_browsers = {"ego-hot": browser}
        if ws_browser is not None:
            inflight_calls["ego-eval-ws"] = functools.partial(bench.ego_eval_ws, "small")
            inflight_calls["ego-hot-ws"] = functools.partial(bench.ego_hot_ws, "small")
            hot_browsers["ego-hot-ws"] = ws_browser
        if page is not None:
            inflight_calls["playwright"] = functools.partial(bench.playwright_call, "small")
        await raw.start_reader()
        try:
            results["inflight"] = await run_inflight(
                InFlight(inflight_calls, hot_browsers), args.inflight, args.inflight_rounds
            )
        finally:
            await raw.stop_reader()


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0] if __doc__ else "")
    parser.add_argument(
        "--calls", type=int, default=2000, help="timed calls per tool and contender"
    )
    parser.add_argument("--warmup", type=int, default=200, help="warm-up calls per contender")
    parser.add_argument("--rounds", type=int, default=10, help="interleaved rounds")
    parser.add_argument("--tool-kb", type=int, default=100, help="size of the padded tool, KB")
    parser.add_argument(
        "--padding",
        choices=("comment", "table"),
        default="comment",
        help="what pads the big tool: a comment, or an unused constant table in the function",
    )
    parser.add_argument(
        "--no-breakdown",
        dest="breakdown",
        action="store_false",
        help="skip section 3 (the step-by-step breakdown, calls/4 calls per step)",
    )
    parser.add_argument(
        "--inflight", type=int, default=1000, help="calls at once in section 4 (0 skips it)"
    )
    parser.add_argument(
        "--inflight-rounds", type=int, default=7, help="interleaved rounds of section 4"
    )
    parser.add_argument(
        "--websocket",
        action="store_true",
        help="also time ego over a websocket to the same tab (ego-hot-ws, ego-eval-ws)",
    )
    parser.add_argument(
        "--pipe-rounds",
        type=int,
        default=9,
        help="rounds of section 5, ego-hot against the raw pipe loop alone (0 skips it)",
    )
    parser.add_argument(
        "--pipe-batches",
        type=int,
        default=5,
        help="batches of --inflight calls each contender fires per round of section 5",
    )
    parser.add_argument(
        "--pipe-only", action="store_true", help="run section 5 only (after the set-up checks)"
    )
    parser.add_argument("--chrome", default=None, help="Chrome binary (default: ego's choice)")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args(argv)
    for name in ("calls", "warmup", "rounds", "tool_kb", "inflight_rounds", "pipe_batches"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.inflight < 0:
        parser.error("--inflight must be 0 or more")
    if args.pipe_rounds < 0:
        parser.error("--pipe-rounds must be 0 or more")
    return args


def main(argv: list[str] | None = None) -> int:
    return run_benchmark(
        parse_args(argv), benchmark, add_ratios_and_targets, report, record_processes=True
    )


if __name__ == "__main__":
    sys.exit(main())
