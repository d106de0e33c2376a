"""Running the fuzz's cases through ego's public API and classifying what each one did.

:func:`run_cases` runs :func:`.fuzz_cases.generate`'s cases in order with a Chrome of its
own (``ego.launch(headless=True)``, relaunched when a case ends the connection, closed at the
end) on a temporary learnings root and a page on a local server, through ``browser.site``
(``sites``, ``learn_context``, ``run_browser_tool``), :class:`ego.Learnings` and
:meth:`ego.Tab.evaluate`. Each case's outcome is ``ok`` (a value) or ``ego-error`` (an
:class:`ego.EgoError`), or ``crash`` (any other exception) or ``hang`` (over the per-case
bound, whether the event loop was frozen or not); on top of that it may be flagged:

- ``unexpected``: the case's own calls (the tool run, or the evaluate) did not end as the
  case expects (:attr:`.fuzz_cases.Case.expect`: a value, or that ego error), or listing
  the sites or ``learn_context`` failed (they report a broken site, never raise for it);
- ``connection-lost``: ``evaluate("1")`` fails on another tab and on a fresh one afterwards;
- ``collateral``: a known-good site in the same root stopped listing, matching or running, or
  another tab stopped answering (one bad input took down more than itself);
- ``double-run``: a tool ran more than once for one call (a page global counts runs), or a
  call that returned a value never ran its tool (exactly once is the rule);
- ``fetch``: a ``$ref`` made the harness fetch a URL (a local server counts the hits).

tests/test_fuzz.py asserts that none of these happen; ``python -m tests.helpers.fuzz_run`` and
bench/fuzz_report.py print the counts.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import ego
from tests.helpers.fuzz_cases import (
    ARGS_TOOLS,
    COUNTING_TOOL,
    FAMILIES,
    PAGE_HTML,
    READ_COUNT_JS,
    Case,
    Link,
    base_manifest,
    dump,
    generate,
    short,
)
from tests.helpers.page_server import serve, stop_serving

__all__ = [
    "BAD",
    "CATEGORIES",
    "LISTING_CALLS",
    "MAIN_CALLS",
    "CountingServer",
    "Outcome",
    "main",
    "report",
    "run_cases",
    "summarize",
]

#: Outcomes (exactly one per case), then flags (any number per case).
CATEGORIES = (
    "ok",
    "ego-error",
    "crash",
    "hang",
    "unexpected",
    "connection-lost",
    "collateral",
    "double-run",
    "fetch",
)
#: The categories the test requires to be zero.
BAD = ("crash", "hang", "unexpected", "connection-lost", "collateral", "double-run", "fetch")
#: The calls whose ends a case's ``expect`` names; the listing calls must always succeed.
MAIN_CALLS = ("run", "evaluate")
LISTING_CALLS = ("sites", "learn_context")


# --- the page and ref server ----------------------------------------------------------------


class CountingServer:
    """A local HTTP server: ``/ref/...`` answers a JSON Schema and counts the hit; anything
    else answers the fuzz page. ``hits`` lists the ``/ref/`` paths fetched."""

    def __init__(self) -> None:
        self.hits: list[str] = []
        hits, lock = self.hits, threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                if self.path.startswith("/ref/"):
                    with lock:
                        hits.append(self.path)
                    body, kind = b'{"type": "string"}', "application/json"
                    status = 404 if "404" in self.path else 200
                else:
                    body, kind, status = PAGE_HTML.encode(), "text/html; charset=utf-8", 200
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = serve(Handler)
        self.origin = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        stop_serving(self.httpd)


# --- running --------------------------------------------------------------------------------


@dataclass
class Outcome:
    """What one case did: ``outcome`` (ok, ego-error, crash, hang) and the flags it raised."""

    case: Case
    outcome: str = "ok"
    flags: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: With the checks after the case (and a relaunch, if one was needed).
    total_seconds: float = 0.0
    #: Each call made: what it was and how it ended (``"ok"`` or the exception's type name).
    calls: list[tuple[str, str]] = field(default_factory=list)

    @property
    def bad(self) -> bool:
        return self.outcome in BAD or bool(self.flags & set(BAD))

    @property
    def ended(self) -> str:
        """How the case's own calls ended, as :attr:`Case.expect` says it: ``"ok"``, an error
        type, or several joined by ``/`` when they did not all end the same way."""
        return "/".join(sorted({end for what, end in self.calls if what in MAIN_CALLS})) or "ok"

    def check_expectation(self) -> None:
        """Flag ``unexpected`` when the calls did not end as the case expects."""
        failed_listing = [
            f"{what}: {end}" for what, end in self.calls if what in LISTING_CALLS and end != "ok"
        ]
        if self.ended != self.case.expect or failed_listing:
            self.flags.add("unexpected")
            self.notes.insert(
                0,
                f"expected {self.case.expect}, ended {self.ended}"
                + (f"; listing failed: {', '.join(failed_listing)}" if failed_listing else ""),
            )


def summarize(outcomes: Iterable[Outcome]) -> tuple[Counter[str], dict[str, Counter[str]]]:
    """Counts per category overall and per ``family/kind``."""
    total: Counter[str] = Counter()
    per_kind: dict[str, Counter[str]] = {}
    for result in outcomes:
        kind = per_kind.setdefault(result.case.label, Counter())
        for name in (result.outcome, *result.flags):
            total[name] += 1
            kind[name] += 1
        kind["cases"] += 1
        total["cases"] += 1
    return total, per_kind


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {short(str(exc), 160)}"


class _Rig:
    """The fuzz's own Chrome, a tab cases run in and another tab that must stay untouched."""

    def __init__(self, learnings: ego.Learnings, page_url: str) -> None:
        self.learnings = learnings
        self.page_url = page_url
        self.browser: ego.Browser | None = None
        self.work: ego.Tab | None = None
        self.probe: ego.Tab | None = None
        self.launches = 0

    async def start(self) -> None:
        self.browser = await ego.launch(headless=True, learnings=self.learnings)
        self.launches += 1
        self.work = await self.browser.new_tab(self.page_url)
        self.probe = await self.browser.new_tab(self.page_url)

    async def close(self, *, lost: bool = False) -> None:
        """Close the browser; ``lost``: its connection is gone, so end Chrome at once
        rather than give it the polite wait for quitting by itself."""
        browser, self.browser, self.work, self.probe = self.browser, None, None, None
        if browser is None:
            return
        if lost and browser.process is not None:
            with contextlib.suppress(Exception):
                await browser.process.terminate()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(browser.close(), 30)

    async def restart(self) -> None:
        await self.close(lost=True)
        await self.start()

    @property
    def site(self) -> ego.Site:
        assert self.browser is not None
        return self.browser.site


