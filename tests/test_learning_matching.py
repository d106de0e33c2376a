"""URL matching against a manifest's ``domains`` (ego.learning.catalog.matching.match_domain)."""

from __future__ import annotations

import pytest

from ego.learning.catalog.matching import match_domain, normalize_host


@pytest.mark.parametrize(
    ("url", "domains", "expected"),
    [
        # exact host
        ("https://x.com/home", ["x.com"], "x.com"),
        ("https://x.com", ["x.com"], "x.com"),
        ("https://api.x.com/", ["x.com"], None),
        ("https://y.com/", ["x.com"], None),
        # the first matching entry is the one reported
        ("https://x.com/", ["y.com", "x.com", "*.x.com"], "x.com"),
        # wildcard: any subdomain, any depth, but not the bare domain
        ("https://mobile.x.com/", ["*.x.com"], "*.x.com"),
        ("https://a.b.x.com/", ["*.x.com"], "*.x.com"),
        ("https://x.com/", ["*.x.com"], None),
        ("https://x.com/", ["*.x.com", "x.com"], "x.com"),
        # lookalikes never match
        ("https://evilx.com/", ["*.x.com"], None),
        ("https://evilx.com/", ["x.com"], None),
        ("https://x.com.evil.com/", ["x.com"], None),
        ("https://x.com.evil.com/", ["*.x.com"], None),
        ("https://x.com@evil.com/", ["x.com"], None),
        ("https://evil.com/?u=https://x.com/", ["x.com", "*.x.com"], None),
        ("https://evil.com/#x.com", ["x.com"], None),
        # ports: an entry without a port matches any port
        ("http://127.0.0.1:8123/a", ["127.0.0.1"], "127.0.0.1"),
        ("https://x.com:8443/", ["x.com"], "x.com"),
        ("https://m.x.com:8443/", ["*.x.com"], "*.x.com"),
        # host:port matches that port only
        ("http://127.0.0.1:8123/a", ["127.0.0.1:8123"], "127.0.0.1:8123"),
        ("http://127.0.0.1:8124/a", ["127.0.0.1:8123"], None),
        ("http://127.0.0.1/a", ["127.0.0.1:8123"], None),
        ("https://m.x.com:8443/", ["*.x.com:8443"], "*.x.com:8443"),
        ("https://m.x.com:9443/", ["*.x.com:8443"], None),
        # default ports count when the URL gives none
        ("https://x.com/", ["x.com:443"], "x.com:443"),
        ("http://x.com/", ["x.com:80"], "x.com:80"),
        ("http://x.com/", ["x.com:443"], None),
        ("https://x.com/", ["x.com:80"], None),
        ("https://x.com:443/", ["x.com:443"], "x.com:443"),
        # case-insensitive, host and entry
        ("https://X.COM/Home", ["x.com"], "x.com"),
        ("https://x.com/", ["X.Com"], "X.Com"),
        ("https://WWW.X.COM/", ["*.X.com"], "*.X.com"),
        ("HTTPS://x.com/", ["x.com"], "x.com"),
        # trailing dot, host and entry
        ("https://x.com./", ["x.com"], "x.com"),
        ("https://x.com/", ["x.com."], "x.com."),
        ("https://www.x.com./", ["*.x.com"], "*.x.com"),
        ("https://x.com.:8443/", ["x.com.:8443"], "x.com.:8443"),
        # non-http URLs never match
        ("about:blank", ["x.com", "*.x.com"], None),
        ("data:text/html,<p>x.com</p>", ["x.com"], None),
        ("data://x.com/", ["x.com"], None),
        ("javascript:location='https://x.com'", ["x.com"], None),
        ("file://x.com/etc/passwd", ["x.com"], None),
        ("ftp://x.com/", ["x.com"], None),
        ("chrome://x.com/", ["x.com"], None),
        ("chrome-extension://x.com/", ["x.com"], None),
        ("blob:https://x.com/0f5c", ["x.com"], None),
        ("", ["x.com"], None),
        ("x.com", ["x.com"], None),
        ("http://x.com:99999/", ["x.com"], None),
    ],
)
def test_match_domain(url: str, domains: list[str], expected: str | None) -> None:
    assert match_domain(url, domains) == expected


def test_match_domain_accepts_a_tuple_and_an_empty_list() -> None:
    assert match_domain("https://x.com/", ("x.com",)) == "x.com"
    assert match_domain("https://x.com/", []) is None


@pytest.mark.parametrize(
    ("host", "expected"),
    [("X.COM.", "x.com"), (" x.com ", "x.com"), ("Sub.X.com", "sub.x.com"), ("x.com", "x.com")],
)
def test_normalize_host(host: str, expected: str) -> None:
    assert normalize_host(host) == expected
