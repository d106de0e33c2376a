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
from .auth import Csrf, TokenPlace, find_csrf, is_csrf_name, token_places, unplaced_headers
from .endpoints import Endpoint, group_endpoints
from .source import JSON_ENCODING, api_tool_source
from .traffic import Exchange, Skipped, read_exchanges
from .values import VARIABLES, Field, args_of, infer_fields, schema_of

__all__ = ["MAX_CASES", "MAX_NAME", "CaseDraft", "DraftedTool", "SuggestReport", "suggest_from"]

#: Offline cases drafted per tool (its first recorded calls, one per distinct args).
MAX_CASES: Final = 5
#: The longest tool name drafted (before a ``_2`` that keeps it apart from another).
MAX_NAME: Final = 40

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
        side_effect: ``read`` for GET and HEAD and a GraphQL query, ``write`` for a GraphQL
            mutation, else ``irreversible`` (say otherwise when saving).
        auth: ``session`` when the page sent cookies, a CSRF token or a header token, or a
            call was refused for want of a login.
        source: its JavaScript.
        calls: how many recorded calls it was drafted from.
        constants: the fields that never changed (name -> value).
        csrf: where it reads a CSRF token, or None.
        tokens: where it reads the header tokens the page sends (a bearer token).
        cases: its offline cases.
        renamed_from: the name it would have had when another tool of the site holds it.
        notes: what a reader should check (a guessed CSRF source, secrets to give).
        kind: ``"browser"`` (its source is JavaScript) or ``"python"`` (a ``run(ctx, args)``
            drafted from page actions: :mod:`.actions`).
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
    tokens: list[TokenPlace] = field(default_factory=list)
    cases: list[CaseDraft] = field(default_factory=list)
    renamed_from: str | None = None
    notes: list[str] = field(default_factory=list)
    kind: str = "browser"

    @property
    def file_name(self) -> str:
        """Its source file's name: ``<tool>.js``, or ``<tool>.py`` for a Python tool."""
        return f"{self.tool}.py" if self.kind == "python" else f"{self.tool}.js"

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
            "tokens": [place.spec() for place in self.tokens],
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
    """``get_product``, ``post_cart``; a GraphQL operation by its own name (``books_by_tag``).
    Short whatever the path holds: its last few words, at most :data:`MAX_NAME` characters."""
    words = endpoint.words()
    if endpoint.operation is not None:
        words = words or ["graphql", "operation"]
    else:
        verb = _VERBS.get(endpoint.method) or (
            endpoint.method.lower() if endpoint.method.isalpha() else "call"
        )
        words = [verb, *(words or ["root"])]
    while len(words) > 2 and len("_".join(words)) > MAX_NAME:
        del words[1]
    name = "_".join(words)[:MAX_NAME].rstrip("_")
    if name[0].isdigit():
        name = f"call_{name}"[:MAX_NAME]
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


