"""Friendly command-line input: checks before Chrome, args read by the schema, bare hosts,
JSON words in schema errors, a NEEDS_LOGIN that names its command, the demo shop standalone."""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import subprocess
import urllib.request
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner

import ego
from ego.cli.app import cli
from ego.cli.arg_values import value_from_text
from ego.cli.common import parse_args
from ego.cli.learning_commands import CLI_PROFILE_HINT, as_url
from ego.errors import InvalidArgsError, NavigationError, NeedsLoginError
from ego.learning.catalog.registry import Learnings
from ego.runtime.contract import signal_error
from ego.site import Site
from tests.helpers.commands import ego_env, free_port, read_json_line
from tests.helpers.paths import PYTHON_EGO, ROOT

# --- checks before Chrome -------------------------------------------------------------------


@pytest.fixture
def no_chrome(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake Chrome that leaves a mark when started (and fails): returns the mark's path."""
    mark = tmp_path / "chrome-started"
    fake = tmp_path / "fake-chrome"
    fake.write_text(f"#!/bin/sh\ntouch {mark}\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("EGO_CHROME", str(fake))
    monkeypatch.setenv("EGO_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("EGO_PROFILES_DIR", str(tmp_path / "profiles"))
    for name in ("EGO_ENDPOINT", "EGO_WORKSPACE"):
        monkeypatch.delenv(name, raising=False)
    return mark


REVIEW = '{"product_id": 1, "rating": 5, "text": "fine"}'


@pytest.mark.parametrize(
    ("argv", "code", "needle"),
    [
        (["run", "demo-shop", "get_prodct"], 3, "UnknownToolError"),
        (["run", "demo-shp", "get_product"], 3, "UnknownSiteError"),
        (["run", "demo-shop", "get_product", "--arg", "id=abc"], 3, "is not an integer"),
        (["run", "demo-shop", "get_product", "--arg", "idd=3"], 3, "InvalidArgsError"),
        (["run", "demo-shop", "get_product", "--args", '{"id": 0}'], 3, "InvalidArgsError"),
        (["run", "demo-shop", "post_review", "--args", REVIEW], 3, "--confirm"),
        (["skill", "run", "nowhere.example/nothing"], 3, "UnknownSkillError"),
        (["record", "--run", "demo-shop", "get_prodct", "--har", "x.har"], 3, "UnknownToolError"),
        (
            ["record", "--run", "demo-shop", "post_review", "--args", REVIEW, "--har", "x.har"],
            3,
            "--confirm",
        ),
        (["test", "demo-shp"], 3, "UnknownSiteError"),
    ],
    ids=lambda value: value if isinstance(value, str) else None,
)
def test_a_typo_fails_at_once_and_starts_no_chrome(
    no_chrome: Path, argv: list[str], code: int, needle: str
) -> None:
    # "At once" is what the fake Chrome proves: the command failed before any browser
    # start. How long that takes is bench/bench_cli.py's figure, not a test's.
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == code, (result.stdout, result.stderr)
    assert needle in result.stderr
    assert not no_chrome.exists(), "a browser was started before the cheap checks"


def test_a_good_call_does_reach_the_browser(no_chrome: Path) -> None:
    # The counterpart: the fake Chrome is what a valid call starts (and it fails to launch).
    result = CliRunner().invoke(cli, ["run", "demo-shop", "get_product", "--arg", "id=3"])
    assert no_chrome.exists()
    assert result.exit_code == 4, (result.stdout, result.stderr)


# --- --arg read by the schema -----------------------------------------------------------------

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "limit": {"type": "integer"},
        "ratio": {"type": "number"},
        "exact": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "filter": {"type": "object"},
        "either": {"type": ["integer", "string"]},
        "maybe": {"type": ["string", "null"]},
        "choice": {"enum": ["1", "2"]},
        "level": {"enum": [1, 2]},
    },
}


@pytest.mark.parametrize(
    ("pair", "expected"),
    [
        ("query=123", "123"),
        ("query=true", "true"),
        ("query=[1]", "[1]"),
        ("query=", ""),
        ("limit=123", 123),
        ("limit=-4", -4),
        ("ratio=1.5", 1.5),
        ("ratio=2", 2),
        ("exact=true", True),
        ("exact=False", False),
        ('tags=["a", "b"]', ["a", "b"]),
        ('filter={"k": 1}', {"k": 1}),
        ("either=7", 7),
        ("either=seven", "seven"),
        ("maybe=null", None),
        ("maybe=text", "text"),
        ("choice=1", "1"),
        ("level=2", 2),
        ("unknown=5", 5),
        ("unknown=five", "five"),
    ],
)
def test_arg_values_are_read_by_the_schema(pair: str, expected: Any) -> None:
    args = parse_args(None, (pair,), SCHEMA)
    key = pair.partition("=")[0]
    assert args == {key: expected}
    assert type(args[key]) is type(expected)


@pytest.mark.parametrize(
    ("pair", "words"),
    [
        ("limit=12x", "an integer"),
        ("limit=1.5", "an integer"),
        ("ratio=NaN", "a number"),
        ("exact=yes", "true or false"),
        ("tags=a,b", "a JSON array"),
        ("filter=[1]", "a JSON object"),
        ("level=x", "an integer"),
    ],
)
def test_an_arg_that_does_not_fit_says_what_it_takes(pair: str, words: str) -> None:
    with pytest.raises(InvalidArgsError) as caught:
        parse_args(None, (pair,), SCHEMA)
    key = pair.partition("=")[0]
    assert caught.value.field == key
    message = str(caught.value)
    assert f"--arg {pair} is not {words}, which the args schema wants" in message
    assert f"(e.g. --arg {key}=" in message  # an example to copy


def test_without_a_schema_a_value_is_json_when_it_parses() -> None:
    assert parse_args('{"a": 1}', ("b=2", "c=x", "d=[1]")) == {"a": 1, "b": 2, "c": "x", "d": [1]}
    assert value_from_text("k", "3", None) == 3


def test_cli_arg_for_a_string_field_stays_a_string(no_chrome: Path) -> None:
    # search_products' query is a string: "123" must not become a number (it would fail the
    # schema and stop before the browser, exit 3); it passes the checks and reaches Chrome.
    result = CliRunner().invoke(cli, ["run", "demo-shop", "search_products", "--arg", "query=123"])
    assert no_chrome.exists(), result.stderr
    assert "InvalidArgsError" not in result.stderr


# --- bare hosts -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "url"),
    [
        ("google.com", "https://google.com/"),
        ("google.com/search?q=x", "https://google.com/search?q=x"),
        ("shop.localhost:8765", "http://shop.localhost:8765/"),
        ("localhost:3000/a", "http://localhost:3000/a"),
        ("127.0.0.1:9", "http://127.0.0.1:9/"),
        ("https://x.com/home", "https://x.com/home"),
        ("about:blank", "about:blank"),
    ],
)
def test_a_bare_host_becomes_a_url(text: str, url: str) -> None:
    assert as_url(text) == url


