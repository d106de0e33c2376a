"""Preparing a skill run: params, needs, confirmation, the tab, the session page, returns.

Every check that needs no browser happens before anything is sent: the skill must exist and be
valid, the params must fit its schema, the harness must provide every capability it ``needs``,
and an ``irreversible`` skill must be confirmed. Then a tab on the site is chosen (or opened),
an ``auth: session`` skill gets its page loaded first, and the extractor runs through the
cache layer with ``document`` and the params. A NEEDS_LOGIN or SKILL_BROKEN signal becomes its
exception; a successful result is checked against ``returns``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from ..errors import (
    ConfirmationRequiredError,
    EgoError,
    InvalidArgsError,
    MissingCapabilityError,
    ReturnsMismatchError,
)
from ..learning.catalog.matching import match_domain
from ..learning.catalog.registry import LoadedSource
from ..learning.catalog.schemas import failing_field, first_error, key_problem, mismatch, validator
from ..runtime.js import embed_json
from .catalog import SkillCatalog
from .format import CAPABILITIES, EXTRACTOR_FILE, NAMESPACE, Skill

if TYPE_CHECKING:
    from ..page.browser import TabHost
    from ..page.tab import Tab

__all__ = [
    "check_needs",
    "check_params",
    "check_returns",
    "loaded_source",
    "prepare_skill",
    "provided_capabilities",
    "skill_tab",
    "skill_url",
]


def provided_capabilities(tab_type: type[Any] | None = None) -> frozenset[str]:
    """The capabilities the harness provides: those of the six that ``Tab`` implements.

    Args:
        tab_type: the tab class to look at (default :class:`ego.Tab`).
    """
    if tab_type is None:
        from ..page.tab import Tab

        tab_type = Tab
    return frozenset(name for name in CAPABILITIES if callable(getattr(tab_type, name, None)))


def check_needs(skill: Skill, provided: frozenset[str]) -> None:
    """Refuse a skill that needs a capability the harness does not provide.

    Args:
        skill: the skill.
        provided: the capabilities there are (see :func:`provided_capabilities`).

    Raises:
        MissingCapabilityError: names the first missing capability (``missing`` lists all).
    """
    missing: list[str] = [need for need in skill.needs if need not in provided]
    if missing:
        raise MissingCapabilityError(
            f"skill {skill.id} needs {', '.join(missing)}, which this harness does not provide "
            f"(it provides {', '.join(sorted(provided)) or 'nothing'}); nothing was sent",
            skill_id=skill.id,
            missing=missing,
        )


def check_params(skill: Skill, params: Any) -> dict[str, Any]:
    """Validate ``params`` against the skill's params schema and return them as a dict.

    Args:
        skill: the skill.
        params: the params (None means ``{}``).

    Raises:
        InvalidArgsError: the params fail the schema (``field`` names the failing field), or
            are not JSON: a key that is not a string, NaN, a set, ... (``field`` says where).
    """
    return _checked_params(skill, params)[0]


def _checked_params(skill: Skill, params: Any) -> tuple[dict[str, Any], str]:
    """:func:`check_params`, also giving the params as the JSON literal a run embeds.

    Raises:
        InvalidArgsError: as :func:`check_params`.
    """
    if params is None:
        params = {}
    subject = f"skill {skill.id}"
    if not isinstance(params, dict):
        raise InvalidArgsError(
            f"{subject}: params must be a JSON object, not {type(params).__name__}; "
            "nothing was sent to the browser",
            field="(params)",
        )
    problem = key_problem(params, "params")
    if problem is not None:
        field, message = problem
        raise InvalidArgsError(
            f"{subject}: {message}; nothing was sent to the browser", field=field
        )
    try:
        error = first_error(validator(skill.params), params)
    except Exception as exc:
        # A schema that loops through $ref, or params nested past the recursion limit.
        detail = " ".join(str(exc).split())[:200]
        raise InvalidArgsError(
            f"{subject}: the params could not be checked against the schema "
            f"({type(exc).__name__}: {detail}); nothing was sent to the browser",
            field="(params)",
        ) from None
    if error is not None:
        field = failing_field(error, "(params)")
        raise InvalidArgsError(
            f"{subject}: bad params at {field!r}: {error.message}; nothing was sent to the browser",
            field=field,
        )
    try:
        embedded = embed_json(params)
    except TypeError as exc:
        raise InvalidArgsError(
            f"{subject}: params are not JSON: {exc}; nothing was sent to the browser",
            field="(params)",
        ) from None
    return params, embedded


def check_returns(skill: Skill, result: Any) -> None:
    """Check a result against the skill's ``returns`` schema (its success assertion).

    A result carrying a string ``error`` field is a domain error the skill reports as data
    (listed in its ``## Errors``), not a success, so it is not held to ``returns``.

    Args:
        skill: the skill.
        result: what its extractor returned.

    Raises:
        ReturnsMismatchError: the result does not fit; the message names the skill and where.
    """
    if isinstance(result, dict) and isinstance(result.get("error"), str):
        return
    problem = mismatch(skill.returns, result)
    if problem:
        raise ReturnsMismatchError(
            f"skill {skill.id} returned data that fails its success assertion (returns) "
            f"{problem}; the site may have changed (SKILL_BROKEN?)"
        )


def loaded_source(skill: Skill) -> LoadedSource:
    """The skill's extractor as the cache layer runs it: KEY ``ego:skill:<id>``, VER its hash.

    Args:
        skill: the skill.
    """
    if skill.directory is not None:
        file = skill.directory / EXTRACTOR_FILE
    else:
        file = Path(skill.source_url)
    return LoadedSource(
        site_id=NAMESPACE,
        tool=skill.id,
        file=file,
        url=skill.source_url,
        expression=skill.expression,
        version=skill.version_hash,
    )


def skill_url(skill: Skill, override: str | None = None) -> str:
    """The page to open for ``skill``; ``override`` replaces its scheme, host and port.

    ``site.set_start_url("shop.localhost", "http://shop.localhost:5123/")`` turns a skill url
    ``http://shop.localhost:8765/account`` into ``http://shop.localhost:5123/account``.

    Args:
        skill: the skill.
        override: a URL whose scheme, host and port replace the skill url's.
    """
    if not override:
        return skill.url
    new, old = urlsplit(override), urlsplit(skill.url)
    return urlunsplit((new.scheme, new.netloc, old.path, old.query, old.fragment))


def _origin(url: str) -> str:
    try:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return ""
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return ""
    return f"{parts.scheme}://{parts.hostname.lower()}:{port}"


def _on_site(url: str, site: str) -> bool:
    return match_domain(url, [site, f"*.{site}"]) is not None


async def _choose_tab(browser: TabHost, skill: Skill, url: str, *, pinned: bool) -> Tab:
    """An open tab on the site (on ``url``'s origin when ``pinned``), else a new one at ``url``."""
    candidates = [tab for tab in await browser.tabs() if _on_site(tab.url, skill.site)]
    same_origin = [tab for tab in candidates if _origin(tab.url) == _origin(url)]
    if same_origin:
        return same_origin[0]
    if candidates and not pinned:
        return candidates[0]
    return await browser.new_tab(url)


async def _live_url(tab: Tab) -> str:
    try:
        href = await tab.evaluate("location.href")
    except EgoError:
        return tab.url
    return href if isinstance(href, str) else tab.url


async def skill_tab(
    browser: TabHost,
    skill: Skill,
    tab: Tab | None = None,
    start_urls: Mapping[str, str] | None = None,
) -> Tab:
    """The tab ``skill`` runs in, on the right page.

    ``tab``, else an open tab on the site (its host or a subdomain), else a new one at the
    skill's url. An ``auth: session`` skill has its url loaded first unless the tab is on
    that origin already; any other skill has it loaded when the tab is off the site.

    Args:
        browser: where tabs are found or opened.
        skill: the skill.
        tab: where to run.
        start_urls: ``{domain: url}``; a url here replaces the scheme, host and port of the
            skill's url (tests serve the site on a random port).

    Raises:
        NavigationError, CommandTimeoutError: the site's page could not be loaded.
    """
    override = (start_urls or {}).get(skill.site)
    url = skill_url(skill, override)
    if tab is None:
        tab = await _choose_tab(browser, skill, url, pinned=override is not None)
        current = tab.url
    else:
        current = await _live_url(tab)
    if skill.auth == "session":
        # The session lives on the skill's page: be on its origin before the extractor runs.
        if _origin(current) != _origin(url):
            await tab.navigate(url)
    elif not _on_site(current, skill.site):
        await tab.navigate(url)
    return tab


def prepare_skill(
    catalog: SkillCatalog,
    skill_id: str,
    params: Any,
    *,
    tab_type: type[Any] | None = None,
    confirm: bool = False,
) -> tuple[Skill, str]:
    """Every check of a skill run that needs no browser; the skill and its argument list.

    Args:
        catalog: where the skill is found.
        skill_id: ``<domain>/<task>``.
        params: the skill's params; checked against its schema.
        tab_type: the class of the tab it will run in, for its ``needs``.
        confirm: must be True for an ``irreversible`` skill.

    Raises:
        UnknownSkillError: no such skill (lists the known ones).
        InvalidSkillError: the skill is broken (``problems`` lists why).
        InvalidArgsError: the params fail the schema.
        MissingCapabilityError: the skill needs a capability the harness lacks.
        ConfirmationRequiredError: an irreversible skill without ``confirm=True``.
    """
    skill = catalog.skill(skill_id)
    _, embedded = _checked_params(skill, params)
    check_needs(skill, provided_capabilities(tab_type))
    ConfirmationRequiredError.check(f"skill {skill.id}", skill.side_effect, confirm)
    return skill, "document, " + embedded