def _has_redacted(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_has_redacted(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_redacted(v) for v in value)
    return bool(value == REDACTED)


def _token_setup(tokens: list[TokenPlace]) -> tuple[str, list[dict[str, str]]]:
    """What a case does before the call so that the tab holds a token where the page keeps
    it (a placeholder: the recording answers whatever was sent): a setup script and
    cookies."""
    lines, cookies = [], []
    for place in tokens:
        if place.store == "cookie":
            cookies.append({"name": place.key, "value": REDACTED})
        else:
            key, kept = json.dumps(place.key), json.dumps(place.placeholder(REDACTED))
            lines.append(f"{place.store}.setItem({key}, {kept});")
    return " ".join(lines), cookies


def _cases(
    tool: str,
    endpoint: Endpoint,
    fields: list[Field],
    csrf: Csrf | None,
    tokens: list[TokenPlace],
    hars: dict[Path, Har],
) -> tuple[list[CaseDraft], list[str]]:
    cases: list[CaseDraft] = []
    notes: list[str] = []
    seen: set[str] = set()
    setup, token_cookies = _token_setup(tokens)
    for exchange in endpoint.exchanges:
        if len(cases) >= MAX_CASES:
            break
        args = args_of(exchange, endpoint, fields)
        key = json.dumps([args, exchange.status, exchange.response], sort_keys=True)
        if key in seen:
            continue
        seen.add(key)
        ok = 200 <= exchange.status < 300
        if ok and exchange.response is None and exchange.status not in (204, 205):
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
        if ok and _has_redacted(exchange.response):
            # A login's token, a secret the answer carried: the recording holds no value to
            # compare, so the case checks what came back by its shape.
            case["expect_schema"] = schema_of([exchange.response])
            notes.append(
                f"the case of {exchange.label} checks the answer's shape: the recording "
                "redacted values in it"
            )
        elif ok:
            case["expect"] = exchange.response
        elif exchange.status in (401, 403) and tokens:
            case["expect_error"] = "TOOL_ERROR"
            case["error_contains"] = f"HTTP {exchange.status} to the token"
        elif exchange.status in (401, 403):
            case["expect_error"] = "NEEDS_LOGIN"
        else:
            case["expect_error"] = "TOOL_ERROR"
            case["error_contains"] = f"HTTP {exchange.status}"
        cookies = list(token_cookies)
        if csrf is not None and csrf.source == "cookie":
            cookies.append({"name": csrf.name, "value": REDACTED})
        if cookies:
            case["cookies"] = cookies
        if setup:
            case["setup"] = setup
        har = _case_har(hars[exchange.har], exchange)
        digest = hashlib.sha256(har.dumps(indent=None).encode()).hexdigest()[:8]
        har_name = f"{tool}-{number}-{digest}.har"
        case["har"] = har_name
        cases.append(CaseDraft(case, har_name, har))
    return cases, notes


def _side_effect(endpoint: Endpoint) -> str:
    operation = endpoint.operation
    if operation is not None and operation.kind == "query":
        return "read"
    if operation is not None and operation.kind == "mutation":
        return "write"
    return "read" if endpoint.method in ("GET", "HEAD") else "irreversible"


def _body_specs(endpoint: Endpoint, fields: list[Field]) -> dict[str, Any] | None:
    """The tool's ``BODY``: each field's spec, a GraphQL request's variables nested; None
    for an endpoint whose calls sent no body."""
    if not any(e.body is not None for e in endpoint.exchanges):
        return None
    body = {f.name: f.spec() for f in fields if f.where == "body" and not f.csrf and f.name}
    if endpoint.operation is not None and any(
        isinstance(e.body, dict) and VARIABLES in e.body for e in endpoint.exchanges
    ):
        variables = {f.name: f.spec() for f in fields if f.where == "variables" and not f.csrf}
        body[VARIABLES] = {"fields": variables}
    return body


def _encoding(endpoint: Endpoint) -> str:
    sent = [e for e in endpoint.exchanges if e.encoding is not None]
    if not sent:
        return JSON_ENCODING
    if sent[0].encoding in ("form", "multipart"):
        return str(sent[0].encoding)
    return sent[0].body_type.split(";", 1)[0].strip().lower() or JSON_ENCODING


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
    tokens = token_places(endpoint.exchanges)
    unplaced = unplaced_headers(endpoint.exchanges, tokens)
    fields = infer_fields(endpoint, is_csrf_name if csrf is not None else None)
    answered = [e.response for e in endpoint.exchanges if 200 <= e.status < 300]
    answered = [a for a in answered if a is not None]
    query = {f.name: f.spec() for f in fields if f.where == "query" and not f.csrf}
    source = api_tool_source(
        comment=f"Drafted by ego suggest from {len(endpoint.exchanges)} recorded call(s) of "
        f"{endpoint.label} on {endpoint.origin}.",
        method=endpoint.method,
        paths=[endpoint.template],
        query=query,
        body=_body_specs(endpoint, fields),
        csrf=csrf.spec() if csrf else None,
        encoding=_encoding(endpoint),
        auth=[place.spec() for place in tokens],
    )
    refused = any(e.status in (401, 403) for e in endpoint.exchanges)
    sends = csrf is not None or bool(tokens) or bool(unplaced)
    session = sends or refused or any(e.sends_cookies for e in endpoint.exchanges)
    notes = []
    if csrf is not None and csrf.guessed:
        notes.append(csrf.describe())
    notes += [place.describe() for place in tokens]
    notes += [
        f"the page sent the {name} header, and the recording does not say where the page "
        "keeps its value (recorded by an older ego, or computed by the page's script): the "
        "tool does not send it"
        for name in unplaced
    ]
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
        side_effect=_side_effect(endpoint),
        auth="session" if session else "none",
        source=source,
        calls=len(endpoint.exchanges),
        constants={
            f"{f.where}:{f.name}": f.constant for f in fields if f.arg is None and not f.csrf
        },
        csrf=csrf,
        tokens=tokens,
        notes=notes,
    )
    drafted.cases, case_notes = _cases(tool, endpoint, fields, csrf, tokens, hars)
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
