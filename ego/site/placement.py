"""Where a site's call runs: a tab on the site, a frame on it in an open tab, or a new tab."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ..errors import (
    LearningError,
    NavigationError,
    NoTabError,
    SiteMismatchError,
    SiteUnreachableError,
)
from ..learning.catalog.matching import domain_of, match_domain, url_host
from ..learning.catalog.registry import Learnings
from ..page.network import unreachable

if TYPE_CHECKING:
    from ..learning.catalog.manifest import Manifest
    from ..page.browser import TabHost
    from ..page.frame import Frame
    from ..page.tab import Tab

__all__ = ["Placement", "url_on_site"]


class Placement:
    """The tab or frame a site's calls run in, and the start URL a new tab opens at.

    The base of :class:`ego.site.Site`, which documents it; the methods here are the Site's.

    Args:
        browser: the browser to run tools in.
        learnings: where sites are found; by default the workspace's ``learnings/`` (from
            ``$EGO_WORKSPACE``) then the project's.
    """

    def __init__(self, browser: TabHost, learnings: Learnings | None = None) -> None:
        self.browser = browser
        self.learnings = learnings if learnings is not None else Learnings()
        self._start_urls: dict[str, str] = {}
        # The domain of each start URL, parsed once: the hot call asks for it on every run.
        self._start_domains: dict[str, tuple[str, ...]] = {}

    def start_urls(self) -> dict[str, str]:
        """Every start URL :meth:`set_start_url` set, by site id."""
        return dict(self._start_urls)

    def set_start_url(self, site_id: str, url: str) -> None:
        """Use ``url`` instead of the manifest's ``startUrl`` when a tab must be opened.

        Only tabs (and frames) on ``url``'s host and port then count as the site's, in place
        of the manifest's domains: the copy of the site that was named is used, never another
        program on the port the manifest's ``startUrl`` fixes.
        """
        self._start_urls[site_id] = url
        own = domain_of(url)
        if own is None:
            self._start_domains.pop(site_id, None)
        else:
            self._start_domains[site_id] = (own,)

    def domains(self, manifest: Manifest) -> tuple[str, ...]:
        """The domains ``manifest``'s site runs on here: its own, or, after
        :meth:`set_start_url`, the start URL's host and port."""
        return self._start_domains.get(manifest.id, manifest.domains)

    async def tab_for(self, site_id: str, tab: Tab | None = None) -> Tab:
        """The tab to run ``site_id``'s tools in.

        ``tab`` when given; else the first open tab whose host matches the site's domains
        (but not one on the start URL's host at another port: another program there);
        else a new tab at the site's start URL, loaded.

        Raises:
            UnknownSiteError, InvalidManifestError: no such usable site.
            NoTabError: nothing matches and the site has no start URL.
            SiteUnreachableError: the start URL's server did not answer.
            NavigationError: the start URL did not load for another reason.
        """
        manifest = self.learnings.site(site_id)
        return await self._tab_for(manifest, tab)

    async def _tab_for(self, manifest: Manifest, tab: Tab | None) -> Tab:
        if tab is not None:
            return tab
        tabs = await self.browser.tabs()
        for candidate in tabs:
            if self._takes(candidate.url, manifest):
                return candidate
        return await self._new_tab(manifest, tabs)

    def _takes(self, url: str, manifest: Manifest) -> bool:
        """Whether an open tab (or frame) at ``url`` may run ``manifest``'s site: on its
        domains, and not another server on the start URL's host. A domain without a port
        matches every port, but the start URL names the one the site runs on here: a tab on
        the same host at another port is another program (a demo shop whose server stopped
        long ago), and its calls would fail for that program's sake."""
        if match_domain(url, self.domains(manifest)) is None:
            return False
        start = self._start_urls.get(manifest.id) or manifest.start_url
        return not _other_server(url, start)

    async def _page_for(self, manifest: Manifest, tab: Tab | None) -> Tab | Frame:
        """Where a browser tool of ``manifest``'s site runs: ``tab`` when its page is on the
        site, else the frame of ``tab`` that is; without a tab, an open tab on the site, else
        a frame on the site in an open tab, else a new tab at the start URL.

        Raises:
            SiteMismatchError: ``tab`` is not on the site and no frame of it is.
            NoTabError, NavigationError: as :meth:`tab_for`.
        """
        domains = self.domains(manifest)
        if tab is not None:
            if url_on_site(tab.url, domains):
                return tab
            frame = await _frame_on_site(tab, domains)
            if frame is None:
                raise SiteMismatchError(
                    f"site {manifest.id!r} runs on {', '.join(domains)}, but the tab given shows "
                    f"{_host(tab.url)} and none of its frames is on the site: pass a tab on the "
                    "site (or one that embeds it), or leave tab out to let ego find or open one",
                    host=_host(tab.url),
                    domains=list(domains),
                )
            return frame
        tabs = await self.browser.tabs()
        for candidate in tabs:
            if self._takes(candidate.url, manifest):
                return candidate
        for candidate in await self._embedding(tabs, manifest):
            frame = await _frame_on_site(candidate, domains)
            if frame is not None:
                return frame
        return await self._new_tab(manifest, tabs)

    async def _embedding(self, tabs: list[Tab], manifest: Manifest) -> list[Tab]:
        """The open tabs that may embed the site: those ego attached to already (their
        frames are known), and those whose cross-site frames Chrome lists on the site."""
        known = [tab for tab in tabs if tab.session is not None]
        targets = await self.browser.connection.send("Target.getTargets")
        parents: dict[str, str] = {}
        wanted: list[str] = []
        for info in targets.get("targetInfos", []):
            if info.get("type") == "iframe":
                parents[str(info.get("targetId"))] = str(info.get("parentFrameId", ""))
                if self._takes(str(info.get("url", "")), manifest):
                    wanted.append(str(info.get("targetId")))
        pages = {tab.target_id: tab for tab in tabs}
        for frame_id in wanted:
            seen: set[str] = set()
            while frame_id in parents and frame_id not in seen:
                seen.add(frame_id)
                frame_id = parents[frame_id]
            page = pages.get(frame_id)
            if page is not None and page not in known:
                known.append(page)
        return known

    async def _new_tab(self, manifest: Manifest, passed: list[Tab]) -> Tab:
        """A new tab at the start URL; ``passed`` are the open tabs none of which was taken
        (one on the site's domains shows another copy of it, on the start URL's host)."""
        url = self.start_url(manifest)
        try:
            return await self.browser.new_tab(url)
        except NavigationError as exc:
            domains = self.domains(manifest)
            other = next((tab.url for tab in passed if match_domain(tab.url, domains)), None)
            raise _unreachable(exc, url, manifest, other) from None

    def start_url(self, manifest: Manifest) -> str:
        """Where a tab for ``manifest``'s site opens: :meth:`set_start_url`'s, else ``startUrl``.

        Raises:
            NoTabError: neither is set.
        """
        start = self._start_urls.get(manifest.id) or manifest.start_url
        if not start:
            raise NoTabError(
                f"no open tab on {', '.join(manifest.domains)} for site {manifest.id!r}, and "
                "its manifest has no startUrl: open one (browser.new_tab(url)) and pass tab=, "
                f"or call set_start_url({manifest.id!r}, url)"
            )
        return start

    def showing(self, site_id: str, tab: Tab | None) -> Tab | None:
        """``tab`` when its page is on ``site_id``'s site here (see :meth:`domains`), else
        None (and for a site that is not usable): a front end offers the tab its user is on,
        and with None the call finds or opens one itself."""
        if tab is None or tab.closed:
            return None
        try:
            manifest = self.learnings.site(site_id)
        except LearningError:
            return None
        return tab if self.on_site(tab, manifest) else None

    def on_site(self, tab: Tab, manifest: Manifest) -> bool:
        """Whether ``tab``'s page is on ``manifest``'s site here (see :meth:`domains`).

        Remembered per URL and domains, so asking again for a hot tab costs a lookup.
        """
        return url_on_site(tab.url, self.domains(manifest))

    async def visit(self, tab: Tab, manifest: Manifest) -> None:
        """Load the site's start URL in ``tab`` unless it is on the site's domains already.

        Raises:
            NoTabError: the tab is elsewhere and the site has no start URL.
            SiteUnreachableError: the start URL's server did not answer.
            NavigationError, CommandTimeoutError: as :meth:`ego.Tab.navigate`.
        """
        if not self.on_site(tab, manifest):
            url = self.start_url(manifest)
            try:
                await tab.navigate(url)
            except NavigationError as exc:
                raise _unreachable(exc, url, manifest) from None


