"""Shared fixtures: one headless Chrome for the session, a fresh tab per test, a local server.

Tests that need a real Chrome are marked ``chrome`` (see :func:`pytest_collection_modifyitems`);
``pytest -m "not chrome"`` is the fast tier that needs none. A test without the mark gets a
stand-in that fails as its Chrome (:func:`_chrome_only_where_marked`), so a missing mark
shows as a failure, and a mark nothing needs is a test the fast tier misses. A process a
wider fixture started before the test (an ``ego mcp`` server shared by a module) keeps the
real Chrome, so a test without the mark that shares one fails when a Chrome of this run
starts during it (:func:`pytest_runtest_call`), in a full run too.

Every Chrome a test starts must be gone when the session ends: :func:`pytest_sessionfinish`
fails the run if a Chrome started during it is still alive.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Generator, Iterator
from pathlib import Path

import psutil
import pytest

import ego
from ego.protocol.chrome import CHROME_ENV
from ego.protocol.pipe import PipeWire
from ego.protocol.wire import Wire
from tests.helpers.browsers import fresh_tab
from tests.helpers.page_server import PageServer
from tests.helpers.paths import ROOT
from tests.helpers.processes import NO_CHROME_MESSAGE, RUN_ID, RUN_MARKER, ego_chromes

pytest_plugins = ["tests.hang_guard", "tests.wheel_fixture"]

os.environ[RUN_MARKER] = RUN_ID


@pytest.fixture(scope="session")
def server() -> Iterator[PageServer]:
    page_server = PageServer()
    yield page_server
    page_server.close()


@pytest.fixture(scope="session")
def huge_storage_state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A storage state file of 250 MB: 250,000 localStorage items of 1 kB on one origin, as a
    red team made one (written in pieces: the test process never holds it whole)."""
    path = tmp_path_factory.mktemp("huge-state") / "huge.json"
    item = b'{"name":"k%d","value":"' + b"v" * 1000 + b'"}'
    with path.open("wb") as out:
        out.write(b'{"cookies":[],"origins":[{"origin":"http://127.0.0.1:9","localStorage":[')
        for start in range(0, 250_000, 1000):
            out.write(b",".join(item % n for n in range(start, start + 1000)))
            out.write(b"," if start + 1000 < 250_000 else b"")
        out.write(b"]}]}")
    return path


@pytest.fixture(scope="session")
async def browser() -> AsyncIterator[ego.Browser]:
    """One headless Chrome shared by the whole session, launched as by default (over a pipe,
    no port: nothing else can attach to it); tests must not close it."""
    async with ego.launch() as shared:
        yield shared


@pytest.fixture
async def tab(browser: ego.Browser) -> AsyncIterator[ego.Tab]:
    """A fresh tab, closed after the test."""
    async with fresh_tab(browser) as fresh:
        yield fresh


@pytest.fixture(scope="session")
async def ported_browser() -> AsyncIterator[ego.Browser]:
    """A second shared Chrome, launched with a port (``port=0``) for tests that attach a
    second client (a Connection, ``ego.connect``, a command given --endpoint); started only
    when a test asks for it. Tests must not close it."""
    async with ego.launch(port=0) as shared:
        yield shared


@pytest.fixture
async def ported_tab(ported_browser: ego.Browser) -> AsyncIterator[ego.Tab]:
    """A fresh tab of :func:`ported_browser`, closed after the test."""
    async with fresh_tab(ported_browser) as fresh:
        yield fresh


@pytest.fixture(scope="session")
async def ws_browser(ported_browser: ego.Browser) -> AsyncIterator[ego.Browser]:
    """:func:`ported_browser` attached a second time, over its websocket: what a test that
    runs over both transports uses for the websocket."""
    assert ported_browser.endpoint is not None
    async with ego.connect(ported_browser.endpoint) as attached:
        yield attached


@pytest.fixture(params=["pipe", "websocket"])
def either_browser(request: pytest.FixtureRequest) -> ego.Browser:
    """The session's browser over its pipe, or one attached over a websocket: for a test that
    runs over both transports. A plain fixture: an async one asking for a fixture not set up
    yet fails inside the running loop (as this one did when a module ran alone). Its own name,
    never ``browser``: a parametrized fixture that overrides a session one makes pytest start
    the session's Chrome again for every test."""
    if request.param == "pipe":
        owner: ego.Browser = request.getfixturevalue("browser")
        assert isinstance(owner.connection._wire, PipeWire)
    else:
        owner = request.getfixturevalue("ws_browser")
        assert isinstance(owner.connection._wire, Wire)
    return owner


@pytest.fixture
async def either_tab(either_browser: ego.Browser) -> AsyncIterator[ego.Tab]:
    """A fresh tab of :func:`either_browser`, closed after the test."""
    async with fresh_tab(either_browser) as fresh:
        yield fresh


#: Fixtures that give a test a real Chrome: a test using one (directly or through another
#: fixture) is marked ``chrome``. Besides this module's, ``own_chrome`` (test_browser.py) and
#: ``named`` (test_learning_run.py) launch a Chrome of their module's own.
CHROME_FIXTURES = frozenset(
    {
        "browser",
        "tab",
        "either_browser",
        "either_tab",
        "ported_browser",
        "ported_tab",
        "ws_browser",
        "own_chrome",
        "named",
    }
)

