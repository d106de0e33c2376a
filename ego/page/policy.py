"""Where a browser may go: origins allowed or blocked, the local schemes (``file:``,
``chrome:``, ``devtools:``, ``view-source:``) that show what is on the machine, and the
schemes that run the caller's own script (``javascript:``, ``data:``).

An origin pattern is one of:

* ``https://shop.example`` - that scheme and host, on the scheme's default port;
* ``http://127.0.0.1:8765`` - that scheme, host and port;
* ``shop.example`` - that host on any port, over http or https;
* ``shop.example:8765`` - that host and port, over http or https;
* ``*.shop.example`` - any subdomain (not the bare domain), with or without a scheme or port;
* ``*`` - any origin (``http://*`` any host over http, ``*:8765`` any host on that port).

A host is compared the way Chrome writes it in a request: lower case, no trailing dot, an
international name in its ``xn--`` form, an IPv4 address as four decimal numbers (so
``http://2130706433/`` is ``127.0.0.1``), an IPv6 address compressed and without brackets
(``[::1]``, ``::1`` and ``[0:0:0:0:0:0:0:1]`` are one host). An IPv6 address with a port
needs its brackets: ``[::1]:8765``. A pattern that would never match what it seems to name
is refused when it is parsed, with the reason: a wildcard inside a name or an address
(``127.0.0.*``, ``*127.0.0.2``), a path, user info, a port that is not one.

A URL that is not http(s) (``about:blank``, ``data:``, ``blob:``) has no origin a pattern can
name: the origin lists never refuse it; the local schemes are refused unless allowed.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

from ..errors import OriginBlockedError

__all__ = ["LOCAL_SCHEMES", "SCRIPT_SCHEMES", "NavigationPolicy", "OriginPattern", "canonical_host"]

#: Schemes that show the machine rather than the web: its files, Chrome's own pages (its
#: command line, its profile), page sources.
LOCAL_SCHEMES: Final = frozenset({"file", "chrome", "devtools", "view-source", "chrome-untrusted"})

#: Schemes whose URL is script of the caller's own, run in the page (``javascript:``) or in a
#: document it writes (``data:``): an ``evaluate`` by another name.
SCRIPT_SCHEMES: Final = frozenset({"javascript", "data"})

_DEFAULT_PORTS: Final = {"http": 80, "https": 443}

# What a host name may hold once lower-cased and in its ASCII form (Chrome accepts "_").
_LABEL: Final = re.compile(r"^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$")


def _ipv4(host: str) -> str | None:
    """``host`` as a dotted IPv4 address when it is one the way a URL parser reads it
    (decimal, hex or octal parts, one to four of them: ``2130706433``, ``0x7f.1``); None when
    it is a name.

    Raises:
        ValueError: it ends in a number yet is no IPv4 address (``1.2.3.4.5``, ``256.1.1.1``).
    """
    parts = host.split(".")
    if parts and parts[-1] == "":
        parts.pop()
    last = parts[-1] if parts else ""
    if not (last.isdigit() or re.fullmatch(r"0x[0-9a-f]*", last)):
        return None
    if len(parts) > 4:
        raise ValueError(f"{host!r} ends in a number but is not an IPv4 address")
    numbers = []
    for part in parts:
        if part.startswith("0x"):
            digits, base = part[2:] or "0", 16
        elif len(part) > 1 and part.startswith("0"):
            digits, base = part[1:], 8
        else:
            digits, base = part, 10
        try:
            numbers.append(int(digits, base))
        except ValueError:
            raise ValueError(f"{host!r} is not an IPv4 address ({part!r})") from None
    if any(number > 255 for number in numbers[:-1]) or numbers[-1] >= 256 ** (5 - len(numbers)):
        raise ValueError(f"{host!r} is not an IPv4 address (a part is too large)")
    value = numbers[-1] + sum(n * 256 ** (3 - i) for i, n in enumerate(numbers[:-1]))
    return str(ipaddress.IPv4Address(value))


def canonical_host(host: str) -> str:
    """``host`` as Chrome writes it in a request: lower case, no brackets or trailing dot,
    an international name as ``xn--``, an IPv4 address dotted, an IPv6 one compressed.

    Raises:
        ValueError: no host could be written so (a bad address, a character no host holds).
    """
    text = host.strip().lower()
    bracketed = text.startswith("[") and text.endswith("]")
    if bracketed:
        text = text[1:-1]
    if bracketed or ":" in text:
        try:
            return ipaddress.IPv6Address(text).compressed
        except ValueError:
            raise ValueError(f"{host!r} is not an IPv6 address") from None
    if not text.isascii():
        try:
            text = text.encode("idna").decode("ascii").lower()
        except UnicodeError:
            raise ValueError(f"{host!r} is not a host name") from None
    text = text.rstrip(".")
    address = _ipv4(text)
    if address is not None:
        return address
    if not text or len(text) > 253 or not all(_LABEL.match(label) for label in text.split(".")):
        raise ValueError(f"{host!r} is not a host name")
    return text


def _shown_host(host: str) -> str:
    """A host as it sits in a URL (an IPv6 address in brackets)."""
    return f"[{host}]" if ":" in host else host


@dataclass(frozen=True, slots=True)
class OriginPattern:
    """One parsed origin pattern (see the module docstring).

    Attributes:
        text: the pattern as the operator wrote it (what messages print).
        scheme: ``http``, ``https`` or None (either).
        host: the host in Chrome's form (:func:`canonical_host`), ``*.`` and a domain for
            its subdomains, or ``*`` for any host.
        port: the port, or None (any).
    """

    text: str
    scheme: str | None
    host: str
    port: int | None

    @classmethod
    def parse(cls, text: str) -> OriginPattern:
        """Parse ``text``.

        Raises:
            ValueError: not an origin pattern, or one that would never match what it seems to
                name; the message quotes it and says why.
        """
        raw = text.strip()

        def refused(why: str) -> ValueError:
            return ValueError(f"origin pattern {text!r}: {why}")

        if not raw:
            raise refused("is empty: give scheme://host[:port], host[:port], *.domain or *")
        scheme: str | None = None
        rest = raw
        if "://" in raw:
            scheme, _, rest = raw.partition("://")
            scheme = scheme.lower()
            if scheme not in _DEFAULT_PORTS:
                raise refused("only http and https origins exist")
        rest = rest.rstrip("/")
        if "/" in rest or "?" in rest or "#" in rest or "\\" in rest:
            raise refused("holds a path: give scheme://host[:port]")
        if "@" in rest:
            raise refused("holds user info (user@host): give the host alone")
        host, port_text = cls._split(rest, refused)
        port: int | None = None
        if port_text is not None:
            if not port_text.isdigit() or not 0 < int(port_text) < 65536:
                raise refused(f"{port_text!r} is not a port (1 to 65535)")
            port = int(port_text)
        elif scheme is not None:
            port = _DEFAULT_PORTS[scheme]
        return cls(raw, scheme, cls._host(host, refused), port)

    @staticmethod
    def _split(rest: str, refused: Callable[[str], ValueError]) -> tuple[str, str | None]:
        """``rest`` (the pattern without its scheme) as host and port text."""
        if rest.startswith("["):
            end = rest.find("]")
            if end < 0:
                raise refused("opens an IPv6 address with '[' and never closes it")
            after = rest[end + 1 :]
            if after and not after.startswith(":"):
                raise refused(f"{after!r} follows the IPv6 address: give [address]:port")
            return rest[: end + 1], after[1:] if after else None
        if rest.count(":") > 1:
            return rest, None  # an IPv6 address without brackets, so without a port
        if ":" in rest:
            host, _, port = rest.partition(":")
            return host, port
        return rest, None

    @staticmethod
    def _host(host: str, refused: Callable[[str], ValueError]) -> str:
        """The pattern's host in Chrome's form, ``*.`` + domain, or ``*``."""
        if not host:
            raise refused("has no host")
        if host == "*":
            return host
        wildcard = host.startswith("*.")
        name = host[2:] if wildcard else host
        if "*" in name:
            raise refused(
                "'*' stands alone (any origin) or as the first label of *.domain (its "
                "subdomains); it matches nothing inside a name or an address"
            )
        try:
            canonical = canonical_host(name)
        except ValueError as exc:
            raise refused(str(exc)) from None
        if wildcard:
            if ":" in canonical or _looks_like_ipv4(canonical):
                raise refused("an IP address has no subdomains for '*.' to name: list each address")
            return "*." + canonical
        return canonical

    def matches(self, scheme: str, host: str, port: int) -> bool:
        """True when an origin with this scheme, host (in Chrome's form) and port matches."""
        if self.scheme is not None and scheme != self.scheme:
            return False
        if self.port is not None and port != self.port:
            return False
        if self.host == "*":
            return True
        if self.host.startswith("*."):
            return host.endswith(self.host[1:]) and host != self.host[2:]
        return host == self.host


def _looks_like_ipv4(host: str) -> bool:
    try:
        ipaddress.IPv4Address(host)
    except ValueError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class NavigationPolicy:
    """Which URLs the pages of a browser may load as documents.

    Attributes:
        allowed: when not empty, only origins matching one of these patterns.
        blocked: origins matching one of these are refused (even when allowed).
        allow_local: whether ``file:``, ``chrome:``, ``devtools:`` and ``view-source:`` URLs
            may be opened.
        also: policies that must allow a URL too (see :meth:`narrowed`).
        allow_script_urls: whether a navigation the caller asks for may be a ``javascript:``
            or ``data:`` URL (script of the caller's own); the page's own navigations are
            not concerned.
    """

    allowed: tuple[OriginPattern, ...] = ()
    blocked: tuple[OriginPattern, ...] = ()
    allow_local: bool = True
    also: tuple[NavigationPolicy, ...] = ()
    allow_script_urls: bool = True

    @classmethod
    def of(
        cls,
        allowed: Iterable[str] | None = None,
        blocked: Iterable[str] | None = None,
        *,
        allow_local: bool = True,
        allow_script_urls: bool = True,
    ) -> NavigationPolicy:
        """A policy from pattern texts.

        Raises:
            ValueError: a pattern is not an origin pattern, or would never match what it
                seems to name (the message quotes it and says why).
        """
        return cls(
            tuple(OriginPattern.parse(text) for text in allowed or ()),
            tuple(OriginPattern.parse(text) for text in blocked or ()),
            allow_local,
            allow_script_urls=allow_script_urls,
        )

    def narrowed(self, other: NavigationPolicy) -> NavigationPolicy:
        """This policy and ``other`` at once: a URL either refuses is refused (a browser
        context's own limits inside its browser's)."""
        if not other.active:
            return self
        if not self.active:
            return other
        return NavigationPolicy(
            self.allowed,
            self.blocked,
            self.allow_local,
            (*self.also, other),
            allow_script_urls=self.allow_script_urls,
        )

    @property
    def limits_origins(self) -> bool:
        """True when some origin may be refused (the pages' own navigations need watching)."""
        return bool(self.allowed or self.blocked) or any(p.limits_origins for p in self.also)

    @property
    def active(self) -> bool:
        """True when the policy refuses anything."""
        return (
            self.limits_origins
            or not self.allow_local
            or not self.allow_script_urls
            or any(p.active for p in self.also)
        )

    def refusal(self, url: str) -> str | None:
        """Why ``url`` may not be loaded as a document, or None when it may."""
        for other in self.also:
            reason = other.refusal(url)
            if reason is not None:
                return reason
        try:
            parts = urlsplit(url.strip())
            scheme = parts.scheme.lower()
            hostname = parts.hostname or ""
            port = parts.port
        except ValueError:
            return None  # Chrome refuses what it cannot parse by itself
        if scheme in LOCAL_SCHEMES:
            if self.allow_local:
                return None
            return f"{scheme}: URLs show this machine, not the web, and are not allowed"
        if scheme not in _DEFAULT_PORTS or not hostname:
            return None
        try:
            host = canonical_host(hostname)
        except ValueError:
            host = hostname.rstrip(".")  # no request can name it; the lists decide as written
        effective = port if port is not None else _DEFAULT_PORTS[scheme]
        origin = f"{scheme}://{_shown_host(host)}" + (f":{port}" if port is not None else "")
        for pattern in self.blocked:
            if pattern.matches(scheme, host, effective):
                return f"the origin {origin} is blocked ({pattern.text})"
        if self.allowed and not any(p.matches(scheme, host, effective) for p in self.allowed):
            names = ", ".join(pattern.text for pattern in self.allowed)
            return f"the origin {origin} is not among the allowed origins ({names})"
        return None

    def navigation_refusal(self, url: str) -> str | None:
        """Why a navigation the caller asks for may not go to ``url``, or None: what
        :meth:`refusal` says, and script URLs where they are not allowed."""
        scheme = url.strip().partition(":")[0].lower()
        scripts_allowed = self.allow_script_urls and all(p.allow_script_urls for p in self.also)
        if scheme in SCRIPT_SCHEMES and not scripts_allowed:
            return (
                f"{scheme}: URLs run script of the caller's own in the page, and running "
                "script is not allowed here"
            )
        return self.refusal(url)

    def check(self, url: str) -> None:
        """Raise when a navigation to ``url`` may not happen (nothing is sent then).

        Raises:
            OriginBlockedError: it may not; the message says why.
        """
        reason = self.navigation_refusal(url)
        if reason is not None:
            shown = url if len(url) <= 200 else url[:199] + "…"
            raise OriginBlockedError(f"navigation to {shown} refused: {reason}", url=url)


#: The policy of a browser that was given no limits.
OPEN: Final = NavigationPolicy()