async def _bounded(call: Awaitable[Any], seconds: float = 5.0) -> Any:
    return await asyncio.wait_for(call, seconds)


def _write_site(folder: Path, spec: dict[str, Any], outside: Path, root: Path) -> None:
    def target(text: str) -> str:
        return text.replace("@outside", str(outside)).replace("@root", str(root))

    if "folder_link" in spec:
        folder.symlink_to(target(spec["folder_link"]), target_is_directory=True)
        return
    folder.mkdir()
    files = dict(spec.get("files", {}))
    text = spec.get("manifest_text")
    if text is not None and "manifest.json" not in files:
        files["manifest.json"] = text
    for rel, content in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Link):
            path.symlink_to(target(content.target))
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", errors="surrogatepass")


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def _setup(case: Case, root: Path, outside: Path, origin: str) -> list[Path]:
    """Write the case's site folder (and what its links lead to); returns what to remove."""
    spec = case.spec
    if "folder" in spec:
        folder = root / spec["folder"]
        text = spec.get("manifest_text")
        if isinstance(text, str):
            spec = {**spec, "manifest_text": text.replace("@REF@", origin)}
    elif case.family in ("source", "result"):
        folder = root / f"c{case.index:04d}"
        spec = {
            "manifest_text": dump(base_manifest(folder.name)),
            "files": {"browser-tools/t.js": spec["source"]},
        }
    else:
        return []
    written = [folder]
    if spec.get("outside_site"):
        twin = outside / folder.name
        _write_site(twin, _valid_site(folder.name), outside, root)
        written.append(twin)
    _write_site(folder, spec, outside, root)
    return written


def _valid_site(site_id: str, tool: str = "t", source: str = COUNTING_TOOL) -> dict[str, Any]:
    return {
        "manifest_text": dump(base_manifest(site_id)),
        "files": {f"browser-tools/{tool}.js": source},
    }


def _prepare_root(root: Path, outside: Path) -> None:
    good = {
        **base_manifest("good"),
        "browserTools": {
            "ping": {
                "path": "browser-tools/ping.js",
                "args": {"n": {"type": "integer", "required": True}},
            }
        },
    }
    fzargs = {
        **base_manifest("fzargs"),
        "browserTools": {
            name: {"path": "browser-tools/echo.js", "args": args}
            for name, (args, _) in ARGS_TOOLS.items()
        },
    }
    for site_id, manifest, tool, source in (
        ("good", good, "ping", "async ({n}) => ({pong: n})\n"),
        ("fzargs", fzargs, "echo", COUNTING_TOOL),
    ):
        _write_site(
            root / site_id,
            {"manifest_text": dump(manifest), "files": {f"browser-tools/{tool}.js": source}},
            outside,
            root,
        )
    (outside / "secret.md").write_text("# secret\n", encoding="utf-8")


