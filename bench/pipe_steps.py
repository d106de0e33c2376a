"""What each step of the hot call costs where section 5 of ``bench_tools.py`` measures it.

Section 5 times ego's hot tool call against a minimal raw pipe loop, taking turns call by
call with another Chrome, so every call starts with cold caches. A profile of warm calls
cannot say where ego's share goes there; this script runs section 5 once per variant, each
with one step of the Site layer stubbed out (in this process only, never in ego), and prints
the ratio each gave. The steps left out are not optional: a variant says what a step costs,
not that it could go.

Run from the project root (about 25 s per variant)::

    .venv/bin/python bench/pipe_steps.py
    .venv/bin/python bench/pipe_steps.py --variants full,evaluate --rounds 5

Variants:

* ``full``: ego's hot call as it is;
* ``evaluate``: ``Tab.evaluate`` of the same hot Call (the page and transport layers alone);
* ``send``: the tab session's ``Runtime.evaluate`` of the same hot Call with the parameters
  ``Tab.evaluate`` sends (the transport alone);
* ``raw-domains``: ego's hot call as it is, against a raw loop whose page has the domains
  enabled that ego's tab has (Page, Network, Runtime): what Chrome does for them;
* ``no-record``: the run is not recorded (``ego.learning.health`` front end unset);
* ``no-watch``: the watcher's poll is skipped (the generation is read without a look);
* ``no-args-check``: the args are embedded without the schema check;
* ``no-tab-check``: the given tab is taken as on the site without a look at its URL;
* ``none-of-four``: the four above together.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

VARIANTS = (
    "full",
    "evaluate",
    "send",
    "raw-domains",
    "no-record",
    "no-watch",
    "no-args-check",
    "no-tab-check",
    "none-of-four",
)

_RATIO = re.compile(
    r"ego-hot/raw-pipe time, per-round median ratio ([\d.]+)x \(([\d.]+) - ([\d.]+)\)"
)


def _stub(variant: str) -> None:
    """Stub out the step ``variant`` names, in this process."""
    sys.path.insert(0, str(HERE))
    four = variant == "none-of-four"
    if variant == "evaluate":
        import _tools_contenders

        async def bare(self: Any, kind: str, n: int | None = None) -> Any:
            return await self.tab.evaluate(self.hot_call(kind, self._n(n)), describe=False)

        _tools_contenders.Bench.ego_hot_bare = bare  # type: ignore[method-assign]
    if variant == "send":
        import _tools_contenders

        async def sent(self: Any, kind: str, n: int | None = None) -> Any:
            params = {
                "expression": self.hot_call(kind, self._n(n)),
                "returnByValue": True,
                "awaitPromise": True,
                "userGesture": False,
            }
            answer = await self.tab.session.send("Runtime.evaluate", params)
            return answer["result"].get("value")

        _tools_contenders.Bench.ego_hot_bare = sent  # type: ignore[method-assign]
    if variant == "raw-domains":
        import _tools_contenders

        prime = _tools_contenders.Bench.prime_raw_pipe

        async def prime_with_domains(self: Any) -> None:
            await prime(self)
            for domain in ("Page", "Network", "Runtime"):
                await self.raw_pipe.call(f"{domain}.enable", {}, session=True)

        _tools_contenders.Bench.prime_raw_pipe = prime_with_domains  # type: ignore[method-assign]
    if variant == "no-record" or four:
        from ego.learning.health.origin import FRONT_END

        FRONT_END.set(None)
    if variant == "no-watch" or four:
        from ego.learning.catalog import loading, sites, watch

        def generation() -> int:
            instance = watch._instance
            return -1 if instance is None else instance.generation

        sites.generation = generation  # type: ignore[assignment]
        loading.generation = generation  # type: ignore[assignment]
    if variant == "no-args-check" or four:
        from ego.learning.catalog.registry import Learnings
        from ego.protocol.literals import embed_json

        def checked_args(self: Any, site_id: str, spec: Any, args: Any) -> Any:
            return args, embed_json(args)

        Learnings.checked_args = checked_args  # type: ignore[method-assign]
    if variant == "no-tab-check" or four:
        import ego.site.running

        ego.site.running.url_on_site = lambda url, domains: True  # type: ignore[attr-defined]


def _run_one(variant: str, rounds: int) -> None:
    """In a child process: stub, then run section 5 of bench_tools.py."""
    _stub(variant)
    import bench_tools

    bench_tools.main(["--pipe-only", "--pipe-rounds", str(rounds)])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated")
    parser.add_argument("--rounds", type=int, default=9, help="rounds of section 5 each")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        _run_one(options.child, options.rounds)
        return 0
    variants = [name.strip() for name in options.variants.split(",") if name.strip()]
    unknown = [name for name in variants if name not in VARIANTS]
    if unknown:
        parser.error(f"unknown variants {unknown}; choose from {', '.join(VARIANTS)}")
    print("ego-hot/raw-pipe time (section 5 of bench_tools.py, per-round median), by variant:")
    for variant in variants:
        # A process per variant: a stub must not outlive its own run.
        done = subprocess.run(
            [sys.executable, __file__, "--child", variant, "--rounds", str(options.rounds)],
            capture_output=True,
            text=True,
            check=False,
        )
        found = _RATIO.search(done.stdout)
        if found is None:
            tail = (done.stdout + done.stderr)[-2000:]
            print(f"  {variant:14s} failed (exit {done.returncode}):\n{tail}")
            continue
        print(f"  {variant:14s} {found[1]}x (rounds {found[2]} - {found[3]})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
