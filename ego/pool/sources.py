"""Where a pool's browsers come from: one factory per pool browser, launched or attached.

A factory starts (or restarts, after a crash) one pool browser. Launched Chromes share one
:class:`~ego.protocol.chrome.LaunchOptions`, decided once, with a profile of their own when the
caller names profiles; attached ones connect to an :class:`Endpoint`, several per endpoint
when it asks for more than one.

With ``contexts=True`` a pool browser is a browser context instead: the launched members are
contexts of one Chrome, an endpoint's members contexts of one connection to it, each made
from its storage state (a saved login: one for all, or one per member for several accounts).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Awaitable, Callable, Mapping, Sequence

from ..api import Browser, SharedBrowser
from ..page.storage_state import StorageState
from ..protocol.chrome import LaunchOptions
from ..protocol.wire import redact
from .types import Endpoint, Worker

__all__ = ["MemberFactory", "MemberSpec", "Sources", "member_specs"]

#: Starts one pool browser (or context); called again to replace it when it dies.
MemberFactory = Callable[[], Awaitable[Worker]]

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
    contexts: bool = False,
) -> Sources:
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
        contexts: each pool browser a browser context of a shared Chrome (see the module);
            each starts from its state in :attr:`Sources.states`.

    Raises:
        ValueError: ``profiles`` does not name one profile per launched Chrome, profiles
            with ``contexts``, or an :class:`Endpoint` asks for fewer than one browser.
    """
    if profiles is not None and len(profiles) != launch:
        raise ValueError(f"profiles names {len(profiles)} profiles for launch={launch} Chromes")
    if profiles is not None and contexts:
        raise ValueError(
            "contexts=True keeps each member's login in its own context, not in a profile: "
            "pass storage_state (a saved login per member) instead of profiles"
        )
    sources = Sources()
    if launch and contexts:
        chrome = SharedBrowser(functools.partial(Browser.launch_with, options))
        sources.shared.append(chrome)
        for _ in range(launch):
            sources.specs.append(sources.context_spec("launch", chrome))
    for number in range(0 if contexts else launch):
        each = (
            options if profiles is None else dataclasses.replace(options, profile=profiles[number])
        )
        sources.specs.append(("launch", functools.partial(Browser.launch_with, each)))
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
        source = redact(endpoint.url)
        if contexts:
            chrome = SharedBrowser(connect)
            sources.shared.append(chrome)
            for _ in range(endpoint.browsers):
                sources.specs.append(sources.context_spec(source, chrome))
        else:
            sources.specs.extend((source, connect) for _ in range(endpoint.browsers))
    return sources


@dataclasses.dataclass
class Sources:
    """The pool's member specs, the Chromes its context members share (closed with the
    pool, after the members), and the state each context member starts from (by member
    index; empty: none)."""

    specs: list[MemberSpec] = dataclasses.field(default_factory=list)
    shared: list[SharedBrowser] = dataclasses.field(default_factory=list)
    states: list[StorageState | None] = dataclasses.field(default_factory=list)

    def context_spec(self, source: str, chrome: SharedBrowser) -> MemberSpec:
        """The next member: a context of ``chrome``, made (again after a crash) from the
        member's state."""
        return (f"{source} (context)", functools.partial(self._context, chrome, len(self.specs)))

    async def _context(self, chrome: SharedBrowser, index: int) -> Worker:
        state = self.states[index] if self.states else None
        return await chrome.new_context(storage_state=state)
