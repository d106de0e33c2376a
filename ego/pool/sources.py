"""Where a pool's browsers come from: one factory per pool browser, launched or attached.

A factory starts (or restarts, after a crash) one pool browser. Launched Chromes share one
:class:`~ego.protocol.chrome.LaunchOptions`, decided once, with a profile of their own when the
caller names profiles; attached ones connect to an :class:`Endpoint`, several per endpoint
when it asks for more than one.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Awaitable, Callable, Mapping, Sequence

from ..api import Browser
from ..protocol.chrome import LaunchOptions
from ..protocol.wire import redact
from .types import Endpoint

__all__ = ["MemberFactory", "MemberSpec", "member_specs"]

#: Starts one pool browser; called again to replace it when it dies.
MemberFactory = Callable[[], Awaitable[Browser]]

#: A pool browser's source (``"launch"`` or the endpoint URL, token hidden) and its factory.
MemberSpec = tuple[str, MemberFactory]


def member_specs(
    *,
    launch: int,
    endpoints: Sequence[str | Endpoint],
    headers: Mapping[str, str] | None,
    browsers_per_endpoint: int,
    profiles: Sequence[str] | None,
    options: LaunchOptions,
    connect_timeout: float,
) -> list[MemberSpec]:
    """One spec per pool browser: the ``launch`` local Chromes first, then the endpoints'.

    Args:
        launch: how many local Chromes to start, each as ``options`` say.
        endpoints: URLs (``browsers_per_endpoint`` browsers each, with ``headers``) or
            :class:`Endpoint` (with their own count and headers, ``headers`` when None).
        headers: handshake headers for every endpoint without its own.
        browsers_per_endpoint: browsers per endpoint given as a plain URL.
        profiles: one profile name per launched Chrome, or None for throwaway profiles.
        options: how to launch; its ``default_timeout`` also applies to attached browsers.
        connect_timeout: seconds an endpoint may take to accept a connection.

    Raises:
        ValueError: ``profiles`` does not name one profile per launched Chrome, or an
            :class:`Endpoint` asks for fewer than one browser.
    """
    if profiles is not None and len(profiles) != launch:
        raise ValueError(f"profiles names {len(profiles)} profiles for launch={launch} Chromes")
    specs: list[MemberSpec] = []
    for number in range(launch):
        each = (
            options if profiles is None else dataclasses.replace(options, profile=profiles[number])
        )
        specs.append(("launch", functools.partial(Browser.launch_with, each)))
    for item in endpoints:
        endpoint = (
            item if isinstance(item, Endpoint) else Endpoint(item, None, browsers_per_endpoint)
        )
        if endpoint.browsers < 1:
            raise ValueError(f"Endpoint({redact(endpoint.url)!r}).browsers must be >= 1")
        connect = functools.partial(
            Browser.connect,
            endpoint.url,
            headers=endpoint.headers if endpoint.headers is not None else headers,
            timeout=connect_timeout,
            default_timeout=options.default_timeout,
        )
        specs.extend((redact(endpoint.url), connect) for _ in range(endpoint.browsers))
    return specs