# Whether a URL is on a site's domains, for the hot call: the same tab and site ask again and
# again. Bounded: emptied when it grows past the limit.
_ON_SITE: dict[tuple[str, tuple[str, ...]], bool] = {}
_MAX_ON_SITE = 4096


def url_on_site(url: str, domains: tuple[str, ...]) -> bool:
    """Whether ``url`` is on ``domains``, remembered for the next ask."""
    key = (url, domains)
    known = _ON_SITE.get(key)
    if known is None:
        if len(_ON_SITE) >= _MAX_ON_SITE:
            _ON_SITE.clear()
        known = _ON_SITE[key] = match_domain(url, domains) is not None
    return known


async def _frame_on_site(tab: Tab, domains: tuple[str, ...]) -> Frame | None:
    """The first frame of ``tab`` whose document is on ``domains``."""
    for frame in await tab.frames():
        if not frame.is_main and url_on_site(frame.url, domains):
            return frame
    return None


def _host(url: str) -> str:
    return domain_of(url) or url or "about:blank"


def _other_server(url: str, start: str | None) -> bool:
    """Whether ``url`` is on ``start``'s host but at another port (or scheme)."""
    if not start:
        return False
    here, there = url_host(url), url_host(start)
    return here is not None and there is not None and here[0] == there[0] and here != there


def _unreachable(
    exc: NavigationError, url: str, manifest: Manifest, other: str | None = None
) -> NavigationError:
    """What a failed load of ``manifest``'s start URL raises: a SiteUnreachableError when the
    server did not answer (with the manifest's own hint for a site served locally, such as the
    demo shop, and the way to use ``other``, an open tab on another copy of the site), else
    ``exc`` itself."""
    reason = unreachable(str(exc))
    if reason is None:
        return exc
    hint = (manifest.model_extra or {}).get("startUrlRefused")
    advice = (
        hint
        if isinstance(hint, str) and hint and reason == "net::ERR_CONNECTION_REFUSED"
        else "is its server running, and the network up? Retry once it answers"
    )
    if other is not None:
        parts = urlsplit(other)
        start = f"{parts.scheme}://{parts.netloc}/"
        advice += (
            f" (an open tab shows the site on another port, {other}: to use that copy, pass "
            f"that tab (tab=) or call set_start_url({manifest.id!r}, {start!r}))"
        )
    return SiteUnreachableError(
        f"site {manifest.id!r} is unreachable: {exc}: {advice}", url=url, reason=reason
    )