async def _ops(case: Case, rig: _Rig, result: Outcome) -> None:
    """Run the case's calls; any exception is noted by kind and the case goes on."""
    site, learnings, spec = rig.site, rig.learnings, case.spec
    assert rig.work is not None
    work = rig.work

    async def attempt(what: str, call: Callable[[], Any], counted: bool = False) -> None:
        try:
            value = call()
            if asyncio.iscoroutine(value):
                value = await value
            failed = False
            result.calls.append((what, "ok"))
        except asyncio.CancelledError:
            raise
        except ego.EgoError as exc:
            failed = True
            result.calls.append((what, type(exc).__name__))
            if result.outcome == "ok":
                result.outcome = "ego-error"
            result.notes.append(f"{what}: {_describe(exc)}")
        except Exception as exc:
            failed = True
            result.calls.append((what, type(exc).__name__))
            result.outcome = "crash"
            result.notes.append(f"{what}: CRASH {_describe(exc)}")
        if counted:
            try:
                runs = await _bounded(work.evaluate(READ_COUNT_JS))
            except Exception:
                return
            if runs > 1 or (not failed and runs != 1 and spec.get("counts", True)):
                result.flags.add("double-run")
                result.notes.append(f"{what}: the tool ran {runs} times for one call")

    if case.family in ("manifest", "name") and "folder" in spec:
        folder = spec["folder"]
        await attempt("sites", site.sites)
        await attempt("learn_context", lambda: site.learn_context(rig.page_url))
        await attempt(
            "run",
            lambda: site.run_browser_tool(
                folder,
                spec["tool"],
                spec["args"],
                tab=work,
                check_returns=spec.get("check_returns", False),
            ),
            counted=True,
        )
    elif case.family == "name":
        site_id, tool = spec["site_id"], spec["tool"]
        await attempt("Learnings.site", lambda: learnings.site(site_id))
        await attempt("Learnings.tool", lambda: learnings.tool(site_id, tool))
        await attempt("Learnings.notes", lambda: learnings.notes(site_id))
        await attempt("run", lambda: site.run_browser_tool(site_id, tool, {}, tab=work), True)
    elif case.family == "args":
        await attempt(
            "run",
            lambda: site.run_browser_tool("fzargs", spec["tool"], spec["args"], tab=work),
            True,
        )
    elif case.family == "result" and spec["via"] == "evaluate":
        expression = f"({spec['source'].strip()})({{}})"
        await attempt("evaluate", lambda: work.evaluate(expression), counted=True)
    else:
        for _ in range(spec["calls"]):
            await attempt(
                "run",
                lambda: site.run_browser_tool(
                    f"c{case.index:04d}", "t", {}, tab=work, cache=spec.get("cache", True)
                ),
                counted=True,
            )


async def _alive(tab: ego.Tab | None) -> bool:
    if tab is None:
        return False
    try:
        return await _bounded(tab.evaluate("1"), 5.0) == 1  # type: ignore[no-any-return]
    except Exception:
        return False


async def _aftermath(case: Case, rig: _Rig, result: Outcome) -> None:
    """Flag a lost connection or collateral damage, and get the rig ready for the next case."""
    assert rig.browser is not None
    if not await _alive(rig.probe):
        fresh = None
        with contextlib.suppress(Exception):
            fresh = await _bounded(rig.browser.new_tab(rig.page_url), 10.0)
        if fresh is None or not await _alive(fresh):
            result.flags.add("connection-lost")
            result.notes.append("evaluate('1') fails on a fresh tab: relaunching")
            await rig.restart()
            return
        result.flags.add("collateral")
        result.notes.append("another tab stopped answering")
        with contextlib.suppress(Exception):
            await _bounded(rig.probe.close())  # type: ignore[union-attr]
        rig.probe = fresh
    try:
        entries = {entry.site_id: entry for entry in rig.site.sites()}
        if "good" not in entries or not entries["good"].valid:
            raise AssertionError("good is not listed as valid")
        context = await rig.site.learn_context(rig.page_url)
        if not any(t.site_id == "good" and t.tool_name == "ping" for t in context.tools):
            raise AssertionError("good/ping is missing from learn_context")
        pong = await _bounded(
            rig.site.run_browser_tool("good", "ping", {"n": case.index}, tab=rig.probe)
        )
        if pong != {"pong": case.index}:
            raise AssertionError(f"good/ping answered {pong!r}")
    except Exception as exc:
        result.flags.add("collateral")
        result.notes.append(f"the good site broke: {_describe(exc)}")
    if not await _alive(rig.work):
        with contextlib.suppress(Exception):
            await _bounded(rig.work.close())  # type: ignore[union-attr]
        rig.work = await _bounded(rig.browser.new_tab(rig.page_url), 10.0)


