"""The verdicts and the report of ``bench_tools.py``: the ratios of section 1, the targets
from the issue with PASS/MISS/SKIP, and the text that puts every section together.
"""

from __future__ import annotations

from typing import Any

import _inflight
import _pipe_pair
import _tools_breakdown
import _tools_bytes
from _common import verdict
from _tools_breakdown import SITE_LAYER_STEP

__all__ = ["add_ratios_and_targets", "report"]

# The targets from the issue.
TARGET_EGO_OVER_RAW = 1.3  # hot call median at most 1.3x the raw evaluate's (small tool)
TARGET_PW_OVER_EGO = 2.0  # Playwright median at least 2x the hot call's (small tool)
TARGET_HOT_BYTES = 1024  # bytes sent per hot call, whatever the tool's size (padded tool)
TARGET_SITE_LAYER_US = 10.0  # the Site layer's Python per hot call (stub tab, small tool)
TARGET_INFLIGHT_OVER_RAW = 0.9  # in-flight throughput, ego-hot / raw loop (per-round median)
TARGET_INFLIGHT_OVER_PW = 3.0  # in-flight throughput, ego-hot / Playwright (per-round median)
TARGET_EGO_OVER_PIPE = 1.05  # hot call median at most 1.05x the raw pipe loop's (small tool)
TARGET_INFLIGHT_OVER_PIPE = 0.9  # in-flight throughput, ego-hot / raw pipe loop (per round)


def add_ratios_and_targets(results: dict[str, Any]) -> None:
    """Add section 1's ratios and the targets' verdicts to ``results``."""
    ratios: dict[str, dict[str, Any]] = {}
    for kind, stats in results.get("latency", {}).items():
        ego_hot, raw, pw = stats["ego-hot"], stats["raw"], stats.get("playwright")
        ratios[kind] = {
            "ego_over_raw_median": ego_hot["median_us"] / raw["median_us"],
            "ego_over_raw_p99": ego_hot["p99_us"] / raw["p99_us"],
            "playwright_over_ego_median": None
            if pw is None
            else pw["median_us"] / ego_hot["median_us"],
            "playwright_over_ego_p99": None if pw is None else pw["p99_us"] / ego_hot["p99_us"],
        }
        # The same calls over the websocket against over the pipe (above 1: the pipe is faster).
        for call in ("ego-hot", "ego-eval"):
            if f"{call}-ws" in stats:
                ratios[kind][f"{call}_ws_over_pipe_median"] = (
                    stats[f"{call}-ws"]["median_us"] / stats[call]["median_us"]
                )
    results["ratios"] = ratios

    def target(name: str, value: float | None, limit: float, test: str) -> dict[str, Any]:
        ok: bool | None = None
        if value is not None:
            ok = (
                value >= limit
                if test == "at least"
                else value <= limit
                if test == "at most"
                else value < limit
            )
        return {"name": name, "value": value, "limit": limit, "test": test, "result": verdict(ok)}

    hot = results.get("bytes", {}).get("padded", {}).get("ego", {}).get("hot", {})
    kb = results["config"]["tool_kb"]
    small = ratios.get("small", {})
    pipe = results.get("pipe", {})
    site_layer = results.get("python_overhead_us", {}).get("small", {}).get(SITE_LAYER_STEP)
    inflight_ratios = results.get("inflight", {}).get("ratios", {})

    def inflight(other: str) -> float | None:
        figures = inflight_ratios.get(f"ego-hot/{other}")
        return None if figures is None else figures["median"]

    results["targets"] = [
        target(
            f"hot call within {TARGET_EGO_OVER_PIPE}x of the raw pipe loop's time, small tool "
            "(section 5, ego-hot/raw-pipe median, per-round median)",
            pipe.get("sequential", {}).get("median"),
            TARGET_EGO_OVER_PIPE,
            "at most",
        ),
        target(
            f"in flight at least {TARGET_INFLIGHT_OVER_PIPE:g} of the raw pipe loop's "
            "throughput (section 5, ego-hot/raw-pipe calls/s, per-round median)",
            pipe.get("inflight", {}).get("ratio", {}).get("median"),
            TARGET_INFLIGHT_OVER_PIPE,
            "at least",
        ),
        target(
            f"hot call within {TARGET_EGO_OVER_RAW}x of the raw evaluate, small tool "
            "(ego-hot/raw median)",
            small.get("ego_over_raw_median"),
            TARGET_EGO_OVER_RAW,
            "at most",
        ),
        target(
            f"hot call at least {TARGET_PW_OVER_EGO:g}x faster than Playwright, small tool "
            "(playwright/ego-hot median)",
            small.get("playwright_over_ego_median"),
            TARGET_PW_OVER_EGO,
            "at least",
        ),
        target(
            f"under {TARGET_HOT_BYTES} bytes sent per hot call, {kb} KB tool (bytes written "
            "to ego's pipe)",
            hot.get("socket_bytes"),
            TARGET_HOT_BYTES,
            "under",
        ),
        target(
            f"the Site layer's Python per hot call under {TARGET_SITE_LAYER_US:g} us, small "
            "tool (run_browser_tool on a stub tab, median round)",
            site_layer,
            TARGET_SITE_LAYER_US,
            "under",
        ),
        target(
            f"in flight at least {TARGET_INFLIGHT_OVER_RAW:g} of the raw loop's throughput "
            "(ego-hot/raw calls/s, per-round median)",
            inflight("raw"),
            TARGET_INFLIGHT_OVER_RAW,
            "at least",
        ),
        target(
            f"in flight at least {TARGET_INFLIGHT_OVER_PW:g}x Playwright's throughput "
            "(ego-hot/playwright calls/s, per-round median)",
            inflight("playwright"),
            TARGET_INFLIGHT_OVER_PW,
            "at least",
        ),
    ]


