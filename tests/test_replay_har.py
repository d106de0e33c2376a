"""The HAR model, matching rules, secret stripping and fulfil parameters: no browser needed."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from ego.errors import HarFormatError
from ego.replay import Har, Matcher, Recorder, build_entry, is_secret_header, strip_har
from ego.replay.answers import fulfill_params
from ego.replay.har import Entry, Header

# What Chrome DevTools' "Save all as HAR" writes, trimmed: a text body, a base64 body, a failed
# request (status 0, _error), custom fields, and fields the spec calls required left out.
CHROME_HAR = {
    "log": {
        "version": "1.2",
        "creator": {"name": "WebInspector", "version": "537.36"},
        "pages": [{"startedDateTime": "2025-01-15T12:00:00.000Z", "id": "page_1", "title": "x"}],
        "entries": [
            {
                "_initiator": {"type": "other"},
                "_priority": "VeryHigh",
                "_resourceType": "document",
                "pageref": "page_1",
                "startedDateTime": "2025-01-15T12:00:00.000Z",
                "time": 12.5,
                "request": {
                    "method": "GET",
                    "url": "https://example.org/",
                    "httpVersion": "http/2.0",
                    "headers": [{"name": ":authority", "value": "example.org"}],
                },
                "response": {
                    "status": 200,
                    "statusText": "",
                    "headers": [
                        {"name": "content-type", "value": "text/html; charset=utf-8"},
                        {"name": "content-encoding", "value": "br"},
                        {"name": "content-length", "value": "9"},
                    ],
                    "content": {"size": 20, "mimeType": "text/html", "text": "<p>héllo</p>"},
                },
            },
            {
                "_resourceType": "image",
                "request": {"method": "GET", "url": "https://example.org/a.png"},
                "response": {
                    "status": "200",
                    "content": {
                        "mimeType": "image/png",
                        "encoding": "base64",
                        "text": base64.b64encode(b"\x89PNG\r\n\x1a\n").decode(),
                    },
                },
            },
            {
                "request": {"method": "GET", "url": "https://gone.example/x.js"},
                "response": {"status": 0, "_error": "net::ERR_NAME_NOT_RESOLVED", "content": {}},
            },
        ],
    }
}


def test_chrome_har_loads_with_missing_fields_and_keeps_custom_ones(tmp_path: Path) -> None:
    path = tmp_path / "chrome.har"
    path.write_text(json.dumps(CHROME_HAR), encoding="utf-8")
    har = Har.load(path)

    page, image, failed = har.entries
    assert page.resource_type == "document"
    assert page.response.body() == "<p>héllo</p>".encode()
    assert image.response.status == 200
    assert image.response.body() == b"\x89PNG\r\n\x1a\n"
    assert failed.failed == "net::ERR_NAME_NOT_RESOLVED"
    assert page.failed is None

    # Saving writes a spec-complete HAR and keeps the custom fields for the next reader.
    again = Har.load(har.save(tmp_path / "again.har"))
    data = json.loads((tmp_path / "again.har").read_text(encoding="utf-8"))
    written = data["log"]["entries"][0]
    assert written["_priority"] == "VeryHigh"
    assert written["_initiator"] == {"type": "other"}
    for key in ("cookies", "headers", "queryString", "headersSize", "bodySize"):
        assert key in written["request"]
    assert written["timings"] == {"send": 0, "wait": 0, "receive": 0}
    assert [e.response.body() for e in again.entries] == [e.response.body() for e in har.entries]


def test_playwright_har_with_attached_bodies_and_form_params(tmp_path: Path) -> None:
    (tmp_path / "bodies").mkdir()
    (tmp_path / "bodies" / "1.json").write_bytes(b'{"ok": true}')
    playwright = {
        "log": {
            "version": "1.2",
            "creator": {"name": "Playwright", "version": "1.49.0"},
            "entries": [
                {
                    "request": {
                        "method": "POST",
                        "url": "https://example.org/api?b=2&a=1",
                        "postData": {
                            "mimeType": "application/x-www-form-urlencoded",
                            "params": [{"name": "q", "value": "ego"}, {"name": "n", "value": "1"}],
                        },
                    },
                    "response": {
                        "status": 201,
                        "content": {"mimeType": "application/json", "_file": "bodies/1.json"},
                    },
                }
            ],
        }
    }
    path = tmp_path / "pw.har"
    path.write_text(json.dumps(playwright), encoding="utf-8")

    entry = Har.load(path).entries[0]
    assert entry.response.body() == b'{"ok": true}'
    assert entry.request.post_data is not None
    assert entry.request.post_data.body() == b"q=ego&n=1"
    # Form fields match in any order, and so does the query.
    matcher = Matcher([entry])
    assert matcher.match(
        "POST", "https://example.org/api?a=1&b=2", b"n=1&q=ego", "application/x-www-form-urlencoded"
    )


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("not json", "not JSON"),
        ('{"log": {}}', "log.entries"),
        ('{"log": {"entries": [{"request": {"method": "GET"}}]}}', "request.url"),
        ('{"log": {"entries": [1]}}', "is not an object"),
    ],
)
def test_unusable_har_is_refused_with_the_reason(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "bad.har"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(HarFormatError, match=problem) as caught:
        Har.load(path)
    assert caught.value.path == str(path)


def test_attached_body_outside_the_har_folder_is_refused(tmp_path: Path) -> None:
    har = {
        "log": {
            "entries": [
                {
                    "request": {"method": "GET", "url": "https://example.org/"},
                    "response": {"status": 200, "content": {"_file": "../../etc/passwd"}},
                }
            ]
        }
    }
    (tmp_path / "h.har").write_text(json.dumps(har), encoding="utf-8")
    with pytest.raises(HarFormatError, match="leaves the HAR folder"):
        Har.load(tmp_path / "h.har")


def chosen(found: tuple[int, Entry] | None) -> Entry | None:
    return found[1] if found is not None else None


def test_matching_normalises_urls_and_ignores_chosen_params() -> None:
    entry = build_entry("https://Example.org:443/a%20b?x=1&y=2#frag", "ok")
    matcher = Matcher([entry], ignore_params={"_"})
    assert matcher.match("GET", "https://example.org/a b?y=2&x=1&_=123") is not None
    assert matcher.match("POST", "https://example.org/a b?y=2&x=1") is None
    assert matcher.match("GET", "https://example.org/a b?y=2") is None
    assert matcher.match("GET", "http://example.org/a b?y=2&x=1") is None


def test_best_query_mode_takes_the_closest_entry() -> None:
    near = build_entry("https://example.org/s?q=ego&page=1", "near")
    far = build_entry("https://example.org/s?q=other", "far")
    exact = Matcher([near, far])
    best = Matcher([near, far], query="best")
    assert exact.match("GET", "https://example.org/s?q=ego&page=2") is None
    assert chosen(best.match("GET", "https://example.org/s?q=ego&page=2")) is near


def test_post_body_decides_between_entries_and_json_key_order_does_not_matter() -> None:
    first = build_entry("https://example.org/gql", "one", method="POST", post_data='{"a":1,"b":2}')
    second = build_entry("https://example.org/gql", "two", method="POST", post_data='{"a":3}')
    any_body = build_entry("https://example.org/gql", "any", method="POST")
    matcher = Matcher([first, second, any_body])

    url, mime = "https://example.org/gql", "application/json"
    assert chosen(matcher.match("POST", url, b'{ "b": 2, "a": 1 }', mime)) is first
    assert chosen(matcher.match("POST", url, b'{"a":3}', mime)) is second
    # A body no entry recorded falls to the entry that recorded none.
    assert chosen(matcher.match("POST", url, b'{"a":9}', mime)) is any_body
    assert Matcher([first]).match("POST", "https://example.org/gql", b'{"a":9}') is None


def test_equal_entries_are_served_in_recorded_order_then_the_last_repeats() -> None:
    entries = [build_entry("https://example.org/poll", body) for body in ("pending", "done")]
    matcher = Matcher(entries)
    served = []
    for _ in range(3):
        found = matcher.match("GET", "https://example.org/poll")
        assert found is not None
        served.append(found[1].response.body())
    assert served == [b"pending", b"done", b"done"]


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("Cookie", True),
        ("set-cookie", True),
        ("Authorization", True),
        ("Proxy-Authorization", True),
        ("x-csrf-token", True),
        ("X-CSRFToken", True),
        ("x-api-key", True),
        ("X-Goog-Api-Key", True),
        ("x-twitter-auth-type", True),
        ("x-session-id", True),
        ("Access-Control-Allow-Credentials", False),
        ("Access-Control-Allow-Headers", False),
        ("content-type", False),
        ("www-authenticate", False),
        ("content-security-policy", False),
    ],
)
def test_secret_header_names(name: str, secret: bool) -> None:
    assert is_secret_header(name) is secret


def test_strip_har_removes_secret_headers_and_cookie_arrays() -> None:
    entry = build_entry(
        "https://example.org/",
        "ok",
        headers=[("content-type", "text/plain"), ("Set-Cookie", "sid=1"), ("Set-Cookie", "b=2")],
        request_headers={"Cookie": "sid=1", "Authorization": "Bearer t", "Accept": "*/*"},
    )
    entry.request.cookies = [{"name": "sid", "value": "1"}]
    entry.response.cookies = [{"name": "sid", "value": "1"}]
    har = strip_har(Har(entries=[entry]))
    text = har.dumps()
    assert "sid=1" not in text
    assert "Bearer t" not in text
    assert [h.name for h in har.entries[0].request.headers] == ["Accept"]
    assert har.entries[0].request.cookies == [] == har.entries[0].response.cookies


def test_fulfil_params_drop_what_no_longer_fits_the_decoded_body() -> None:
    entry = build_entry(
        "https://example.org/",
        "<p>hi</p>",
        status=301,
        headers=[
            ("content-type", "text/html"),
            ("Content-Encoding", "gzip"),
            ("Content-Length", "3"),
            ("Transfer-Encoding", "chunked"),
            ("Connection", "keep-alive"),
            (":status", "301"),
            ("set-cookie", "a=1\nb=2"),
        ],
    )
    entry.response.redirect_url = "https://example.org/next"
    params = fulfill_params(entry)
    names = [h["name"].lower() for h in params["responseHeaders"]]
    assert names == ["content-type", "set-cookie", "set-cookie", "location"]
    assert params["responseCode"] == 301
    assert params["responsePhrase"] == "Moved Permanently"
    assert base64.b64decode(params["body"]) == b"<p>hi</p>"


def test_text_body_is_encoded_in_its_declared_charset() -> None:
    entry = build_entry("https://example.org/", "café", headers={"content-type": "text/html"})
    entry.response.headers = [Header("Content-Type", "text/html; charset=iso-8859-1")]
    assert entry.response.body() == "café".encode("latin-1")


class _FakeTab:
    url = "https://example.org/"


async def test_recorder_builds_entries_whatever_order_events_were_handled_in() -> None:
    # Each CDP event kind runs in its own subscription task, so a request's loadingFinished
    # can be handled before its responseReceived (seen under load). Feed them shuffled.
    recorder = Recorder(_FakeTab(), max_body_size=0)  # type: ignore[arg-type]
    base = "https://example.org"
    events: list[tuple[str, dict[str, Any]]] = [
        ("finished", {"requestId": "2", "timestamp": 2.5, "encodedDataLength": 10}),
        (
            "response",
            {
                "requestId": "2",
                "type": "Fetch",
                "response": {
                    "status": 200,
                    "statusText": "OK",
                    "mimeType": "application/json",
                    "headers": {"Content-Type": "application/json"},
                },
            },
        ),
        (
            "request",
            {
                "requestId": "1",
                "type": "Document",
                "timestamp": 1.0,
                "wallTime": 1e9,
                "request": {"method": "GET", "url": f"{base}/old", "headers": {}},
            },
        ),
        (
            "request",
            {
                "requestId": "1",
                "type": "Document",
                "timestamp": 1.1,
                "wallTime": 1e9,
                "request": {"method": "GET", "url": f"{base}/", "headers": {}},
                "redirectResponse": {"status": 301, "headers": {"Location": "/"}},
            },
        ),
        (
            "request",
            {
                "requestId": "2",
                "type": "Fetch",
                "timestamp": 2.0,
                "wallTime": 1e9,
                "request": {"method": "GET", "url": f"{base}/api", "headers": {}},
            },
        ),
        ("failed", {"requestId": "3", "timestamp": 3.0, "errorText": "net::ERR_FAILED"}),
        (
            "request",
            {
                "requestId": "3",
                "type": "Image",
                "timestamp": 2.9,
                "wallTime": 1e9,
                "request": {"method": "GET", "url": f"{base}/x.png", "headers": {}},
            },
        ),
        (
            "request",
            {
                "requestId": "4",
                "type": "Script",
                "timestamp": 3.1,
                "wallTime": 1e9,
                "request": {"method": "GET", "url": f"{base}/slow.js", "headers": {}},
            },
        ),
    ]
    handlers = {
        "request": recorder._on_request,
        "response": recorder._on_response,
        "finished": recorder._on_finished,
        "failed": recorder._on_failed,
    }
    for kind, params in events:
        handlers[kind](params)

    # Request 1 has no final response yet, 4 has not ended: both still in flight.
    assert recorder.pending() == [f"GET {base}/", f"GET {base}/slow.js"]
    entries = recorder.har.entries
    assert [(e.request.url, e.response.status) for e in entries] == [
        (f"{base}/old", 301),
        (f"{base}/", 0),
        (f"{base}/api", 200),
        (f"{base}/x.png", 0),
        (f"{base}/slow.js", 0),
    ]
    assert entries[0].response.redirect_url == "/"
    assert entries[2].resource_type == "fetch"
    assert entries[2].response.extra == {"_bodyTruncated": True}
    assert entries[3].failed == "net::ERR_FAILED"
    assert entries[4].failed == "not finished"
