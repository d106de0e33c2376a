"""From recordings to drafted tools: :func:`suggest` reads HAR files and drafts one browser
tool per JSON endpoint of the site, each with offline cases built from its recorded calls.

A draft is what a save would need (:class:`~ego.learning.plan.draft.ToolDraft`'s fields: source,
description, args, returns, side effect, auth) plus its evidence: the endpoint, the calls
seen, and a case per call (:mod:`ego.learning.cases.format`), each on a HAR of its own cut
from the recording: the page the call was made on, from its document to the call. Nothing is
written here (see :mod:`.drafts`).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ...errors import HarFormatError
from ...replay.har import Har, Header
from ...replay.secrets import REDACTED, REDACTED_FIELD
from ..catalog.matching import domain_of
from .auth import Csrf, find_csrf, is_csrf_name
from .endpoints import Endpoint, group_endpoints
from .source import api_tool_source
from .traffic import Exchange, Skipped, read_exchanges
from .values import Field, infer_fields, schema_of

__all__ = ["MAX_CASES", "CaseDraft", "DraftedTool", "SuggestReport", "suggest_from"]

#: Offline cases drafted per tool (its first recorded calls, one per distinct args).
MAX_CASES: Final = 5

_VERBS: Final = {
    "GET": "get",
    "HEAD": "head",
    "POST": "post",
    "PUT": "put",
    "PATCH": "update",
    "DELETE": "delete",
}


@dataclass(frozen=True)
class CaseDraft:
    """One offline case of a drafted tool and the HAR it replays.

    Attributes:
        case: the case as ``tests/cases.json`` holds it (``har`` names :attr:`har_name`).
        har_name: the file name its HAR gets in the site's ``tests/``.
        har: the HAR cut from the recording.
    """

    case: dict[str, Any]
    har_name: str
    har: Har = field(repr=False)


@dataclass
class DraftedTool:
    """A browser tool drafted from recorded calls of one endpoint.

    Attributes:
        site_id, tool: where it would be saved, under which name.
        endpoint: ``METHOD /path/{template}``.
        origin: the origin it was called on.
        description: a first description, for an agent to improve.
        args: the compact args map.
        returns: the JSON Schema of what it answered (None when it never answered JSON).
        side_effect: ``read`` for GET and HEAD, else ``irreversible`` (say otherwise when
            saving).
        auth: ``session`` when the page sent cookies or a CSRF token, or a call was refused
            for want of a login.
        source: its JavaScript.
        calls: how many recorded calls it was drafted from.
        constants: the fields that never changed (name -> value).
        csrf: where it reads a CSRF token, or None.
        cases: its offline cases.
        renamed_from: the name it would have had when another tool of the site holds it.
        notes: what a reader should check (a guessed CSRF source, secrets to give).
    """

    site_id: str
    tool: str
    endpoint: str
    origin: str
    description: str
    args: dict[str, Any]
    returns: dict[str, Any] | None
    side_effect: str
    auth: str
    source: str
    calls: int
    constants: dict[str, Any] = field(default_factory=dict)
    csrf: Csrf | None = None
    cases: list[CaseDraft] = field(default_factory=list)
    renamed_from: str | None = None
    notes: list[str] = field(default_factory=list)

    def entry(self) -> dict[str, Any]:
        """The manifest entry a save of it would write (its path aside)."""
        entry: dict[str, Any] = {
            "description": self.description,
            "args": self.args,
            "sideEffect": self.side_effect,
            "auth": self.auth,
        }
        if self.returns is not None:
            entry["returns"] = self.returns
        return entry

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready summary (no source, no HAR)."""
        return {
            "site_id": self.site_id,
            "tool": self.tool,
            "endpoint": self.endpoint,
            "origin": self.origin,
            "description": self.description,
            "args": self.args,
            "constants": self.constants,
            "side_effect": self.side_effect,
            "auth": self.auth,
            "csrf": self.csrf.describe() if self.csrf else None,
            "calls": self.calls,
            "cases": [c.case["name"] for c in self.cases],
            "renamed_from": self.renamed_from,
            "notes": self.notes,
        }


