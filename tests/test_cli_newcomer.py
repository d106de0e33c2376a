"""What a newcomer meets on the command line first: hints that paste, help that reads right,
typos answered, and no command that says nothing when it found nothing.

Every command runs as a real ``python -m ego`` subprocess; the few that need a browser attach
to the session's.
"""

from __future__ import annotations

import re
import shlex
import socket
import sys
from pathlib import Path

import pytest

import ego
from tests.helpers.browsers import websocket_url
from tests.helpers.commands import (
    background,
    ego_async,
    ego_env,
    ego_sync,
    free_port,
    http_endpoint,
    read_json_line,
)
from tests.helpers.page_server import PageServer
from tests.helpers.paths import ROOT


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


@pytest.mark.parametrize(
    "command",
    [("ego", "demo", "--serve"), ("ego", "demo"), ("python", "-m", "ego.demo")],
    ids=" ".join,
)
def test_a_taken_port_is_one_line_naming_port(
    env: dict[str, str], cwd: Path, command: tuple[str, ...]
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        argv = [sys.executable, "-m", "ego.demo"] if command[0] == "python" else None
        words = [] if argv else list(command[1:])
        result = ego_sync(*words, "--port", str(port), env=env, cwd=cwd, command=argv)
    assert result.returncode != 0, result
    line = result.error_line()
    # One type and one wording with every server ego starts (ego mcp --http too).
    assert "ListenError" in line, result
    assert f"cannot listen on 127.0.0.1:{port}: another process listens on that port" in line
    assert "pass another --port (--port 0 takes a free one)" in line


async def test_the_demo_shop_on_another_port_says_how_commands_find_it(
    env: dict[str, str], cwd: Path
) -> None:
    port = free_port()
    async with background("demo", "--serve", "--port", str(port), env=env, cwd=cwd) as served:
        assert served.stdout is not None
        shown = await read_json_line(served.stdout, timeout=60)
    url = f"http://shop.localhost:{port}/"
    assert shown["url"] == url
    assert shown["start_url"] == f"demo-shop={url}"
    # What it says to pass is what ego tools shows as the shop's start URL.
    listed = ego_sync(
        "tools", "shop.localhost", "--start-url", shown["start_url"], env=env, cwd=cwd
    )
    assert listed.json()["sites"][0]["start_url"] == url


def _syntax_error_site(root: Path) -> Path:
    """A workspace whose one tool does not parse (line 3 has `(x + )`)."""
    site = root / "learnings" / "syn"
    (site / "browser-tools").mkdir(parents=True)
    (site / "browser-tools" / "bad.js").write_text(
        "async () => {\n  const x = 1;\n  return (x + );\n}\n"
    )
    (site / "manifest.json").write_text(
        '{"id": "syn", "name": "Syn", "domains": ["127.0.0.1"], "browserTools": {"bad": '
        '{"description": "does not parse", "path": "browser-tools/bad.js"}}}'
    )
    return root


def test_validate_finds_a_javascript_syntax_error_and_its_line(
    env: dict[str, str], tmp_path: Path
) -> None:
    workspace = _syntax_error_site(tmp_path / "ws")
    found = ego_sync("validate", str(workspace), "--no-json", env=env, cwd=tmp_path)
    assert found.returncode == 3, found
    assert found.stdout.strip().endswith(
        "bad.js: browser tool bad does not parse: a syntax error at line 3, column 14, near ');'"
    ), found


@pytest.mark.chrome
async def test_a_tool_that_does_not_compile_is_reported_at_its_line(
    env: dict[str, str], tmp_path: Path, server: PageServer, ported_browser: ego.Browser
) -> None:
    workspace = _syntax_error_site(tmp_path / "ws")
    ran = await ego_async(
        "run", "syn", "bad", "--url", server.route("/syntax", "<title>s</title>"),
        "--workspace", str(workspace), "--endpoint", http_endpoint(websocket_url(ported_browser)),
        env=env, cwd=tmp_path,
    )  # fmt: skip
    assert ran.returncode == 3, ran
    line = ran.error_line()
    assert "threw SyntaxError: Unexpected token ')'" in line, line
    assert line.endswith('bad.js:3)","type":"BrowserToolError"}'), line
