"""Matching a URL's host against a manifest's ``domains``."""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["match_domain", "normalize_host"]

_DEFAULT_PORTS = {"http": 80, "https": 443}


def normalize_host(host: str) -> str:
    """Lower-case, without a trailing dot (``X.COM.`` and ``x.com`` are the same host)."""
    return host.strip().rstrip(".").lower()


def match_domain(url: str, domains: tuple[str, ...] | list[str]) -> str | None:
    """Return the first entry of ``domains`` that ``url`` matches, or None.

    An entry is an exact host (``x.com``) or a wildcard (``*.x.com``) that matches any
    subdomain but not the bare domain. Hosts compare case-insensitively and without a
    trailing dot. An entry without a port matches any port; ``host:port`` matches that port
    only (the scheme's default port counts when the URL gives none). Only ``http`` and
    ``https`` URLs match: ``about:blank``, ``data:``, ``file:`` and the like never do.
    """
    try:
        parts = urlsplit(url.strip())
        if parts.scheme.lower() not in ("http", "https"):
            return None
        host = normalize_host(parts.hostname or "")
        port = parts.port or _DEFAULT_PORTS.get(parts.scheme.lower())
    except ValueError:
        return None
    if not host:
        return None
    for entry in domains:
        pattern, _, wanted_port = entry.strip().partition(":")
        if wanted_port and (not wanted_port.isdigit() or int(wanted_port) != port):
            continue
        pattern = normalize_host(pattern)
        if pattern.startswith("*."):
            if host.endswith(pattern[1:]) and host != pattern[2:]:
                return entry
        elif host == pattern:
            return entry
    return None