def test_tools_takes_a_bare_host(no_chrome: Path) -> None:
    result = CliRunner().invoke(cli, ["tools", "google.com"])
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["url"] == "https://google.com/"
    assert data["matched"] is True
    assert [site["site_id"] for site in data["sites"]] == ["google-com"]


# --- schema errors in JSON words ------------------------------------------------------------------


def test_cli_args_error_uses_json_words(no_chrome: Path) -> None:
    result = CliRunner().invoke(
        cli, ["run", "demo-shop", "search_products", "--args", '{"query": null}']
    )
    assert result.exit_code == 3
    error = json.loads(result.stderr.strip().splitlines()[-1])
    assert error["type"] == "InvalidArgsError"
    assert 'null is not of type "string"' in error["error"]
    assert "None" not in error["error"]


def test_a_misspelt_arg_is_named_with_the_one_meant(no_chrome: Path) -> None:
    result = CliRunner().invoke(cli, ["run", "demo-shop", "get_product", "--arg", "idd=1"])
    assert result.exit_code == 3
    error = json.loads(result.stderr.strip().splitlines()[-1])
    assert error["type"] == "InvalidArgsError"
    assert error["error"] == (
        "demo-shop/get_product (browser-tools/get_product.js): bad args at 'id': \"id\" is a "
        "required property; unknown arg 'idd' (did you mean 'id'?); nothing was sent to the "
        "browser"
    )
    assert not no_chrome.exists()


