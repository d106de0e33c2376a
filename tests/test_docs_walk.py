"""Every guide's samples, run in order in one workspace, as a person following them would.

README.md first, then each page under docs/ in the order the README links them. Each fenced
``sh`` block runs line by line through the real command line (bash, with ``ego`` the one of
this checkout), each ``python`` block as a script: a whole script (``asyncio.run``) with
Python, an excerpt with ``ego script`` (``browser``, ``tab`` and ``site`` ready, top-level
``await``). They share one home folder (``~``), one working folder (the checkout's files
linked in, what the samples write kept apart), one state folder (the browser ``ego launch``
keeps) and the background jobs a line starts (``ego demo --serve &``), so a sample that
needs what an earlier one left, or an option renamed since, fails here.

The test picks the ports: the demo shop's 8765 is replaced by a free port in every sample
(``ego demo --serve`` is given ``--port``), and ``$EGO_START_URL`` says where the shop is,
as ``ego demo --serve --port N`` tells a person to. The machine has no display
(``$DISPLAY`` and ``$WAYLAND_DISPLAY`` unset), as in CI. A line whose comment names an error
(``# SKILL_BROKEN: ...``, ``# NeedsLoginError``) must fail with it; every other line must
succeed.

An HTML comment on the line before a block tells the walk what a page cannot say in a
sample (``<!-- walk: WORD ... -->``):

- ``skip REASON``: the block cannot run here (a remote fleet, the network, installing);
- ``set-up REASON``: what comes before a line's ``&&`` sets up the machine: the rest runs;
- ``excerpt FILE``: the block is part of FILE (checked line by line; FILE runs whole in its
  own test);
- ``file PATH``: the block is a file the person saves as PATH;
- ``no-window``: this machine has no display: ``--headed`` is left out;
- ``person STEP...``: while the block's ``ego record --session`` line records, the person
  works in its tab: each STEP a path to open, or ``click:SELECTOR``; then Ctrl+C.

The walk prints what it skipped and why; the list is held short below.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import ego
from tests.helpers.commands import ego_env, free_port
from tests.helpers.paths import ROOT

pytestmark = pytest.mark.chrome

#: The pages in the order a person reads them: the README, then the guides it links.
ORDER = (
    "README.md",
    "docs/install.md",
    "docs/architecture.md",
    "docs/learnings.md",
    "docs/cache-and-errors.md",
    "docs/skills.md",
    "docs/mcp.md",
    "docs/learning-loop.md",
    "docs/replay.md",
    "docs/fleet.md",
    "docs/tracing.md",
)

#: The blocks the walk does not run, by page, each with its reason in the page: kept short.
SKIPPED = {
    "README.md": 1,  # the test suite, which holds this walk
    "docs/install.md": 1,  # a wheel installed into a new venv from the network
    "docs/mcp.md": 1,  # ego mcp --http: a server for agents (tests/test_mcp_http.py)
    "docs/learnings.md": 1,  # publishing a pack and installing it into this Python
    "docs/fleet.md": 2,  # a remote fleet, and browserless installed from npm
}

#: What of the checkout the samples read (relative paths in them resolve to it).
LINKED = ("learnings", "skills", "agent_scripts", "docs", "README.md")

# A fenced block, also one indented in a list item (its indent taken off its lines).
FENCE = re.compile(r"^( *)```([^\n]*)\n(.*?)^\1```", re.MULTILINE | re.DOTALL)
DIRECTIVE = re.compile(r"<!--\s*walk:\s*([a-z-]+)\s*(.*?)\s*-->")
# A comment that names an error the line must fail with.
EXPECTED_ERROR = re.compile(r"#\s*(NEEDS_LOGIN|SKILL_BROKEN|[A-Z][A-Za-z]+Error)\b")
DEMO_PORT = "8765"
#: Seconds one line or script may take before the walk calls it hung.
STEP_SECONDS = 150.0


@dataclass
class Block:
    """One fenced block of a page."""

    page: str
    line: int
    language: str
    text: str
    said: dict[str, str] = field(default_factory=dict)

    @property
    def directive(self) -> str:
        """The one thing said about the block that decides how it is taken (or "")."""
        return next(iter(self.said), "")

    @property
    def argument(self) -> str:
        return self.said.get(self.directive, "")

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def blocks(page: str) -> list[Block]:
    """The fenced blocks of ``page``, each with the walk directive just before it."""
    text = (ROOT / page).read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        # The walk's comments on the lines just above the block.
        said: dict[str, str] = {}
        for above in reversed(text[: match.start()].rstrip().splitlines()):
            directive = DIRECTIVE.fullmatch(above.strip())
            if directive is None:
                break
            said[directive.group(1)] = directive.group(2)
        indent = len(match.group(1))
        body = "".join(line[indent:] for line in match.group(3).splitlines(keepends=True))
        line = text[: match.start()].count("\n") + 1
        found.append(Block(page, line, match.group(2).strip(), body, said))
    return found


@dataclass
class Walk:
    """The person's terminal: their home, working folder, environment and background jobs."""

    root: Path
    env: dict[str, str]
    port: int
    jobs: dict[int, asyncio.subprocess.Process] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    #: What reads the rest of each background job's output.
    drains: list[asyncio.Future[bytes]] = field(default_factory=list)
    #: How long each step took (seconds, where), for a report of the slowest.
    took: list[tuple[float, str]] = field(default_factory=list)

    @property
    def cwd(self) -> Path:
        return self.root / "work"

    def substitute(self, text: str) -> str:
        return text.replace(DEMO_PORT, str(self.port))

    def expand(self, text: str) -> str:
        home = self.env["HOME"]
        text = re.sub(r"(?<![\w/])~(?=/|\b|$)", home, text)
        return re.sub(r"\$(\w+)", lambda m: self.env.get(m.group(1), ""), text)

    # -- shell --------------------------------------------------------------------------

    async def shell_block(self, block: Block) -> None:
        joined = re.sub(r"\\\n\s*", " ", self.substitute(block.text))
        for number, raw in enumerate(joined.splitlines()):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            where = f"{block.where}+{number}: {line}"
            await self.shell_line(line, where, block)

    async def shell_line(self, line: str, where: str, block: Block) -> None:
        command, _, comment = line.partition(" # ")
        command = command.strip()
        if "set-up" in block.said and "&&" in command:
            command = command.split("&&", 1)[1].strip()
        if "no-window" in block.said:
            command = re.sub(r"\s--headed\b", "", command)
        background = command.endswith("&") and not command.endswith("&&")
        if background:
            command = command[:-1].strip()
            assert "&&" not in command, (
                f"{where}: bash runs `a && b &` as one background job, so a `kill %N` or `cd` "
                "in it does not act on this terminal; put each on a line of its own"
            )
        if re.match(r"^(ego|python -m ego\.demo) demo --serve\b|^ego demo --serve\b", command):
            command = _with_port(command, self.port)
        if "person" in block.said and " record --session " in f" {command} ":
            await self.recorded_session(command, block.said["person"], where)
            return
        for part in [p.strip() for p in command.split("&&")] if not background else [command]:
            if part.startswith("export "):
                name, _, value = part[len("export ") :].partition("=")
                self.env[name.strip()] = self.expand(value.strip().strip("\"'"))
                continue
            killed = re.fullmatch(r"kill %(\d+)", part)
            if killed:
                await self.end_job(int(killed.group(1)), where)
                continue
            if background:
                await self.start_job(part, where)
                continue
            await self.run(part, where, EXPECTED_ERROR.search(f"# {comment}") if comment else None)

    async def run(self, command: str, where: str, expected: re.Match[str] | None) -> None:
        started = time.monotonic()
        process = await asyncio.create_subprocess_exec(
            "bash", "-c", command, env=self.env, cwd=self.cwd,
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, start_new_session=True,
        )  # fmt: skip
        out, err = await _communicate(process, where)
        self.took.append((time.monotonic() - started, where))
        said = (
            f"{where}\nexit {process.returncode}\n--- stdout\n{out[-3000:]}\n"
            f"--- stderr\n{err[-3000:]}"
        )
        if expected is None:
            assert process.returncode == 0, said
        else:
            assert process.returncode != 0, f"expected {expected.group(1)}: {said}"
            assert expected.group(1) in err, f"expected {expected.group(1)}: {said}"

    async def start_job(self, command: str, where: str) -> None:
        number = max(self.jobs, default=0) + 1
        process = await asyncio.create_subprocess_exec(
            "bash", "-c", f"exec {command}", env=self.env, cwd=self.cwd,
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        self.jobs[number] = process
        assert process.stdout is not None
        # A person waits for the job's first line ("demo shop at ...") before going on.
        try:
            first = await asyncio.wait_for(process.stdout.readline(), STEP_SECONDS)
        except TimeoutError:
            raise AssertionError(f"{where}: said nothing within {STEP_SECONDS:g} s") from None
        said = first.decode(errors="replace")
        assert said, f"{where}: ended at once"
        assert '"error"' not in said, f"{where}: {said}"
        assert not said.startswith("ego: "), f"{where}: {said}"
        # The rest of what it says is read as it comes, so that it never waits on the pipe.
        self.drains.append(asyncio.ensure_future(process.stdout.read()))

    async def end_job(self, number: int, where: str) -> None:
        assert number in self.jobs, f"{where}: there is no job %{number} (jobs: {self.jobs})"
        process = self.jobs.pop(number)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), 20)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            await process.wait()

    async def recorded_session(self, command: str, steps: str, where: str) -> None:
        """``ego record --session ...`` while the person works in its tab, then Ctrl+C."""
        process = await asyncio.create_subprocess_exec(
            "bash", "-c", f"exec {command}", env=self.env, cwd=self.cwd,
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, start_new_session=True,
        )  # fmt: skip
        assert process.stderr is not None
        seen: list[str] = []
        started: dict[str, Any] = {}
        while "tab" not in started:
            raw = await asyncio.wait_for(process.stderr.readline(), STEP_SECONDS)
            assert raw, f"{where}: ended before it said which tab it records: {seen}"
            seen.append(raw.decode())
            with contextlib.suppress(ValueError):
                started = json.loads(raw)
        shop = f"http://shop.localhost:{self.port}"
        async with ego.connect(started["endpoint"]) as person:
            tab = next(t for t in await person.tabs() if t.target_id == started["tab"])
            for step in steps.split():
                if step.startswith("click:"):
                    await tab.click(step[len("click:") :])
                    await tab.wait_for(network_idle=True, timeout=30)
                else:
                    await tab.navigate(shop + step)
                    await tab.wait_for(network_idle=True, timeout=30)
        os.killpg(process.pid, signal.SIGINT)
        out, err = await _communicate(process, where)
        assert process.returncode == 0, f"{where}\n{out}\n{err}"

    # -- python -------------------------------------------------------------------------

    async def python_block(self, block: Block) -> None:
        text = self.substitute(block.text)
        script = self.root / f"sample-{block.page.replace('/', '-')}-{block.line}.py"
        script.write_text(text)
        compile(text, str(script), "exec", flags=0x2000)  # PyCF_ALLOW_TOP_LEVEL_AWAIT
        if _defines_only(text):
            return  # the code of a tool or a helper: it parses, and nothing runs
        started = time.monotonic()
        if "asyncio.run(" in text:
            argv = [sys.executable, str(script)]
        else:
            argv = [sys.executable, "-m", "ego", "script", str(script)]
        process = await asyncio.create_subprocess_exec(
            *argv, env=self.env, cwd=self.cwd, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )  # fmt: skip
        out, err = await _communicate(process, block.where)
        self.took.append((time.monotonic() - started, block.where))
        assert process.returncode == 0, (
            f"{block.where} ({' '.join(argv[1:])})\n--- stdout\n{out[-3000:]}\n--- stderr\n"
            f"{err[-3000:]}"
        )

    async def close(self) -> None:
        """Leave nothing running: the kept browser, then every background job."""
        with contextlib.suppress(AssertionError):
            await self.run("ego close", "cleanup", None)
        for number in list(self.jobs):
            await self.end_job(number, "cleanup")
        await asyncio.gather(*self.drains, return_exceptions=True)


