"""One word for one thing: ``--start-url [SITE=]URL`` (or ``$EGO_START_URL``) moves a site's
start URL on every command, before or after its name, and a URL may be typed as a bare host
(``shop.localhost:9000``) wherever a command takes one.

Commands run as real subprocesses and attach with ``--endpoint`` to the session's Chrome.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import click
import pytest

import ego
from ego.cli.common import parse_start_urls
from ego.demo import DemoServer
from ego.learning.catalog.matching import as_url
from tests.helpers.browsers import websocket_url
from tests.helpers.commands import ego_async, ego_env, ego_sync, http_endpoint


@pytest.fixture(scope="module")
def shop() -> Iterator[DemoServer]:
    with DemoServer() as server:
        yield server


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return ego_env(tmp_path_factory.mktemp("profiles"))


def _bare(shop: DemoServer) -> str:
    """The shop's address as a person types it: host and port, no scheme."""
    return urlsplit(shop.url).netloc


def test_a_url_typed_without_a_scheme_is_read_as_a_person_means_it() -> None:
    assert as_url("google.com") == "https://google.com/"
    assert as_url("shop.localhost:9000") == "http://shop.localhost:9000/"
    assert as_url(" localhost:9000/cart?x=1 ") == "http://localhost:9000/cart?x=1"
    assert as_url("127.0.0.1:8080") == "http://127.0.0.1:8080/"
    for text in ("about:blank", "data:text/html,hi", "javascript:void 0", "https://x.com/a"):
        assert as_url(text) == text


def test_start_url_values_name_their_site_or_the_commands() -> None:
    pairs = parse_start_urls(
        ["demo-shop=shop.localhost:9000", "http://127.0.0.1:9/?q=a=b", "shop.localhost=x.test"],
        "wiki",
    )
    assert pairs == (
        ("demo-shop", "http://shop.localhost:9000/"),
        ("wiki", "http://127.0.0.1:9/?q=a=b"),
        ("shop.localhost", "https://x.test/"),
    )
    with pytest.raises(click.UsageError, match="names no site"):
        parse_start_urls(["shop.localhost:9000"], None)


def test_a_bare_start_url_on_a_command_without_a_site_is_a_usage_error(
    env: dict[str, str], tmp_path: Path
) -> None:
    refused = ego_sync("tabs", "--start-url", "shop.localhost:9000", env=env, cwd=tmp_path)
    assert refused.returncode == 2, refused
    assert "give SITE=URL" in refused.stderr, refused


@pytest.mark.chrome
async def test_every_command_takes_the_start_url_one_way(
    env: dict[str, str], tmp_path: Path, shop: DemoServer, ported_browser: ego.Browser
) -> None:
    endpoint = http_endpoint(websocket_url(ported_browser))
    bare = _bare(shop)
    common = ("--endpoint", endpoint)
    # After the command's name, bare: for the command's own site.
    ran = await ego_async(
        "run", "demo-shop", "get_product", "--arg", "id=1", "--start-url", bare, *common,
        env=env, cwd=tmp_path,
    )  # fmt: skip
    assert ran.returncode == 0, ran
    assert ran.json()["id"] == 1
    # Before it, naming the site; and from the environment.
    ran = await ego_async(
        "--start-url", f"demo-shop={bare}", "run", "demo-shop", "get_cart", *common,
        env=env, cwd=tmp_path,
    )  # fmt: skip
    assert ran.returncode == 0, ran
    assert ran.json()["count"] == 0
    moved = {**env, "EGO_START_URL": f"demo-shop={shop.url} other=http://127.0.0.1:9/"}
    ran = await ego_async("run", "demo-shop", "whoami", *common, env=moved, cwd=tmp_path)
    assert ran.returncode == 0, ran
    assert ran.json()["logged_in"] is False
    # A skill's start URL is its domain's; its old spelling --url still works.
    for option in ("--start-url", "--url"):
        found = await ego_async(
            "skill", "run", "shop.localhost/search-products", "--arg", "query=lamp",
            option, bare, *common, env=env, cwd=tmp_path,
        )  # fmt: skip
        assert found.returncode == 0, found
        assert found.json()["count"] >= 1
    # ego record --run loads the site's start URL, moved the same way.
    har = tmp_path / "cart.har"
    recorded = await ego_async(
        "record", "--run", "demo-shop", "get_cart", "--har", str(har), "--start-url", bare,
        *common, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert recorded.returncode == 0, recorded
    assert recorded.json()["case"]["url"] == shop.url
    assert json.loads((tmp_path / "cases.json").read_text())["cases"][0]["url"] == shop.url


@pytest.mark.chrome
async def test_a_page_typed_as_a_bare_host_opens(
    env: dict[str, str], tmp_path: Path, shop: DemoServer, ported_browser: ego.Browser
) -> None:
    endpoint = http_endpoint(websocket_url(ported_browser))
    bare = _bare(shop)
    ran = await ego_async(
        "run", "demo-shop", "list_products", "--arg", "limit=2", "--url", bare,
        "--endpoint", endpoint, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert ran.returncode == 0, ran
    assert ran.json()["count"] == 2
    har = tmp_path / "page.har"
    recorded = await ego_async(
        "record", f"{bare}/cart", "--har", str(har), "--endpoint", endpoint, env=env, cwd=tmp_path
    )
    assert recorded.returncode == 0, recorded
    urls = [entry["request"]["url"] for entry in json.loads(har.read_text())["log"]["entries"]]
    assert shop.url_for("/cart") in urls
