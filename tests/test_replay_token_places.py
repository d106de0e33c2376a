"""A recording names where the page keeps the tokens it sends in headers, never their values:
a cookie its script reads, a JSON string in sessionStorage, and a header no storage holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ego
from ego.replay.token_places import TOKEN_PLACES_FIELD
from tests.helpers.page_server import PageServer

pytestmark = pytest.mark.chrome

COOKIE_TOKEN = "cookie-token-8c1f2e"
SESSION_TOKEN = "session-token-5d9a0b"
LOOSE_TOKEN = "computed-token-77e3"

PAGE = f"""<!doctype html><script>
document.cookie = "api_key={COOKIE_TOKEN}; path=/";
sessionStorage.setItem("jwt", JSON.stringify("{SESSION_TOKEN}"));
async function go() {{
  await fetch("/data/a.json", {{headers: {{"X-Api-Key": "{COOKIE_TOKEN}"}}}});
  const token = JSON.parse(sessionStorage.getItem("jwt"));
  await fetch("/data/b.json", {{headers: {{Authorization: "JWT " + token}}}});
  await fetch("/data/c.json", {{headers: {{"X-Auth-Token": "{LOOSE_TOKEN}"}}}});
  document.body.dataset.done = "yes";
}}
addEventListener("load", go);
</script><body>tokens</body>"""


async def test_a_recording_says_where_each_header_token_is_kept(
    tab: ego.Tab, server: PageServer, tmp_path: Path
) -> None:
    page = server.route("/tokens/", PAGE)
    for name in ("a", "b", "c"):
        server.route(f"/data/{name}.json", "{}", content_type="application/json")
    har = tmp_path / "tokens.har"
    async with tab.record_har(har) as recording:
        await tab.navigate(page)
        await tab.wait_for(selector="body[data-done]")
        await recording.wait_idle()
    text = har.read_text()
    entries = {
        e["request"]["url"].rsplit("/", 1)[-1]: e for e in json.loads(text)["log"]["entries"]
    }
    assert entries["a.json"][TOKEN_PLACES_FIELD] == [
        {"header": "X-Api-Key", "from": "cookie", "key": "api_key", "path": None, "prefix": ""}
    ]
    assert entries["b.json"][TOKEN_PLACES_FIELD] == [
        {
            "header": "Authorization",
            "from": "sessionStorage",
            "key": "jwt",
            "path": [],
            "prefix": "JWT ",
        }
    ]
    assert TOKEN_PLACES_FIELD not in entries["c.json"]
    assert "X-Auth-Token" in entries["c.json"]["_redacted"]["requestHeaders"]
    # The API calls' entries hold no token (the page's own markup, which has them, is kept
    # as it is: see docs/replay.md).
    for name in ("a.json", "b.json", "c.json"):
        entry = json.dumps(entries[name])
        assert not [t for t in (COOKIE_TOKEN, SESSION_TOKEN, LOOSE_TOKEN) if t in entry], name