def _with_port(command: str, port: int) -> str:
    if "--port" in command.split():
        return command
    return command + f" --port {port}"


def _defines_only(text: str) -> bool:
    import ast

    body = ast.parse(text).body
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Import, ast.ImportFrom, ast.ClassDef)
    return all(isinstance(node, kinds) for node in body)


async def _communicate(process: asyncio.subprocess.Process, where: str) -> tuple[str, str]:
    try:
        out, err = await asyncio.wait_for(process.communicate(), STEP_SECONDS)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        out, err = await process.communicate()
        raise AssertionError(
            f"{where}: still running after {STEP_SECONDS:g} s\n{out.decode()}\n{err.decode()}"
        ) from None
    return out.decode(errors="replace"), err.decode(errors="replace")


@pytest.fixture(scope="module")
async def walk(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Walk]:
    root = tmp_path_factory.mktemp("walk")
    home = root / "home"
    home.mkdir()
    work = root / "work"
    work.mkdir()
    # The checkout as the person's working folder: the files samples read linked in, what
    # they write kept apart; of .venv only the commands (nothing may install into it).
    for name in LINKED:
        (work / name).symlink_to(ROOT / name)
    (work / ".venv" / "bin").mkdir(parents=True)
    for name in ("ego", "python"):
        (work / ".venv" / "bin" / name).symlink_to(Path(sys.executable).parent / name)
    port = free_port()
    env = ego_env(root / "profiles", HOME=str(home))
    # A machine with no display, as in CI, wherever the walk runs: a window is the page's to
    # leave out (``no-window``), never this machine's to give.
    for name in ("DISPLAY", "WAYLAND_DISPLAY"):
        env.pop(name, None)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    shop = f"http://shop.localhost:{port}/"
    env["EGO_START_URL"] = f"demo-shop={shop} shop.localhost={shop}"
    state = Walk(root, env, port)
    try:
        yield state
    finally:
        await state.close()
        slowest = sorted(state.took, reverse=True)[:12]
        print("\nthe walk's slowest steps:", *(f"{t:5.1f} s  {w}" for t, w in slowest), sep="\n")


