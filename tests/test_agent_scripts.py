"""The example agent scripts run end to end, each as its own process with its own Chrome."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.helpers.paths import ROOT
from tests.helpers.processes import ego_chromes

pytestmark = pytest.mark.chrome  # the agent scripts launch Chrome

SCRIPTS = ROOT / "agent_scripts"


def run_script(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    before = {process.pid for process in ego_chromes()}
    completed = subprocess.run(
        [sys.executable, str(SCRIPTS / name), *args],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=ROOT,
        check=False,
    )
    assert completed.returncode == 0, f"{name} failed:\n{completed.stdout}\n{completed.stderr}"
    leftover = {process.pid for process in ego_chromes()} - before
    assert not leftover, f"{name} left Chrome processes behind: {leftover}"
    return completed


def test_first_script_prints_the_title_and_the_mapped_list() -> None:
    out = run_script("first_script.py").stdout.splitlines()
    assert out == ["Hello", "[2, 4, 6]"]


def test_page_verbs_takes_a_screenshot_reads_the_console_and_answers_a_dialog() -> None:
    out = run_script("page_verbs.py").stdout.splitlines()
    assert out == ["True", "['clicked']", "Sure?", "yes"]


def test_hands_double_clicks_opens_a_menu_drags_scrolls_and_types() -> None:
    out = run_script("hands.py").stdout.splitlines()
    assert out == ["Buy bread", "['rename', 'Row 750']", "Card A", "me@example.com"]


def test_discover_lists_the_shop_tools_and_runs_one() -> None:
    out = run_script("demo_discover.py").stdout
    for tool in ("list_products", "search_products", "get_orders", "cheapest_in_category"):
        assert tool in out
    assert "Aurora Wireless Headphones" in out  # product 1, from list_products


def test_shopping_chains_search_detail_cart_and_the_python_tool() -> None:
    out = run_script("demo_shopping.py", "--query", "desk", "--category", "kitchen").stdout
    assert "Mechanical Desk Clock" in out  # the cheapest desk item, found and read back
    assert "Cast Iron Skillet" in out  # cheapest_in_category("kitchen")


@pytest.mark.parametrize("script", ["demo_session_tools.py"])
def test_session_script_shows_the_contract(script: str) -> None:
    out = run_script(script).stdout
    assert "NEEDS_LOGIN" in out
    assert "confirm" in out