# --- NEEDS_LOGIN ------------------------------------------------------------------------------


def _site(temporary: bool, name: str = "work") -> Site:
    process = SimpleNamespace(temporary=temporary, user_data_dir=Path("/profiles") / name)
    return Site(SimpleNamespace(process=process), Learnings(roots=[]))  # type: ignore[arg-type]


def _needs_login(site: Site, detail: str, site_id: str = "demo-shop") -> str:
    exc = signal_error(
        f"NEEDS_LOGIN: {detail}",
        site_id=site_id,
        tool="get_orders",
        profile=site.profile_description,
        login=site.login_command(site_id),
    )
    assert isinstance(exc, NeedsLoginError)
    return str(exc)


def test_needs_login_names_the_login_command_with_the_site_filled_in() -> None:
    throwaway = _site(temporary=True)
    message = _needs_login(throwaway, "no session")
    assert "`ego login demo-shop --profile NAME`" in message
    assert "SITE" not in message
    assert "launch with profile=NAME" in message  # Python's words by default
    named = _needs_login(_site(temporary=False), "no session")
    assert "`ego login demo-shop --profile work`" in named
    attached = Site(SimpleNamespace(process=None), Learnings(roots=[]))  # type: ignore[arg-type]
    assert "ego login" not in _needs_login(attached, "no session")
    # A skill has no learning site to name.
    assert "ego login" not in _needs_login(throwaway, "no session", site_id="skill")


def test_needs_login_does_not_repeat_what_the_tool_said() -> None:
    detail = "no shop session; log in by hand at http://shop.localhost:8765/login, then retry"
    message = _needs_login(_site(temporary=True), detail)
    assert message.count("then retry") == 1
    assert message.count("log in") == 1
    assert "do not automate the login" in message
    plain = _needs_login(_site(temporary=True), "no session")
    assert plain.count("then retry") == 1
    assert "log in to the site by hand in a persistent profile" in plain


def test_the_command_line_words_its_profile_hint() -> None:
    site = _site(temporary=True)
    site.profile_hint = CLI_PROFILE_HINT
    message = _needs_login(site, "no session")
    assert "--profile NAME" in message
    assert "profile=NAME" not in message


# --- the demo shop standalone ---------------------------------------------------------------


def _demo_copy(tmp_path: Path, start_url: str) -> Learnings:
    site_dir = tmp_path / "learnings" / "demo-shop"
    shutil.copytree(ROOT / "learnings" / "demo-shop", site_dir)
    manifest = json.loads((site_dir / "manifest.json").read_text())
    manifest["startUrl"] = start_url
    (site_dir / "manifest.json").write_text(json.dumps(manifest))
    return Learnings(roots=[tmp_path / "learnings"])


async def test_a_refused_demo_start_url_says_how_to_start_the_shop(
    browser: ego.Browser, tmp_path: Path
) -> None:
    learnings = _demo_copy(tmp_path, f"http://shop.localhost:{free_port()}/")
    # A context of its own: a shop tab another test left open in the shared browser would
    # be taken instead of the start URL (the site's domain is the host, whatever the port).
    async with await browser.new_context() as context:
        site = Site(context, learnings)
        with pytest.raises(NavigationError) as caught:
            await site.run_tool("demo-shop", "get_product", {"id": 1})
    assert "ERR_CONNECTION_REFUSED" in str(caught.value)
    assert "ego demo --serve" in str(caught.value)


async def test_demo_serve_serves_the_shop_until_stopped(tmp_path: Path) -> None:
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        *PYTHON_EGO,
        "demo",
        "--serve",
        "--port",
        str(port),
        env=ego_env(tmp_path / "profiles"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        info = await read_json_line(process.stdout, timeout=30)
        assert info["url"] == f"http://shop.localhost:{port}/"
        page = await asyncio.to_thread(
            lambda: urllib.request.urlopen(info["local_url"], timeout=10).read()
        )
        assert b'data-testid="product-list"' in page
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), 15)
        except TimeoutError:
            process.kill()
            await process.wait()
            raise
    assert process.returncode == 0
