"""What a newcomer meets on the command line first: hints that paste, help that reads right,
typos answered, and no command that says nothing when it found nothing.

Every command runs as a real ``python -m ego`` subprocess; none of these needs a browser.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tests.cli_helpers import ROOT, ego_env, ego_sync


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return ego_env(tmp_path_factory.mktemp("profiles"))


@pytest.fixture(scope="module")
def cwd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cwd")


def test_the_skill_hint_of_ego_tools_pastes_as_a_command(env: dict[str, str], cwd: Path) -> None:
    shown = ego_sync("tools", "shop.localhost", "--no-json", env=env, cwd=cwd)
    assert shown.returncode == 0, shown
    hint = re.search(r"skills \((ego skill run [^)]*)\):", shown.stdout)
    assert hint, shown
    # Pasted with NAME and JSON filled in: the params are checked, so the options parsed.
    words = shlex.split(hint.group(1).replace("NAME", "search-products").replace("JSON", "{}"))
    pasted = ego_sync(*words[1:], env=env, cwd=cwd)
    assert "No such option" not in pasted.stderr, pasted
    assert pasted.returncode == 3, pasted
    assert "InvalidArgsError" in pasted.stderr, pasted
    assert "query" in pasted.stderr, pasted


def test_ego_help_says_where_its_options_are(env: dict[str, str], cwd: Path) -> None:
    shown = ego_sync("--help", env=env, cwd=cwd)
    text = " ".join(shown.stdout.split())
    assert shown.stdout.index("Options:") > shown.stdout.index("work before or after"), text
    assert "The options below work before or after a command's name" in text


def test_a_mistyped_command_is_answered_with_the_command_meant(
    env: dict[str, str], cwd: Path
) -> None:
    typo = ego_sync("runn", "demo-shop", "get_cart", env=env, cwd=cwd)
    assert typo.returncode == 2, typo
    assert "No such command 'runn'. Did you mean 'run'?" in typo.stderr, typo


def test_history_of_a_site_or_tool_that_does_not_exist_fails(
    env: dict[str, str], cwd: Path
) -> None:
    site = ego_sync("history", "nosite", "nope", env=env, cwd=cwd)
    assert site.returncode == 3, site
    assert "UnknownSiteError" in site.error_line(), site
    tool = ego_sync("history", "demo-shop", "nope", env=env, cwd=cwd)
    assert tool.returncode == 3, tool
    line = tool.error_line()
    assert "UnknownToolError" in line, tool
    assert "get_cart" in line, tool
    kept = ego_sync("history", "demo-shop", "get_cart", env=env, cwd=cwd)
    assert kept.returncode == 0, kept
    assert [row["version"] for row in kept.json()] == ["current"]


def test_run_without_a_tool_lists_the_sites_tools(env: dict[str, str], cwd: Path) -> None:
    bare = ego_sync("run", "demo-shop", env=env, cwd=cwd)
    assert bare.returncode == 2, bare
    line = bare.error_line()
    assert "missing argument TOOL" in line, bare
    assert "get_cart" in line, bare
    assert "cheapest_in_category" in line, bare


def test_tools_full_prints_schemas_notes_and_commands_to_paste(
    env: dict[str, str], cwd: Path
) -> None:
    shown = ego_sync("tools", "shop.localhost", "--full", "--no-json", env=env, cwd=cwd)
    assert shown.returncode == 0, shown
    text = shown.stdout
    assert "browser tool get_product (read, auth none)" in text, text[:2000]
    assert '"minimum": 1' in text  # get_product's args schema
    assert '"review_count"' in text  # and its returns schema
    assert "  example: ego run demo-shop get_product --args '{\"id\":6}'" in text
    assert "example: ego run demo-shop post_review --args" in text
    assert "--confirm" in text
    assert "  health: no runs yet" in text
    # Each note in full: its last line too.
    api_note = (ROOT / "learnings" / "demo-shop" / "notes" / "api.md").read_text()
    last = [line for line in api_note.splitlines() if line.strip()][-1]
    assert last.strip() in text
    assert "example: ego skill run shop.localhost/search-products --args" in text
