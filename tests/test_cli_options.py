"""The global options (``--workspace``, ``--endpoint``, ``--new-browser``, ``--json``,
``--start-url``) work
before or after every command's name; ``--endpoint`` is used or refused with a reason by each
command that touches a browser; errors word their fixes as a command-line user types them.

Most of this runs in-process with click's runner and needs no browser; the few that reach a
browser only ever reach a dead endpoint.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from ego.cli import cli
from ego.cli.common import GLOBAL_OPTIONS
from ego.cli.output import cli_words
from ego.errors import (
    ConfirmationRequiredError,
    NoTabError,
    ProfileInUseError,
    SkillBrokenError,
    SkillExistsError,
    WorkspaceRequiredError,
)
from ego.mcp.wording import mcp_message
from ego.runtime.contract import signal_error
from tests.helpers.commands import ego_env, ego_sync, free_port
from tests.helpers.paths import ROOT


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    context = click.Context(group)
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        assert command is not None, name
        path = (*prefix, name)
        yield path
        if isinstance(command, click.Group):
            yield from _commands(command, path)


ALL_COMMANDS = list(_commands(cli))
#: Commands that use no browser: on them --endpoint and --new-browser are accepted and ignored.
NO_BROWSER_COMMANDS = {
    ("tools",),
    ("sites",),
    ("validate",),
    ("history",),
    ("restore",),
    ("health",),
    ("save-note",),
    ("skill", "export"),
    ("skill", "import"),
    ("catalog", "search"),
    ("catalog", "show"),
    ("pack", "build"),
    ("pack", "list"),
    ("show-trace",),
    ("report",),
}


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    """A runner whose environment has no workspace or endpoint of the developer's."""
    for name in ("EGO_WORKSPACE", "EGO_ENDPOINT", "EGO_NEW_BROWSER", "EGO_START_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("EGO_STATE_DIR", str(tmp_path / "state"))
    return CliRunner()


def invoke(runner: CliRunner, *args: str, **env: str) -> Result:
    return runner.invoke(cli, list(args), env=env or None, catch_exceptions=False)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A workspace with one site of its own, ``ws-only``."""
    root = tmp_path / "workspace"
    site = root / "learnings" / "ws-only"
    (site / "browser-tools").mkdir(parents=True)
    (site / "browser-tools" / "ping.js").write_text("async () => 1\n")
    manifest = {
        "id": "ws-only",
        "name": "Workspace Only",
        "domains": ["ws-only.example"],
        "browserTools": {"ping": {"description": "answers 1", "path": "browser-tools/ping.js"}},
    }
    (site / "manifest.json").write_text(json.dumps(manifest))
    return root


def site_ids(result: Result) -> set[str]:
    assert result.exit_code == 0, result.output
    return {site["site_id"] for site in json.loads(result.output)["sites"]}


# -- every command, every global option, either side -------------------------------------------


@pytest.mark.parametrize("path", ALL_COMMANDS, ids=" ".join)
def test_every_command_takes_every_global_option_after_its_name(
    runner: CliRunner, path: tuple[str, ...], tmp_path: Path
) -> None:
    values = {
        "--workspace": [str(tmp_path)],
        "--endpoint": ["http://127.0.0.1:9"],
        "--new-browser": [],
        "--json": [],
        "--start-url": ["demo-shop=http://127.0.0.1:9/"],
    }
    for option in GLOBAL_OPTIONS:
        after = invoke(runner, *path, option, *values[option], "--help")
        assert after.exit_code == 0, f"ego {' '.join(path)} {option}: {after.output}"
        assert "No such option" not in after.output
        before = invoke(runner, option, *values[option], *path, "--help")
        assert before.exit_code == 0, f"ego {option} {' '.join(path)}: {before.output}"
    assert "--no-json" in invoke(runner, *path, "--help").output


@pytest.mark.parametrize("path", ALL_COMMANDS, ids=" ".join)
def test_help_says_which_commands_ignore_endpoint(runner: CliRunner, path: tuple[str, ...]) -> None:
    text = " ".join(invoke(runner, *path, "--help").output.split())
    ignored = "This command uses no browser" in text
    if isinstance(cli.get_command(click.Context(cli), path[0]), click.Group) and len(path) == 1:
        return  # a group's own help lists its commands
    assert ignored == (path in NO_BROWSER_COMMANDS), text


def test_workspace_after_the_command_is_the_same_as_before(
    runner: CliRunner, workspace: Path
) -> None:
    assert "ws-only" not in site_ids(invoke(runner, "sites"))
    assert "ws-only" in site_ids(invoke(runner, "--workspace", str(workspace), "sites"))
    assert "ws-only" in site_ids(invoke(runner, "sites", "--workspace", str(workspace)))


def test_the_option_after_the_command_wins(
    runner: CliRunner, workspace: Path, tmp_path: Path
) -> None:
    empty = tmp_path / "empty"
    both = invoke(runner, "--workspace", str(empty), "sites", "--workspace", str(workspace))
    assert "ws-only" in site_ids(both)
    env_and_flag = invoke(runner, "sites", "--workspace", str(workspace), EGO_WORKSPACE=str(empty))
    assert "ws-only" in site_ids(env_and_flag)
    # --no-json after the command undoes --json before it: readable text, not JSON.
    text = invoke(runner, "--json", "sites", "--workspace", str(workspace), "--no-json")
    assert text.exit_code == 0, text.output
    assert text.output.lstrip()[0] != "{"
    assert "Workspace Only" in text.output


def test_skill_import_takes_workspace_after_the_file(runner: CliRunner, tmp_path: Path) -> None:
    """docs/skills.md's form: ``ego skill import FILE --workspace DIR``."""
    exported = tmp_path / "SKILL.md"
    done = invoke(
        runner, "skill", "export", "shop.localhost/search-products", "--out", str(exported)
    )
    assert done.exit_code == 0, done.output
    target = tmp_path / "agent"
    imported = invoke(runner, "skill", "import", str(exported), "--workspace", str(target))
    assert imported.exit_code == 0, imported.output
    folder = Path(json.loads(imported.output)["imported"])
    assert folder == target / "skills" / "shop.localhost" / "search-products"
    assert (folder / "SKILL.md").is_file()

    # Again: the fix is worded as a flag of this command, not as Python's overwrite=True.
    again = invoke(runner, "skill", "import", str(exported), "--workspace", str(target))
    assert again.exit_code == 3, again.output
    assert "--overwrite" in again.output
    assert "overwrite=True" not in again.output


# -- --endpoint: used, or refused with the reason ----------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("tabs",),
        ("run", "demo-shop", "list_products"),
        ("skill", "run", "shop.localhost/search-products", "--arg", "query=desk"),
        ("doctor",),
        ("record", "http://127.0.0.1:9/", "--har", "out.har"),
        ("test", "demo-shop"),
    ],
    ids=lambda args: args[0] if args[0] != "skill" else "skill run",
)
def test_endpoint_after_the_command_is_the_browser_used(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    """A dead endpoint given after the command is the one reached: exit 4, naming it."""
    dead = f"http://127.0.0.1:{free_port()}"
    result = ego_sync(*args, "--endpoint", dead, env=ego_env(tmp_path), cwd=tmp_path, timeout=60)
    assert result.returncode == 4, result
    assert "No such option" not in result.stderr
    # doctor reports the problem in its report (stdout); the others as their one error line.
    assert f"{dead}/json/version" in result.stdout + result.stderr, result


@pytest.mark.parametrize("command", ["launch", "close"])
def test_launch_and_close_refuse_an_endpoint_saying_why(runner: CliRunner, command: str) -> None:
    after = invoke(runner, command, "--endpoint", "http://127.0.0.1:9")
    assert after.exit_code == 2, after.output
    line = json.loads(after.output.strip().splitlines()[-1])
    assert line["type"] == "UsageError"
    assert f"ego {command} " in line["error"]
    assert "drop --endpoint" in line["error"]

    from_env = invoke(runner, command, EGO_ENDPOINT="http://127.0.0.1:9")
    assert from_env.exit_code == 2, from_env.output
    assert "unset EGO_ENDPOINT" in from_env.output


def test_close_says_when_no_browser_is_kept(runner: CliRunner) -> None:
    result = invoke(runner, "close")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {"closed": False, "reason": "no browser is kept"}
    human = invoke(runner, "close", "--no-json")
    assert "no browser is kept" in human.output


# -- fixes in command-line words ---------------------------------------------------------------


def test_errors_word_their_fixes_as_flags() -> None:
    confirm = ConfirmationRequiredError("demo-shop/post_review")
    assert "run it again with --confirm" in cli_words(confirm)
    assert "confirm=True" not in cli_words(confirm)

    profile = ProfileInUseError(
        "profile /p is in use by Chrome (pid 7): attach to it with "
        "ego.connect('http://127.0.0.1:9222'), close it, or use another profile",
        profile_dir="/p",
        pid=7,
    )
    assert cli_words(profile) == (
        "profile /p is in use by Chrome (pid 7): attach to it with "
        "--endpoint http://127.0.0.1:9222, close it, or pass another --profile"
    )

    exists = SkillExistsError(
        "skill a/b is already in /w (/w/a/b): pass overwrite=True to replace it"
    )
    assert cli_words(exists).endswith("pass --overwrite to replace it")

    workspace = WorkspaceRequiredError(
        "cannot save a learning: no agent workspace is set (roots: /r); set EGO_WORKSPACE (or "
        "--workspace), or pass workspace= to ego.launch()/Learnings(): learnings are saved "
        "into <workspace>/learnings/"
    )
    assert "workspace=" not in cli_words(workspace)
    assert "set EGO_WORKSPACE (or --workspace): learnings are saved" in cli_words(workspace)

    no_tab = NoTabError(
        "no open tab on a.example for site 'a', and its manifest has no startUrl: open one "
        "(browser.new_tab(url)) and pass tab=, or call set_start_url('a', url)"
    )
    assert cli_words(no_tab).endswith("startUrl: pass --start-url with a page of the site")

    broken = signal_error(
        "SKILL_BROKEN: /api/products answered 404", site_id="shop", tool="get_products", profile="p"
    )
    assert isinstance(broken, SkillBrokenError)
    assert "site.heal_tool('shop', 'get_products')" in str(broken)
    assert cli_words(broken).endswith(
        "`ego heal shop get_products` finds what changed and drafts one"
    )
    assert mcp_message(broken).endswith(
        "`heal_tool('shop', 'get_products')` finds what changed and drafts one"
    )


def test_a_shipped_python_worded_error_reaches_the_shell_in_flag_words(
    tmp_path: Path,
) -> None:
    """The real error from the real command: a profile held by a live Chrome."""
    profiles = tmp_path / "profiles"
    held = profiles / "held"
    held.mkdir(parents=True)
    # Chrome's lock names a live process that listens on 127.0.0.1, as a Chrome with a
    # debugging port does: the profile counts as held, and that port is the one to attach to.
    holder = subprocess.Popen(
        [sys.executable, "-c", _LISTEN_UNTIL_STDIN_CLOSES],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        port = int(holder.stdout.readline())
        (held / "SingletonLock").symlink_to(f"{socket.gethostname()}-{holder.pid}")
        result = ego_sync(
            "run",
            "demo-shop",
            "list_products",
            "--profile",
            "held",
            env=ego_env(profiles),
            cwd=tmp_path,
            timeout=60,
        )
    finally:
        holder.communicate()
    assert result.returncode == 4, result
    line = json.loads(result.error_line())
    assert line["type"] == "ProfileInUseError"
    assert f"--endpoint http://127.0.0.1:{port}" in line["error"]
    assert "--profile" in line["error"]
    assert "ego.connect" not in line["error"]


_LISTEN_UNTIL_STDIN_CLOSES = """
import socket, sys
server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen()
print(server.getsockname()[1], flush=True)
sys.stdin.read()
"""


def test_readme_lists_the_global_options() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for option in GLOBAL_OPTIONS:
        assert f"`{option}" in readme, option


def test_mcp_refuses_a_test_id_attribute_that_is_no_attribute(runner: CliRunner) -> None:
    refused = invoke(runner, "mcp", "--test-id-attribute", "not an attribute")
    assert refused.exit_code == 2, refused.output
    assert "--test-id-attribute" in refused.output
    assert "give an attribute name" in refused.output


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (("--port", "5"), "--port only works with --http: add --http"),
        (("--port", "5", "--token", "t"), "--port, --token only work with --http: add --http"),
    ],
)
def test_mcp_refuses_the_http_options_without_http(
    runner: CliRunner, options: tuple[str, ...], message: str
) -> None:
    refused = invoke(runner, "mcp", *options)
    assert refused.exit_code == 2, refused.output
    assert message in refused.output
