"""The two tiers: ``pytest -m "not chrome"`` runs every test that needs no browser, and a test
without the ``chrome`` mark cannot start one (tests/conftest.py)."""

from __future__ import annotations

import ast
import importlib.util
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

import ego
from tests.helpers.paths import ROOT
from tests.helpers.processes import NO_CHROME_MESSAGE

#: Tests in modules that mostly start Chrome which themselves need none: the fast tier runs
#: them (they were once marked with their whole module, and never ran there).
NEED_NO_CHROME = [
    "tests/test_packaging.py::test_the_wheel_carries_the_bundled_learnings_and_skills",
    "tests/test_packaging.py::test_an_editable_install_finds_the_checkout",
    "tests/test_packaging.py::test_an_installed_ego_finds_its_learnings_outside_the_checkout",
    "tests/test_chrome.py::test_find_chrome_searches_path",
    "tests/test_chrome.py::test_profile_names_must_be_plain",
    "tests/test_cli.py::test_validate_shipped_learnings_and_skills",
    "tests/test_cli.py::test_sites_lists_every_site_and_skill",
    "tests/test_mcp.py::test_lists_core_and_learning_tools_with_annotations",
    "tests/test_batch.py::test_output_files_that_cannot_be_resumed_are_refused",
    "tests/test_call_path.py::test_prepare_checks_everything_before_a_browser",
    "tests/test_hardening_process.py::test_a_launch_removes_the_logs_of_gone_owners_only",
]


def test_the_fast_tier_holds_the_tests_that_need_no_browser() -> None:
    files = sorted({test.split("::")[0] for test in NEED_NO_CHROME})
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "not chrome", *files],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert collected.returncode == 0, collected.stdout + collected.stderr
    listed = set(collected.stdout.split())
    assert [test for test in NEED_NO_CHROME if test not in listed] == []
    assert "tests/test_chrome.py::test_launch_then_close_leaves_no_process_of_that_chrome" not in (
        listed
    )


def imported_modules(path: Path) -> list[str]:
    """The modules ``path`` imports from anywhere in it (relative ones made absolute)."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            module = ".".join(part for part in (base, node.module) if part)
            found.append(module)
            # ``from tests import test_x`` names a module too
            found += [f"{module}.{alias.name}" for alias in node.names]
    return found


def test_no_test_module_imports_another_or_conftest() -> None:
    """What tests share lives in tests/helpers: a test module, a helper or a benchmark that
    imported conftest or a test module would run that module's import (its fixtures, its
    marks) and tie the two together."""
    shared = re.compile(r"^tests\.(conftest|test_\w+)$")
    wrong = [
        f"{path.relative_to(ROOT)} imports {module}"
        for folder in ("tests", "bench", "scripts", "agent_scripts")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for module in imported_modules(path)
        if shared.match(module)
    ]
    assert wrong == []


def test_the_readme_gives_the_fast_tier_on_two_workers() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert '`pytest -m "not chrome" -n 2` is the fast tier' in readme
    assert importlib.util.find_spec("xdist") is not None, "pip install -e '.[test]'"


async def test_a_test_without_the_chrome_mark_cannot_start_chrome() -> None:
    with pytest.raises(ego.ChromeLaunchError, match=NO_CHROME_MESSAGE):
        await ego.launch()


#: A module whose shared fixture starts a process on demand, as ``ego mcp`` starts Chrome at
#: its first tool call: a stand-in "browser" (its command line is what ego's Chrome has) so
#: that no real Chrome is needed to show the check.
SHARED_FIXTURE_PROBE = """
import subprocess, sys
import pytest

@pytest.fixture(scope="module")
def starter():
    started = []
    def start():
        started.append(subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(60)", "--remote-debugging-pipe"]
        ))
    yield start
    for process in started:
        process.kill()
        process.wait()

@pytest.mark.chrome
def test_marked(starter):
    starter()

def test_unmarked(starter):
    starter()
"""


def test_a_test_without_the_mark_that_starts_chrome_through_a_shared_fixture_fails() -> None:
    # In a run of both tiers the shared fixture's process keeps the real Chrome (the stand-in
    # is only the test's own), so only the check on new browser processes can tell. The probe
    # sits inside the checkout, where the suite's own fixtures are.
    folder = ROOT / ".pytest_cache" / f"tiers-probe-{uuid.uuid4().hex}"
    folder.mkdir(parents=True)
    try:
        probe = folder / "test_probe.py"
        probe.write_text(SHARED_FIXTURE_PROBE)
        options = ["-p", "tests.conftest", "-p", "no:cacheprovider", "-q", "-c", "pyproject.toml"]
        run = subprocess.run(
            [sys.executable, "-m", "pytest", *options, str(probe)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    output = run.stdout + run.stderr
    assert run.returncode == 1, output
    assert "1 failed, 1 passed" in output, output
    assert "FAILED .pytest_cache/" in output, output
    # The summary line may go on with the reason, as wide as the terminal lets it.
    assert re.search(r"FAILED \S*test_probe\.py::test_unmarked\b", output), output
    assert "::test_marked" not in output, output
    assert f"{NO_CHROME_MESSAGE} (Chrome " in output, output
