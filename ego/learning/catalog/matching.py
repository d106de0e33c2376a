"""Matching a URL's host against a manifest's ``domains``, naming a URL's domain, and reading
a URL as a person types it (:func:`as_url`).

A domain entry is a host (``x.com``), a wildcard (``*.x.com``), either with an optional
``:port``; an IPv6 address is written in brackets (``[::1]:8765``).
"""

from __future__ import annotations

import ipaddress
import re
from typing import Final
from urllib.parse import urlsplit

__all__ = [
    "as_url",
    "domain_of",
    "host_suffixes",
    "index_keys",
    "is_too_broad",
    "match_domain",
    "match_host",
    "normalize_host",
    "split_domain",
    "url_host",
]

_DEFAULT_PORTS = {"http": 80, "https": 443}


def normalize_host(host: str) -> str:
    """Lower-case, without a trailing dot (``X.COM.`` and ``x.com`` are the same host)."""
    return host.strip().rstrip(".").lower()


def split_domain(entry: str) -> tuple[str, str | None]:
    """A domain entry's host (normalised, IPv6 without brackets) and its port text, or None.

    ``"127.0.0.1:8765"`` gives ``("127.0.0.1", "8765")``, ``"[::1]:8765"`` gives
    ``("::1", "8765")``, ``"X.com"`` gives ``("x.com", None)``. An unbracketed IPv6 address
    (``"::1"``) is all host.
    """
    text = entry.strip()
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else None
        return host.lower(), port or None
    if text.count(":") > 1:
        return text.lower(), None
    host, _, port = text.partition(":")
    return normalize_host(host), port or None


def url_host(url: str) -> tuple[str, int | None] | None:
    """The host (normalised) and port (the scheme's default when none is given) that
    :func:`match_domain` matches ``url`` by, or None when it matches nothing: not http(s),
    no host, or a port that is not a number.

    Parsing the URL once and matching with :func:`match_host` answers what
    :func:`match_domain` answers, for any number of sites.
    """
    try:
        parts = urlsplit(url.strip())
        scheme = parts.scheme.lower()
        if scheme not in _DEFAULT_PORTS:
            return None
        host = normalize_host(parts.hostname or "")
        port = parts.port or _DEFAULT_PORTS.get(scheme)
    except ValueError:
        return None
    return (host, port) if host else None


def match_host(host: str, port: int | None, domains: tuple[str, ...] | list[str]) -> str | None:
    """Return the first entry of ``domains`` that a URL with this host and port matches.

    ``host`` and ``port`` are as :func:`url_host` gives them; the rules are
    :func:`match_domain`'s.
    """
    for entry in domains:
        pattern, wanted_port = split_domain(entry)
        if wanted_port and (not wanted_port.isdigit() or int(wanted_port) != port):
            continue
        if pattern.startswith("*."):
            if host.endswith(pattern[1:]) and host != pattern[2:]:
                return entry
        elif host == pattern:
            return entry
    return None


def match_domain(url: str, domains: tuple[str, ...] | list[str]) -> str | None:
    """Return the first entry of ``domains`` that ``url`` matches, or None.

    An entry is an exact host (``x.com``) or a wildcard (``*.x.com``) that matches any
    subdomain but not the bare domain. Hosts compare case-insensitively and without a
    trailing dot. An entry without a port matches any port; ``host:port`` matches that port
    only (the scheme's default port counts when the URL gives none); an IPv6 host is written
    in brackets (``[::1]:8765``). Only ``http`` and ``https`` URLs match: ``about:blank``,
    ``data:``, ``file:`` and the like never do.
    """
    target = url_host(url)
    if target is None:
        return None
    return match_host(target[0], target[1], domains)


def index_keys(entry: str) -> tuple[str, str]:
    """Where an index files a domain entry: ``("exact", host)`` or ``("suffix", domain)``.

    A URL's host can match the entry only when it equals the exact host, or when one of its
    dot-suffixes (:func:`host_suffixes`) equals a wildcard's domain; the port is left to
    :func:`match_host`.
    """
    pattern, _ = split_domain(entry)
    if pattern.startswith("*."):
        return ("suffix", pattern[2:])
    return ("exact", pattern)


def host_suffixes(host: str) -> list[str]:
    """What follows each dot of ``host``: ``a.b.c`` gives ``["b.c", "c"]``.

    A wildcard ``*.d`` matches ``host`` exactly when ``d`` is one of these.
    """
    found = []
    dot = host.find(".")
    while dot >= 0:
        found.append(host[dot + 1 :])
        dot = host.find(".", dot + 1)
    return found


def domain_of(url: str | None) -> str | None:
    """The domain entry naming exactly ``url``'s site: its host, with its port when given.

    ``http://127.0.0.1:8765/x`` gives ``127.0.0.1:8765`` (the port is what tells one local
    app from another), ``https://X.com/`` gives ``x.com``, ``http://[::1]:8765/`` gives
    ``[::1]:8765``. A port that is the scheme's default is left out. None for a URL that is
    not http(s) or has no host.
    """
    if not url:
        return None
    try:
        parts = urlsplit(url.strip())
        scheme = parts.scheme.lower()
        port = parts.port
    except ValueError:
        return None
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    host = normalize_host(parts.hostname)
    if ":" in host:
        host = f"[{host}]"
    if port is None or port == _DEFAULT_PORTS[scheme]:
        return host
    return f"{host}:{port}"


def is_too_broad(entry: str) -> bool:
    """True for ``localhost`` or a loopback (or unspecified) address without a port.

    Such an entry matches every local app on every port, so a site saved with it would
    claim pages that are not its own.
    """
    host, port = split_domain(entry)
    if port is not None:
        return False
    if host == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


# A scheme at the start of a text (``https:``, ``about:``), unless what follows the colon is
# a port (``shop.localhost:8765``, ``localhost:8765/cart``).
_SCHEME: Final = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:(?!\d+(?:[/?#]|$))")


def as_url(text: str) -> str:
    """``text`` as a person types a URL, made one: a bare host or ``host/path`` gets a scheme
    (``http`` for a local host, else ``https``) and a path.

    ``google.com`` becomes ``https://google.com/``, ``shop.localhost:8765`` becomes
    ``http://shop.localhost:8765/``; a text with a scheme (``about:blank``, ``data:...``)
    is returned as it is, stripped.
    """
    text = text.strip()
    if not text or _SCHEME.match(text):
        return text
    host = urlsplit(f"//{text}").hostname or ""
    local = host in ("localhost", "127.0.0.1", "::1") or host.endswith(".localhost")
    url = f"{'http' if local else 'https'}://{text}"
    return url if urlsplit(url).path else url + "/"