def _fmt_ratio(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}x"


def report(results: dict[str, Any]) -> str:
    """The whole report as text: the environment, then every section that ran, then targets."""
    env, config = results["environment"], results["config"]
    tools = config["tools"]
    label = {
        "small": f"small ({tools['small']['source_bytes']:,} B)",
        "padded": f"{config['tool_kb']} KB ({tools['padded']['source_bytes']:,} B, "
        f"{config['padding']})",
    }
    lines = [
        f"{env['chrome']} ({env['chrome_binary']}), Python {env['python']}, {env['cpus']} CPUs",
        f"ego {env['ego']}, playwright {env['playwright']}, websockets {env['websockets']}, "
        f"orjson {env['orjson']}",
        f"page {config['page']}, tool async (args) => args.n + 1, 1-min load average "
        f"{env['loadavg_1m_before_after'][0]:.1f} before, "
        f"{env['loadavg_1m_before_after'][1]:.1f} after",
    ]
    if "latency" in results:
        lines += ["", *_section_one(results, label)]
        lines += ["", *_tools_bytes.report_lines(results, label)]
    if "breakdown" in results:
        short = {"small": "small", "padded": f"{config['tool_kb']} KB"}
        lines += ["", *_tools_breakdown.report_lines(results, short)]
    if "inflight" in results:
        lines += ["", *_inflight.report_lines(results["inflight"])]
    if "pipe" in results:
        lines += ["", *_pipe_pair.report_lines(results["pipe"])]
    lines += ["", "Targets"]
    for item in results["targets"]:
        value = item["value"]
        shown = (
            "n/a"
            if value is None
            else f"{value:,} bytes"
            if isinstance(value, int)
            else f"{value:.1f} us"
            if item["name"].startswith("the Site layer")
            else f"{value:.2f}x"
        )
        lines.append(f"   {item['result']:<5} {item['name']}: {shown}")
    return "\n".join(lines)


def _section_one(results: dict[str, Any], label: dict[str, str]) -> list[str]:
    config = results["config"]
    lines = [
        f"1. Hot call latency: {config['calls']} calls per tool and contender after "
        f"{config['warmup']} warm-up, {config['rounds']} rounds, contenders taking turns call "
        "by call",
        "   (py cpu = CPU time this Python process spent per call, median)",
        "   (rounds = median of the per-round medians, and the fastest - slowest round)",
        f"   {'tool':<28}{'contender':<12}{'median us':>10}{'p99 us':>10}{'mean us':>10}"
        f"{'min us':>10}{'py cpu us':>10}   {'rounds us':<20}",
    ]
    for kind, stats in results["latency"].items():
        for index, (name, figures) in enumerate(stats.items()):
            tool = label[kind] if index == 0 else ""
            lines.append(
                f"   {tool:<28}{name:<12}{figures['median_us']:>10.0f}{figures['p99_us']:>10.0f}"
                f"{figures['mean_us']:>10.0f}{figures['min_us']:>10.0f}"
                f"{figures['python_cpu_median_us']:>10.0f}   {figures['round_median_us']:.0f} "
                f"({figures['round_min_us']:.0f} - {figures['round_max_us']:.0f})"
            )
    for kind, ratio in results["ratios"].items():
        lines.append(
            f"   {label[kind]}: ego-hot/raw median {_fmt_ratio(ratio['ego_over_raw_median'])}, "
            f"p99 {_fmt_ratio(ratio['ego_over_raw_p99'])}; playwright/ego-hot median "
            f"{_fmt_ratio(ratio['playwright_over_ego_median'])}, "
            f"p99 {_fmt_ratio(ratio['playwright_over_ego_p99'])}"
        )
        if "ego-hot_ws_over_pipe_median" in ratio:
            lines.append(
                f"   {label[kind]}: websocket/pipe median, ego-hot "
                f"{_fmt_ratio(ratio['ego-hot_ws_over_pipe_median'])}, ego-eval "
                f"{_fmt_ratio(ratio.get('ego-eval_ws_over_pipe_median'))} (above 1: the pipe "
                "is faster)"
            )
    lines.append(
        "   ego calls that were not cached during the timing: "
        f"{results['ego_hot_calls_not_cached']}"
    )
    return lines
