"""Figures and rules the docs state are the code's: exit codes, the pool's waits between
replacement attempts, the site lock's timeout, the lock file a batch run leaves, the modules of
the layers."""

from __future__ import annotations

import inspect
import re
import tomllib
from pathlib import Path

import ego.cli.output as output
from ego.batch.lock import hold_output, lock_path
from ego.learning.plan.locks import LOCK_TIMEOUT
from ego.pool import BrowserPool
from tests.helpers.paths import ROOT

README = (ROOT / "README.md").read_text()
FLEET = (ROOT / "docs" / "fleet.md").read_text()
LEARNING_LOOP = (ROOT / "docs" / "learning-loop.md").read_text()
ARCHITECTURE = (ROOT / "docs" / "architecture.md").read_text()


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_the_readme_names_every_exit_code_the_command_line_uses() -> None:
    match = re.search(r"Exit codes: (.*?) `python -m", _flat(README))
    assert match, "README.md has no 'Exit codes:' sentence"
    named = {int(code) for code in re.findall(r"(?:^|, )(\d+) ", match.group(1))}
    used = {value for name, value in vars(output).items() if name.startswith("EXIT_")}
    assert named == used


def test_fleet_md_gives_the_replacement_attempts_and_waits() -> None:
    default = inspect.signature(BrowserPool).parameters["replace_attempts"].default
    text = _flat(FLEET)
    assert f"`replace_attempts` tries ({default} by default): the first at once" in text
    assert "the second after 0.5 s, the third after 2 s, and any further one 5 s" in text


def test_learning_loop_md_gives_the_site_locks_timeout() -> None:
    text = _flat(LEARNING_LOOP)
    assert f"longer than {LOCK_TIMEOUT:g} s (`ego.learning.plan.locks.LOCK_TIMEOUT`)" in text
    assert "`SiteBusyError`" in text


def test_a_batch_output_lock_stays_after_its_run_and_the_next_run_takes_it(
    tmp_path: Path,
) -> None:
    assert "`results.jsonl.lock`" in FLEET
    results = tmp_path / "results.jsonl"
    with hold_output(results):
        pass
    assert lock_path(results) == tmp_path / "results.jsonl.lock"
    assert lock_path(results).read_text().startswith("pid ")  # left, saying who ran last
    with hold_output(results):  # its lock ended with the run
        pass


def named_in_architecture() -> set[str]:
    """Every module path or name docs/architecture.md shows in code, dotted: `ego/page/`,
    `tab.py`, `_codec | _events`, `catalog/sites.py` (as ``catalog.sites``)."""
    named = set()
    for span in re.findall(r"`([^`]+)`", ARCHITECTURE):
        named.update(re.findall(r"[A-Za-z_][\w./]*", span))
    return {name.removesuffix("/").removesuffix(".py").replace("/", ".") for name in named}


def test_architecture_md_names_every_module_of_the_layer_contracts() -> None:
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    named = named_in_architecture()
    # A layers contract's rows; a forbidden contract's modules on either side.
    modules = [
        module.strip()
        for contract in contracts["contracts"]
        for layer in (
            contract.get("layers", [])
            + contract.get("source_modules", [])
            + contract.get("forbidden_modules", [])
        )
        for module in layer.split("|")
    ]
    missing = [module for module in modules if module not in named]
    assert missing == [], f"docs/architecture.md does not name {missing}"


def test_architecture_md_names_every_module_of_the_learning_rooms() -> None:
    learning = ROOT / "ego" / "learning"
    modules = [
        ".".join(path.relative_to(learning).with_suffix("").parts)
        for path in sorted(learning.glob("*/*.py"))
        if path.name != "__init__.py"
    ]
    assert len(modules) > 50
    missing = [module for module in modules if module not in named_in_architecture()]
    assert missing == [], f"docs/architecture.md does not name {missing}"


def test_architecture_md_names_every_module_of_ego() -> None:
    """Each module under ego/ is named in docs/architecture.md by its file name or its path
    from some package down (`tab.py`, `catalog/sites.py`, `cli/app.py`)."""
    named = named_in_architecture()
    modules = [
        path.relative_to(ROOT / "ego").with_suffix("").parts
        for path in sorted((ROOT / "ego").glob("**/*.py"))
        if path.name != "__init__.py"
    ]
    assert len(modules) > 250
    missing = [
        "/".join(parts)
        for parts in modules
        if not {".".join(parts[i:]) for i in range(len(parts))} & named
    ]
    assert missing == [], f"docs/architecture.md does not name {missing}"


def test_the_readmes_sample_of_a_users_hands_is_the_agent_script_the_tests_run() -> None:
    """README.md's block "from `agent_scripts/hands.py`" shows lines of that script (their
    code; comments may differ), which tests/test_agent_scripts.py runs: the sample of the
    double click, the context menu, the drag, the scroll, the keyboard and the locators
    cannot drift from what runs."""

    def code(line: str) -> str:
        return line.split("  #")[0].strip()

    pattern = r"\(from\s+`agent_scripts/hands\.py`\):\s*(?:<!--.*?-->\s*)?```python\n(.*?)```"
    block = re.search(pattern, README, re.DOTALL)
    assert block, "README.md shows no sample from agent_scripts/hands.py"
    script = {code(line) for line in (ROOT / "agent_scripts/hands.py").read_text().splitlines()}
    shown = [line for line in map(code, block.group(1).splitlines()) if line]
    assert len(shown) >= 8
    for line in shown:
        assert line in script, f"README.md shows {line!r}, not a line of agent_scripts/hands.py"