@dataclass
class SuggestReport:
    """What :func:`suggest_from` found in the recordings.

    Attributes:
        site_id: the site.
        domains: the domains counted as the site's.
        drafts: one drafted tool per endpoint.
        skipped: every recorded request that is no tool, with its reason.
        manifest: a manifest drafted for a site that has no learning yet, else None.
        hars: the recordings read.
        drafts_dir: where the drafts were written (set by :mod:`.drafts`).
    """

    site_id: str
    domains: list[str]
    drafts: list[DraftedTool] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    manifest: dict[str, Any] | None = None
    hars: list[Path] = field(default_factory=list)
    drafts_dir: Path | None = None

    def skipped_counts(self) -> dict[str, int]:
        """How many requests were skipped for each reason."""
        counts: dict[str, int] = {}
        for item in self.skipped:
            counts[item.reason] = counts.get(item.reason, 0) + 1
        return counts

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "site_id": self.site_id,
            "domains": self.domains,
            "hars": [str(p) for p in self.hars],
            "drafts_dir": str(self.drafts_dir) if self.drafts_dir else None,
            "manifest": self.manifest,
            "found": [draft.as_dict() for draft in self.drafts],
            "skipped_counts": self.skipped_counts(),
            "skipped": [item.as_dict() for item in self.skipped],
        }

    def format(self) -> str:
        """A few lines for a person."""
        lines = [
            f"{len(self.drafts)} endpoint(s) of {self.site_id} ({', '.join(self.domains)}) "
            f"drafted as tools from {len(self.hars)} recording(s):"
        ]
        for draft in self.drafts:
            args = ", ".join(draft.args) or "no args"
            lines.append(
                f"  {draft.tool}: {draft.endpoint} ({draft.side_effect}, auth {draft.auth}; "
                f"{args}; {len(draft.cases)} case(s) from {draft.calls} call(s))"
            )
            lines += [f"    note: {note}" for note in draft.notes]
        counts = self.skipped_counts()
        if counts:
            listed = ", ".join(f"{n} {reason}" for reason, n in sorted(counts.items()))
            lines.append(f"skipped {len(self.skipped)} request(s): {listed}")
        if self.manifest is not None:
            lines.append(f"a manifest is drafted for the new site: domains {self.domains}")
        if self.drafts_dir is not None:
            lines.append(f"drafts in {self.drafts_dir}; none is live until saved")
        return "\n".join(lines)


def _tool_name(endpoint: Endpoint, taken: set[str]) -> str:
    words = endpoint.words() or ["root"]
    name = "_".join([_VERBS.get(endpoint.method, endpoint.method.lower()), *words])[:60]
    candidate, counter = name, 1
    while candidate in taken:
        counter += 1
        candidate = f"{name}_{counter}"
    taken.add(candidate)
    return candidate


def _describe(endpoint: Endpoint, fields: list[Field], answered: list[Any]) -> str:
    host = endpoint.origin.split("://", 1)[-1]
    what = ""
    objects = [a for a in answered if isinstance(a, dict)]
    if objects:
        keys = list(dict.fromkeys(k for o in objects for k in o))[:6]
        what = f"; answers {{{', '.join(keys)}}}"
    elif any(isinstance(a, list) for a in answered):
        what = "; answers a list"
    args = [f.arg for f in fields if f.arg]
    given = f" for {', '.join(args)}" if args else ""
    return (
        f"Calls the site's API {endpoint.label} on {host}{given}{what}. Drafted by ego "
        "suggest from recorded traffic: say what it is for and when to use it."
    )