#: Tests that launch Chrome themselves in modules whose other tests need none (a module
#: whose tests mostly launch Chrome says ``pytestmark = pytest.mark.chrome`` instead).
CHROME_TESTS = frozenset(
    {
        ("test_browser.py", "test_chrome_killed_mid_call_fails_it_as_the_pipe_closes"),
        ("test_transport.py", "test_chrome_dying_fails_every_pending_call_and_later_sends"),
        ("test_save_cli.py", "test_save_tool_command_checks_saves_and_tries"),
        ("test_save_cli.py", "test_save_tool_through_a_real_subprocess"),
    }
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark ``chrome`` every test that uses a real-browser fixture or is in CHROME_TESTS.

    Modules whose tests launch Chrome themselves (``ego.launch``, a pool, a CLI subprocess)
    say so with ``pytestmark = pytest.mark.chrome``; ``pytest -m "not chrome"`` then runs
    only the tests that need no browser.
    """
    for item in items:
        name = getattr(item, "originalname", item.name)
        if (item.path.name, name) in CHROME_TESTS or CHROME_FIXTURES.intersection(
            getattr(item, "fixturenames", ())
        ):
            item.add_marker(pytest.mark.chrome)


_STAND_IN = pytest.StashKey[Path]()


def _no_chrome_stand_in(config: pytest.Config) -> Path:
    path = config.stash.get(_STAND_IN, None)
    if path is None:
        path = Path(tempfile.mkdtemp(prefix="ego-no-chrome-")) / "chrome"
        path.write_text(f"#!/bin/sh\necho '{NO_CHROME_MESSAGE}' >&2\nexit 97\n")
        path.chmod(0o755)
        config.stash[_STAND_IN] = path
    return path


def pytest_collection_finish(session: pytest.Session) -> None:
    # A run of the fast tier alone: nothing in it may start Chrome, fixtures of any scope
    # included (a module's server started by its first test would otherwise slip by).
    if session.items and not any(item.get_closest_marker("chrome") for item in session.items):
        os.environ[CHROME_ENV] = str(_no_chrome_stand_in(session.config))


@pytest.fixture(autouse=True)
def _chrome_only_where_marked(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In any run, a test not marked ``chrome`` gets the stand-in as its Chrome."""
    if request.node.get_closest_marker("chrome") is None:
        monkeypatch.setenv(CHROME_ENV, str(_no_chrome_stand_in(request.config)))


_BROWSERS_BEFORE = pytest.StashKey[set[int]]()


def _shares_a_wider_fixture(item: pytest.Item) -> bool:
    """Whether ``item`` uses a fixture of this suite that outlives it (module or session
    scope): such a fixture is set up before the stand-in is in place, so a process it starts
    (an ``ego mcp`` server) may start the real Chrome on the test's behalf. Plugins' fixtures
    (pytest's, pytest-asyncio's) have no base id and start no Chrome."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return True  # cannot tell: check
    return any(
        defs[-1].scope != "function" and defs[-1].baseid
        for defs in info.name2fixturedefs.values()
        if defs
    )


def _browser_pids() -> set[int]:
    """This run's live Chrome browser processes (not their helpers)."""
    return {
        process.pid
        for process in ego_chromes()
        if "--type=" not in " ".join(process.info["cmdline"] or [])
    }


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, object, object]:
    # Before any fixture of the test is set up, a wider one included.
    if item.get_closest_marker("chrome") is None and _shares_a_wider_fixture(item):
        item.stash[_BROWSERS_BEFORE] = _browser_pids()
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    """Fail a test without the ``chrome`` mark during which a Chrome of this run started."""
    result = yield
    before = item.stash.get(_BROWSERS_BEFORE, None)
    if before is not None:
        started = sorted(_browser_pids() - before)
        if started:
            pids = ", ".join(str(pid) for pid in started)
            pytest.fail(
                f"{NO_CHROME_MESSAGE} (Chrome {pids} started during it, through a fixture "
                "it shares)",
                pytrace=False,
            )
    return result


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    stand_in = session.config.stash.get(_STAND_IN, None)
    if stand_in is not None:
        shutil.rmtree(stand_in.parent, ignore_errors=True)
    # Give Chrome processes that are already exiting a moment to go, then insist.
    deadline = time.time() + 5
    leftovers = ego_chromes()
    while leftovers and time.time() < deadline:
        psutil.wait_procs(leftovers, timeout=0.5)
        leftovers = ego_chromes()
    if leftovers:
        pids = ", ".join(str(p.pid) for p in leftovers)
        print(f"\nLEAK: Chrome processes still running after the tests: {pids}")
        for process in leftovers:
            with contextlib.suppress(psutil.Error):
                process.kill()
        session.exitstatus = 1


os.environ.setdefault("EGO_PROFILES_DIR", str(ROOT / ".pytest_cache" / "profiles"))
# The browser `ego launch` keeps is recorded in the state folder: a test run gets its own, so
# that no command here attaches to a developer's kept Chrome (or another run's).
os.environ["EGO_STATE_DIR"] = str(ROOT / ".pytest_cache" / f"state-{RUN_ID}")
os.environ.pop("EGO_NEW_BROWSER", None)
# A shell that asks Python to write no bytecode (PYTHONDONTWRITEBYTECODE) would have every
# `ego` subprocess compile ego from source and every run rewrite each test module's asserts
# anew: a fifth of the fast tier's CPU. The run keeps that bytecode under .pytest_cache
# instead, for itself and the processes it starts, and the source folders stay as they are.
if sys.dont_write_bytecode:
    sys.pycache_prefix = str(ROOT / ".pytest_cache" / "pycache")
    sys.dont_write_bytecode = False
    os.environ["PYTHONPYCACHEPREFIX"] = sys.pycache_prefix
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
