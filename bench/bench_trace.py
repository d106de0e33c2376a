"""What tracing costs: nothing on the hot path when off; a bounded time per step when on; the
size of a traced flow.

Run from the project root::

    .venv/bin/python bench/bench_trace.py [--calls N] [--rounds N] [--actions N] [--json PATH]

Sections, each interleaved call by call so that load from other programs lands on both sides:

1. **Tracing off, the hot call.** ``bench_tools.py``'s hot, cached ``run_browser_tool`` (its
   site, ``add_one``) through ego's ``Site`` (the call path with the run's hook: one truth test
   of an empty list) against the same ``Site`` whose ``run_call`` is the same source with the
   hook's lines taken out (they carry the marker ``the run's hook``; the copy is made from the
   source at run time, so it follows the code). The verb's hook likewise: the main frame's
   ``press`` (the observed verb, nobody observing; a tab's ``press`` hands to it) against
   the verb it wraps (``__wrapped__``).
2. **Tracing on, per step.** On the demo shop, ``tab.hover`` of a link in a traced tab against
   the same in an untraced tab of the same page, and the same hot tool call in a traced tab
   against an untraced one: the difference is what a step of a trace costs (a screenshot, the
   snapshot, the requests and console of the step written out).
3. **The size of a traced flow**: the demo flow of the tests (the shop, a product, a login,
   a search that passes, the broken-site switch, the search failing) traced with the default
   options: its bytes, steps, and bytes per step.

Every Chrome started here is ended, and the script says so.
"""

from __future__ import annotations

import argparse
import functools
import inspect
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

from _common import ChromeTracker, PageServer, environment, run_benchmark
from _tools_contenders import Entry, run_rounds
from _tools_site import SITE_ID, TOOLS, padded_source, write_site

import ego
from ego.demo import DemoServer
from ego.page.verbs import PageVerbs
from ego.site import running

#: The marker of the run's hook in ``ego/site/running.py``: that line and the next are it.
HOOK = "the run's hook"


def site_without_hook(host: Any, learnings: ego.Learnings) -> ego.Site:
    """A ``Site`` whose ``run_call`` is ego's own source with the hook's lines taken out."""
    source = textwrap.dedent(inspect.getsource(running.Running.run_call))
    lines, kept, skip = source.splitlines(), [], False
    for line in lines:
        if skip:
            skip = False
        elif HOOK in line:
            skip = True
        else:
            kept.append(line)
    if len(kept) != len(lines) - 4:
        raise SystemExit(f"expected the hook's two pairs of lines in run_call ({HOOK!r})")
    namespace = dict(vars(running))
    exec("\n".join(kept), namespace)

    class Unhooked(ego.Site):
        run_call = namespace["run_call"]

    return Unhooked(host, learnings)


def stats(entry: Entry) -> dict[str, float]:
    data = entry.stats()
    return {
        key: data[key]
        for key in ("median_us", "p99_us", "round_median_us", "round_min_us", "round_max_us")
    }


async def hot_path(
    args: argparse.Namespace, browser: ego.Browser, server_url: str, learnings: ego.Learnings
) -> dict[str, Any]:
    tab = await browser.new_tab(server_url)
    hooked = ego.Site(browser, learnings)
    unhooked = site_without_hook(browser, learnings)
    counter = iter(range(10**9))

    async def call(site: ego.Site) -> Any:
        n = next(counter)
        value = await site.run_browser_tool(SITE_ID, TOOLS["small"], {"n": n}, tab=tab)
        if value != n + 1:
            raise SystemExit(f"the hot call gave {value!r}, not {n + 1}")
        return value

    unwrapped = vars(PageVerbs)["press"].__wrapped__
    entries = [
        Entry("tool", "with-hook", functools.partial(call, hooked)),
        Entry("tool", "without-hook", functools.partial(call, unhooked)),
        # The frame's verb, which a tab's hands to: the hook alone differs.
        Entry("verb", "observed", lambda: tab.main_frame.press("Shift")),
        Entry("verb", "unwrapped", lambda: unwrapped(tab.main_frame, "Shift")),
    ]
    await run_rounds(entries, args.calls, args.warmup, args.rounds)
    await tab.close()
    return {f"{e.tool}:{e.contender}": stats(e) for e in entries}