def _case_har(har: Har, exchange: Exchange) -> Har:
    """The recording cut to the page the call was made on: from its document to the call."""
    start = 0
    for index in range(exchange.index, -1, -1):
        if har.entries[index].request.url == exchange.page and index < exchange.index:
            start = index
            break
    entries = [entry.model_copy(deep=True) for entry in har.entries[start : exchange.index + 1]]
    for entry in entries:
        # A CSRF header a response carried was dropped when recording: put its name back,
        # with the redacted value, so the tool finds a token when the case replays.
        dropped = entry.extra.get(REDACTED_FIELD) or {}
        names = dropped.get("responseHeaders", []) if isinstance(dropped, dict) else []
        entry.response.headers += [Header(n, REDACTED) for n in names if is_csrf_name(n)]
    cut = Har(pages=[page.model_copy() for page in har.pages[:1]], comment=har.comment)
    cut.entries.extend(entries)
    return cut


def _args_of(exchange: Exchange, endpoint: Endpoint, fields: list[Field]) -> dict[str, Any]:
    path = endpoint.path_args(exchange)
    query = dict(exchange.query)
    body = exchange.body if isinstance(exchange.body, dict) else {}
    args: dict[str, Any] = {}
    for field_ in fields:
        if field_.arg is None:
            continue
        if field_.where == "path":
            raw: Any = path.get(field_.name)
            args[field_.arg] = int(raw) if field_.kind == "integer" and raw else raw
        elif field_.where == "query" and field_.name in query:
            text = query[field_.name]
            if field_.kind == "integer" and text != REDACTED:
                args[field_.arg] = int(text)
            elif field_.kind == "boolean":
                args[field_.arg] = text == "true"
            else:
                args[field_.arg] = text
        elif field_.where == "body" and field_.name == "":
            args[field_.arg] = exchange.body
        elif field_.where == "body" and field_.name in body:
            args[field_.arg] = body[field_.name]
    return args


def _cases(
    tool: str, endpoint: Endpoint, fields: list[Field], csrf: Csrf | None, hars: dict[Path, Har]
) -> tuple[list[CaseDraft], list[str]]:
    cases: list[CaseDraft] = []
    notes: list[str] = []
    seen: set[str] = set()
    for exchange in endpoint.exchanges:
        if len(cases) >= MAX_CASES:
            break
        args = _args_of(exchange, endpoint, fields)
        key = json.dumps([args, exchange.status, exchange.response], sort_keys=True)
        if key in seen:
            continue
        seen.add(key)
        if 200 <= exchange.status < 300 and exchange.response is None and exchange.body is None:
            notes.append(f"no case for {exchange.label}: its answer was not recorded")
            continue
        if not exchange.page:
            notes.append(f"no case for {exchange.label}: no page of the site was loaded before it")
            continue
        number = len(cases) + 1
        name = f"{tool}: {exchange.label} as recorded"
        if any(c.case["name"] == name for c in cases):
            name = f"{name} ({number})"
        case: dict[str, Any] = {
            "name": name,
            "url": exchange.page,
            "tool": tool,
            "args": args,
            "mode": "fail",
        }
        if 200 <= exchange.status < 300:
            case["expect"] = exchange.response
        elif exchange.status in (401, 403):
            case["expect_error"] = "NEEDS_LOGIN"
        else:
            case["expect_error"] = "TOOL_ERROR"
            case["error_contains"] = f"HTTP {exchange.status}"
        if csrf is not None and csrf.source == "cookie":
            case["cookies"] = [{"name": csrf.name, "value": REDACTED}]
        har = _case_har(hars[exchange.har], exchange)
        digest = hashlib.sha256(har.dumps(indent=None).encode()).hexdigest()[:8]
        har_name = f"{tool}-{number}-{digest}.har"
        case["har"] = har_name
        cases.append(CaseDraft(case, har_name, har))
    return cases, notes