async def run_cases(
    cases: Sequence[Case],
    *,
    root: Path,
    page_url: str,
    ref_server: CountingServer,
    bound: float = 5.0,
    on_case: Callable[[Outcome], None] | None = None,
) -> list[Outcome]:
    """Run ``cases`` in order on a Chrome of their own and classify each.

    Args:
        cases: from :func:`generate`.
        root: an empty folder for the learnings root (its sibling ``<root>-outside`` holds
            what symlinks point to).
        page_url: a page on 127.0.0.1 the tools run in.
        ref_server: counts fetches of the ``$ref`` URLs manifests name.
        bound: seconds a case may take before it counts as a hang.
        on_case: called with each outcome as it is known.
    """
    root.mkdir(parents=True, exist_ok=True)
    outside = root.with_name(root.name + "-outside")
    outside.mkdir(exist_ok=True)
    _prepare_root(root, outside)
    rig = _Rig(ego.Learnings(roots=[root]), page_url)
    outcomes = []
    try:
        await rig.start()
        for case in cases:
            result = Outcome(case)
            written = _setup(case, root, outside, ref_server.origin)
            hits = len(ref_server.hits)
            started = time.monotonic()
            try:
                await asyncio.wait_for(_ops(case, rig, result), bound)
            except TimeoutError:
                result.outcome = "hang"
                result.notes.append(f"still running after {bound:g} s")
            result.seconds = time.monotonic() - started
            if result.outcome != "hang":
                result.check_expectation()
            if result.seconds > bound and result.outcome != "hang":
                # The loop itself was frozen (synchronous work), so wait_for could not fire.
                result.notes.append(f"took {result.seconds:.1f} s (bound {bound:g} s)")
                result.outcome = "hang"
            if len(ref_server.hits) > hits:
                result.flags.add("fetch")
                result.notes.append(f"fetched {ref_server.hits[hits:]}")
            await _aftermath(case, rig, result)
            result.total_seconds = time.monotonic() - started
            for path in written:
                with contextlib.suppress(OSError):
                    _remove(path)
            outcomes.append(result)
            if on_case is not None:
                on_case(result)
    finally:
        await rig.close()
        shutil.rmtree(outside, ignore_errors=True)
    return outcomes


def report(outcomes: Sequence[Outcome], *, show: bool = True) -> str:
    """The counts as text: per category, then per kind; with ``show`` every bad case too."""
    total, per_kind = summarize(outcomes)
    lines = [
        f"{total['cases']} cases: " + ", ".join(f"{name} {total[name]}" for name in CATEGORIES)
    ]
    abbreviation = {
        "unexpected": "unexp",
        "connection-lost": "conn",
        "collateral": "coll",
        "double-run": "double",
        "ego-error": "ego-err",
    }
    header = f"{'kind':<26}{'cases':>6}" + "".join(
        f"{abbreviation.get(c, c):>8}" for c in CATEGORIES
    )
    lines += ["", header]
    for family in FAMILIES:
        for label in sorted(k for k in per_kind if k.startswith(family + "/")):
            counts = per_kind[label]
            lines.append(
                f"{label:<26}{counts['cases']:>6}" + "".join(f"{counts[c]:>8}" for c in CATEGORIES)
            )
    slowest = sorted(outcomes, key=lambda result: -result.total_seconds)[:5]
    lines += [
        "",
        "slowest: "
        + ", ".join(
            f"#{r.case.index} {r.case.label} {r.seconds:.2f}/{r.total_seconds:.2f} s"
            for r in slowest
        ),
    ]
    if show:
        bad = [result for result in outcomes if result.bad]
        if bad:
            lines += ["", "bad cases:"]
        for result in bad:
            marks = ", ".join([result.outcome, *sorted(result.flags)])
            lines.append(
                f"  #{result.case.index} {result.case.label} [{result.case.detail}]: {marks}"
            )
            lines += [f"      {note}" for note in result.notes[:4]]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the counts for ``--seed`` and ``--cases`` (see bench/fuzz_report.py)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--cases", type=int, default=400)
    parser.add_argument("--bound", type=float, default=5.0)
    parser.add_argument("--quiet", action="store_true", help="counts only, no list of bad cases")
    options = parser.parse_args(argv)
    print(f"ego from {os.path.dirname(ego.__file__)}; seed {options.seed}, {options.cases} cases")
    server = CountingServer()
    started = time.monotonic()
    try:
        with tempfile.TemporaryDirectory(prefix="ego-fuzz-") as temp:
            outcomes = asyncio.run(
                run_cases(
                    generate(options.seed, options.cases),
                    root=Path(temp) / "learnings",
                    page_url=server.origin + "/page",
                    ref_server=server,
                    bound=options.bound,
                )
            )
    finally:
        server.close()
    print(f"ran in {time.monotonic() - started:.1f} s")
    print(report(outcomes, show=not options.quiet))
    return 1 if any(result.bad for result in outcomes) else 0


if __name__ == "__main__":
    raise SystemExit(main())
