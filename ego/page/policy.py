"""Where a browser may go: origins allowed or blocked, and the local schemes (``file:``,
``chrome:``, ``devtools:``, ``view-source:``) that show what is on the machine.

An origin pattern is one of:

* ``https://shop.example`` - that scheme and host, on the scheme's default port;
* ``http://127.0.0.1:8765`` - that scheme, host and port;
* ``shop.example`` - that host on any port, over http or https;
* ``shop.example:8765`` - that host and port, over http or https;
* ``*.shop.example`` - any subdomain (not the bare domain), with or without a scheme or port;
* ``*`` - any origin.

A URL that is not http(s) (``about:blank``, ``data:``, ``blob:``) has no origin a pattern can
name: the origin lists never refuse it; the local schemes are refused unless allowed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

from ..errors import OriginBlockedError

__all__ = ["LOCAL_SCHEMES", "NavigationPolicy", "OriginPattern"]

#: Schemes that show the machine rather than the web: its files, Chrome's own pages (its
#: command line, its profile), page sources.
LOCAL_SCHEMES: Final = frozenset({"file", "chrome", "devtools", "view-source", "chrome-untrusted"})

_DEFAULT_PORTS: Final = {"http": 80, "https": 443}


@dataclass(frozen=True, slots=True)
class OriginPattern:
    """One parsed origin pattern (see the module docstring)."""

    text: str
    scheme: str | None
    host: str
    port: int | None

    @classmethod
    def parse(cls, text: str) -> OriginPattern:
        """Parse ``text``.

        Raises:
            ValueError: not an origin pattern (a path, a bad port, an empty host).
        """
        raw = text.strip()
        if raw == "*":
            return cls(raw, None, "*", None)
        scheme: str | None = None
        rest = raw
        if "://" in raw:
            scheme, _, rest = raw.partition("://")
            scheme = scheme.lower()
            if scheme not in _DEFAULT_PORTS:
                raise ValueError(f"origin pattern {text!r}: only http and https origins exist")
        rest = rest.rstrip("/")
        if "/" in rest or "?" in rest or "#" in rest:
            raise ValueError(f"origin pattern {text!r} holds a path: give scheme://host[:port]")
        host, _, port_text = rest.rpartition(":") if rest.count(":") == 1 else (rest, "", "")
        if not host:
            raise ValueError(f"origin pattern {text!r} has no host")
        port: int | None = None
        if port_text:
            if not port_text.isdigit() or not 0 < int(port_text) < 65536:
                raise ValueError(f"origin pattern {text!r}: {port_text!r} is not a port")
            port = int(port_text)
        elif scheme is not None:
            port = _DEFAULT_PORTS[scheme]
        return cls(raw, scheme, host.lower().rstrip("."), port)

    def matches(self, scheme: str, host: str, port: int) -> bool:
        """True when an origin with this scheme, host and port matches the pattern."""
        if self.host == "*":
            return True
        if self.scheme is not None and scheme != self.scheme:
            return False
        if self.port is not None and port != self.port:
            return False
        if self.host.startswith("*."):
            return host.endswith(self.host[1:]) and host != self.host[2:]
        return host == self.host


@dataclass(frozen=True, slots=True)
class NavigationPolicy:
    """Which URLs the pages of a browser may load as documents.

    Attributes:
        allowed: when not empty, only origins matching one of these patterns.
        blocked: origins matching one of these are refused (even when allowed).
        allow_local: whether ``file:``, ``chrome:``, ``devtools:`` and ``view-source:`` URLs
            may be opened.
        also: policies that must allow a URL too (see :meth:`narrowed`).
    """

    allowed: tuple[OriginPattern, ...] = ()
    blocked: tuple[OriginPattern, ...] = ()
    allow_local: bool = True
    also: tuple[NavigationPolicy, ...] = ()

    @classmethod
    def of(
        cls,
        allowed: Iterable[str] | None = None,
        blocked: Iterable[str] | None = None,
        *,
        allow_local: bool = True,
    ) -> NavigationPolicy:
        """A policy from pattern texts.

        Raises:
            ValueError: a pattern is not an origin pattern.
        """
        return cls(
            tuple(OriginPattern.parse(text) for text in allowed or ()),
            tuple(OriginPattern.parse(text) for text in blocked or ()),
            allow_local,
        )

    def narrowed(self, other: NavigationPolicy) -> NavigationPolicy:
        """This policy and ``other`` at once: a URL either refuses is refused (a browser
        context's own limits inside its browser's)."""
        if not other.active:
            return self
        if not self.active:
            return other
        return NavigationPolicy(self.allowed, self.blocked, self.allow_local, (*self.also, other))

    @property
    def limits_origins(self) -> bool:
        """True when some origin may be refused (the pages' own navigations need watching)."""
        return bool(self.allowed or self.blocked) or any(p.limits_origins for p in self.also)

    @property
    def active(self) -> bool:
        """True when the policy refuses anything."""
        return self.limits_origins or not self.allow_local or any(p.active for p in self.also)

    def refusal(self, url: str) -> str | None:
        """Why ``url`` may not be loaded, or None when it may."""
        for other in self.also:
            reason = other.refusal(url)
            if reason is not None:
                return reason
        try:
            parts = urlsplit(url.strip())
            scheme = parts.scheme.lower()
            host = (parts.hostname or "").rstrip(".").lower()
            port = parts.port
        except ValueError:
            return None  # Chrome refuses what it cannot parse by itself
        if scheme in LOCAL_SCHEMES:
            if self.allow_local:
                return None
            return f"{scheme}: URLs show this machine, not the web, and are not allowed"
        if scheme not in _DEFAULT_PORTS or not host:
            return None
        effective = port if port is not None else _DEFAULT_PORTS[scheme]
        origin = f"{scheme}://{parts.netloc.lower()}"
        for pattern in self.blocked:
            if pattern.matches(scheme, host, effective):
                return f"the origin {origin} is blocked ({pattern.text})"
        if self.allowed and not any(p.matches(scheme, host, effective) for p in self.allowed):
            names = ", ".join(pattern.text for pattern in self.allowed)
            return f"the origin {origin} is not among the allowed origins ({names})"
        return None

    def check(self, url: str) -> None:
        """Raise when ``url`` may not be loaded.

        Raises:
            OriginBlockedError: it may not; the message says why.
        """
        reason = self.refusal(url)
        if reason is not None:
            raise OriginBlockedError(f"navigation to {url} refused: {reason}", url=url)


#: The policy of a browser that was given no limits.
OPEN: Final = NavigationPolicy()