async def per_step(
    args: argparse.Namespace, browser: ego.Browser, shop: DemoServer, learnings: ego.Learnings,
    folder: Path,
) -> dict[str, Any]:  # fmt: skip
    # A context each: each tab in a window of its own, both in front (a background tab's
    # animation frames are throttled, which the actionability checks wait on).
    contexts = [await browser.new_context(), await browser.new_context()]
    plain, traced = [await context.new_tab(shop.url) for context in contexts]
    site = ego.Site(browser, learnings)
    site.set_start_url("demo-shop", shop.url)
    trace = traced.trace(folder / "steps.trace.jsonl")
    await trace.start()

    async def hover(tab: ego.Tab) -> None:
        await tab.hover('[data-testid="product-card"] a')

    async def search(tab: ego.Tab) -> None:
        await site.run_browser_tool("demo-shop", "search_products", {"query": "lamp"}, tab=tab)

    entries = [
        Entry("hover", "untraced", functools.partial(hover, plain)),
        Entry("hover", "traced", functools.partial(hover, traced)),
        Entry("tool", "untraced", functools.partial(search, plain)),
        Entry("tool", "traced", functools.partial(search, traced)),
    ]
    await run_rounds(entries, args.actions, max(2, args.actions // 10), args.rounds)
    summary = await trace.stop()
    for context in contexts:
        await context.close()
    found = {f"{e.tool}:{e.contender}": stats(e) for e in entries}
    found["trace"] = {"steps": summary.steps, "bytes": summary.bytes}
    return found


async def flow_size(browser: ego.Browser, shop: DemoServer, folder: Path) -> dict[str, Any]:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests.helpers.trace_demo import trace_demo_session

    made = await trace_demo_session(browser, shop, folder / "flow.trace.jsonl")
    size = made.path.stat().st_size
    return {
        "bytes": size,
        "steps": made.summary.steps,
        "bytes_per_step": size // made.summary.steps,
    }


async def benchmark(args: argparse.Namespace, tracker: ChromeTracker) -> dict[str, Any]:
    chrome = args.chrome or ego.find_chrome()
    results: dict[str, Any] = {
        "environment": environment(chrome),
        "config": {"calls": args.calls, "rounds": args.rounds, "actions": args.actions},
    }
    with (
        PageServer() as server,
        DemoServer(port=0) as shop,
        tempfile.TemporaryDirectory(prefix="ego-bench-trace-") as tmp,
    ):
        folder = Path(tmp)
        bench_learnings = ego.Learnings(
            roots=[write_site(folder, server.url, padded_source(1024, "comment"))]
        )
        async with ego.launch(executable=chrome) as browser:
            tracker.note_ego(browser)
            print("1/3 tracing off: the hot call and a verb, with and without the hook ...")
            results["off"] = await hot_path(args, browser, server.url, bench_learnings)
            print("2/3 tracing on: a hover and a tool call, traced and not ...")
            results["on"] = await per_step(args, browser, shop, ego.Learnings(), folder)
            print("3/3 the size of the demo flow's trace ...")
            results["flow"] = await flow_size(browser, shop, folder)
    return results


def add_ratios(results: dict[str, Any]) -> None:
    off, on = results["off"], results["on"]
    for kind, a, b in (("tool", "with-hook", "without-hook"), ("verb", "observed", "unwrapped")):
        medians = [off[f"{kind}:{name}"]["median_us"] for name in (a, b)]
        off[f"{kind}:ratio"] = medians[0] / medians[1]
    for kind in ("hover", "tool"):
        on[f"{kind}:added_ms"] = (
            on[f"{kind}:traced"]["median_us"] - on[f"{kind}:untraced"]["median_us"]
        ) / 1000


def report(results: dict[str, Any]) -> str:
    off, on, flow = results["off"], results["on"], results["flow"]
    load = results["environment"].get("loadavg_1m_before_after")
    lines = [f"load average (1 min) before and after: {load}", "", "tracing off (median us):"]
    for kind, a, b in (("tool", "with-hook", "without-hook"), ("verb", "observed", "unwrapped")):
        lines.append(
            f"  {kind:5} {a} {off[f'{kind}:{a}']['median_us']:9.1f}   {b} "
            f"{off[f'{kind}:{b}']['median_us']:9.1f}   ratio {off[f'{kind}:ratio']:.3f}"
        )
    lines.append("tracing on (median ms per step):")
    for kind in ("hover", "tool"):
        lines.append(
            f"  {kind:5} untraced {on[f'{kind}:untraced']['median_us'] / 1000:7.2f}   traced "
            f"{on[f'{kind}:traced']['median_us'] / 1000:7.2f}   added {on[f'{kind}:added_ms']:.2f}"
        )
    lines.append(
        f"the demo flow's trace: {flow['bytes']:,} bytes, {flow['steps']} steps, "
        f"{flow['bytes_per_step']:,} bytes a step"
    )
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0] if __doc__ else "")
    parser.add_argument("--calls", type=int, default=2000, help="timed hot calls per contender")
    parser.add_argument("--warmup", type=int, default=200, help="warm-up calls per contender")
    parser.add_argument("--rounds", type=int, default=10, help="interleaved rounds")
    parser.add_argument("--actions", type=int, default=60, help="timed steps, traced or not")
    parser.add_argument("--chrome", default=None, help="Chrome binary (default: ego's choice)")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args(argv)
    for name in ("calls", "warmup", "rounds", "actions"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    return run_benchmark(parse_args(argv), benchmark, add_ratios, report)


if __name__ == "__main__":
    sys.exit(main())
