"""Recordings redact secret values in URLs and bodies, and a redacted recording still replays.

The browser test records a page that sends a token in its URL and posts passwords as a form,
as JSON and as a multipart form, greps the HAR for the secrets, then replays it (with the
server gone, and with other secrets) and checks the page gets the same answers.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

import ego
from ego.replay import REDACTED, Har, Matcher, Recorder, build_entry, is_secret_name, replay
from ego.replay.har import Header, Page, PostData
from ego.replay.redaction import redact_body, redact_url
from ego.replay.secrets import strip_har
from tests.helpers.page_server import PageServer

# -- the name rule ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "in_request", "in_response"),
    [
        ("token", True, True),
        ("access_token", True, True),
        ("accessToken", True, True),
        ("csrfmiddlewaretoken", True, True),
        ("api_key", True, True),
        ("apiKey", True, True),
        ("X-API-Key", True, True),
        ("X-Session", True, True),
        ("sessionId", True, True),
        ("password", True, True),
        ("user[password]", True, True),
        ("client_secret", True, True),
        ("X-Amz-Signature", True, True),
        ("auth", True, True),
        ("x-auth", True, True),
        ("pwd", True, True),
        ("key", True, False),
        ("code", True, False),
        ("auth_code", True, True),
        ("verificationCode", True, False),
        ("keyboard", False, False),
        ("keyword", False, False),
        ("monkey", False, False),
        ("author", False, False),
        ("authenticated", False, False),
        ("passenger", False, False),
        ("encode", False, False),
        ("zipcode", False, False),
        ("country_code", False, False),
        ("langCode", False, False),
        ("status_code", False, False),
        ("page", False, False),
        ("q", False, False),
        # Card and identity numbers, one-time codes, in the usual spellings.
        ("pin", True, True),
        ("PIN", True, True),
        ("userPIN", True, True),
        ("card_pin", True, True),
        ("cvv", True, True),
        ("card_cvv", True, True),
        ("cardCvv", True, True),
        ("CVV2", True, True),
        ("cvc", True, True),
        ("ssn", True, True),
        ("customer-ssn", True, True),
        ("social_security_number", True, True),
        ("otp", True, True),
        ("otp_code", True, True),
        ("totp", True, True),
        ("pinned", False, False),
        ("spinner", False, False),
        ("shipping", False, False),
    ],
)
def test_secret_names(name: str, in_request: bool, in_response: bool) -> None:
    assert is_secret_name(name) is in_request
    assert is_secret_name(name, request=False) is in_response


# -- redaction of values ---------------------------------------------------------------------


def test_urls_keep_names_order_and_other_bytes() -> None:
    url = "https://x.com/a%20b?lang=en&access_token=abc%2F1&keyboard=q+w&api_key=&x#frag"
    assert redact_url(url) == (
        "https://x.com/a%20b?lang=en&access_token=REDACTED&keyboard=q+w&api_key=REDACTED&x#frag"
    )
    # OAuth's implicit flow and hash routers put parameters in the fragment.
    assert redact_url("/cb#access_token=t&state=s") == "/cb#access_token=REDACTED&state=s"
    assert redact_url("/app#/login?code=9&next=%2F") == "/app#/login?code=REDACTED&next=%2F"
    assert redact_url("https://x.com/plain") == "https://x.com/plain"


def test_bodies_redact_values_and_keep_the_rest() -> None:
    form = "user=ada&password=hunter%32&remember=1"
    assert redact_body(form, "application/x-www-form-urlencoded") == (
        "user=ada&password=REDACTED&remember=1"
    )
    # fetch() sends a string body as text/plain: JSON is recognised by its shape.
    data = {"user": "ada", "auth": {"pin": 1234, "remember": True}, "items": [{"token": "t"}]}
    redacted = redact_body(json.dumps(data), "text/plain;charset=UTF-8")
    assert redacted is not None
    assert json.loads(redacted) == {
        "user": "ada",
        "auth": {"pin": REDACTED, "remember": True},
        "items": [{"token": REDACTED}],
    }
    # Nothing secret: the body is not rewritten at all (None), spacing included.
    assert redact_body('{"q": "kettle",  "page": 2}', "application/json") is None
    assert redact_body("<p>token=abc</p>", "text/html") is None


def test_multipart_bodies_redact_text_fields_not_files() -> None:
    body = (
        "--XyZ\r\n"
        'Content-Disposition: form-data; name="user"\r\n\r\nada\r\n'
        "--XyZ\r\n"
        'Content-Disposition: form-data; name="password"\r\n\r\nhunter2\r\n'
        "--XyZ\r\n"
        'Content-Disposition: form-data; name="key"; filename="k.txt"\r\n'
        "Content-Type: text/plain\r\n\r\nfile body\r\n"
        "--XyZ--\r\n"
    )
    redacted = redact_body(body, "multipart/form-data; boundary=XyZ")
    assert redacted == body.replace("hunter2", REDACTED)


def test_response_bodies_keep_status_codes_and_numbers() -> None:
    text = ')]}\'\n{"code": 0, "key": "row-1", "session_token": "abc", "expires": 3600}'
    redacted = redact_body(text, "application/json", request=False)
    assert redacted == ')]}\'\n{"code":0,"key":"row-1","session_token":"REDACTED","expires":3600}'


def test_strip_har_redacts_urls_headers_bodies_and_page_titles() -> None:
    entry = build_entry(
        "https://x.com/login?next=%2F&session=sess-1a",
        '{"user": "ada", "access_token": "tok-1b"}',
        status=302,
        headers=[
            ("content-type", "application/json"),
            ("Location", "https://x.com/home?code=code-1c&tab=2"),
        ],
        post_data="user=ada&password=pw-1d",
        post_mime_type="application/x-www-form-urlencoded",
        request_headers={"Referer": "https://x.com/?token=ref-1e", "Accept": "*/*"},
    )
    entry.response.redirect_url = "https://x.com/home?code=code-1c&tab=2"
    played = build_entry("https://x.com/a", "ok")
    played.request.post_data = PostData(
        mime_type="application/x-www-form-urlencoded",
        params=[{"name": "user", "value": "ada"}, {"name": "apiKey", "value": "key-1f"}],
    )
    har = Har(
        pages=[Page(id="page_1", title="https://x.com/login?session=sess-1a")],
        entries=[entry, played],
    )
    text = strip_har(har).dumps()
    for secret in ("sess-1a", "tok-1b", "code-1c", "pw-1d", "ref-1e", "key-1f"):
        assert secret not in text, secret
    request = har.entries[0].request
    assert request.url == "https://x.com/login?next=%2F&session=REDACTED"
    assert request.post_data is not None
    assert request.post_data.text == "user=ada&password=REDACTED"
    assert request.body_size == len("user=ada&password=REDACTED")
    assert [h.value for h in request.headers] == ["https://x.com/?token=REDACTED", "*/*"]
    response = har.entries[0].response
    assert response.redirect_url == "https://x.com/home?code=REDACTED&tab=2"
    assert json.loads(response.body()) == {"user": "ada", "access_token": REDACTED}
    assert response.content.size == len(response.body())
    assert har.pages[0].title == "https://x.com/login?session=REDACTED"
    assert har.entries[1].request.post_data is not None
    assert har.entries[1].request.post_data.params[1] == {"name": "apiKey", "value": REDACTED}
    dumped = har.to_dict()["log"]["entries"][0]["request"]["queryString"]
    assert {"name": "session", "value": REDACTED} in dumped


def test_a_pin_in_a_json_body_is_redacted_and_so_is_its_value_elsewhere() -> None:
    entry = build_entry(
        "https://bank.example/api/pay?confirm=8413",
        '{"ok": true, "echo": "pin 8413 accepted"}',
        method="POST",
        headers={"content-type": "application/json"},
        post_data='{"amount": 20, "card_cvv": "907", "pin": "8413", "note": "8413"}',
    )
    har = strip_har(Har(entries=[entry]))
    post = har.entries[0].request.post_data
    assert post is not None
    assert post.text is not None
    assert json.loads(post.text) == {
        "amount": 20,
        "card_cvv": REDACTED,  # by name: too short to be looked for elsewhere
        "pin": REDACTED,
        "note": REDACTED,  # by value: the pin's
    }
    assert har.entries[0].request.url == "https://bank.example/api/pay?confirm=REDACTED"
    assert "8413" not in har.dumps()
    record = har.entries[0].extra["_redacted"]
    assert record["values"] == {"requestBody": ["pin"], "responseBody": ["pin"], "url": ["pin"]}


def test_a_token_used_as_a_path_segment_is_redacted_wherever_it_appears() -> None:
    token = "9f8e7d6c5b4a3210"
    login = build_entry(
        "https://x.example/api/login",
        json.dumps({"user": "ada", "id": token}),
        method="POST",
        headers=[("content-type", "application/json"), ("Set-Cookie", f"sid={token}; Path=/")],
    )
    items = build_entry(
        f"https://x.example/api/session/{token}/items?view={token}",
        f"<p>session {token}</p>",
        request_headers={"Authorization": "Bearer jwt-5e4d3c2b1a", "X-Trace": f"t-{token}"},
    )
    echo = build_entry(
        "https://x.example/api/echo",
        json.dumps({"auth": "jwt-5e4d3c2b1a"}),
        headers={"content-type": "application/json"},
    )
    har = strip_har(Har(entries=[login, items, echo]))
    text = har.dumps()
    assert token not in text
    assert "jwt-5e4d3c2b1a" not in text
    request = har.entries[1].request
    assert request.url == "https://x.example/api/session/REDACTED/items?view=REDACTED"
    assert [h.value for h in request.headers] == ["t-REDACTED"]
    assert har.entries[1].response.body() == b"<p>session REDACTED</p>"
    assert json.loads(har.entries[0].response.body()) == {"user": "ada", "id": REDACTED}
    # Names only, never the value: where it was found, and the name it was redacted by.
    record = har.entries[1].extra["_redacted"]
    assert record["requestHeaders"] == ["Authorization"]
    assert record["values"] == {
        "requestHeaders": ["sid"],
        "responseBody": ["sid"],
        "url": ["sid"],
    }
    assert har.entries[0].extra["_redacted"]["values"] == {"responseBody": ["sid"]}
    # A redacted path segment matches any segment there, so the recording still replays.
    matcher = Matcher(har.entries)
    found = matcher.match("GET", "https://x.example/api/session/other-token/items?view=v")
    assert found is not None
    assert found[0] == 1
    assert matcher.match("GET", "https://x.example/api/session/other/else?view=v") is None


# -- matching a redacted entry ---------------------------------------------------------------


def test_a_redacted_query_value_matches_any_value_of_that_name() -> None:
    matcher = Matcher([build_entry("https://x.com/api?access_token=REDACTED&page=2", "ok")])
    assert matcher.match("GET", "https://x.com/api?page=2&access_token=anything") is not None
    # Other values and the names themselves must still agree.
    assert matcher.match("GET", "https://x.com/api?access_token=a&page=3") is None
    assert matcher.match("GET", "https://x.com/api?page=2") is None
    assert matcher.match("GET", "https://x.com/api?access_token=a&page=2&x=1") is None


def test_redacted_body_values_match_any_value() -> None:
    form = build_entry(
        "https://x.com/form",
        "form",
        method="POST",
        post_data="user=ada&password=REDACTED",
        post_mime_type="application/x-www-form-urlencoded",
    )
    data = build_entry(
        "https://x.com/json", "json", method="POST", post_data='{"user":"ada","pin":"REDACTED"}'
    )
    matcher = Matcher([form, data])
    form_type = "application/x-www-form-urlencoded"
    assert matcher.match("POST", "https://x.com/form", b"password=x&user=ada", form_type)
    assert matcher.match("POST", "https://x.com/form", b"password=x&user=bob", form_type) is None
    assert matcher.match("POST", "https://x.com/json", b'{"pin": 77, "user": "ada"}', "text/plain")
    assert matcher.match("POST", "https://x.com/json", b'{"pin": 77, "user": "bob"}') is None
    assert matcher.match("POST", "https://x.com/json", b'{"pin": 77}') is None


def test_multipart_bodies_match_whatever_the_boundary() -> None:
    def body(boundary: str, password: str) -> bytes:
        return (
            f"--{boundary}\r\n"
            f'Content-Disposition: form-data; name="user"\r\n\r\nada\r\n'
            f"--{boundary}\r\n"
            f'Content-Disposition: form-data; name="password"\r\n\r\n{password}\r\n'
            f"--{boundary}--\r\n"
        ).encode()

    recorded = build_entry(
        "https://x.com/up",
        "ok",
        method="POST",
        post_data=body("rec", REDACTED),
        post_mime_type="multipart/form-data; boundary=rec",
    )
    matcher = Matcher([recorded])
    assert matcher.match(
        "POST", "https://x.com/up", body("new", "pw"), "multipart/form-data; boundary=new"
    )
    other = body("new", "pw").replace(b"ada", b"bob")
    assert (
        matcher.match("POST", "https://x.com/up", other, "multipart/form-data; boundary=new")
        is None
    )


# -- record, grep, replay --------------------------------------------------------------------

LOGIN_PAGE = """<!doctype html><title>Login</title>
<script src="/login.js"></script>
"""
# The secrets come from the page's URL (a token in the query, passwords in the fragment), so
# no served file holds them: any copy in the HAR can only come from what the page sent.
LOGIN_JS = """const given = new URLSearchParams(location.hash.slice(1));
const token = new URLSearchParams(location.search).get('token');
const answer = async (response) => (await response).json();
window.done = (async () => {
  const form = await answer(fetch('/api/form', {method: 'POST',
    body: new URLSearchParams({user: 'ada', password: given.get('form_password')})}));
  const json = await answer(fetch('/api/json', {method: 'POST',
    headers: {'Content-Type': 'application/json'},
    body: JSON.stringify({user: 'ada', password: given.get('json_password'), remember: true,
                          pin: given.get('pin')})}));
  // The session token the answer handed out, used as a path segment.
  const mine = await answer(fetch('/api/session/' + json.session_token + '/items'));
  const data = new FormData();
  data.append('user', 'ada');
  data.append('password', given.get('file_password'));
  const multi = await answer(fetch('/api/multipart', {method: 'POST', body: data}));
  const items = await answer(fetch('/api/items?access_token=' + encodeURIComponent(token) +
    '&page=2'));
  return {form: form.answer, json: json.answer, multi: multi.answer, items: items.items,
          session: json.session_token, mine: mine.items};
})();
"""


@contextlib.asynccontextmanager
async def isolated_tab(browser: ego.Browser) -> AsyncIterator[ego.Tab]:
    """A tab in a browser context of its own, closed (and the context disposed) after."""
    async with browser.isolated_context() as context:
        yield await context.new_tab()


def login_url(
    server: PageServer, token: str, passwords: tuple[str, str, str], pin: str = "8413"
) -> str:
    form, data, multi = passwords
    return server.url(
        f"/login?token={token}&lang=en"
        f"#form_password={form}&json_password={data}&file_password={multi}&pin={pin}"
    )


async def test_recording_redacts_secrets_and_still_replays(
    browser: ego.Browser, tmp_path: Path
) -> None:
    token, passwords = "tok-51ab7e", ("pw-form-93c1", "pw-json-4d2e", "pw-multi-7f05")
    session = "sess-e6a802"
    live = PageServer()
    try:
        live.route("/login", LOGIN_PAGE)
        live.route("/login.js", LOGIN_JS, content_type="text/javascript")
        reply = "application/json"
        live.route("/api/form", '{"answer": "form ok"}', content_type=reply)
        live.route(
            "/api/json",
            json.dumps({"answer": "json ok", "session_token": session}),
            content_type=reply,
        )
        live.route("/api/multipart", '{"answer": "multipart ok"}', content_type=reply)
        live.route("/api/items", '{"items": ["kettle", "lamp"]}', content_type=reply)
        live.route(f"/api/session/{session}/items", '{"items": ["mine"]}', content_type=reply)
        path = tmp_path / "login.har"
        async with isolated_tab(browser) as tab, Recorder(tab, path) as recorder:
            await tab.navigate(login_url(live, token, passwords))
            recorded = await tab.evaluate("window.done", timeout=30)
            # Bounded generously: on a loaded machine a request can take seconds to end.
            assert await recorder.wait_idle(quiet=0.3, timeout=30), recorder.pending()
        sent = b"\n".join(
            f"{route} {headers}".encode() + b" " + body for _, route, headers, body in live.requests
        )
    finally:
        live.close()

    # The page really sent every secret, in its URL and its bodies.
    assert recorded == {
        "form": "form ok",
        "json": "json ok",
        "multi": "multipart ok",
        "items": ["kettle", "lamp"],
        "session": session,
        "mine": ["mine"],
    }
    for secret in (token, *passwords, "8413"):
        assert secret.encode() in sent, secret

    text = path.read_text(encoding="utf-8")
    for secret in (token, *passwords, session, "8413"):
        assert secret not in text, secret
    # Names stay, values become REDACTED.
    for kept in (
        "token=REDACTED&lang=en",
        "access_token=REDACTED&page=2",
        "user=ada&password=REDACTED",
        '\\"password\\":\\"REDACTED\\"',
        '\\"session_token\\":\\"REDACTED\\"',
        'name=\\"password\\"\\r\\n\\r\\nREDACTED\\r\\n',
    ):
        assert kept in text, kept
    har = Har.load(path)
    by_path = {e.request.url.split("?")[0].split("#")[0]: e for e in har.entries}
    json_post = by_path[f"{live.origin}/api/json"].request.post_data
    assert json_post is not None
    assert json_post.text is not None
    assert json.loads(json_post.text) == {
        "user": "ada",
        "password": REDACTED,
        "remember": True,
        "pin": REDACTED,
    }
    # The session token's path segment was redacted by value (its name is in _redacted).
    assert f"{live.origin}/api/session/REDACTED/items" in by_path
    record = by_path[f"{live.origin}/api/session/REDACTED/items"].extra["_redacted"]
    assert record["values"] == {"url": ["session_token"]}

    # The server is gone and the secrets are new: only the redacted HAR answers.
    other = ("other-1", "other-2", "other-3")
    async with isolated_tab(browser) as tab, replay(tab, path) as replayer:
        await tab.navigate(login_url(live, "other-token", other))
        replayed = await tab.evaluate("window.done", timeout=30)
    assert replayed == {**recorded, "session": REDACTED}
    assert not replayer.unmatched
    answered = {
        (r.method, r.url.split("?")[0]) for r in replayer.requests if r.outcome == "fulfilled"
    }
    for method, route in [
        ("GET", "/login"),
        ("POST", "/api/form"),
        ("POST", "/api/json"),
        ("POST", "/api/multipart"),
        ("GET", "/api/items"),
        ("GET", "/api/session/REDACTED/items"),
    ]:
        assert (method, live.url(route)) in answered, route


def test_a_path_segment_redacted_by_value_drafts_as_an_arg(tmp_path: Path) -> None:
    from ego.learning.catalog.registry import Learnings
    from ego.learning.suggest import suggest

    token = "9f8e7d6c5b4a3210"
    page = build_entry("https://x.example/", "<html></html>", resource_type="document")
    page.response.headers.append(Header("Set-Cookie", f"sid={token}; Path=/"))
    items = build_entry(
        f"https://x.example/api/session/{token}/items",
        '{"items": ["lamp"]}',
        headers={"content-type": "application/json"},
        resource_type="fetch",
    )
    strip_har(Har(entries=[page, items])).save(tmp_path / "s.har")
    report = suggest("x", [tmp_path / "s.har"], learnings=Learnings(workspace=tmp_path / "ws"))
    (draft,) = report.drafts
    assert draft.endpoint == "GET /api/session/{session}/items"
    assert "examples" not in draft.args["session"]  # a secret: no value to show
    assert any("redacted when recording" in note for note in draft.notes)