def test_the_walk_reads_every_page() -> None:
    pages = {"README.md", *(f"docs/{path.name}" for path in (ROOT / "docs").glob("*.md"))}
    assert set(ORDER) == pages, "a page the walk does not read, or reads but is gone"


@pytest.mark.parametrize("page", ORDER)
async def test_the_samples_of_each_page_run_in_order(walk: Walk, page: str) -> None:
    if walk.failed:
        pytest.skip(f"an earlier page failed ({walk.failed[0]}): this one builds on it")
    skipped = []
    try:
        for block in blocks(page):
            if block.directive == "skip":
                skipped.append(f"{block.where}: {block.argument}")
                continue
            if block.directive == "excerpt":
                source = (ROOT / block.argument).read_text()
                missing = [
                    line
                    for line in block.text.splitlines()
                    if line.strip() and line.split("  #")[0].strip() not in source
                ]
                assert missing == [], f"{block.where}: not in {block.argument}: {missing}"
                continue
            if block.directive == "file":
                target = Path(walk.expand(block.argument))
                target = target if target.is_absolute() else walk.cwd / target
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(walk.substitute(block.text))
                continue
            if block.language in ("sh", "bash", "console"):
                await walk.shell_block(block)
            elif block.language == "python":
                await walk.python_block(block)
    except BaseException:
        walk.failed.append(page)
        raise
    walk.skipped.extend(skipped)
    print(f"{page}: skipped {len(skipped)}", *skipped, sep="\n  ")
    assert len(skipped) == SKIPPED.get(page, 0), skipped
