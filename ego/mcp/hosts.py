"""Which ``Host`` and ``Origin`` headers ``ego mcp --http`` answers, on whatever address it is
bound to.

A web page can reach a server on the browser's machine: DNS rebinding makes a page's own name
resolve to the server's address, so its requests carry ``Host: evil.example``; and a page of
any origin can send a request to any address, with its ``Origin``. So every request's
``Host`` must name the server as it was bound (its address and port; ``localhost`` and the
loopback addresses too where it listens on loopback or on every address), or a name the
operator allows (``--allowed-host``); and an ``Origin``, when a request carries one (a
browser's request does), must be the server's own or one the operator allows
(``--allowed-origin``). Anything else is refused before the token is read: 421 for the host,
403 for the origin, each with the option that allows it. This holds on every bind: an
IPv4-mapped address (``::ffff:127.0.0.1``), ``0.0.0.0``, ``::`` or a LAN address alike.

Hosts and origins are compared as a browser writes them and more: any case, a trailing dot
on a name, an IP address in any of its spellings (``[::ffff:7f00:1]`` is
``[::ffff:127.0.0.1]``), a default port written or not.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

__all__ = [
    "HostRules",
    "Refusal",
    "bind_warning",
    "check_entries",
    "parse_host",
    "parse_origin",
]

_LOOPBACK_NAMES: Final = ("localhost", "127.0.0.1", "::1")
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}

#: A host (a lowercase name without its trailing dot, or an IP address's compressed form)
#: and its port (None: any port, in an allowed entry; the scheme's default in a header).
HostPort = tuple[str, int | None]


@dataclass(frozen=True)
class Refusal:
    """Why a request was refused: its HTTP status and the one line the client reads."""

    status: int
    message: str


def _host(text: str) -> str:
    """``text`` (a name, an IPv4 address, or an IPv6 one with or without brackets) in the one
    spelling compared.

    Raises:
        ValueError: it is empty, or a bracketed part is not an IPv6 address.
    """
    bare = text.strip().lower()
    if bare.startswith("[") and bare.endswith("]"):
        try:
            return str(ipaddress.IPv6Address(bare[1:-1]))
        except ValueError:
            raise ValueError(f"{text!r} is not an IPv6 address") from None
    if not bare:
        raise ValueError("no host")
    try:
        return str(ipaddress.ip_address(bare))
    except ValueError:
        return bare.removesuffix(".")


def parse_host(text: str) -> HostPort:
    """A ``Host`` header or an ``--allowed-host`` entry as (host, port): ``name``,
    ``name:port``, ``[v6]``, ``[v6]:port``, or a bare IPv6 address; no port gives None.

    Raises:
        ValueError: it is not one of those (the message says why).
    """
    value = text.strip()
    if not value or any(c in value for c in "/@*? \t"):
        raise ValueError(f"{text!r} is not a host: give NAME, NAME:PORT or [IPv6]:PORT")
    if value.startswith("["):
        inside, closed, rest = value[1:].partition("]")
        if not closed:
            raise ValueError(f"{text!r} is not a host: its [ never closes")
        if rest and not rest.startswith(":"):
            raise ValueError(f"{text!r} is not a host: an IPv6 address's port follows ]:")
        return _host(f"[{inside}]"), _port(rest[1:], text) if rest else None
    if value.count(":") > 1:  # a bare IPv6 address: no port can follow it
        try:
            return str(ipaddress.IPv6Address(value.lower())), None
        except ValueError:
            raise ValueError(f"{text!r} is not a host: an IPv6 address goes in [ ]") from None
    name, colon, port = value.partition(":")
    return _host(name), _port(port, text) if colon else None


def _port(text: str, given: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise ValueError(f"{given!r} has no port 1-65535 after its ':'")
    return int(text)


def parse_origin(text: str) -> tuple[str, str, int]:
    """An ``Origin`` header or an ``--allowed-origin`` entry as (scheme, host, port), the
    scheme's default port filled in.

    Raises:
        ValueError: it is not ``http(s)://host[:port]`` (no path, no wildcard).
    """
    value = text.strip()
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:
        raise ValueError(f"{text!r} is not an origin: give http(s)://HOST[:PORT]") from None
    scheme = parts.scheme.lower()
    if (
        scheme not in _DEFAULT_PORTS
        or not parts.hostname
        or parts.path not in ("", "/")
        or parts.query
        or parts.fragment
        or parts.username is not None
        or "*" in value
    ):
        raise ValueError(
            f"{text!r} is not an origin: give http(s)://HOST[:PORT], one web page's origin "
            "(the pages an agent may open are --allowed-origins, with an s)"
        )
    return scheme, _host(parts.hostname), port or _DEFAULT_PORTS[scheme]


def check_entries(hosts: Iterable[str], origins: Iterable[str]) -> None:
    """Refuse a malformed ``--allowed-host`` or ``--allowed-origin`` entry.

    Raises:
        ValueError: one is malformed (the message quotes it and says why).
    """
    for host in hosts:
        parse_host(host)
    for origin in origins:
        parse_origin(origin)


class HostRules:
    """The ``Host`` and ``Origin`` values a server bound to ``host``:``port`` answers.

    Args:
        host: the address (or name) it listens on, as given (``--host``).
        port: the port it listens on (the one bound, when 0 was asked for).
        allowed_hosts: more ``Host`` values (``--allowed-host``: ``NAME`` on any port, or
            ``NAME:PORT``).
        allowed_origins: more ``Origin`` values (``--allowed-origin``).

    Raises:
        ValueError: an entry is malformed (the message quotes it).
    """

    def __init__(
        self,
        host: str,
        port: int,
        *,
        allowed_hosts: Iterable[str] = (),
        allowed_origins: Iterable[str] = (),
    ) -> None:
        self.port = port
        own = _bound_names(host)
        #: The server's own hosts, on its port.
        self.own: tuple[HostPort, ...] = tuple((name, port) for name in own)
        self.hosts: tuple[HostPort, ...] = (
            *self.own,
            *(parse_host(entry) for entry in allowed_hosts),
        )
        self.origins: frozenset[tuple[str, str, int]] = frozenset(
            {("http", name, port) for name in own}
            | {parse_origin(entry) for entry in allowed_origins}
        )
        self._shown_hosts = ", ".join(_shown(host, port) for host, port in self.hosts)

    def refusal(self, host: str | None, origin: str | None) -> Refusal | None:
        """Why a request with these ``Host`` and ``Origin`` headers is refused, or None."""
        if host is None:
            return Refusal(421, "no Host header: send one that names this server")
        if not self._allows_host(host):
            return Refusal(
                421,
                f"Host {host[:200]!r} is not one this server answers to ({self._shown_hosts}), "
                "a guard against DNS rebinding: connect by one of those names, or the operator "
                "allows the name with ego mcp --allowed-host NAME",
            )
        if origin is not None and not self._allows_origin(origin):
            return Refusal(
                403,
                f"Origin {origin[:200]!r} may not call this server (a web page's request): "
                "the operator allows a page's origin with ego mcp --allowed-origin ORIGIN",
            )
        return None

    def _allows_host(self, header: str) -> bool:
        try:
            name, port = parse_host(header)
        except ValueError:
            return False
        given = port if port is not None else _DEFAULT_PORTS["http"]
        return any(
            name == allowed and (allowed_port is None or allowed_port == given)
            for allowed, allowed_port in self.hosts
        )

    def _allows_origin(self, header: str) -> bool:
        try:
            return parse_origin(header) in self.origins
        except ValueError:
            return False  # "null" (a sandboxed or file page), or anything malformed


def _bound_names(host: str) -> list[str]:
    """The hosts a request to a server bound to ``host`` may name: the address itself (an
    IPv4-mapped one in both its forms), and the loopback names where loopback reaches it."""
    name = _host(host)
    names = [name]
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        loopback = name == "localhost"
    else:
        mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
        if mapped is not None:
            names.append(str(mapped))
            address = mapped
        loopback = address.is_loopback or address.is_unspecified
    if loopback:
        names += [each for each in _LOOPBACK_NAMES if each not in names]
    return names


def _shown(host: str, port: int | None) -> str:
    shown = f"[{host}]" if ":" in host else host
    return shown if port is None else f"{shown}:{port}"


def bind_warning(host: str) -> str | None:
    """One line saying what protects a server bound to ``host`` when that is not a loopback
    address (other machines can reach it), else None."""
    try:
        address = ipaddress.ip_address(_host(host))
    except ValueError:
        if _host(host) == "localhost":
            return None
        reach = f"{host} (a name: whatever addresses it has)"
    else:
        mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
        if (mapped or address).is_loopback:
            return None
        reach = f"{host} (every address of this machine)" if address.is_unspecified else str(host)
    return (
        f"warning: listening on {reach}, reachable from other machines: what protects it is "
        "the bearer token (sent in clear over plain HTTP: put TLS in front of it), the Host "
        "check (this server's address, or --allowed-host names) and the Origin check "
        "(--allowed-origin)"
    )