def _draft(site_id: str, endpoint: Endpoint, tool: str, hars: dict[Path, Har]) -> DraftedTool:
    first = endpoint.exchanges[0]
    body_names = sorted({k for e in endpoint.exchanges if isinstance(e.body, dict) for k in e.body})
    csrf = next(
        (
            found
            for e in endpoint.exchanges
            if (found := find_csrf(e, hars[e.har], body_names)) is not None
        ),
        None,
    )
    fields = infer_fields(endpoint, is_csrf_name if csrf is not None else None)
    answered = [e.response for e in endpoint.exchanges if 200 <= e.status < 300]
    answered = [a for a in answered if a is not None]
    has_body = any(e.body is not None for e in endpoint.exchanges)
    query = {f.name: f.spec() for f in fields if f.where == "query" and not f.csrf}
    body = {f.name: f.spec() for f in fields if f.where == "body" and not f.csrf and f.name}
    source = api_tool_source(
        comment=f"Drafted by ego suggest from {len(endpoint.exchanges)} recorded call(s) of "
        f"{endpoint.label} on {endpoint.origin}.",
        method=endpoint.method,
        paths=[endpoint.template],
        query=query,
        body=body if has_body else None,
        csrf=csrf.spec() if csrf else None,
    )
    refused = any(e.status in (401, 403) for e in endpoint.exchanges)
    session = csrf is not None or refused or any(e.sends_cookies for e in endpoint.exchanges)
    notes = []
    if csrf is not None and csrf.guessed:
        notes.append(csrf.describe())
    notes += [
        f"{f.where} field {f.name!r} was redacted when recording: the tool takes it as arg "
        f"{f.arg!r}"
        for f in fields
        if f.secret and not f.csrf
    ]
    args = {f.arg: f.arg_schema() for f in fields if f.arg is not None}
    drafted = DraftedTool(
        site_id=site_id,
        tool=tool,
        endpoint=endpoint.label,
        origin=first.origin,
        description=_describe(endpoint, fields, answered),
        args=args,
        returns=schema_of(answered) if answered else None,
        side_effect="read" if endpoint.method in ("GET", "HEAD") else "irreversible",
        auth="session" if session else "none",
        source=source,
        calls=len(endpoint.exchanges),
        constants={
            f"{f.where}:{f.name}": f.constant for f in fields if f.arg is None and not f.csrf
        },
        csrf=csrf,
        notes=notes,
    )
    drafted.cases, case_notes = _cases(tool, endpoint, fields, csrf, hars)
    drafted.notes += case_notes
    return drafted


def suggest_from(
    site_id: str,
    har_paths: list[str | os.PathLike[str]],
    *,
    domains: list[str] | None = None,
    existing_tools: set[str] | frozenset[str] = frozenset(),
) -> SuggestReport:
    """Draft one browser tool per JSON endpoint the recordings show on the site's domains.

    Args:
        site_id: the site the tools are for.
        har_paths: the recordings (``ego record``, ``tab.record_har``, any HAR 1.2 file).
        domains: the site's domains; None for a site with no learning yet: the host of the
            recordings' first page (a manifest is drafted with it).
        existing_tools: the site's tools now: a draft never takes one of their names.

    Raises:
        HarFormatError: a recording cannot be read.
        ValueError: no recording was given, or a new site's recordings load no page.
    """
    if not har_paths:
        raise ValueError("give at least one recording (--har FILE)")
    hars = {Path(p): Har.load(p) for p in har_paths}
    manifest = None
    if domains is None:
        first = next((e.request.url for h in hars.values() for e in h.entries), None)
        host = domain_of(first)
        if host is None:
            raise HarFormatError(
                f"{', '.join(map(str, hars))}: no http(s) request to take the site's host from"
            )
        domains = [host]
        manifest = {"id": site_id, "name": site_id, "domains": domains, "startUrl": first}
    report = SuggestReport(site_id, list(domains), manifest=manifest, hars=list(hars))
    exchanges: list[Exchange] = []
    for path, har in hars.items():
        found, skipped, _ = read_exchanges(har, path, list(domains))
        exchanges += found
        report.skipped += skipped
    taken = set(existing_tools)
    for endpoint in group_endpoints(exchanges):
        plain = _tool_name(endpoint, set())
        tool = _tool_name(endpoint, taken)
        drafted = _draft(site_id, endpoint, tool, hars)
        if tool != plain and plain in existing_tools:
            drafted.renamed_from = plain
            drafted.notes.append(f"the site has a tool named {plain!r} already")
        report.drafts.append(drafted)
    return report
